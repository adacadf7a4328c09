#include "etscope/inspect/debug_buffer_planner.h"

#include "etscope/formats/op_signatures.h"
#include "etscope/inspect/greedy_planner.h"

namespace etscope::inspect {
namespace {

class Sink {
 public:
  Sink(const ExecutionPlan& plan, uint64_t alignment, DebugBufferLevel& level)
      : plan_(plan), alignment_(alignment), level_(level) {}

  // Logs a value: a tensor, or each tensor of a tensor list.
  void log_value(int32_t index, int64_t step, bool output) {
    if (index < 0 || static_cast<size_t>(index) >= plan_.values.size()) return;
    const Value& v = plan_.values[static_cast<size_t>(index)];
    if (v.kind == ValueKind::kTensor) {
      write(index, v.tensor.nbytes, step, output);
    } else if (v.kind == ValueKind::kTensorList || v.kind == ValueKind::kOptionalTensorList) {
      for (int32_t item : v.tensor_list) {
        if (item < 0 || static_cast<size_t>(item) >= plan_.values.size()) continue;
        const Value& t = plan_.values[static_cast<size_t>(item)];
        if (t.kind == ValueKind::kTensor) write(item, t.tensor.nbytes, step, output);
      }
    }
  }

 private:
  void write(int32_t value, uint64_t nbytes, int64_t step, bool output) {
    DebugBufferEntry e{step, value, nbytes, 0, output};
    if (nbytes > 0) {
      e.offset = round_up(level_.bytes_needed, alignment_);
      level_.bytes_needed = e.offset + nbytes;
      level_.data_bytes += nbytes;
    } else {
      e.offset = level_.bytes_needed;
    }
    level_.entries.push_back(e);
  }

  const ExecutionPlan& plan_;
  uint64_t alignment_;
  DebugBufferLevel& level_;
};

}  // namespace

uint64_t DebugBufferPlanner::bytes_for(const DebugBufferLevel& level, size_t executions, uint64_t alignment) {
  uint64_t end = 0;
  for (size_t run = 0; run < executions; ++run) {
    for (const DebugBufferEntry& e : level.entries) {
      if (e.nbytes > 0) end = round_up(end, alignment) + e.nbytes;
    }
  }
  return end;
}

DebugBufferPlan DebugBufferPlanner::plan(const ExecutionPlan& plan, uint64_t alignment) {
  DebugBufferPlan result;
  result.alignment = alignment;
  Sink intermediate(plan, alignment, result.intermediate);
  int64_t step = 0;
  for (const Chain& chain : plan.chains) {
    for (const Instruction& in : chain.instructions) {
      if (in.kind == InstructionKind::kKernelCall) {
        for (int32_t out : split_kernel_args(plan, in).outputs) intermediate.log_value(out, step, false);
      } else if (in.kind == InstructionKind::kDelegateCall) {
        for (int32_t a : in.args) intermediate.log_value(a, step, false);
      }
      ++step;
    }
  }
  Sink outputs_only(plan, alignment, result.program_outputs);
  for (int32_t out : plan.outputs) {
    intermediate.log_value(out, step, true);
    outputs_only.log_value(out, step, true);
  }
  return result;
}

bool DebugBufferPlanner::runner_bytes_exact(const ExecutionPlan& plan, DebugLevel level) {
  if (level != DebugLevel::kIntermediateOutputs) return true;
  for (const Chain& chain : plan.chains) {
    for (const Instruction& in : chain.instructions) {
      if (in.kind == InstructionKind::kDelegateCall) return false;
    }
  }
  return true;
}

uint64_t DebugBufferPlanner::runner_bytes(const ExecutionPlan& plan, DebugLevel level, size_t executions, std::span<const uint64_t> inside_delegates,
                                          uint64_t alignment) {
  if (level == DebugLevel::kNone || executions == 0) return 0;
  const DebugBufferPlan one = DebugBufferPlanner::plan(plan, alignment);
  DebugBufferLevel logged;
  if (level == DebugLevel::kIntermediateOutputs) {
    Sink inputs(plan, alignment, logged);
    for (int32_t in : plan.inputs) inputs.log_value(in, -1, false);
    const DebugBufferLevel& rest = one.intermediate;
    logged.entries.insert(logged.entries.end(), rest.entries.begin(), rest.entries.end());
    // Each value starts on a boundary, so the total is the same in whatever order the delegate
    // values come between the plan's.
    for (uint64_t bytes : inside_delegates) {
      DebugBufferEntry e;
      e.nbytes = bytes;
      logged.entries.push_back(e);
    }
  } else {
    logged = one.program_outputs;
  }
  return bytes_for(logged, executions, alignment) + alignment - 1;
}

}  // namespace etscope::inspect
