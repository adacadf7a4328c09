// Numeric gaps view: libinspect's per-operator gap between the AOT reference and the run, in
// program order as bars (log scale for L1 and MSE, dB for SNR), the threshold and the first
// divergence marked; below, the rows as a table and, for the selected row, the two tensors side
// by side: shapes, ranges, the largest difference and where it is, a histogram of the
// differences and a scatter of runtime against AOT values. Selecting a row selects its
// instruction in every view.
#include <imgui.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

#include "model/text_format.h"
#include "views/palette.h"
#include "views/plot.h"
#include "views/views.h"

namespace etscope::gui {
namespace {

constexpr ImU32 kBar = IM_COL32(90, 140, 210, 255);
constexpr ImU32 kBarDiverged = IM_COL32(214, 39, 40, 255);
constexpr ImU32 kThreshold = IM_COL32(240, 170, 60, 255);
constexpr ImU32 kNoValue = IM_COL32(110, 110, 120, 255);

std::string GapText(double g, inspect::GapMetric metric) {
  if (std::isnan(g)) return "n/a";
  if (std::isinf(g)) return g > 0 ? "inf" : "-inf";
  char buf[48];
  if (metric == inspect::GapMetric::kSNR) {
    std::snprintf(buf, sizeof buf, "%.2f dB", g);
  } else {
    std::snprintf(buf, sizeof buf, "%.4g", g);
  }
  return buf;
}

std::string Coordinates(const std::vector<int64_t>& at) {
  std::string out = "[";
  for (size_t i = 0; i < at.size(); ++i) out += (i ? "," : "") + std::to_string(at[i]);
  return out + "]";
}

// Plot scale of one metric: log10 of the gap for L1 and MSE (zero and NaN at the floor), dB as is
// for SNR (infinity, identical values, at the ceiling).
struct Scale {
  bool log = true;
  double lo = 0, hi = 1;
  double map(double g) const {
    if (std::isnan(g)) return lo;
    if (log) return g <= 0 ? lo : std::clamp(std::log10(g), lo, hi);
    if (std::isinf(g)) return g > 0 ? hi : lo;
    return std::clamp(g, lo, hi);
  }
};

Scale ScaleFor(const GapModel& model, int metric, double threshold) {
  Scale s;
  s.log = metric != static_cast<int>(inspect::GapMetric::kSNR);
  double lo = std::numeric_limits<double>::infinity(), hi = -lo;
  for (const GapModelRow& r : model.rows()) {
    const double g = r.gap[static_cast<size_t>(metric)];
    if (std::isnan(g) || std::isinf(g) || (s.log && g <= 0)) continue;
    const double v = s.log ? std::log10(g) : g;
    lo = std::min(lo, v), hi = std::max(hi, v);
  }
  const double t = s.log ? (threshold > 0 ? std::log10(threshold) : lo) : threshold;
  if (std::isfinite(t)) lo = std::min(lo, t), hi = std::max(hi, t);
  if (!std::isfinite(lo)) lo = s.log ? -12 : 0, hi = s.log ? 0 : 100;
  if (s.log) {
    s.lo = std::floor(lo) - 1, s.hi = std::ceil(hi);
  } else {
    s.lo = std::min(0.0, std::floor(lo / 10) * 10), s.hi = std::ceil(hi / 10) * 10 + 10;
  }
  if (s.hi <= s.lo) s.hi = s.lo + 1;
  return s;
}

void SelectRow(const GapModel& model, size_t row, ViewState& state) {
  state.gaps.row = row;
  state.gaps.element = 0;
  state.gaps.scroll_table = true;
  const InstructionRef ref = model.rows()[row].instruction;
  if (ref.valid()) state.select(ref);
}

void DrawBars(const GapModel& model, ViewState& state, std::optional<size_t> first, float height) {
  GapsViewState& gv = state.gaps;
  const auto metric = static_cast<inspect::GapMetric>(gv.metric);
  const Scale scale = ScaleFor(model, gv.metric, gv.threshold);
  const PlotArea plot = BeginPlot("bars", ImVec2(ImGui::GetContentRegionAvail().x, height), PlotMargins{64, 8, 4, 18});
  ImDrawList* dl = plot.dl;
  const ImVec2 p0 = plot.frame_min, a = plot.a, b = plot.b;
  const bool hovered = ImGui::IsItemHovered();
  const size_t n = model.rows().size();
  auto y_of = [&](double v) { return static_cast<float>(b.y - (v - scale.lo) / (scale.hi - scale.lo) * (b.y - a.y)); };
  // Grid and axis labels: decades, or tens of dB.
  const double step = scale.log ? 1.0 : nice_step(scale.hi - scale.lo, 6);
  for (double v = std::ceil(scale.lo / step) * step; v <= scale.hi + 1e-9; v += step) {
    const float y = y_of(v);
    dl->AddLine(ImVec2(a.x, y), ImVec2(b.x, y), palette::kGrid);
    char label[32];
    if (scale.log) {
      std::snprintf(label, sizeof label, "1e%+d", static_cast<int>(std::lround(v)));
    } else {
      std::snprintf(label, sizeof label, "%g dB", v);
    }
    dl->AddText(ImVec2(p0.x + 6, y - ImGui::GetTextLineHeight() * 0.5f), palette::kAxis, label);
  }
  // Threshold.
  if (!scale.log || gv.threshold > 0) {
    const float ty = y_of(scale.log ? std::log10(gv.threshold) : gv.threshold);
    for (float x = a.x; x < b.x; x += 10) dl->AddLine(ImVec2(x, ty), ImVec2(std::min(x + 6, b.x), ty), kThreshold, 1.5f);
  }
  if (n == 0) return;
  const float slot = (b.x - a.x) / static_cast<float>(n);
  const float gap = slot > 6 ? std::min(4.0f, slot * 0.2f) : 0.0f;
  const std::optional<size_t> selected = gv.row < n ? std::optional<size_t>(gv.row) : model.row_of(state.selected);
  for (size_t i = 0; i < n; ++i) {
    const float x0 = a.x + slot * static_cast<float>(i), x1 = x0 + std::max(1.0f, slot - gap);
    if (selected == i) dl->AddRectFilled(ImVec2(x0 - gap * 0.5f, a.y), ImVec2(x1 + gap * 0.5f, b.y), palette::kSelectionFill);
    const double g = model.rows()[i].gap[static_cast<size_t>(gv.metric)];
    if (std::isnan(g)) {
      dl->AddRectFilled(ImVec2(x0, b.y - 3), ImVec2(x1, b.y), kNoValue);
      continue;
    }
    const ImU32 colour = model.passes(i, metric, gv.threshold) ? kBarDiverged : kBar;
    dl->AddRectFilled(ImVec2(x0, y_of(scale.map(g))), ImVec2(x1, b.y), colour);
  }
  if (first) {
    const float x = a.x + slot * (static_cast<float>(*first) + 0.5f);
    dl->AddLine(ImVec2(x, a.y), ImVec2(x, b.y), palette::kPeakText, 2.0f);
    char label[64];
    std::snprintf(label, sizeof label, "first divergence: #%zu", *first);
    const float tw = ImGui::CalcTextSize(label).x;
    dl->AddText(ImVec2(std::min(x + 4, b.x - tw), a.y + 2), palette::kPeakText, label);
  }
  // Row numbers under the bars, as many as fit.
  const float label_w = ImGui::CalcTextSize("0000").x + 8;
  const size_t every = std::max<size_t>(1, static_cast<size_t>(std::ceil(label_w / slot)));
  for (size_t i = 0; i < n; i += every) {
    char label[32];
    std::snprintf(label, sizeof label, "%zu", i);
    dl->AddText(ImVec2(a.x + slot * static_cast<float>(i), b.y + 2), palette::kAxis, label);
  }
  if (hovered) {
    const float mx = ImGui::GetIO().MousePos.x;
    if (mx >= a.x && mx < b.x) {
      const size_t i = std::min(n - 1, static_cast<size_t>((mx - a.x) / slot));
      const GapModelRow& r = model.rows()[i];
      ImGui::BeginTooltip();
      ImGui::Text("#%zu  %s", i, r.name.c_str());
      ImGui::TextDisabled("AOT %s   handles %s", r.aot_ops.c_str(), r.handles.c_str());
      if (!r.module.empty()) ImGui::TextDisabled("module %s", r.module.c_str());
      ImGui::Text("%s %s   output %s", to_string(metric), GapText(r.gap[static_cast<size_t>(gv.metric)], metric).c_str(),
                  r.runtime_text.c_str());
      ImGui::EndTooltip();
      if (ImGui::IsMouseClicked(0)) SelectRow(model, i, state);
    }
  }
}

void DrawTable(const GapModel& model, ViewState& state, const std::optional<size_t>& selected, ImVec2 size) {
  GapsViewState& gv = state.gaps;
  const auto metric = static_cast<inspect::GapMetric>(gv.metric);
  const ImGuiTableFlags flags = ImGuiTableFlags_RowBg | ImGuiTableFlags_ScrollY | ImGuiTableFlags_BordersInnerV |
                                ImGuiTableFlags_Resizable | ImGuiTableFlags_SizingFixedFit;
  const bool local = model.has_local();
  if (!ImGui::BeginTable("gap_rows", local ? 7 : 6, flags, size)) return;
  ImGui::TableSetupScrollFreeze(0, 1);
  ImGui::TableSetupColumn("#");
  ImGui::TableSetupColumn("runtime operator", ImGuiTableColumnFlags_WidthStretch);
  ImGui::TableSetupColumn("AOT nodes", ImGuiTableColumnFlags_WidthStretch);
  ImGui::TableSetupColumn("module");
  ImGui::TableSetupColumn("output");
  ImGui::TableSetupColumn(to_string(metric));
  if (local) ImGui::TableSetupColumn("local");
  ImGui::TableHeadersRow();
  const size_t n = model.rows().size();
  for (size_t i = 0; i < n; ++i) {
    const GapModelRow& r = model.rows()[i];
    ImGui::TableNextRow();
    ImGui::TableNextColumn();
    char id[64];
    std::snprintf(id, sizeof id, "%zu##gap%zu", i, i);
    const bool is_selected = selected == i;
    if (ImGui::Selectable(id, is_selected, ImGuiSelectableFlags_SpanAllColumns)) SelectRow(model, i, state);
    if (is_selected && gv.scroll_table) {
      ImGui::SetScrollHereY(0.5f);
      gv.scroll_table = false;
    }
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(r.name.c_str());
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(r.aot_ops.c_str());
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(r.module.c_str());
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(r.runtime_text.c_str());
    ImGui::TableNextColumn();
    const bool diverged = model.passes(i, metric, gv.threshold);
    if (diverged) ImGui::PushStyleColor(ImGuiCol_Text, palette::kPeakText);
    ImGui::TextUnformatted(GapText(r.gap[static_cast<size_t>(gv.metric)], metric).c_str());
    if (diverged) ImGui::PopStyleColor();
    if (local) {
      // The operator's own gap (computed from the AOT values of its inputs): "-" inside a delegate.
      ImGui::TableNextColumn();
      const std::optional<double>& own = r.local[static_cast<size_t>(gv.metric)];
      ImGui::TextUnformatted(own ? GapText(*own, metric).c_str() : "-");
    }
  }
  ImGui::EndTable();
}

void DrawHistogram(const inspect::GapDetail& d, ImVec2 size) {
  const float label_h = ImGui::GetTextLineHeight() + 4;
  const PlotArea p = BeginPlot("histogram", size, PlotMargins{6, 6, 6, label_h});
  uint64_t most = 1;
  for (uint64_t c : d.histogram) most = std::max(most, c);
  const float bw = p.width() / static_cast<float>(std::max<size_t>(1, d.histogram.size()));
  for (size_t i = 0; i < d.histogram.size(); ++i) {
    if (d.histogram[i] == 0) continue;
    // Square-root height: the tails stay visible next to a tall middle bin.
    const float h = static_cast<float>(std::sqrt(static_cast<double>(d.histogram[i]) / static_cast<double>(most))) * p.height();
    p.dl->AddRectFilled(ImVec2(p.a.x + bw * static_cast<float>(i) + 1, p.b.y - std::max(1.0f, h)),
                        ImVec2(p.a.x + bw * static_cast<float>(i + 1) - 1, p.b.y), kBar);
  }
  char lo[32], hi[32];
  std::snprintf(lo, sizeof lo, "%.3g", -d.max_abs);
  std::snprintf(hi, sizeof hi, "+%.3g", d.max_abs);
  p.dl->AddText(ImVec2(p.a.x, p.b.y + 2), palette::kAxis, lo);
  p.dl->AddText(ImVec2(p.b.x - ImGui::CalcTextSize(hi).x, p.b.y + 2), palette::kAxis, hi);
  const char* mid = "runtime - AOT (sqrt count)";
  p.dl->AddText(ImVec2((p.a.x + p.b.x - ImGui::CalcTextSize(mid).x) * 0.5f, p.b.y + 2), palette::kAxis, mid);
}

void DrawScatter(const inspect::GapDetail& d, ImVec2 size) {
  const float label_h = ImGui::GetTextLineHeight() + 4;
  const PlotArea p = BeginPlot("scatter", size, PlotMargins{6, 6, 6, label_h});
  double lo = std::min(d.aot_min, d.runtime_min), hi = std::max(d.aot_max, d.runtime_max);
  if (!std::isfinite(lo) || !std::isfinite(hi)) lo = -1, hi = 1;
  if (hi <= lo) lo -= 1, hi += 1;
  auto at = [&](double x, double y) { return ImVec2(p.x(x, lo, hi), p.y(y, lo, hi)); };
  p.dl->AddLine(at(lo, lo), at(hi, hi), palette::kAxis);
  for (const auto& [x, y] : d.points) p.dl->AddCircleFilled(at(x, y), 1.8f, IM_COL32(120, 180, 240, 200), 6);
  if (d.compared > 0) p.dl->AddCircle(at(d.aot_at_max, d.runtime_at_max), 5.0f, palette::kPeakText, 12, 1.5f);
  char label[96];
  std::snprintf(label, sizeof label, "x AOT, y runtime, [%.3g, %.3g]", lo, hi);
  p.dl->AddText(ImVec2(p.a.x, p.b.y + 2), palette::kAxis, label);
}

void DrawDetail(const GapModel& model, ViewState& state, size_t row) {
  GapsViewState& gv = state.gaps;
  const GapModelRow& r = model.rows()[row];
  ImGui::Text("#%zu  %s", row, r.name.c_str());
  ImGui::TextDisabled("AOT %s   handles %s%s%s", r.aot_ops.c_str(), r.handles.c_str(), r.module.empty() ? "" : "   module ",
                      r.module.c_str());
  const size_t elements = model.elements(row);
  if (elements > 1) {
    int e = static_cast<int>(std::min(gv.element, elements - 1));
    ImGui::SetNextItemWidth(200);
    if (ImGui::SliderInt("sequence element", &e, 0, static_cast<int>(elements) - 1)) gv.element = static_cast<size_t>(e);
  }
  const size_t element = std::min(gv.element, elements - 1);
  auto [aot, run] = model.values(row, element);
  const Result<inspect::GapDetail>& detail = model.detail(row, element);
  if (ImGui::BeginTable("sides", 3, ImGuiTableFlags_BordersInnerV | ImGuiTableFlags_SizingStretchProp)) {
    ImGui::TableSetupColumn("");
    ImGui::TableSetupColumn(model.reference_graph().empty() ? "AOT" : ("AOT (" + model.reference_graph() + ")").c_str());
    ImGui::TableSetupColumn("runtime");
    ImGui::TableHeadersRow();
    auto line = [](const char* what, const std::string& left, const std::string& right) {
      ImGui::TableNextRow();
      ImGui::TableNextColumn();
      ImGui::TextDisabled("%s", what);
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(left.c_str());
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(right.c_str());
    };
    line("value", aot ? inspect::describe(*aot) : "", run ? inspect::describe(*run) : "");
    if (detail.ok() && detail->compared > 0) {
      char lo[64], hi[64];
      std::snprintf(lo, sizeof lo, "[%.6g, %.6g]", detail->aot_min, detail->aot_max);
      std::snprintf(hi, sizeof hi, "[%.6g, %.6g]", detail->runtime_min, detail->runtime_max);
      line("range", lo, hi);
      std::snprintf(lo, sizeof lo, "%.9g", detail->aot_at_max);
      std::snprintf(hi, sizeof hi, "%.9g", detail->runtime_at_max);
      line(("at " + Coordinates(detail->max_at)).c_str(), lo, hi);
    }
    ImGui::EndTable();
  }
  if (!detail.ok()) {
    ImGui::TextDisabled("%s", detail.error().message().c_str());
    return;
  }
  const inspect::GapDetail& d = *detail;
  ImGui::Text("max |runtime - AOT| %.4g at %s   mean %.4g   over %llu elements", d.max_abs, Coordinates(d.max_at).c_str(), d.mean_abs,
              static_cast<unsigned long long>(d.compared));
  if (const inspect::GapStats* st = model.stats(row, element)) {
    std::string text;
    for (const auto& [label, value] : inspect::gap_stats_text(*st)) {
      if (label == "max abs" || value == "-") continue;  // max abs: the line above
      text += (text.empty() ? "" : "   ") + label + " " + value;
    }
    ImGui::TextUnformatted(text.c_str());
  }
  const auto metric = static_cast<inspect::GapMetric>(gv.metric);
  const std::vector<double>& gaps = r.elements[static_cast<size_t>(gv.metric)];
  if (element < gaps.size()) ImGui::Text("%s %s", to_string(metric), GapText(gaps[element], metric).c_str());
  const float avail = ImGui::GetContentRegionAvail().x;
  const float h = std::max(80.0f, ImGui::GetContentRegionAvail().y - 8);
  const float side = std::min(h, avail * 0.5f - 6);
  DrawHistogram(d, ImVec2(avail - side - 8, side));
  ImGui::SameLine(0, 8);
  DrawScatter(d, ImVec2(side, side));
}

}  // namespace

void DrawGapsView(const Session& session, ViewState& state) {
  if (!session.gaps) {
    ImGui::Spacing();
    if (!session.gaps_problem.empty()) {
      ImGui::TextWrapped("%s", session.gaps_problem.c_str());
    }
    ImGui::TextDisabled("Numeric gaps need the AOT intermediates (.ptd, from samples/export/write_aot_intermediates.py),");
    ImGui::TextDisabled("an ETDump and debug buffer run at intermediate-output level (etscope debug --etdump D --debug-buffer B),");
    ImGui::TextDisabled("and the program's ETRecord. Loaded: %s%s%s%s.", session.aot ? "AOT intermediates " : "",
                        session.dump ? "ETDump " : "", session.debug_buffer ? "debug buffer " : "", session.record ? "ETRecord" : "");
    return;
  }
  const GapModel& model = *session.gaps;
  GapsViewState& gv = state.gaps;
  if (!gv.threshold_set) {
    gv.threshold = inspect::default_gap_threshold(static_cast<inspect::GapMetric>(gv.metric));
    gv.threshold_set = true;
  }
  const char* metrics[] = {"L1", "MSE", "SNR"};
  ImGui::SetNextItemWidth(90);
  if (ImGui::Combo("metric", &gv.metric, metrics, 3)) {
    gv.threshold = inspect::default_gap_threshold(static_cast<inspect::GapMetric>(gv.metric));
  }
  ImGui::SameLine(0, 16);
  ImGui::SetNextItemWidth(120);
  ImGui::InputDouble(gv.metric == 2 ? "threshold (dB, below diverges)" : "threshold (above diverges)", &gv.threshold, 0, 0, "%.4g");
  const auto metric = static_cast<inspect::GapMetric>(gv.metric);
  const std::optional<size_t> first = model.first_divergence(metric, gv.threshold);
  ImGui::SameLine(0, 24);
  if (first) {
    const GapModelRow& r = model.rows()[*first];
    ImGui::PushStyleColor(ImGuiCol_Text, palette::kPeakText);
    ImGui::Text("first divergence: #%zu %s (%s %s)", *first, r.name.c_str(), metrics[gv.metric],
                GapText(r.gap[static_cast<size_t>(gv.metric)], metric).c_str());
    ImGui::PopStyleColor();
    ImGui::SameLine();
    if (ImGui::SmallButton("go")) SelectRow(model, *first, state);
  } else {
    ImGui::Text("no operator diverges (%zu compared)", model.rows().size());
  }
  if (model.has_local()) {
    ImGui::SameLine(0, 24);
    if (const std::optional<size_t> culprit = model.culprit(metric, gv.threshold)) {
      const GapModelRow& r = model.rows()[*culprit];
      ImGui::PushStyleColor(ImGuiCol_Text, palette::kPeakText);
      ImGui::Text("culprit (own gap): #%zu %s (local %s %s)", *culprit, r.name.c_str(), metrics[gv.metric],
                  GapText(*r.local[static_cast<size_t>(gv.metric)], metric).c_str());
      ImGui::PopStyleColor();
      ImGui::SameLine();
      if (ImGui::SmallButton("go##culprit")) SelectRow(model, *culprit, state);
    } else {
      ImGui::TextDisabled("no operator's own gap diverges");
    }
  }
  const inspect::InputCheck& check = model.input_check();
  if (check.outcome == inspect::InputCheck::Outcome::kDifferent) {
    ImGui::PushStyleColor(ImGuiCol_Text, palette::kPeakText);
    ImGui::TextWrapped("%s", check.message.c_str());
    ImGui::PopStyleColor();
  }

  const float avail = ImGui::GetContentRegionAvail().y;
  DrawBars(model, state, first, std::max(120.0f, avail * 0.38f));
  std::optional<size_t> selected;
  if (gv.row < model.rows().size()) {
    selected = gv.row;
  } else {
    selected = model.row_of(state.selected);
  }
  // The shared selection moved elsewhere (another view): follow it when it maps to a row.
  if (selected && gv.row < model.rows().size() && state.selected.valid() && model.rows()[gv.row].instruction != state.selected) {
    if (auto other = model.row_of(state.selected)) selected = other, gv.row = *other;
  }
  const ImVec2 rest = ImGui::GetContentRegionAvail();
  DrawTable(model, state, selected, ImVec2(rest.x * 0.52f, rest.y));
  ImGui::SameLine(0, 10);
  ImGui::BeginChild("gap_detail", ImVec2(0, rest.y));
  if (selected) {
    DrawDetail(model, state, *selected);
  } else {
    ImGui::TextDisabled("Select a bar or a row to compare its AOT and runtime tensors.");
  }
  ImGui::EndChild();
}

}  // namespace etscope::gui
