// Training view: a training run's curve (an `etscope train --curve` JSON file or a stored run):
// loss against the step with the validation losses, accuracy when the run measured it, and each
// step's time split into forward-backward and optimizer as stacked bars. The three plots share
// the step axis; hovering one shows that step's numbers.
#include <imgui.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

#include "etscope/core/stats.h"
#include "model/text_format.h"
#include "views/palette.h"
#include "views/plot.h"
#include "views/views.h"

namespace etscope::gui {
namespace {

constexpr ImU32 kLoss = IM_COL32(90, 160, 230, 255);
constexpr ImU32 kValidation = IM_COL32(240, 170, 60, 255);
constexpr ImU32 kAccuracy = IM_COL32(100, 200, 120, 255);
constexpr ImU32 kForwardBackward = IM_COL32(90, 140, 210, 255);
constexpr ImU32 kOptimizer = IM_COL32(200, 120, 200, 255);
constexpr ImU32 kStepOnly = IM_COL32(138, 146, 160, 255);

struct Range {
  double lo = std::numeric_limits<double>::infinity();
  double hi = -std::numeric_limits<double>::infinity();
  void add(double v) {
    if (!std::isfinite(v)) return;
    lo = std::min(lo, v), hi = std::max(hi, v);
  }
  // A range with some air, never empty.
  void finish(bool from_zero) {
    if (!std::isfinite(lo)) lo = 0, hi = 1;
    if (from_zero) lo = std::min(lo, 0.0);
    if (hi <= lo) hi = lo + (lo == 0 ? 1 : std::fabs(lo) * 0.1);
    const double pad = (hi - lo) * 0.05;
    hi += pad;
    if (!from_zero) lo -= pad;
  }
};

// The step axis of every plot: [first_step - 0.5, last_step + 0.5].
struct StepAxis {
  double lo = 0, hi = 1;
};

void DrawGridY(const PlotArea& plot, double lo, double hi, const char* format) {
  for (double v : nice_ticks(lo, hi, std::max(2, static_cast<int>(plot.height() / 40)))) {
    const float y = plot.y(v, lo, hi);
    plot.dl->AddLine(ImVec2(plot.a.x, y), ImVec2(plot.b.x, y), palette::kGrid);
    char label[32];
    std::snprintf(label, sizeof label, format, v);
    plot.dl->AddText(ImVec2(plot.frame_min.x + 6, y - ImGui::GetTextLineHeight() * 0.5f), palette::kAxis, label);
  }
}

void DrawGridX(const PlotArea& plot, const StepAxis& axis) {
  for (double v : nice_ticks(axis.lo, axis.hi, std::max(2, static_cast<int>(plot.width() / 90)))) {
    if (v != std::floor(v)) continue;
    const float x = plot.x(v, axis.lo, axis.hi);
    plot.dl->AddLine(ImVec2(x, plot.a.y), ImVec2(x, plot.b.y), palette::kGrid);
    char label[32];
    std::snprintf(label, sizeof label, "%.0f", v);
    const float tw = ImGui::CalcTextSize(label).x;
    plot.dl->AddText(ImVec2(std::min(x + 3, plot.frame_max.x - tw - 2), plot.b.y + 2), palette::kAxis, label);
  }
}

// A line through the finite points (step, value); gaps where a value is missing.
template <class Get>
void DrawSeries(const PlotArea& plot, const StepAxis& axis, size_t n, int64_t first, double lo, double hi, ImU32 colour,
                float thickness, Get get) {
  std::vector<ImVec2> points;
  auto flush = [&] {
    if (points.size() == 1) plot.dl->AddCircleFilled(points[0], 2.5f, colour);
    if (points.size() > 1) plot.dl->AddPolyline(points.data(), static_cast<int>(points.size()), colour, 0, thickness);
    points.clear();
  };
  // More steps than pixels: keep each pixel column's min and max (the line's envelope).
  const double per_px = static_cast<double>(n) / std::max(1.0f, plot.width());
  for (size_t i = 0; i < n; ++i) {
    const std::optional<double> v = get(i);
    if (!v || !std::isfinite(*v)) {
      flush();
      continue;
    }
    if (per_px > 2 && i + 1 < n && points.size() > 1) {
      const float x = plot.x(static_cast<double>(first) + static_cast<double>(i), axis.lo, axis.hi);
      if (x - points.back().x < 0.5f) {
        const float y = plot.y(std::clamp(*v, lo, hi), lo, hi);
        ImVec2& last = points.back();
        last.y = (std::fabs(y - points[points.size() - 2].y) > std::fabs(last.y - points[points.size() - 2].y)) ? y : last.y;
        continue;
      }
    }
    points.emplace_back(plot.x(static_cast<double>(first) + static_cast<double>(i), axis.lo, axis.hi),
                        plot.y(std::clamp(*v, lo, hi), lo, hi));
  }
  flush();
}

// Step index under the mouse, when the plot is hovered.
std::optional<size_t> HoveredStep(const PlotArea& plot, const StepAxis& axis, const inspect::Curve& c) {
  if (!ImGui::IsItemHovered() || c.loss.empty()) return std::nullopt;
  const float mx = ImGui::GetIO().MousePos.x;
  if (mx < plot.a.x || mx > plot.b.x) return std::nullopt;
  const double step = axis.lo + (mx - plot.a.x) / plot.width() * (axis.hi - axis.lo);
  const double i = std::round(step - static_cast<double>(c.first_step));
  if (i < 0) return size_t{0};
  return std::min(c.loss.size() - 1, static_cast<size_t>(i));
}

void StepTooltip(const inspect::Curve& c, size_t i) {
  ImGui::BeginTooltip();
  ImGui::Text("step %lld", static_cast<long long>(c.first_step + static_cast<int64_t>(i)));
  ImGui::Text("loss %.6g", c.loss[i]);
  if (i < c.accuracy.size() && c.accuracy[i]) ImGui::Text("accuracy %.2f%%", *c.accuracy[i] * 100);
  if (i < c.step_ms.size()) ImGui::Text("step time %s", duration_text_ms(c.step_ms[i]).c_str());
  if (i < c.forward_backward_ms.size()) ImGui::TextDisabled("  forward-backward %s", duration_text_ms(c.forward_backward_ms[i]).c_str());
  if (i < c.optimizer_ms.size()) ImGui::TextDisabled("  optimizer %s", duration_text_ms(c.optimizer_ms[i]).c_str());
  const int64_t step = c.first_step + static_cast<int64_t>(i);
  for (const inspect::ValidationPoint& v : c.val) {
    if (v.step != step) continue;
    ImGui::Text("validation loss %.6g", v.loss);
    if (v.accuracy) ImGui::Text("validation accuracy %.2f%%", *v.accuracy * 100);
  }
  ImGui::EndTooltip();
}

void Legend(std::initializer_list<std::pair<ImU32, const char*>> entries) {
  for (const auto& [colour, label] : entries) {
    const ImVec2 p = ImGui::GetCursorScreenPos();
    const float h = ImGui::GetTextLineHeight();
    ImGui::GetWindowDrawList()->AddRectFilled(ImVec2(p.x, p.y + h * 0.25f), ImVec2(p.x + h, p.y + h * 0.75f), colour);
    ImGui::Dummy(ImVec2(h + 2, h));
    ImGui::SameLine();
    ImGui::TextUnformatted(label);
    ImGui::SameLine(0, 18);
  }
  ImGui::NewLine();
}

}  // namespace

void DrawTrainingView(const Session& session, ViewState& state) {
  const inspect::Curve& c = *session.curve;
  TrainingViewState& tv = state.training;
  const size_t n = c.loss.size();
  const int64_t last = c.first_step + static_cast<int64_t>(n) - 1;

  // Header: where the curve is from, steps, final and best losses, median step time.
  ImGui::Text("%s", session.curve_path.c_str());
  ImGui::SameLine(0, 16);
  if (n == 0) {
    ImGui::TextDisabled("no steps");
    return;
  }
  ImGui::TextDisabled("steps %lld-%lld   final loss %.5g", static_cast<long long>(c.first_step),
                      static_cast<long long>(last), c.loss.back());
  if (!c.step_ms.empty()) {
    ImGui::SameLine(0, 16);
    ImGui::TextDisabled("median step %s", duration_text_ms(median(c.step_ms)).c_str());
  }
  if (!c.val.empty()) {
    ImGui::SameLine(0, 16);
    const inspect::ValidationPoint& v = c.val.back();
    if (v.accuracy) {
      ImGui::TextDisabled("last validation: loss %.5g, accuracy %.2f%%", v.loss, *v.accuracy * 100);
    } else {
      ImGui::TextDisabled("last validation: loss %.5g", v.loss);
    }
  }
  ImGui::Checkbox("log scale", &tv.log_loss);
  const std::vector<double>& shown = c.loss;
  auto loss_value = [&](double v) -> double { return tv.log_loss ? (v > 0 ? std::log10(v) : NAN) : v; };

  bool has_accuracy = false;
  for (const auto& a : c.accuracy) has_accuracy = has_accuracy || a.has_value();
  for (const auto& v : c.val) has_accuracy = has_accuracy || v.accuracy.has_value();
  const bool has_times = !c.step_ms.empty() || !c.forward_backward_ms.empty();

  const StepAxis axis{static_cast<double>(c.first_step) - 0.5, static_cast<double>(last) + 0.5};
  const float avail_h = ImGui::GetContentRegionAvail().y;
  const float legend_h = ImGui::GetTextLineHeightWithSpacing();
  const int plots = 1 + (has_accuracy ? 1 : 0) + (has_times ? 1 : 0);
  const float spare = std::max(120.0f * static_cast<float>(plots), avail_h - legend_h * static_cast<float>(plots) - 8);
  const float loss_h = plots == 1 ? spare : spare * (plots == 2 ? 0.6f : 0.45f);
  const float other_h = plots == 1 ? 0 : (spare - loss_h) / static_cast<float>(plots - 1);
  const PlotMargins margins{70, 12, 6, 20};
  std::optional<size_t> hover;

  // Loss.
  Legend({{kLoss, "training loss"}, {kValidation, "validation loss"}});
  {
    Range r;
    for (size_t i = 0; i < n; ++i) r.add(loss_value(shown[i]));
    for (const auto& v : c.val) r.add(loss_value(v.loss));
    r.finish(!tv.log_loss);
    const PlotArea plot = BeginPlot("loss", ImVec2(ImGui::GetContentRegionAvail().x, loss_h), margins);
    hover = HoveredStep(plot, axis, c);
    DrawGridY(plot, r.lo, r.hi, tv.log_loss ? "1e%.1f" : "%.3g");
    DrawGridX(plot, axis);
    DrawSeries(plot, axis, n, c.first_step, r.lo, r.hi, kLoss, 1.0f, [&](size_t i) { return std::optional<double>(loss_value(shown[i])); });
    std::vector<ImVec2> val;
    for (const auto& v : c.val) {
      const double y = loss_value(v.loss);
      if (!std::isfinite(y)) continue;
      val.emplace_back(plot.x(static_cast<double>(v.step), axis.lo, axis.hi), plot.y(y, r.lo, r.hi));
    }
    if (val.size() > 1) plot.dl->AddPolyline(val.data(), static_cast<int>(val.size()), kValidation, 0, 1.5f);
    for (const ImVec2& p : val) plot.dl->AddCircleFilled(p, 4.0f, kValidation);
    if (hover) {
      const float x = plot.x(static_cast<double>(c.first_step) + static_cast<double>(*hover), axis.lo, axis.hi);
      plot.dl->AddLine(ImVec2(x, plot.a.y), ImVec2(x, plot.b.y), palette::kSelection);
    }
  }

  // Accuracy, in percent.
  if (has_accuracy) {
    Legend({{kAccuracy, "training accuracy"}, {kValidation, "validation accuracy"}});
    const PlotArea plot = BeginPlot("accuracy", ImVec2(ImGui::GetContentRegionAvail().x, other_h), margins);
    if (auto h = HoveredStep(plot, axis, c)) hover = h;
    DrawGridY(plot, 0, 100, "%.0f%%");
    DrawGridX(plot, axis);
    DrawSeries(plot, axis, c.accuracy.size(), c.first_step, 0, 100, kAccuracy, 1.0f, [&](size_t i) -> std::optional<double> {
      if (!c.accuracy[i]) return std::nullopt;
      return *c.accuracy[i] * 100;
    });
    for (const auto& v : c.val) {
      if (!v.accuracy) continue;
      plot.dl->AddCircleFilled(ImVec2(plot.x(static_cast<double>(v.step), axis.lo, axis.hi), plot.y(*v.accuracy * 100, 0, 100)),
                               4.0f, kValidation);
    }
  }

  // Step time: forward-backward below the optimizer, stacked; the total alone when the split
  // was not recorded (curves from before it was).
  if (has_times) {
    const bool split = c.forward_backward_ms.size() == n && c.optimizer_ms.size() == n;
    if (split) {
      Legend({{kForwardBackward, "forward-backward"}, {kOptimizer, "optimizer step"}});
    } else {
      Legend({{kStepOnly, "step time (no forward-backward/optimizer split in this curve)"}});
    }
    Range r;
    for (size_t i = 0; i < n; ++i) {
      const double total = split ? c.forward_backward_ms[i] + c.optimizer_ms[i] : (i < c.step_ms.size() ? c.step_ms[i] : 0);
      r.add(total);
    }
    r.finish(true);
    const PlotArea plot = BeginPlot("step_time", ImVec2(ImGui::GetContentRegionAvail().x, other_h), margins);
    if (auto h = HoveredStep(plot, axis, c)) hover = h;
    DrawGridY(plot, r.lo, r.hi, "%.3g ms");
    DrawGridX(plot, axis);
    const float slot = plot.width() / static_cast<float>(n);
    const float gap = slot > 5 ? std::min(3.0f, slot * 0.2f) : 0.0f;
    // One bar per pixel column at most: where steps outnumber pixels, a column shows its tallest.
    const size_t stride = std::max<size_t>(1, static_cast<size_t>(1.0f / std::max(slot, 1e-6f)));
    for (size_t i = 0; i < n; i += stride) {
      size_t pick = i;
      double best_total = -1;
      for (size_t j = i; j < std::min(n, i + stride); ++j) {
        const double total = split ? c.forward_backward_ms[j] + c.optimizer_ms[j] : (j < c.step_ms.size() ? c.step_ms[j] : 0);
        if (total > best_total) best_total = total, pick = j;
      }
      const float x0 = plot.x(static_cast<double>(c.first_step) + static_cast<double>(i) - 0.5, axis.lo, axis.hi);
      const float x1 = std::max(x0 + 1.0f, x0 + slot * static_cast<float>(stride) - gap);
      if (split) {
        const double fb = c.forward_backward_ms[pick], opt = c.optimizer_ms[pick];
        const float y_fb = plot.y(std::clamp(fb, r.lo, r.hi), r.lo, r.hi);
        const float y_top = plot.y(std::clamp(fb + opt, r.lo, r.hi), r.lo, r.hi);
        plot.dl->AddRectFilled(ImVec2(x0, y_fb), ImVec2(x1, plot.b.y), kForwardBackward);
        plot.dl->AddRectFilled(ImVec2(x0, y_top), ImVec2(x1, y_fb), kOptimizer);
      } else if (pick < c.step_ms.size()) {
        plot.dl->AddRectFilled(ImVec2(x0, plot.y(std::clamp(c.step_ms[pick], r.lo, r.hi), r.lo, r.hi)), ImVec2(x1, plot.b.y), kStepOnly);
      }
    }
  }
  if (hover) StepTooltip(c, *hover);
}

}  // namespace etscope::gui
