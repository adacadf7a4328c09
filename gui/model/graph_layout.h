// GraphLayout: positions for the Graph view, computed by Graphviz's dot (libgvc, Debian's
// libgraphviz-dev): boxes for the items, Bezier paths for the edges, rectangles for the module
// groups. Items are graph nodes, module groups drawn collapsed as one box, and the ops of an
// expanded delegate. Coordinates are points (1/72 inch), y down, origin at the top left.
// Graphviz is not thread-safe: layouts are serialised by a lock inside layout_graph(), and one
// Graphviz context serves the whole process.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace etscope::gui {

struct LayoutPoint {
  float x = 0, y = 0;
};

/// What one box stands for.
struct LayoutItem {
  enum class Kind : uint8_t { kNode, kGroup, kDelegateOp };
  Kind kind = Kind::kNode;
  uint32_t index = 0;   ///< kNode / kDelegateOp: graph node; kGroup: group.
  uint32_t op = 0;      ///< kDelegateOp: which of the node's delegated ops.
  int32_t cluster = -1; ///< The request's cluster it is drawn inside, or -1.
  std::string label;    ///< First line.
  std::string detail;   ///< Second line (shape, op count); may be empty.
};

struct LayoutRequest {
  std::vector<LayoutItem> items;
  struct Edge {
    uint32_t from = 0, to = 0;  ///< Item indices.
  };
  std::vector<Edge> edges;
  struct Cluster {
    int32_t parent = -1;  ///< Enclosing cluster, or -1.
    std::string label;
    int32_t group = -1;          ///< The module group it draws, or -1.
    int32_t delegate_node = -1;  ///< The expanded delegate it draws, or -1.
  };
  std::vector<Cluster> clusters;
};

struct LayoutBox {
  float x = 0, y = 0, w = 0, h = 0;  ///< Top left and size.
};

struct GraphLayout {
  std::vector<LayoutItem> items;
  std::vector<LayoutBox> boxes;     ///< Per item.
  struct EdgePath {
    uint32_t from = 0, to = 0;
    /// Cubic Bezier control points: p0, then (c1, c2, p) per segment; the arrow's tip last.
    std::vector<LayoutPoint> points;
    LayoutPoint tip;
    bool has_tip = false;
  };
  std::vector<EdgePath> edges;
  std::vector<LayoutBox> clusters;  ///< Per request cluster (zero-size when it held nothing).
  std::vector<LayoutRequest::Cluster> cluster_info;  ///< The request's clusters.
  float width = 0, height = 0;
  double milliseconds = 0;          ///< Time Graphviz took.
  std::string error;                ///< Non-empty when Graphviz failed; then nothing is laid out.
};

/// The most boxes layout_graph() gives Graphviz: dot's time grows faster than linearly, and a
/// viewer must not hang on a hostile or gigantic program.
inline constexpr size_t kMaxLayoutItems = 20000;

/// A layout wider than this many times its height is laid out again left to right.
inline constexpr double kMaxAspectRatio = 3.0;
/// The shape layout_graph() aims for when it has to choose: a typical viewer window's.
inline constexpr double kWindowAspectRatio = 1.6;

/// Width over height of a laid-out graph (1 when empty).
double aspect_ratio(const GraphLayout& layout);

/// Lays out `request` with dot, top to bottom; when that is wider than kMaxAspectRatio (few ranks
/// of many boxes, whose labels would shrink to a few pixels in a window), left to right instead if
/// that shape is nearer kWindowAspectRatio. Box sizes follow the labels' lengths. More than
/// kMaxLayoutItems boxes: nothing is laid out and `error` says so.
GraphLayout layout_graph(const LayoutRequest& request);

}  // namespace etscope::gui
