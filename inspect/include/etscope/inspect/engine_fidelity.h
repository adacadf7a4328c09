// Engine fidelity: the same program and inputs run by two execution engines (runner/engine.h:
// etscope's runtime and ExecuTorch's), their outputs and their profiles side by side
// (`etscope run --engine both`). Every number the command prints is defined here.
//
// Nodes. A profile's nodes are the leaves of one execution as the Inspector groups it (the main
// block, inspect::main_block): each instruction's kernel event (native_call_<op>.<overload>, or
// its OPERATOR_CALL when it has no kernel event), every event a delegate raised (XNNPACK's
// operators, named by XNNPACK's profiler with their occurrence in the delegate call, e.g.
// "Convolution (NHWC, F32) IGEMM #2"; etscope's interpreter uses the same names), and a
// DELEGATE_CALL whose delegate raised none. A DELEGATE_CALL that holds delegate events is a
// container, kept apart (EngineFidelity::delegate_calls): its time is its nodes' plus the
// delegate's own overhead. Nodes of the two runs are joined by (chain, instruction, name).
//
// Times are the Inspector's medians (PerfData::p50, milliseconds); a node's share is its median
// over its run's median Method::execute (the run time, medians throughout; the Inspector's run
// time, an average, when the dump has no Method::execute).
//
// Order: rows are sorted by how far apart the engines are in time, |etscope median - ExecuTorch
// median| largest first (the node that moves the run time most), program order on ties. A ratio
// alone would put a 1 us node ten times slower above a 1 ms node 30% slower.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "etscope/core/event_names.h"
#include "etscope/core/result.h"
#include "etscope/core/scalar_type.h"
#include "etscope/inspect/inspector.h"

namespace etscope::inspect {

/// One node of both runs, or of one of them (the other's fields 0 and absent).
struct FidelityRow {
  std::string name;
  int32_t chain = 0;
  int32_t instruction = 0;
  events::EventClass kind = events::EventClass::kNativeCall;
  size_t order = 0;  ///< Position in program order (the first run that has the node).
  bool in_etscope = false, in_executorch = false;  ///< Which runs have the node.
  double etscope_ms = 0, executorch_ms = 0;  ///< Medians.
  /// etscope_ms / executorch_ms; nullopt when ExecuTorch's median is 0 (XNNPACK's profiler counts
  /// microseconds: a node under one reads 0) or the node is in one run only.
  std::optional<double> ratio;
  double difference_ms = 0;  ///< etscope_ms - executorch_ms (> 0: etscope slower).
  /// Share of each run's run time (0..1); nullopt when that run lacks the node or has no run time.
  std::optional<double> etscope_share, executorch_share;
};

/// One engine's run, as the join reads it.
struct FidelityRun {
  size_t runs = 0;        ///< Executions in the main block.
  double run_ms = 0;      ///< Median Method::execute (or the Inspector's run time, see above).
  RunTimeSource source = RunTimeSource::kNone;
  double nodes_ms = 0;    ///< Sum of its nodes' medians.
};

struct EngineFidelity {
  FidelityRun etscope, executorch;
  std::optional<double> run_ratio;       ///< etscope.run_ms / executorch.run_ms; nullopt when 0.
  std::vector<FidelityRow> rows;         ///< Nodes of both runs, in the order above.
  std::vector<FidelityRow> only_etscope, only_executorch;  ///< Program order.
  std::vector<FidelityRow> delegate_calls;  ///< Containers of both or either run, program order.
  /// Spearman's rank correlation of the matched nodes' medians (average ranks for ties); nullopt
  /// with fewer than two rows or when one run's medians are all equal.
  std::optional<double> spearman;
};

/// Joins the main blocks of two runs of the same program (see the file comment). The Inspectors
/// must report in the same time scale (not cycles). kInvalidArgument when a run has no block or
/// the scales differ or are cycles.
Result<EngineFidelity> engine_fidelity(const Inspector& etscope, const Inspector& executorch);

/// Spearman's rank correlation of paired samples: Pearson's correlation of their average ranks
/// (scipy.stats.spearmanr); nullopt when the sizes differ, there are fewer than two pairs or a
/// side is constant.
std::optional<double> spearman_correlation(std::span<const double> a, std::span<const double> b);

/// How one output of the two runs compares, element by element; ExecuTorch's is the reference.
struct OutputAgreement {
  /// Dtypes and shapes agree and the dtype is numeric; otherwise `problem` says why not and no
  /// element was compared.
  bool comparable = false;
  std::string problem;
  bool floating = false;        ///< f16, bf16, f32, f64: judged by tolerance, others exactly.
  uint64_t count = 0;           ///< Elements compared.
  uint64_t differing = 0;       ///< Elements not bit-equal as numbers (NaN equals NaN).
  /// Largest |etscope - executorch| and |etscope - executorch| / max(|etscope|, |executorch|,
  /// 1e-8) (runtime/bundled.h's rule) over elements that are both finite.
  double max_abs_error = 0, max_rel_error = 0;
  /// Elements where one side is NaN or infinite and the other is not the same (never in the maxima).
  uint64_t nonfinite_mismatches = 0;
  /// Floating: every element |e - x| <= atol + rtol |x| (x ExecuTorch's, equal non-finite values
  /// match); others: differing == 0.
  bool within_tolerance = false;
};

/// Compares `count` dense elements of two outputs. `etscope` and `executorch` must each hold
/// `count` elements of their dtype (kInvalidArgument otherwise).
Result<OutputAgreement> compare_outputs(ScalarType etscope_dtype, std::span<const int64_t> etscope_sizes,
                                        std::span<const uint8_t> etscope, ScalarType executorch_dtype,
                                        std::span<const int64_t> executorch_sizes, std::span<const uint8_t> executorch,
                                        double rtol, double atol);

}  // namespace etscope::inspect
