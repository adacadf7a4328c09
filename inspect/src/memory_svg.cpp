// memory_svg: hand-written SVG. Layout: title band, plot area (arenas side by side, scaled to
// their share of the total bytes but never narrower than 8% of the width), legend on the right.
#include "etscope/inspect/memory_svg.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "etscope/core/scalar_type.h"
#include "etscope/core/xml.h"

namespace etscope::inspect {
namespace {

std::string bytes_text(uint64_t b) {
  char buf[64];
  if (b < 1024) {
    std::snprintf(buf, sizeof buf, "%llu B", static_cast<unsigned long long>(b));
  } else if (b < 1024ull * 1024) {
    std::snprintf(buf, sizeof buf, "%.1f KiB", static_cast<double>(b) / 1024.0);
  } else if (b < 1024ull * 1024 * 1024) {
    std::snprintf(buf, sizeof buf, "%.1f MiB", static_cast<double>(b) / (1024.0 * 1024.0));
  } else {
    std::snprintf(buf, sizeof buf, "%.2f GiB", static_cast<double>(b) / (1024.0 * 1024.0 * 1024.0));
  }
  return buf;
}

std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f", v);
  return buf;
}

std::string shape_text(const PlannedTensor& t) {
  std::string s = scalar_type_short_name(t.dtype) + "[";
  for (size_t i = 0; i < t.sizes.size(); ++i) s += (i ? "," : "") + std::to_string(t.sizes[i]);
  return s + "]";
}

// A "nice" tick spacing (1, 2 or 5 times a power of ten) giving at most `max_ticks` ticks.
uint64_t tick_spacing(uint64_t range, int max_ticks) {
  if (range == 0) return 1;
  double raw = static_cast<double>(range) / max_ticks;
  double p = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0, 10.0}) {
    if (m * p >= raw) return std::max<uint64_t>(1, static_cast<uint64_t>(m * p));
  }
  return std::max<uint64_t>(1, static_cast<uint64_t>(10 * p));
}

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
  const double width = std::max(400, options.width), height = std::max(300, options.height);
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
  auto x_of = [&](size_t k, uint64_t byte) {
    const double size = static_cast<double>(std::max<uint64_t>(1, arenas[k].size));
    return x0[k] + aw[k] * static_cast<double>(byte) / size;
  };

  std::vector<bool> in_conflict(plan.tensors().size(), false);
  for (const Conflict& c : plan.conflicts()) in_conflict[c.first] = in_conflict[c.second] = true;

  std::ostringstream o;
  o << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << width << "\" height=\"" << height
    << "\" viewBox=\"0 0 " << width << " " << height << "\" font-family=\"sans-serif\" font-size=\"12\">\n";
  o << "<rect x=\"0\" y=\"0\" width=\"" << width << "\" height=\"" << height << "\" fill=\"white\"/>\n";
  std::string title = options.title.empty() ? "" : options.title + ": ";
  title += "method '" + plan.plan_name() + "', " + std::to_string(T) + " instructions, " +
           std::to_string(plan.tensors().size()) + " planned tensors";
  // The title spans the whole width; a long one (a deep path, a long method name) is squeezed to
  // fit (textLength) instead of running off the picture. 0.62 em per character is a generous
  // estimate of a bold sans-serif's advance.
  const double title_room = width - 24;
  const double title_estimate = 0.62 * 16 * static_cast<double>(title.size());
  o << "<text class=\"title\" x=\"12\" y=\"24\" font-size=\"16\" font-weight=\"bold\"";
  if (title_estimate > title_room) o << " textLength=\"" << num(title_room) << "\" lengthAdjust=\"spacingAndGlyphs\"";
  o << ">" << xml_escape(title) << "</text>\n";
  if (!plan.conflicts().empty()) {
    o << "<text x=\"12\" y=\"44\" fill=\"#d62728\" font-weight=\"bold\">" << plan.conflicts().size()
      << " conflict(s): overlapping tensors live at the same step (outlined in red)</text>\n";
  }

  // Arenas: background, boundary, label, byte ticks.
  for (size_t k = 0; k < arenas.size(); ++k) {
    const Arena& a = arenas[k];
    o << "<rect class=\"arena\" x=\"" << num(x0[k]) << "\" y=\"" << num(top) << "\" width=\"" << num(aw[k])
      << "\" height=\"" << num(plot_h) << "\" fill=\"#f4f4f4\" stroke=\"#333\" stroke-width=\"1\"/>\n";
    o << "<text x=\"" << num(x0[k]) << "\" y=\"" << num(top - 6) << "\" font-weight=\"bold\">arena "
      << a.memory_id << " (" << xml_escape(bytes_text(a.size)) << ")</text>\n";
    // Ticks at round numbers of the unit that suits the arena: bytes, KiB or MiB.
    const uint64_t unit = a.size >= 4ull * 1024 * 1024 ? 1024ull * 1024 : a.size >= 4 * 1024 ? 1024 : 1;
    const char* unit_name = unit == 1 ? "" : unit == 1024 ? " KiB" : " MiB";
    const uint64_t spacing = unit * tick_spacing(a.size / unit, std::max(2, static_cast<int>(aw[k] / 90)));
    for (uint64_t b = 0; b <= a.size && a.size > 0; b += spacing) {
      const double tx = x_of(k, b);
      o << "<line x1=\"" << num(tx) << "\" y1=\"" << num(top + plot_h) << "\" x2=\"" << num(tx) << "\" y2=\""
        << num(top + plot_h + 5) << "\" stroke=\"#333\"/>\n";
      o << "<text x=\"" << num(tx) << "\" y=\"" << num(top + plot_h + 18) << "\" text-anchor=\"middle\" font-size=\"10\">"
        << b / unit << unit_name << "</text>\n";
    }
  }
  o << "<text x=\"" << num(left + plot_w / 2) << "\" y=\"" << num(height - 20)
    << "\" text-anchor=\"middle\">byte offset in arena</text>\n";

  // Step axis: ticks at most every ~25 px.
  const int64_t step_every = std::max<int64_t>(1, static_cast<int64_t>(std::ceil(25.0 / std::max(row_h, 0.01))));
  for (int64_t s = -1; s <= T; ++s) {
    if (s != -1 && s != T) {
      if (s % step_every != 0) continue;
      // Keep clear of the start and end labels.
      if (static_cast<double>(s + 1) * row_h < 14 || static_cast<double>(T - s) * row_h < 14) continue;
    }
    const double ty = y_of(s) + row_h / 2;
    std::string label = s == -1 ? "start" : s == T ? "end" : std::to_string(s);
    o << "<text x=\"" << num(left - 8) << "\" y=\"" << num(ty + 4) << "\" text-anchor=\"end\" font-size=\"10\">"
      << label << "</text>\n";
  }
  o << "<text transform=\"translate(18," << num(top + plot_h / 2) << ") rotate(-90)\" text-anchor=\"middle\">"
    << "instruction step (time runs down)</text>\n";

  // Tensors.
  for (size_t i = 0; i < plan.tensors().size(); ++i) {
    const PlannedTensor& t = plan.tensors()[i];
    if (!t.placed || t.lifetime.empty()) continue;
    const int k = arena_index(t.memory_id);
    if (k < 0) continue;
    const double rx = x_of(static_cast<size_t>(k), t.offset);
    const double rw = std::max(1.0, x_of(static_cast<size_t>(k), t.end()) - rx);
    const double ry = y_of(t.lifetime.start);
    const double rh = std::max(1.0, static_cast<double>(t.lifetime.end - t.lifetime.start + 1) * row_h);
    const std::string stroke = in_conflict[i] ? "stroke=\"#d62728\" stroke-width=\"2\"" : "stroke=\"white\" stroke-width=\"0.5\"";
    o << "<rect class=\"tensor\" x=\"" << num(rx) << "\" y=\"" << num(ry) << "\" width=\"" << num(rw)
      << "\" height=\"" << num(rh) << "\" fill=\"" << role_colour(t.role) << "\" fill-opacity=\"0.85\" " << stroke
      << "><title>" << xml_escape(t.name) << "\n"
      << "value %" << t.value << " (" << to_string(t.role) << (t.fqn.empty() ? "" : ", " + xml_escape(t.fqn)) << ")\n"
      << xml_escape(shape_text(t)) << ", " << t.nbytes << " bytes\n"
      << "arena " << t.memory_id << " [" << t.offset << ", " << t.end() << ")\n"
      << "live steps " << t.lifetime.start << ".." << t.lifetime.end << "</title></rect>\n";
    const std::string label = "%" + std::to_string(t.value);
    if (rw >= 7.0 * static_cast<double>(label.size()) && rh >= 12) {
      o << "<text x=\"" << num(rx + rw / 2) << "\" y=\"" << num(ry + std::min(rh, 24.0) / 2 + 4)
        << "\" text-anchor=\"middle\" font-size=\"10\" fill=\"#111\" pointer-events=\"none\">" << label << "</text>\n";
    }
  }

  // Peaks.
  for (size_t k = 0; k < arenas.size(); ++k) {
    const Arena& a = arenas[k];
    if (a.peak_bytes == 0) continue;
    const double py = y_of(a.peak_step) + row_h / 2;
    o << "<line class=\"peak\" x1=\"" << num(x0[k]) << "\" y1=\"" << num(py) << "\" x2=\"" << num(x0[k] + aw[k])
      << "\" y2=\"" << num(py) << "\" stroke=\"#d62728\" stroke-width=\"2\" stroke-dasharray=\"6,3\"/>\n";
    std::string label = "peak " + bytes_text(a.peak_bytes) + " at step " + std::to_string(a.peak_step);
    o << "<text x=\"" << num(x0[k] + aw[k] - 4) << "\" y=\"" << num(py - 4)
      << "\" text-anchor=\"end\" fill=\"#d62728\" font-weight=\"bold\" stroke=\"white\" stroke-width=\"3\" "
         "paint-order=\"stroke\">"
      << xml_escape(label) << "</text>\n";
  }

  // Legend.
  const double lx = left + plot_w + 20;
  double ly = top + 10;
  o << "<text x=\"" << num(lx) << "\" y=\"" << num(ly) << "\" font-weight=\"bold\">tensor role</text>\n";
  for (TensorRole role : kRoles) {
    ly += 20;
    o << "<rect x=\"" << num(lx) << "\" y=\"" << num(ly - 11) << "\" width=\"14\" height=\"14\" fill=\""
      << role_colour(role) << "\"/>\n";
    o << "<text x=\"" << num(lx + 20) << "\" y=\"" << num(ly) << "\">" << to_string(role) << "</text>\n";
  }
  ly += 26;
  o << "<line x1=\"" << num(lx) << "\" y1=\"" << num(ly - 4) << "\" x2=\"" << num(lx + 14) << "\" y2=\"" << num(ly - 4)
    << "\" stroke=\"#d62728\" stroke-width=\"2\" stroke-dasharray=\"4,2\"/>\n";
  o << "<text x=\"" << num(lx + 20) << "\" y=\"" << num(ly) << "\">peak live bytes</text>\n";
  ly += 26;
  o << "<text x=\"" << num(lx) << "\" y=\"" << num(ly) << "\" font-size=\"10\" fill=\"#555\">hover a block for</text>\n";
  o << "<text x=\"" << num(lx) << "\" y=\"" << num(ly + 13) << "\" font-size=\"10\" fill=\"#555\">value, shape, bytes,</text>\n";
  o << "<text x=\"" << num(lx) << "\" y=\"" << num(ly + 26) << "\" font-size=\"10\" fill=\"#555\">lifetime</text>\n";
  o << "</svg>\n";
  return o.str();
}

}  // namespace etscope::inspect
