// Compare view: a baseline run against the current one. libinspect's compare_runs (the numbers
// `etscope compare` prints: medians, relative change, Mann-Whitney p and effect, verdict) per
// operator, as a table whose delta column is a bar centred on zero coloured by the verdict, the
// method total above it, and below, the two runs' first execution stacked on one time axis.
// With a run store open, pickers choose either run among the stored ones.
#include <imgui.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "etscope/core/text.h"
#include "model/text_format.h"
#include "views/palette.h"
#include "views/plot.h"
#include "views/views.h"

namespace etscope::gui {
namespace {

constexpr ImU32 kRegression = IM_COL32(214, 39, 40, 255);
constexpr ImU32 kImprovement = IM_COL32(60, 170, 90, 255);
constexpr ImU32 kUnchanged = IM_COL32(120, 126, 140, 255);
constexpr ImU32 kOnlyOne = IM_COL32(170, 140, 60, 255);

ImU32 VerdictColour(inspect::Verdict v) {
  switch (v) {
    case inspect::Verdict::kRegression:
      return kRegression;
    case inspect::Verdict::kImprovement:
      return kImprovement;
    case inspect::Verdict::kUnchanged:
      return kUnchanged;
    case inspect::Verdict::kOnlyInA:
    case inspect::Verdict::kOnlyInB:
      return kOnlyOne;
  }
  return kUnchanged;
}

std::string Ms(double ms) { return duration_text_ms(ms); }

std::string Percent(double delta) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%+.1f%%", delta * 100);
  return buf;
}

// A picker over the store's runs: the `run --repeat` sets first (choosing one sets `request` to
// set=<id>, every run of the set, as `etscope compare` takes it), then every run (its id).
void RunPicker(const char* label, const Session& session, int64_t current, const std::vector<int64_t>& current_set,
               std::string& request) {
  char preview[160];
  if (current == 0) {
    std::snprintf(preview, sizeof preview, "(choose a stored run or set)");
  } else if (current_set.size() > 1) {
    std::snprintf(preview, sizeof preview, "%zu runs from %lld", current_set.size(), static_cast<long long>(current));
  } else {
    std::snprintf(preview, sizeof preview, "run %lld", static_cast<long long>(current));
  }
  ImGui::SetNextItemWidth(260);
  if (!ImGui::BeginCombo(label, preview, ImGuiComboFlags_HeightLarge)) return;
  // Sets, newest first, with how many of their runs the store list holds.
  std::vector<std::pair<std::string, const store::RunRow*>> sets;
  std::map<std::string, size_t> members;
  for (const store::RunRow& r : session.store_runs) {
    auto tag = r.tags.find(std::string(store::kSetTag));
    if (tag == r.tags.end()) continue;
    if (members[tag->second]++ == 0) sets.emplace_back(tag->second, &r);
  }
  for (const auto& [set, newest] : sets) {
    char item[512];
    std::snprintf(item, sizeof item, "%s=%s  %zu runs  %s  %s##set%s", std::string(store::kSetTag).c_str(), set.c_str(), members[set],
                  newest->created_at.c_str(), newest->program.c_str(), set.c_str());
    const bool chosen = current_set.size() > 1 && std::to_string(current_set.front()) == set;
    if (ImGui::Selectable(item, chosen)) request = std::string(store::kSetTag) + "=" + set;
  }
  if (!sets.empty()) ImGui::Separator();
  for (const store::RunRow& r : session.store_runs) {
    char item[512];
    std::string tags;
    for (const auto& [k, v] : r.tags) tags += " " + k + "=" + v;
    std::snprintf(item, sizeof item, "run %lld  %s  %s%s##run%lld", static_cast<long long>(r.id), r.created_at.c_str(),
                  r.program.c_str(), tags.c_str(), static_cast<long long>(r.id));
    if (ImGui::Selectable(item, r.id == current && current_set.size() <= 1)) request = std::to_string(r.id);
  }
  ImGui::EndCombo();
}

void DrawTimelines(const Session& session, ViewState& state, float height) {
  const Track* a = session.baseline_timeline ? session.baseline_timeline->main_track() : nullptr;
  // A stored run has no events; the loaded ETDump is then not the candidate.
  const Track* b = session.timeline && session.store_run == 0 ? session.timeline->main_track() : nullptr;
  if (a == nullptr || b == nullptr) {
    ImGui::TextDisabled("The timelines are shown when both runs are ETDump files (the run store keeps samples, not events).");
    return;
  }
  CompareViewState& cv = state.compare;
  const double extent = static_cast<double>(std::max<uint64_t>({a->duration, b->duration, 1}));
  if (cv.t1 <= 0) cv.t1 = extent;
  ImGui::TextDisabled("first execution of each run on one time axis (wheel zooms)");
  const float line = ImGui::GetTextLineHeight();
  const float lane_h = std::floor(line + 5.0f);
  const float label_w = 90;
  const PlotArea plot = BeginPlot("stacked", ImVec2(ImGui::GetContentRegionAvail().x, height), PlotMargins{label_w, 8, line + 6, 4});
  if (ImGui::IsItemHovered() && ImGui::GetIO().MouseWheel != 0) {
    cv.t1 = std::clamp(cv.t1 * std::pow(0.85, ImGui::GetIO().MouseWheel), extent * 1e-4, extent);
  }
  ImDrawList* dl = plot.dl;
  const double t1 = cv.t1;
  for (const Tick& t : time_ticks(0, t1, std::max(2, static_cast<int>(plot.width() / 110)))) {
    const float x = plot.x(t.value, 0, t1);
    dl->AddLine(ImVec2(x, plot.a.y), ImVec2(x, plot.b.y), palette::kGrid);
    dl->AddText(ImVec2(x + 3, plot.frame_min.y + 2), palette::kAxis, t.label.c_str());
  }
  const double ticks_per_px = t1 / std::max(1.0f, plot.width());
  std::vector<DrawItem> items;
  float y = plot.a.y + 2;
  const float run_h = (plot.height() - 8) * 0.5f;
  const struct {
    const TimelineModel* model;
    const Track* track;
    const std::string* label;
    const char* role;
  } runs[] = {{&*session.baseline_timeline, a, &session.compare->baseline_label(), "baseline"},
              {&*session.timeline, b, &session.compare->candidate_label(), "candidate"}};
  dl->PushClipRect(plot.frame_min, plot.frame_max, true);
  for (const auto& run : runs) {
    char header[64];
    std::snprintf(header, sizeof header, "%s", run.role);
    dl->AddText(ImVec2(plot.frame_min.x + 6, y + 2), ImGui::GetColorU32(ImGuiCol_Text), header);
    dl->AddText(ImVec2(plot.frame_min.x + 6, y + 2 + line), palette::kAxis, duration_text(static_cast<double>(run.track->duration)).c_str());
    const float lh = std::min(lane_h, run_h / std::max<float>(1.0f, static_cast<float>(run.track->lanes.size())));
    float ly = y;
    for (const Lane& lane : run.track->lanes) {
      items.clear();
      TimelineModel::layout_lane(lane, 0, t1, ticks_per_px, 2.0, items);
      for (const DrawItem& item : items) {
        const float x0 = plot.x(item.start, 0, t1);
        const float x1 = std::max(x0 + 1.0f, plot.x(item.end, 0, t1));
        if (item.count == 1) {
          const Bar& bar = lane.bars[item.first];
          const BarStyle& style = run.model->styles()[bar.style];
          const ImU32 fill = palette::bar(style);
          const InstructionRef ref = run.model->instruction_of(bar);
          dl->AddRectFilled(ImVec2(x0, ly + 1), ImVec2(x1, ly + lh - 1), fill);
          if (ref.valid() && ref == state.selected) dl->AddRect(ImVec2(x0, ly), ImVec2(x1, ly + lh), palette::kSelection, 0, 0, 2);
          if (x1 - x0 > 40) {
            const ImVec4 clip(x0 + 2, ly, x1 - 2, ly + lh);
            dl->AddText(ImGui::GetFont(), ImGui::GetFontSize(), ImVec2(x0 + 3, ly + 1), palette::text_on(fill), style.label.c_str(),
                        nullptr, 0.0f, &clip);
          }
        } else {
          dl->AddRectFilled(ImVec2(x0, ly + 3), ImVec2(x1, ly + lh - 3), palette::kFold);
        }
      }
      ly += lh;
    }
    y += run_h + 4;
    dl->AddLine(ImVec2(plot.frame_min.x, y - 2), ImVec2(plot.frame_max.x, y - 2), IM_COL32(70, 74, 84, 255));
  }
  dl->PopClipRect();
}

void DrawTable(const CompareModel& model, const inspect::Comparison& cmp, ViewState& state, ImVec2 size) {
  CompareViewState& cv = state.compare;
  double scale = 0.05;
  for (const inspect::CompareRow& r : cmp.rows) {
    if (std::isfinite(r.delta)) scale = std::max(scale, std::fabs(r.delta));
  }
  scale = std::min(scale, 1.0);  // Beyond +-100% the bar is clipped, the number says it.
  const ImGuiTableFlags flags = ImGuiTableFlags_RowBg | ImGuiTableFlags_ScrollY | ImGuiTableFlags_BordersInnerV |
                                ImGuiTableFlags_Resizable | ImGuiTableFlags_SizingFixedFit;
  if (!ImGui::BeginTable("compare_rows", 9, flags, size)) return;
  ImGui::TableSetupScrollFreeze(0, 1);
  ImGui::TableSetupColumn("#");
  ImGui::TableSetupColumn("operator", ImGuiTableColumnFlags_WidthStretch);
  ImGui::TableSetupColumn("n");
  ImGui::TableSetupColumn("baseline");
  ImGui::TableSetupColumn("candidate");
  ImGui::TableSetupColumn("change", ImGuiTableColumnFlags_WidthFixed, 220);
  ImGui::TableSetupColumn("q");  // p adjusted across the operators (Benjamini-Hochberg)
  ImGui::TableSetupColumn("effect");
  ImGui::TableSetupColumn("verdict");
  ImGui::TableHeadersRow();
  for (size_t i = 0; i < cmp.rows.size(); ++i) {
    const inspect::CompareRow& r = cmp.rows[i];
    if (cv.changed_only && r.verdict == inspect::Verdict::kUnchanged) continue;
    if (cv.filter[0] != 0 && !contains_ignore_case(r.name, cv.filter)) continue;
    const InstructionRef ref{r.chain, r.instruction};
    ImGui::TableNextRow();
    ImGui::TableNextColumn();
    char id[64];
    if (r.instruction >= 0) {
      std::snprintf(id, sizeof id, "%d##cmp%zu", r.instruction, i);
    } else {
      std::snprintf(id, sizeof id, "-##cmp%zu", i);
    }
    const bool selected = model.same_program() && ref.valid() && ref == state.selected;
    if (ImGui::Selectable(id, selected, ImGuiSelectableFlags_SpanAllColumns) && model.same_program() && ref.valid()) {
      state.select(ref);
    }
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(r.name.c_str());
    ImGui::TableNextColumn();
    ImGui::Text("%zu / %zu", r.n_a, r.n_b);
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(r.n_a ? Ms(r.median_a_ms).c_str() : "-");
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(r.n_b ? Ms(r.median_b_ms).c_str() : "-");
    // The change: a bar from the column's middle, right for slower, left for faster.
    ImGui::TableNextColumn();
    {
      const ImVec2 p = ImGui::GetCursorScreenPos();
      const float w = ImGui::GetContentRegionAvail().x, h = ImGui::GetTextLineHeight();
      ImDrawList* dl = ImGui::GetWindowDrawList();
      const float mid = p.x + w * 0.5f;
      dl->AddLine(ImVec2(mid, p.y), ImVec2(mid, p.y + h), palette::kAxis);
      if (r.n_a && r.n_b) {
        const float len = static_cast<float>(std::clamp(r.delta / scale, -1.0, 1.0)) * (w * 0.5f - 2);
        dl->AddRectFilled(ImVec2(std::min(mid, mid + len), p.y + 2), ImVec2(std::max(mid, mid + len), p.y + h - 2),
                          VerdictColour(r.verdict));
        const std::string text = Percent(r.delta);
        const float tw = ImGui::CalcTextSize(text.c_str()).x;
        const float tx = r.delta >= 0 ? mid - tw - 4 : mid + 4;
        dl->AddText(ImVec2(tx, p.y), ImGui::GetColorU32(ImGuiCol_Text), text.c_str());
      }
      ImGui::Dummy(ImVec2(w, h));
    }
    ImGui::TableNextColumn();
    if (r.n_a && r.n_b) {
      ImGui::Text("%.3g", r.p_adjusted);
      if (ImGui::IsItemHovered()) ImGui::SetTooltip("p %.3g before the adjustment", r.test.p);
    } else {
      ImGui::TextDisabled("-");
    }
    ImGui::TableNextColumn();
    if (r.n_a && r.n_b) {
      ImGui::Text("%+.2f", r.test.effect);
    } else {
      ImGui::TextDisabled("-");
    }
    ImGui::TableNextColumn();
    ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(VerdictColour(r.verdict)), "%s", to_string(r.verdict));
  }
  ImGui::EndTable();
}

}  // namespace

void DrawCompareView(const Session& session, ViewState& state) {
  CompareViewState& cv = state.compare;
  if (!session.store_runs.empty()) {
    ImGui::TextDisabled("store %s", session.store_location.c_str());
    ImGui::SameLine(0, 16);
    RunPicker("baseline##pick", session, session.store_baseline, session.store_baseline_set, state.baseline_request);
    ImGui::SameLine(0, 16);
    RunPicker("candidate##pick", session, session.store_run, session.store_run_set, state.run_request);
  }
  if (!session.compare) {
    ImGui::Spacing();
    if (!session.baseline_samples.empty() && !session.dump && session.store_run == 0) {
      ImGui::TextDisabled("The baseline is loaded; open the run to compare with it (an ETDump, or a stored run above).");
    } else {
      ImGui::TextDisabled("This view compares two runs. Give a baseline with --baseline (an ETDump, or a stored run with --store),");
      ImGui::TextDisabled("e.g.  etscope-gui --baseline before.etdp after.etdp   or   etscope-gui --store runs.sqlite --baseline 3 --run 7");
    }
    return;
  }
  const CompareModel& model = *session.compare;
  ImGui::SetNextItemWidth(90);
  ImGui::InputFloat("threshold %", &cv.threshold_percent, 0, 0, "%.1f");
  cv.threshold_percent = std::clamp(cv.threshold_percent, 0.0f, 1000.0f);
  ImGui::SameLine(0, 16);
  ImGui::SetNextItemWidth(90);
  ImGui::InputFloat("min change us", &cv.min_change_us, 0, 0, "%.1f");
  cv.min_change_us = std::clamp(cv.min_change_us, 0.0f, 1e9f);
  ImGui::SameLine(0, 16);
  ImGui::SetNextItemWidth(90);
  ImGui::InputFloat("FDR alpha", &cv.alpha, 0, 0, "%.3f");
  cv.alpha = std::clamp(cv.alpha, 1e-6f, 1.0f);
  ImGui::SameLine(0, 16);
  ImGui::Checkbox("changed only", &cv.changed_only);
  ImGui::SameLine(0, 16);
  ImGui::SetNextItemWidth(200);
  ImGui::InputTextWithHint("##filter", "filter operators", cv.filter, sizeof cv.filter);
  const inspect::Comparison& cmp = model.comparison(cv.threshold_percent / 100.0, cv.alpha, cv.min_change_us / 1000.0);

  // Who is compared, and the verdict on the whole method.
  ImGui::Text("baseline  %s", model.baseline_label().c_str());
  ImGui::SameLine(0, 16);
  ImGui::TextDisabled("engine %s", model.baseline_engine().text().c_str());
  ImGui::Text("candidate %s", model.candidate_label().c_str());
  ImGui::SameLine(0, 16);
  ImGui::TextDisabled("engine %s", model.candidate_engine().text().c_str());
  if (!model.same_program()) {
    ImGui::SameLine(0, 16);
    ImGui::TextColored(ImVec4(0.95f, 0.75f, 0.3f, 1), "(different operators: matched by name and occurrence)");
  }
  // Different engines time different code: `etscope compare` refuses them unless asked.
  if (model.engines().match == inspect::EngineMatch::kDifferent) {
    ImGui::TextColored(ImVec4(0.95f, 0.45f, 0.3f, 1), "different engines: %s", model.engines().text.c_str());
  } else if (model.engines().match == inspect::EngineMatch::kUnknown) {
    ImGui::TextDisabled("note: %s", model.engines().text.c_str());
  }
  const inspect::CompareRow& m = cmp.method;
  if (m.n_a && m.n_b) {
    // With several runs a side the total is tested on the runs' medians (n_a, n_b are runs).
    const bool sets = cmp.runs_a > 1 && cmp.runs_b > 1;
    ImGui::Text("method total: %s -> %s (%s, p %.3g, %zu/%zu %s)", Ms(m.median_a_ms).c_str(), Ms(m.median_b_ms).c_str(),
                Percent(m.delta).c_str(), m.test.p, m.n_a, m.n_b, sets ? "runs, on their medians" : "executions");
    ImGui::SameLine();
    ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(VerdictColour(m.verdict)), "%s", to_string(m.verdict));
  } else {
    ImGui::TextDisabled("method total: not timed in both runs");
  }
  ImGui::SameLine(0, 24);
  ImGui::TextDisabled("%zu regressions, %zu improvements (of %zu operators: significant at FDR %.3g, Benjamini-Hochberg, "
                      "and changed by more than %.3g%% and %.3g us)",
                      cmp.regressions, cmp.improvements, cmp.tests, cv.alpha, cv.threshold_percent, cv.min_change_us);

  const bool timelines = session.baseline_timeline && session.timeline && session.store_run == 0;
  const float avail = ImGui::GetContentRegionAvail().y;
  const float timeline_h = timelines ? std::clamp(avail * 0.3f, 120.0f, 260.0f) : ImGui::GetTextLineHeightWithSpacing() * 1.5f;
  DrawTable(model, cmp, state, ImVec2(0, std::max(120.0f, avail - timeline_h - 8)));
  DrawTimelines(session, state, timeline_h - ImGui::GetTextLineHeightWithSpacing());
}

}  // namespace etscope::gui
