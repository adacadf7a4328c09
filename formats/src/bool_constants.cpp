#include "etscope/formats/bool_constants.h"

#include <algorithm>
#include <cstdio>

#include "etscope/core/text.h"

namespace etscope {
namespace {

bool holds(const ExecutionPlan& plan, int32_t arg, int32_t value) {
  if (arg == value) return true;
  if (arg < 0 || static_cast<size_t>(arg) >= plan.values.size()) return false;
  const Value& v = plan.values[static_cast<size_t>(arg)];
  if (v.kind != ValueKind::kTensorList && v.kind != ValueKind::kOptionalTensorList) return false;
  return std::find(v.tensor_list.begin(), v.tensor_list.end(), value) != v.tensor_list.end();
}

std::string call_name(const ExecutionPlan& plan, const Instruction& in) {
  if (in.kind == InstructionKind::kKernelCall) {
    if (in.op_index >= 0 && static_cast<size_t>(in.op_index) < plan.operators.size()) {
      return plan.operators[static_cast<size_t>(in.op_index)].qualified_name();
    }
    return "kernel ?";
  }
  if (in.delegate_index >= 0 && static_cast<size_t>(in.delegate_index) < plan.delegates.size()) {
    return "delegate " + plan.delegates[static_cast<size_t>(in.delegate_index)].id;
  }
  return "delegate ?";
}

std::vector<std::string> readers_of(const ExecutionPlan& plan, int32_t value) {
  std::vector<std::string> out;
  size_t step = 0;
  for (const Chain& chain : plan.chains) {
    for (const Instruction& in : chain.instructions) {
      const bool call = in.kind == InstructionKind::kKernelCall || in.kind == InstructionKind::kDelegateCall;
      if (call && std::any_of(in.args.begin(), in.args.end(), [&](int32_t a) { return holds(plan, a, value); })) {
        out.push_back("instruction " + std::to_string(step) + " " + call_name(plan, in));
      }
      if (in.kind == InstructionKind::kJumpFalse && in.cond_value == value) {
        out.push_back("instruction " + std::to_string(step) + " jump_false");
      }
      ++step;
    }
  }
  return out;
}

}  // namespace

std::vector<NonBinaryBool> non_binary_bool_tensors(const Program& program) {
  std::vector<NonBinaryBool> out;
  for (const ExecutionPlan& plan : program.plans) {
    for (size_t i = 0; i < plan.values.size(); ++i) {
      const Value& v = plan.values[i];
      if (v.kind != ValueKind::kTensor || v.tensor.dtype != ScalarType::kBool || v.tensor.external) continue;
      const TensorInfo& t = v.tensor;
      if (t.data_kind != TensorDataKind::kConstant && t.data_kind != TensorDataKind::kPlannedWithInit) continue;
      const std::span<const uint8_t> bytes = program.bytes(t.data);
      const size_t n = std::min<size_t>(bytes.size(), static_cast<size_t>(t.nbytes));
      NonBinaryBool b;
      for (size_t k = 0; k < n; ++k) {
        if (is_binary_bool_byte(bytes[k])) continue;
        if (b.bad_bytes == 0) {
          b.first_bad = k;
          b.first_bad_byte = bytes[k];
        }
        ++b.bad_bytes;
      }
      if (b.bad_bytes == 0) continue;
      b.plan = plan.name;
      b.value = static_cast<int32_t>(i);
      b.data_kind = t.data_kind;
      b.readers = readers_of(plan, b.value);
      char first[8];
      std::snprintf(first, sizeof first, "0x%02x", static_cast<unsigned>(b.first_bad_byte));
      std::string readers;
      for (const std::string& r : b.readers) readers += (readers.empty() ? "" : ", ") + r;
      b.message = "method '" + plan.name + "' value " + std::to_string(i) + " (" + shape_text(t.dtype, t.sizes) +
                  (t.data_kind == TensorDataKind::kConstant ? " constant" : " initial value") +
                  (t.fqn.empty() ? std::string() : " '" + t.fqn + "'") + "): " + std::to_string(b.bad_bytes) + " of " +
                  std::to_string(n) + " bytes are neither 0 nor 1 (element " + std::to_string(b.first_bad) + " is " +
                  first + "); the export looks broken; read as ExecuTorch's kernels read them, non-zero as true; " +
                  (readers.empty() ? std::string("no instruction reads it") : "read by " + readers);
      out.push_back(std::move(b));
    }
  }
  return out;
}

}  // namespace etscope
