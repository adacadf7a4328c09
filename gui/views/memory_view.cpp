// Memory view: for one plan, every planned tensor as a rectangle, x = byte offset in its arena,
// y = instruction step (time runs down), coloured by role; each arena's peak step is marked and
// the selected instruction's row and tensors are highlighted.
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

  if (model.columns().empty()) {
    ImGui::TextDisabled("This plan has no memory arenas (nothing is memory-planned).");
    return;
  }

  // Plot geometry.
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  const float line = ImGui::GetTextLineHeight();
  const float left = 64, right = 16, top = line + 10, bottom = line * 2 + 16;
  const ImVec2 p0(origin.x + left, origin.y + top);
  const ImVec2 p1(origin.x + std::max(left + 50, avail.x - right), origin.y + std::max(top + 50, avail.y - bottom));
  const float plot_w = p1.x - p0.x, plot_h = p1.y - p0.y;
  const double rows = static_cast<double>(model.step_count());
  const float row_h = static_cast<float>(plot_h / rows);
  auto y_of = [&](int64_t step) { return p0.y + static_cast<float>(static_cast<double>(step + 1) * row_h); };
  auto col_x0 = [&](const ArenaColumn& c) { return p0.x + static_cast<float>(c.x0) * plot_w; };
  auto col_w = [&](const ArenaColumn& c) { return static_cast<float>(c.x1 - c.x0) * plot_w; };
  auto x_of = [&](const ArenaColumn& c, double byte) {
    return col_x0(c) + static_cast<float>(byte / static_cast<double>(std::max<uint64_t>(1, c.size))) * col_w(c);
  };

  ImGui::InvisibleButton("memory_plot", ImVec2(avail.x, std::max(avail.y, 120.0f)));
  const bool hovered = ImGui::IsItemHovered();
  const bool clicked = ImGui::IsItemClicked(ImGuiMouseButton_Left);
  ImDrawList* dl = ImGui::GetWindowDrawList();
  dl->PushClipRect(origin, ImVec2(origin.x + avail.x, origin.y + avail.y), true);

  const int64_t selected_step = program.step_of(state.selected);
  // Arenas: background, title, byte ticks.
  for (const ArenaColumn& col : model.columns()) {
    const float x0 = col_x0(col), w = col_w(col);
    dl->AddRectFilled(ImVec2(x0, p0.y), ImVec2(x0 + w, p1.y), palette::kPlotBackground);
    char title[128];
    std::snprintf(title, sizeof title, "arena %u (%s)", col.memory_id, bytes_text(col.size).c_str());
    dl->AddText(ImVec2(x0, origin.y + 2), ImGui::GetColorU32(ImGuiCol_Text), title);
    const int max_ticks = std::max(2, static_cast<int>(w / 90.0f));
    for (const Tick& t : byte_ticks(0, static_cast<double>(col.size), max_ticks)) {
      const float tx = x_of(col, t.value);
      dl->AddLine(ImVec2(tx, p0.y), ImVec2(tx, p1.y), palette::kGrid);
      dl->AddLine(ImVec2(tx, p1.y), ImVec2(tx, p1.y + 5), palette::kAxis);
      const float tw = ImGui::CalcTextSize(t.label.c_str()).x;
      dl->AddText(ImVec2(std::min(tx - tw * 0.5f, x0 + w - tw), p1.y + 6), palette::kAxis, t.label.c_str());
    }
  }
  const char* x_title = "byte offset in arena";
  dl->AddText(ImVec2(p0.x + plot_w * 0.5f - ImGui::CalcTextSize(x_title).x * 0.5f, p1.y + line + 10),
              ImGui::GetColorU32(ImGuiCol_TextDisabled), x_title);

  // Step axis: start, end and round steps at least ~2.5 lines apart.
  const int max_step_ticks = std::max(2, static_cast<int>(plot_h / (line * 2.5f)));
  std::vector<std::pair<int64_t, std::string>> step_ticks{{-1, "start"}, {T, "end"}};
  const int64_t every = std::max<int64_t>(1, static_cast<int64_t>(nice_step(static_cast<double>(T), max_step_ticks)));
  for (int64_t step = 0; step < T; step += every) step_ticks.push_back({step, std::to_string(step)});
  for (const auto& [step, label] : step_ticks) {
    const float ty = y_of(step) + row_h * 0.5f;
    if (step >= 0 && step < T && (std::fabs(ty - y_of(-1)) < line * 1.2f || std::fabs(ty - y_of(T)) < line * 1.2f)) {
      continue;
    }
    const float tw = ImGui::CalcTextSize(label.c_str()).x;
    dl->AddText(ImVec2(p0.x - 8 - tw, ty - line * 0.5f), palette::kAxis, label.c_str());
    dl->AddLine(ImVec2(p0.x - 5, ty), ImVec2(p0.x, ty), palette::kAxis);
  }
  dl->AddText(ImVec2(origin.x, origin.y + 2), ImGui::GetColorU32(ImGuiCol_TextDisabled), "step");

  // Tensors.
  const bool labels = row_h >= line * 0.9f;
  for (size_t r = 0; r < model.rects().size(); ++r) {
    const MemoryRect& rect = model.rects()[r];
    const ArenaColumn& col = model.columns()[rect.column];
    const float rx0 = x_of(col, static_cast<double>(rect.begin));
    const float rx1 = std::max(rx0 + 1.0f, x_of(col, static_cast<double>(rect.end)));
    const float ry0 = y_of(rect.first_step);
    const float ry1 = std::max(ry0 + 1.0f, y_of(rect.last_step + 1));
    const ImU32 fill = palette::role(rect.role);
    dl->AddRectFilled(ImVec2(rx0, ry0), ImVec2(rx1, ry1), (fill & ~IM_COL32_A_MASK) | IM_COL32(0, 0, 0, 225));
    if (rx1 - rx0 > 3 && ry1 - ry0 > 3) dl->AddRect(ImVec2(rx0, ry0), ImVec2(rx1, ry1), IM_COL32(20, 22, 28, 200));
    if (rect.conflict) dl->AddRect(ImVec2(rx0, ry0), ImVec2(rx1, ry1), palette::kConflict, 0, 0, 2.0f);
    if (labels) {
      char text[24];
      std::snprintf(text, sizeof text, "%%%d", model.plan().tensors()[rect.tensor].value);
      const ImVec2 ts = ImGui::CalcTextSize(text);
      if (ts.x + 6 < rx1 - rx0 && ts.y + 2 < ry1 - ry0) {
        dl->AddText(ImVec2(rx0 + 3, ry0 + 1), palette::text_on(fill), text);
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
    const MemoryRect& rect = model.rects()[r];
    const ArenaColumn& col = model.columns()[rect.column];
    dl->AddRect(ImVec2(x_of(col, static_cast<double>(rect.begin)), y_of(rect.first_step)),
                ImVec2(std::max(x_of(col, static_cast<double>(rect.begin)) + 1, x_of(col, static_cast<double>(rect.end))),
                       y_of(rect.last_step + 1)),
                palette::kSelection, 0, 0, 2.0f);
  }

  // Peak of each arena: a dashed red line at its step.
  for (const ArenaColumn& col : model.columns()) {
    if (col.peak_step < -1) continue;
    const float y = y_of(col.peak_step) + row_h * 0.5f;
    const float x0 = col_x0(col), x1 = x0 + col_w(col);
    for (float x = x0; x < x1; x += 10) dl->AddLine(ImVec2(x, y), ImVec2(std::min(x + 6, x1), y), palette::kPeak, 2.0f);
    char text[96];
    std::snprintf(text, sizeof text, "peak %s at step %lld", bytes_text(col.peak_bytes).c_str(),
                  static_cast<long long>(col.peak_step));
    const ImVec2 ts = ImGui::CalcTextSize(text);
    const ImVec2 tp(x1 - ts.x - 6, y - ts.y - 3 < p0.y ? y + 3 : y - ts.y - 3);
    dl->AddRectFilled(ImVec2(tp.x - 3, tp.y - 1), ImVec2(tp.x + ts.x + 3, tp.y + ts.y + 1), IM_COL32(30, 32, 38, 220), 3);
    dl->AddText(tp, palette::kPeakText, text);
  }

  // Hover: tooltip for the tensor under the mouse; click selects the instruction at that step.
  if (hovered) {
    const ImVec2 m = ImGui::GetIO().MousePos;
    const int64_t step = static_cast<int64_t>(std::floor((m.y - p0.y) / row_h)) - 1;
    for (size_t c = 0; c < model.columns().size(); ++c) {
      const ArenaColumn& col = model.columns()[c];
      if (m.x < col_x0(col) || m.x >= col_x0(col) + col_w(col)) continue;
      const double byte = static_cast<double>(m.x - col_x0(col)) / col_w(col) * static_cast<double>(col.size);
      const int64_t r = model.hit(c, byte, step);
      if (r >= 0) {
        const MemoryRect& rect = model.rects()[static_cast<size_t>(r)];
        dl->AddRect(ImVec2(x_of(col, static_cast<double>(rect.begin)), y_of(rect.first_step)),
                    ImVec2(std::max(x_of(col, static_cast<double>(rect.begin)) + 1, x_of(col, static_cast<double>(rect.end))),
                           y_of(rect.last_step + 1)),
                    IM_COL32(255, 255, 255, 255), 0, 0, 1.5f);
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
