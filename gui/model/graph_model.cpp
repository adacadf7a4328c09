#include "model/graph_model.h"

#include <algorithm>
#include <chrono>

#include "etscope/inspect/consistency.h"

namespace etscope::gui {

std::shared_ptr<GraphModel> GraphModel::build(const ExecutionPlan& plan, const etrecord::EtRecord* record, const Program* program) {
  auto m = std::make_shared<GraphModel>();
  m->graph_ = inspect::build_program_graph(plan, record, program);
  m->group_of_.assign(m->graph_.nodes.size(), -1);
  std::map<std::string, int32_t> by_path;
  for (size_t i = 0; i < m->graph_.nodes.size(); ++i) {
    int32_t parent = -1;
    for (const etrecord::ModuleFrame& f : m->graph_.nodes[i].modules) {
      auto [it, inserted] = by_path.emplace(f.path, static_cast<int32_t>(m->groups_.size()));
      if (inserted) {
        GraphGroup g;
        g.path = f.path;
        const size_t dot = f.type.find_last_of('.');
        g.label = f.path + " (" + (dot == std::string::npos ? f.type : f.type.substr(dot + 1)) + ")";
        g.parent = parent;
        g.depth = parent < 0 ? 0 : m->groups_[static_cast<size_t>(parent)].depth + 1;
        m->groups_.push_back(std::move(g));
      }
      ++m->groups_[static_cast<size_t>(it->second)].nodes;
      parent = it->second;
    }
    m->group_of_[i] = parent;
  }
  return m;
}

int32_t GraphModel::node_of(const InstructionRef& ref) const {
  if (!ref.valid()) return -1;
  for (size_t i = 0; i < graph_.nodes.size(); ++i) {
    const auto& n = graph_.nodes[i];
    if (n.chain == ref.chain && n.instruction == ref.instruction) return static_cast<int32_t>(i);
  }
  return -1;
}

bool GraphModel::inside(int32_t group, int32_t ancestor) const {
  for (int guard = 0; group >= 0 && guard < 4096; ++guard) {
    if (group == ancestor) return true;
    group = groups_[static_cast<size_t>(group)].parent;
  }
  return false;
}

GraphShape GraphModel::default_shape() const {
  GraphShape s;
  if (graph_.nodes.size() > 300) {
    for (size_t g = 0; g < groups_.size(); ++g) {
      if (groups_[g].depth == 1) s.collapsed.insert(static_cast<int32_t>(g));
    }
  }
  return s;
}

LayoutRequest GraphModel::request(const GraphShape& shape) const {
  LayoutRequest r;
  const size_t n = graph_.nodes.size();
  // The outermost collapsed group holding each group, or -1.
  std::vector<int32_t> collapsed_at(groups_.size(), -1);
  for (size_t g = 0; g < groups_.size(); ++g) {
    for (int32_t a = static_cast<int32_t>(g); a >= 0; a = groups_[static_cast<size_t>(a)].parent) {
      if (shape.collapsed.count(a)) collapsed_at[g] = a;
    }
  }
  // Clusters: every group that is not inside a collapsed one, in group order (parents first).
  std::vector<int32_t> cluster_of_group(groups_.size(), -1);
  for (size_t g = 0; g < groups_.size(); ++g) {
    if (collapsed_at[g] >= 0) continue;
    LayoutRequest::Cluster c;
    c.label = groups_[g].label;
    c.group = static_cast<int32_t>(g);
    const int32_t p = groups_[g].parent;
    c.parent = p >= 0 ? cluster_of_group[static_cast<size_t>(p)] : -1;
    cluster_of_group[g] = static_cast<int32_t>(r.clusters.size());
    r.clusters.push_back(std::move(c));
  }
  std::vector<uint32_t> first_item(n, 0), last_item(n, 0);
  std::map<int32_t, uint32_t> group_item;
  for (size_t i = 0; i < n; ++i) {
    const inspect::ProgramGraphNode& node = graph_.nodes[i];
    const int32_t g = group_of_[i];
    if (g >= 0 && collapsed_at[static_cast<size_t>(g)] >= 0) {
      const int32_t top = collapsed_at[static_cast<size_t>(g)];
      auto [it, inserted] = group_item.emplace(top, static_cast<uint32_t>(r.items.size()));
      if (inserted) {
        LayoutItem item;
        item.kind = LayoutItem::Kind::kGroup;
        item.index = static_cast<uint32_t>(top);
        item.label = groups_[static_cast<size_t>(top)].label;
        item.detail = std::to_string(groups_[static_cast<size_t>(top)].nodes) + " ops";
        const int32_t p = groups_[static_cast<size_t>(top)].parent;
        item.cluster = p >= 0 ? cluster_of_group[static_cast<size_t>(p)] : -1;
        r.items.push_back(std::move(item));
      }
      first_item[i] = last_item[i] = it->second;
      continue;
    }
    const int32_t cluster = g >= 0 ? cluster_of_group[static_cast<size_t>(g)] : -1;
    if (node.kind == inspect::GraphNodeKind::kDelegate && shape.expanded.count(static_cast<uint32_t>(i)) && !node.delegated_ops.empty()) {
      // The delegate as a cluster of its lowered ops, chained in graph order.
      LayoutRequest::Cluster c;
      c.label = node.op + " (" + std::to_string(node.delegated_ops.size()) + " ops)";
      c.parent = cluster;
      c.delegate_node = static_cast<int32_t>(i);
      const int32_t dc = static_cast<int32_t>(r.clusters.size());
      r.clusters.push_back(std::move(c));
      first_item[i] = static_cast<uint32_t>(r.items.size());
      for (size_t k = 0; k < node.delegated_ops.size(); ++k) {
        LayoutItem item;
        item.kind = LayoutItem::Kind::kDelegateOp;
        item.index = static_cast<uint32_t>(i);
        item.op = static_cast<uint32_t>(k);
        item.cluster = dc;
        item.label = inspect::operator_base_name(node.delegated_ops[k]);
        if (k > 0) r.edges.push_back({static_cast<uint32_t>(r.items.size() - 1), static_cast<uint32_t>(r.items.size())});
        r.items.push_back(std::move(item));
      }
      last_item[i] = static_cast<uint32_t>(r.items.size() - 1);
      continue;
    }
    LayoutItem item;
    item.kind = LayoutItem::Kind::kNode;
    item.index = static_cast<uint32_t>(i);
    item.cluster = cluster;
    switch (node.kind) {
      case inspect::GraphNodeKind::kKernel:
        item.label = inspect::operator_base_name(node.op);
        item.detail = node.shape;
        break;
      case inspect::GraphNodeKind::kDelegate:
        item.label = node.op;
        item.detail = node.delegated_ops.empty() ? "delegate" : std::to_string(node.delegated_ops.size()) + " ops (click to expand)";
        break;
      case inspect::GraphNodeKind::kInput:
      case inspect::GraphNodeKind::kOutput:
        item.label = node.op;
        item.detail = node.shape;
        break;
    }
    first_item[i] = last_item[i] = static_cast<uint32_t>(r.items.size());
    r.items.push_back(std::move(item));
  }
  std::set<std::pair<uint32_t, uint32_t>> seen;
  for (const inspect::ProgramGraphEdge& e : graph_.edges) {
    const uint32_t a = last_item[e.from], b = first_item[e.to];
    if (a == b || !seen.insert({a, b}).second) continue;
    r.edges.push_back({a, b});
  }
  return r;
}

std::shared_ptr<const GraphLayout> GraphModel::layout(const GraphShape& shape) const {
  std::shared_future<std::shared_ptr<const GraphLayout>> f;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = layouts_.find(shape);
    if (it == layouts_.end()) {
      std::promise<std::shared_ptr<const GraphLayout>> p;
      p.set_value(std::make_shared<const GraphLayout>(layout_graph(request(shape))));
      it = layouts_.emplace(shape, p.get_future().share()).first;
    }
    f = it->second;
  }
  return f.get();
}

std::shared_ptr<const GraphLayout> GraphModel::layout_when_ready(const GraphShape& shape) const {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = layouts_.find(shape);
  if (it == layouts_.end()) {
    LayoutRequest req = request(shape);
    it = layouts_.emplace(shape, std::async(std::launch::async, [req = std::move(req)]() {
                                   return std::make_shared<const GraphLayout>(layout_graph(req));
                                 }).share())
             .first;
  }
  if (it->second.wait_for(std::chrono::seconds(0)) != std::future_status::ready) return nullptr;
  return it->second.get();
}

}  // namespace etscope::gui
