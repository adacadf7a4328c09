// Execution engines: what executes a loaded method for the runner.
//
// Every timing etscope prints says which engine produced it. Two engines:
// - "etscope": etscope's own runtime (runtime/: portable kernels and an interpreter of XNNPACK
//   delegate graphs), a glass box that logs values inside delegates, trains, and refuses hostile
//   programs at load;
// - "executorch": ExecuTorch's own runtime, from the user's executorch wheel (its C++ runtime,
//   kernels_optimized, kernels_quantized, the XNNPACK delegate with XNNPACK's operator profiler),
//   run in a worker process (executorch/, `etscope-executorch`) after etscope's loader validated
//   the program: its timings are the user's deployment's, and an ExecuTorch abort ends only the
//   worker.
// The runner drives an engine only through this interface; both engines' events go to the
// runner's one ETDump writer, so their dumps have the same blocks, markers and debug buffer.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "etscope/core/evalue.h"
#include "etscope/core/result.h"
#include "etscope/formats/program.h"
#include "etscope/runtime/method.h"

namespace etscope::runner {

enum class EngineKind : uint8_t {
  kEtscope = 0,     ///< etscope's runtime: its own kernels; XNNPACK delegates interpreted node by node.
  kExecutorch = 1,  ///< ExecuTorch's runtime from the executorch wheel, in a worker process.
};

/// The engine's name as runs, dumps and the store record it: "etscope", "executorch".
const char* engine_name(EngineKind kind);
/// One line saying whose code produced an engine's timings, for a run's summary.
const char* engine_description(EngineKind kind);
/// The kind named `name` ("etscope", "executorch"); kInvalidArgument naming the engines otherwise.
Result<EngineKind> parse_engine(std::string_view name);
/// Whether this build can run `kind`: ok, or kNotSupported saying why not and how to enable it
/// (the ExecuTorch engine needs etscope built against an executorch wheel, and its worker
/// `etscope-executorch` beside the running executable, or named by $ETSCOPE_EXECUTORCH_WORKER).
Status engine_available(EngineKind kind);
/// The engine `run` profiles with when none is asked for: ExecuTorch's when it is available
/// (its timings are the user's), etscope's otherwise.
EngineKind default_engine();
/// The ExecuTorch version this build's ExecuTorch engine was built against ("" when none).
const char* executorch_build_version();

/// One method of one program, loaded in an engine.
class Engine {
 public:
  virtual ~Engine() = default;
  virtual EngineKind kind() const = 0;
  /// The engine's version as dumps and the store record it beside engine_name(kind()): the
  /// etscope engine's is etscope's own (core/version.h, "0.1.0"); the ExecuTorch engine's the
  /// ExecuTorch library's ("1.5.1+cpu").
  virtual std::string version() const = 0;

  virtual size_t num_inputs() const = 0;
  virtual size_t num_outputs() const = 0;
  /// The input's value (a tensor's dtype and shape tell what set_input expects).
  virtual const EValue& input(size_t i) const = 0;
  virtual const EValue& output(size_t i) const = 0;
  /// Copies dense bytes in the input's dtype into tensor input `i` (`sizes` empty: the planned
  /// sizes).
  virtual Status set_input(size_t i, std::span<const uint8_t> data, std::span<const int64_t> sizes) = 0;
  /// Sets a scalar input (it must equal the value the program was traced with).
  virtual Status set_scalar_input(size_t i, const EValue& value) = 0;
  /// Sets the inputs again (the memory plan may reuse their bytes, as ExecuTorch's
  /// Module::forward assumes) and executes the method once, recorded in a run block named
  /// `block` ("Execute", "Warmup"). Returns the milliseconds both took, as the engine timed them
  /// (in its own process: no messaging in the figure).
  virtual Result<double> execute(const char* block) = 0;
  /// Makes output() hold the last execution's outputs (an engine in another process copies them
  /// over only when asked: the runner asks after its executions).
  virtual Status sync_outputs() { return ok_status(); }
  /// Threads the engine computes with.
  virtual uint32_t threads() const { return 1; }

  /// etscope's runtime method behind this engine (what training and intermediate logging inside
  /// delegates drive directly). The ExecuTorch engine's is the validation-only load
  /// (MethodOptions::validate_only): it describes inputs and outputs, and refuses to execute.
  virtual runtime::Method* method() = 0;
};

/// Loads `method_name` of `program` (which must outlive the engine) in etscope's runtime.
Result<std::unique_ptr<Engine>> load_etscope_engine(const Program& program, const std::string& method_name,
                                                    const runtime::MethodOptions& options);

struct ExecutorchEngineOptions {
  uint32_t threads = 1;      ///< ExecuTorch's threadpool size.
  /// The .ptd files' bytes, in search order (they must outlive the load).
  std::vector<std::span<const uint8_t>> external_data;
};

/// Validates `method_name` of `program` with etscope's loader (the same checks and refusals as
/// the etscope engine, kernels aside), then loads it in ExecuTorch's runtime in a worker process.
/// The tracer of `options` (may be null) receives ExecuTorch's events. Errors: the ExecuTorch
/// engine not available (kNotSupported: how to enable it), kernels or backends ExecuTorch's
/// libraries lack (kNotSupported, all named, with a hint to use --engine etscope), ExecuTorch
/// refusing the program or ending the worker (quoting what it printed).
Result<std::unique_ptr<Engine>> load_executorch_engine(const Program& program, const std::string& method_name,
                                                       const runtime::MethodOptions& options,
                                                       const ExecutorchEngineOptions& executorch);

}  // namespace etscope::runner
