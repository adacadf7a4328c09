#include "etscope/inspect/lifetime.h"

#include "etscope/formats/op_signatures.h"

namespace etscope::inspect {
namespace {

bool valid_index(const ExecutionPlan& plan, int64_t index) {
  return index >= 0 && static_cast<size_t>(index) < plan.values.size();
}

// Marks `index` used at `step`, and the items of a tensor list too: the kernel reads or writes
// the list's tensors, so they must be live whenever the list is.
void use(const ExecutionPlan& plan, int64_t index, int64_t step, ValueTimeline& t) {
  if (!valid_index(plan, index)) return;
  t.lifetimes[static_cast<size_t>(index)].extend(step);
  const Value& v = plan.values[static_cast<size_t>(index)];
  if (v.kind == ValueKind::kTensorList || v.kind == ValueKind::kOptionalTensorList) {
    for (int32_t item : v.tensor_list) {
      if (valid_index(plan, item)) t.lifetimes[static_cast<size_t>(item)].extend(step);
    }
  }
}

void mark_producer(const ExecutionPlan& plan, int64_t index, int64_t step, ValueTimeline& t) {
  if (!valid_index(plan, index)) return;
  auto mark = [&](int64_t i) {
    if (valid_index(plan, i) && t.producer[static_cast<size_t>(i)] < 0) t.producer[static_cast<size_t>(i)] = step;
  };
  mark(index);
  const Value& v = plan.values[static_cast<size_t>(index)];
  if (v.kind == ValueKind::kTensorList || v.kind == ValueKind::kOptionalTensorList) {
    for (int32_t item : v.tensor_list) mark(item);
  }
}

std::string label_of(const ExecutionPlan& plan, const Instruction& in) {
  switch (in.kind) {
    case InstructionKind::kKernelCall:
      if (in.op_index >= 0 && static_cast<size_t>(in.op_index) < plan.operators.size()) {
        return plan.operators[static_cast<size_t>(in.op_index)].qualified_name();
      }
      return "kernel ?";
    case InstructionKind::kDelegateCall:
      if (in.delegate_index >= 0 && static_cast<size_t>(in.delegate_index) < plan.delegates.size()) {
        return "delegate " + plan.delegates[static_cast<size_t>(in.delegate_index)].id;
      }
      return "delegate ?";
    case InstructionKind::kMoveCall:
      return "move %" + std::to_string(in.move_from) + " -> %" + std::to_string(in.move_to);
    case InstructionKind::kJumpFalse:
      return "jump_false %" + std::to_string(in.cond_value);
    case InstructionKind::kFree:
      return "free %" + std::to_string(in.free_value);
  }
  return "?";
}

}  // namespace

ValueTimeline build_value_timeline(const ExecutionPlan& plan) {
  ValueTimeline t;
  t.lifetimes.assign(plan.values.size(), Lifetime{});
  t.producer.assign(plan.values.size(), -1);
  for (const Chain& chain : plan.chains) {
    for (const Instruction& in : chain.instructions) t.instructions.push_back(&in);
  }
  t.instruction_count = static_cast<int64_t>(t.instructions.size());

  for (int64_t step = 0; step < t.instruction_count; ++step) {
    const Instruction& in = *t.instructions[static_cast<size_t>(step)];
    t.labels.push_back(label_of(plan, in));
    switch (in.kind) {
      case InstructionKind::kKernelCall: {
        for (int32_t a : in.args) use(plan, a, step, t);
        for (int32_t out : split_kernel_args(plan, in).outputs) mark_producer(plan, out, step, t);
        break;
      }
      case InstructionKind::kDelegateCall:
        for (int32_t a : in.args) use(plan, a, step, t);
        // A delegate's outputs are not marked in the file; the first delegate call touching a
        // value is the best producer we can name.
        for (int32_t a : in.args) mark_producer(plan, a, step, t);
        break;
      case InstructionKind::kMoveCall:
        use(plan, in.move_from, step, t);
        use(plan, in.move_to, step, t);
        break;
      case InstructionKind::kJumpFalse:
        use(plan, in.cond_value, step, t);
        break;
      case InstructionKind::kFree:
        use(plan, in.free_value, step, t);
        break;
    }
  }

  // Placeholders start at the beginning; outputs survive the last instruction.
  auto start_at_beginning = [&](int64_t index) {
    if (valid_index(plan, index)) t.lifetimes[static_cast<size_t>(index)].extend(-1);
  };
  for (int32_t in : plan.inputs) start_at_beginning(in);
  for (size_t i = 0; i < plan.values.size(); ++i) {
    const Value& v = plan.values[i];
    if (v.kind != ValueKind::kTensor) continue;
    if (v.tensor.data_kind == TensorDataKind::kPlannedWithInit ||
        v.tensor.data_kind == TensorDataKind::kExternalMutable) {
      start_at_beginning(static_cast<int64_t>(i));
    }
  }
  for (int32_t out : plan.outputs) {
    if (valid_index(plan, out)) t.lifetimes[static_cast<size_t>(out)].extend(t.instruction_count);
  }
  return t;
}

}  // namespace etscope::inspect
