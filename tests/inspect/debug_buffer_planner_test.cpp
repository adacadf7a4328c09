// DebugBufferPlanner: the ETDump debug-buffer bytes one execution needs, worked out by hand.
#include <catch2/catch.hpp>

#include "crafted_programs.h"
#include "etscope/inspect/debug_buffer_planner.h"

using namespace etscope;
using namespace etscope::inspect;
using etscope::testing::crafted_kernel;
using etscope::testing::crafted_tensor;

TEST_CASE("debug buffer: every kernel output, delegate argument and output, 64-byte aligned",
          "[inspect][debug_buffer]") {
  ExecutionPlan plan;
  plan.name = "forward";
  plan.values = {
      crafted_tensor({3}, Allocation{1, 0}),                     // 0 x   12 B
      crafted_tensor({5}, Allocation{1, 16}),                    // 1 y   20 B
      crafted_tensor({0}, Allocation{1, 48}),                    // 2 z    0 B
      crafted_tensor({2}, Allocation{1, 48}),                    // 3 a    8 B
      crafted_tensor({3}, Allocation{1, 64}, ScalarType::kLong), // 4 b   24 B
  };
  Value list;
  list.kind = ValueKind::kTensorList;
  list.tensor_list = {3, 4};
  plan.values.push_back(list);  // 5 [a, b]
  Value one;
  one.kind = ValueKind::kInt;
  one.int_value = 1;
  plan.values.push_back(one);   // 6
  plan.inputs = {0};
  plan.outputs = {3, 4};
  plan.operators = {{"aten::relu", "out"}, {"aten::max_pool2d_with_indices", "out"}};
  Instruction delegate;
  delegate.kind = InstructionKind::kDelegateCall;
  delegate.delegate_index = 0;
  delegate.args = {1, 2};
  Chain chain;
  chain.instructions = {crafted_kernel(0, {0, 1, 1}), crafted_kernel(1, {1, 6, 3, 4, 5}), delegate};
  plan.chains = {chain};
  Delegate d;
  d.id = "TestBackend";
  d.inline_data = true;
  plan.delegates = {d};
  plan.non_const_buffer_sizes = {0, 96};
  ProgramSpec spec;
  spec.plans = {plan};
  spec.delegate_blobs = {std::vector<uint8_t>(4, 1)};
  auto bytes = PteWriter::write(spec);
  REQUIRE(bytes.ok());
  auto program = PteReader::read(etscope::testing::blob_of(*bytes, "debug.pte"));
  REQUIRE(program.ok());

  DebugBufferPlan p = DebugBufferPlanner::plan(program->plans.at(0));
  // y at 0 (ends 20); a at 64 (72); b at 128 (152); the delegate's y at 192 (212) and empty z
  // takes nothing; outputs a at 256 (264), b at 320 (344).
  const auto& e = p.intermediate.entries;
  REQUIRE(e.size() == 7);
  CHECK(e[0].value == 1);
  CHECK(e[0].offset == 0);
  CHECK(e[1].value == 3);
  CHECK(e[1].offset == 64);
  CHECK(e[2].value == 4);
  CHECK(e[2].offset == 128);
  CHECK(e[3].value == 1);
  CHECK(e[3].step == 2);
  CHECK(e[3].offset == 192);
  CHECK(e[4].value == 2);
  CHECK(e[4].nbytes == 0);
  CHECK(e[5].output);
  CHECK(e[5].offset == 256);
  CHECK(e[6].offset == 320);
  CHECK(p.intermediate.bytes_needed == 344);
  CHECK(p.intermediate.data_bytes == 20 + 8 + 24 + 20 + 0 + 8 + 24);
  // Program outputs only: a at 0 (8), b at 64 (88).
  CHECK(p.program_outputs.entries.size() == 2);
  CHECK(p.program_outputs.bytes_needed == 88);
}

TEST_CASE("debug buffer for real programs", "[inspect][debug_buffer]") {
  auto program = PteReader::open(etscope::testing::real_artifact("maxpool2d.pte"));
  REQUIRE(program.ok());
  DebugBufferPlan p = DebugBufferPlanner::plan(program->plans.at(0));
  // Values 802816 B at 0, indices 1605632 B at 802816, output values again at 2408448: all
  // sizes are multiples of 64.
  CHECK(p.intermediate.entries.size() == 3);
  CHECK(p.intermediate.bytes_needed == 802816 + 1605632 + 802816);
  CHECK(p.program_outputs.bytes_needed == 802816);

  auto add = PteReader::open(etscope::testing::real_artifact("add.pte"));
  REQUIRE(add.ok());
  DebugBufferPlan q = DebugBufferPlanner::plan(add->plans.at(0));
  CHECK(q.intermediate.bytes_needed == 64 + 4);
  CHECK(q.program_outputs.bytes_needed == 4);
}
