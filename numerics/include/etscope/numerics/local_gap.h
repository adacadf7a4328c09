// Local versus inherited numeric error (issue 32).
//
// calculate_numeric_gap (inspect/numeric_gap.h) compares each operator's runtime output with the
// AOT output of the same node: an operator's gap is its own error plus everything it inherited
// from the operators before it, so on a deep network every row after the first culprit passes
// the threshold. The local gap separates the two: the program runs once more on etscope's engine
// with every call's inputs replaced, just before the call, by the AOT outputs of the calls that
// made them ("teacher forcing"); each operator then computes from exactly the reference inputs,
// and the numeric gap of that run, row by row, is what the operator adds by itself
// (inspect::local_gaps matches the two runs' rows: the number's one definition).
//
// What is replaced: a tensor input of a kernel or delegate call made by an earlier call whose
// debug handles key an AOT intermediate output (the call with the largest instruction id of that
// handle tuple, as calculate_numeric_gap keeps it), of the same dtype and element count, one
// tensor per output of the call (element i of a sequence output for output i). Not replaced:
// method inputs (already the AOT inputs), constants, tensors a kernel writes in place (KV
// caches), tensors of another dim order, outputs of a delegate (its inner nodes have no value in
// the plan). Inside an XNNPACK delegate, each node output etscope's engine logs (under its
// delegate debug handle) is replaced after the node ran by the AOT value of the handles the
// unforced run's Inspector linked that output to (a floating tensor of the same shape), so the
// next node computes from it too.
#pragma once

#include <cstddef>

#include "etscope/core/result.h"
#include "etscope/etrecord/etrecord.h"
#include "etscope/inspect/numeric_gap.h"
#include "etscope/runner/runner.h"

namespace etscope::numerics {

/// What the forced execution replaced.
struct ForcedRun {
  size_t calls = 0;         ///< Kernel and delegate calls executed.
  size_t replaced = 0;      ///< Inputs replaced by an AOT value (counted per call).
  /// Inputs made by an earlier call that kept their runtime value: no AOT output of that call
  /// (or not of that dtype and size), or memory that cannot be overwritten.
  size_t kept = 0;
};

/// Executes `runner`'s method once (a run block "Execute") with each call's inputs replaced by
/// AOT values as the file comment says. The runner must use the etscope engine (kNotSupported
/// otherwise: ExecuTorch's runtime has no hook between instructions), have its inputs set to
/// the ETRecord's representative inputs and, for the local gaps, trace at intermediate-output
/// level; its ETDump then holds the forced run. `run_profile` is the Inspector of an unforced run
/// of the same program at intermediate-output level with `record` (it says which edge-graph
/// handles each delegate node's output stands for). Errors: the engine's, kInvalidArgument
/// without the method's debug handle map in `record`.
Result<ForcedRun> run_forced(runner::Runner& runner, const etrecord::EtRecord& record, const inspect::AotIntermediates& aot,
                             const inspect::Inspector& run_profile);

}  // namespace etscope::numerics
