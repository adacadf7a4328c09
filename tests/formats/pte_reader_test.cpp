// PteReader against every real .pte ExecuTorch wrote (tests/data/real, see its MANIFEST), with
// expectations taken from `flatc --json --raw-binary` decodes of each file using
// formats/schemas/program.fbs, cross-checked against shared/spec/formats.md §8.
#include <catch2/catch.hpp>
#include <cstring>

#include "etscope/formats/op_signatures.h"
#include "etscope/formats/pte_reader.h"
#include "etscope/formats/training.h"
#include "testing/test_util.h"

using namespace etscope;
using etscope::testing::load;
using etscope::testing::real_artifact;

namespace {

Program read_ok(const std::string& name) {
  auto r = PteReader::read(load(real_artifact(name)));
  if (!r.ok()) FAIL(r.error().message());
  return std::move(r).value();
}

const TensorInfo& tensor(const ExecutionPlan& plan, size_t index) {
  REQUIRE(plan.values.at(index).kind == ValueKind::kTensor);
  return plan.values[index].tensor;
}

}  // namespace

TEST_CASE("add.pte: flat program without header / one add kernel / three planned tensors", "[pte][real]") {
  Program p = read_ok("add.pte");
  CHECK(p.file_size == 728);
  CHECK(p.file_identifier == "ET12");
  CHECK_FALSE(p.header.has_value());
  CHECK(p.root_offset == 0x1c);
  CHECK(p.problems.empty());
  REQUIRE(p.segments.size() == 1);
  CHECK(p.segments[0].size == 0);
  CHECK(p.constant_offsets == std::vector<uint64_t>{0});
  CHECK(p.constant_storage == ConstantStorage::kNone);
  REQUIRE(p.plans.size() == 1);
  const ExecutionPlan& plan = p.plans[0];
  CHECK(plan.name == "forward");
  CHECK(plan.values.size() == 4);
  CHECK(plan.inputs == std::vector<int32_t>{0, 1});
  CHECK(plan.outputs == std::vector<int32_t>{2});
  CHECK(plan.non_const_buffer_sizes == std::vector<int64_t>{0, 48});
  REQUIRE(plan.operators.size() == 1);
  CHECK(plan.operators[0].qualified_name() == "aten::add.out");
  REQUIRE(plan.chains.size() == 1);
  REQUIRE(plan.chains[0].instructions.size() == 1);
  const Instruction& in = plan.chains[0].instructions[0];
  CHECK(in.kind == InstructionKind::kKernelCall);
  CHECK(in.args == std::vector<int32_t>{0, 1, 3, 2, 2});
  CHECK(plan.values[3].kind == ValueKind::kInt);
  CHECK(plan.values[3].int_value == 1);
  const uint64_t offsets[] = {0, 16, 32};
  for (size_t i = 0; i < 3; ++i) {
    const TensorInfo& t = tensor(plan, i);
    CHECK(t.dtype == ScalarType::kFloat);
    CHECK(t.sizes == std::vector<int32_t>{1});
    CHECK(t.nbytes == 4);
    CHECK(t.data_kind == TensorDataKind::kPlanned);
    REQUIRE(t.allocation);
    CHECK(t.allocation->memory_id == 1);
    CHECK(t.allocation->offset == offsets[i]);
  }
  CHECK(plan.encoded_inputs == "T2#2#0(T2#1#1($,$),D0())");
}

TEST_CASE("add_v2.pte: other exporter version / JSON treespec container strings", "[pte][real]") {
  Program p = read_ok("add_v2.pte");
  CHECK(p.file_size == 1072);
  const ExecutionPlan& plan = p.plans.at(0);
  CHECK(tensor(plan, 0).allocation->offset == 32);
  CHECK(tensor(plan, 1).allocation->offset == 16);
  CHECK(tensor(plan, 2).allocation->offset == 0);
  CHECK(plan.encoded_inputs.rfind("[1, ", 0) == 0);
}

TEST_CASE("linear_constant_buffer.pte: legacy inline constants hold 3.0 and 2.0", "[pte][real]") {
  Program p = read_ok("linear_constant_buffer.pte");
  CHECK(p.root_offset == 0x24);
  CHECK(p.segments.empty());
  CHECK(p.constant_storage == ConstantStorage::kInlineBuffer);
  REQUIRE(p.constant_buffers.size() == 3);
  CHECK(p.constant_buffers[0].size == 0);
  CHECK(p.constant_buffers[1].size == 16);
  CHECK(p.constant_buffers[2].size == 16);
  const ExecutionPlan& plan = p.plans.at(0);
  CHECK(plan.non_const_buffer_sizes == std::vector<int64_t>{0, 32});
  REQUIRE(plan.operators.size() == 2);
  CHECK(plan.operators[0].qualified_name() == "aten::mul.out");
  CHECK(plan.operators[1].qualified_name() == "aten::add.out");
  // The two constants sit at file offsets 144 and 112 (16-aligned) and hold 3.0f and 2.0f.
  const TensorInfo& c0 = tensor(plan, 0);
  const TensorInfo& c1 = tensor(plan, 1);
  CHECK(c0.data_kind == TensorDataKind::kConstant);
  CHECK(c0.data.offset == 144);
  CHECK(c1.data.offset == 112);
  float v0[4], v1[4];
  std::memcpy(v0, p.bytes(c0.data).data(), 16);
  std::memcpy(v1, p.bytes(c1.data).data(), 16);
  for (int i = 0; i < 4; ++i) {
    CHECK(v0[i] == 3.0f);
    CHECK(v1[i] == 2.0f);
  }
}

TEST_CASE("maxpool2d.pte: IntList items are value indices and a tuple return splits into two outputs", "[pte][real]") {
  Program p = read_ok("maxpool2d.pte");
  const ExecutionPlan& plan = p.plans.at(0);
  CHECK(plan.values.size() == 17);
  CHECK(plan.non_const_buffer_sizes == std::vector<int64_t>{0, 5619712});
  CHECK(plan.values[5].kind == ValueKind::kIntList);
  CHECK(plan.values[5].int_list == std::vector<int64_t>{3, 4});
  CHECK(plan.values[3].int_value == 3);
  CHECK(plan.values[16].kind == ValueKind::kTensorList);
  CHECK(plan.values[16].tensor_list == std::vector<int32_t>{1, 2});
  const Instruction& in = plan.chains.at(0).instructions.at(0);
  CHECK(in.args == std::vector<int32_t>{0, 5, 8, 11, 14, 15, 1, 2, 16});
  KernelArgs split = split_kernel_args(plan, in);
  CHECK(split.inputs == std::vector<int32_t>{0, 5, 8, 11, 14, 15});
  CHECK(split.outputs == std::vector<int32_t>{1, 2});
  CHECK(split.return_value == 16);
  CHECK(tensor(plan, 2).dtype == ScalarType::kLong);
  CHECK(tensor(plan, 2).allocation->offset == 3211264);
  CHECK(tensor(plan, 1).allocation->offset == 4816896);
}

TEST_CASE("cadence_quantized_conv.pte: custom operators and a 32-byte header with one constant segment", "[pte][real]") {
  Program p = read_ok("cadence_quantized_conv.pte");
  CHECK(p.file_size == 12096);
  REQUIRE(p.header);
  CHECK(p.header->length == 32);
  CHECK(p.header->program_size == 2416);
  CHECK(p.header->segment_base_offset == 2432);
  CHECK(p.header->segment_data_size == 9664);
  REQUIRE(p.segments.size() == 1);
  CHECK(p.segments[0].offset == 2432);
  CHECK(p.segments[0].size == 9664);
  CHECK(p.constant_storage == ConstantStorage::kSegment);
  CHECK(p.constant_offsets == std::vector<uint64_t>{0, 0, 9408});
  const ExecutionPlan& plan = p.plans.at(0);
  CHECK(plan.values.size() == 33);
  std::vector<std::string> ops;
  for (const auto& op : plan.operators) ops.push_back(op.qualified_name());
  CHECK(ops == std::vector<std::string>{"cadence::quantize_per_tensor.out",
                                         "cadence::quantized_conv2d_nchw.per_tensor_out",
                                         "cadence::dequantize_per_tensor.out"});
  const TensorInfo& weight = tensor(plan, 0);
  CHECK(weight.dtype == ScalarType::kChar);
  CHECK(weight.sizes == std::vector<int32_t>{64, 3, 7, 7});
  CHECK(weight.data.offset == 2432);
  CHECK(weight.data.size == 9408);
  const TensorInfo& bias = tensor(plan, 1);
  CHECK(bias.dtype == ScalarType::kInt);
  CHECK(bias.data.offset == 2432 + 9408);
  CHECK(plan.non_const_buffer_sizes == std::vector<int64_t>{0, 4014080});
}

TEST_CASE("linear_external.pte: external constants resolve by fully-qualified name", "[pte][real]") {
  Program p = read_ok("linear_external.pte");
  const ExecutionPlan& plan = p.plans.at(0);
  const TensorInfo& w = tensor(plan, 0);
  const TensorInfo& b = tensor(plan, 1);
  CHECK(w.data_kind == TensorDataKind::kExternalConstant);
  CHECK(w.fqn == "linear.weight");
  CHECK(w.sizes == std::vector<int32_t>{3, 3});
  CHECK(b.data_kind == TensorDataKind::kExternalConstant);
  CHECK(b.fqn == "linear.bias");
  CHECK(plan.operators.at(0).qualified_name() == "aten::permute_copy.out");
  CHECK(plan.operators.at(1).qualified_name() == "aten::addmm.out");
  CHECK(plan.non_const_buffer_sizes == std::vector<int64_t>{0, 144});
}

TEST_CASE("xor_training.pte: 24-byte header / training methods / external planned parameters", "[pte][real]") {
  Program p = read_ok("xor_training.pte");
  CHECK(p.file_size == 13832);
  REQUIRE(p.header);
  CHECK(p.header->length == 24);
  CHECK(p.header->program_size == 13704);
  CHECK(p.header->segment_base_offset == 13824);
  CHECK(p.header->segment_data_size == 0);
  REQUIRE(p.plans.size() == 4);
  const ExecutionPlan* fwd = p.find_plan("forward");
  REQUIRE(fwd);
  CHECK(fwd->values.size() == 155);
  CHECK(fwd->instruction_count() == 66);
  CHECK(fwd->operators.size() == 23);
  CHECK(fwd->outputs == std::vector<int32_t>{61, 65, 151, 148, 124, 121, 0, 1, 2, 3});
  CHECK(fwd->non_const_buffer_sizes == std::vector<int64_t>{0, 624});
  const char* fqns[] = {"net.linear.weight", "net.linear.bias", "net.linear2.weight", "net.linear2.bias"};
  const uint64_t offsets[] = {320, 496, 240, 608};
  for (size_t i = 0; i < 4; ++i) {
    const TensorInfo& t = tensor(*fwd, i);
    CHECK(t.data_kind == TensorDataKind::kExternalMutable);
    CHECK(t.fqn == fqns[i]);
    CHECK(t.requires_grad);
    CHECK(t.allocation->offset == offsets[i]);
  }
  // Value 4: a LONG scalar constant 1 in the constant segment.
  const TensorInfo& one = tensor(*fwd, 4);
  CHECK(one.data_kind == TensorDataKind::kConstant);
  CHECK(one.sizes.empty());
  int64_t v = 0;
  std::memcpy(&v, p.bytes(one.data).data(), 8);
  CHECK(v == 1);
  const ExecutionPlan* grad_index = p.find_plan("__et_training_gradients_index_forward");
  REQUIRE(grad_index);
  CHECK(grad_index->instruction_count() == 0);
  CHECK(grad_index->values.at(0).int_value == 2);
  const ExecutionPlan* param_index = p.find_plan("__et_training_parameters_index_forward");
  REQUIRE(param_index);
  CHECK(param_index->values.at(0).int_value == 6);
  const ExecutionPlan* names = p.find_plan("__et_training_fqn_forward");
  REQUIRE(names);
  REQUIRE(names->values.size() == 4);
  CHECK(names->values[2].string_value == "net.linear2.weight");
}

TEST_CASE("every real program reads with no problems and consistent planned ranges", "[pte][real]") {
  for (const std::string& name : etscope::testing::real_artifacts_with_extension(".pte")) {
    INFO(name);
    Program p = read_ok(name);
    CHECK(p.problems.empty());
    for (const ExecutionPlan& plan : p.plans) {
      for (const Value& v : plan.values) {
        if (v.kind != ValueKind::kTensor || !v.tensor.allocation) continue;
        const Allocation& a = *v.tensor.allocation;
        REQUIRE(a.memory_id >= 1);
        REQUIRE(a.memory_id < plan.non_const_buffer_sizes.size());
        CHECK(a.offset + v.tensor.nbytes <= static_cast<uint64_t>(plan.non_const_buffer_sizes[a.memory_id]));
      }
    }
  }
}

TEST_CASE("wrong kinds of file are named / not misread", "[pte][errors]") {
  auto ptd = PteReader::read(load(real_artifact("xor_training.ptd")));
  REQUIRE_FALSE(ptd.ok());
  CHECK(ptd.error().code() == ErrorCode::kWrongKind);
  CHECK_THAT(ptd.error().message(), Catch::Contains("xor_training.ptd") && Catch::Contains("tensor-data"));
  auto etdp = PteReader::read(load(real_artifact("tutorial.etdp")));
  REQUIRE_FALSE(etdp.ok());
  CHECK_THAT(etdp.error().message(), Catch::Contains("ETDump"));
  auto zip = PteReader::read(load(real_artifact("tutorial_2023.etrecord")));
  REQUIRE_FALSE(zip.ok());
  CHECK_THAT(zip.error().message(), Catch::Contains("zip"));
  auto bpte = PteReader::read(load(real_artifact("bundled_program.bpte")));
  REQUIRE_FALSE(bpte.ok());
  CHECK_THAT(bpte.error().message(), Catch::Contains("bundled program"));
}

TEST_CASE("empty / tiny and unknown files give one-line errors", "[pte][errors]") {
  auto empty = PteReader::read(etscope::testing::blob_of({}, "empty.pte"));
  REQUIRE_FALSE(empty.ok());
  CHECK(empty.error().code() == ErrorCode::kTruncated);
  CHECK(empty.error().message() == "empty.pte: file is empty");
  auto tiny = PteReader::read(etscope::testing::blob_of({1, 2, 3}, "tiny.pte"));
  REQUIRE_FALSE(tiny.ok());
  CHECK(tiny.error().code() == ErrorCode::kTruncated);
  std::vector<uint8_t> other(64, 0);
  std::memcpy(other.data() + 4, "ET11", 4);
  auto old = PteReader::read(etscope::testing::blob_of(other, "old.pte"));
  REQUIRE_FALSE(old.ok());
  CHECK(old.error().code() == ErrorCode::kNotSupported);
  CHECK_THAT(old.error().message(), Catch::Contains("ET11"));
  auto missing = PteReader::open("/nonexistent/model.pte");
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.error().code() == ErrorCode::kNotFound);
  CHECK(missing.error().message() == "/nonexistent/model.pte: no such file");
}

TEST_CASE("truncated segment data is reported with the file and the offsets", "[pte][errors]") {
  auto blob = load(real_artifact("cadence_quantized_conv.pte"));
  std::vector<uint8_t> bytes(blob->data(), blob->data() + 5000);
  auto r = PteReader::read(etscope::testing::blob_of(bytes, "cut.pte"));
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().code() == ErrorCode::kTruncated);
  CHECK(r.error().message() == "cut.pte: file is 5000 bytes but its header declares segment data up to byte 12096");
}

TEST_CASE("training programs: the loss, gradients and parameters are found from the markers", "[pte][training]") {
  auto program = etscope::PteReader::open(etscope::testing::real_artifact("xor_training.pte"));
  REQUIRE(program.ok());
  CHECK(etscope::is_training_marker("__et_training_gradients_index_forward"));
  CHECK_FALSE(etscope::is_training_marker("forward"));
  auto layout = etscope::training_layout(*program, "forward");
  REQUIRE(layout.has_value());
  // xor: outputs [loss, prediction, 4 gradients, 4 parameters] (Linear(2,10), Linear(10,2)).
  CHECK(layout->outputs == 10);
  CHECK(layout->forward_outputs() == 2);
  CHECK(layout->gradient_count() == 4);
  CHECK(layout->parameter_count() == 4);
  // Names from __et_training_fqn_forward, in the order of the gradient and parameter outputs.
  CHECK(layout->parameter_names ==
        std::vector<std::string>{"net.linear.weight", "net.linear.bias", "net.linear2.weight", "net.linear2.bias"});
  auto all = etscope::training_methods(*program);
  REQUIRE(all.size() == 1);
  CHECK(all[0].method == "forward");
  // Marker methods are no training methods themselves, and inference programs have none.
  CHECK_FALSE(etscope::training_layout(*program, "__et_training_gradients_index_forward").has_value());
  auto add = etscope::PteReader::open(etscope::testing::real_artifact("add.pte"));
  REQUIRE(add.ok());
  CHECK(etscope::training_methods(*add).empty());
}
