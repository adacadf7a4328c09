// ProgramGraph: the plan's dataflow, and the ETRecord links of its nodes checked against what
// ExecuTorch's Inspector reported for the same programs (<m>.inspector.json: per event the
// instruction, debug handles and op types).
#include <catch2/catch.hpp>

#include <fstream>
#include <nlohmann/json.hpp>
#include <algorithm>
#include <set>

#include "etscope/etrecord/etrecord_reader.h"
#include "etscope/formats/pte_reader.h"
#include "etscope/inspect/program_graph.h"
#include "testing/test_util.h"

using namespace etscope;
using namespace etscope::inspect;
using etscope::testing::fixture;

namespace {

Program program_of(const std::string& path) {
  auto p = PteReader::open(path);
  INFO(path << ": " << (p.ok() ? "" : p.error().message()));
  REQUIRE(p.ok());
  return std::move(p).value();
}

etrecord::EtRecord record_of(const std::string& path) {
  auto r = etrecord::EtRecordReader::open(path);
  INFO(path << ": " << (r.ok() ? "" : r.error().message()));
  REQUIRE(r.ok());
  return std::move(r).value();
}

// Edges go forward (inputs first, instructions in plan order, outputs last), one per pair; an
// output has at most one writer (none when it returns a parameter unchanged).
void check_structure(const ProgramGraph& g) {
  std::vector<int> in_degree(g.nodes.size(), 0);
  std::set<std::pair<uint32_t, uint32_t>> pairs;
  for (const ProgramGraphEdge& e : g.edges) {
    REQUIRE(e.from < g.nodes.size());
    REQUIRE(e.to < g.nodes.size());
    CHECK(e.from < e.to);
    CHECK_FALSE(e.values.empty());
    CHECK(pairs.insert({e.from, e.to}).second);
    ++in_degree[e.to];
  }
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const ProgramGraphNode& n = g.nodes[i];
    if (n.kind == GraphNodeKind::kOutput) CHECK(in_degree[i] <= 1);
    if (n.kind == GraphNodeKind::kInput) CHECK(in_degree[i] == 0);
    if (n.kind == GraphNodeKind::kKernel || n.kind == GraphNodeKind::kDelegate) {
      REQUIRE(n.step >= 0);
      REQUIRE(static_cast<size_t>(n.step) < g.node_of_step.size());
      CHECK(g.node_of_step[static_cast<size_t>(n.step)] == static_cast<int32_t>(i));
    }
  }
}

}  // namespace

TEST_CASE("a plan's graph: conv then relu, weights listed on the node reading them", "[inspect][graph]") {
  const Program p = program_of(fixture("simple_conv/simple_conv.pte"));
  const ProgramGraph g = build_program_graph(p.plans.at(0), nullptr);
  check_structure(g);
  REQUIRE(g.nodes.size() == 4);
  CHECK(g.nodes[0].kind == GraphNodeKind::kInput);
  CHECK(g.nodes[0].op == "input 0");
  CHECK(g.nodes[0].shape == "f32[1,3,32,32]");
  CHECK(g.nodes[1].op == "aten::convolution.out");
  CHECK(g.nodes[1].constants.size() == 2);  // weight and bias
  CHECK(g.nodes[1].shape == "f32[1,16,32,32]");
  CHECK(g.nodes[2].op == "aten::relu.out");
  CHECK(g.nodes[2].constants.empty());
  CHECK(g.nodes[3].kind == GraphNodeKind::kOutput);
  REQUIRE(g.edges.size() == 3);
  CHECK((g.edges[0].from == 0 && g.edges[0].to == 1));
  CHECK((g.edges[1].from == 1 && g.edges[1].to == 2));
  CHECK((g.edges[2].from == 2 && g.edges[2].to == 3));
  CHECK(g.nodes[1].modules.empty());  // no ETRecord
}

TEST_CASE("graph nodes carry the debug handles and delegated ops ExecuTorch's Inspector gives their events", "[inspect][graph]") {
  for (const std::string m : {"simple_conv", "simple_conv_xnnpack", "cifar10", "mobilenet_v2"}) {
    INFO(m);
    const Program p = program_of(fixture(m + "/" + m + ".pte"));
    const etrecord::EtRecord record = record_of(fixture(m + "/" + m + ".etrecord"));
    const ProgramGraph g = build_program_graph(p.plans.at(0), &record);
    check_structure(g);
    std::ifstream in(fixture(m + "/" + m + ".inspector.json"));
    REQUIRE(in.good());
    const auto ref = nlohmann::json::parse(in);
    size_t checked = 0;
    for (const auto& block : ref["event_blocks"]) {
      if (block["name"] != "Execute") continue;
      for (const auto& e : block["events"]) {
        const std::string name = e["name"];
        if (name.rfind("native_call_", 0) != 0 && name != "DELEGATE_CALL") continue;
        const int64_t step = e["instruction_id"];
        REQUIRE(static_cast<size_t>(step) < g.node_of_step.size());
        const int32_t node = g.node_of_step[static_cast<size_t>(step)];
        REQUIRE(node >= 0);
        const ProgramGraphNode& n = g.nodes[static_cast<size_t>(node)];
        INFO(name << " at instruction " << step);
        std::vector<int64_t> handles;
        if (e["debug_handles"].is_number()) handles.push_back(e["debug_handles"]);
        if (e["debug_handles"].is_array()) handles = e["debug_handles"].get<std::vector<int64_t>>();
        CHECK(n.debug_handles == handles);
        if (name == "DELEGATE_CALL") {
          CHECK(n.kind == GraphNodeKind::kDelegate);
          CHECK(n.delegated_ops == e["op_types"].get<std::vector<std::string>>());
        } else {
          CHECK(n.kind == GraphNodeKind::kKernel);
          CHECK(n.op.find(name.substr(12, name.find('.') - 12)) != std::string::npos);  // convolution, relu, ...
        }
        ++checked;
      }
    }
    CHECK(checked > 0);
  }
}

TEST_CASE("the input reaches the output through views the exporter made into aliases", "[inspect][graph]") {
  // cifar10 flattens its features before the classifier, mobilenet_v2 after its mean: reshapes
  // that are no instruction, only a second tensor at the same arena offset.
  for (const std::string m : {"cifar10", "mobilenet_v2", "simple_conv"}) {
    INFO(m);
    const Program p = program_of(fixture(m + "/" + m + ".pte"));
    const ProgramGraph g = build_program_graph(p.plans.at(0), nullptr);
    // Edges go forward: one pass in order of their tails finds everything input 0 reaches.
    std::vector<ProgramGraphEdge> sorted = g.edges;
    std::sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) { return a.from < b.from; });
    std::vector<bool> reached(g.nodes.size(), false);
    reached[0] = true;
    for (const ProgramGraphEdge& e : sorted) {
      if (reached[e.from]) reached[e.to] = true;
    }
    CHECK(g.nodes.back().kind == GraphNodeKind::kOutput);
    CHECK(reached.back());
  }
}

TEST_CASE("graph nodes are grouped by the nn.Module that called them", "[inspect][graph]") {
  const Program p = program_of(fixture("mobilenet_v2/mobilenet_v2.pte"));
  const etrecord::EtRecord record = record_of(fixture("mobilenet_v2/mobilenet_v2.etrecord"));
  const ProgramGraph g = build_program_graph(p.plans.at(0), &record);
  size_t with_modules = 0;
  std::set<std::string> top;
  for (const ProgramGraphNode& n : g.nodes) {
    if (n.kind != GraphNodeKind::kKernel) continue;
    if (n.modules.empty()) continue;
    ++with_modules;
    top.insert(n.modules.front().path);
  }
  CHECK(with_modules > 100);
  CHECK(top.count("features") == 1);
  CHECK(top.count("classifier") == 1);
  // The first convolution sits in features.0.0 (Conv2d) inside features (Sequential).
  const ProgramGraphNode& first = g.nodes[static_cast<size_t>(g.node_of_step.at(0))];
  REQUIRE(first.modules.size() >= 2);
  CHECK(first.modules[0].path == "features");
  CHECK(first.modules.back().type.find("Conv2d") != std::string::npos);
}

TEST_CASE("a training plan's graph: parameters are state, not inputs", "[inspect][graph]") {
  const Program p = program_of(etscope::testing::real_artifact("xor_training.pte"));
  const ProgramGraph g = build_program_graph(p.plans.at(0), nullptr);
  check_structure(g);
  size_t kernels = 0, with_state = 0, outputs_written = 0;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const ProgramGraphNode& n = g.nodes[i];
    kernels += n.kind == GraphNodeKind::kKernel ? 1 : 0;
    with_state += n.constants.empty() ? 0 : 1;
    if (n.kind == GraphNodeKind::kOutput) {
      for (const ProgramGraphEdge& e : g.edges) outputs_written += e.to == i ? 1 : 0;
    }
  }
  CHECK(kernels == 66);
  CHECK(with_state > 0);          // the linear layers read their weights
  CHECK(g.nodes.front().kind == GraphNodeKind::kInput);
  CHECK(outputs_written == 6);    // loss, prediction and four gradients; the parameters come back unchanged
}
