// Small programs built with PteWriter for the memory tests: one arena, float tensors, kernel
// calls in the out-variant convention (inputs, out, then the out once more as return value).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "etscope/formats/pte_reader.h"
#include "etscope/formats/pte_writer.h"
#include "testing/test_util.h"

namespace etscope::testing {

inline Value crafted_tensor(std::vector<int32_t> sizes, std::optional<Allocation> alloc,
                            ScalarType dtype = ScalarType::kFloat) {
  Value v;
  v.kind = ValueKind::kTensor;
  v.tensor.dtype = dtype;
  v.tensor.sizes = std::move(sizes);
  for (size_t i = 0; i < v.tensor.sizes.size(); ++i) v.tensor.dim_order.push_back(static_cast<uint8_t>(i));
  v.tensor.allocation = alloc;
  return v;
}

inline Instruction crafted_kernel(int32_t op, std::vector<int32_t> args) {
  Instruction in;
  in.kind = InstructionKind::kKernelCall;
  in.op_index = op;
  in.args = std::move(args);
  return in;
}

/// forward(x) = mul(relu(x), x): x f32[4] at `x_at`, y = relu(x) at `y_at`, z = y * x at `z_at`,
/// all in one arena of `arena` bytes. Steps: 0 relu, 1 mul. Lifetimes: x -1..1, y 0..1, z 1..2.
inline ExecutionPlan chain_plan(Allocation x_at, Allocation y_at, Allocation z_at, int64_t arena = 48) {
  ExecutionPlan plan;
  plan.name = "forward";
  plan.values = {crafted_tensor({4}, x_at), crafted_tensor({4}, y_at), crafted_tensor({4}, z_at)};
  plan.inputs = {0};
  plan.outputs = {2};
  plan.operators = {{"aten::relu", "out"}, {"aten::mul", "out"}};
  Chain chain;
  chain.instructions = {crafted_kernel(0, {0, 1, 1}), crafted_kernel(1, {1, 0, 2, 2})};
  plan.chains = {chain};
  plan.non_const_buffer_sizes = {0, arena};
  return plan;
}

/// forward(x, y) = where(mask, x, y) with `mask` a bool[4] constant holding `mask_bytes` (issue
/// 28: ExecuTorch's LLM exporter writes masks whose bytes are neither 0 nor 1). Values: 0 mask,
/// 1 x, 2 y, 3 out (f32[4], planned in one 48-byte arena). Step 0 is aten::where.self_out.
inline std::vector<uint8_t> bool_mask_program_bytes(std::vector<uint8_t> mask_bytes) {
  ExecutionPlan plan;
  plan.name = "forward";
  Value mask = crafted_tensor({4}, std::nullopt, ScalarType::kBool);
  mask.tensor.data_buffer_idx = 1;
  plan.values = {mask, crafted_tensor({4}, Allocation{1, 0}), crafted_tensor({4}, Allocation{1, 16}),
                 crafted_tensor({4}, Allocation{1, 32})};
  plan.inputs = {1, 2};
  plan.outputs = {3};
  plan.operators = {{"aten::where", "self_out"}};
  Chain chain;
  chain.instructions = {crafted_kernel(0, {0, 1, 2, 3, 3})};
  plan.chains = {chain};
  plan.non_const_buffer_sizes = {0, 48};
  ProgramSpec spec;
  spec.plans = {plan};
  spec.constants = {std::move(mask_bytes)};
  auto bytes = PteWriter::write(spec);
  REQUIRE(bytes.ok());
  return std::move(bytes).value();
}

/// Serializes `plan` as the only method of a program.
inline std::vector<uint8_t> crafted_bytes(const ExecutionPlan& plan) {
  ProgramSpec spec;
  spec.plans = {plan};
  auto bytes = PteWriter::write(spec);
  REQUIRE(bytes.ok());
  return std::move(bytes).value();
}

/// Serializes and reads back `plan`, so the Program carries the reader's derived fields.
inline Program crafted_program(const ExecutionPlan& plan, const std::string& name = "crafted.pte") {
  auto p = PteReader::read(blob_of(crafted_bytes(plan), name));
  if (!p.ok()) FAIL(p.error().message());
  return std::move(p).value();
}

}  // namespace etscope::testing
