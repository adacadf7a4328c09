// etscope run: execute a program's method with etscope's runtime, time it, check bundled cases.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <random>

#include "commands/command.h"
#include "etscope/formats/bundled_program.h"
#include "etscope/formats/file_kind.h"
#include "etscope/formats/flat_tensor.h"
#include "etscope/formats/npy.h"
#include "etscope/formats/pte_reader.h"
#include "etscope/formats/tensor_stats.h"
#include "etscope/etdump/etdump_writer.h"
#include "etscope/runtime/bundled.h"
#include "etscope/runtime/method.h"
#include "render/format.h"

namespace etscope::cli {
namespace {

using Clock = std::chrono::steady_clock;

double ms_between(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

// "12.345 ms", or "4.2 us" below a millisecond.
std::string duration_string(double ms) {
  char buf[32];
  if (ms >= 1.0) {
    std::snprintf(buf, sizeof(buf), "%.3f ms", ms);
  } else {
    std::snprintf(buf, sizeof(buf), "%.1f us", ms * 1000.0);
  }
  return buf;
}

// Linear-interpolated percentile of sorted samples (as numpy's default).
double percentile(const std::vector<double>& sorted, double p) {
  if (sorted.empty()) return 0.0;
  const double pos = p / 100.0 * static_cast<double>(sorted.size() - 1);
  const size_t lo = static_cast<size_t>(pos);
  const size_t hi = std::min(lo + 1, sorted.size() - 1);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - static_cast<double>(lo));
}

std::string tensor_preview(const rt::TensorImpl& t, size_t count) {
  std::string s;
  if (t.data() == nullptr || !is_numeric(t.dtype())) return "(no data)";
  const auto* p = static_cast<const uint8_t*>(t.data());
  const uint64_t n = static_cast<uint64_t>(t.numel());
  for (uint64_t i = 0; i < std::min<uint64_t>(n, count); ++i) {
    const double v = element_as_double(t.dtype(), p, i);
    s += (i ? " " : "") + (t.dtype() == ScalarType::kFloat ? float_string(static_cast<float>(v)) : number_string(v));
  }
  if (n > count) s += " ...";
  return s;
}

class RunCommand final : public Command {
 public:
  CLI::App* add_to(CLI::App& app) override {
    CLI::App* sub = app.add_subcommand("run", "Execute a program (.pte or .bpte) with etscope's runtime and time it");
    sub->add_option("model", model_, "Program (.pte) or bundled program (.bpte)")->required();
    sub->add_option("--ptd", ptd_files_, "Tensor-data file with external tensors (repeatable)");
    sub->add_option("--method", method_, "Method to run (default: forward)");
    auto* inputs = sub->add_option("--input", input_files_, "One file per input: .npy, or raw bytes in the input's dtype and shape");
    auto* random = sub->add_option("--random", seed_, "Random inputs from this seed (the default, seed 0): floats in [-1, 1), integers in {0, 1}");
    auto* ones = sub->add_flag("--ones", ones_, "Inputs filled with ones");
    auto* bundled = sub->add_option("--bundled", bundled_case_, "Run the bundled test cases (all, or CASE) and check the outputs")
                        ->expected(0, 1);
    inputs->excludes(random)->excludes(ones)->excludes(bundled);
    random->excludes(ones)->excludes(bundled);
    ones->excludes(bundled);
    sub->add_option("--iterations", iterations_, "Timed executions (default 10)")->check(CLI::PositiveNumber);
    sub->add_option("--warmup", warmup_, "Untimed executions first (default 1)")->check(CLI::NonNegativeNumber);
    sub->add_option("--rtol", rtol_, "Relative tolerance for --bundled (default 1e-3, as ExecuTorch's example runner)");
    sub->add_option("--atol", atol_, "Absolute tolerance for --bundled (default 1e-5)");
    sub->add_option("--output-dir", output_dir_, "Write each tensor output as output_<i>.npy here");
    sub->add_option("--etdump", etdump_path_, "Record the run (load and every execution) as an ETDump trace");
    sub->add_option("--debug-buffer", debug_buffer_path_, "With --etdump: write logged tensors' bytes here (debug buffer)");
    sub->add_option("--debug-level", debug_level_, "With --debug-buffer: outputs (program outputs) or intermediate (every kernel output)")
        ->check(CLI::IsMember({"outputs", "intermediate"}));
    sub->add_option("--debug-buffer-size", debug_buffer_mib_, "Debug buffer capacity in MiB (default 256)")
        ->check(CLI::PositiveNumber);
    bundled_option_ = bundled;
    return sub;
  }

  Result<int> run() override {
    const auto t0 = Clock::now();
    ETSCOPE_ASSIGN_OR_RETURN(auto blob, Blob::open_file(model_));
    const bool is_bundled = sniff_file_kind(blob->bytes()) == FileKind::kBundledProgram;
    if (is_bundled) {
      ETSCOPE_ASSIGN_OR_RETURN(BundledProgram b, BpteReader::read(blob));
      bundled_ = std::make_unique<BundledProgram>(std::move(b));
    } else {
      ETSCOPE_ASSIGN_OR_RETURN(Program p, PteReader::read(blob));
      program_ = std::make_unique<Program>(std::move(p));
    }
    const Program& program = is_bundled ? bundled_->program : *program_;
    if (bundled_option_->count() > 0 && !is_bundled) {
      return Error(ErrorCode::kInvalidArgument, model_ + ": --bundled needs a bundled program (.bpte)");
    }
    for (const std::string& path : ptd_files_) {
      ETSCOPE_ASSIGN_OR_RETURN(TensorDataFile f, PtdReader::open(path));
      ptds_.push_back(std::make_unique<TensorDataFile>(std::move(f)));
    }
    if (method_.empty()) method_ = program.find_plan("forward") ? "forward" : (program.plans.empty() ? "" : program.plans[0].name);
    rt::MethodOptions options;
    for (const auto& f : ptds_) options.external_data.push_back(f.get());
    ETSCOPE_TRY(make_tracer());
    options.tracer = writer_.get();
    ETSCOPE_ASSIGN_OR_RETURN(auto method, rt::Method::load(program, method_, options));
    const auto t1 = Clock::now();
    std::printf("%s: method %s, %zu instructions, %zu inputs, %zu outputs\n", model_.c_str(), method_.c_str(),
                method->instruction_count(), method->num_inputs(), method->num_outputs());
    std::printf("load       %.2f ms (read, verify, arenas, kernels)\n", ms_between(t0, t1));

    int code = 0;
    if (bundled_option_->count() > 0) {
      ETSCOPE_ASSIGN_OR_RETURN(code, run_bundled(*method));
    } else {
      ETSCOPE_TRY(set_inputs(*method, program));
      Status timed = time_executions(*method);
      if (!timed.ok()) {
        // Keep what was recorded up to the failure: it is what the user needs to see.
        (void)write_trace();
        return timed.error();
      }
      print_outputs(*method);
      if (!output_dir_.empty()) ETSCOPE_TRY(write_outputs(*method));
    }
    ETSCOPE_TRY(write_trace());
    return code;
  }

 private:
  Status make_tracer() {
    if (etdump_path_.empty()) {
      if (!debug_buffer_path_.empty() || !debug_level_.empty()) {
        return Error(ErrorCode::kInvalidArgument, "--debug-buffer and --debug-level need --etdump");
      }
      return ok_status();
    }
    etdump::EtdumpWriterOptions options;
    if (!debug_buffer_path_.empty()) {
      debug_buffer_.assign(static_cast<size_t>(debug_buffer_mib_) << 20, 0);
      options.debug_buffer = debug_buffer_;
    } else if (!debug_level_.empty()) {
      return Error(ErrorCode::kInvalidArgument, "--debug-level needs --debug-buffer FILE for the tensor bytes");
    }
    writer_ = std::make_unique<etdump::EtdumpWriter>(options);
    if (!debug_buffer_path_.empty()) {
      writer_->set_debug_level(debug_level_ == "outputs" ? rt::DebugLevel::kProgramOutputs : rt::DebugLevel::kIntermediateOutputs);
    }
    return ok_status();
  }

  // Writes the ETDump and debug buffer; a debug buffer that overflowed is an error (the dump
  // still gets written, with a marker event where values were dropped).
  Status write_trace() {
    if (!writer_) return ok_status();
    ETSCOPE_ASSIGN_OR_RETURN(auto bytes, writer_->finish());
    ETSCOPE_TRY(write_file_bytes(etdump_path_, bytes));
    std::printf("etdump     %s: %zu events, %zu bytes\n", etdump_path_.c_str(), writer_->event_count(), bytes.size());
    if (!debug_buffer_path_.empty()) {
      ETSCOPE_TRY(write_file_bytes(debug_buffer_path_, {debug_buffer_.data(), writer_->debug_bytes_used()}));
      std::printf("debug      %s: %zu bytes of tensors\n", debug_buffer_path_.c_str(), writer_->debug_bytes_used());
    }
    if (writer_->debug_buffer_overflowed()) {
      return make_error(ErrorCode::kOutOfResources,
                        "%s: the %d MiB debug buffer ran out; values were dropped (marked in the ETDump); raise --debug-buffer-size",
                        debug_buffer_path_.c_str(), debug_buffer_mib_);
    }
    if (writer_->events_overflowed()) {
      return Error(ErrorCode::kOutOfResources, etdump_path_ + ": the event capacity ran out; events were dropped (marked in the ETDump)");
    }
    return ok_status();
  }

  Status set_inputs(rt::Method& method, const Program& program) {
    if (bundled_) {
      // A .bpte without --bundled runs its first test case's inputs.
      const BundledTestSuite* suite = find_suite();
      if (suite != nullptr && !suite->cases.empty() && input_files_.empty()) {
        std::printf("inputs     bundled test case 0\n");
        return rt::load_bundled_inputs(method, *bundled_, suite->cases[0]);
      }
    }
    if (!input_files_.empty() && input_files_.size() != method.num_inputs()) {
      return make_error(ErrorCode::kInvalidArgument, "%s: method '%s' takes %zu inputs, %zu --input files given",
                        model_.c_str(), method_.c_str(), method.num_inputs(), input_files_.size());
    }
    std::mt19937_64 rng(seed_);
    std::uniform_real_distribution<double> uniform(-1.0, 1.0);
    const ExecutionPlan& plan = *program.find_plan(method_);
    input_storage_.resize(method.num_inputs());
    for (size_t i = 0; i < method.num_inputs(); ++i) {
      const rt::EValue& slot = method.input(i);
      if (slot.tag != rt::Tag::kTensor) {
        // Scalars must equal the exported value: pass that value back.
        ETSCOPE_TRY(method.set_scalar_input(i, slot));
        continue;
      }
      const rt::TensorImpl& t = *slot.tensor;
      std::vector<uint8_t>& bytes = input_storage_[i];
      std::vector<int64_t> sizes(t.sizes().begin(), t.sizes().end());
      if (!input_files_.empty()) {
        const std::string& path = input_files_[i];
        ETSCOPE_ASSIGN_OR_RETURN(auto raw, read_file_bytes(path));
        if (raw.size() >= 6 && raw[0] == 0x93 && raw[1] == 'N') {
          ETSCOPE_ASSIGN_OR_RETURN(NpyArray a, parse_npy(raw, path));
          if (a.dtype != t.dtype()) {
            return Error(ErrorCode::kInvalidArgument, path + ": dtype " + scalar_type_name(a.dtype) + " but input " +
                                                          std::to_string(i) + " is " + scalar_type_name(t.dtype()));
          }
          bytes = std::move(a.data);
          sizes = a.shape;
        } else {
          bytes = std::move(raw);
        }
        if (bytes.size() != t.nbytes() && sizes == std::vector<int64_t>(t.sizes().begin(), t.sizes().end())) {
          return make_error(ErrorCode::kInvalidArgument, "%s: %zu bytes, input %zu (%s) needs %zu", path.c_str(), bytes.size(),
                            i, shape_string(t.dtype(), plan.values[static_cast<size_t>(plan.inputs[i])].tensor.sizes).c_str(),
                            t.nbytes());
        }
      } else {
        bytes.assign(t.nbytes(), 0);
        const uint64_t n = static_cast<uint64_t>(t.numel());
        for (uint64_t k = 0; k < n; ++k) {
          const double v = ones_ ? 1.0 : (is_float(t.dtype()) ? uniform(rng) : static_cast<double>(rng() & 1));
          store(t.dtype(), bytes.data(), k, v);
        }
      }
      Status s = method.set_input(i, bytes, sizes);
      if (!s.ok()) return s;
      input_sizes_.resize(method.num_inputs());
      input_sizes_[i] = sizes;
    }
    if (input_files_.empty()) {
      if (ones_) {
        std::printf("inputs     ones\n");
      } else {
        std::printf("inputs     random (seed %llu)\n", static_cast<unsigned long long>(seed_));
      }
    }
    return ok_status();
  }

  static bool is_float(ScalarType t) { return t == ScalarType::kFloat || t == ScalarType::kDouble; }

  static void store(ScalarType t, uint8_t* p, uint64_t i, double v) {
    switch (t) {
      case ScalarType::kFloat: reinterpret_cast<float*>(p)[i] = static_cast<float>(v); break;
      case ScalarType::kDouble: reinterpret_cast<double*>(p)[i] = v; break;
      case ScalarType::kLong: reinterpret_cast<int64_t*>(p)[i] = static_cast<int64_t>(v); break;
      case ScalarType::kInt: reinterpret_cast<int32_t*>(p)[i] = static_cast<int32_t>(v); break;
      case ScalarType::kShort: reinterpret_cast<int16_t*>(p)[i] = static_cast<int16_t>(v); break;
      case ScalarType::kChar: reinterpret_cast<int8_t*>(p)[i] = static_cast<int8_t>(v); break;
      case ScalarType::kByte:
      case ScalarType::kBool: p[i] = static_cast<uint8_t>(v != 0.0); break;
      default: break;  // other dtypes stay zero
    }
  }

  // The memory plan may reuse a planned input's bytes once the input is consumed, so inputs are
  // copied in again before every execution, as ExecuTorch's Module::forward does; the copy is
  // part of the timed latency, as it is there.
  Status reset_inputs(rt::Method& method) {
    if (bundled_ && input_storage_.empty()) {
      const BundledTestSuite* suite = find_suite();
      if (suite != nullptr && !suite->cases.empty()) return rt::load_bundled_inputs(method, *bundled_, suite->cases[0]);
    }
    for (size_t i = 0; i < input_storage_.size(); ++i) {
      if (method.input(i).tag != rt::Tag::kTensor) continue;
      ETSCOPE_TRY(method.set_input(i, input_storage_[i], input_sizes_[i]));
    }
    return ok_status();
  }

  Status time_executions(rt::Method& method) {
    const bool tty = isatty(STDERR_FILENO) != 0;
    for (int i = 0; i < warmup_; ++i) {
      ETSCOPE_TRY(reset_inputs(method));
      ETSCOPE_TRY(method.execute());
    }
    std::vector<double> samples;
    for (int i = 0; i < iterations_; ++i) {
      const auto a = Clock::now();
      ETSCOPE_TRY(reset_inputs(method));
      ETSCOPE_TRY(method.execute());
      samples.push_back(ms_between(a, Clock::now()));
      // A progress bar once iterations take long enough to wonder about.
      if (tty && samples.front() > 1000.0) {
        const int width = 30, done = (i + 1) * width / iterations_;
        std::fprintf(stderr, "\r[%.*s%*s] %d/%d", done, "##############################", width - done, "", i + 1, iterations_);
        if (i + 1 == iterations_) std::fprintf(stderr, "\n");
      }
    }
    std::vector<double> sorted = samples;
    std::sort(sorted.begin(), sorted.end());
    std::printf("latency    %d iterations (%d warmup): min %s  median %s  p90 %s  max %s\n", iterations_, warmup_,
                duration_string(sorted.front()).c_str(), duration_string(percentile(sorted, 50)).c_str(),
                duration_string(percentile(sorted, 90)).c_str(), duration_string(sorted.back()).c_str());
    return ok_status();
  }

  void print_outputs(const rt::Method& method) {
    std::printf("outputs    %zu\n", method.num_outputs());
    for (size_t i = 0; i < method.num_outputs(); ++i) {
      const rt::EValue& v = method.output(i);
      std::printf("  %zu: ", i);
      switch (v.tag) {
        case rt::Tag::kTensor: {
          const rt::TensorImpl& t = *v.tensor;
          std::vector<int32_t> sizes(t.sizes().begin(), t.sizes().end());
          std::printf("%s  %s\n", shape_string(t.dtype(), sizes).c_str(), tensor_preview(t, 6).c_str());
          break;
        }
        case rt::Tag::kInt: std::printf("int %lld\n", static_cast<long long>(v.scalar.i)); break;
        case rt::Tag::kDouble: std::printf("double %s\n", number_string(v.scalar.d).c_str()); break;
        case rt::Tag::kBool: std::printf("bool %s\n", v.scalar.b ? "true" : "false"); break;
        case rt::Tag::kString: std::printf("string \"%.*s\"\n", static_cast<int>(v.str.size()), v.str.data()); break;
        default: std::printf("%s\n", rt::to_string(v.tag)); break;
      }
    }
  }

  Status write_outputs(const rt::Method& method) {
    std::error_code ec;
    std::filesystem::create_directories(output_dir_, ec);
    if (ec) return Error(ErrorCode::kIo, output_dir_ + ": cannot create directory: " + ec.message());
    size_t written = 0;
    for (size_t i = 0; i < method.num_outputs(); ++i) {
      const rt::EValue& v = method.output(i);
      if (v.tag != rt::Tag::kTensor || v.tensor->data() == nullptr) continue;
      const rt::TensorImpl& t = *v.tensor;
      const std::string path = output_dir_ + "/output_" + std::to_string(i) + ".npy";
      std::vector<int64_t> shape(t.sizes().begin(), t.sizes().end());
      ETSCOPE_TRY(write_npy(path, t.dtype(), shape, {static_cast<const uint8_t*>(t.data()), t.nbytes()}));
      ++written;
    }
    std::printf("wrote      %zu outputs to %s\n", written, output_dir_.c_str());
    return ok_status();
  }

  const BundledTestSuite* find_suite() const {
    for (const auto& s : bundled_->suites) {
      if (s.method_name == method_) return &s;
    }
    return nullptr;
  }

  Result<int> run_bundled(rt::Method& method) {
    const BundledTestSuite* suite = find_suite();
    if (suite == nullptr) return Error(ErrorCode::kNotFound, model_ + ": no bundled test cases for method '" + method_ + "'");
    std::vector<size_t> cases;
    if (bundled_case_.empty()) {
      for (size_t c = 0; c < suite->cases.size(); ++c) cases.push_back(c);
    } else {
      char* end = nullptr;
      const long c = std::strtol(bundled_case_.c_str(), &end, 10);
      if (end == bundled_case_.c_str() || *end != '\0' || c < 0 || static_cast<size_t>(c) >= suite->cases.size()) {
        return make_error(ErrorCode::kInvalidArgument, "%s: test case '%s' is out of range (%zu cases)", model_.c_str(),
                          bundled_case_.c_str(), suite->cases.size());
      }
      cases.push_back(static_cast<size_t>(c));
    }
    std::printf("bundled    %zu of %zu cases, rtol %g, atol %g\n", cases.size(), suite->cases.size(), rtol_, atol_);
    size_t failures = 0;
    for (size_t c : cases) {
      ETSCOPE_TRY(rt::load_bundled_inputs(method, *bundled_, suite->cases[c]));
      const auto a = Clock::now();
      ETSCOPE_TRY(method.execute());
      const double ms = ms_between(a, Clock::now());
      rt::CaseCheck check = rt::verify_bundled_outputs(method, *bundled_, suite->cases[c], rtol_, atol_);
      double max_abs = 0, max_rel = 0;
      std::string problems;
      for (size_t o = 0; o < check.outputs.size(); ++o) {
        max_abs = std::max(max_abs, check.outputs[o].max_abs_error);
        max_rel = std::max(max_rel, check.outputs[o].max_rel_error);
        if (!check.outputs[o].problem.empty()) problems += "; output " + std::to_string(o) + ": " + check.outputs[o].problem;
      }
      std::printf("  case %-3zu %s  max abs error %.3g  max rel error %.3g  %s%s\n", c, check.passed ? "PASS" : "FAIL",
                  max_abs, max_rel, duration_string(ms).c_str(), problems.c_str());
      failures += check.passed ? 0 : 1;
    }
    std::printf("%zu passed, %zu failed\n", cases.size() - failures, failures);
    return failures == 0 ? 0 : 1;
  }

  std::string model_;
  std::string method_;
  std::vector<std::string> ptd_files_;
  std::vector<std::string> input_files_;
  std::string bundled_case_;
  CLI::Option* bundled_option_ = nullptr;
  uint64_t seed_ = 0;
  bool ones_ = false;
  int iterations_ = 10;
  int warmup_ = 1;
  double rtol_ = 1e-3;
  double atol_ = 1e-5;
  std::string output_dir_;
  std::unique_ptr<Program> program_;
  std::unique_ptr<BundledProgram> bundled_;
  std::vector<std::unique_ptr<TensorDataFile>> ptds_;
  std::vector<std::vector<uint8_t>> input_storage_;
  std::vector<std::vector<int64_t>> input_sizes_;
  std::string etdump_path_;
  std::string debug_buffer_path_;
  std::string debug_level_;
  int debug_buffer_mib_ = 256;
  std::vector<uint8_t> debug_buffer_;
  std::unique_ptr<etdump::EtdumpWriter> writer_;
};

}  // namespace

std::unique_ptr<Command> make_run_command() { return std::make_unique<RunCommand>(); }

}  // namespace etscope::cli
