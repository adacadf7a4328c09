// The program description's texts for values an instruction computes at run time.
#include <catch2/catch.hpp>

#include "etscope/formats/pte_reader.h"
#include "etscope/inspect/program_description.h"
#include "testing/test_util.h"

using namespace etscope;
using etscope::testing::fixture;

TEST_CASE("sizes computed at run time are marked instead of printing their placeholders", "[inspect][program]") {
  // dynamic_seq: torch.export Dim seq in [2, 32]; sym_size.int computes the sequence length,
  // and the views take it as an item of their shape lists.
  auto program = PteReader::open(fixture("models/dynamic_seq.pte"));
  REQUIRE(program.ok());
  const ExecutionPlan& plan = program->plans.at(0);
  const Instruction& sym = plan.chains.at(0).instructions.at(0);
  REQUIRE(plan.operators.at(static_cast<size_t>(sym.op_index)).qualified_name() == "aten::sym_size.int");
  const int32_t length = sym.args.back();
  CHECK(plan.values.at(static_cast<size_t>(length)).written_at_run_time);
  CHECK(plan.values.at(static_cast<size_t>(length)).int_value == 0);  // the file's placeholder
  CHECK(inspect::argument_text(plan, length) == "%" + std::to_string(length) + " (set at run time)");
  const std::string sym_text = inspect::instruction_text(plan, sym);
  CHECK(sym_text.find("f32[<=1,<=32,<=8]") != std::string::npos);  // the dynamic input, with bounds
  const std::string view = inspect::instruction_text(plan, plan.chains.at(0).instructions.at(1));
  INFO(view);
  CHECK(view.find("=[%" + std::to_string(length) + ",8]") != std::string::npos);
  // Constants and inputs are never "set at run time".
  for (int32_t in : plan.inputs) CHECK_FALSE(plan.values.at(static_cast<size_t>(in)).written_at_run_time);
}

// Issue 28: named data and delegate calls are counted once, so front ends can summarise them.
TEST_CASE("issue 28: named data is summarised and delegate calls counted per backend", "[inspect][program][issue28]") {
  auto program = PteReader::open(fixture("xnnpack/xnn_qcnn.pte"));
  REQUIRE(program.ok());
  const inspect::ProgramDescription d = inspect::ProgramDescription::describe(*program);
  REQUIRE(d.named_data.size() == 12);
  uint64_t bytes = 0;
  for (const auto& nd : d.named_data) {
    bytes += nd.size;
    CHECK(d.segments.at(nd.segment).named_data_only);
  }
  CHECK(d.named_data_bytes == bytes);
  CHECK(d.named_data_totals == "12 keys, " + bytes_text(bytes));
  CHECK(d.named_data_summary == "12 keys, " + bytes_text(bytes) + ", e.g. '" + d.named_data[0].key + "', '" +
                                    d.named_data[1].key + "', '" + d.named_data[2].key + "'");
  size_t only = 0;
  for (const auto& s : d.segments) only += s.named_data_only;
  CHECK(only == 12);  // the delegate's own segment is not among them

  auto add = PteReader::open(testing::real_artifact("add.pte"));
  REQUIRE(add.ok());
  CHECK(inspect::ProgramDescription::describe(*add).named_data_summary == "none");

  auto transformer = PteReader::open(fixture("xnnpack/xnn_transformer.pte"));
  REQUIRE(transformer.ok());
  const std::vector<inspect::DelegateCalls> calls = inspect::delegate_call_counts(transformer->plans.at(0));
  REQUIRE(calls.size() == 1);
  CHECK(calls[0].backend == "XnnpackBackend");
  CHECK(calls[0].delegates == 15);
  CHECK(calls[0].calls == 15);
}
