// Quantization sensitivity (issue 32): which quantized layer costs the accuracy.
//
// A quantized program's output error is the sum of many roundings: each layer's output rounded
// to its int8 grid (and each dynamically quantized linear's input to its rows' grids). etscope's
// engine can load a program to emulate its quantization (runtime::MethodOptions::
// emulate_quantization): every XNNPACK layer computes on floats from its dequantized constants
// and rounds its output only while its quantizer is on. Switching one quantizer off computes that
// layer with unquantized activations (its weights stay the dequantized int8 ones: the program holds
// no others), so how much the output's SQNR recovers is what that layer's quantization costs. The
// reverse (only that layer's quantizer on) is what it costs alone.
//
// What is measured against: the outputs of a float reference (the same model exported without
// quantization, run on the same inputs) when the caller gives them, else the program's own float
// emulation (every quantizer off). The SQNR of a set of outputs is the lowest, over the floating
// outputs, of ExecuTorch's SNR comparator (inspect::compare_values with GapMetric::kSNR).
//
// Layers outside XNNPACK delegates (quantize / dequantize kernels of the portable graph) are not
// switched: their rounding stays in every run, in the emulation as in the reference-less float run.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "etscope/core/result.h"
#include "etscope/core/scalar_type.h"
#include "etscope/inspect/inspector.h"
#include "etscope/runner/runner.h"
#include "etscope/runtime/method.h"

namespace etscope::numerics {

/// A program output kept after its runner moved on: dense, row-major.
struct OutputTensor {
  ScalarType dtype = ScalarType::kFloat;
  std::vector<int64_t> shape;
  std::vector<uint8_t> bytes;
};

/// The runner's tensor outputs (non-tensor outputs are skipped), copied.
std::vector<OutputTensor> snapshot_outputs(const runner::Runner& runner);

/// The SQNR (dB) of `outputs` against `reference`: the lowest SNR over the floating outputs, in
/// output order (+inf when all are exact). kInvalidArgument when the two have another number of
/// tensors, a floating output of another shape, or no floating output at all.
Result<double> outputs_sqnr(const std::vector<OutputTensor>& reference, const std::vector<OutputTensor>& outputs);

struct SensitivityOptions {
  /// The outputs to measure against (a float export's, on the same inputs); empty: the program's
  /// own float emulation.
  std::vector<OutputTensor> reference;
  std::string reference_name;  ///< What `reference` is, for reports ("" with no reference).
  /// The SQNR (dB) the suggested set of float layers must reach.
  double target_sqnr_db = 30;
  /// Timed executions per engine for each layer's time (integer kernels, then floats).
  int timing_runs = 3;
};

struct LayerSensitivity {
  runtime::QuantizerSite site;
  std::string module;  ///< Innermost module of the layer's operator (from the ETRecord), or "".
  double float_sqnr_db = 0;    ///< Every quantizer on but this one.
  double recovered_db = 0;     ///< float_sqnr_db less Sensitivity::emulated_sqnr_db.
  double alone_sqnr_db = 0;    ///< Only this quantizer on.
  /// The layer's operator on etscope's engine (ms, median of the timed executions): as the
  /// program computes it (integer kernels), and on floats (what keeping it in float costs).
  std::optional<double> int8_ms, float_ms;
};

struct Sensitivity {
  std::string reference;         ///< What the SQNRs are measured against.
  double program_sqnr_db = 0;    ///< The program as etscope's engine runs it (integer kernels).
  double emulated_sqnr_db = 0;   ///< Emulated, every quantizer on.
  double float_sqnr_db = 0;      ///< Every quantizer off (+inf against the float emulation itself).
  std::vector<LayerSensitivity> layers;  ///< Most recovered first (ties: graph order).
  /// The suggestion: layers (indices into `layers`) to keep in float, and the emulated SQNR with
  /// all of them off. Layers were added in ranking order until the target was reached, then each
  /// was dropped again if the target still held without it.
  double target_sqnr_db = 0;
  std::vector<size_t> keep_float;
  double keep_float_sqnr_db = 0;
  bool target_reached = false;
  /// The emulated SQNR with the first k + 1 ranked layers off, for k in order (the curve the
  /// suggestion was read from; it stops where the target was reached).
  std::vector<double> cumulative_sqnr_db;
  size_t executions = 0;  ///< Emulated executions it took.
  /// Doubts about the measurement, one line each: a float reference that stays far from the
  /// program even with no layer quantized (below kForeignReferenceDb: likely another model or
  /// other weights), so that recoveries measured against it mean little.
  std::vector<std::string> warnings;
};

/// A float reference this far (dB) from the program with every quantizer off is doubted.
inline constexpr double kForeignReferenceDb = 10;

/// Runs the analysis on etscope's engine: `options` name the program (their engine must be
/// etscope's, their trace and debug settings are replaced), `set_inputs` sets a loaded runner's
/// inputs (called once per runner), and `profile` (may be null) is an Inspector of a run of the
/// same program with its ETRecord, used only to name each layer's module. Errors: the runners'
/// and the inputs', kNotSupported for the ExecuTorch engine, kInvalidArgument for a program
/// with no quantizer in its XNNPACK delegates (not quantized, or quantized outside them) and for
/// a reference that does not match the outputs.
Result<Sensitivity> quantization_sensitivity(const runner::RunnerOptions& options,
                                             const std::function<Status(runner::Runner&)>& set_inputs,
                                             const inspect::Inspector* profile, const SensitivityOptions& sensitivity);

}  // namespace etscope::numerics
