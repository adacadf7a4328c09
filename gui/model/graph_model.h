// GraphModel: the Graph view's data for one plan: libinspect's ProgramGraph, its nn.Module groups
// (from the ETRecord's module stacks) and the Graphviz layouts of the shapes the user asked for
// (which groups are collapsed, which delegates expanded), each computed once and cached. The
// first layout is made on the loading thread; later ones on a worker while the view keeps
// showing the previous one.
#pragma once

#include <cstdint>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "etscope/inspect/program_graph.h"
#include "model/graph_layout.h"
#include "model/instruction_ref.h"

namespace etscope::gui {

/// One nn.Module that called some of the plan's operators.
struct GraphGroup {
  std::string path;     ///< "features.2.conv"
  std::string label;    ///< "features.2.conv (Sequential)"
  int32_t parent = -1;  ///< Enclosing group, or -1.
  int depth = 0;        ///< 0 for top-level modules.
  size_t nodes = 0;     ///< Graph nodes inside it, nested groups included.
};

/// What is drawn how: collapsed groups (each one box) and expanded delegates (their ops).
struct GraphShape {
  std::set<int32_t> collapsed;
  std::set<uint32_t> expanded;
  bool operator<(const GraphShape& o) const { return collapsed != o.collapsed ? collapsed < o.collapsed : expanded < o.expanded; }
  bool operator==(const GraphShape& o) const { return collapsed == o.collapsed && expanded == o.expanded; }
};

class GraphModel {
 public:
  /// `record` may be null (then there are no groups, and only XNNPACK delegates of `program`, if
  /// given, have ops to expand: their payload's nodes).
  static std::shared_ptr<GraphModel> build(const ExecutionPlan& plan, const etrecord::EtRecord* record,
                                           const Program* program = nullptr);

  const inspect::ProgramGraph& graph() const { return graph_; }
  const std::vector<GraphGroup>& groups() const { return groups_; }
  /// The innermost group of a graph node, or -1.
  int32_t group_of(uint32_t node) const { return node < group_of_.size() ? group_of_[node] : -1; }
  /// The graph node of an instruction, or -1.
  int32_t node_of(const InstructionRef& ref) const;
  /// Whether group `group` is `ancestor` or inside it.
  bool inside(int32_t group, int32_t ancestor) const;

  /// What the view opens on: everything expanded, except that in graphs of more than 300 nodes
  /// the groups below the top-level modules start collapsed.
  GraphShape default_shape() const;

  /// The boxes, edges and clusters Graphviz is asked to place for `shape`.
  LayoutRequest request(const GraphShape& shape) const;
  /// The layout of `shape`, computed now (or taken from the cache).
  std::shared_ptr<const GraphLayout> layout(const GraphShape& shape) const;
  /// The layout of `shape` when it is ready; otherwise starts it on a worker (once) and returns null.
  std::shared_ptr<const GraphLayout> layout_when_ready(const GraphShape& shape) const;

 private:
  inspect::ProgramGraph graph_;
  std::vector<GraphGroup> groups_;
  std::vector<int32_t> group_of_;
  mutable std::mutex mutex_;
  mutable std::map<GraphShape, std::shared_future<std::shared_ptr<const GraphLayout>>> layouts_;
};

}  // namespace etscope::gui
