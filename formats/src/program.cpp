#include "etscope/formats/program.h"

namespace etscope {

const char* to_string(TensorDataKind kind) {
  switch (kind) {
    case TensorDataKind::kConstant: return "constant";
    case TensorDataKind::kExternalConstant: return "external";
    case TensorDataKind::kExternalMutable: return "external+planned";
    case TensorDataKind::kPlannedWithInit: return "planned+init";
    case TensorDataKind::kPlanned: return "planned";
    case TensorDataKind::kRuntimeSupplied: return "unplanned";
  }
  return "?";
}

const char* to_string(ValueKind kind) {
  switch (kind) {
    case ValueKind::kNone: return "None";
    case ValueKind::kInt: return "Int";
    case ValueKind::kBool: return "Bool";
    case ValueKind::kDouble: return "Double";
    case ValueKind::kTensor: return "Tensor";
    case ValueKind::kString: return "String";
    case ValueKind::kIntList: return "IntList";
    case ValueKind::kDoubleList: return "DoubleList";
    case ValueKind::kBoolList: return "BoolList";
    case ValueKind::kTensorList: return "TensorList";
    case ValueKind::kOptionalTensorList: return "OptionalTensorList";
  }
  return "?";
}

const char* to_string(InstructionKind kind) {
  switch (kind) {
    case InstructionKind::kKernelCall: return "KernelCall";
    case InstructionKind::kDelegateCall: return "DelegateCall";
    case InstructionKind::kMoveCall: return "MoveCall";
    case InstructionKind::kJumpFalse: return "JumpFalseCall";
    case InstructionKind::kFree: return "FreeCall";
  }
  return "?";
}

const char* to_string(ConstantStorage storage) {
  switch (storage) {
    case ConstantStorage::kNone: return "none";
    case ConstantStorage::kSegment: return "constant_segment";
    case ConstantStorage::kInlineBuffer: return "constant_buffer";
  }
  return "?";
}

size_t ExecutionPlan::instruction_count() const {
  size_t n = 0;
  for (const Chain& chain : chains) n += chain.instructions.size();
  return n;
}

const ExecutionPlan* Program::find_plan(const std::string& name) const {
  for (const ExecutionPlan& plan : plans) {
    if (plan.name == name) return &plan;
  }
  return nullptr;
}

}  // namespace etscope
