// Quantization sensitivity (issue 32): which quantized layer costs the accuracy.
//
// A quantized program's output error is the sum of many roundings: each layer's output rounded
// to its int8 grid (and each dynamically quantized linear's input to its rows' grids). etscope's
// engine can load a program to emulate its quantization (runtime::MethodOptions::
// emulate_quantization): every XNNPACK layer computes on floats from its dequantized constants
// and rounds its output only while its quantizer is on. Switching one quantizer off computes that
// layer with unquantized activations (its weights stay the dequantized int8 ones: the program holds
// no others, unless the float export is given: then its filter), so how much the output's SQNR
// recovers is what that layer's quantization costs. The reverse (only that layer's quantizer on)
// is what it costs alone.
//
// What is measured against: the outputs of a float reference (the same model exported without
// quantization, run on the same inputs) when the caller gives them, else the program's own float
// emulation (every quantizer off). The SQNR of a set of outputs is the lowest, over the floating
// outputs, of ExecuTorch's SNR comparator (inspect::compare_values with GapMetric::kSNR). Over
// several input sets, each figure is the mean of the per-set SQNRs (dB), with the worst set and
// the top-1 agreement of logits beside it, so that one lucky input does not decide.
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

/// One set of inputs the program runs on: `set` sets a loaded runner's inputs.
struct InputSet {
  std::string name;  ///< For reports: "etrecord case 0", a file or folder name.
  std::function<Status(runner::Runner&)> set;
};

/// Sets `runner`'s inputs from `set`; an error names the set unless it names it already (a set
/// named after its file).
Status apply_input_set(const InputSet& set, runner::Runner& runner);

/// One execution of `runner` per input set (its inputs set before each): the outputs of each.
/// Errors name the input set.
Result<std::vector<std::vector<OutputTensor>>> run_input_sets(runner::Runner& runner, const std::vector<InputSet>& inputs);

/// The outputs' SQNR over the input sets of one configuration.
struct SqnrFigure {
  std::vector<double> per_input_db;  ///< outputs_sqnr per input set, in order.
  double mean_db = 0;                ///< Their mean (dB); +inf when any is.
  double worst_db = 0;               ///< Their lowest.
  /// Of the input sets (and batch rows) whose first floating output is [N, C] logits (C > 1), the
  /// share whose largest logit is the reference's (top-1 agreement, 0..1); nullopt otherwise.
  std::optional<double> top1;
};

/// The figure of per-input outputs against per-input references (outputs_sqnr per set; the
/// top-1 agreement as SqnrFigure says). The two lists have one entry per input set.
Result<SqnrFigure> sqnr_figure(const std::vector<std::vector<OutputTensor>>& reference,
                               const std::vector<std::vector<OutputTensor>>& outputs);

struct SensitivityOptions {
  /// The outputs to measure against, one list per input set (a float export's, on the same
  /// inputs); empty: the program's own float emulation.
  std::vector<std::vector<OutputTensor>> reference;
  std::string reference_name;  ///< What `reference` is, for reports ("" with no reference).
  /// The float export `reference` came from, loaded on etscope's engine (may be null): a layer
  /// computed on floats then takes its filter from it (the float filter its int8 one was rounded
  /// from, found by shape and checked value by value), as a layer left unquantized in an export
  /// would. Without it, or for a layer whose filter it lacks, the dequantized int8 filter.
  const runtime::Method* float_program = nullptr;
  /// The mean SQNR (dB) the suggested set of float layers must reach.
  double target_sqnr_db = 30;
  /// Timed executions per engine for each layer's time (integer kernels, then floats), on the
  /// first input set.
  int timing_runs = 3;
};

struct LayerSensitivity {
  runtime::QuantizerSite site;
  /// Innermost module of the layer's operator (from the ETRecord), or "" (unknown, or the
  /// quantization of a float tensor, which no layer makes).
  std::string module;
  std::vector<std::string> reader_modules;  ///< Of the quantized layers reading its values.
  /// Module paths an export leaves unquantized to keep these values in float: the layer's and
  /// its readers' (a tensor stays quantized while its producer or one of its readers is).
  std::vector<std::string> exclude;
  SqnrFigure float_sqnr;   ///< Every quantizer on but this one.
  double recovered_db = 0; ///< float_sqnr.mean_db less Sensitivity::emulated.mean_db.
  SqnrFigure alone_sqnr;   ///< Only this quantizer on.
  /// The layer's operator on etscope's engine (ms, median of the timed executions): as the
  /// program computes it (integer kernels), and on floats (what keeping it in float costs).
  std::optional<double> int8_ms, float_ms;
};

struct Sensitivity {
  std::string reference;            ///< What the SQNRs are measured against.
  std::vector<std::string> inputs;  ///< The input sets' names, in the figures' order.
  SqnrFigure program;               ///< The program as etscope's engine runs it (integer kernels).
  SqnrFigure emulated;              ///< Emulated, every quantizer on.
  SqnrFigure all_float;             ///< Every quantizer off (+inf against the float emulation itself).
  std::vector<LayerSensitivity> layers;  ///< Most recovered first (ties: graph order).
  /// The suggestion: layers (indices into `layers`) to keep in float, and the emulated figure with
  /// all of them off. Layers were added in ranking order until the mean SQNR reached the target,
  /// then each was dropped again if the target still held without it. None (and a warning) when
  /// not even every layer in float reaches the target.
  double target_sqnr_db = 0;
  std::vector<size_t> keep_float;
  SqnrFigure keep_float_sqnr;
  bool target_reached = false;
  std::vector<std::string> exclude_modules;  ///< The suggested layers' `exclude`, together.
  /// The emulated mean SQNR with the first k + 1 ranked layers off, for k in order (the curve the
  /// suggestion was read from; it stops where the target was reached).
  std::vector<double> cumulative_sqnr_db;
  size_t executions = 0;  ///< Emulated executions it took (each input set counts).
  /// Layers with a quantized filter, and how many of them compute from the float export's filter
  /// when in float (0 without one).
  size_t filtered_layers = 0, float_filters = 0;
  /// Doubts about the measurement, one line each: a float reference that stays far from the
  /// program even with no layer quantized (mean below kForeignReferenceDb: likely another model
  /// or other weights), so that recoveries measured against it mean little; a target out of reach.
  std::vector<std::string> warnings;
};

/// A float reference this far (dB) from the program with every quantizer off is doubted.
inline constexpr double kForeignReferenceDb = 10;

/// Runs the analysis on etscope's engine: `options` name the program (their engine must be
/// etscope's, their trace and debug settings are replaced), `inputs` are the input sets (at least
/// one), and `profile` (may be null) is an Inspector of a run of the same program with its
/// ETRecord, used only to name each layer's module. Errors: the runners' and the inputs',
/// kNotSupported for the ExecuTorch engine, kInvalidArgument for no input set, a program with no
/// quantizer in its XNNPACK delegates (not quantized, or quantized outside them) and a reference
/// that does not match the outputs.
Result<Sensitivity> quantization_sensitivity(const runner::RunnerOptions& options, const std::vector<InputSet>& inputs,
                                             const inspect::Inspector* profile, const SensitivityOptions& sensitivity);

}  // namespace etscope::numerics
