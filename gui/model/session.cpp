#include "model/session.h"

#include "etscope/formats/bool_constants.h"
#include "etscope/formats/bpte_reader.h"
#include "etscope/formats/file_kind.h"
#include "etscope/formats/pte_reader.h"
#include "etscope/etrecord/etrecord_reader.h"
#include "etscope/etdump/etdump_reader.h"
#include "etscope/inspect/profile.h"

#include <algorithm>
#include <cctype>
#include <filesystem>

namespace etscope::gui {
namespace {

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// AOT intermediates with the index beside them; a .ptd of weights is refused by its keys.
// The Inspector of the local gaps' run (its dump and debug buffer), linked with the same ETRecord.
Result<inspect::Inspector> load_local_run(const std::string& etdump, const std::string& buffer,
                                          std::shared_ptr<const etrecord::EtRecord> record) {
  ETSCOPE_ASSIGN_OR_RETURN(auto dump_blob, Blob::open_file(etdump));
  ETSCOPE_ASSIGN_OR_RETURN(etdump::EtDumpFile dump, etdump::EtDumpReader::read(dump_blob));
  ETSCOPE_ASSIGN_OR_RETURN(auto buffer_blob, Blob::open_file(buffer));
  return inspect::Inspector::build(std::make_shared<const etdump::EtDumpFile>(std::move(dump)), std::move(record), buffer_blob);
}

Result<std::shared_ptr<const inspect::AotIntermediates>> load_aot(const std::string& path) {
  auto aot = inspect::load_aot_intermediates(path, inspect::aot_index_beside(path));
  if (!aot.ok()) {
    if (aot.error().code() != ErrorCode::kCorrupt) return aot.error();
    return Error(ErrorCode::kWrongKind, aot.error().message() +
                                            " (the viewer opens a .ptd of AOT intermediate outputs, written by "
                                            "samples/export/write_aot_intermediates.py, not one of weights)");
  }
  return std::make_shared<const inspect::AotIntermediates>(std::move(aot).value());
}

void report(LoadProgress* progress, float fraction, std::string stage) {
  if (progress != nullptr) progress->set(fraction, std::move(stage));
}

std::string file_name(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// A run of the store named by id or by key=value; anything else is a file.
bool is_store_ref(const std::string& ref) {
  if (ref.empty()) return false;
  std::error_code ec;
  if (std::filesystem::exists(ref, ec)) return false;
  // Run ids and tags, several separated by commas, as `etscope compare` takes them.
  return ref.find('=') != std::string::npos ||
         std::all_of(ref.begin(), ref.end(), [](unsigned char c) { return std::isdigit(c) || c == ','; });
}

bool is_uri(const std::string& location) {
  return location.rfind("postgresql://", 0) == 0 || location.rfind("postgres://", 0) == 0;
}

std::string run_label(const store::RunRow& r) {
  std::string label = "run " + std::to_string(r.id) + " (" + r.created_at + ", " + (r.program.empty() ? file_name(r.file) : r.program);
  for (const auto& [k, v] : r.tags) label += ", " + k + "=" + v;
  return label + ")";
}

// One run's label, or for several "runs 12,13,14 (the first's date, program and tags)".
std::string runs_label(const std::vector<store::RunRow>& rows) {
  if (rows.size() == 1) return run_label(rows.front());
  std::string ids;
  for (const store::RunRow& r : rows) ids += (ids.empty() ? "" : ",") + std::to_string(r.id);
  const std::string first = run_label(rows.front());
  return "runs " + ids + first.substr(first.find(' ', 4));
}

// The store's part of a request: open it, list its runs, load the run to show (its per-operator
// samples and its curve; the store keeps no events, so its timeline shows only when its ETDump
// is opened as a file too) and the baseline (a stored run or an ETDump file).
void load_store_and_baseline(const OpenRequest& request, Session& s, LoadProgress* progress) {
  std::unique_ptr<store::Store> db;
  if (!request.store.empty() && request.store != s.store_location) {
    s.store_location = request.store;
    s.store_runs.clear();
    s.store_run = s.store_baseline = 0;
    s.store_run_set.clear();
    s.store_baseline_set.clear();
  }
  const bool store_needed = !request.store.empty() || !request.run.empty() || !request.baseline.empty();
  if (store_needed && !s.store_location.empty()) {
    report(progress, 0.45f, "opening the run store " + s.store_location);
    std::error_code ec;
    if (!is_uri(s.store_location) && !std::filesystem::exists(s.store_location, ec)) {
      s.errors.push_back(s.store_location + ": no such run store (etscope train/run/store add --store create one)");
      s.store_location.clear();
      return;
    }
    auto opened = store::Store::open(s.store_location);
    if (!opened.ok()) {
      s.errors.push_back(opened.error().message());
      s.store_location.clear();
      return;
    }
    db = std::move(opened).value();
    store::RunFilter all;
    all.limit = Session::kStoreRunsShown;
    auto runs = db->runs(all);
    if (runs.ok()) {
      s.store_runs = std::move(runs).value();
    } else {
      s.errors.push_back(runs.error().message());
    }
  }
  // The runs a reference names (one, or a set), oldest first.
  auto resolve = [&](const std::string& ref) -> Result<std::vector<store::RunRow>> {
    if (!db) return Error(ErrorCode::kInvalidArgument, "run '" + ref + "': no run store is open (--store LOCATION)");
    ETSCOPE_ASSIGN_OR_RETURN(std::vector<int64_t> ids, db->resolve_runs(ref, store::Environment{}));
    std::vector<store::RunRow> rows;
    for (int64_t id : ids) {
      ETSCOPE_ASSIGN_OR_RETURN(store::RunRow row, db->run(id));
      rows.push_back(std::move(row));
    }
    return rows;
  };
  auto samples_of = [&](const std::vector<store::RunRow>& rows) -> Result<std::vector<inspect::RunSamples>> {
    std::vector<inspect::RunSamples> out;
    for (const store::RunRow& row : rows) {
      ETSCOPE_ASSIGN_OR_RETURN(inspect::RunSamples one, db->samples(row.id));
      out.push_back(std::move(one));
    }
    return out;
  };
  auto ids_of = [](const std::vector<store::RunRow>& rows) {
    std::vector<int64_t> ids;
    for (const store::RunRow& row : rows) ids.push_back(row.id);
    return ids;
  };
  if (!request.run.empty()) {
    auto rows = resolve(request.run);
    if (!rows.ok()) {
      s.errors.push_back(rows.error().message());
    } else {
      s.store_run = rows->front().id;
      s.store_run_set = ids_of(*rows);
      s.compare.reset();
      auto curve = db->curve(s.store_run);
      if (curve.ok() && !curve->loss.empty()) {
        s.curve = std::move(curve).value();
        s.curve_path = "store run " + std::to_string(s.store_run);
      }
    }
  }
  if (!request.baseline.empty()) {
    s.baseline_dump.reset();
    s.baseline_samples.clear();
    s.baseline_timeline.reset();
    s.compare.reset();
    s.store_baseline = 0;
    s.store_baseline_set.clear();
    if (is_store_ref(request.baseline)) {
      auto rows = resolve(request.baseline);
      auto samples = rows.ok() ? samples_of(*rows) : Result<std::vector<inspect::RunSamples>>(rows.error());
      if (!samples.ok()) {
        s.errors.push_back(samples.error().message());
      } else {
        s.store_baseline = rows->front().id;
        s.store_baseline_set = ids_of(*rows);
        s.baseline_samples = std::move(samples).value();
        s.baseline_label = runs_label(*rows);
        s.baseline_engine = rows->front().engine;
      }
    } else {
      report(progress, 0.47f, "reading the baseline " + request.baseline);
      inspect::ProfileFiles files;
      files.etdump = request.baseline;
      auto baseline = inspect::open_profile(files);
      if (!baseline.ok()) {
        s.errors.push_back(baseline.error().message());
      } else {
        s.baseline_dump = baseline->dump;
        s.baseline_samples = {inspect::run_samples(*baseline->inspector)};
        s.baseline_label = file_name(request.baseline);
        s.baseline_engine = baseline->engine;
      }
    }
  }
  // Store runs shown without their ETDump: compare with their stored samples.
  if (db && s.store_run != 0 && !s.baseline_samples.empty()) {
    std::vector<store::RunRow> rows;
    for (int64_t id : s.store_run_set.empty() ? std::vector<int64_t>{s.store_run} : s.store_run_set) {
      auto row = db->run(id);
      if (!row.ok()) return;
      rows.push_back(std::move(row).value());
    }
    auto samples = samples_of(rows);
    if (samples.ok()) {
      s.compare.emplace(s.baseline_samples, s.baseline_label, std::move(samples).value(), runs_label(rows), s.baseline_engine,
                        rows.front().engine);
    }
  }
}


}  // namespace

const char* to_string(InputKind kind) {
  switch (kind) {
    case InputKind::kProgram: return "program";
    case InputKind::kBundledProgram: return "bundled program";
    case InputKind::kETDump: return "ETDump";
    case InputKind::kETRecord: return "ETRecord";
    case InputKind::kDebugBuffer: return "debug buffer";
    case InputKind::kAotIntermediates: return "AOT intermediates";
    case InputKind::kCurve: return "training curve";
  }
  return "?";
}

Result<InputKind> detect_input_kind(const Blob& blob) {
  const FileKind kind = sniff_file_kind(blob.bytes());
  switch (kind) {
    case FileKind::kProgram:
    case FileKind::kProgramOtherVersion: return InputKind::kProgram;
    case FileKind::kBundledProgram: return InputKind::kBundledProgram;
    case FileKind::kETDump: return InputKind::kETDump;
    case FileKind::kZip: return InputKind::kETRecord;
    case FileKind::kTensorData: return InputKind::kAotIntermediates;
    case FileKind::kUnknown: break;
  }
  // A debug buffer is raw tensor bytes with no identifier; only its name says what it is.
  if (ends_with(blob.name(), ".bin")) return InputKind::kDebugBuffer;
  if (ends_with(blob.name(), ".json")) return InputKind::kCurve;
  return Error(ErrorCode::kWrongKind,
               blob.name() + ": not an ExecuTorch program, ETDump or ETRecord (identifier '" +
                   printable_identifier(blob.bytes(), 4) + "'); debug buffers must be named *.bin");
}

void LoadProgress::set(float fraction, std::string stage) {
  std::lock_guard<std::mutex> lock(mutex_);
  stage_ = std::move(stage);
  fraction_.store(fraction);
}

std::string LoadProgress::stage() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return stage_;
}

std::vector<std::string> Session::paths() const {
  std::vector<std::string> out;
  for (const std::string* p : {&program_path, &dump_path, &record_path, &debug_path, &aot_path}) {
    if (!p->empty()) out.push_back(*p);
  }
  return out;
}

size_t Session::default_plan() const {
  const int64_t forward = find_plan("forward");
  return forward >= 0 ? static_cast<size_t>(forward) : 0;
}

int64_t Session::find_plan(const std::string& name) const {
  for (size_t i = 0; i < plans.size(); ++i) {
    if (plans[i].name() == name) return static_cast<int64_t>(i);
  }
  return -1;
}

std::unique_ptr<Session> load_session(const std::vector<std::string>& paths, const Session* previous,
                                      LoadProgress* progress) {
  OpenRequest request;
  request.paths = paths;
  return load_session(request, previous, progress);
}

std::unique_ptr<Session> load_session(const OpenRequest& request, const Session* previous, LoadProgress* progress) {
  const std::vector<std::string>& paths = request.paths;
  auto s = std::make_unique<Session>();
  if (previous != nullptr) {
    s->curve_path = previous->curve_path, s->curve = previous->curve;
    s->store_location = previous->store_location, s->store_runs = previous->store_runs;
    s->store_run = previous->store_run, s->store_baseline = previous->store_baseline;
    s->store_run_set = previous->store_run_set, s->store_baseline_set = previous->store_baseline_set;
    s->baseline_dump = previous->baseline_dump;
    s->baseline_samples = previous->baseline_samples, s->baseline_label = previous->baseline_label;
    s->baseline_engine = previous->baseline_engine;
    s->baseline_timeline = previous->baseline_timeline, s->compare = previous->compare;
    s->program_path = previous->program_path, s->program = previous->program;
    s->dump_path = previous->dump_path, s->dump = previous->dump;
    s->record_path = previous->record_path, s->record = previous->record;
    s->debug_path = previous->debug_path, s->debug_buffer = previous->debug_buffer;
    s->aot_path = previous->aot_path, s->aot = previous->aot;
  }

  // Reading: about half of the time of a big ETDump, so half the bar.
  for (size_t i = 0; i < paths.size(); ++i) {
    const std::string& path = paths[i];
    report(progress, 0.5f * static_cast<float>(i) / static_cast<float>(paths.size()), "reading " + path);
    auto blob = Blob::open_file(path);
    if (!blob.ok()) {
      s->errors.push_back(blob.error().message());
      continue;
    }
    auto kind = detect_input_kind(**blob);
    if (!kind.ok()) {
      s->errors.push_back(kind.error().message());
      continue;
    }
    switch (*kind) {
      case InputKind::kProgram: {
        auto program = PteReader::read(*blob);
        if (!program.ok()) {
          s->errors.push_back(program.error().message());
          break;
        }
        s->program = std::make_shared<const Program>(std::move(program).value());
        s->program_path = path;
        break;
      }
      case InputKind::kBundledProgram: {
        auto bundled = BpteReader::read(*blob);
        if (!bundled.ok()) {
          s->errors.push_back(bundled.error().message());
          break;
        }
        s->program = std::make_shared<const Program>(std::move(bundled->program));
        s->program_path = path;
        break;
      }
      case InputKind::kETDump: {
        auto dump = etdump::EtDumpReader::read(*blob);
        if (!dump.ok()) {
          s->errors.push_back(dump.error().message());
          break;
        }
        s->dump = std::make_shared<const etdump::EtDumpFile>(std::move(dump).value());
        s->dump_path = path;
        s->store_run = 0;  // a file given replaces the stored run as the run shown
        s->store_run_set.clear();
        break;
      }
      case InputKind::kETRecord: {
        auto record = etrecord::EtRecordReader::read(*blob);
        if (!record.ok()) {
          s->errors.push_back(record.error().message());
          break;
        }
        s->record = std::make_shared<const etrecord::EtRecord>(std::move(record).value());
        s->record_path = path;
        break;
      }
      case InputKind::kDebugBuffer:
        s->debug_buffer = *blob;
        s->debug_path = path;
        break;
      case InputKind::kAotIntermediates: {
        auto aot = load_aot(path);
        if (!aot.ok()) {
          s->errors.push_back(aot.error().message());
          break;
        }
        s->aot = std::move(aot).value();
        s->aot_path = path;
        break;
      }
      case InputKind::kCurve: {
        auto curve = inspect::parse_curve_json(std::string_view(reinterpret_cast<const char*>((*blob)->data()), (*blob)->size()), path);
        if (!curve.ok()) {
          s->errors.push_back(curve.error().message());
          break;
        }
        s->curve = std::move(curve).value();
        s->curve_path = path;
        break;
      }
    }
  }
  // The AOT intermediates of the program, by write_aot_intermediates.py's naming, when nobody
  // named others: what `etscope debug` finds too.
  if (!s->aot && !s->program_path.empty()) {
    const std::string beside = inspect::aot_intermediates_beside(s->program_path);
    if (!beside.empty()) {
      auto aot = load_aot(beside);
      if (aot.ok()) {
        s->aot = std::move(aot).value();
        s->aot_path = beside;
      } else {
        s->errors.push_back("warning: " + aot.error().message());
      }
    }
  }

  load_store_and_baseline(request, *s, progress);

  if (s->program) {
    // A bool constant whose bytes are neither 0 nor 1 runs (non-zero is true), but the export
    // looks broken: the dialog names it and its readers, as `etscope pte` and `run` do.
    for (const NonBinaryBool& b : non_binary_bool_tensors(*s->program)) {
      s->errors.push_back("warning: " + s->program_path + ": " + b.message);
    }
    const size_t n = s->program->plans.size();
    for (size_t p = 0; p < n; ++p) {
      report(progress, 0.5f + 0.1f * static_cast<float>(p) / static_cast<float>(n),
             "formatting plan '" + s->program->plans[p].name + "'");
      s->plans.push_back(ProgramModel::build(*s->program, p));
      report(progress, 0.6f + 0.1f * static_cast<float>(p) / static_cast<float>(n),
             "planning memory of '" + s->program->plans[p].name + "'");
      auto memory = MemoryModel::build(*s->program, p);
      if (memory.ok()) {
        s->memory.emplace_back(std::move(memory).value());
      } else {
        s->memory.emplace_back(std::nullopt);
        s->errors.push_back(memory.error().message());
      }
    }
    // The graphs, kept (with their cached layouts) while the program and the ETRecord stay.
    if (previous != nullptr && previous->program == s->program && previous->record == s->record && previous->graphs.size() == n) {
      s->graphs = previous->graphs;
    } else {
      for (size_t p = 0; p < n; ++p) s->graphs.push_back(GraphModel::build(s->program->plans[p], s->record.get(), s->program.get()));
      if (n > 0) {
        const size_t p = s->default_plan();
        report(progress, 0.72f, "laying out the graph of '" + s->program->plans[p].name + "' (Graphviz)");
        s->graphs[p]->layout(s->graphs[p]->default_shape());
      }
    }
  }

  // Files that do not belong together, ETRecord parts that could not be decoded, or a recording
  // that lost events would make the views quietly wrong or empty: the dialog says so (the views
  // still show the files, as `etscope inspect --force` would).
  inspect::ProfileParts parts{s->dump, s->record, s->program, s->debug_buffer, s->record_path};
  inspect::ProfileOptions options;
  options.target = inspect::TimeScale::kUs;
  options.join_mismatched = true;
  auto say = [&s](const std::vector<inspect::ProfileWarning>& warnings) {
    for (const inspect::ProfileWarning& w : warnings) {
      // Logged intermediates are what the Numeric gaps view reads: not a problem to raise in a
      // dialog (the CLI's inspect, store and compare say it).
      if (w.kind == inspect::ProfileWarning::Kind::kLoggedTimings) continue;
      s->errors.push_back("warning: " + (w.file.empty() ? "" : w.file + ": ") + w.text);
    }
  };
  if (!s->dump) {
    auto warnings = inspect::check_profile_parts(parts, options);
    if (warnings.ok()) say(*warnings);
  } else {
    report(progress, 0.7f, "laying out the timeline");
    s->timeline = TimelineModel::build(s->dump);
    report(progress, 0.8f, "joining events (Inspector)");
    auto profile = inspect::open_profile(std::move(parts), options);
    if (profile.ok()) {
      say(profile->warnings);
      s->inspector = std::move(profile->inspector);
      s->engine = profile->engine;
      s->profile_method = profile->method;
      s->lookup = std::make_unique<EventLookup>(*s->inspector);
      report(progress, 0.9f, "computing op statistics");
      s->stats = StatsModel::build(*s->inspector);
      s->generation = GenerationModel::build(*s->inspector);
      if (!s->baseline_samples.empty() && s->store_run == 0) {
        s->compare.emplace(s->baseline_samples, s->baseline_label, std::vector<inspect::RunSamples>{inspect::run_samples(*s->inspector)},
                           file_name(s->dump_path), s->baseline_engine, s->engine);
      }
      if (s->aot) {
        report(progress, 0.95f, "computing numeric gaps");
        // The local gaps' run `etscope debug --etdump` keeps beside the dump, when it is there.
        std::optional<inspect::Inspector> forced;
        if (!s->dump_path.empty() && !s->debug_path.empty()) {
          const auto [etdump, buffer] = inspect::local_run_paths(s->dump_path, s->debug_path);
          std::error_code ec;
          if (std::filesystem::exists(etdump, ec) && std::filesystem::exists(buffer, ec)) {
            auto local = load_local_run(etdump, buffer, s->record);
            if (local.ok()) {
              forced.emplace(std::move(local).value());
            } else {
              s->errors.push_back("warning: " + local.error().message() + " (the gaps are shown without their local gaps)");
            }
          }
        }
        auto gaps = GapModel::build(*s->inspector, s->aot, forced ? &*forced : nullptr);
        if (gaps.ok()) {
          s->gaps = std::move(gaps).value();
        } else {
          s->gaps_problem = gaps.error().message();
        }
      }
    } else {
      s->errors.push_back(profile.error().message());
    }
  }
  if (s->baseline_dump && (!s->baseline_timeline || &s->baseline_timeline->dump() != s->baseline_dump.get())) {
    report(progress, 0.97f, "laying out the baseline's timeline");
    s->baseline_timeline = TimelineModel::build(s->baseline_dump);
  }
  // Findings read everything above; the library's analysis runs once per load.
  if (s->program || s->inspector) {
    report(progress, 0.98f, "looking for findings");
    FindingsInputs in;
    in.program = s->program.get();
    in.record = s->record.get();
    in.inspector = s->inspector.get();
    in.method = s->profile_method;
    if (s->inspector && s->engine.known()) in.engine = s->engine.text();
    s->findings = FindingsModel::build(in);
  }
  report(progress, 1.0f, "done");
  return s;
}

}  // namespace etscope::gui
