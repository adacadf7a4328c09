#include "model/graph_layout.h"

#include <graphviz/cgraph.h>
#include <graphviz/gvc.h>

#include <algorithm>
#include <cmath>
#include <chrono>
#include <mutex>

namespace etscope::gui {
namespace {

std::mutex& graphviz_lock() {
  static std::mutex m;
  return m;
}

// One Graphviz context for the process, never freed: Graphviz 2.43 caches font data across
// contexts and reads it after gvFreeContext (AddressSanitizer: heap-use-after-free in
// textspan_size when a second context measures a label), so contexts are not recreated.
GVC_t* graphviz_context() {
  static GVC_t* gvc = gvContext();
  return gvc;
}

// Points per character of the viewer's font at its default size (a generous estimate, so labels
// fit), and the box padding.
constexpr double kCharPoints = 7.2;
constexpr double kPadPoints = 18;
constexpr double kLinePoints = 15;

void set(void* object, const char* name, const std::string& value) {
  agsafeset(object, const_cast<char*>(name), const_cast<char*>(value.c_str()), const_cast<char*>(""));
}

// One dot layout of `request` into `out` (boxes, edges, clusters, size) in direction `rankdir`
// ("TB" or "LR"); false with out.error set when Graphviz fails. The caller holds the lock.
bool run_dot(GVC_t* gvc, const LayoutRequest& request, const char* rankdir, GraphLayout& out) {
  out.edges.clear();
  Agraph_t* g = agopen(const_cast<char*>("program"), Agdirected, nullptr);
  set(g, "rankdir", rankdir);
  set(g, "nodesep", "0.25");
  set(g, "ranksep", "0.35");
  set(g, "fontsize", "11");
  // Big graphs: fewer crossing-minimisation passes, so a 5,000-node program lays out in seconds.
  if (request.items.size() > 1500) {
    set(g, "mclimit", "0.3");
    set(g, "nslimit", "2");
    set(g, "nslimit1", "2");
  }
  agattr(g, AGNODE, const_cast<char*>("shape"), const_cast<char*>("box"));
  agattr(g, AGNODE, const_cast<char*>("fixedsize"), const_cast<char*>("true"));
  agattr(g, AGNODE, const_cast<char*>("label"), const_cast<char*>(""));

  // Clusters in request order; a parent always comes before its children.
  std::vector<Agraph_t*> cluster(request.clusters.size(), nullptr);
  for (size_t c = 0; c < request.clusters.size(); ++c) {
    const int32_t parent = request.clusters[c].parent;
    Agraph_t* where = parent >= 0 && static_cast<size_t>(parent) < c && cluster[static_cast<size_t>(parent)] != nullptr
                          ? cluster[static_cast<size_t>(parent)]
                          : g;
    const std::string name = "cluster_" + std::to_string(c);
    cluster[c] = agsubg(where, const_cast<char*>(name.c_str()), 1);
    // Room for the title the view draws: a margin, not a label, so Graphviz never measures
    // text (its text-layout plugin, Pango and fontconfig, leaks and costs time).
    set(cluster[c], "margin", "20");
  }
  std::vector<Agnode_t*> nodes(request.items.size(), nullptr);
  for (size_t i = 0; i < request.items.size(); ++i) {
    const LayoutItem& item = request.items[i];
    Agraph_t* where = item.cluster >= 0 && static_cast<size_t>(item.cluster) < cluster.size() ? cluster[static_cast<size_t>(item.cluster)] : g;
    const std::string name = "n" + std::to_string(i);
    nodes[i] = agnode(where, const_cast<char*>(name.c_str()), 1);
    const size_t chars = std::max(item.label.size(), item.detail.size());
    const double w = (static_cast<double>(chars) * kCharPoints + kPadPoints) / 72.0;
    const double h = ((item.detail.empty() ? 1 : 2) * kLinePoints + 10) / 72.0;
    set(nodes[i], "width", std::to_string(std::max(w, 0.6)));
    set(nodes[i], "height", std::to_string(h));
  }
  std::vector<Agedge_t*> edges;
  std::vector<LayoutRequest::Edge> ends;
  edges.reserve(request.edges.size());
  for (const LayoutRequest::Edge& e : request.edges) {
    if (e.from >= nodes.size() || e.to >= nodes.size() || e.from == e.to) continue;
    edges.push_back(agedge(g, nodes[e.from], nodes[e.to], nullptr, 1));
    ends.push_back(e);
  }

  if (gvLayout(gvc, g, "dot") != 0) {
    out.error = "Graphviz's dot layout failed";
    agclose(g);
    return false;
  }
  // Graphviz's y grows upwards from the bottom of the bounding box; ours grows down from the top.
  const boxf bb = GD_bb(g);
  const double top = bb.UR.y;
  auto flip = [&](pointf p) { return LayoutPoint{static_cast<float>(p.x - bb.LL.x), static_cast<float>(top - p.y)}; };
  out.width = static_cast<float>(bb.UR.x - bb.LL.x);
  out.height = static_cast<float>(bb.UR.y - bb.LL.y);
  for (size_t i = 0; i < nodes.size(); ++i) {
    const pointf c = ND_coord(nodes[i]);
    const float w = static_cast<float>(ND_width(nodes[i]) * 72.0), h = static_cast<float>(ND_height(nodes[i]) * 72.0);
    const LayoutPoint p = flip(c);
    out.boxes[i] = LayoutBox{p.x - w * 0.5f, p.y - h * 0.5f, w, h};
  }
  for (size_t k = 0; k < edges.size(); ++k) {
    Agedge_t* e = edges[k];
    GraphLayout::EdgePath path;
    path.from = ends[k].from;
    path.to = ends[k].to;
    const splines* spl = ED_spl(e);
    if (spl != nullptr && spl->size > 0) {
      const bezier& bz = spl->list[0];
      for (int j = 0; j < bz.size; ++j) path.points.push_back(flip(bz.list[j]));
      if (bz.eflag) {
        path.tip = flip(bz.ep);
        path.has_tip = true;
      }
    }
    out.edges.push_back(std::move(path));
  }
  for (size_t c = 0; c < cluster.size(); ++c) {
    const boxf cb = GD_bb(cluster[c]);
    const LayoutPoint a = flip(pointf{cb.LL.x, cb.UR.y}), b = flip(pointf{cb.UR.x, cb.LL.y});
    out.clusters[c] = LayoutBox{a.x, a.y, b.x - a.x, b.y - a.y};
  }
  gvFreeLayout(gvc, g);
  agclose(g);
  return true;
}

}  // namespace

double aspect_ratio(const GraphLayout& layout) {
  return layout.width > 0 && layout.height > 0 ? static_cast<double>(layout.width) / layout.height : 1.0;
}

GraphLayout layout_graph(const LayoutRequest& request) {
  GraphLayout out;
  out.items = request.items;
  out.boxes.resize(request.items.size());
  out.clusters.resize(request.clusters.size());
  out.cluster_info = request.clusters;
  if (request.items.empty()) return out;
  if (request.items.size() > kMaxLayoutItems) {
    out.error = std::to_string(request.items.size()) + " boxes are more than the " + std::to_string(kMaxLayoutItems) +
                " the viewer lays out (with an ETRecord, collapse modules to draw fewer)";
    return out;
  }

  std::lock_guard<std::mutex> lock(graphviz_lock());
  const auto start = std::chrono::steady_clock::now();
  GVC_t* gvc = graphviz_context();
  if (gvc == nullptr) {
    out.error = "Graphviz could not start (gvContext failed)";
    return out;
  }
  if (run_dot(gvc, request, "TB", out) && aspect_ratio(out) > kMaxAspectRatio) {
    // A few ranks of many boxes (mobilenet_v3's XNNPACK graph put 18 in one row): fitted to a
    // window its labels shrink to a few pixels. Laid out left to right the same graph is tall and
    // narrow instead; keep whichever shape is nearer a window's.
    GraphLayout across = out;
    if (run_dot(gvc, request, "LR", across) &&
        std::abs(std::log(aspect_ratio(across) / kWindowAspectRatio)) < std::abs(std::log(aspect_ratio(out) / kWindowAspectRatio))) {
      out = std::move(across);
    }
  }
  out.milliseconds = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  return out;
}

}  // namespace etscope::gui
