// gui/model/graph_model + graph_layout: module groups from the ETRecord, what is laid out for a
// shape (collapsed groups, expanded delegates), and Graphviz's placement checked for what the
// view relies on: boxes inside the drawing and apart, clusters around their members, edges from
// their tail's box to their head's.
#include <catch2/catch.hpp>

#include <set>

#include "etscope/etrecord/etrecord_reader.h"
#include "etscope/formats/pte_reader.h"
#include "etscope/inspect/consistency.h"
#include "model/graph_model.h"
#include "testing/test_util.h"

using namespace etscope;
using namespace etscope::gui;
using etscope::testing::fixture;

namespace {

struct Loaded {
  Program program;
  etrecord::EtRecord record;
};

Loaded load(const std::string& name) {
  auto p = PteReader::open(fixture(name + "/" + name + ".pte"));
  REQUIRE(p.ok());
  auto r = etrecord::EtRecordReader::open(fixture(name + "/" + name + ".etrecord"));
  REQUIRE(r.ok());
  return Loaded{std::move(p).value(), std::move(r).value()};
}

bool inside(const LayoutBox& outer, const LayoutBox& inner, float slack = 0.5f) {
  return inner.x >= outer.x - slack && inner.y >= outer.y - slack && inner.x + inner.w <= outer.x + outer.w + slack &&
         inner.y + inner.h <= outer.y + outer.h + slack;
}

float distance_to(const LayoutBox& b, LayoutPoint p) {
  const float dx = std::max({b.x - p.x, 0.0f, p.x - (b.x + b.w)});
  const float dy = std::max({b.y - p.y, 0.0f, p.y - (b.y + b.h)});
  return std::sqrt(dx * dx + dy * dy);
}

void check_layout(const GraphLayout& l, const LayoutRequest& r) {
  REQUIRE(l.error.empty());
  REQUIRE(l.boxes.size() == r.items.size());
  CHECK(l.width > 0);
  CHECK(l.height > 0);
  for (size_t i = 0; i < l.boxes.size(); ++i) {
    const LayoutBox& b = l.boxes[i];
    CHECK(inside(LayoutBox{0, 0, l.width, l.height}, b, 1.0f));
    if (r.items[i].cluster >= 0) CHECK(inside(l.clusters[static_cast<size_t>(r.items[i].cluster)], b));
    for (size_t j = i + 1; j < l.boxes.size() && j < i + 50; ++j) {
      const LayoutBox& o = l.boxes[j];
      const bool overlap = b.x < o.x + o.w - 0.5f && o.x < b.x + b.w - 0.5f && b.y < o.y + o.h - 0.5f && o.y < b.y + b.h - 0.5f;
      CHECK_FALSE(overlap);
    }
  }
  REQUIRE(l.edges.size() == r.edges.size());
  for (const GraphLayout::EdgePath& e : l.edges) {
    REQUIRE(e.points.size() >= 4);
    CHECK((e.points.size() - 1) % 3 == 0);
    CHECK(distance_to(l.boxes[e.from], e.points.front()) < 2.0f);
    CHECK(distance_to(l.boxes[e.to], e.has_tip ? e.tip : e.points.back()) < 2.0f);
  }
}

}  // namespace

TEST_CASE("module groups follow the ETRecord's module stacks", "[gui][graph]") {
  const Loaded m = load("mobilenet_v2");
  const auto model = GraphModel::build(m.program.plans.at(0), &m.record);
  const auto& groups = model->groups();
  REQUIRE_FALSE(groups.empty());
  std::set<std::string> top;
  for (const GraphGroup& g : groups) {
    if (g.depth == 0) top.insert(g.path);
    if (g.parent >= 0) {
      CHECK(g.depth == groups[static_cast<size_t>(g.parent)].depth + 1);
      CHECK(g.path.rfind(groups[static_cast<size_t>(g.parent)].path + ".", 0) == 0);
      CHECK(g.nodes <= groups[static_cast<size_t>(g.parent)].nodes);
    }
  }
  CHECK(top == std::set<std::string>{"features", "classifier"});
  const int32_t first = model->node_of(InstructionRef{0, 0});
  REQUIRE(first >= 0);
  const int32_t g = model->group_of(static_cast<uint32_t>(first));
  REQUIRE(g >= 0);
  CHECK(groups[static_cast<size_t>(g)].label == "features.0.0 (Conv2d)");
  // Boxes are labelled with libinspect's base name of the operator.
  CHECK(inspect::operator_base_name("aten::convolution.out") == "convolution");
  CHECK(inspect::operator_base_name("aten.relu.default") == "relu");
  CHECK(model->node_of(InstructionRef{}) == -1);
}

TEST_CASE("a collapsed module is one box and its edges join it once", "[gui][graph]") {
  const Loaded m = load("mobilenet_v2");
  const auto model = GraphModel::build(m.program.plans.at(0), &m.record);
  const LayoutRequest all = model->request({});
  CHECK(all.items.size() == model->graph().nodes.size());
  CHECK(all.clusters.size() == model->groups().size());
  int32_t features = -1;
  for (size_t g = 0; g < model->groups().size(); ++g) {
    if (model->groups()[g].path == "features") features = static_cast<int32_t>(g);
  }
  REQUIRE(features >= 0);
  GraphShape shape;
  shape.collapsed.insert(features);
  const LayoutRequest folded = model->request(shape);
  // Input, the features box, the classifier's nodes and the output.
  size_t groups = 0;
  for (const LayoutItem& item : folded.items) groups += item.kind == LayoutItem::Kind::kGroup ? 1 : 0;
  CHECK(groups == 1);
  CHECK(folded.items.size() == model->graph().nodes.size() - model->groups()[static_cast<size_t>(features)].nodes + 1);
  std::set<std::pair<uint32_t, uint32_t>> pairs;
  for (const auto& e : folded.edges) {
    CHECK(e.from != e.to);
    CHECK(pairs.insert({e.from, e.to}).second);
  }
  const GraphLayout layout = layout_graph(folded);
  check_layout(layout, folded);
  check_layout(layout_graph(all), all);
}

namespace {

// The graph's last delegate node expanded: its shape, the layout request and the labels of the
// ops drawn inside it, in layout order.
struct Expanded {
  int32_t delegate = -1;
  GraphShape shape;
  LayoutRequest request;
  std::vector<std::string> ops;
};
Expanded expand_last_delegate(const GraphModel& model) {
  Expanded e;
  for (size_t i = 0; i < model.graph().nodes.size(); ++i) {
    if (model.graph().nodes[i].kind == inspect::GraphNodeKind::kDelegate) e.delegate = static_cast<int32_t>(i);
  }
  REQUIRE(e.delegate >= 0);
  e.shape.expanded.insert(static_cast<uint32_t>(e.delegate));
  e.request = model.request(e.shape);
  for (const LayoutItem& item : e.request.items) {
    if (item.kind == LayoutItem::Kind::kDelegateOp) e.ops.push_back(item.label);
  }
  return e;
}

}  // namespace

TEST_CASE("an expanded delegate shows the ops lowered into it", "[gui][graph]") {
  const Loaded m = load("simple_conv_xnnpack");
  const auto model = GraphModel::build(m.program.plans.at(0), &m.record);
  const Expanded e = expand_last_delegate(*model);
  CHECK(e.ops == std::vector<std::string>{"convolution", "relu"});
  REQUIRE_FALSE(e.request.clusters.empty());
  CHECK(e.request.clusters.back().delegate_node == e.delegate);
  check_layout(layout_graph(e.request), e.request);
  // Layouts are cached per shape.
  CHECK(model->layout(e.shape) == model->layout(e.shape));
  CHECK(model->layout(e.shape) != model->layout(GraphShape{}));
}

// Without an ETRecord, an XNNPACK delegate still opens: on its payload's nodes, in node order.
TEST_CASE("an XNNPACK delegate expands to its payload's nodes without an ETRecord", "[gui][graph]") {
  const Loaded m = load("simple_conv_xnnpack");
  const auto model = GraphModel::build(m.program.plans.at(0), nullptr, &m.program);
  const Expanded e = expand_last_delegate(*model);
  // The partitioner's layout conversions around the convolution (the relu is fused into it).
  CHECK(e.ops == std::vector<std::string>{"StaticTranspose", "Conv2d", "StaticTranspose"});
  check_layout(layout_graph(e.request), e.request);
  // No program, no ETRecord: nothing to expand, as before.
  const auto bare = GraphModel::build(m.program.plans.at(0), nullptr);
  CHECK(bare->graph().nodes[static_cast<size_t>(e.delegate)].delegated_ops.empty());
}

TEST_CASE("a 5,000-node graph lays out", "[gui][graph]") {
  // A chain of 5,000 kernels with skips every seventh, as a deep network's graph.
  LayoutRequest r;
  for (uint32_t i = 0; i < 5000; ++i) {
    LayoutItem item;
    item.index = i;
    item.label = "convolution";
    item.detail = "f32[1,64,56,56]";
    r.items.push_back(item);
    if (i > 0) r.edges.push_back({i - 1, i});
    if (i >= 7 && i % 7 == 0) r.edges.push_back({i - 5, i});
  }
  const GraphLayout l = layout_graph(r);
  REQUIRE(l.error.empty());
  CHECK(l.boxes.size() == 5000);
  CHECK(l.edges.size() == r.edges.size());
  for (size_t i = 1; i < l.boxes.size(); ++i) CHECK(l.boxes[i].y > l.boxes[i - 1].y);  // top to bottom
}

TEST_CASE("a graph too big to lay out is refused with a message, not a hang", "[gui][graph]") {
  LayoutRequest r;
  r.items.resize(kMaxLayoutItems + 1);
  const GraphLayout l = layout_graph(r);
  CHECK(l.error == "20001 boxes are more than the 20000 the viewer lays out (with an ETRecord, collapse modules to draw fewer)");
  CHECK(l.edges.empty());
}

// Issue 28: mobilenet_v3's XNNPACK graph put 18 boxes in one row, whose labels a window showed at
// ~7 px. A graph of few ranks and many boxes is laid out left to right instead.
TEST_CASE("issue 28: a wide graph is laid out with a window's aspect ratio", "[gui][graph][issue28]") {
  LayoutRequest r;
  auto add = [&](const std::string& label) {
    LayoutItem item;
    item.index = static_cast<uint32_t>(r.items.size());
    item.label = label;
    item.detail = "f32[1,16,112,112]";
    r.items.push_back(item);
    return item.index;
  };
  const uint32_t in = add("input"), out = add("output");
  for (int i = 0; i < 18; ++i) {
    const uint32_t op = add("hardswish.out");
    r.edges.push_back({in, op});
    r.edges.push_back({op, out});
  }
  const GraphLayout l = layout_graph(r);
  REQUIRE(l.error.empty());
  CHECK(aspect_ratio(l) <= kMaxAspectRatio);
  CHECK(l.edges.size() == r.edges.size());
  check_layout(l, r);
  // A deep graph keeps its top-to-bottom layout.
  LayoutRequest chain;
  for (uint32_t i = 0; i < 12; ++i) {
    LayoutItem item;
    item.index = i;
    item.label = "convolution";
    chain.items.push_back(item);
    if (i > 0) chain.edges.push_back({i - 1, i});
  }
  const GraphLayout deep = layout_graph(chain);
  REQUIRE(deep.error.empty());
  for (size_t i = 1; i < deep.boxes.size(); ++i) CHECK(deep.boxes[i].y > deep.boxes[i - 1].y);
}
