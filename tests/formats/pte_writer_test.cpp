// PteWriter + PteReader round trips over the features no real sample exercises: named data,
// inline and segment delegates, mutable-data initial values, stack traces, 24-byte headers,
// and deliberately broken allocation info.
#include <catch2/catch.hpp>
#include <cstring>

#include "etscope/formats/pte_reader.h"
#include "etscope/formats/pte_writer.h"
#include "testing/test_util.h"

using namespace etscope;

namespace {

Value tensor_value(std::vector<int32_t> sizes, std::optional<Allocation> alloc, uint32_t data_idx = 0) {
  Value v;
  v.kind = ValueKind::kTensor;
  v.tensor.dtype = ScalarType::kFloat;
  v.tensor.sizes = std::move(sizes);
  for (size_t i = 0; i < v.tensor.sizes.size(); ++i) v.tensor.dim_order.push_back(static_cast<uint8_t>(i));
  v.tensor.allocation = alloc;
  v.tensor.data_buffer_idx = data_idx;
  return v;
}

std::vector<uint8_t> floats(std::initializer_list<float> values) {
  std::vector<uint8_t> out(values.size() * 4);
  std::memcpy(out.data(), values.begin(), out.size());
  return out;
}

// forward(x) = x * c + state, with c a constant, state a planned tensor with an initial value,
// plus a delegate call and a stack trace per instruction.
ProgramSpec sample_spec(bool inline_delegate) {
  ProgramSpec spec;
  ExecutionPlan plan;
  plan.name = "forward";
  plan.values.push_back(tensor_value({2}, Allocation{1, 0}));        // 0 x
  plan.values.push_back(tensor_value({2}, std::nullopt, 1));         // 1 constant c
  plan.values.push_back(tensor_value({2}, Allocation{1, 16}, 1));    // 2 state (initial value)
  plan.values.push_back(tensor_value({2}, Allocation{1, 32}));       // 3 out
  Value alpha;
  alpha.kind = ValueKind::kInt;
  alpha.int_value = 1;
  plan.values.push_back(alpha);                                      // 4
  plan.inputs = {0};
  plan.outputs = {3};
  plan.operators = {{"aten::mul", "out"}, {"aten::add", "out"}};
  Instruction mul;
  mul.op_index = 0;
  mul.args = {0, 1, 3, 3};
  Instruction add;
  add.op_index = 1;
  add.args = {3, 2, 4, 3, 3};
  Instruction call;
  call.kind = InstructionKind::kDelegateCall;
  call.delegate_index = 0;
  call.args = {3, 3};
  Chain chain;
  chain.instructions = {mul, add, call};
  chain.stacktrace = {{{"model.py", 10, "forward", "x * c"}}, {{"model.py", 11, "forward", "+ state"}}, {}};
  plan.chains = {chain};
  Delegate d;
  d.id = "TestBackend";
  d.inline_data = inline_delegate;
  d.index = 0;
  d.compile_specs = {{"level", {1, 2, 3}}};
  plan.delegates = {d};
  plan.non_const_buffer_sizes = {0, 48};
  spec.plans = {plan};
  spec.constants = {floats({2.0f, 3.0f})};
  spec.mutable_data = {floats({10.0f, 20.0f})};
  spec.delegate_blobs = {std::vector<uint8_t>(100, 0xab)};
  spec.named_data = {{"lut", std::vector<uint8_t>(7, 0x5a)}};
  return spec;
}

Program round_trip(const ProgramSpec& spec, const PteWriterOptions& options = {}) {
  auto bytes = PteWriter::write(spec, options);
  REQUIRE(bytes.ok());
  auto p = PteReader::read(etscope::testing::blob_of(*bytes, "written.pte"));
  if (!p.ok()) FAIL(p.error().message());
  return std::move(p).value();
}

}  // namespace

TEST_CASE("written programs read back with every data source resolved", "[pte][writer]") {
  Program p = round_trip(sample_spec(false));
  CHECK(p.problems.empty());
  REQUIRE(p.header);
  CHECK(p.header->length == 32);
  CHECK(p.header->segment_base_offset % 128 == 0);
  // Segments: constants, mutable data, delegate blob, named data, each 128-aligned.
  REQUIRE(p.segments.size() == 4);
  for (const auto& s : p.segments_relative) CHECK(s.offset % 128 == 0);
  const ExecutionPlan& plan = p.plans.at(0);
  const TensorInfo& c = plan.values[1].tensor;
  CHECK(c.data_kind == TensorDataKind::kConstant);
  float cv[2];
  std::memcpy(cv, p.bytes(c.data).data(), 8);
  CHECK(cv[0] == 2.0f);
  CHECK(cv[1] == 3.0f);
  const TensorInfo& state = plan.values[2].tensor;
  CHECK(state.data_kind == TensorDataKind::kPlannedWithInit);
  float sv[2];
  std::memcpy(sv, p.bytes(state.data).data(), 8);
  CHECK(sv[0] == 10.0f);
  CHECK(sv[1] == 20.0f);
  REQUIRE(plan.delegates.size() == 1);
  CHECK_FALSE(plan.delegates[0].inline_data);
  CHECK(plan.delegates[0].data.size == 100);
  CHECK(p.bytes(plan.delegates[0].data)[99] == 0xab);
  CHECK(plan.delegates[0].compile_specs.at(0).key == "level");
  REQUIRE(p.named_data.size() == 1);
  CHECK(p.named_data[0].key == "lut");
  CHECK(p.segments[p.named_data[0].segment_index].size == 7);
  REQUIRE(plan.chains[0].stacktrace.size() == 3);
  CHECK(plan.chains[0].stacktrace[1].at(0).context == "+ state");
}

TEST_CASE("inline delegate data and a 24-byte header", "[pte][writer]") {
  PteWriterOptions options;
  options.header_length = 24;
  Program p = round_trip(sample_spec(true), options);
  REQUIRE(p.header);
  CHECK(p.header->length == 24);
  CHECK(p.header->segment_data_size == 0);
  const Delegate& d = p.plans.at(0).delegates.at(0);
  CHECK(d.inline_data);
  CHECK(d.data.size == 100);
  CHECK(d.data.offset % 16 == 0);
  CHECK(p.bytes(d.data)[0] == 0xab);
}

TEST_CASE("legacy constant_buffer layout round trips", "[pte][writer]") {
  ProgramSpec spec = sample_spec(true);
  spec.mutable_data.clear();
  spec.plans[0].values[2].tensor.data_buffer_idx = 0;
  spec.named_data.clear();
  PteWriterOptions options;
  options.legacy_constant_buffer = true;
  Program p = round_trip(spec, options);
  CHECK_FALSE(p.header);  // No segment data: no extended header.
  CHECK(p.constant_storage == ConstantStorage::kInlineBuffer);
  const TensorInfo& c = p.plans.at(0).values[1].tensor;
  CHECK(c.data.offset % 16 == 0);
  float cv[2];
  std::memcpy(cv, p.bytes(c.data).data(), 8);
  CHECK(cv[1] == 3.0f);
}

TEST_CASE("bad allocation info is reported as a problem naming the value", "[pte][writer][errors]") {
  ProgramSpec spec = sample_spec(false);
  spec.plans[0].values[0].tensor.allocation = Allocation{0, 0};
  spec.plans[0].values[3].tensor.allocation = Allocation{1, 44};
  Program p = round_trip(spec);
  REQUIRE(p.problems.size() == 2);
  CHECK(p.problems[0] == "plan 'forward' value 0: memory_id 0 is not a valid arena id (the plan has arenas 1..1)");
  CHECK(p.problems[1] == "plan 'forward' value 3: planned bytes [44, +8) extend beyond arena 1 (48 bytes)");
}

TEST_CASE("out-of-range indices are rejected with the plan and instruction", "[pte][writer][errors]") {
  ProgramSpec spec = sample_spec(false);
  spec.plans[0].chains[0].instructions[1].args[1] = 99;
  auto bytes = PteWriter::write(spec);
  REQUIRE(bytes.ok());
  auto r = PteReader::read(etscope::testing::blob_of(*bytes, "bad.pte"));
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().code() == ErrorCode::kCorrupt);
  CHECK(r.error().message() ==
        "bad.pte: plan 'forward': chain 0 instruction 1 argument 1 refers to value 99, but the plan has 5 values");

  spec = sample_spec(false);
  spec.plans[0].chains[0].instructions[0].op_index = 7;
  bytes = PteWriter::write(spec);
  r = PteReader::read(etscope::testing::blob_of(*bytes, "bad.pte"));
  REQUIRE_FALSE(r.ok());
  CHECK_THAT(r.error().message(), Catch::Contains("operator index 7 is out of range (2 operators)"));

  spec = sample_spec(false);
  spec.plans[0].values[1].tensor.data_buffer_idx = 5;
  bytes = PteWriter::write(spec);
  r = PteReader::read(etscope::testing::blob_of(*bytes, "bad.pte"));
  REQUIRE_FALSE(r.ok());
  CHECK_THAT(r.error().message(), Catch::Contains("constant index 5 is out of range"));

  spec = sample_spec(false);
  spec.plans[0].values[1].tensor.sizes = {-2};
  bytes = PteWriter::write(spec);
  r = PteReader::read(etscope::testing::blob_of(*bytes, "bad.pte"));
  REQUIRE_FALSE(r.ok());
  CHECK_THAT(r.error().message(), Catch::Contains("negative size"));

  spec = sample_spec(false);
  spec.plans[0].values[1].tensor.sizes = {1 << 30, 1 << 30, 1 << 30};
  spec.plans[0].values[1].tensor.dim_order = {0, 1, 2};
  bytes = PteWriter::write(spec);
  r = PteReader::read(etscope::testing::blob_of(*bytes, "bad.pte"));
  REQUIRE_FALSE(r.ok());
  CHECK_THAT(r.error().message(), Catch::Contains("overflow"));
}
