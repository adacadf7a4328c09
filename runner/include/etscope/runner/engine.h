// Execution engines: what executes a loaded method for the runner.
//
// Every timing etscope prints says which engine produced it. Today there is one engine, etscope's
// own runtime (runtime/: portable kernels and an interpreter of XNNPACK delegate graphs, a glass
// box that logs values inside delegates, trains, and refuses hostile programs at load). The
// runner drives an engine only through this interface, so that a second engine (ExecuTorch's own
// runtime, whose timings are the user's deployment's) joins behind the same runner, CLI and
// store without their code changing.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "etscope/core/evalue.h"
#include "etscope/core/result.h"
#include "etscope/formats/program.h"
#include "etscope/runtime/method.h"

namespace etscope::runner {

enum class EngineKind : uint8_t {
  kEtscope = 0,  ///< etscope's runtime: its own kernels; XNNPACK delegates interpreted node by node.
};

/// The engine's name as runs, dumps and the store record it: "etscope".
const char* engine_name(EngineKind kind);
/// One line saying whose code produced an engine's timings, for a run's summary.
const char* engine_description(EngineKind kind);
/// The kind named `name` ("etscope"); kInvalidArgument naming the engines otherwise.
Result<EngineKind> parse_engine(std::string_view name);

/// One method of one program, loaded in an engine.
class Engine {
 public:
  virtual ~Engine() = default;
  virtual EngineKind kind() const = 0;
  /// The engine's version as dumps and the store record it beside engine_name(kind()): the
  /// etscope engine's is etscope's own (core/version.h, "0.1.0").
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
  /// Executes the method once, recorded in a run block named `block` ("Execute", "Warmup").
  virtual Status execute(const char* block) = 0;

  /// etscope's runtime method behind this engine (what bundled checks, training and intermediate
  /// logging inside delegates drive directly), or null for an engine that has none.
  virtual runtime::Method* method() = 0;
};

/// Loads `method_name` of `program` (which must outlive the engine) in etscope's runtime.
Result<std::unique_ptr<Engine>> load_etscope_engine(const Program& program, const std::string& method_name,
                                                    const runtime::MethodOptions& options);

}  // namespace etscope::runner
