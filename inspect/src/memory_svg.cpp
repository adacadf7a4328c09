// memory_svg: hand-written SVG. Layout: title band, plot area (arenas side by side, scaled to
// their share of the total bytes but never narrower than 8% of the width), legend on the right.
#include "etscope/inspect/memory_svg.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "etscope/core/text.h"
#include "etscope/inspect/svg_plot.h"

namespace etscope::inspect {
namespace {

constexpr TensorRole kRoles[] = {TensorRole::kInput,    TensorRole::kWeight, TensorRole::kBuffer,
                                 TensorRole::kGradient, TensorRole::kOutput, TensorRole::kActivation};

}  // namespace

const char* role_colour(TensorRole role) {
  switch (role) {
    case TensorRole::kInput: return "#4e79a7";
    case TensorRole::kWeight: return "#59a14f";
    case TensorRole::kBuffer: return "#76b7b2";
    case TensorRole::kGradient: return "#b07aa1";
    case TensorRole::kOutput: return "#f28e2b";
    case TensorRole::kActivation: return "#9dc3e6";
  }
  return "#9dc3e6";
}

std::string memory_svg(const MemoryPlan& plan, const MemorySvgOptions& options) {
  const int width_px = std::max(400, options.width), height_px = std::max(300, options.height);
  const double width = width_px, height = height_px;
  const double left = 80, right = 170, top = 64, bottom = 64;
  const double plot_w = width - left - right, plot_h = height - top - bottom;
  const int64_t T = plan.instruction_count();
  const double rows = static_cast<double>(T + 2);
  const double row_h = plot_h / rows;
  auto y_of = [&](int64_t step) { return top + static_cast<double>(step + 1) * row_h; };

  // Horizontal space per arena: proportional to size, with a floor so small arenas stay visible.
  const auto& arenas = plan.arenas();
  uint64_t total = 0;
  for (const Arena& a : arenas) total += a.size;
  std::vector<double> share(arenas.size(), 0.0), x0(arenas.size(), left);
  double share_sum = 0;
  for (size_t k = 0; k < arenas.size(); ++k) {
    share[k] = total == 0 ? 1.0 : std::max(0.08, static_cast<double>(arenas[k].size) / static_cast<double>(total));
    share_sum += share[k];
  }
  const double gap = arenas.size() > 1 ? 12.0 : 0.0;
  const double usable = plot_w - gap * static_cast<double>(arenas.empty() ? 0 : arenas.size() - 1);
  double x = left;
  std::vector<double> aw(arenas.size(), 0.0);
  for (size_t k = 0; k < arenas.size(); ++k) {
    x0[k] = x;
    aw[k] = usable * share[k] / share_sum;
    x += aw[k] + gap;
  }
  auto arena_index = [&](uint32_t memory_id) -> int {
    for (size_t k = 0; k < arenas.size(); ++k) {
      if (arenas[k].memory_id == memory_id) return static_cast<int>(k);
    }
    return -1;
  };
  auto byte_scale = [&](size_t k) {
    return SvgScale{0, static_cast<double>(std::max<uint64_t>(1, arenas[k].size)), x0[k], x0[k] + aw[k]};
  };

  std::vector<bool> in_conflict(plan.tensors().size(), false);
  for (const Conflict& c : plan.conflicts()) in_conflict[c.first] = in_conflict[c.second] = true;

  SvgPlot svg(width_px, height_px, 2);
  std::string title = options.title.empty() ? "" : options.title + ": ";
  title += "method '" + plan.plan_name() + "', " + std::to_string(T) + " instructions, " +
           std::to_string(plan.tensors().size()) + " planned tensors";
  // The title spans the whole width; a long one (a deep path, a long method name) is squeezed to
  // fit (textLength) instead of running off the picture. 0.62 em per character is a generous
  // estimate of a bold sans-serif's advance.
  const double title_room = width - 24;
  const double title_estimate = 0.62 * 16 * static_cast<double>(title.size());
  std::string title_style = "font-size=\"16\" font-weight=\"bold\"";
  if (title_estimate > title_room) {
    char room[32];
    std::snprintf(room, sizeof room, "%.2f", title_room);
    title_style += std::string(" textLength=\"") + room + "\" lengthAdjust=\"spacingAndGlyphs\"";
  }
  svg.text(12, 24, title, title_style, "title");
  if (!plan.conflicts().empty()) {
    svg.text(12, 44, std::to_string(plan.conflicts().size()) + " conflict(s): overlapping tensors live at the same step (outlined in red)",
             "fill=\"#d62728\" font-weight=\"bold\"");
  }

  // Arenas: background, boundary, label, byte ticks at round numbers of the unit that suits it.
  for (size_t k = 0; k < arenas.size(); ++k) {
    const Arena& a = arenas[k];
    svg.rect(x0[k], top, aw[k], plot_h, "fill=\"#f4f4f4\" stroke=\"#333\" stroke-width=\"1\"", "arena");
    svg.text(x0[k], top - 6, "arena " + std::to_string(a.memory_id) + " (" + bytes_text(a.size) + ")", "font-weight=\"bold\"");
    if (a.size == 0) continue;
    const std::vector<Tick> ticks = byte_ticks(0, static_cast<double>(a.size), std::max(2, static_cast<int>(aw[k] / 90)));
    svg.axis(SvgSide::kBottom, SvgArea{x0[k], top, x0[k] + aw[k], top + plot_h}, byte_scale(k), ticks, {.marks = true, .font_size = 10});
  }
  svg.text(left + plot_w / 2, height - 20, "byte offset in arena", "text-anchor=\"middle\"");

  // Step axis: ticks at most every ~25 px, clear of the start and end labels.
  const int64_t step_every = std::max<int64_t>(1, static_cast<int64_t>(std::ceil(25.0 / std::max(row_h, 0.01))));
  std::vector<Tick> steps;
  for (int64_t s = -1; s <= T; ++s) {
    if (s != -1 && s != T) {
      if (s % step_every != 0) continue;
      if (static_cast<double>(s + 1) * row_h < 14 || static_cast<double>(T - s) * row_h < 14) continue;
    }
    steps.push_back({y_of(s) + row_h / 2, s == -1 ? "start" : s == T ? "end" : std::to_string(s)});
  }
  svg.axis(SvgSide::kLeft, SvgArea{left - 2, top, left + plot_w, top + plot_h}, SvgScale{0, 1, 0, 1}, steps, {.font_size = 10});
  svg.text(0, 0, "instruction step (time runs down)",
           "transform=\"translate(18," + svg.num(top + plot_h / 2) + ") rotate(-90)\" text-anchor=\"middle\"");

  // Tensors.
  for (size_t i = 0; i < plan.tensors().size(); ++i) {
    const PlannedTensor& t = plan.tensors()[i];
    if (!t.placed || t.lifetime.empty()) continue;
    const int k = arena_index(t.memory_id);
    if (k < 0) continue;
    const SvgScale bytes = byte_scale(static_cast<size_t>(k));
    const double rx = bytes.at(static_cast<double>(t.offset));
    const double rw = std::max(1.0, bytes.at(static_cast<double>(t.end())) - rx);
    const double ry = y_of(t.lifetime.start);
    const double rh = std::max(1.0, static_cast<double>(t.lifetime.end - t.lifetime.start + 1) * row_h);
    const std::string tooltip = t.name + "\nvalue %" + std::to_string(t.value) + " (" + to_string(t.role) + (t.fqn.empty() ? "" : ", " + t.fqn) +
                                ")\n" + shape_text(t.dtype, t.sizes) + ", " + std::to_string(t.nbytes) + " bytes\narena " +
                                std::to_string(t.memory_id) + " [" + std::to_string(t.offset) + ", " + std::to_string(t.end()) +
                                ")\nlive steps " + std::to_string(t.lifetime.start) + ".." + std::to_string(t.lifetime.end);
    const std::string style = std::string("fill=\"") + role_colour(t.role) + "\" fill-opacity=\"0.85\" " +
                              (in_conflict[i] ? "stroke=\"#d62728\" stroke-width=\"2\"" : "stroke=\"white\" stroke-width=\"0.5\"");
    svg.rect(rx, ry, rw, rh, style, "tensor", tooltip);
    const std::string label = "%" + std::to_string(t.value);
    if (rw >= 7.0 * static_cast<double>(label.size()) && rh >= 12) {
      svg.text(rx + rw / 2, ry + std::min(rh, 24.0) / 2 + 4, label,
               "text-anchor=\"middle\" font-size=\"10\" fill=\"#111\" pointer-events=\"none\"");
    }
  }

  // Peaks.
  for (size_t k = 0; k < arenas.size(); ++k) {
    const Arena& a = arenas[k];
    if (a.peak_bytes == 0) continue;
    const double py = y_of(a.peak_step) + row_h / 2;
    svg.line(x0[k], py, x0[k] + aw[k], py, "stroke=\"#d62728\" stroke-width=\"2\" stroke-dasharray=\"6,3\"", "peak");
    svg.text(x0[k] + aw[k] - 4, py - 4, "peak " + bytes_text(a.peak_bytes) + " at step " + std::to_string(a.peak_step),
             "text-anchor=\"end\" fill=\"#d62728\" font-weight=\"bold\" stroke=\"white\" stroke-width=\"3\" paint-order=\"stroke\"");
  }

  // Legend.
  const double lx = left + plot_w + 20;
  double ly = top + 10;
  svg.text(lx, ly, "tensor role", "font-weight=\"bold\"");
  for (TensorRole role : kRoles) {
    ly += 20;
    svg.rect(lx, ly - 11, 14, 14, std::string("fill=\"") + role_colour(role) + "\"");
    svg.text(lx + 20, ly, to_string(role));
  }
  ly += 26;
  svg.line(lx, ly - 4, lx + 14, ly - 4, "stroke=\"#d62728\" stroke-width=\"2\" stroke-dasharray=\"4,2\"");
  svg.text(lx + 20, ly, "peak live bytes");
  ly += 26;
  const char* hint = "font-size=\"10\" fill=\"#555\"";
  svg.text(lx, ly, "hover a block for", hint);
  svg.text(lx, ly + 13, "value, shape, bytes,", hint);
  svg.text(lx, ly + 26, "lifetime", hint);
  return svg.finish();
}

}  // namespace etscope::inspect
