// Graph view: the plan's operator graph laid out by Graphviz (GraphModel), one box per kernel or
// delegate call, method inputs and outputs, nn.Module groups as titled frames (click a title to
// collapse a module into one box, click that box to open it again), a delegate expanding into the
// ops lowered into it. Boxes are coloured by time share, numeric gap or live bytes; the wheel
// zooms around the pointer, dragging pans, a click selects the instruction everywhere.
#include <imgui.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "etscope/core/text.h"
#include "model/text_format.h"
#include "views/palette.h"
#include "views/views.h"

namespace etscope::gui {
namespace {

constexpr const char* kColourNames[] = {"none", "time share", "numeric gap", "live bytes"};
constexpr ImU32 kNodeFill = IM_COL32(58, 66, 84, 255);
constexpr ImU32 kNodeBorder = IM_COL32(120, 130, 150, 255);
constexpr ImU32 kIoFill = IM_COL32(40, 90, 70, 255);
constexpr ImU32 kDelegateBorder = IM_COL32(230, 160, 60, 255);
constexpr ImU32 kGroupFill = IM_COL32(70, 62, 96, 255);
constexpr ImU32 kEdge = IM_COL32(150, 156, 170, 200);
constexpr ImU32 kNoValue = IM_COL32(52, 54, 60, 255);

// A value in [0, 1] as a colour from cool to hot.
ImU32 Heat(float t) {
  t = std::clamp(t, 0.0f, 1.0f);
  const float r = 60 + t * (225 - 60), g = 80 + (t < 0.5f ? t * 2 * (170 - 80) : (170 - (t - 0.5f) * 2 * (170 - 50))),
              b = 130 - t * (130 - 40);
  return IM_COL32(static_cast<int>(r), static_cast<int>(g), static_cast<int>(b), 255);
}

// Per graph node colour values for the chosen colouring, in [0, 1]; NaN where there is none.
void UpdateHeat(const Session& session, const GraphModel& model, ViewState& state) {
  GraphViewState& gv = state.graph;
  const size_t block = session.stats ? (state.stats.block < session.stats->blocks().size() ? state.stats.block : session.stats->default_block())
                                     : SIZE_MAX;
  const void* source = gv.colour == 1 ? static_cast<const void*>(session.stats ? &*session.stats : nullptr)
                       : gv.colour == 2 ? static_cast<const void*>(session.gaps ? &*session.gaps : nullptr)
                                        : static_cast<const void*>(&model);
  if (gv.heat.size() == model.graph().nodes.size() && gv.heat_colour == gv.colour && gv.heat_source == source &&
      gv.heat_block == block && gv.heat_metric == state.gaps.metric) {
    return;
  }
  gv.heat_colour = gv.colour, gv.heat_source = source, gv.heat_block = block, gv.heat_metric = state.gaps.metric;
  const auto& nodes = model.graph().nodes;
  gv.heat.assign(nodes.size(), NAN);
  if (gv.colour == 1 && session.stats && block < session.stats->blocks().size()) {
    // The share of the run of the node's row in Op statistics (StatsModel::row_of); scaled to
    // the largest so the hottest is red.
    std::vector<double> share(nodes.size(), -1.0);
    double top = 0;
    for (size_t i = 0; i < nodes.size(); ++i) {
      const StatsRow* r = session.stats->row_of(block, InstructionRef{nodes[i].chain, nodes[i].instruction});
      if (r == nullptr || r->count == 0) continue;
      share[i] = r->share;
      top = std::max(top, r->share);
    }
    for (size_t i = 0; i < nodes.size(); ++i) {
      if (share[i] >= 0 && top > 0) gv.heat[i] = static_cast<float>(std::sqrt(share[i] / top));
    }
  } else if (gv.colour == 2 && session.gaps) {
    // The gap in the Numeric gaps view's metric: past its threshold red, else by its magnitude.
    const auto metric = static_cast<inspect::GapMetric>(state.gaps.metric);
    for (size_t i = 0; i < nodes.size(); ++i) {
      const auto row = session.gaps->row_of(InstructionRef{nodes[i].chain, nodes[i].instruction});
      if (!row) continue;
      const double g = session.gaps->rows()[*row].gap[static_cast<size_t>(state.gaps.metric)];
      if (std::isnan(g)) continue;
      if (session.gaps->passes(*row, metric, state.gaps.threshold)) {
        gv.heat[i] = 1.0f;
      } else if (metric == inspect::GapMetric::kSNR) {
        gv.heat[i] = static_cast<float>(std::clamp(1.0 - g / 100.0, 0.0, 0.7));
      } else {
        gv.heat[i] = g <= 0 ? 0.0f : static_cast<float>(std::clamp((std::log10(g) + 12.0) / 14.0, 0.0, 0.7));
      }
    }
  } else if (gv.colour == 3 && state.plan < session.memory.size() && session.memory[state.plan]) {
    // Bytes live in the arenas at the node's step, against the plan's peak.
    const inspect::MemoryPlan& plan = session.memory[state.plan]->plan();
    uint64_t peak = 1;
    for (const inspect::Arena& a : plan.arenas()) peak = std::max(peak, a.peak_bytes);
    for (size_t i = 0; i < nodes.size(); ++i) {
      const size_t at = static_cast<size_t>(nodes[i].step + 1);
      uint64_t live = 0;
      for (const inspect::Arena& a : plan.arenas()) live += at < a.live_bytes.size() ? a.live_bytes[at] : 0;
      gv.heat[i] = static_cast<float>(static_cast<double>(live) / static_cast<double>(peak));
    }
  }
  // A collapsed module takes its hottest member's colour: each node's value goes up its groups.
  gv.group_heat.assign(model.groups().size(), NAN);
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (std::isnan(gv.heat[i])) continue;
    for (int32_t g = model.group_of(static_cast<uint32_t>(i)); g >= 0; g = model.groups()[static_cast<size_t>(g)].parent) {
      float& h = gv.group_heat[static_cast<size_t>(g)];
      h = std::isnan(h) ? gv.heat[i] : std::max(h, gv.heat[i]);
    }
  }
}

struct Canvas {
  ImVec2 origin, size;
  double cx, cy, zoom;
  ImVec2 to_screen(float x, float y) const {
    return ImVec2(origin.x + size.x * 0.5f + static_cast<float>((x - cx) * zoom), origin.y + size.y * 0.5f + static_cast<float>((y - cy) * zoom));
  }
  double to_x(float sx) const { return cx + (sx - origin.x - size.x * 0.5f) / zoom; }
  double to_y(float sy) const { return cy + (sy - origin.y - size.y * 0.5f) / zoom; }
};

// The whole graph in the window; with `readable`, a graph too big for readable boxes opens at
// its inputs instead, as wide as the window allows up to full size.
void Fit(const GraphLayout& layout, ImVec2 size, GraphViewState& gv, bool readable) {
  gv.cx = layout.width * 0.5, gv.cy = layout.height * 0.5;
  const double zx = (size.x - 20) / std::max(1.0f, layout.width), zy = (size.y - 20) / std::max(1.0f, layout.height);
  gv.zoom = std::clamp(std::min(zx, zy), 0.005, 1.5);
  // Labels below ~11 px (zoom 0.85 of the 13 px font) are not read but guessed: a graph that small
  // opens at full legibility and is panned instead.
  constexpr double kReadableZoom = 0.85;
  if (readable && gv.zoom < kReadableZoom) {
    gv.zoom = std::clamp(zx, kReadableZoom, 1.0);
    gv.cx = std::min<double>(layout.width * 0.5, (size.x * 0.5 - 10) / gv.zoom);
    gv.cy = (size.y * 0.5 - 10) / gv.zoom;
  }
}

std::string NodeTooltip(const Session& session, const GraphModel& model, uint32_t index, const ViewState& state) {
  const inspect::ProgramGraphNode& n = model.graph().nodes[index];
  std::string t = n.op;
  if (!n.shape.empty()) t += "  ->  " + n.shape;
  if (n.instruction >= 0) t += "\ninstruction " + std::to_string(n.instruction) + (n.chain > 0 ? ", chain " + std::to_string(n.chain) : "");
  if (!n.modules.empty()) {
    t += "\nmodule ";
    for (size_t k = 0; k < n.modules.size(); ++k) t += (k ? " > " : "") + n.modules[k].path;
  }
  if (!n.constants.empty()) t += "\nreads " + std::to_string(n.constants.size()) + " constant or parameter tensor(s)";
  if (!n.delegated_ops.empty()) {
    t += "\nlowered ops:";
    for (size_t k = 0; k < n.delegated_ops.size() && k < 12; ++k) t += "\n  " + n.delegated_ops[k];
    if (n.delegated_ops.size() > 12) t += "\n  ... " + std::to_string(n.delegated_ops.size() - 12) + " more";
    t += "\ndouble-click to expand or fold";
  }
  if (session.stats && n.instruction >= 0) {
    const size_t block = state.stats.block < session.stats->blocks().size() ? state.stats.block : session.stats->default_block();
    if (const StatsRow* r = session.stats->row_of(block, InstructionRef{n.chain, n.instruction}); r != nullptr && r->count > 0) {
      char line[160];
      std::snprintf(line, sizeof line, "\n%s: avg %s, %.1f%% of the run", r->name.c_str(), duration_text_us(r->avg_us).c_str(), r->share * 100);
      t += line;
    }
  }
  if (session.gaps && n.instruction >= 0) {
    if (auto row = session.gaps->row_of(InstructionRef{n.chain, n.instruction})) {
      const auto& r = session.gaps->rows()[*row];
      char line[160];
      std::snprintf(line, sizeof line, "\nnumeric gap: L1 %.4g, MSE %.4g, SNR %.2f dB", r.gap[0], r.gap[1], r.gap[2]);
      t += line;
    }
  }
  return t;
}

}  // namespace

void DrawGraphView(const Session& session, ViewState& state) {
  if (session.plans.empty() || session.graphs.size() != session.plans.size()) {
    ImGui::TextDisabled("The program has no execution plans.");
    return;
  }
  state.plan = std::min(state.plan, session.plans.size() - 1);
  const GraphModel& model = *session.graphs[state.plan];
  GraphViewState& gv = state.graph;
  if (gv.plan != state.plan || gv.model != &model) {
    const int colour = gv.colour;
    const bool center = gv.center_on_selection;
    gv = GraphViewState{};
    gv.colour = colour;
    gv.center_on_selection = center;
    gv.plan = state.plan;
    gv.model = &model;
    gv.shape = model.default_shape();
  }
  const std::shared_ptr<const GraphLayout> ready = model.layout_when_ready(gv.shape);
  if (ready && ready != gv.shown) {
    if (!gv.shown) gv.fit = gv.fit_readable = true;
    gv.shown = ready;
  }

  // Toolbar.
  if (session.plans.size() > 1) {
    DrawPlanPicker(session, state);
    ImGui::SameLine();
  }
  ImGui::SetNextItemWidth(140);
  ImGui::Combo("colour", &gv.colour, kColourNames, IM_ARRAYSIZE(kColourNames));
  ImGui::SameLine(0, 16);
  if (!model.groups().empty()) {
    if (ImGui::Button("collapse modules")) {
      gv.shape.collapsed.clear();
      for (size_t g = 0; g < model.groups().size(); ++g) {
        if (model.groups()[g].depth == 0) gv.shape.collapsed.insert(static_cast<int32_t>(g));
      }
    }
    ImGui::SameLine();
    if (ImGui::Button("expand all")) gv.shape.collapsed.clear();
    ImGui::SameLine();
  }
  if (ImGui::Button("fit")) gv.fit = true;
  ImGui::SameLine(0, 16);
  const auto& graph = model.graph();
  ImGui::TextDisabled("%zu nodes, %zu edges%s%s", graph.nodes.size(), graph.edges.size(),
                      model.groups().empty() ? "" : (", " + std::to_string(model.groups().size()) + " modules").c_str(),
                      session.record ? "" : " (an ETRecord adds module groups)");
  if (gv.shown) {
    ImGui::SameLine(0, 16);
    ImGui::TextDisabled("layout %.0f ms%s", gv.shown->milliseconds, ready ? "" : ", laying out the new shape...");
  }
  if (gv.colour == 1 && !session.stats) ImGui::TextDisabled("Time share needs an ETDump.");
  if (gv.colour == 2 && !session.gaps) ImGui::TextDisabled("Numeric gaps need a debug buffer, the ETRecord and AOT intermediates (see the Numeric gaps view).");
  if (!gv.shown) {
    ImGui::TextDisabled("Laying out the graph (Graphviz)...");
    return;
  }
  const GraphLayout& layout = *gv.shown;
  if (!layout.error.empty()) {
    ImGui::TextColored(ImVec4(0.9f, 0.3f, 0.3f, 1), "%s", layout.error.c_str());
    return;
  }
  UpdateHeat(session, model, state);

  // Canvas.
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  const ImVec2 size(std::max(50.0f, ImGui::GetContentRegionAvail().x), std::max(50.0f, ImGui::GetContentRegionAvail().y));
  ImGui::InvisibleButton("graph_canvas", size);
  const bool hovered = ImGui::IsItemHovered();
  const ImGuiIO& io = ImGui::GetIO();
  if (gv.fit) {
    Fit(layout, size, gv, gv.fit_readable);
    gv.fit = false;
    gv.fit_readable = false;
  }
  if (gv.center_on_selection) {
    gv.center_on_selection = false;
    const int32_t node = model.node_of(state.selected);
    for (size_t i = 0; node >= 0 && i < layout.items.size(); ++i) {
      const LayoutItem& item = layout.items[i];
      if (item.kind == LayoutItem::Kind::kNode && item.index == static_cast<uint32_t>(node)) {
        const LayoutBox& b = layout.boxes[i];
        const Canvas c{origin, size, gv.cx, gv.cy, gv.zoom};
        const ImVec2 p = c.to_screen(b.x + b.w * 0.5f, b.y + b.h * 0.5f);
        if (p.x < origin.x || p.y < origin.y || p.x > origin.x + size.x || p.y > origin.y + size.y) {
          gv.cx = b.x + b.w * 0.5, gv.cy = b.y + b.h * 0.5;
        }
      }
    }
  }
  if (hovered && io.MouseWheel != 0) {
    const Canvas c{origin, size, gv.cx, gv.cy, gv.zoom};
    const double mx = c.to_x(io.MousePos.x), my = c.to_y(io.MousePos.y);
    const double z = std::clamp(gv.zoom * std::pow(1.2, io.MouseWheel), 0.01, 6.0);
    gv.cx = mx - (mx - gv.cx) * gv.zoom / z, gv.cy = my - (my - gv.cy) * gv.zoom / z;
    gv.zoom = z;
  }
  bool dragged = false;
  if (ImGui::IsItemActive() && ImGui::IsMouseDragging(ImGuiMouseButton_Left, 3.0f)) {
    gv.cx -= io.MouseDelta.x / gv.zoom, gv.cy -= io.MouseDelta.y / gv.zoom;
    dragged = true;
  }
  const bool clicked = hovered && ImGui::IsMouseReleased(ImGuiMouseButton_Left) && io.MouseDragMaxDistanceSqr[0] < 9.0f && !dragged;
  const bool double_clicked = hovered && ImGui::IsMouseDoubleClicked(ImGuiMouseButton_Left);
  const Canvas c{origin, size, gv.cx, gv.cy, gv.zoom};

  ImDrawList* dl = ImGui::GetWindowDrawList();
  dl->PushClipRect(origin, ImVec2(origin.x + size.x, origin.y + size.y), true);
  dl->AddRectFilled(origin, ImVec2(origin.x + size.x, origin.y + size.y), palette::kPlotBackground);
  const ImVec2 mouse = io.MousePos;
  auto visible = [&](const ImVec2& a, const ImVec2& b) {
    return b.x >= origin.x && a.x <= origin.x + size.x && b.y >= origin.y && a.y <= origin.y + size.y;
  };
  const float font = ImGui::GetFontSize();
  const float text_scale = static_cast<float>(gv.zoom);
  const bool text = font * text_scale >= 7.0f;
  const float text_size = std::min(font * text_scale, font * 1.4f);

  // Module frames and expanded delegates; a click on a frame's title band collapses it.
  int32_t hovered_cluster = -1;
  for (size_t k = 0; k < layout.clusters.size(); ++k) {
    const LayoutBox& b = layout.clusters[k];
    if (b.w <= 0 || b.h <= 0) continue;
    const ImVec2 a = c.to_screen(b.x, b.y), z = c.to_screen(b.x + b.w, b.y + b.h);
    if (!visible(a, z)) continue;
    const auto& info = layout.cluster_info[k];
    const int depth = info.group >= 0 ? model.groups()[static_cast<size_t>(info.group)].depth : 0;
    const ImU32 fill = info.delegate_node >= 0 ? IM_COL32(90, 70, 40, 70) : IM_COL32(120, 110, 170, static_cast<int>(std::max(18, 44 - depth * 6)));
    dl->AddRectFilled(a, z, fill, 4.0f);
    dl->AddRect(a, z, info.delegate_node >= 0 ? kDelegateBorder : IM_COL32(140, 130, 190, 160), 4.0f);
    const float band = std::max(4.0f, 16.0f * text_scale);
    if (hovered && mouse.x >= a.x && mouse.x <= z.x && mouse.y >= a.y && mouse.y <= a.y + band) hovered_cluster = static_cast<int32_t>(k);
    if (text) {
      const std::string title = (info.group >= 0 ? "- " : "") + info.label;
      const ImVec4 clip(a.x, a.y, z.x, z.y);
      dl->AddText(ImGui::GetFont(), text_size, ImVec2(a.x + 4, a.y + 2), IM_COL32(200, 195, 230, 255), title.c_str(), nullptr, 0, &clip);
    }
  }
  if (hovered_cluster >= 0) {
    const auto& info = layout.cluster_info[static_cast<size_t>(hovered_cluster)];
    const LayoutBox& b = layout.clusters[static_cast<size_t>(hovered_cluster)];
    dl->AddRect(c.to_screen(b.x, b.y), c.to_screen(b.x + b.w, b.y + b.h), IM_COL32(230, 225, 255, 255), 4.0f, 0, 1.5f);
    ImGui::SetTooltip("%s\nclick the title to %s", info.label.c_str(), info.group >= 0 ? "collapse this module into one box" : "fold the delegate");
  }

  const int32_t selected_node = model.node_of(state.selected);
  // Edges.
  const float thick = std::clamp(static_cast<float>(gv.zoom) * 1.2f, 1.0f, 2.0f);
  for (const GraphLayout::EdgePath& e : layout.edges) {
    if (e.points.size() < 4) continue;
    ImVec2 lo(1e9f, 1e9f), hi(-1e9f, -1e9f);
    for (const LayoutPoint& p : e.points) lo = ImVec2(std::min(lo.x, p.x), std::min(lo.y, p.y)), hi = ImVec2(std::max(hi.x, p.x), std::max(hi.y, p.y));
    if (e.has_tip) lo = ImVec2(std::min(lo.x, e.tip.x), std::min(lo.y, e.tip.y)), hi = ImVec2(std::max(hi.x, e.tip.x), std::max(hi.y, e.tip.y));
    if (!visible(c.to_screen(lo.x, lo.y), c.to_screen(hi.x, hi.y))) continue;
    const bool selected_edge = selected_node >= 0 &&
                               ((layout.items[e.from].kind == LayoutItem::Kind::kNode && selected_node == static_cast<int32_t>(layout.items[e.from].index)) ||
                                (layout.items[e.to].kind == LayoutItem::Kind::kNode && selected_node == static_cast<int32_t>(layout.items[e.to].index)));
    const ImU32 colour = selected_edge ? palette::kSelection : kEdge;
    ImVec2 p0 = c.to_screen(e.points[0].x, e.points[0].y);
    for (size_t k = 1; k + 2 < e.points.size(); k += 3) {
      const ImVec2 p1 = c.to_screen(e.points[k].x, e.points[k].y), p2 = c.to_screen(e.points[k + 1].x, e.points[k + 1].y),
                   p3 = c.to_screen(e.points[k + 2].x, e.points[k + 2].y);
      dl->AddBezierCubic(p0, p1, p2, p3, colour, thick, gv.zoom < 0.2 ? 4 : 0);
      p0 = p3;
    }
    if (e.has_tip) {
      // An arrowhead from the spline's end to Graphviz's tip.
      const ImVec2 tip = c.to_screen(e.tip.x, e.tip.y);
      const float dx = tip.x - p0.x, dy = tip.y - p0.y, len = std::max(0.001f, std::sqrt(dx * dx + dy * dy));
      const float ux = dx / len, uy = dy / len, w = len * 0.45f;
      dl->AddTriangleFilled(tip, ImVec2(p0.x - uy * w, p0.y + ux * w), ImVec2(p0.x + uy * w, p0.y - ux * w), colour);
    }
  }

  // Boxes.
  const int32_t selected_group = selected_node >= 0 ? model.group_of(static_cast<uint32_t>(selected_node)) : -1;
  int64_t hovered_item = -1;
  for (size_t i = 0; i < layout.items.size(); ++i) {
    const LayoutItem& item = layout.items[i];
    const LayoutBox& b = layout.boxes[i];
    const ImVec2 a = c.to_screen(b.x, b.y), z = c.to_screen(b.x + b.w, b.y + b.h);
    if (!visible(a, z)) continue;
    ImU32 fill = kNodeFill, border = kNodeBorder;
    float heat = NAN;
    bool is_selected = false;
    if (item.kind == LayoutItem::Kind::kGroup) {
      fill = kGroupFill;
      if (item.index < gv.group_heat.size()) heat = gv.group_heat[item.index];
      is_selected = selected_group >= 0 && model.inside(selected_group, static_cast<int32_t>(item.index));
    } else {
      const inspect::ProgramGraphNode& n = model.graph().nodes[item.index];
      if (item.index < gv.heat.size()) heat = gv.heat[item.index];
      if (n.kind == inspect::GraphNodeKind::kInput || n.kind == inspect::GraphNodeKind::kOutput) fill = kIoFill;
      if (n.kind == inspect::GraphNodeKind::kDelegate) border = kDelegateBorder;
      is_selected = selected_node == static_cast<int32_t>(item.index);
    }
    if (gv.colour != 0 && item.kind != LayoutItem::Kind::kGroup) {
      const auto kind = model.graph().nodes[item.index].kind;
      if (kind == inspect::GraphNodeKind::kKernel || kind == inspect::GraphNodeKind::kDelegate) fill = std::isnan(heat) ? kNoValue : Heat(heat);
    } else if (gv.colour != 0 && !std::isnan(heat)) {
      fill = Heat(heat);
    }
    dl->AddRectFilled(a, z, fill, 3.0f);
    dl->AddRect(a, z, is_selected ? palette::kSelection : border, 3.0f, 0, is_selected ? 2.5f : 1.0f);
    if (hovered && mouse.x >= a.x && mouse.x <= z.x && mouse.y >= a.y && mouse.y <= z.y) hovered_item = static_cast<int64_t>(i);
    if (text) {
      const ImVec4 clip(a.x + 2, a.y, z.x - 2, z.y);
      const ImU32 ink = palette::text_on(fill);
      const float line = text_size * 1.05f;
      const float y0 = (a.y + z.y) * 0.5f - (item.detail.empty() ? line * 0.5f : line);
      dl->AddText(ImGui::GetFont(), text_size, ImVec2(a.x + 5 * text_scale, y0), ink, item.label.c_str(), nullptr, 0, &clip);
      if (!item.detail.empty()) {
        dl->AddText(ImGui::GetFont(), text_size * 0.9f, ImVec2(a.x + 5 * text_scale, y0 + line), (ink & ~IM_COL32_A_MASK) | IM_COL32(0, 0, 0, 170),
                    item.detail.c_str(), nullptr, 0, &clip);
      }
    }
  }
  dl->PopClipRect();

  // Tooltip and clicks.
  if (hovered_item >= 0) {
    const LayoutItem& item = layout.items[static_cast<size_t>(hovered_item)];
    if (item.kind == LayoutItem::Kind::kGroup) {
      const GraphGroup& g = model.groups()[item.index];
      ImGui::SetTooltip("%s\n%zu operators inside\nclick to open", g.label.c_str(), g.nodes);
      if (clicked) gv.shape.collapsed.erase(static_cast<int32_t>(item.index));
    } else {
      std::string tip = NodeTooltip(session, model, item.index, state);
      if (item.kind == LayoutItem::Kind::kDelegateOp) tip = model.graph().nodes[item.index].delegated_ops[item.op] + "\n(inside)\n" + tip;
      ImGui::SetTooltip("%s", tip.c_str());
      const inspect::ProgramGraphNode& n = model.graph().nodes[item.index];
      if (double_clicked && n.kind == inspect::GraphNodeKind::kDelegate && !n.delegated_ops.empty()) {
        if (!gv.shape.expanded.erase(item.index)) gv.shape.expanded.insert(item.index);
      } else if (clicked && n.instruction >= 0) {
        const InstructionRef ref{n.chain, n.instruction};
        state.selected = ref == state.selected ? InstructionRef{} : ref;
        state.scroll_program = true;
        state.timeline.scroll_to_selection = true;
      }
    }
  } else if (hovered_cluster >= 0 && clicked) {
    const auto& info = layout.cluster_info[static_cast<size_t>(hovered_cluster)];
    if (info.group >= 0) gv.shape.collapsed.insert(info.group);
    if (info.delegate_node >= 0) gv.shape.expanded.erase(static_cast<uint32_t>(info.delegate_node));
  } else if (double_clicked) {
    gv.fit = true;
  }
}

}  // namespace etscope::gui
