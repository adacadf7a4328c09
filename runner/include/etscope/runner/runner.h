// Runner: one program, loaded and ready to run, the way etscope run, bench/, the tests and the
// training loop drive it (in the spirit of ExecuTorch's extension/module).
//
// It reads a .pte or .bpte (plus .ptd files), attaches an ETDump writer when asked, loads a
// method, sets its inputs from .npy or raw files, random values, ones, an ETRecord's
// representative inputs or a bundled test case, runs warm-up and timed executions (latency
// statistics with libinspect's numpy-exact percentiles), checks the bundled test cases of every
// method, and writes outputs as .npy and the trace through temporary files renamed into place.
// Every failure is a Result naming the file; nothing throws.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "etscope/core/event_tracer.h"
#include "etscope/core/result.h"
#include "etscope/formats/bundled_program.h"
#include "etscope/formats/program.h"
#include "etscope/formats/tensor_stats.h"
#include "etscope/runner/engine.h"
#include "etscope/runtime/method.h"

namespace etscope::etrecord {
struct EtRecord;
}

namespace etscope::runner {

struct RunnerOptions {
  std::string model;                   ///< A .pte or a .bpte.
  std::vector<std::string> ptd_files;  ///< External tensors, searched in order.
  std::string method;                  ///< "" means "forward", else the program's first method.
  EngineKind engine = EngineKind::kEtscope;  ///< What executes the method (engine.h).
  uint32_t threads = 1;                ///< Threads of the engine (ExecuTorch's threadpool, or etscope's: MethodOptions::threads); 1 for profiles.
  /// The etscope engine's use of Intel AMX tiles (MethodOptions::matrix_tiles); kAuto or kOff.
  runtime::MatrixTiles matrix_tiles = runtime::MatrixTiles::kAuto;
  uint64_t max_memory = 0;             ///< Method::load's limit; 0 means the machine's memory.
  /// Record the load and every execution as an ETDump (written by write_trace()).
  bool trace = false;
  /// Logged values: kNone (profile only), program outputs or every kernel output; anything but
  /// kNone needs a debug buffer of `debug_buffer_bytes`, set up by reserve_debug_buffer() or at
  /// the first execution, never as part of load (load_ms() leaves it out).
  DebugLevel debug_level = DebugLevel::kNone;
  uint64_t debug_buffer_bytes = uint64_t{256} << 20;
  /// The etscope engine only: load the method to emulate quantization
  /// (runtime::MethodOptions::emulate_quantization); its quantizers are method().quantizers().
  bool emulate_quantization = false;
};

/// Latencies of the timed executions (milliseconds, in run order) and their statistics.
struct Timing {
  std::vector<double> samples;
  double min = 0, p50 = 0, p90 = 0, max = 0;
};

struct BundledCaseResult {
  std::string method;
  size_t index = 0;
  bool passed = false;
  double max_abs_error = 0, max_rel_error = 0;
  double ms = 0;           ///< Execution time of the case.
  std::string problems;    ///< "output 1: ..." for outputs that could not be compared.
};

/// A tensor output of the last execution, summarised for reports (`etscope run`'s table and
/// JSON, the run store): what it is and what it holds, for the front end to format.
struct TensorSummary {
  ScalarType dtype = ScalarType::kFloat;
  std::vector<int64_t> sizes;
  uint64_t count = 0;  ///< Elements.
  /// Statistics of its elements; TensorStats::first_values holds the first few. Absent when the
  /// tensor has no data or its dtype is not numeric.
  std::optional<TensorStats> stats;
};

struct TraceFiles {
  size_t events = 0;
  size_t etdump_bytes = 0;
  size_t debug_bytes = 0;
};

class Runner {
 public:
  /// Reads the files and loads the method. Errors name the file (and method, instruction...).
  static Result<std::unique_ptr<Runner>> load(const RunnerOptions& options);
  ~Runner();
  Runner(const Runner&) = delete;
  Runner& operator=(const Runner&) = delete;

  const Program& program() const;
  /// The bundled program when the model is a .bpte, else null.
  const BundledProgram* bundled() const;
  const std::string& method_name() const;
  /// The engine executing the method: every timing the runner reports is this engine's.
  EngineKind engine() const;
  /// That engine's version (Engine::version()) and thread count. With a trace, the ETDump's
  /// "Default" block records the engine and version as etscope's engine marker
  /// (core/event_names.h) right after the engine loaded the method, so that every reader of the
  /// dump knows which engine timed it.
  std::string engine_version() const;
  uint32_t engine_threads() const;
  /// etscope's runtime method behind the engine (training and output inspection drive it
  /// directly); for the ExecuTorch engine, etscope's validation-only load, which describes the
  /// inputs and outputs and refuses to execute.
  runtime::Method& method();
  const runtime::Method& method() const;
  /// Wall time of reading, verifying and loading, in milliseconds (the debug buffer's set-up is
  /// not part of it: debug_setup_ms()).
  double load_ms() const;
  /// Allocates the debug buffer (`bytes`, which replaces RunnerOptions::debug_buffer_bytes) and
  /// hands it to the ETDump writer, before any execution; run() does it with the options' size
  /// when it was not done. Errors: no debug level or no trace (kInvalidArgument), a buffer larger
  /// than the memory limit or that cannot be allocated (kOutOfResources, naming the size), an
  /// execution already logged into the old buffer (kInvalidArgument).
  Status reserve_debug_buffer(uint64_t bytes);
  /// The debug buffer's size (0 until it is set up) and the wall time its set-up took (ms).
  uint64_t debug_buffer_bytes() const;
  double debug_setup_ms() const;
  /// The ETDump writer recording the run when RunnerOptions::trace is set, else null; callers
  /// may add their own events to the current block (the trainer's optimizer step).
  EventTracer* tracer();

  /// One file per input: .npy (dtype must match; the shape may differ within a dynamic bound) or
  /// raw bytes in the input's dtype and planned shape. Errors name the file and both shapes. A
  /// bfloat16 input also takes a float32 .npy whose values bfloat16 holds exactly (.npy has no
  /// bfloat16 type; write_outputs writes bfloat16 outputs that way).
  Status set_inputs_from_files(const std::vector<std::string>& paths);
  /// Floats uniform in [-1, 1), integers and bools 0 or 1, from `seed`.
  Status set_random_inputs(uint64_t seed);
  Status set_ones_inputs();
  /// The ETRecord's inputs for this method that its AOT outputs were made from: its
  /// representative inputs, else the method's example inputs (etrecord::EtRecord::aot_inputs_of).
  /// Errors: none recorded, or dtypes/shapes that do not fit.
  Status set_inputs_from_etrecord(const std::string& etrecord_path);
  /// The same from a record already read: index 0 as above, index k > 0 case k of its
  /// representative inputs for this method. Errors name record.path.
  Status set_inputs_from_record(const etrecord::EtRecord& record, size_t index = 0);
  /// Which of the ETRecord's inputs the last set_inputs_from_* call took ("the representative
  /// inputs", "the example inputs (...)"); empty before one.
  const std::string& record_inputs_source() const;
  /// The inputs of test case `index` of this method's bundled suite.
  Status set_bundled_inputs(size_t index);

  /// Runs `warmup` untimed and `iterations` timed executions, the engine setting the inputs again
  /// before each (the memory plan may reuse an input's bytes, as ExecuTorch's Module::forward
  /// assumes) and timing both in its own process. With a tracer, warm-up executions are recorded
  /// in "Warmup" blocks so that reports leave them out. `progress(done, total, ms)` is called
  /// after each timed execution when given. Afterwards the outputs are the last execution's.
  Result<Timing> run(int warmup, int iterations, const std::function<void(int, int, double)>& progress = {});

  /// Sets tensor input `i` from dense bytes in its dtype and `sizes` (empty: the planned sizes);
  /// the engine keeps them for the executions that follow (a generation loop's tokens).
  Status set_input(size_t i, std::span<const uint8_t> bytes, std::span<const int64_t> sizes);
  /// One execution in a run block named `block` (a generation's "Prefill", "Decode"), the engine
  /// setting the inputs again first; returns the engine's milliseconds (Engine::execute). The
  /// outputs are then this execution's.
  Result<double> execute_once(const char* block);
  /// Checks bundled test cases: every case of every method that has a suite, or only `only`
  /// (a case index of this runner's method). Other methods are loaded on demand.
  Result<std::vector<BundledCaseResult>> check_bundled(std::optional<size_t> only, double rtol, double atol);

  /// The engine's outputs: after run(), the last execution's (for either engine; method().output
  /// is the ExecuTorch engine's validation-only load, which never executes).
  size_t num_outputs() const;
  const EValue& output(size_t i) const;

  /// The program outputs of the last execution, one entry per output: a summary for tensors
  /// (with up to `first_n` first values), nullopt for outputs of other kinds.
  std::vector<std::optional<TensorSummary>> output_summaries(size_t first_n) const;

  /// Writes each tensor output as <dir>/output_<i>.npy (bfloat16 ones widened to float32, which
  /// holds them exactly); returns how many.
  Result<size_t> write_outputs(const std::string& dir) const;

  /// Writes the ETDump (and, with a debug level, the debug buffer). A buffer or event capacity
  /// that ran out is an error after both files are written (the dump marks where values were
  /// dropped). kInvalidArgument when the runner records no trace.
  Result<TraceFiles> write_trace(const std::string& etdump_path, const std::string& debug_buffer_path);
  /// The ETDump write_trace would write, as bytes, with no file (`run --store` without
  /// --etdump hands them to the store). The same capacity errors; kInvalidArgument when the
  /// runner records no trace.
  Result<std::vector<uint8_t>> trace_bytes() const;

 private:
  struct Impl;
  explicit Runner(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace etscope::runner
