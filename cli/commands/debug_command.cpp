// etscope debug: profiling and numeric debugging in one call. Runs the program once with the
// ETRecord's representative inputs (the inputs its AOT intermediates were made from) at
// intermediate-output level, then prints the per-operator numeric gap against the AOT
// intermediates, the first operator whose gap passes the threshold, and the profile.
// Every number comes from libinspect; this file only runs, arranges and prints.
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <random>

#include "commands/command.h"
#include "commands/inspect_inputs.h"
#include "commands/store_options.h"
#include "etscope/core/text.h"
#include "etscope/formats/blob.h"
#include "etscope/inspect/debug_buffer_planner.h"
#include "etscope/inspect/event_index.h"
#include "etscope/inspect/numeric_gap.h"
#include "etscope/numerics/local_gap.h"
#include "etscope/numerics/sensitivity.h"
#include "etscope/runner/runner.h"
#include "render/inspector_render.h"
#include "render/json_output.h"
#include "render/numeric_gap_render.h"
#include "render/sensitivity_render.h"

namespace etscope::cli {
namespace {

namespace fs = std::filesystem;

// A private directory for the run's ETDump and debug buffer, removed with everything in it.
class TempDir {
 public:
  static Result<TempDir> make() {
    std::error_code ec;
    const fs::path base = fs::temp_directory_path(ec);
    if (ec) return Error(ErrorCode::kIo, "no temporary directory: " + ec.message());
    std::random_device seed;
    for (int attempt = 0; attempt < 16; ++attempt) {
      const fs::path p = base / ("etscope-debug-" + std::to_string(seed()));
      if (fs::create_directory(p, ec)) return TempDir(p);
    }
    return Error(ErrorCode::kIo, base.string() + ": cannot create a temporary directory");
  }
  TempDir(TempDir&& other) noexcept : path_(std::move(other.path_)) { other.path_.clear(); }
  TempDir& operator=(TempDir&&) = delete;
  ~TempDir() {
    std::error_code ec;
    if (!path_.empty()) fs::remove_all(path_, ec);
  }
  std::string file(const char* name) const { return (path_ / name).string(); }

 private:
  explicit TempDir(fs::path p) : path_(std::move(p)) {}
  fs::path path_;
};

class DebugCommand final : public Command {
 public:
  CLI::App* add_to(CLI::App& app) override {
    CLI::App* sub = app.add_subcommand(
        "debug", "Run with the ETRecord's representative inputs, then print the numeric gap per operator, the first "
                 "divergence and the profile");
    sub->add_option("model", model_, "Program (.pte or .bpte)")->required();
    sub->add_option("--etrecord", etrecord_, "ETRecord of the program (debug handles, representative inputs)")->required();
    sub->add_option("--aot-intermediates", aot_,
                    "AOT intermediate outputs (.ptd; default MODEL.aot_intermediates.ptd beside the program, if any)");
    sub->add_option("--aot-index", aot_index_, "Index of the AOT intermediates (default: FILE.json beside the .ptd, if any)");
    sub->add_option("--method", method_, "Method to run (default forward)");
    sub->add_option("--ptd", ptd_files_, "External tensor data (.ptd) the program needs");
    sub->add_option("--gap", gap_, "Numeric gap metric: L1, MSE or SNR")->capture_default_str();
    sub->add_option("--threshold", threshold_, "A gap above this (L1, MSE) or below it (SNR, dB) is a divergence "
                                               "(default: L1 1e-3, MSE 1e-6, SNR 40)");
    buffer_option_ = sub->add_option("--debug-buffer-size", buffer_mib_,
                                     "Debug buffer for the intermediate outputs, in MiB (default: what one execution logs, "
                                     "from the memory plan; a smaller size is refused before the run)")
                         ->check(CLI::PositiveNumber);
    sub->add_option("--format", format_, "table (default) or json: one JSON object with the run, the numeric gap of every "
                                         "operator, the first divergence and the profile")
        ->check(CLI::IsMember({"table", "json"}));
    store_option_ = add_store_option(sub, store_location_)->expected(0, 1);
    sub->add_option("--tag", tags_, "With --store: key=value tags of the stored run (repeatable)");
    sub->add_option("--etdump", keep_etdump_, "Keep the run's ETDump here (for inspect, or the viewer's numeric gaps view)");
    sub->add_option("--debug-buffer", keep_debug_buffer_, "With --etdump: keep the intermediate outputs (debug buffer) here");
    sub->add_flag("--force", force_, "Compare even when the recorded inputs differ from the AOT inputs (with a warning)");
    sub->add_flag("--stats", stats_,
                  "Add each row's max absolute and relative error, cosine, worst output channel's SQNR, ULPs, exact "
                  "matches and NaN/Inf counts to the table (JSON always has them)");
    sub->add_flag("--no-local", no_local_,
                  "Skip the local gaps (a second run in which each operator computes from the AOT values of its inputs)");
    sub->add_option("--against", against_,
                    "Compare with another export of the same model (fp32 vs int8, XNNPACK vs portable, before vs after a pass) "
                    "instead of AOT intermediates: both run on the ETRecord's inputs, module outputs aligned by module path");
    sub->add_option("--against-etrecord", against_etrecord_, "With --against: the other program's ETRecord (its module paths)");
    sub->add_flag("--sensitivity", sensitivity_,
                  "Rank the quantized layers of the program's XNNPACK delegates by how much of the outputs' SQNR each "
                  "recovers when computed on floats (etscope's engine emulates the quantization), and suggest the fewest "
                  "layers to keep in float to reach --target-sqnr");
    sub->add_option("--float-reference", float_reference_,
                    "With --sensitivity: a float export of the same model (.pte or .bpte); SQNRs are measured against its "
                    "outputs on the same inputs (default: the program's own float emulation)");
    sub->add_option("--inputs", inputs_,
                    "With --sensitivity: the input sets, 'etrecord' (every case of the ETRecord's representative inputs), "
                    "'bundled' (every test case of a .bpte), or a folder: one .npy per set, or one subfolder of .npy files "
                    "(the inputs in name order) per set")
        ->capture_default_str();
    sub->add_option("--target-sqnr", target_sqnr_, "With --sensitivity: the outputs' SQNR (dB) the suggestion must reach")
        ->capture_default_str();
    return sub;
  }

  Result<int> run() override {
    // Usage errors: exit 2 before anything is read.
    if (keep_etdump_.empty() != keep_debug_buffer_.empty()) {
      std::fprintf(stderr, "etscope debug: --etdump and --debug-buffer go together (the dump's tensors live in the buffer)\n");
      return 2;
    }
    if (!keep_etdump_.empty()) {
      std::vector<std::string> inputs = ptd_files_;
      inputs.push_back(model_);
      inputs.push_back(etrecord_);
      if (!aot_.empty()) inputs.push_back(aot_);
      for (const std::string* out : {&keep_etdump_, &keep_debug_buffer_}) {
        Status s = check_not_an_input(*out, inputs);
        if (!s.ok()) {
          std::fprintf(stderr, "etscope debug: %s\n", s.error().message().c_str());
          return 2;
        }
      }
      if (keep_etdump_ == keep_debug_buffer_) {
        std::fprintf(stderr, "etscope debug: --etdump and --debug-buffer name the same file\n");
        return 2;
      }
    }
    if (against_.empty() != against_etrecord_.empty()) {
      std::fprintf(stderr, "etscope debug: --against and --against-etrecord go together\n");
      return 2;
    }
    if (!against_.empty() && !aot_.empty()) {
      std::fprintf(stderr, "etscope debug: --against compares with another program, --aot-intermediates with the AOT graph: one of them\n");
      return 2;
    }
    if (!float_reference_.empty() && !sensitivity_) {
      std::fprintf(stderr, "etscope debug: --float-reference goes with --sensitivity\n");
      return 2;
    }
    if (inputs_ != "etrecord" && !sensitivity_ && against_.empty()) {
      std::fprintf(stderr, "etscope debug: --inputs goes with --sensitivity or --against (AOT intermediates hold one input's values)\n");
      return 2;
    }
    ETSCOPE_ASSIGN_OR_RETURN(inspect::GapMetric metric, inspect::parse_gap_metric(gap_));
    // Read the AOT side first: a bad file fails before the run.
    const std::string aot_path = !against_.empty() ? std::string() : aot_.empty() ? inspect::aot_intermediates_beside(model_) : aot_;
    std::optional<inspect::AotIntermediates> aot;
    if (!aot_path.empty()) {
      const std::string index = aot_index_.empty() ? inspect::aot_index_beside(aot_path) : aot_index_;
      if (index.empty()) {
        const std::string w = inspect::missing_aot_index_warning(aot_path);
        std::fprintf(stderr, "etscope: %s: warning: %s\n", aot_path.c_str(), w.c_str());
        warnings_.push_back(aot_path + ": " + w);
      }
      ETSCOPE_ASSIGN_OR_RETURN(aot, inspect::load_aot_intermediates(aot_path, index));
    }
    const bool json = format_ == "json";

    runner::RunnerOptions options;
    options.model = model_;
    options.ptd_files = ptd_files_;
    options.method = method_;
    options.trace = true;
    options.debug_level = DebugLevel::kIntermediateOutputs;
    ETSCOPE_ASSIGN_OR_RETURN(auto runner, runner::Runner::load(options));
    ETSCOPE_TRY(size_debug_buffer(*runner));
    ETSCOPE_TRY(runner->set_inputs_from_etrecord(etrecord_));
    ETSCOPE_ASSIGN_OR_RETURN(runner::Timing timing, runner->run(0, 1));
    ETSCOPE_ASSIGN_OR_RETURN(TempDir dir, TempDir::make());
    InspectInputs files;
    files.etdump = keep_etdump_.empty() ? dir.file("run.etdp") : keep_etdump_;
    files.debug_buffer = keep_debug_buffer_.empty() ? dir.file("run.debug.bin") : keep_debug_buffer_;
    files.etrecord = etrecord_;
    files.method = runner->method_name();
    files.logging_expected = true;  // said below: the profile's timings include the logging
    if (fs::path(model_).extension() == ".pte") files.pte = model_;
    ETSCOPE_TRY(runner->write_trace(files.etdump, files.debug_buffer));
    ETSCOPE_ASSIGN_OR_RETURN(inspect::Inspector in, files.load());

    const double threshold = threshold_ ? *threshold_ : inspect::default_gap_threshold(metric);
    Json report{{"model", model_},
                {"method", runner->method_name()},
                {"etrecord", etrecord_},
                {"run_ms", timing.samples.front()},
                {"inputs", runner->record_inputs_source()},
                {"logging", Json{{"level", "intermediate"},
                                 {"buffer_bytes", runner->debug_buffer_bytes()},
                                 {"timings_include_logging", true}}},
                {"aot_intermediates", aot_path.empty() ? Json() : Json(aot_path)}};
    if (!json) {
      std::printf("%s: method '%s' run once with %s of %s (%s, intermediate outputs logged)\n\n", model_.c_str(),
                  runner->method_name().c_str(), runner->record_inputs_source().c_str(), etrecord_.c_str(),
                  duration_text_ms(timing.samples.front()).c_str());
    }
    // The run is in `in` (read back from its files) now: its runner's program, arenas and debug
    // buffer go before the local gaps' run loads its own, so memory peaks at one of them.
    const std::string method = runner->method_name();
    if (const BundledProgram* b = runner->bundled()) {
      for (const BundledTestSuite& suite : b->suites) {
        if (suite.method_name == method) bundled_cases_ = suite.cases.size();
      }
    }
    runner.reset();
    // --against: the other program's run, on the same inputs, is the reference.
    std::optional<inspect::Inspector> other;
    if (!against_.empty()) {
      const numerics::InputSet recorded{etrecord_, [&](runner::Runner& r) -> Status {
                                          Status st = r.set_inputs_from_etrecord(etrecord_);
                                          if (st.ok()) return st;
                                          return Error(ErrorCode::kInvalidArgument, against_ + ": the representative inputs of " +
                                                                                        etrecord_ + " do not fit it: " + st.error().message());
                                        }};
      ETSCOPE_ASSIGN_OR_RETURN(other, traced_run(options, against_, recorded, against_etrecord_, "against", dir));
      ETSCOPE_ASSIGN_OR_RETURN(aot, inspect::run_as_reference(in, *other));
      report["against"] = Json{{"model", against_}, {"etrecord", against_etrecord_}, {"modules", aot->entries.size()}};
      if (!json) {
        std::printf("reference: %s run on the same inputs, its module outputs aligned by module path (%zu modules in common; "
                    "AOT ops column: module and %s's operator)\n\n",
                    against_.c_str(), aot->entries.size(), against_.c_str());
      }
    }
    if (aot) {
      ETSCOPE_TRY(check_gap_inputs(in, force_));
      ETSCOPE_ASSIGN_OR_RETURN(std::vector<inspect::GapRow> rows, inspect::calculate_numeric_gap(in, *aot, metric));
      // The local gaps: a second run on etscope's engine, each call fed the AOT values of its inputs.
      std::optional<LocalGaps> local;
      if (!no_local_ && in.record() != nullptr) {
        // A forced run that fails (a kernel refusing an AOT value) costs the local column, not
        // the report: said as a warning.
        Result<LocalGaps> forced = local_gaps(options, in, *aot, metric, rows, dir);
        if (forced.ok()) {
          local = std::move(forced).value();
          local_kept_ = !keep_etdump_.empty();
        } else {
          const std::string w = "no local gaps: " + forced.error().message();
          std::fprintf(stderr, "etscope: warning: %s\n", w.c_str());
          warnings_.push_back(w);
        }
      }
      if (json) {
        report["gap"] = gap_json(rows, metric, local ? &local->gaps : nullptr);
        // The module of a row: where its event sits in the model (null when the ETRecord says none).
        auto module_of = [&](std::optional<size_t> row) {
          const inspect::Event* e = row ? inspect::gap_row_event(in, rows[*row]) : nullptr;
          const std::string text = e ? inspect::innermost_module_text(*e) : std::string();
          return text.empty() ? Json() : Json(text);
        };
        const std::optional<size_t> first = inspect::first_divergence(rows, metric, threshold);
        report["first_divergence"] = Json{{"threshold", threshold}, {"row", first ? Json(*first) : Json()}, {"module", module_of(first)}};
        if (local) {
          const std::optional<size_t> culprit = inspect::first_local_divergence(local->gaps, metric, threshold);
          report["culprit"] = Json{{"threshold", threshold},
                                   {"row", culprit ? Json(*culprit) : Json()},
                                   {"module", module_of(culprit)},
                                   {"forced", Json{{"calls", local->run.calls}, {"replaced", local->run.replaced}, {"kept", local->run.kept}}}};
        }
      } else {
        render_gap_table(rows, metric, std::cout, local ? &local->gaps : nullptr, stats_,
                         against_.empty() ? std::string("AOT reference") : against_ + " (reference)");
        std::cout << "\n";
        render_first_divergence(rows, metric, threshold, std::cout, &in);
        if (local) {
          render_culprit(rows, local->gaps, metric, threshold, std::cout, &in);
          std::cout << "  (local: each operator run again on etscope's engine from the AOT values of its inputs; "
                    << local->run.replaced << " inputs replaced, " << local->run.kept << " kept their runtime values)\n";
        }
      }
      // --against over several input sets: the gap of every row in each.
      if (other) {
        ETSCOPE_ASSIGN_OR_RETURN(std::vector<numerics::InputSet> sets, input_sets(in));
        if (sets.size() > 1) {
          std::vector<std::vector<inspect::GapRow>> per_set;
          std::vector<std::string> names;
          for (size_t k = 0; k < sets.size(); ++k) {
            ETSCOPE_ASSIGN_OR_RETURN(std::vector<inspect::GapRow> set_rows, against_rows(options, sets[k], metric, dir));
            per_set.push_back(std::move(set_rows));
            names.push_back(sets[k].name);
          }
          const std::vector<inspect::GapOverInputs> over = inspect::gaps_over_inputs(per_set, metric);
          if (json) {
            report["gap_over_inputs"] = gaps_over_inputs_json(over, names, metric);
          } else {
            std::cout << "\n";
            render_gaps_over_inputs(over, names, metric, std::cout);
          }
        }
      }
      for (size_t i = 0; i < rows.size(); ++i) {
        if (rows[i].gap.empty()) continue;
        std::string name;
        for (const std::string& op : rows[i].runtime_ops) name += (name.empty() ? "" : "+") + op;
        std::vector<store::GapPoint> points =
            rows[i].stats.empty() ? std::vector<store::GapPoint>{{static_cast<int64_t>(i), name, gap_, rows[i].gap.front()}}
                                  : store::gap_points(static_cast<int64_t>(i), name, gap_, rows[i].gap.front(), rows[i].stats.front());
        if (local && local->gaps[i] && !local->gaps[i]->empty()) {
          points.push_back({static_cast<int64_t>(i), name, "local_" + std::string(inspect::to_string(metric)), local->gaps[i]->front()});
        }
        gaps_.insert(gaps_.end(), points.begin(), points.end());
        ++gap_rows_;
      }
    } else {
      const std::string hint = missing_aot_hint();
      if (json) {
        report["gap"] = Json();
        report["hint"] = hint;
      } else {
        std::cout << hint << "\n";
      }
    }
    if (sensitivity_) {
      ETSCOPE_ASSIGN_OR_RETURN(numerics::Sensitivity sens, sensitivity(options, in));
      if (json) {
        report["sensitivity"] = sensitivity_json(sens);
      } else {
        std::cout << "\n";
        render_sensitivity(sens, std::cout);
      }
    }
    if (json) {
      report["profile"] = inspector_json(in, InspectTableOptions{});
      if (!keep_etdump_.empty()) {
        report["kept"] = Json{{"etdump", keep_etdump_}, {"debug_buffer", keep_debug_buffer_}};
        if (local_kept_) {
          const auto [etdump, buffer] = inspect::local_run_paths(keep_etdump_, keep_debug_buffer_);
          report["kept"]["local"] = Json{{"etdump", etdump}, {"debug_buffer", buffer}};
        }
      }
    } else {
      std::cout << "\nprofile (one run; timings include logging the intermediate outputs)\n";
      render_event_table(in, InspectTableOptions{}, std::cout);
    }
    if (!keep_etdump_.empty() && !json) {
      std::cout << "\nkept: " << keep_etdump_ << " and " << keep_debug_buffer_ << "; view the gaps with\n  etscope-gui "
                << model_ << " " << keep_etdump_ << " " << etrecord_ << " " << keep_debug_buffer_
                << (aot_path.empty() ? "" : " " + aot_path) << " --view gaps\n";
      if (local_kept_) {
        const auto [etdump, buffer] = inspect::local_run_paths(keep_etdump_, keep_debug_buffer_);
        std::cout << "  (the local gaps' run: " << etdump << " and " << buffer << ", which the viewer reads from beside them)\n";
      }
    }
    if (store_option_->count() > 0) {
      // The run (its timings include logging) and the gap of every compared operator.
      store::ImportRequest req;
      req.etdump = files.etdump;
      req.etrecord = etrecord_;
      req.pte = files.pte;
      req.method = method;
      req.source = "debug";
      req.gaps = gaps_;
      ETSCOPE_ASSIGN_OR_RETURN(StoredRun r, store_run(store_location_, tags_, std::move(req), nullptr));
      if (json) {
        report["store"] = Json{{"run_id", r.run_id}, {"location", r.location}, {"gap_rows", gap_rows_}};
      } else {
        std::cout << "\nstore: run " << r.run_id << " in " << r.location << " (" << gap_rows_ << " gap rows)\n";
      }
    }
    if (json) {
      report["warnings"] = warnings_;
      std::cout << dump_json(report) << "\n";
    }
    return 0;
  }

 private:
  struct LocalGaps {
    numerics::ForcedRun run;
    inspect::LocalGaps gaps;  ///< Per row of the accumulated gaps.
  };

  // The forced run (numerics/local_gap.h) on a second runner of the same options, its dump read
  // back and compared with the AOT intermediates as the first run was.
  Result<LocalGaps> local_gaps(const runner::RunnerOptions& options, const inspect::Inspector& run,
                               const inspect::AotIntermediates& aot, inspect::GapMetric metric,
                               const std::vector<inspect::GapRow>& rows, const TempDir& dir) const {
    ETSCOPE_ASSIGN_OR_RETURN(auto forced, runner::Runner::load(options));
    ETSCOPE_TRY(size_debug_buffer(*forced));
    ETSCOPE_TRY(forced->set_inputs_from_etrecord(etrecord_));
    LocalGaps out;
    ETSCOPE_ASSIGN_OR_RETURN(out.run, numerics::run_forced(*forced, *run.record(), aot, run));
    InspectInputs files;
    files.etdump = dir.file("forced.etdp");
    files.debug_buffer = dir.file("forced.debug.bin");
    if (!keep_etdump_.empty()) {
      // Kept beside the run for the viewer's local-gap column.
      std::tie(files.etdump, files.debug_buffer) = inspect::local_run_paths(keep_etdump_, keep_debug_buffer_);
    }
    files.etrecord = etrecord_;
    files.method = forced->method_name();
    files.logging_expected = true;
    if (fs::path(model_).extension() == ".pte") files.pte = model_;
    ETSCOPE_TRY(forced->write_trace(files.etdump, files.debug_buffer));
    ETSCOPE_ASSIGN_OR_RETURN(inspect::Inspector in, files.load());
    ETSCOPE_ASSIGN_OR_RETURN(std::vector<inspect::GapRow> forced_rows, inspect::calculate_numeric_gap(in, aot, metric));
    out.gaps = inspect::local_gaps(rows, forced_rows);
    return out;
  }

  // `model` (else as `options`) run once on `set` at intermediate-output level, its ETDump and
  // debug buffer written to `stem`.etdp / `stem`.debug.bin in `dir` and read back with `etrecord`
  // (checked against the program when `check_program` and it is a .pte). The runner goes before
  // the files are read, so memory peaks at one loaded program.
  Result<inspect::Inspector> traced_run(const runner::RunnerOptions& options, const std::string& model, const numerics::InputSet& set,
                                        const std::string& etrecord, const std::string& stem, const TempDir& dir,
                                        bool check_program = true) const {
    runner::RunnerOptions o = options;
    o.model = model;
    InspectInputs files;
    files.etdump = dir.file((stem + ".etdp").c_str());
    files.debug_buffer = dir.file((stem + ".debug.bin").c_str());
    files.etrecord = etrecord;
    files.logging_expected = true;
    if (check_program && fs::path(model).extension() == ".pte") files.pte = model;
    {
      ETSCOPE_ASSIGN_OR_RETURN(auto r, runner::Runner::load(o));
      ETSCOPE_TRY(size_debug_buffer(*r));
      ETSCOPE_TRY(numerics::apply_input_set(set, *r));
      if (auto done = r->run(0, 1); !done.ok()) return done.error();
      files.method = r->method_name();
      ETSCOPE_TRY(r->write_trace(files.etdump, files.debug_buffer));
    }
    return files.load();
  }

  // The gap rows of this program against --against's on one input set: both run again, traced
  // at intermediate-output level; the rows keep their gaps (their values' views go with the runs).
  Result<std::vector<inspect::GapRow>> against_rows(const runner::RunnerOptions& options, const numerics::InputSet& set,
                                                    inspect::GapMetric metric, const TempDir& dir) const {
    ETSCOPE_ASSIGN_OR_RETURN(inspect::Inspector mine, traced_run(options, model_, set, etrecord_, "set", dir, false));
    ETSCOPE_ASSIGN_OR_RETURN(inspect::Inspector theirs, traced_run(options, against_, set, against_etrecord_, "set.against", dir, false));
    ETSCOPE_ASSIGN_OR_RETURN(inspect::AotIntermediates ref, inspect::run_as_reference(mine, theirs));
    ETSCOPE_ASSIGN_OR_RETURN(std::vector<inspect::GapRow> rows, inspect::calculate_numeric_gap(mine, ref, metric));
    for (inspect::GapRow& r : rows) r.aot_output = r.runtime_output = inspect::GapValue{};
    return rows;
  }

  // The input sets of --inputs: the ETRecord's cases (read once, with the run's Inspector), the
  // bundled program's cases, or a folder of .npy files.
  Result<std::vector<numerics::InputSet>> input_sets(const inspect::Inspector& run) const {
    std::vector<numerics::InputSet> sets;
    if (inputs_ == "etrecord") {
      const etrecord::EtRecord* record = run.record();
      const std::string method = run.options().method.empty() ? "forward" : run.options().method;
      size_t cases = record != nullptr ? record->representative_cases(method) : 0;
      if (cases == 0 && record != nullptr) {
        // No representative inputs: the method's example inputs (EtRecord::aot_inputs_of), as one set.
        if (auto aot = record->aot_inputs_of(method); !aot.ok()) return aot.error();
        cases = 1;
      }
      if (cases == 0) return Error(ErrorCode::kNotFound, etrecord_ + ": no representative inputs for method '" + method + "'");
      for (size_t k = 0; k < cases; ++k) {
        sets.push_back({"etrecord case " + std::to_string(k), [record, k](runner::Runner& r) { return r.set_inputs_from_record(*record, k); }});
      }
      return sets;
    }
    if (inputs_ == "bundled") {
      if (bundled_cases_ == 0) return Error(ErrorCode::kInvalidArgument, model_ + ": --inputs bundled needs a .bpte with test cases for the method");
      for (size_t k = 0; k < bundled_cases_; ++k) {
        sets.push_back({"bundled case " + std::to_string(k), [k](runner::Runner& r) { return r.set_bundled_inputs(k); }});
      }
      return sets;
    }
    std::error_code ec;
    if (!fs::is_directory(inputs_, ec)) {
      return Error(ErrorCode::kInvalidArgument, inputs_ + ": --inputs takes 'etrecord', 'bundled' or a folder of .npy inputs");
    }
    std::vector<fs::path> files, folders;
    for (const fs::directory_entry& e : fs::directory_iterator(inputs_, ec)) {
      if (e.is_directory(ec)) {
        folders.push_back(e.path());
      } else if (e.path().extension() == ".npy") {
        files.push_back(e.path());
      }
    }
    if (ec) return Error(ErrorCode::kIo, inputs_ + ": " + ec.message());
    if (!files.empty() && !folders.empty()) {
      return Error(ErrorCode::kInvalidArgument, inputs_ + ": holds both .npy files and folders; give one .npy per input set, or one "
                                                          "folder per set");
    }
    std::sort(files.begin(), files.end());
    std::sort(folders.begin(), folders.end());
    for (const fs::path& f : files) {
      sets.push_back({f.string(), [p = f.string()](runner::Runner& r) { return r.set_inputs_from_files({p}); }});
    }
    for (const fs::path& d : folders) {
      std::vector<std::string> paths;
      for (const fs::directory_entry& e : fs::directory_iterator(d, ec)) {
        if (e.path().extension() == ".npy") paths.push_back(e.path().string());
      }
      if (paths.empty()) return Error(ErrorCode::kInvalidArgument, d.string() + ": no .npy input in this input set's folder");
      std::sort(paths.begin(), paths.end());
      sets.push_back({d.string(), [paths](runner::Runner& r) { return r.set_inputs_from_files(paths); }});
    }
    if (sets.empty()) return Error(ErrorCode::kInvalidArgument, inputs_ + ": no .npy inputs");
    return sets;
  }

  // The quantization sensitivity (numerics/sensitivity.h) over the input sets; against the float
  // reference's outputs on the same sets when one is given.
  Result<numerics::Sensitivity> sensitivity(const runner::RunnerOptions& options, const inspect::Inspector& run) const {
    numerics::SensitivityOptions so;
    so.target_sqnr_db = target_sqnr_;
    ETSCOPE_ASSIGN_OR_RETURN(std::vector<numerics::InputSet> sets, input_sets(run));
    if (!float_reference_.empty()) {
      runner::RunnerOptions ro;
      ro.model = float_reference_;
      ro.ptd_files = ptd_files_;
      ro.method = method_;
      ETSCOPE_ASSIGN_OR_RETURN(auto ref, runner::Runner::load(ro));
      Result<std::vector<std::vector<numerics::OutputTensor>>> outputs = numerics::run_input_sets(*ref, sets);
      if (!outputs.ok()) {
        return Error(ErrorCode::kInvalidArgument, float_reference_ + ": the float reference cannot run on the input sets: " +
                                                      outputs.error().message());
      }
      so.reference = std::move(outputs).value();
      so.reference_name = float_reference_ + " (etscope engine)";
      so.float_program = &ref->method();
      return numerics::quantization_sensitivity(options, sets, &run, so);
    }
    return numerics::quantization_sensitivity(options, sets, &run, so);
  }

  // The debug buffer one execution logs (the memory plan's sizes), set up before the run; an
  // explicit --debug-buffer-size that cannot hold it is refused here, naming the size needed.
  Status size_debug_buffer(runner::Runner& runner) const {
    uint64_t bytes = buffer_mib_ << 20;
    const ExecutionPlan* plan = runner.program().find_plan(runner.method_name());
    if (plan != nullptr) {
      // etscope's engine also logs inside its XNNPACK delegate calls; ExecuTorch's logs nothing there.
      const bool etscope_engine = runner.engine() == runner::EngineKind::kEtscope;
      const std::vector<uint64_t> inside = etscope_engine ? runner.method().delegate_logged_bytes() : std::vector<uint64_t>{};
      const uint64_t needed = inspect::DebugBufferPlanner::runner_bytes(*plan, DebugLevel::kIntermediateOutputs, 1, inside);
      if (buffer_option_->count() > 0 && needed > bytes) {
        return Error(ErrorCode::kOutOfResources, model_ + ": --debug-buffer-size " + std::to_string(buffer_mib_) +
                                                     " MiB cannot hold one execution's intermediate outputs (" + bytes_text(needed) +
                                                     "); give --debug-buffer-size " +
                                                     std::to_string((needed + (uint64_t{1} << 20) - 1) >> 20) + " or leave it out");
      }
      // With the values inside the delegates counted the size is exact (an upper bound for dynamic
      // shapes); otherwise a lower bound, and the default at least the 256 MiB it always was.
      const bool exact = etscope_engine || inspect::DebugBufferPlanner::runner_bytes_exact(*plan, DebugLevel::kIntermediateOutputs);
      if (buffer_option_->count() == 0) bytes = exact ? std::max<uint64_t>(needed, 1) : std::max(needed, bytes);
    }
    return runner.reserve_debug_buffer(bytes);
  }

  // What to do without AOT intermediates: real commands, never a placeholder. The run's dump is
  // deleted unless --etdump kept it, so the hint names the kept files or a run that keeps them.
  std::string missing_aot_hint() const {
    const std::string stem = fs::path(model_).replace_extension("").string();
    std::string etdump = keep_etdump_;
    std::string text = "no AOT intermediates (" + stem + ".aot_intermediates.ptd beside the program); make them with\n";
    if (etdump.empty()) {
      etdump = stem + ".debug.etdp";
      text += "  etscope debug " + model_ + " --etrecord " + etrecord_ + " --etdump " + etdump + " --debug-buffer " + stem +
              ".debug.bin\n";
    }
    text += "  samples/export/write_aot_intermediates.py --etrecord " + etrecord_ + " --etdump " + etdump + " --out " + stem +
            "\nor pass --aot-intermediates FILE.ptd";
    return text;
  }

  std::string model_, etrecord_, aot_, aot_index_, method_, keep_etdump_, keep_debug_buffer_;
  std::vector<std::string> ptd_files_;
  std::string gap_ = inspect::to_string(inspect::kDefaultGapMetric);
  std::optional<double> threshold_;
  uint64_t buffer_mib_ = 256;
  CLI::Option* buffer_option_ = nullptr;
  std::string format_ = "table";
  std::vector<std::string> warnings_;
  bool force_ = false;
  std::string store_location_;
  std::vector<std::string> tags_;
  CLI::Option* store_option_ = nullptr;
  std::vector<store::GapPoint> gaps_;  ///< Each compared operator's gap and stats.
  size_t gap_rows_ = 0;                 ///< Compared operators.
  bool no_local_ = false;
  bool local_kept_ = false;  ///< The local gaps' run was written beside --etdump.
  bool stats_ = false;
  bool sensitivity_ = false;
  std::string float_reference_;
  double target_sqnr_ = 30;
  std::string inputs_ = "etrecord";
  std::string against_, against_etrecord_;
  size_t bundled_cases_ = 0;  ///< Test cases of the method in a .bpte model.
};

}  // namespace

std::unique_ptr<Command> make_debug_command() { return std::make_unique<DebugCommand>(); }

}  // namespace etscope::cli
