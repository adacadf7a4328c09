// Program view: what the .pte holds. Left: file facts, inputs and outputs, operators,
// delegates, arenas. Right: the instruction list (selectable, shared selection) and the values,
// both clipped so 50,000 rows cost what the visible ones cost.
#include <imgui.h>

#include <algorithm>
#include <cstdio>

#include "etscope/core/text.h"
#include "model/text_format.h"
#include "views/palette.h"
#include "views/views.h"

namespace etscope::gui {
namespace {

ImFont* MonoFont() {
  ImFontAtlas* atlas = ImGui::GetIO().Fonts;
  return atlas->Fonts.Size > 1 ? atlas->Fonts[1] : ImGui::GetFont();
}

void DrawIoTable(const char* id, const std::vector<IoRow>& rows) {
  if (rows.empty()) {
    ImGui::TextDisabled("none");
    return;
  }
  if (!ImGui::BeginTable(id, 3, ImGuiTableFlags_RowBg | ImGuiTableFlags_SizingFixedFit)) return;
  for (size_t i = 0; i < rows.size(); ++i) {
    ImGui::TableNextRow();
    ImGui::TableNextColumn();
    ImGui::TextDisabled("%zu", i);
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(rows[i].text.c_str());
    ImGui::TableNextColumn();
    ImGui::TextDisabled("%s", rows[i].location.c_str());
  }
  ImGui::EndTable();
}

void DrawOverview(const ProgramModel& plan) {
  if (ImGui::CollapsingHeader("File and plan", ImGuiTreeNodeFlags_DefaultOpen)) {
    if (ImGui::BeginTable("facts", 2, ImGuiTableFlags_SizingFixedFit)) {
      for (const auto& [label, value] : plan.facts()) {
        ImGui::TableNextRow();
        ImGui::TableNextColumn();
        ImGui::TextDisabled("%s", label.c_str());
        ImGui::TableNextColumn();
        ImGui::TextUnformatted(value.c_str());
      }
      ImGui::EndTable();
    }
  }
  char title[96];
  std::snprintf(title, sizeof title, "Inputs (%zu)###inputs", plan.inputs().size());
  if (ImGui::CollapsingHeader(title, ImGuiTreeNodeFlags_DefaultOpen)) DrawIoTable("inputs_table", plan.inputs());
  std::snprintf(title, sizeof title, "Outputs (%zu)###outputs", plan.outputs().size());
  if (ImGui::CollapsingHeader(title, ImGuiTreeNodeFlags_DefaultOpen)) DrawIoTable("outputs_table", plan.outputs());
  std::snprintf(title, sizeof title, "Operators (%zu)###operators", plan.operators().size());
  if (ImGui::CollapsingHeader(title, ImGuiTreeNodeFlags_DefaultOpen)) {
    if (ImGui::BeginTable("operators_table", 2, ImGuiTableFlags_RowBg | ImGuiTableFlags_SizingFixedFit)) {
      for (const OperatorRow& op : plan.operators()) {
        ImGui::TableNextRow();
        ImGui::TableNextColumn();
        ImGui::Text("%5zu x", op.calls);
        ImGui::TableNextColumn();
        ImGui::TextUnformatted(op.name.c_str());
      }
      ImGui::EndTable();
    }
  }
  std::snprintf(title, sizeof title, "Delegates (%zu)###delegates", plan.delegates().size());
  if (ImGui::CollapsingHeader(title, plan.delegates().empty() ? 0 : ImGuiTreeNodeFlags_DefaultOpen)) {
    for (size_t i = 0; i < plan.delegates().size(); ++i) {
      const inspect::DelegateGraphDescription& g = plan.delegate_graphs()[i];
      if (g.nodes.empty()) {
        ImGui::BulletText("%s%s%s", plan.delegates()[i].c_str(), g.error.empty() ? "" : "  ", g.error.c_str());
        continue;
      }
      // An XNNPACK graph: one row per node, as `etscope pte --delegates` lists it.
      char label[512];
      std::snprintf(label, sizeof label, "%s, %s###delegate%zu", plan.delegates()[i].c_str(), g.summary.c_str(), i);
      if (!ImGui::TreeNodeEx(label, i == 0 ? ImGuiTreeNodeFlags_DefaultOpen : 0)) continue;
      const ImGuiTableFlags flags = ImGuiTableFlags_RowBg | ImGuiTableFlags_BordersInnerV | ImGuiTableFlags_Resizable |
                                    ImGuiTableFlags_ScrollY | ImGuiTableFlags_ScrollX | ImGuiTableFlags_SizingFixedFit;
      const float height = std::min(20.0f, static_cast<float>(g.nodes.size()) + 1.5f) * ImGui::GetTextLineHeightWithSpacing();
      if (ImGui::BeginTable("##nodes", 6, flags, ImVec2(0, height))) {
        ImGui::TableSetupScrollFreeze(0, 1);
        for (const char* h : {"#", "node", "handle", "inputs", "outputs", "attributes"}) ImGui::TableSetupColumn(h);
        ImGui::TableHeadersRow();
        ImGuiListClipper clipper;
        clipper.Begin(static_cast<int>(g.nodes.size()));
        while (clipper.Step()) {
          for (int r = clipper.DisplayStart; r < clipper.DisplayEnd; ++r) {
            const inspect::DelegateNodeRow& n = g.nodes[static_cast<size_t>(r)];
            auto joined = [](const std::vector<std::string>& v) {
              std::string t;
              for (const std::string& s : v) t += (t.empty() ? "" : "\n") + s;
              return t;
            };
            ImGui::TableNextRow();
            ImGui::TableNextColumn();
            ImGui::Text("%zu", n.index);
            ImGui::TableNextColumn();
            ImGui::TextUnformatted(n.kind.c_str());
            ImGui::TableNextColumn();
            if (n.debug_handle == 0xffff) {
              ImGui::TextDisabled("layout");
            } else {
              ImGui::Text("%u", n.debug_handle);
            }
            ImGui::TableNextColumn();
            ImGui::TextUnformatted(joined(n.inputs).c_str());
            ImGui::TableNextColumn();
            ImGui::TextUnformatted(joined(n.outputs).c_str());
            ImGui::TableNextColumn();
            ImGui::TextUnformatted(n.attributes.c_str());
          }
        }
        ImGui::EndTable();
      }
      ImGui::TreePop();
    }
  }
  std::snprintf(title, sizeof title, "Memory arenas (%zu)###arenas", plan.arenas().size());
  if (ImGui::CollapsingHeader(title, ImGuiTreeNodeFlags_DefaultOpen)) {
    for (const std::string& a : plan.arenas()) ImGui::BulletText("%s", a.c_str());
  }
}

void DrawInstructions(const ProgramModel& plan, ViewState& state) {
  const auto& rows = plan.instructions();
  const ImGuiTableFlags flags = ImGuiTableFlags_RowBg | ImGuiTableFlags_ScrollY | ImGuiTableFlags_ScrollX |
                                ImGuiTableFlags_BordersInnerV | ImGuiTableFlags_Resizable | ImGuiTableFlags_SizingFixedFit;
  const int columns = plan.has_sources() ? 3 : 2;
  if (!ImGui::BeginTable("instructions", columns, flags)) return;
  ImGui::PushFont(MonoFont());
  const float char_w = ImGui::CalcTextSize("M").x;
  ImGui::PopFont();
  const float text_w = std::clamp(char_w * static_cast<float>(plan.longest_instruction() + 1), 200.0f, 6000.0f);
  ImGui::TableSetupScrollFreeze(0, 1);
  ImGui::TableSetupColumn("#", ImGuiTableColumnFlags_WidthFixed, ImGui::CalcTextSize("00000").x);
  ImGui::TableSetupColumn("instruction", ImGuiTableColumnFlags_WidthFixed, text_w);
  if (columns == 3) ImGui::TableSetupColumn("source", ImGuiTableColumnFlags_WidthFixed, 360.0f);
  ImGui::TableHeadersRow();

  const int64_t selected_row = plan.row_of(state.selected);
  ImGuiListClipper clipper;
  clipper.Begin(static_cast<int>(rows.size()));
  if (state.scroll_program && selected_row >= 0) {
    clipper.ForceDisplayRangeByIndices(static_cast<int>(selected_row), static_cast<int>(selected_row) + 1);
  }
  ImGui::PushFont(MonoFont());
  while (clipper.Step()) {
    for (int i = clipper.DisplayStart; i < clipper.DisplayEnd; ++i) {
      const InstructionRow& row = rows[static_cast<size_t>(i)];
      const bool selected = i == selected_row;
      ImGui::TableNextRow();
      ImGui::TableNextColumn();
      char label[32];
      std::snprintf(label, sizeof label, "%lld", static_cast<long long>(row.step));
      if (ImGui::Selectable(label, selected, ImGuiSelectableFlags_SpanAllColumns)) {
        state.select(selected ? InstructionRef{} : ref_of(row));
        state.scroll_program = false;
      }
      if (selected && state.scroll_program) {
        ImGui::SetScrollHereY(0.3f);
        state.scroll_program = false;
      }
      if (ImGui::IsItemHovered()) {
        ImGui::BeginTooltip();
        ImGui::PushTextWrapPos(ImGui::GetFontSize() * 60);
        ImGui::Text("chain %d, instruction %d (%s)", row.chain, row.index, row.kind.c_str());
        ImGui::TextUnformatted(row.text.c_str());
        if (!row.stack.empty()) {
          ImGui::Separator();
          ImGui::TextUnformatted(row.stack.c_str());
        }
        ImGui::TextDisabled("click to select it in every view");
        ImGui::PopTextWrapPos();
        ImGui::EndTooltip();
      }
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(row.text.c_str());
      if (columns == 3) {
        ImGui::TableNextColumn();
        ImGui::TextDisabled("%s", row.source.c_str());
      }
    }
  }
  ImGui::PopFont();
  // The selection is not a row of this plan: nothing to scroll to.
  if (selected_row < 0) state.scroll_program = false;
  ImGui::EndTable();
}

void DrawValues(const ProgramModel& plan) {
  const auto& rows = plan.values();
  const ImGuiTableFlags flags = ImGuiTableFlags_RowBg | ImGuiTableFlags_ScrollY | ImGuiTableFlags_BordersInnerV |
                                ImGuiTableFlags_Resizable | ImGuiTableFlags_SizingFixedFit;
  if (!ImGui::BeginTable("values", 6, flags)) return;
  ImGui::TableSetupScrollFreeze(0, 1);
  ImGui::TableSetupColumn("value", ImGuiTableColumnFlags_WidthFixed, ImGui::CalcTextSize("%00000").x);
  ImGui::TableSetupColumn("kind", ImGuiTableColumnFlags_WidthFixed, ImGui::CalcTextSize("OptionalTensorList").x);
  ImGui::TableSetupColumn("dtype, shape / value", ImGuiTableColumnFlags_WidthFixed, 260.0f);
  ImGui::TableSetupColumn("bytes", ImGuiTableColumnFlags_WidthFixed, 80.0f);
  ImGui::TableSetupColumn("location", ImGuiTableColumnFlags_WidthFixed, 300.0f);
  ImGui::TableSetupColumn("notes", ImGuiTableColumnFlags_WidthStretch);
  ImGui::TableHeadersRow();
  ImGuiListClipper clipper;
  clipper.Begin(static_cast<int>(rows.size()));
  while (clipper.Step()) {
    for (int i = clipper.DisplayStart; i < clipper.DisplayEnd; ++i) {
      const ValueRow& v = rows[static_cast<size_t>(i)];
      ImGui::TableNextRow();
      ImGui::TableNextColumn();
      ImGui::Text("%%%d", v.index);
      ImGui::TableNextColumn();
      ImGui::TextDisabled("%s", v.kind.c_str());
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(v.type.c_str());
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(v.bytes.c_str());
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(v.location.c_str());
      ImGui::TableNextColumn();
      for (size_t k = 0; k < v.notes.size(); ++k) {
        if (k > 0) ImGui::SameLine(0, 0);
        ImGui::TextDisabled("%s%s", k > 0 ? ", " : "", v.notes[k].c_str());
      }
    }
  }
  ImGui::EndTable();
}

}  // namespace

void DrawPlanPicker(const Session& session, ViewState& state) {
  if (session.plans.size() <= 1) return;
  ImGui::SetNextItemWidth(220);
  if (ImGui::BeginCombo("##plan", session.plans[state.plan].name().c_str())) {
    for (size_t i = 0; i < session.plans.size(); ++i) {
      if (ImGui::Selectable(session.plans[i].name().c_str(), i == state.plan)) {
        state.plan = i;
        state.selected = {};
      }
    }
    ImGui::EndCombo();
  }
}

void DrawProgramView(const Session& session, ViewState& state) {
  if (session.plans.empty()) {
    ImGui::TextDisabled("The program has no execution plans.");
    return;
  }
  state.plan = std::min(state.plan, session.plans.size() - 1);
  const ProgramModel& plan = session.plans[state.plan];

  const float left_width = std::max(360.0f, ImGui::GetContentRegionAvail().x * 0.34f);
  ImGui::BeginChild("overview", ImVec2(left_width, 0), true);
  DrawPlanPicker(session, state);
  DrawOverview(plan);
  ImGui::EndChild();
  ImGui::SameLine();
  ImGui::BeginChild("lists", ImVec2(0, 0), false);
  if (ImGui::BeginTabBar("program_lists")) {
    char title[64];
    std::snprintf(title, sizeof title, "Instructions (%zu)###instructions", plan.instructions().size());
    if (ImGui::BeginTabItem(title)) {
      if (state.selected.valid()) {
        const int64_t row = plan.row_of(state.selected);
        if (row >= 0) {
          ImGui::PushStyleColor(ImGuiCol_Text, palette::kSelection);
          ImGui::Text("selected: %lld  %s", static_cast<long long>(row),
                      plan.instructions()[static_cast<size_t>(row)].op.c_str());
          ImGui::PopStyleColor();
          ImGui::SameLine();
          if (ImGui::SmallButton("clear")) state.selected = {};
          // Its time in the loaded run (the Op statistics view's block) and the module that called it.
          if (session.stats) {
            const size_t block = state.stats.block < session.stats->blocks().size() ? state.stats.block : session.stats->default_block();
            if (const StatsRow* r = session.stats->row_of(block, state.selected); r != nullptr && r->count > 0) {
              ImGui::SameLine(0, 16);
              ImGui::Text("%s: avg %s, p50 %s over %llu runs, %.1f%% of the run", r->name.c_str(), duration_text_us(r->avg_us).c_str(),
                          duration_text_us(r->p50_us).c_str(), static_cast<unsigned long long>(r->count), r->share * 100);
              if (!r->module.empty()) {
                ImGui::TextDisabled("module %s", r->module.c_str());
              }
            }
          }
        }
      } else {
        ImGui::TextDisabled("click an instruction to select it in every view");
      }
      DrawInstructions(plan, state);
      ImGui::EndTabItem();
    }
    std::snprintf(title, sizeof title, "Values (%zu)###values", plan.values().size());
    if (ImGui::BeginTabItem(title)) {
      DrawValues(plan);
      ImGui::EndTabItem();
    }
    ImGui::EndTabBar();
  }
  ImGui::EndChild();
}

}  // namespace etscope::gui
