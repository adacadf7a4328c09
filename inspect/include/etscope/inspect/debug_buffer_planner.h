// DebugBufferPlanner: how big ETDump's debug buffer must be for one execution of a plan, so the
// buffer can be sized before a run instead of after an OutOfResources.
//
// At the intermediate-outputs level the event tracer logs, per execution: every out tensor of
// every KernelCall (each tensor of a TensorList out argument), every tensor argument of every
// DelegateCall, then the method's output tensors once more (marked as outputs). At the
// program-outputs level it logs only the latter. A buffer data sink writes each tensor at the next
// `alignment`-byte boundary after the previous one (64 by default, assuming the buffer itself
// starts 64-byte aligned); empty tensors take no space. Dynamic tensors count at their upper
// bound, the shape the .pte records.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "etscope/core/event_tracer.h"
#include "etscope/formats/program.h"

namespace etscope::inspect {

struct DebugBufferEntry {
  int64_t step = -1;      ///< Instruction step that logs it; the instruction count for outputs.
  int32_t value = -1;     ///< Value index of the tensor.
  uint64_t nbytes = 0;    ///< Bytes written (unaligned).
  uint64_t offset = 0;    ///< Where the sink writes it; for empty tensors, which are not
                          ///< written (ETDump records offset -1), the current end.
  bool output = false;    ///< Logged as a method output.
};

struct DebugBufferLevel {
  std::vector<DebugBufferEntry> entries;  ///< In logging order.
  uint64_t bytes_needed = 0;              ///< End of the last write: the minimum buffer size.
  uint64_t data_bytes = 0;                ///< Sum of the unaligned sizes.
};

struct DebugBufferPlan {
  uint64_t alignment = 64;
  DebugBufferLevel intermediate;     ///< Intermediate-outputs level, one execution.
  DebugBufferLevel program_outputs;  ///< Program-outputs level, one execution.
};

class DebugBufferPlanner {
 public:
  /// Bytes a buffer needs to hold `executions` runs logged at `level`, written back to back as a
  /// sink appends them, when the buffer starts `alignment`-aligned. A buffer that starts
  /// misaligned needs up to alignment - 1 bytes more (the sink skips to the first boundary).
  static uint64_t bytes_for(const DebugBufferLevel& level, size_t executions, uint64_t alignment = 64);

  /// Lays out one execution of `plan` at both levels. Never fails; non-tensor values (ints,
  /// lists of ints) are not written to the buffer and are skipped.
  static DebugBufferPlan plan(const ExecutionPlan& plan, uint64_t alignment = 64);

  /// The buffer etscope's runner needs to log `executions` runs of `plan` at `level` (0 for
  /// DebugLevel::kNone), so that `etscope run` can size it, or refuse, before the first one. It
  /// is bytes_for() of the level's plan plus what etscope logs beyond ExecuTorch: at the
  /// intermediate level every program input first (instruction -1, for the numeric gap's input
  /// check), and alignment - 1 bytes for a buffer that does not start aligned.
  /// At the intermediate level an engine may also log values inside delegate calls, which the
  /// plan does not describe: `inside_delegates` gives each one's bytes per execution (etscope's
  /// engine logs every node's output inside an XNNPACK graph: runtime::Method::
  /// delegate_logged_bytes; ExecuTorch's logs none), and they count too. Without them the result
  /// is a lower bound when the plan calls a delegate (runner_bytes_exact() says which).
  static uint64_t runner_bytes(const ExecutionPlan& plan, DebugLevel level, size_t executions, std::span<const uint64_t> inside_delegates = {},
                               uint64_t alignment = 64);
  /// Whether runner_bytes() of the plan alone is exact for `plan` at `level` (no delegate call at
  /// the intermediate level).
  static bool runner_bytes_exact(const ExecutionPlan& plan, DebugLevel level);
};

}  // namespace etscope::inspect
