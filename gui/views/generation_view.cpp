// Generation view: the profile of a generation (`etscope generate --etdump`), from the session's
// GenerationModel (inspect::generation_profile's numbers; this file only lays them out): the
// prefill/decode split, one bar per decode call (its latency, with its attention and cache-update
// time at the foot of the bar, so attention's growth with the context shows), the phases' table
// and each phase's operator breakdown.
#include <imgui.h>

#include <algorithm>
#include <string>

#include "etscope/core/text.h"
#include "views/palette.h"
#include "views/plot.h"
#include "views/views.h"

namespace etscope::gui {
namespace {

constexpr ImU32 kPrefill = IM_COL32(240, 170, 60, 255);
constexpr ImU32 kDecode = IM_COL32(90, 160, 230, 255);
constexpr ImU32 kAttention = IM_COL32(214, 90, 90, 255);
constexpr ImU32 kCacheUpdate = IM_COL32(200, 120, 200, 255);

// Durations of the model are microseconds (load_session's target unit).
std::string us_text(double us) { return duration_text_us(us); }

std::string rate_text(const std::optional<double>& tokens_per_second) {
  return tokens_per_second ? significant_text(*tokens_per_second, 4) + " tokens/s" : "-";
}

void Swatch(ImU32 colour, const char* label) {
  const ImVec2 p = ImGui::GetCursorScreenPos();
  const float h = ImGui::GetTextLineHeight();
  ImGui::GetWindowDrawList()->AddRectFilled(p, ImVec2(p.x + h, p.y + h), colour);
  ImGui::Dummy(ImVec2(h, h));
  ImGui::SameLine();
  ImGui::TextUnformatted(label);
}

// The prefill/decode split of the generation's time, one bar across the window.
void DrawSplit(const inspect::GenerationProfile& g) {
  const double total = g.prefill.total + g.decode.total;
  const float width = ImGui::GetContentRegionAvail().x;
  const float h = ImGui::GetTextLineHeight() * 1.4f;
  const ImVec2 p = ImGui::GetCursorScreenPos();
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const float split = total > 0 ? static_cast<float>(g.prefill.total / total) * width : 0.0f;
  dl->AddRectFilled(p, ImVec2(p.x + split, p.y + h), kPrefill);
  dl->AddRectFilled(ImVec2(p.x + split, p.y), ImVec2(p.x + width, p.y + h), kDecode);
  ImGui::InvisibleButton("split", ImVec2(width, h));
  if (ImGui::IsItemHovered() && total > 0) {
    ImGui::SetTooltip("prefill %s (%.1f%%)\ndecode %s (%.1f%%)", us_text(g.prefill.total).c_str(), 100.0 * g.prefill.total / total,
                      us_text(g.decode.total).c_str(), 100.0 * g.decode.total / total);
  }
}

// One bar per decode call: its time, with attention and the cache update stacked at its foot.
// With `clip`, the axis stops at twice the decode p90, so one preempted call does not flatten
// every other bar; the calls past it reach the top with a mark.
void DrawDecodeBars(const GenerationModel& model, const inspect::GenerationProfile& g, bool clip) {
  const std::vector<inspect::GenerationCall>& calls = g.decode.calls;
  const float height = std::max(160.0f, ImGui::GetContentRegionAvail().y * 0.4f);
  const PlotArea plot = BeginPlot("decode", ImVec2(ImGui::GetContentRegionAvail().x, height), PlotMargins{64, 8, 8, 20});
  if (calls.empty()) {
    plot.dl->AddText(ImVec2(plot.a.x + 8, plot.a.y + 8), palette::kAxis, "no decode calls");
    return;
  }
  double hi = model.decode_time_max() > 0 ? model.decode_time_max() * 1.05 : 1.0;
  const bool clipped = clip && g.decode.p90 > 0 && hi > 2 * g.decode.p90;
  if (clipped) hi = 2 * g.decode.p90;
  auto y_of = [&](double v) { return plot.y(std::min(v, hi), 0, hi); };
  for (const Tick& t : time_ticks(0, hi * 1e3, std::max(2, static_cast<int>(plot.height() / 40)))) {
    const float y = plot.y(t.value / 1e3, 0, hi);
    plot.dl->AddLine(ImVec2(plot.a.x, y), ImVec2(plot.b.x, y), palette::kGrid);
    plot.dl->AddText(ImVec2(plot.frame_min.x + 4, y - ImGui::GetTextLineHeight() * 0.5f), palette::kAxis, t.label.c_str());
  }
  const auto n = static_cast<double>(calls.size());
  const float slot = plot.width() / static_cast<float>(n);
  const float gap = slot > 4 ? 1.0f : 0.0f;
  for (size_t k = 0; k < calls.size(); ++k) {
    const inspect::GenerationCall& c = calls[k];
    const float x0 = plot.x(static_cast<double>(k), 0, n) + gap * 0.5f;
    const float x1 = std::max(x0 + 1.0f, plot.x(static_cast<double>(k + 1), 0, n) - gap * 0.5f);
    plot.dl->AddRectFilled(ImVec2(x0, y_of(c.time)), ImVec2(x1, plot.b.y), kDecode);
    plot.dl->AddRectFilled(ImVec2(x0, y_of(c.attention)), ImVec2(x1, plot.b.y), kAttention);
    plot.dl->AddRectFilled(ImVec2(x0, y_of(c.attention + c.cache_update)), ImVec2(x1, y_of(c.attention)), kCacheUpdate);
    if (c.time > hi) {
      const float mid = (x0 + x1) * 0.5f;
      plot.dl->AddTriangleFilled(ImVec2(mid, plot.a.y), ImVec2(mid - 4, plot.a.y + 7), ImVec2(mid + 4, plot.a.y + 7), palette::kPeak);
    }
  }
  // First and last positions under the axis.
  const std::string first = std::to_string(calls.front().position), last = std::to_string(calls.back().position);
  plot.dl->AddText(ImVec2(plot.a.x, plot.b.y + 2), palette::kAxis, first.c_str());
  plot.dl->AddText(ImVec2(plot.b.x - ImGui::CalcTextSize(last.c_str()).x, plot.b.y + 2), palette::kAxis, last.c_str());
  if (ImGui::IsItemHovered()) {
    const float mx = ImGui::GetIO().MousePos.x;
    if (mx >= plot.a.x && mx < plot.b.x) {
      const auto k = std::min(calls.size() - 1, static_cast<size_t>((mx - plot.a.x) / slot));
      const inspect::GenerationCall& c = calls[k];
      ImGui::SetTooltip("%s %lld (run block #%u)\ntime %s\nattention %s\ncache update %s", g.positions_known ? "position" : "decode call",
                        static_cast<long long>(c.position), c.dump_block, us_text(c.time).c_str(), us_text(c.attention).c_str(),
                        us_text(c.cache_update).c_str());
    }
  }
}

void DrawPhases(const inspect::GenerationProfile& g) {
  const ImGuiTableFlags flags = ImGuiTableFlags_Borders | ImGuiTableFlags_RowBg | ImGuiTableFlags_SizingFixedFit;
  if (!ImGui::BeginTable("phases", 9, flags)) return;
  for (const char* c : {"phase", "calls", "tokens", "total", "median", "p90", "tokens/s", "attention", "cache update"}) {
    ImGui::TableSetupColumn(c);
  }
  ImGui::TableHeadersRow();
  for (const inspect::PhaseProfile* p : {&g.prefill, &g.decode}) {
    ImGui::TableNextRow();
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(inspect::to_string(p->phase));
    ImGui::TableNextColumn();
    ImGui::Text("%zu", p->calls.size());
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(p->tokens ? std::to_string(*p->tokens).c_str() : "-");
    for (double v : {p->total, p->median, p->p90}) {
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(us_text(v).c_str());
    }
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(rate_text(p->tokens_per_second).c_str());
    for (double v : {p->attention, p->cache_update}) {
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(us_text(v).c_str());
    }
  }
  ImGui::EndTable();
}

void DrawOperators(const inspect::PhaseProfile& p, float height) {
  const ImGuiTableFlags flags = ImGuiTableFlags_Borders | ImGuiTableFlags_RowBg | ImGuiTableFlags_ScrollY | ImGuiTableFlags_SizingFixedFit;
  const std::string id = std::string("operators_") + inspect::to_string(p.phase);
  if (!ImGui::BeginTable(id.c_str(), 4, flags, ImVec2(0, height))) return;
  ImGui::TableSetupScrollFreeze(0, 1);
  ImGui::TableSetupColumn("operator", ImGuiTableColumnFlags_WidthStretch);
  ImGui::TableSetupColumn("count");
  ImGui::TableSetupColumn("total");
  ImGui::TableSetupColumn("share");
  ImGui::TableHeadersRow();
  ImGuiListClipper clipper;
  clipper.Begin(static_cast<int>(p.operators.size()));
  while (clipper.Step()) {
    for (int i = clipper.DisplayStart; i < clipper.DisplayEnd; ++i) {
      const inspect::PhaseOperator& op = p.operators[static_cast<size_t>(i)];
      ImGui::TableNextRow();
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(op.name.c_str());
      ImGui::TableNextColumn();
      ImGui::Text("%llu", static_cast<unsigned long long>(op.count));
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(us_text(op.total).c_str());
      ImGui::TableNextColumn();
      ImGui::TextUnformatted((significant_text(op.share * 100.0, 3) + "%").c_str());
    }
  }
  ImGui::EndTable();
}

}  // namespace

void DrawGenerationView(const Session& session, ViewState& state) {
  if (!session.generation) {
    ImGui::TextDisabled("Needs the ETDump of a generation (etscope generate --etdump): its Prefill and Decode blocks.");
    return;
  }
  const GenerationModel& model = *session.generation;
  GenerationViewState& gv = state.generation;
  ImGui::SetNextItemWidth(120);
  ImGui::InputInt("prompt tokens", &gv.prompt_tokens);
  gv.prompt_tokens = std::max(gv.prompt_tokens, 0);
  if (ImGui::IsItemHovered()) {
    ImGui::SetTooltip("The prompt's token count (not in the dump): gives decode positions and prefill tokens/s. 0: unknown.");
  }
  const inspect::GenerationProfile& g = model.profile(gv.prompt_tokens);
  ImGui::SameLine();
  ImGui::TextDisabled("prefill %s in %zu call(s), %s;  decode %s in %zu calls, %s;  engine %s", us_text(g.prefill.total).c_str(),
                      g.prefill.calls.size(), rate_text(g.prefill.tokens_per_second).c_str(), us_text(g.decode.total).c_str(),
                      g.decode.calls.size(), rate_text(g.decode.tokens_per_second).c_str(), session.engine.text().c_str());
  Swatch(kPrefill, "prefill");
  ImGui::SameLine();
  Swatch(kDecode, "decode");
  ImGui::SameLine();
  Swatch(kAttention, "attention");
  ImGui::SameLine();
  Swatch(kCacheUpdate, "cache update");
  DrawSplit(g);
  ImGui::TextUnformatted(g.positions_known ? "Decode latency per token (x: position)" : "Decode latency per token (x: decode call)");
  ImGui::SameLine();
  ImGui::Checkbox("clip at 2 x p90", &gv.clip_outliers);
  DrawDecodeBars(model, g, gv.clip_outliers);
  DrawPhases(g);
  const float height = std::max(120.0f, ImGui::GetContentRegionAvail().y - ImGui::GetTextLineHeightWithSpacing());
  if (ImGui::BeginTable("breakdown", 2, ImGuiTableFlags_SizingStretchSame)) {
    for (const inspect::PhaseProfile* p : {&g.prefill, &g.decode}) {
      ImGui::TableNextColumn();
      ImGui::Text("%s operators", inspect::to_string(p->phase));
      DrawOperators(*p, height);
    }
    ImGui::EndTable();
  }
}

}  // namespace etscope::gui
