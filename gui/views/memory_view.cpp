// Memory view: for one plan, every planned tensor as a rectangle, x = byte offset in its arena,
// y = instruction step (time runs down), coloured by role; each arena's peak step is marked and
// the selected instruction's row and tensors are highlighted. The wheel zooms (Shift: bytes only,
// Ctrl: steps only), dragging pans, a double click shows everything again. Beside the map, each
// arena's live bytes per step on the same step axis.
#include <imgui.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "model/text_format.h"
#include "views/palette.h"
#include "views/views.h"

namespace etscope::gui {
namespace {

constexpr inspect::TensorRole kRoles[] = {inspect::TensorRole::kInput,    inspect::TensorRole::kWeight,
                                          inspect::TensorRole::kBuffer,   inspect::TensorRole::kGradient,
                                          inspect::TensorRole::kOutput,   inspect::TensorRole::kActivation};

void DrawLegend(const MemoryModel& model) {
  for (inspect::TensorRole role : kRoles) {
    const size_t count = model.role_counts()[static_cast<size_t>(role)];
    if (count == 0) continue;
    const ImVec2 p = ImGui::GetCursorScreenPos();
    const float h = ImGui::GetTextLineHeight();
    ImGui::GetWindowDrawList()->AddRectFilled(ImVec2(p.x, p.y + 2), ImVec2(p.x + h - 2, p.y + h), palette::role(role), 2.0f);
    ImGui::Dummy(ImVec2(h, h));
    ImGui::SameLine();
    ImGui::Text("%s (%zu)", inspect::to_string(role), count);
    ImGui::SameLine(0, 18);
  }
  ImGui::NewLine();
}

}  // namespace

void DrawMemoryView(const Session& session, ViewState& state) {
  if (session.plans.empty()) {
    ImGui::TextDisabled("The program has no execution plans.");
    return;
  }
  state.plan = std::min(state.plan, session.plans.size() - 1);
  if (session.plans.size() > 1) {
    DrawPlanPicker(session, state);
    ImGui::SameLine();
  }
  if (!session.memory[state.plan]) {
    ImGui::TextDisabled("The memory plan of '%s' could not be analysed (see the error).",
                        session.plans[state.plan].name().c_str());
    return;
  }
  const MemoryModel& model = *session.memory[state.plan];
  const ProgramModel& program = session.plans[state.plan];
  const inspect::MemoryPlan& plan = model.plan();
  const int64_t T = plan.instruction_count();

  ImGui::Text("method '%s': %lld instructions, %zu planned tensors, %zu arena%s", plan.plan_name().c_str(),
              static_cast<long long>(T), plan.tensors().size(), model.columns().size(),
              model.columns().size() == 1 ? "" : "s");
  for (const ArenaColumn& col : model.columns()) {
    ImGui::SameLine(0, 24);
    ImGui::TextDisabled("arena %u: %s, peak %s at step %lld (%.0f%%)", col.memory_id, bytes_text(col.size).c_str(),
                        bytes_text(col.peak_bytes).c_str(), static_cast<long long>(col.peak_step), col.utilisation * 100.0);
  }
  if (!plan.conflicts().empty()) {
    ImGui::PushStyleColor(ImGuiCol_Text, palette::kConflict);
    ImGui::Text("%zu conflict(s): tensors overlapping while both are live (outlined in red)", plan.conflicts().size());
    ImGui::PopStyleColor();
  }
  DrawLegend(model);
  MemoryViewState& mv = state.memory;
  if (mv.plan != state.plan) mv = MemoryViewState{}, mv.plan = state.plan;
  const bool zoomed = mv.u0 > 0 || mv.u1 < 1 || mv.f0 > 0 || mv.f1 < 1;
  if (zoomed) {
    ImGui::SameLine();
    if (ImGui::SmallButton("show all")) mv = MemoryViewState{}, mv.plan = state.plan;
  } else {
    ImGui::SameLine();
    ImGui::TextDisabled("wheel zooms (Shift: bytes, Ctrl: steps), drag pans");
  }

  if (model.columns().empty()) {
    ImGui::TextDisabled("This plan has no memory arenas (nothing is memory-planned).");
    return;
  }

  // Plot geometry: the map on the left, the live-bytes track on the right, one step axis.
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  const float line = ImGui::GetTextLineHeight();
  const float track_w = std::clamp(avail.x * 0.16f, 120.0f, 260.0f);
  const float left = 64, right = track_w + 28, top = line + 10, bottom = line * 2 + 16;
  const ImVec2 p0(origin.x + left, origin.y + top);
  const ImVec2 p1(origin.x + std::max(left + 50, avail.x - right), origin.y + std::max(top + 50, avail.y - bottom));
  const float plot_w = p1.x - p0.x, plot_h = p1.y - p0.y;
  const double rows = static_cast<double>(model.step_count());
  // Visible window: u (unit x across every arena column) in [u0, u1], f (fraction of the rows,
  // step -1 at 0) in [f0, f1].
  const double uw = mv.u1 - mv.u0, fh = mv.f1 - mv.f0;
  const float row_h = static_cast<float>(plot_h / (rows * fh));
  auto y_of = [&](int64_t step) {
    return p0.y + static_cast<float>((static_cast<double>(step + 1) / rows - mv.f0) / fh * plot_h);
  };
  auto ux = [&](double u) { return p0.x + static_cast<float>((u - mv.u0) / uw * plot_w); };
  auto col_x0 = [&](const ArenaColumn& c) { return ux(c.x0); };
  auto col_w = [&](const ArenaColumn& c) { return static_cast<float>((c.x1 - c.x0) / uw * plot_w); };
  auto x_of = [&](const ArenaColumn& c, double byte) {
    return col_x0(c) + static_cast<float>(byte / static_cast<double>(std::max<uint64_t>(1, c.size))) * col_w(c);
  };
  auto step_at = [&](float y) {
    return static_cast<int64_t>(std::floor((mv.f0 + (y - p0.y) / plot_h * fh) * rows)) - 1;
  };

  ImGui::InvisibleButton("memory_plot", ImVec2(avail.x, std::max(avail.y, 120.0f)));
  const bool hovered = ImGui::IsItemHovered();
  const ImGuiIO& io = ImGui::GetIO();
  const ImVec2 m = io.MousePos;
  const bool in_map = m.x >= p0.x && m.x < p1.x && m.y >= p0.y && m.y < p1.y;
  const bool in_track = m.x >= p1.x + 28 && m.y >= p0.y && m.y < p1.y;
  // Zoom around the mouse; pan by dragging; a double click shows everything.
  if (hovered && io.MouseWheel != 0 && (in_map || in_track)) {
    const double k = std::pow(0.8, io.MouseWheel);
    const bool bytes = !io.KeyCtrl && in_map, steps = !io.KeyShift;
    if (bytes) {
      const double at = mv.u0 + (m.x - p0.x) / plot_w * uw;
      const double w = std::clamp(uw * k, 1e-9, 1.0);
      mv.u0 = std::clamp(at - (at - mv.u0) / uw * w, 0.0, 1.0 - w), mv.u1 = mv.u0 + w;
    }
    if (steps) {
      const double at = mv.f0 + (m.y - p0.y) / plot_h * fh;
      const double h = std::clamp(fh * k, std::min(1.0, 3.0 / rows), 1.0);
      mv.f0 = std::clamp(at - (at - mv.f0) / fh * h, 0.0, 1.0 - h), mv.f1 = mv.f0 + h;
    }
  }
  if (ImGui::IsItemActive() && ImGui::IsMouseDragging(ImGuiMouseButton_Left, 3.0f)) {
    const double du = -io.MouseDelta.x / plot_w * uw, df = -io.MouseDelta.y / plot_h * fh;
    mv.u0 = std::clamp(mv.u0 + du, 0.0, 1.0 - uw), mv.u1 = mv.u0 + uw;
    mv.f0 = std::clamp(mv.f0 + df, 0.0, 1.0 - fh), mv.f1 = mv.f0 + fh;
    mv.dragged = true;
  }
  if (hovered && ImGui::IsMouseDoubleClicked(ImGuiMouseButton_Left)) mv = MemoryViewState{}, mv.plan = state.plan;
  const bool clicked = hovered && ImGui::IsMouseReleased(ImGuiMouseButton_Left) && !mv.dragged && in_map;
  if (!ImGui::IsMouseDown(ImGuiMouseButton_Left)) mv.dragged = false;

  ImDrawList* dl = ImGui::GetWindowDrawList();
  dl->PushClipRect(origin, ImVec2(origin.x + avail.x, origin.y + avail.y), true);
  const int64_t selected_step = program.step_of(state.selected);
  const int64_t first_visible = std::max<int64_t>(-1, step_at(p0.y)), last_visible = std::min<int64_t>(T, step_at(p1.y));

  // Arenas: background, title, byte ticks over the visible bytes.
  dl->PushClipRect(ImVec2(p0.x, origin.y), ImVec2(p1.x, origin.y + avail.y), true);
  for (const ArenaColumn& col : model.columns()) {
    const float x0 = col_x0(col), w = col_w(col);
    if (x0 > p1.x || x0 + w < p0.x) continue;
    dl->AddRectFilled(ImVec2(x0, p0.y), ImVec2(x0 + w, p1.y), palette::kPlotBackground);
    char title[128];
    std::snprintf(title, sizeof title, "arena %u (%s)", col.memory_id, bytes_text(col.size).c_str());
    dl->AddText(ImVec2(std::max(x0, p0.x), origin.y + 2), ImGui::GetColorU32(ImGuiCol_Text), title);
    const float vx0 = std::max(x0, p0.x), vx1 = std::min(x0 + w, p1.x);
    const double b0 = (vx0 - x0) / w * static_cast<double>(col.size), b1 = (vx1 - x0) / w * static_cast<double>(col.size);
    const int max_ticks = std::max(2, static_cast<int>((vx1 - vx0) / 90.0f));
    for (const Tick& t : byte_ticks(b0, b1, max_ticks)) {
      const float tx = x_of(col, t.value);
      dl->AddLine(ImVec2(tx, p0.y), ImVec2(tx, p1.y), palette::kGrid);
      dl->AddLine(ImVec2(tx, p1.y), ImVec2(tx, p1.y + 5), palette::kAxis);
      const float tw = ImGui::CalcTextSize(t.label.c_str()).x;
      dl->AddText(ImVec2(std::clamp(tx - tw * 0.5f, vx0, vx1 - tw), p1.y + 6), palette::kAxis, t.label.c_str());
    }
  }
  dl->PopClipRect();
  const char* x_title = "byte offset in arena";
  dl->AddText(ImVec2(p0.x + plot_w * 0.5f - ImGui::CalcTextSize(x_title).x * 0.5f, p1.y + line + 10),
              ImGui::GetColorU32(ImGuiCol_TextDisabled), x_title);

  // Step axis: start, end and round steps at least ~2.5 lines apart, over the visible steps.
  const int max_step_ticks = std::max(2, static_cast<int>(plot_h / (line * 2.5f)));
  std::vector<std::pair<int64_t, std::string>> step_ticks;
  if (first_visible <= -1) step_ticks.push_back({-1, "start"});
  if (last_visible >= T) step_ticks.push_back({T, "end"});
  const int64_t span = std::max<int64_t>(1, last_visible - first_visible);
  const int64_t every = std::max<int64_t>(1, static_cast<int64_t>(nice_step(static_cast<double>(span), max_step_ticks)));
  for (int64_t step = std::max<int64_t>(0, (first_visible + every - 1) / every * every); step < std::min(T, last_visible + 1); step += every) {
    step_ticks.push_back({step, std::to_string(step)});
  }
  for (const auto& [step, label] : step_ticks) {
    const float ty = y_of(step) + row_h * 0.5f;
    if (ty < p0.y || ty > p1.y) continue;
    if (step >= 0 && step < T && (std::fabs(ty - (y_of(-1) + row_h * 0.5f)) < line * 1.2f || std::fabs(ty - (y_of(T) + row_h * 0.5f)) < line * 1.2f)) {
      continue;
    }
    const float tw = ImGui::CalcTextSize(label.c_str()).x;
    dl->AddText(ImVec2(p0.x - 8 - tw, ty - line * 0.5f), palette::kAxis, label.c_str());
    dl->AddLine(ImVec2(p0.x - 5, ty), ImVec2(p0.x, ty), palette::kAxis);
  }
  dl->AddText(ImVec2(origin.x, origin.y + 2), ImGui::GetColorU32(ImGuiCol_TextDisabled), "step");

  // Tensors, widest first so thin ones stay on top; none narrower or shorter than kMinPx.
  constexpr float kMinPx = 3.0f;
  dl->PushClipRect(p0, p1, true);
  const bool labels = row_h >= line * 0.9f;
  auto rect_box = [&](const MemoryRect& rect, ImVec2& a, ImVec2& b) {
    const ArenaColumn& col = model.columns()[rect.column];
    float x0 = x_of(col, static_cast<double>(rect.begin)), x1 = x_of(col, static_cast<double>(rect.end));
    if (x1 - x0 < kMinPx) {
      const float mid = (x0 + x1) * 0.5f;
      x0 = mid - kMinPx * 0.5f, x1 = mid + kMinPx * 0.5f;
    }
    float y0 = y_of(rect.first_step), y1 = y_of(rect.last_step + 1);
    if (y1 - y0 < kMinPx) y1 = y0 + kMinPx;
    a = ImVec2(x0, y0), b = ImVec2(x1, y1);
  };
  for (uint32_t r : model.draw_order()) {
    const MemoryRect& rect = model.rects()[r];
    if (rect.last_step < first_visible || rect.first_step > last_visible) continue;
    ImVec2 a, b;
    rect_box(rect, a, b);
    if (b.x < p0.x || a.x > p1.x) continue;
    const ImU32 fill = palette::role(rect.role);
    dl->AddRectFilled(a, b, (fill & ~IM_COL32_A_MASK) | IM_COL32(0, 0, 0, 225));
    if (b.x - a.x > 4 && b.y - a.y > 4) dl->AddRect(a, b, IM_COL32(20, 22, 28, 200));
    if (rect.conflict) dl->AddRect(a, b, palette::kConflict, 0, 0, 2.0f);
    if (labels) {
      char text[24];
      std::snprintf(text, sizeof text, "%%%d", model.plan().tensors()[rect.tensor].value);
      const ImVec2 ts = ImGui::CalcTextSize(text);
      if (ts.x + 6 < b.x - a.x && ts.y + 2 < b.y - a.y) {
        dl->AddText(ImVec2(std::max(a.x, p0.x) + 3, std::max(a.y, p0.y) + 1), palette::text_on(fill), text);
      }
    }
  }
  // Selected instruction: a translucent band across every arena, over the tensors, and an
  // outline around the tensors it reads and writes.
  if (selected_step >= 0) {
    dl->AddRectFilled(ImVec2(p0.x, y_of(selected_step)), ImVec2(p1.x, y_of(selected_step) + std::max(row_h, 2.0f)),
                      palette::kSelectionFill);
  }
  for (uint32_t r : model.rects_at_step(selected_step)) {
    ImVec2 a, b;
    rect_box(model.rects()[r], a, b);
    dl->AddRect(a, b, palette::kSelection, 0, 0, 2.0f);
  }

  // Peak of each arena: a dashed red line at its step.
  for (const ArenaColumn& col : model.columns()) {
    if (col.peak_step < -1) continue;
    const float y = y_of(col.peak_step) + row_h * 0.5f;
    const float x0 = std::max(col_x0(col), p0.x), x1 = std::min(col_x0(col) + col_w(col), p1.x);
    if (x1 <= x0) continue;
    for (float x = x0; x < x1; x += 10) dl->AddLine(ImVec2(x, y), ImVec2(std::min(x + 6, x1), y), palette::kPeak, 2.0f);
    char text[96];
    std::snprintf(text, sizeof text, "peak %s at step %lld", bytes_text(col.peak_bytes).c_str(),
                  static_cast<long long>(col.peak_step));
    const ImVec2 ts = ImGui::CalcTextSize(text);
    const ImVec2 tp(std::max(x0 + 3, x1 - ts.x - 6), y - ts.y - 3 < p0.y ? y + 3 : y - ts.y - 3);
    dl->AddRectFilled(ImVec2(tp.x - 3, tp.y - 1), ImVec2(tp.x + ts.x + 3, tp.y + ts.y + 1), IM_COL32(30, 32, 38, 220), 3);
    dl->AddText(tp, palette::kPeakText, text);
  }
  dl->PopClipRect();

  // Live bytes per step (MemoryPlan's, per arena), on the map's step axis.
  {
    const float tx0 = p1.x + 28, tx1 = origin.x + avail.x - 8;
    dl->AddRectFilled(ImVec2(tx0, p0.y), ImVec2(tx1, p1.y), palette::kPlotBackground);
    dl->AddText(ImVec2(tx0, origin.y + 2), ImGui::GetColorU32(ImGuiCol_Text), "live bytes");
    uint64_t top_bytes = 1;
    for (const ArenaColumn& col : model.columns()) top_bytes = std::max({top_bytes, col.peak_bytes, col.size});
    for (const Tick& t : byte_ticks(0, static_cast<double>(top_bytes), std::max(2, static_cast<int>((tx1 - tx0) / 80)))) {
      const float x = tx0 + static_cast<float>(t.value / static_cast<double>(top_bytes)) * (tx1 - tx0);
      dl->AddLine(ImVec2(x, p0.y), ImVec2(x, p1.y), palette::kGrid);
      const float tw = ImGui::CalcTextSize(t.label.c_str()).x;
      dl->AddText(ImVec2(std::clamp(x - tw * 0.5f, tx0, tx1 - tw), p1.y + 6), palette::kAxis, t.label.c_str());
    }
    dl->PushClipRect(ImVec2(tx0, p0.y), ImVec2(tx1, p1.y), true);
    static constexpr ImU32 kArenaLine[] = {IM_COL32(90, 160, 230, 255), IM_COL32(240, 170, 60, 255), IM_COL32(100, 200, 120, 255),
                                           IM_COL32(200, 120, 200, 255)};
    for (size_t c = 0; c < model.columns().size(); ++c) {
      const ArenaColumn& col = model.columns()[c];
      const std::vector<uint64_t>& live = plan.arenas()[col.arena].live_bytes;
      const ImU32 colour = kArenaLine[c % 4];
      // A step's bytes hold over its row: a staircase, filled for a single arena.
      std::vector<ImVec2> points;
      for (int64_t step = first_visible; step <= last_visible; ++step) {
        const size_t i = static_cast<size_t>(step + 1);
        if (i >= live.size()) break;
        const float x = tx0 + static_cast<float>(static_cast<double>(live[i]) / static_cast<double>(top_bytes)) * (tx1 - tx0);
        const float ya = y_of(step), yb = y_of(step) + row_h;
        if (model.columns().size() == 1) dl->AddRectFilled(ImVec2(tx0, ya), ImVec2(x, yb), (colour & ~IM_COL32_A_MASK) | IM_COL32(0, 0, 0, 90));
        points.emplace_back(x, ya);
        points.emplace_back(x, yb);
      }
      if (points.size() > 1) dl->AddPolyline(points.data(), static_cast<int>(points.size()), colour, 0, 1.5f);
      if (col.size > 0) {
        const float sx = tx0 + static_cast<float>(static_cast<double>(col.size) / static_cast<double>(top_bytes)) * (tx1 - tx0);
        for (float y = p0.y; y < p1.y; y += 8) dl->AddLine(ImVec2(sx, y), ImVec2(sx, std::min(y + 4, p1.y)), colour);
      }
    }
    if (selected_step >= 0) {
      dl->AddRectFilled(ImVec2(tx0, y_of(selected_step)), ImVec2(tx1, y_of(selected_step) + std::max(row_h, 2.0f)), palette::kSelectionFill);
    }
    dl->PopClipRect();
    if (hovered && in_track) {
      const int64_t step = step_at(m.y);
      if (step >= -1 && step <= T) {
        ImGui::BeginTooltip();
        ImGui::Text("step %lld%s", static_cast<long long>(step), step == -1 ? " (before the first instruction)" : step == T ? " (after the last)" : "");
        for (const ArenaColumn& col : model.columns()) {
          const std::vector<uint64_t>& live = plan.arenas()[col.arena].live_bytes;
          const size_t i = static_cast<size_t>(step + 1);
          if (i < live.size()) ImGui::Text("arena %u: %s live of %s", col.memory_id, bytes_text(live[i]).c_str(), bytes_text(col.size).c_str());
        }
        ImGui::TextDisabled("dashed: the arena's size");
        ImGui::EndTooltip();
      }
    }
  }

  // Hover: tooltip for the tensor under the mouse; click selects the instruction at that step.
  if (hovered && in_map) {
    const int64_t step = step_at(m.y);
    for (size_t c = 0; c < model.columns().size(); ++c) {
      const ArenaColumn& col = model.columns()[c];
      if (m.x < col_x0(col) || m.x >= col_x0(col) + col_w(col)) continue;
      const double bytes_per_px = static_cast<double>(col.size) / std::max(1.0f, col_w(col));
      const double byte = static_cast<double>(m.x - col_x0(col)) * bytes_per_px;
      const int64_t r = model.hit(c, byte, step, bytes_per_px * kMinPx * 0.5);
      if (r >= 0) {
        ImVec2 a, b;
        rect_box(model.rects()[static_cast<size_t>(r)], a, b);
        dl->AddRect(a, b, IM_COL32(255, 255, 255, 255), 0, 0, 1.5f);
        ImGui::BeginTooltip();
        ImGui::TextUnformatted(model.describe(static_cast<size_t>(r)).c_str());
        if (step >= 0 && step < T) {
          ImGui::Separator();
          ImGui::TextDisabled("step %lld: %s (click to select)", static_cast<long long>(step),
                              plan.step_labels()[static_cast<size_t>(step)].c_str());
        }
        ImGui::EndTooltip();
      } else if (step >= 0 && step < T) {
        ImGui::SetTooltip("step %lld: %s\nclick to select this instruction", static_cast<long long>(step),
                          plan.step_labels()[static_cast<size_t>(step)].c_str());
      }
    }
    if (clicked && step >= 0 && step < T) {
      const InstructionRef ref = program.at_step(step);
      state.select(ref == state.selected ? InstructionRef{} : ref);
    }
  }
  dl->PopClipRect();
}

}  // namespace etscope::gui
