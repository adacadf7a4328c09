// etscope run: execute a program's method with etscope's runtime, time it, check bundled cases.
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstdarg>
#include <cstdio>
#include <cctype>
#include <filesystem>
#include <string_view>
#include <map>
#include <functional>
#include <optional>

#include "commands/command.h"
#include "commands/store_options.h"
#include "etscope/formats/bool_constants.h"
#include "etscope/formats/blob.h"
#include "etscope/formats/tensor_stats.h"
#include "etscope/inspect/debug_buffer_planner.h"
#include "etscope/inspect/program_description.h"
#include "etscope/core/text.h"
#include "etscope/runtime/method.h"
#include "etscope/runner/runner.h"
#include "etscope/inspect/engine_fidelity.h"
#include "etscope/inspect/profile.h"
#include "render/fidelity_render.h"
#include "render/format.h"
#include "render/json_output.h"

namespace etscope::cli {
namespace {

// How many first values of each output the report shows.
constexpr size_t kPreviewValues = 6;
// --engine both: timed executions per turn of each engine; the engines alternate, so that a
// machine's slow spell falls on both.
constexpr int kBothTurn = 5;

// "1 0.5 -2 ...": the first values of a tensor output, as the runner summarised them.
std::string tensor_preview(const runner::TensorSummary& t) {
  if (!t.stats) return "(no data)";
  std::string s;
  for (size_t i = 0; i < t.stats->first_values.size(); ++i) {
    const double v = t.stats->first_values[i];
    s += (i ? " " : "") + (t.dtype == ScalarType::kFloat ? float_text(static_cast<float>(v)) : number_text(v));
  }
  if (t.count > t.stats->first_values.size()) s += " ...";
  return s;
}

class RunCommand final : public Command {
 public:
  CLI::App* add_to(CLI::App& app) override {
    CLI::App* sub = app.add_subcommand("run", "Execute a program (.pte or .bpte) and time it, with ExecuTorch's runtime or etscope's");
    sub->add_option("model", model_, "Program (.pte) or bundled program (.bpte)")->required();
    sub->add_option("--ptd", ptd_files_, "Tensor-data file with external tensors (repeatable)");
    sub->add_option("--method", method_, "Method to run (default: forward)");
    sub->add_option("--engine", engine_,
                    "executorch (ExecuTorch's own runtime from the executorch wheel: the user's timings), etscope (etscope's "
                    "own kernels: values inside delegates) or both (the same inputs through both: outputs and per-node times "
                    "side by side); default: executorch when this build has it, else etscope");
    top_option_ = sub->add_option("--top", top_, "With --engine both: show at most N node rows (0: all, the default)");
    sub->add_option("--threads", threads_,
                    "Threads of the engine (ExecuTorch's threadpool, or etscope's for its XNNPACK convolutions and fully "
                    "connected layers); default 1, as profiles are taken")
        ->check(CLI::Range(1, 1024));
    sub->add_option("--amx", amx_,
                    "auto (default): the etscope engine multiplies the integers of XNNPACK's dynamically quantized linear "
                    "layers on Intel AMX tiles where the CPU offers them (layers of 12 rows or more; the same outputs); off: "
                    "AVX-512 only, as ExecuTorch's XNNPACK computes")
        ->check(CLI::IsMember({"auto", "off"}));
    auto* inputs = sub->add_option("--input", input_files_, "One file per input: .npy, or raw bytes in the input's dtype and shape");
    auto* random = sub->add_option("--random", seed_, "Random inputs from this seed (the default, seed 0): floats in [-1, 1), integers in {0, 1}");
    auto* ones = sub->add_flag("--ones", ones_, "Inputs filled with ones");
    auto* from_record = sub->add_option("--inputs-from-etrecord", etrecord_inputs_,
                                        "The ETRecord's representative inputs (those its reference outputs were made from)");
    auto* bundled = sub->add_option("--bundled", bundled_case_, "Run the bundled test cases of every method (all, or CASE of --method) and check the outputs")
                        ->expected(0, 1);
    for (CLI::Option* o : {inputs, random, ones, from_record, bundled}) {
      for (CLI::Option* other : {inputs, random, ones, from_record, bundled}) {
        if (o != other) o->excludes(other);
      }
    }
    sub->add_option("--iterations", iterations_, "Timed executions (default 10)");
    sub->add_option("--repeat", repeat_,
                    "Make K separate runs (each its own load, warm-up and iterations), each stored as its own run, tagged "
                    "set=<first run's id>; the summary prints the command comparing the set with the previous one "
                    "(default 1; needs --store or --etdump, which then writes one file per run: run-1.etdp, run-2.etdp...)");
    sub->add_option("--warmup", warmup_, "Untimed executions first (default 1); recorded as 'Warmup' blocks in an ETDump");
    sub->add_option("--rtol", rtol_, "Relative tolerance for --bundled (default 1e-3, as ExecuTorch's example runner)");
    sub->add_option("--atol", atol_, "Absolute tolerance for --bundled (default 1e-5)");
    sub->add_option("--output-dir", output_dir_, "Write each tensor output as output_<i>.npy here (bf16 as float32, which holds it exactly)");
    sub->add_option("--etdump", etdump_path_, "Record the run (load and every execution) as an ETDump trace");
    sub->add_option("--debug-buffer", debug_buffer_path_, "With --etdump: write logged tensors' bytes here (debug buffer)");
    sub->add_option("--debug-level", debug_level_, "With --debug-buffer: outputs (program outputs) or intermediate (every kernel output)")
        ->check(CLI::IsMember({"outputs", "intermediate"}));
    debug_size_option_ = sub->add_option("--debug-buffer-size", debug_buffer_mib_,
                                         "Debug buffer capacity in MiB (default: what the run logs, from the memory plan; "
                                         "a smaller size is refused before the first execution)");
    store_option_ = add_store_option(sub, store_location_)->expected(0, 1);
    sub->add_option("--tag", tags_, "With --store: key=value tags of the stored run (repeatable)");
    sub->add_option("--max-memory", max_memory_, "Most the program may allocate at load, e.g. 512M or 8G (default: the machine's memory)");
    bundled_option_ = bundled;
    sub->add_option("--format", format_, "table (default) or json: one JSON object with the load, latency statistics, "
                                         "outputs, bundled results and files written")
        ->check(CLI::IsMember({"table", "json"}));
    sub->add_option("--time-unit", time_unit_, "Unit of the printed durations: auto (default: 3 significant figures), ns, us, ms or s")
        ->check(CLI::IsMember({"auto", "ns", "us", "ms", "s"}));
    return sub;
  }

  Result<int> run() override {
    if (int code = check_usage(); code != 0) return code;
    json_ = format_ == "json";
    if (engine_ == "both") return run_both();
    if (repeat_ > 1) return run_repeat();
    ETSCOPE_ASSIGN_OR_RETURN(int code, run_one());
    if (json_) std::printf("%s\n", dump_json(report_).c_str());
    return code;
  }

 private:
  // One run: load, inputs, warm-up and iterations, its ETDump and its store record; the text
  // report as it goes, the JSON one in report_.
  Result<int> run_one() {
    runner::RunnerOptions options;
    options.model = model_;
    options.ptd_files = ptd_files_;
    options.method = method_;
    if (engine_.empty()) {
      // Profiles are ExecuTorch's when this build has its runtime; values logged at every kernel
      // (inside delegates too) are etscope's glass box.
      const bool intermediate = !debug_buffer_path_.empty() && debug_level_ != "outputs";
      options.engine = intermediate ? runner::EngineKind::kEtscope : runner::default_engine();
      default_reason_ = intermediate ? " (the default for intermediate logging: values inside delegates)" : " (the default)";
    } else {
      ETSCOPE_ASSIGN_OR_RETURN(options.engine, runner::parse_engine(engine_));
      Status available = runner::engine_available(options.engine);
      if (!available.ok()) return Error(available.error().code(), model_ + ": --engine " + engine_ + ": " + available.error().message());
    }
    options.threads = static_cast<uint32_t>(threads_);
    options.matrix_tiles = amx_ == "off" ? runtime::MatrixTiles::kOff : runtime::MatrixTiles::kAuto;
    if (!max_memory_.empty()) options.max_memory = *parse_byte_count(max_memory_);
    store_requested_ = sub_store_given();
    options.trace = !etdump_path_.empty() || store_requested_;
    if (!debug_buffer_path_.empty()) {
      options.debug_level = debug_level_ == "outputs" ? DebugLevel::kProgramOutputs : DebugLevel::kIntermediateOutputs;
      options.debug_buffer_bytes = static_cast<uint64_t>(debug_buffer_mib_) << 20;
    }
    ETSCOPE_ASSIGN_OR_RETURN(runner_, runner::Runner::load(options));
    const bool bundled = bundled_option_->count() > 0;
    // Inputs are set before anything is printed: an input error is the only line the user sees.
    if (!bundled) ETSCOPE_TRY(set_inputs());
    const runtime::Method& method = runner_->method();
    say("%s: method %s, %zu instructions, %zu inputs, %zu outputs\n", model_.c_str(), runner_->method_name().c_str(),
                method.instruction_count(), method.num_inputs(), method.num_outputs());
    say("load       %.2f ms (read, verify, arenas, kernels)\n", runner_->load_ms());
    Json warnings = Json::array();
    for (const NonBinaryBool& b : non_binary_bool_tensors(runner_->program())) {
      if (repeat_index_ <= 1) std::fprintf(stderr, "etscope: %s: warning: %s\n", model_.c_str(), b.message.c_str());
      warnings.push_back(b.message);
    }
    // The timings are the engine's: say which wherever they are shown.
    const char* engine = runner::engine_name(runner_->engine());
    const std::string engine_version = runner_->engine_version();
    const char* engine_description = runner::engine_description(runner_->engine());
        const uint32_t threads = runner_->engine_threads();
    say("engine     %s %s, %u thread%s%s: %s\n", engine, engine_version.c_str(), threads, threads == 1 ? "" : "s",
        default_reason_.c_str(), engine_description);
    if (!inputs_line_.empty()) say("%s\n", inputs_line_.c_str());
    report_["engine"] = engine;
    report_["engine_version"] = engine_version;
    report_["engine_threads"] = threads;
    report_["engine_description"] = engine_description;
    report_["file"] = model_;
    report_["method"] = runner_->method_name();
    report_["instructions"] = method.instruction_count();
    report_["inputs"] = method.num_inputs();
    report_["outputs"] = method.num_outputs();
    report_["load_ms"] = runner_->load_ms();
    report_["warnings"] = warnings;

    int code = 0;
    if (bundled) {
      ETSCOPE_ASSIGN_OR_RETURN(code, run_bundled());
    } else {
      if (options.debug_level != DebugLevel::kNone) ETSCOPE_TRY(set_up_debug_buffer(options.debug_level));
      const bool tty = isatty(STDERR_FILENO) != 0;
      double first_ms = -1;
      auto bar = [&](int done, int total, double ms) {
        // A progress bar once iterations take long enough to wonder about (a second each).
        if (first_ms < 0) first_ms = ms;
        if (!tty || first_ms < 1000.0) return;
        const int width = 30, filled = done * width / total;
        std::fprintf(stderr, "\r[%.*s%*s] %d/%d", filled, "##############################", width - filled, "", done, total);
        if (done == total) std::fprintf(stderr, "\n");
      };
      auto timing = runner_->run(warmup_, iterations_, std::function<void(int, int, double)>(bar));
      if (!timing.ok()) {
        // Keep what was recorded up to the failure: it is what the user needs to see.
        (void)write_trace();
        return timing.error();
      }
      if (repeat_index_ == 1) first_run_said_ = true;  // --repeat: each run's latency is its own line
      say("latency    %d iterations (%d warmup): min %s  median %s  p90 %s  max %s\n", iterations_, warmup_,
                  duration(timing->min).c_str(), duration(timing->p50).c_str(),
                  duration(timing->p90).c_str(), duration(timing->max).c_str());
      report_["latency_ms"] = Json{{"iterations", iterations_}, {"warmup", warmup_},   {"min", timing->min},
                                   {"p50", timing->p50},        {"p90", timing->p90},  {"max", timing->max},
                                   {"samples", timing->samples}};
      print_outputs(*runner_);
      if (!output_dir_.empty()) {
        ETSCOPE_ASSIGN_OR_RETURN(size_t written, runner_->write_outputs(output_dir_));
        say("wrote      %zu outputs to %s\n", written, output_dir_.c_str());
        report_["output_dir"] = output_dir_;
      }
    }
    ETSCOPE_TRY(write_trace());
    if (store_requested_) ETSCOPE_TRY(record_in_store());
    return code;
  }

  // --repeat K: K runs one after the other, each its own load, so that the variation from one
  // load to the next is in the sample (compare tests the method total on the runs' medians).
  // The first run's report is printed in full up to its latency; each run then gets one line,
  // and the summary names the runs, their set and the command that compares them.
  Result<int> run_repeat() {
    const std::string etdump = etdump_path_, debug_buffer = debug_buffer_path_;
    std::vector<int64_t> ids;
    std::vector<double> medians;
    Json runs = Json::array();
    std::string location;
    int code = 0;
    for (int k = 1; k <= repeat_; ++k) {
      repeat_index_ = k;
      report_ = Json::object();
      runner_.reset();  // the previous run's engine is gone before the next loads
      if (!etdump.empty()) etdump_path_ = numbered_path(etdump, k);
      if (!debug_buffer.empty()) debug_buffer_path_ = numbered_path(debug_buffer, k);
      ETSCOPE_ASSIGN_OR_RETURN(int one, run_one());
      code = std::max(code, one);
      const Json& latency = report_["latency_ms"];
      medians.push_back(latency["p50"].get<double>());
      std::string line = "run " + std::to_string(k) + "/" + std::to_string(repeat_) + "    load " + duration(runner_->load_ms()) +
                         "  median " + duration(latency["p50"].get<double>()) + "  (min " + duration(latency["min"].get<double>()) +
                         ", p90 " + duration(latency["p90"].get<double>()) + ", max " + duration(latency["max"].get<double>()) + ")";
      if (report_.contains("store")) {
        const int64_t id = report_["store"]["run_id"].get<int64_t>();
        location = report_["store"]["location"].get<std::string>();
        ids.push_back(id);
        line += "  stored as run " + std::to_string(id);
        if (k == 1) {
          // The set is named by its first run, which is tagged once its id is known.
          ETSCOPE_ASSIGN_OR_RETURN(std::unique_ptr<store::Store> store, open_store(location));
          ETSCOPE_TRY(store->tag(id, std::string(store::kSetTag), std::to_string(id)));
          report_["store"]["set"] = std::to_string(id);
          set_tag_ = std::string(store::kSetTag) + "=" + std::to_string(id);
        }
      }
      if (!etdump_path_.empty()) line += "  " + etdump_path_;
      loud("%s\n", line.c_str());
      runs.push_back(std::move(report_));
    }
    repeat_index_ = 0;
    set_tag_.clear();
    print_outputs(*runner_);  // the last run's (every run executes the same inputs)
    Json summary{{"repeat", repeat_}, {"median_ms", Json(medians)}, {"runs", std::move(runs)}};
    say("repeat     %d runs of %d iterations (%d warmup), each its own load: medians %s .. %s\n", repeat_, iterations_, warmup_,
        duration(*std::min_element(medians.begin(), medians.end())).c_str(),
        duration(*std::max_element(medians.begin(), medians.end())).c_str());
    if (!ids.empty()) ETSCOPE_TRY(print_set(ids, location, summary));
    if (json_) std::printf("%s\n", dump_json(summary).c_str());
    return code;
  }

  // The stored set, and the command that compares it with the previous set of the same program,
  // method and engine (none before the first).
  Status print_set(const std::vector<int64_t>& ids, const std::string& location, Json& summary) {
    const std::string set = std::to_string(ids.front());
    ETSCOPE_ASSIGN_OR_RETURN(std::unique_ptr<store::Store> store, open_store(location));
    ETSCOPE_ASSIGN_OR_RETURN(std::vector<int64_t> previous, store->previous_set(set));
    const std::string list = id_list(ids);
    say("store      runs %s in %s, tagged %s=%s (compare takes the set as %s or %s=%s)\n", list.c_str(), location.c_str(),
        std::string(store::kSetTag).c_str(), set.c_str(), list.c_str(), std::string(store::kSetTag).c_str(), set.c_str());
    summary["store"] = Json{{"location", location}, {"run_ids", ids}, {"set", set}};
    if (previous.empty()) {
      say("compare    no earlier set of this program, method and engine in the store: the next run --repeat prints the "
          "command comparing it with this one\n");
      summary["previous_set"] = Json::array();
      summary["compare"] = nullptr;
      return ok_status();
    }
    const std::string command = "etscope compare " + id_list(previous) + " " + list + " --store " + shell_word(location);
    say("compare    %s   (the previous set, %s=%lld, against this one)\n", command.c_str(), std::string(store::kSetTag).c_str(),
        static_cast<long long>(previous.front()));
    summary["previous_set"] = previous;
    summary["compare"] = command;
    return ok_status();
  }

  // "12,13,14"
  static std::string id_list(const std::vector<int64_t>& ids) {
    std::string s;
    for (int64_t id : ids) s += (s.empty() ? "" : ",") + std::to_string(id);
    return s;
  }

  // A path as one shell word: as it is when it needs no quoting, else in single quotes.
  static std::string shell_word(const std::string& s) {
    const bool plain = !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
      return std::isalnum(static_cast<unsigned char>(c)) != 0 || std::string_view("/._-+:@%=,").find(c) != std::string_view::npos;
    });
    if (plain) return s;
    std::string out = "'";
    for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return out + "'";
  }

  // "run.etdp" as the k-th run's file: "run-2.etdp" (the number before the extension).
  static std::string numbered_path(const std::string& path, int k) {
    const std::filesystem::path p(path);
    std::filesystem::path out = p;
    out.replace_filename(p.stem().string() + "-" + std::to_string(k) + p.extension().string());
    return out.string();
  }
  // Sizes the debug buffer from the memory plan for every execution this run logs (warm-up and
  // timed), sets it up out of the load time and says that the timings include the logging. An
  // explicit --debug-buffer-size that cannot hold them is refused here, before the first
  // execution, naming the size needed. (Bundled checks log an unknown number of executions of
  // several methods: the runner sets up the given size, or 256 MiB, and checks after the run.)
  Status set_up_debug_buffer(DebugLevel level) {
    const bool intermediate = level == DebugLevel::kIntermediateOutputs;
    const char* level_name = intermediate ? "intermediate" : "outputs";
    const bool size_given = debug_size_option_->count() > 0;
    uint64_t bytes = static_cast<uint64_t>(debug_buffer_mib_) << 20;
    uint64_t needed = 0, per_execution = 0;
    const ExecutionPlan* plan = runner_->program().find_plan(runner_->method_name());
    if (plan != nullptr) {
      const size_t executions = static_cast<size_t>(warmup_) + static_cast<size_t>(iterations_);
      // etscope's engine also logs inside its XNNPACK delegate calls; ExecuTorch's logs nothing there.
      const bool etscope_engine = runner_->engine() == runner::EngineKind::kEtscope;
      const std::vector<uint64_t> inside = etscope_engine ? runner_->method().delegate_logged_bytes() : std::vector<uint64_t>{};
      needed = inspect::DebugBufferPlanner::runner_bytes(*plan, level, executions, inside);
      per_execution = inspect::DebugBufferPlanner::runner_bytes(*plan, level, 1, inside);
      if (size_given && needed > bytes) {
        const uint64_t mib = (needed + (uint64_t{1} << 20) - 1) >> 20;
        return Error(ErrorCode::kOutOfResources,
                     model_ + ": --debug-buffer-size " + std::to_string(debug_buffer_mib_) + " MiB cannot hold this run's logged tensors: " +
                         std::to_string(executions) + " executions (" + std::to_string(warmup_) + " warm-up + " +
                         std::to_string(iterations_) + " timed) at the " + level_name + " level need " + bytes_text(needed) + " (" +
                         bytes_text(per_execution) + " each); give --debug-buffer-size " + std::to_string(mib) +
                         " or fewer --iterations, or leave the size out");
      }
      // With the values inside the delegates counted the size is exact (an upper bound for dynamic
      // shapes); otherwise a lower bound, and the default at least the 256 MiB it always was.
      const bool exact = etscope_engine || inspect::DebugBufferPlanner::runner_bytes_exact(*plan, level);
      if (!size_given) bytes = exact ? std::max<uint64_t>(needed, 1) : std::max(needed, bytes);
    }
    ETSCOPE_TRY(runner_->reserve_debug_buffer(bytes));
    say("logging    %s level into a %s debug buffer (set up in %s, not part of load); the latencies include the logging\n",
        level_name, bytes_text(runner_->debug_buffer_bytes()).c_str(), duration(runner_->debug_setup_ms()).c_str());
    Json logging{{"level", level_name},
                 {"buffer_bytes", runner_->debug_buffer_bytes()},
                 {"setup_ms", runner_->debug_setup_ms()},
                 {"timings_include_logging", true}};
    if (needed > 0) {
      logging["needed_bytes"] = needed;
      logging["bytes_per_execution"] = per_execution;
    }
    report_["debug_logging"] = std::move(logging);
    return ok_status();
  }

  // Usage errors: one line on stderr and exit code 2, before any file is read or written.
  int check_usage() {
    auto usage = [](const std::string& message) {
      std::fprintf(stderr, "etscope run: %s\n", message.c_str());
      return 2;
    };
    if (iterations_ < 1) return usage("--iterations must be at least 1 (got " + std::to_string(iterations_) + ")");
    if (warmup_ < 0) return usage("--warmup cannot be negative (got " + std::to_string(warmup_) + ")");
    if (repeat_ < 1) return usage("--repeat must be at least 1 (got " + std::to_string(repeat_) + ")");
    if (repeat_ > 1) {
      // Several runs are for compare: each is kept (stored, or a file each) and times executions.
      if (engine_ == "both") return usage("--engine both does not take --repeat (repeat each engine with --engine executorch|etscope)");
      if (bundled_option_->count() > 0) return usage("--repeat times executions; --bundled checks test cases once");
      if (!sub_store_given() && etdump_path_.empty()) {
        return usage("--repeat needs --store (each run stored, for compare) or --etdump FILE (one file per run: FILE-1, FILE-2...)");
      }
      for (const std::string& t : tags_) {
        if (t.rfind(std::string(store::kSetTag) + "=", 0) == 0) {
          return usage("--tag " + t + ": --repeat tags its runs " + std::string(store::kSetTag) + "=<first run's id> itself");
        }
      }
    }
    if (debug_buffer_mib_ < 1) return usage("--debug-buffer-size must be at least 1 MiB");
    if (!max_memory_.empty() && (!parse_byte_count(max_memory_) || *parse_byte_count(max_memory_) == 0)) {
      return usage("--max-memory takes a byte count such as 512M or 8G (got '" + max_memory_ + "')");
    }
    if (engine_ == "both") {
      // Options that make one engine's record, or that --engine both has no place for.
      const std::pair<bool, const char*> refused[] = {
          {bundled_option_->count() > 0, "--bundled (check each engine with --engine executorch|etscope)"},
          {!etdump_path_.empty(), "--etdump (record each engine's run with --engine executorch|etscope)"},
          {!debug_buffer_path_.empty() || !debug_level_.empty() || debug_size_option_->count() > 0,
           "--debug-buffer, --debug-level or --debug-buffer-size (ExecuTorch's engine logs no values inside delegates)"},
          {sub_store_given() || !tags_.empty(), "--store or --tag (store each engine's run with --engine executorch|etscope)"},
          {!output_dir_.empty(), "--output-dir (write each engine's outputs with --engine executorch|etscope)"},
      };
      for (const auto& [given, what] : refused) {
        if (given) return usage(std::string("--engine both does not take ") + what);
      }
    } else if (top_option_->count() > 0) {
      return usage("--top needs --engine both");
    }
    if (etdump_path_.empty() && (!debug_buffer_path_.empty() || !debug_level_.empty())) {
      return usage("--debug-buffer and --debug-level need --etdump");
    }
    if (debug_buffer_path_.empty() && !debug_level_.empty()) {
      return usage("--debug-level needs --debug-buffer FILE for the tensor bytes");
    }
    // An output that is one of the inputs would destroy what the command reads.
    std::vector<std::string> inputs = ptd_files_;
    inputs.push_back(model_);
    inputs.insert(inputs.end(), input_files_.begin(), input_files_.end());
    if (!etrecord_inputs_.empty()) inputs.push_back(etrecord_inputs_);
    for (const std::string* out : {&etdump_path_, &debug_buffer_path_}) {
      if (out->empty()) continue;
      for (int k = repeat_ > 1 ? 1 : 0; k <= (repeat_ > 1 ? repeat_ : 0); ++k) {
        Status s = check_not_an_input(k == 0 ? *out : numbered_path(*out, k), inputs);
        if (!s.ok()) return usage(s.error().message());
      }
    }
    if (!etdump_path_.empty() && !debug_buffer_path_.empty() && etdump_path_ == debug_buffer_path_) {
      return usage("--etdump and --debug-buffer name the same file");
    }
    return 0;
  }

  // --engine both: the same inputs through both engines, their timed executions alternating in
  // turns of kBothTurn (each engine's warm-up before its first turn), then the outputs compared
  // and the two profiles joined by inspect's engine_fidelity.
  Result<int> run_both() {
    Status available = runner::engine_available(runner::EngineKind::kExecutorch);
    if (!available.ok()) {
      return Error(available.error().code(), model_ + ": --engine both: " + available.error().message());
    }
    runner::RunnerOptions options;
    options.model = model_;
    options.ptd_files = ptd_files_;
    options.method = method_;
    options.threads = static_cast<uint32_t>(threads_);
    if (!max_memory_.empty()) options.max_memory = *parse_byte_count(max_memory_);
    options.trace = true;  // the per-node times come from each run's ETDump
    options.engine = runner::EngineKind::kExecutorch;
    ETSCOPE_ASSIGN_OR_RETURN(std::unique_ptr<runner::Runner> executorch, runner::Runner::load(options));
    options.engine = runner::EngineKind::kEtscope;
    ETSCOPE_ASSIGN_OR_RETURN(runner_, runner::Runner::load(options));
    ETSCOPE_TRY(set_inputs(*executorch));
    ETSCOPE_TRY(set_inputs(*runner_));
    for (const NonBinaryBool& b : non_binary_bool_tensors(runner_->program())) {
      std::fprintf(stderr, "etscope: %s: warning: %s\n", model_.c_str(), b.message.c_str());
    }

    FidelityReport report;
    report.block = std::min(kBothTurn, iterations_);
    for (auto [runner, engine] : {std::pair{executorch.get(), &report.executorch}, std::pair{runner_.get(), &report.etscope}}) {
      engine->name = runner::engine_name(runner->engine());
      engine->version = runner->engine_version();
      engine->threads = runner->engine_threads();
      engine->load_ms = runner->load_ms();
    }
    for (int done = 0; done < iterations_; done += report.block) {
      const int n = std::min(report.block, iterations_ - done);
      for (auto [runner, engine] : {std::pair{executorch.get(), &report.executorch}, std::pair{runner_.get(), &report.etscope}}) {
        ETSCOPE_ASSIGN_OR_RETURN(runner::Timing timing, runner->run(done == 0 ? warmup_ : 0, n));
        engine->samples_ms.insert(engine->samples_ms.end(), timing.samples.begin(), timing.samples.end());
      }
    }

    ETSCOPE_ASSIGN_OR_RETURN(inspect::Profile ours, profile_of(*runner_));
    ETSCOPE_ASSIGN_OR_RETURN(inspect::Profile theirs, profile_of(*executorch));
    ETSCOPE_ASSIGN_OR_RETURN(report.fidelity, inspect::engine_fidelity(*ours.inspector, *theirs.inspector));
    for (size_t i = 0; i < runner_->num_outputs(); ++i) {
      ETSCOPE_ASSIGN_OR_RETURN(FidelityOutput o, compare_output(runner_->output(i), executorch->output(i)));
      report.outputs.push_back(std::move(o));
    }
    const runtime::Method& method = runner_->method();
    report.file = model_;
    report.method = runner_->method_name();
    report.instructions = method.instruction_count();
    report.inputs = method.num_inputs();
    report.inputs_line = inputs_line_;
    if (report_.contains("input_source")) {
      const Json& source = report_["input_source"];  // a description, or the input files
      report.input_source = source.is_string() ? source.get<std::string>() : "files " + source.dump();
    }
    report.warmup = warmup_;
    report.iterations = iterations_;
    report.rtol = rtol_;
    report.atol = atol_;
    if (json_) {
      std::printf("%s\n", dump_json(fidelity_json(report, top_)).c_str());
    } else {
      const auto unit = parse_time_unit(time_unit_);
      std::fputs(fidelity_text(report, top_, unit.ok() ? *unit : TimeUnit::kAuto).c_str(), stdout);
    }
    return 0;
  }

  // A run's ETDump opened from memory, the way every front end opens a profile.
  static Result<inspect::Profile> profile_of(const runner::Runner& runner) {
    ETSCOPE_ASSIGN_OR_RETURN(std::vector<uint8_t> trace, runner.trace_bytes());
    inspect::ProfileFiles files;
    files.etdump_bytes = Blob::from_bytes(std::string("(") + runner::engine_name(runner.engine()) + " run in memory)", trace);
    return inspect::open_profile(files);
  }

  // One output of both engines: tensors compared by inspect, other values described.
  Result<FidelityOutput> compare_output(const EValue& ours, const EValue& theirs) const {
    FidelityOutput o;
    if (ours.tag != Tag::kTensor || theirs.tag != Tag::kTensor || ours.tensor == nullptr || theirs.tensor == nullptr) {
      o.what = to_string(ours.tag);
      o.note = std::string("not a tensor (etscope's is ") + to_string(ours.tag) + ", executorch's " + to_string(theirs.tag) + ")";
      return o;
    }
    const TensorImpl& a = *ours.tensor;
    const TensorImpl& b = *theirs.tensor;
    o.what = shape_text(a.dtype(), a.sizes());
    auto bytes = [](const TensorImpl& t) {
      return t.data() == nullptr ? std::span<const uint8_t>() : std::span<const uint8_t>(static_cast<const uint8_t*>(t.data()), t.nbytes());
    };
    ETSCOPE_ASSIGN_OR_RETURN(o.agreement,
                             inspect::compare_outputs(a.dtype(), a.sizes(), bytes(a), b.dtype(), b.sizes(), bytes(b), rtol_, atol_));
    return o;
  }

  // Sets the inputs the options ask for; the line that describes them is kept in inputs_line_,
  // printed after the header once everything the run needs is known to be there.
  Status set_inputs() { return set_inputs(*runner_); }
  Status set_inputs(runner::Runner& runner) {
    if (!input_files_.empty()) {
      report_["input_source"] = input_files_;
      return runner.set_inputs_from_files(input_files_);
    }
    if (!etrecord_inputs_.empty()) {
      ETSCOPE_TRY(runner.set_inputs_from_etrecord(etrecord_inputs_));
      inputs_line_ = "inputs     representative inputs of " + etrecord_inputs_;
      report_["input_source"] = "etrecord " + etrecord_inputs_;
      return ok_status();
    }
    if (runner.bundled() != nullptr && !ones_ && seed_ == 0) {
      // A .bpte without --bundled runs its first test case's inputs.
      if (runner.set_bundled_inputs(0).ok()) {
        inputs_line_ = "inputs     bundled test case 0";
        report_["input_source"] = "bundled test case 0";
        return ok_status();
      }
    }
    if (ones_) {
      ETSCOPE_TRY(runner.set_ones_inputs());
      inputs_line_ = "inputs     ones";
      report_["input_source"] = "ones";
    } else {
      ETSCOPE_TRY(runner.set_random_inputs(seed_));
      inputs_line_ = "inputs     random (seed " + std::to_string(seed_) + ")";
      report_["input_source"] = "random seed " + std::to_string(seed_);
    }
    return ok_status();
  }

  // The program outputs of the last execution as the store keeps them (the runner's summaries).
  static std::vector<store::OutputSummary> store_outputs(const runner::Runner& runner) {
    std::vector<store::OutputSummary> out;
    const std::vector<std::optional<runner::TensorSummary>> summaries = runner.output_summaries(0);
    for (size_t i = 0; i < summaries.size(); ++i) {
      if (!summaries[i]) continue;
      const runner::TensorSummary& t = *summaries[i];
      store::OutputSummary o;
      o.index = static_cast<int64_t>(i);
      o.dtype = scalar_type_short_name(t.dtype);
      o.shape = Json(t.sizes).dump();  // "[1,10]": the sizes as a compact JSON list
      if (t.stats && t.stats->finite_count > 0) {
        o.min = t.stats->min;
        o.max = t.stats->max;
        o.mean = t.stats->mean;
      }
      out.push_back(std::move(o));
    }
    return out;
  }

  bool sub_store_given() const { return store_option_ != nullptr && store_option_->count() > 0; }

  // --store: the run's ETDump (the --etdump file, else a temporary one) goes into the run store.
  Status record_in_store() {
    store::ImportRequest req;
    req.etdump = etdump_path_;
    req.pte = model_;
    req.method = runner_->method_name();
    req.source = "run";
    req.outputs = store_outputs(*runner_);
    std::vector<std::string> tags = tags_;
    if (!set_tag_.empty()) tags.push_back(set_tag_);  // --repeat: the runs after the first
    ETSCOPE_ASSIGN_OR_RETURN(StoredRun stored, store_run(store_location_, tags, std::move(req), runner_.get()));
    say("store      run %lld in %s\n", static_cast<long long>(stored.run_id), stored.location.c_str());
    report_["store"] = Json{{"run_id", stored.run_id}, {"location", stored.location}};
    return ok_status();
  }

  Status write_trace() {
    if (etdump_path_.empty() || !runner_) return ok_status();
    auto files = runner_->write_trace(etdump_path_, debug_buffer_path_);
    if (!files.ok()) return files.error();
    say("etdump     %s: %zu events, %zu bytes\n", etdump_path_.c_str(), files->events, files->etdump_bytes);
    report_["etdump"] = Json{{"path", etdump_path_}, {"events", files->events}, {"bytes", files->etdump_bytes}};
    if (!debug_buffer_path_.empty()) {
      report_["debug_buffer"] = Json{{"path", debug_buffer_path_}, {"bytes", files->debug_bytes}};
    }
    if (!debug_buffer_path_.empty()) {
      say("debug      %s: %zu bytes of tensors\n", debug_buffer_path_.c_str(), files->debug_bytes);
    }
    return ok_status();
  }

  void print_outputs(const runner::Runner& runner) {
    const runtime::Method& method = runner.method();
    const std::vector<std::optional<runner::TensorSummary>> summaries = runner.output_summaries(kPreviewValues);
    say("outputs    %zu\n", method.num_outputs());
    Json outputs = Json::array();
    for (size_t i = 0; i < method.num_outputs(); ++i) {
      const EValue& v = method.output(i);
      outputs.push_back(output_json(v, summaries[i]));
      say("  %zu: ", i);
      if (summaries[i]) {
        say("%s  %s\n", shape_text(summaries[i]->dtype, summaries[i]->sizes).c_str(), tensor_preview(*summaries[i]).c_str());
        continue;
      }
      switch (v.tag) {
        case Tag::kInt: say("int %lld\n", static_cast<long long>(v.scalar.i)); break;
        case Tag::kDouble: say("double %s\n", number_text(v.scalar.d).c_str()); break;
        case Tag::kBool: say("bool %s\n", v.scalar.b ? "true" : "false"); break;
        case Tag::kString: say("string \"%.*s\"\n", static_cast<int>(v.str.size()), v.str.data()); break;
        default: say("%s\n", to_string(v.tag)); break;
      }
    }
    report_["output_values"] = std::move(outputs);
  }

  static Json output_json(const EValue& v, const std::optional<runner::TensorSummary>& tensor) {
    Json j{{"kind", to_string(v.tag)}};
    if (tensor) {
      j["dtype"] = scalar_type_name(tensor->dtype);
      j["shape"] = tensor->sizes;
      Json first = Json::array();
      if (tensor->stats) {
        for (double x : tensor->stats->first_values) first.push_back(number_json(x));
      }
      j["first"] = std::move(first);
      return j;
    }
    switch (v.tag) {
      case Tag::kInt: j["value"] = v.scalar.i; break;
      case Tag::kDouble: j["value"] = number_json(v.scalar.d); break;
      case Tag::kBool: j["value"] = v.scalar.b; break;
      default: break;
    }
    return j;
  }

  Result<int> run_bundled() {
    std::optional<size_t> only;
    if (!bundled_case_.empty()) {
      char* end = nullptr;
      const long c = std::strtol(bundled_case_.c_str(), &end, 10);
      if (end == bundled_case_.c_str() || *end != '\0' || c < 0) {
        return Error(ErrorCode::kInvalidArgument, model_ + ": test case '" + bundled_case_ + "' is not a case number");
      }
      only = static_cast<size_t>(c);
    }
    ETSCOPE_ASSIGN_OR_RETURN(auto results, runner_->check_bundled(only, rtol_, atol_));
    std::map<std::string, size_t> per_method;
    for (const auto& r : results) ++per_method[r.method];
    std::string methods;
    for (const auto& [name, n] : per_method) methods += (methods.empty() ? "" : ", ") + name + " " + std::to_string(n);
    say("bundled    %zu cases (%s), rtol %g, atol %g\n", results.size(), methods.c_str(), rtol_, atol_);
    size_t failures = 0;
    const bool several = per_method.size() > 1;
    for (const auto& r : results) {
      const std::string label = several ? r.method + " case " + std::to_string(r.index) : "case " + std::to_string(r.index);
      say("  %-10s %s  max abs error %.3g  max rel error %.3g  %s%s%s\n", label.c_str(), r.passed ? "PASS" : "FAIL",
                  r.max_abs_error, r.max_rel_error, duration(r.ms).c_str(), r.problems.empty() ? "" : "  ",
                  r.problems.c_str());
      failures += r.passed ? 0 : 1;
    }
    say("%zu passed, %zu failed\n", results.size() - failures, failures);
    Json cases = Json::array();
    for (const auto& r : results) {
      cases.push_back(Json{{"method", r.method}, {"case", r.index}, {"passed", r.passed}, {"max_abs_error", number_json(r.max_abs_error)},
                           {"max_rel_error", number_json(r.max_rel_error)}, {"ms", r.ms}, {"problems", r.problems}});
    }
    report_["bundled"] = Json{{"rtol", rtol_}, {"atol", atol_}, {"passed", results.size() - failures}, {"failed", failures},
                              {"cases", std::move(cases)}};
    return failures == 0 ? 0 : 1;
  }

  std::string model_;
  std::string inputs_line_;
  std::string method_;
  std::string engine_;
  std::string default_reason_;  // why the engine was chosen when none was asked for
  int threads_ = 1;
  std::string amx_ = "auto";
  std::vector<std::string> ptd_files_;
  std::vector<std::string> input_files_;
  std::string etrecord_inputs_;
  std::string bundled_case_;
  CLI::Option* bundled_option_ = nullptr;
  uint64_t seed_ = 0;
  bool ones_ = false;
  int iterations_ = 10;
  int warmup_ = 1;
  int repeat_ = 1;
  int repeat_index_ = 0;  ///< With --repeat: the run being made, from 1 (0 otherwise).
  std::string set_tag_;   ///< With --repeat and --store: "set=<first run's id>" for the runs after the first.
  bool first_run_said_ = false;  ///< With --repeat: the first run's header is printed.
  double rtol_ = 1e-3;
  double atol_ = 1e-5;
  std::string output_dir_;
  std::string etdump_path_;
  std::string debug_buffer_path_;
  std::string debug_level_;
  int debug_buffer_mib_ = 256;
  CLI::Option* debug_size_option_ = nullptr;
  std::string max_memory_;
  std::unique_ptr<runner::Runner> runner_;
  std::string store_location_;
  std::vector<std::string> tags_;
  CLI::Option* store_option_ = nullptr;
  bool store_requested_ = false;
  size_t top_ = 0;
  CLI::Option* top_option_ = nullptr;
  std::string format_ = "table";
  std::string time_unit_ = "auto";
  bool json_ = false;

  // A duration given in milliseconds, in --time-unit (libinspect's one policy).
  std::string duration(double ms) const {
    const auto unit = parse_time_unit(time_unit_);  // CLI11 has checked the name
    return duration_text_ms(ms, unit.ok() ? *unit : TimeUnit::kAuto);
  }
  Json report_ = Json::object();  ///< What --format json prints, filled as the run goes.

  // The text report's lines; nothing with --format json (the report goes to report_). With
  // --repeat, the runs after the first say nothing and the first stops at its latency: each run
  // has its line (loud) and the summary follows.
  __attribute__((format(printf, 2, 3))) void say(const char* fmt, ...) const {
    if (json_ || repeat_index_ > 1 || (repeat_index_ == 1 && first_run_said_)) return;
    va_list ap;
    va_start(ap, fmt);
    std::vprintf(fmt, ap);
    va_end(ap);
  }
  // A line of the text report that --repeat does not quiet.
  __attribute__((format(printf, 2, 3))) void loud(const char* fmt, ...) const {
    if (json_) return;
    va_list ap;
    va_start(ap, fmt);
    std::vprintf(fmt, ap);
    va_end(ap);
  }
};

}  // namespace

std::unique_ptr<Command> make_run_command() { return std::make_unique<RunCommand>(); }

}  // namespace etscope::cli
