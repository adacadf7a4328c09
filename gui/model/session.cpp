#include "model/session.h"

#include "etscope/formats/bpte_reader.h"
#include "etscope/formats/file_kind.h"
#include "etscope/formats/pte_reader.h"
#include "etscope/etrecord/etrecord_reader.h"
#include "etscope/etdump/etdump_reader.h"
#include "etscope/inspect/consistency.h"

namespace etscope::gui {
namespace {

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// AOT intermediates with the index beside them; a .ptd of weights is refused by its keys.
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
  auto s = std::make_unique<Session>();
  if (previous != nullptr) {
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
      case InputKind::kCurve:
        s->errors.push_back(path + ": training curves are not shown yet");
        break;
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

  if (s->program) {
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
  }

  // Files that do not belong together, or ETRecord parts that could not be decoded, would
  // make the views quietly wrong or empty: the dialog says so (the views still show the files,
  // as `etscope inspect --force` would).
  if (s->record && !s->record->undecoded.empty()) {
    s->errors.push_back("warning: " + s->record_path + ": not decoded: " + s->record->undecoded.front());
  }
  for (const std::string& problem : inspect::check_consistency(s->dump.get(), s->record.get(), s->program.get()).problems) {
    s->errors.push_back("warning: " + problem);
  }

  if (s->dump) {
    report(progress, 0.7f, "laying out the timeline");
    s->timeline = TimelineModel::build(s->dump);
    report(progress, 0.8f, "joining events (Inspector)");
    inspect::InspectorOptions options;
    options.target = inspect::TimeScale::kUs;
    // The ETRecord's maps are per method; follow the program when it has no "forward".
    if (!s->plans.empty() && s->find_plan("forward") < 0) options.method = s->plans[s->default_plan()].name();
    auto inspector = inspect::Inspector::build(s->dump, s->record, s->debug_buffer, options);
    if (inspector.ok()) {
      s->inspector = std::make_unique<inspect::Inspector>(std::move(inspector).value());
      for (const std::string& loss : s->inspector->recording_losses()) s->errors.push_back("warning: " + s->dump_path + ": " + loss);
      s->lookup = std::make_unique<EventLookup>(*s->inspector);
      report(progress, 0.9f, "computing op statistics");
      s->stats = StatsModel::build(*s->inspector);
      if (s->aot) {
        report(progress, 0.95f, "computing numeric gaps");
        auto gaps = GapModel::build(*s->inspector, s->aot);
        if (gaps.ok()) {
          s->gaps = std::move(gaps).value();
        } else {
          s->gaps_problem = gaps.error().message();
        }
      }
    } else {
      s->errors.push_back(inspector.error().message());
    }
  }
  report(progress, 1.0f, "done");
  return s;
}

}  // namespace etscope::gui
