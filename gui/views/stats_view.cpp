// Op statistics view: every Inspector event of a block with its timing statistics (sortable,
// filterable), the summary by operator type, and the module tree with totals. Rows of the
// selected instruction are highlighted; clicking a row selects its instruction everywhere.
#include <imgui.h>

#include <algorithm>
#include <cstdio>

#include "etscope/core/event_names.h"
#include "etscope/inspect/event_index.h"
#include "model/text_format.h"
#include "views/palette.h"
#include "views/views.h"

namespace etscope::gui {
namespace {

// Every duration by core/text.h's policy, with its unit in the cell (the column headers name none).
std::string Num(double us) { return StatsModel::time_text(us); }

void ShareCell(double share) {
  // A bar under the percentage, so the heavy rows stand out while scanning.
  const ImVec2 p = ImGui::GetCursorScreenPos();
  const float w = ImGui::GetContentRegionAvail().x;
  const float h = ImGui::GetTextLineHeight();
  const float fill = static_cast<float>(std::clamp(share, 0.0, 1.0)) * w;
  ImGui::GetWindowDrawList()->AddRectFilled(ImVec2(p.x, p.y + 1), ImVec2(p.x + fill, p.y + h - 1), IM_COL32(90, 140, 210, 110));
  ImGui::Text("%5.1f%%", share * 100.0);
}

void DrawEventTable(const StatsModel& model, const StatsBlock& block, size_t block_index, ViewState& state, float height) {
  StatsViewState& sv = state.stats;
  constexpr int kColumns = 12;
  const ImGuiTableFlags flags = ImGuiTableFlags_Sortable | ImGuiTableFlags_RowBg | ImGuiTableFlags_ScrollY |
                                ImGuiTableFlags_BordersInnerV | ImGuiTableFlags_Resizable | ImGuiTableFlags_Hideable |
                                ImGuiTableFlags_SizingFixedFit;
  if (!ImGui::BeginTable("events", kColumns, flags, ImVec2(0, height))) return;
  ImGui::TableSetupScrollFreeze(1, 1);
  ImGui::TableSetupColumn("event", ImGuiTableColumnFlags_WidthStretch, 0, static_cast<ImGuiID>(StatsColumn::kName));
  ImGui::TableSetupColumn("instr", ImGuiTableColumnFlags_WidthFixed, 0, static_cast<ImGuiID>(StatsColumn::kInstruction));
  // The module that called the operator (ETRecord); hidden when none is known.
  ImGui::TableSetupColumn("module", ImGuiTableColumnFlags_WidthFixed | (model.has_modules() ? 0 : ImGuiTableColumnFlags_DefaultHide), 220.0f,
                          static_cast<ImGuiID>(StatsColumn::kModule));
  ImGui::TableSetupColumn("count", ImGuiTableColumnFlags_PreferSortDescending, 0, static_cast<ImGuiID>(StatsColumn::kCount));
  struct Col {
    const char* name;
    StatsColumn id;
  };
  const Col timed[] = {{"avg", StatsColumn::kAvg}, {"p10", StatsColumn::kP10}, {"p50", StatsColumn::kP50},
                       {"p90", StatsColumn::kP90}, {"min", StatsColumn::kMin}, {"max", StatsColumn::kMax},
                       {"total", StatsColumn::kTotal}};
  for (const Col& c : timed) {
    ImGuiTableColumnFlags f = ImGuiTableColumnFlags_PreferSortDescending;
    if (c.id == StatsColumn::kTotal) f |= ImGuiTableColumnFlags_DefaultSort;
    ImGui::TableSetupColumn(c.name, f, 0, static_cast<ImGuiID>(c.id));
  }
  ImGui::TableSetupColumn("share of run", ImGuiTableColumnFlags_PreferSortDescending | ImGuiTableColumnFlags_WidthFixed,
                          110.0f, static_cast<ImGuiID>(StatsColumn::kShare));
  ImGui::TableHeadersRow();

  // Re-sort only when the user changed the sort; the model caches the order under the query.
  if (ImGuiTableSortSpecs* specs = ImGui::TableGetSortSpecs()) {
    if (specs->SpecsDirty && specs->SpecsCount > 0) {
      sv.query.column = static_cast<StatsColumn>(specs->Specs[0].ColumnUserID);
      sv.query.ascending = specs->Specs[0].SortDirection == ImGuiSortDirection_Ascending;
      specs->SpecsDirty = false;
    }
  }
  sv.query.filter = sv.filter;
  const std::vector<uint32_t>& rows = model.rows(block_index, sv.query);

  ImGuiListClipper clipper;
  clipper.Begin(static_cast<int>(rows.size()));
  while (clipper.Step()) {
    for (int i = clipper.DisplayStart; i < clipper.DisplayEnd; ++i) {
      const StatsRow& r = block.rows[rows[static_cast<size_t>(i)]];
      const bool selected = r.instruction.valid() && r.instruction == state.selected;
      ImGui::TableNextRow();
      ImGui::TableNextColumn();
      ImGui::PushID(static_cast<int>(r.event));
      if (selected) ImGui::PushStyleColor(ImGuiCol_Text, palette::kSelection);
      if (ImGui::Selectable(r.name.c_str(), selected, ImGuiSelectableFlags_SpanAllColumns) && r.instruction.valid()) {
        state.select(selected ? InstructionRef{} : r.instruction);
      }
      if (selected) ImGui::PopStyleColor();
      if (ImGui::IsItemHovered() && (!r.module.empty() || r.instruction.valid())) {
        ImGui::BeginTooltip();
        ImGui::TextUnformatted(r.name.c_str());
        if (r.instruction.valid()) ImGui::Text("instruction %d, chain %d", r.instruction.instruction, r.instruction.chain);
        if (!r.module.empty()) ImGui::Text("module %s", r.module.c_str());
        if (r.instruction.valid()) ImGui::TextDisabled("click to select this instruction everywhere");
        ImGui::EndTooltip();
      }
      ImGui::PopID();
      ImGui::TableNextColumn();
      if (r.instruction.valid()) ImGui::Text("%d", r.instruction.instruction);
      ImGui::TableNextColumn();
      {
        // The innermost module; the whole path is in the row's tooltip.
        const size_t last = r.module.rfind(" > ");
        ImGui::TextUnformatted(last == std::string::npos ? r.module.c_str() : r.module.c_str() + last + 3);
      }
      ImGui::TableNextColumn();
      ImGui::Text("%llu", static_cast<unsigned long long>(r.count));
      for (double v : {r.avg_us, r.p10_us, r.p50_us, r.p90_us, r.min_us, r.max_us, r.total_us}) {
        ImGui::TableNextColumn();
        if (r.count > 0) ImGui::TextUnformatted(Num(v).c_str());
      }
      ImGui::TableNextColumn();
      if (r.count > 0) ShareCell(r.share);
    }
  }
  ImGui::EndTable();
}

void DrawSummary(const StatsBlock& block) {
  ImGui::TextUnformatted("Summary by operator type");
  if (!ImGui::BeginTable("summary", 5, ImGuiTableFlags_RowBg | ImGuiTableFlags_ScrollY | ImGuiTableFlags_BordersInnerV |
                                           ImGuiTableFlags_SizingFixedFit)) {
    return;
  }
  ImGui::TableSetupScrollFreeze(0, 1);
  ImGui::TableSetupColumn("type", ImGuiTableColumnFlags_WidthStretch);
  ImGui::TableSetupColumn("count");
  ImGui::TableSetupColumn("total");
  ImGui::TableSetupColumn("avg");
  ImGui::TableSetupColumn("share", ImGuiTableColumnFlags_WidthFixed, 100.0f);
  ImGui::TableHeadersRow();
  for (const inspect::TypeSummary& s : block.summary) {
    ImGui::TableNextRow();
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(s.type.c_str());
    ImGui::TableNextColumn();
    ImGui::Text("%llu", static_cast<unsigned long long>(s.count));
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(Num(s.total).c_str());
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(Num(s.avg).c_str());
    ImGui::TableNextColumn();
    ShareCell(s.share);
  }
  ImGui::EndTable();
}

void DrawModuleNode(const inspect::ModuleNode& node, bool is_root) {
  ImGui::TableNextRow();
  ImGui::TableNextColumn();
  ImGuiTreeNodeFlags flags = ImGuiTreeNodeFlags_SpanFullWidth | ImGuiTreeNodeFlags_DefaultOpen;
  if (node.children.empty()) flags |= ImGuiTreeNodeFlags_Leaf | ImGuiTreeNodeFlags_NoTreePushOnOpen;
  const std::string label = is_root ? "(whole model)" : node.path.empty() ? "(top-level module)" : node.path;
  const bool open = ImGui::TreeNodeEx(node.key.empty() ? "root" : node.key.c_str(), flags, "%s", label.c_str());
  ImGui::TableNextColumn();
  ImGui::TextDisabled("%s", inspect::short_type_name(node.type).c_str());
  ImGui::TableNextColumn();
  ImGui::TextUnformatted(Num(node.total).c_str());
  ImGui::TableNextColumn();
  ImGui::Text("%llu", static_cast<unsigned long long>(node.events));
  ImGui::TableNextColumn();
  ShareCell(node.share);
  if (open && !node.children.empty()) {
    for (const inspect::ModuleNode& child : node.children) DrawModuleNode(child, false);
    ImGui::TreePop();
  }
}

void DrawModules(const StatsBlock& block, bool have_record) {
  ImGui::TextUnformatted("Module tree");
  if (!have_record) {
    ImGui::TextDisabled("Load the model's ETRecord to attribute time to modules.");
    return;
  }
  if (block.modules.children.empty()) {
    ImGui::TextDisabled("No event of this block maps to a module.");
    return;
  }
  if (!ImGui::BeginTable("modules", 5, ImGuiTableFlags_RowBg | ImGuiTableFlags_ScrollY | ImGuiTableFlags_BordersInnerV |
                                           ImGuiTableFlags_SizingFixedFit)) {
    return;
  }
  ImGui::TableSetupScrollFreeze(0, 1);
  ImGui::TableSetupColumn("module", ImGuiTableColumnFlags_WidthStretch);
  ImGui::TableSetupColumn("type");
  ImGui::TableSetupColumn("total");
  ImGui::TableSetupColumn("events");
  ImGui::TableSetupColumn("share", ImGuiTableColumnFlags_WidthFixed, 100.0f);
  ImGui::TableHeadersRow();
  DrawModuleNode(block.modules, true);
  ImGui::EndTable();
}

}  // namespace

void DrawStatsView(const Session& session, ViewState& state) {
  const StatsModel& model = *session.stats;
  StatsViewState& sv = state.stats;
  if (model.blocks().empty()) {
    ImGui::TextDisabled("The ETDump has no run blocks.");
    return;
  }
  if (sv.block >= model.blocks().size()) sv.block = model.default_block();
  const StatsBlock& block = model.blocks()[sv.block];

  ImGui::SetNextItemWidth(320);
  if (ImGui::BeginCombo("block", block.label.c_str())) {
    for (size_t b = 0; b < model.blocks().size(); ++b) {
      if (ImGui::Selectable(model.blocks()[b].label.c_str(), b == sv.block)) sv.block = b;
    }
    ImGui::EndCombo();
  }
  ImGui::SameLine(0, 20);
  ImGui::SetNextItemWidth(280);
  ImGui::InputTextWithHint("##filter", "filter: conv, relu, -OPERATOR", sv.filter, sizeof sv.filter);
  ImGui::SameLine(0, 20);
  ImGui::Checkbox("kernels and delegate events only", &sv.query.hide_framework);
  ImGui::SameLine(0, 20);
  ImGui::BeginDisabled(sv.query.hide_framework);
  static const std::string kOperatorCallRows = std::string(events::kOperatorCall) + " rows";
  ImGui::Checkbox(kOperatorCallRows.c_str(), &sv.query.show_operator_calls);
  ImGui::EndDisabled();
  ImGui::SameLine(0, 20);
  sv.query.filter = sv.filter;
  ImGui::TextDisabled("%zu of %s; run time %s (%s); engine %s", model.rows(sv.block, sv.query).size(),
                      count_text(block.rows.size(), "event").c_str(), Num(block.run_time_us).c_str(), block.run_time_source.c_str(),
                      session.engine.text().c_str());

  const float avail = ImGui::GetContentRegionAvail().y;
  DrawEventTable(model, block, sv.block, state, std::max(160.0f, avail * 0.55f));
  ImGui::Spacing();
  const float half = ImGui::GetContentRegionAvail().x * 0.5f - 4;
  ImGui::BeginChild("summary_pane", ImVec2(half, 0));
  DrawSummary(block);
  ImGui::EndChild();
  ImGui::SameLine();
  ImGui::BeginChild("module_pane", ImVec2(0, 0));
  DrawModules(block, session.record != nullptr);
  ImGui::EndChild();
}

}  // namespace etscope::gui
