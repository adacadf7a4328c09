// gui/model/program_model: the Program view's rows.
#include <catch2/catch.hpp>

#include <algorithm>

#include "etscope/formats/pte_reader.h"
#include "etscope/inspect/program_description.h"
#include "model/program_model.h"
#include "testing/test_util.h"

using namespace etscope;
using namespace etscope::gui;
using etscope::testing::real_artifact;

namespace {
Program open_program(const std::string& path) {
  auto p = PteReader::open(path);
  if (!p.ok()) FAIL(p.error().message());
  return std::move(p).value();
}
}  // namespace

TEST_CASE("instructions read as the CLI prints them, with their steps", "[gui][program]") {
  const Program program = open_program(real_artifact("add.pte"));
  const ProgramModel m = ProgramModel::build(program, 0);
  CHECK(m.name() == "forward");
  REQUIRE(m.instructions().size() == 1);
  const InstructionRow& row = m.instructions()[0];
  CHECK(row.text == "aten::add.out(%0 f32[1], %1 f32[1], %3 =1) -> %2 f32[1]");
  CHECK(row.op == "aten::add.out");
  CHECK(row.kind == "kernel");
  CHECK(m.step_of({0, 0}) == 0);
  CHECK(m.step_of({0, 1}) == -1);
  CHECK(m.step_of({1, 0}) == -1);
  CHECK(m.step_of({}) == -1);
  CHECK(m.at_step(0) == InstructionRef{0, 0});
  CHECK_FALSE(m.at_step(1).valid());
  CHECK(m.longest_instruction() == row.text.size());
  REQUIRE(m.operators().size() == 1);
  CHECK(m.operators()[0].name == "aten::add.out");
  CHECK(m.operators()[0].calls == 1);
}

TEST_CASE("values carry dtype, shape, bytes and location", "[gui][program]") {
  const Program program = open_program(real_artifact("xor_training.pte"));
  const ProgramModel m = ProgramModel::build(program, static_cast<size_t>(program.find_plan("forward") - &program.plans[0]));
  REQUIRE(m.values().size() == program.find_plan("forward")->values.size());
  const ValueRow& w = m.values()[0];
  CHECK(w.kind == "Tensor");
  CHECK(w.type == "f32[10,2]");
  CHECK(w.nbytes == 80);
  CHECK(w.location.rfind("arena 1 @ 320", 0) == 0);
  bool saw_int = false;
  for (const ValueRow& v : m.values()) saw_int |= v.kind == "Int" && !v.type.empty() && v.nbytes == 0;
  CHECK(saw_int);
  CHECK(m.instructions().size() == 66);
  CHECK(m.inputs().size() == program.find_plan("forward")->inputs.size());
  bool has_facts = false;
  for (const auto& [label, value] : m.facts()) has_facts |= label == "methods" && value.find("forward") != std::string::npos;
  CHECK(has_facts);
}

TEST_CASE("argument text covers every value kind", "[gui][program]") {
  ExecutionPlan plan;
  auto add = [&](Value v) { plan.values.push_back(std::move(v)); };
  Value none;
  add(none);
  Value i;
  i.kind = ValueKind::kInt;
  i.int_value = 3;
  add(i);
  Value list;
  list.kind = ValueKind::kIntList;
  list.int_list = {1, 1};
  add(list);
  Value b;
  b.kind = ValueKind::kBool;
  b.bool_value = true;
  add(b);
  Value d;
  d.kind = ValueKind::kDouble;
  d.double_value = 0.1;
  add(d);
  Value tl;
  tl.kind = ValueKind::kOptionalTensorList;
  tl.tensor_list = {-1, 5};
  add(tl);
  CHECK(etscope::inspect::argument_text(plan, 0) == "%0 =None");
  CHECK(etscope::inspect::argument_text(plan, 1) == "%1 =3");
  CHECK(etscope::inspect::argument_text(plan, 2) == "%2 =[3,3]");
  CHECK(etscope::inspect::argument_text(plan, 3) == "%3 =true");
  CHECK(etscope::inspect::argument_text(plan, 4) == "%4 =0.1");
  CHECK(etscope::inspect::argument_text(plan, 5) == "%5 [None,%5]");
  CHECK(etscope::inspect::argument_text(plan, 99) == "%99 ?");
}

TEST_CASE("an XNNPACK delegate's nodes are listed as etscope pte --delegates lists them", "[gui][program][xnnpack]") {
  const Program program = open_program(etscope::testing::fixture("simple_conv_xnnpack/simple_conv_xnnpack.pte"));
  const ProgramModel m = ProgramModel::build(program, 0);
  REQUIRE(m.delegate_graphs().size() == 1);
  const inspect::DelegateGraphDescription& g = m.delegate_graphs()[0];
  CHECK(g.error.empty());
  CHECK(g.summary == "XNNPACK graph version 0, 3 nodes, 6 values");
  REQUIRE(g.nodes.size() == 3);
  CHECK(g.nodes[1].kind == "Conv2d");
  CHECK(g.nodes[1].debug_handle == 1);
  CHECK(g.nodes[1].inputs == std::vector<std::string>{"v1 f32[1,32,32,3]", "v2 f32[16,3,3,3] const", "v4 f32[16] const"});
  CHECK(g.nodes[1].outputs == std::vector<std::string>{"v3 f32[1,32,32,16]"});
  CHECK(g.nodes[1].attributes == "kernel 3x3 stride 1x1 pad [1,1,1,1] dilation 1x1 groups 1 (3->16) range [0, inf]");
  CHECK(g.nodes[0].debug_handle == 0xffff);  // the partitioner's layout conversion
}

TEST_CASE("the viewer's rows are the ones etscope pte --instructions/--values prints", "[gui][program]") {
  // dynamic_seq has DYNAMIC_BOUND tensors and a size computed at run time: the texts where the
  // viewer once printed its own copy (plain shapes, placeholder sizes).
  const Program program = open_program(etscope::testing::fixture("models/dynamic_seq.pte"));
  const ProgramModel m = ProgramModel::build(program, 0);
  const inspect::PlanDescription cli = inspect::PlanDescription::describe(program.plans.at(0));
  REQUIRE(m.instructions().size() == cli.instructions.size());
  for (size_t i = 0; i < cli.instructions.size(); ++i) {
    CHECK(m.instructions()[i].text == cli.instructions[i].text);
    CHECK(m.instructions()[i].source == cli.instructions[i].source);
    CHECK(m.at_step(static_cast<int64_t>(i)) == InstructionRef{cli.instructions[i].chain, cli.instructions[i].index});
  }
  REQUIRE(m.values().size() == cli.values.size());
  bool saw_bounded = false;
  for (size_t i = 0; i < cli.values.size(); ++i) {
    const ValueRow& v = m.values()[i];
    CHECK(v.type == cli.values[i].type);
    CHECK(v.bytes == cli.values[i].bytes);
    CHECK(v.location == cli.values[i].location);
    CHECK(v.notes == cli.values[i].notes);
    if (std::find(v.notes.begin(), v.notes.end(), "dynamic (bounded)") != v.notes.end()) {
      saw_bounded = true;
      CHECK(v.type.find("<=") != std::string::npos);  // the bound is marked, as the CLI marks it
      CHECK(v.bytes.rfind("<=", 0) == 0);
    }
  }
  CHECK(saw_bounded);
}
