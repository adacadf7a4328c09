// `etscope run --engine both`: the two engines' outputs and profiles side by side, as text and as
// one JSON object (docs/json.md). Every number comes from inspect/engine_fidelity.h; this only
// formats.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "etscope/core/text.h"
#include "etscope/inspect/engine_fidelity.h"
#include "render/json_output.h"

namespace etscope::cli {

/// One engine's part of the run.
struct FidelityEngine {
  std::string name, version;  ///< "etscope", "0.1.0"; "executorch", "1.5.1+cpu".
  uint32_t threads = 1;
  double load_ms = 0;
  std::vector<double> samples_ms;  ///< Timed executions as the engine timed them, in run order.
};

/// One program output of both engines.
struct FidelityOutput {
  std::string what;  ///< "f32[1,10]", or the kind of a value that is not a tensor ("int").
  /// The comparison; nullopt for a value that is not a tensor (`note` then says what each holds).
  std::optional<inspect::OutputAgreement> agreement;
  std::string note;
};

struct FidelityReport {
  std::string file, method, input_source, inputs_line;
  size_t instructions = 0, inputs = 0;
  int warmup = 0, iterations = 0;
  int block = 0;  ///< Timed executions per turn of each engine (they alternate).
  double rtol = 0, atol = 0;
  FidelityEngine etscope, executorch;
  std::vector<FidelityOutput> outputs;
  inspect::EngineFidelity fidelity;
};

/// The text report; `top` > 0 keeps the first `top` node rows.
std::string fidelity_text(const FidelityReport& report, size_t top, TimeUnit unit);
/// The JSON object; `top` as above.
Json fidelity_json(const FidelityReport& report, size_t top);

}  // namespace etscope::cli
