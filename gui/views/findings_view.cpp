// Findings view: the findings library's report of what to change in the program, ranked by the
// time each finding would save. A header names the program, method, profile and total; the table
// gives severity (coloured), rule, first instruction, what and cost per finding; a row opens into
// its places (a click selects the instruction everywhere), its evidence and the advice. Rows that
// name the selected instruction are marked.
#include <imgui.h>

#include <algorithm>
#include <string>

#include "views/palette.h"
#include "views/views.h"

namespace etscope::gui {
namespace {

// The plan a finding's place belongs to, as the Program view numbers plans; -1 when the session
// has no such plan.
int64_t PlanOf(const Session& session, const std::string& method) { return session.find_plan(method); }

// Whether the shared selection is in `method`'s plan.
bool SelectionIn(const Session& session, const ViewState& state, const std::string& method) {
  return state.selected.valid() && !session.plans.empty() && PlanOf(session, method) == static_cast<int64_t>(state.plan);
}

void SeverityCell(const FindingsRow& row) {
  // A small chip in the severity's colour, then its name in the same colour.
  const ImU32 colour = palette::severity(row.severity);
  const ImVec2 p = ImGui::GetCursorScreenPos();
  const float h = ImGui::GetTextLineHeight();
  ImGui::GetWindowDrawList()->AddRectFilled(ImVec2(p.x, p.y + h * 0.2f), ImVec2(p.x + h * 0.6f, p.y + h * 0.8f), colour, 2.0f);
  ImGui::Dummy(ImVec2(h * 0.6f, h));
  ImGui::SameLine(0, 6);
  ImGui::PushStyleColor(ImGuiCol_Text, colour);
  ImGui::TextUnformatted(row.severity_text.c_str());
  ImGui::PopStyleColor();
}

void CostCell(const FindingsRow& row) {
  // The library's share of the run as a bar under the text, so the costly rows stand out.
  if (row.share) {
    const ImVec2 p = ImGui::GetCursorScreenPos();
    const float w = ImGui::GetContentRegionAvail().x;
    const float h = ImGui::GetTextLineHeight();
    const float fill = static_cast<float>(std::clamp(*row.share, 0.0, 1.0)) * w;
    ImGui::GetWindowDrawList()->AddRectFilled(ImVec2(p.x, p.y + 1), ImVec2(p.x + fill, p.y + h - 1), IM_COL32(90, 140, 210, 110));
  }
  if (row.cost == "-") {
    ImGui::TextDisabled("-");
  } else {
    ImGui::TextUnformatted(row.cost.c_str());
  }
}

// The label of a detail row, in the rule column ("where", "evidence", "do"); its text goes in
// the "what" column.
void DetailLabel(const char* label) {
  ImGui::TableSetColumnIndex(2);
  ImGui::TextDisabled("%s", label);
  ImGui::TableSetColumnIndex(4);
}

void DrawDetails(const Session& session, const FindingsRow& row, float what_width, ViewState& state) {
  // A `what` too long for its cell, whole and wrapped.
  if (ImGui::CalcTextSize(row.what.c_str()).x > what_width) {
    ImGui::TableNextRow();
    DetailLabel("finding");
    ImGui::TextWrapped("%s", row.what.c_str());
  }
  for (size_t i = 0; i < row.where.size(); ++i) {
    const FindingsPlace& place = row.where[i];
    ImGui::TableNextRow();
    DetailLabel(i == 0 ? "where" : "");
    if (!place.instruction.valid()) {
      ImGui::TextUnformatted(place.text.c_str());
      continue;
    }
    const int64_t plan = PlanOf(session, place.method);
    const bool selected = SelectionIn(session, state, place.method) && state.selected == place.instruction;
    ImGui::PushID(static_cast<int>(i));
    if (selected) ImGui::PushStyleColor(ImGuiCol_Text, palette::kSelection);
    if (ImGui::Selectable(place.text.c_str(), selected) && plan >= 0) {
      if (selected) {
        state.selected = {};
      } else {
        if (static_cast<size_t>(plan) != state.plan) state.plan = static_cast<size_t>(plan);
        state.select(place.instruction);
      }
    }
    if (selected) ImGui::PopStyleColor();
    if (ImGui::IsItemHovered()) {
      ImGui::BeginTooltip();
      ImGui::Text("instruction %d, chain %d of %s", place.instruction.instruction, place.instruction.chain, place.method.c_str());
      if (plan >= 0) {
        ImGui::TextDisabled("click to select this instruction everywhere");
      } else {
        ImGui::TextDisabled("load the program to select it");
      }
      ImGui::EndTooltip();
    }
    ImGui::PopID();
  }
  for (size_t i = 0; i < row.evidence.size(); ++i) {
    ImGui::TableNextRow();
    DetailLabel(i == 0 ? "evidence" : "");
    ImGui::TextWrapped("%s", row.evidence[i].c_str());
  }
  if (!row.advice.empty()) {
    ImGui::TableNextRow();
    DetailLabel("do");
    ImGui::TextWrapped("%s", row.advice.c_str());
  }
}

// The table is as tall as its rows (open rows wrap their advice, so no height is known ahead);
// the child around it scrolls.
void DrawTable(const Session& session, const FindingsModel& model, ViewState& state) {
  FindingsViewState& fv = state.findings;
  const ImGuiTableFlags flags = ImGuiTableFlags_RowBg | ImGuiTableFlags_BordersInnerV | ImGuiTableFlags_BordersOuterH |
                                ImGuiTableFlags_Resizable | ImGuiTableFlags_SizingFixedFit;
  if (!ImGui::BeginTable("findings", 6, flags)) return;
  ImGui::TableSetupColumn("#", ImGuiTableColumnFlags_WidthFixed);
  ImGui::TableSetupColumn("severity", ImGuiTableColumnFlags_WidthFixed);
  ImGui::TableSetupColumn("rule", ImGuiTableColumnFlags_WidthFixed);
  ImGui::TableSetupColumn("instr", ImGuiTableColumnFlags_WidthFixed);
  ImGui::TableSetupColumn("what", ImGuiTableColumnFlags_WidthStretch);
  ImGui::TableSetupColumn("cost", ImGuiTableColumnFlags_WidthFixed, 210.0f);
  ImGui::TableHeadersRow();

  const bool selection_here = SelectionIn(session, state, model.method());
  for (size_t r = 0; r < model.rows().size(); ++r) {
    const FindingsRow& row = model.rows()[r];
    bool open = fv.open[r] != 0;
    const bool names_selection = selection_here && model.names(r, model.method(), state.selected);
    ImGui::PushID(static_cast<int>(r));
    ImGui::TableNextRow();
    ImGui::TableNextColumn();
    // The arrow shows the state; the row's Selectable (below, across every column) toggles it.
    ImGui::SetNextItemOpen(open, ImGuiCond_Always);
    const bool node_open = ImGui::TreeNodeEx("##row", ImGuiTreeNodeFlags_NoTreePushOnOpen, "%zu", row.rank);
    bool toggle = node_open != open;
    ImGui::TableNextColumn();
    SeverityCell(row);
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(row.rule.c_str());
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(row.at.c_str());
    ImGui::TableNextColumn();
    const float what_width = ImGui::GetContentRegionAvail().x;
    if (names_selection) ImGui::PushStyleColor(ImGuiCol_Text, palette::kSelection);
    if (ImGui::Selectable(row.what.c_str(), names_selection, ImGuiSelectableFlags_SpanAllColumns)) toggle = true;
    if (names_selection) ImGui::PopStyleColor();
    if (ImGui::IsItemHovered() && !open) {
      ImGui::BeginTooltip();
      ImGui::TextUnformatted(row.what.c_str());
      ImGui::TextDisabled("click to see where, the evidence and what to do");
      ImGui::EndTooltip();
    }
    ImGui::TableNextColumn();
    CostCell(row);
    if (toggle) {
      open = !open;
      fv.open[r] = open ? 1 : 0;
    }
    if (open) DrawDetails(session, row, what_width, state);
    ImGui::PopID();
  }
  ImGui::EndTable();
}

}  // namespace

void DrawFindingsView(const Session& session, ViewState& state) {
  const FindingsModel& model = *session.findings;
  FindingsViewState& fv = state.findings;
  if (fv.model != &model || fv.open.size() != model.rows().size()) {
    // A new load: the first finding open, as the CLI prints it whole.
    fv = FindingsViewState{};
    fv.model = &model;
    fv.open.assign(model.rows().size(), 0);
    if (!fv.open.empty()) fv.open[0] = 1;
  }

  if (!model.ok()) {
    ImGui::PushStyleColor(ImGuiCol_Text, palette::kPeakText);
    ImGui::TextWrapped("%s", model.error().c_str());
    ImGui::PopStyleColor();
    return;
  }

  // Header: program and method, the profile (engine, runs, run time), then the total.
  if (!model.program().empty()) {
    ImGui::Text("%s, method %s", model.program().c_str(), model.method().c_str());
  } else {
    ImGui::Text("method %s", model.method().c_str());
  }
  ImGui::SameLine(0, 20);
  ImGui::TextDisabled("%s", model.profile_text().c_str());
  if (model.highest()) {
    ImGui::TextUnformatted(model.totals_text().c_str());
    ImGui::SameLine(0, 20);
    ImGui::TextDisabled("highest severity");
    ImGui::SameLine();
    ImGui::PushStyleColor(ImGuiCol_Text, palette::severity(*model.highest()));
    ImGui::TextUnformatted(findings::to_string(*model.highest()));
    ImGui::PopStyleColor();
  } else {
    ImGui::TextUnformatted("No findings: nothing the rules look for.");
  }
  ImGui::Spacing();

  const float skipped_height =
      model.skipped().empty() ? 0.0f : ImGui::GetTextLineHeightWithSpacing() * static_cast<float>(model.skipped().size() + 1);
  if (!model.rows().empty()) {
    const float avail = ImGui::GetContentRegionAvail().y - skipped_height - ImGui::GetStyle().ItemSpacing.y;
    ImGui::BeginChild("findings_pane", ImVec2(0, std::max(120.0f, avail)));
    DrawTable(session, model, state);
    ImGui::EndChild();
  }
  if (!model.skipped().empty()) {
    ImGui::Spacing();
    ImGui::TextDisabled("Not checked:");
    for (const std::string& s : model.skipped()) ImGui::TextDisabled("  %s", s.c_str());
  }
}

}  // namespace etscope::gui
