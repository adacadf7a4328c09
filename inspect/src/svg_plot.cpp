#include "etscope/inspect/svg_plot.h"

#include <algorithm>
#include <cstdio>

#include "etscope/core/xml.h"

namespace etscope::inspect {

double SvgScale::at(double v) const {
  if (!(hi != lo)) return (from + to) / 2;
  return from + (v - lo) / (hi - lo) * (to - from);
}

SvgPlot::SvgPlot(int width, int height, int decimals) : decimals_(std::clamp(decimals, 0, 6)) {
  const std::string w = std::to_string(width), h = std::to_string(height);
  out_ = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + w + "\" height=\"" + h + "\" viewBox=\"0 0 " + w + " " + h +
         "\" font-family=\"sans-serif\" font-size=\"12\">\n<rect width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>\n";
}

std::string SvgPlot::num(double v) const {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals_, v);
  std::string s = buf;
  if (s.find('.') != std::string::npos) {
    while (s.back() == '0') s.pop_back();
    if (s.back() == '.') s.pop_back();
  }
  return s == "-0" ? "0" : s;
}

void SvgPlot::open(std::string_view element, std::string_view cls) {
  out_ += "<";
  out_ += element;
  if (!cls.empty()) out_ += " class=\"" + xml_escape(cls) + "\"";
}

void SvgPlot::text(double x, double y, std::string_view content, std::string_view attributes, std::string_view cls) {
  open("text", cls);
  out_ += " x=\"" + num(x) + "\" y=\"" + num(y) + "\"";
  if (!attributes.empty()) out_ += " " + std::string(attributes);
  out_ += ">" + xml_escape(content) + "</text>\n";
}

void SvgPlot::line(double x1, double y1, double x2, double y2, std::string_view attributes, std::string_view cls) {
  open("line", cls);
  out_ += " x1=\"" + num(x1) + "\" y1=\"" + num(y1) + "\" x2=\"" + num(x2) + "\" y2=\"" + num(y2) + "\"";
  if (!attributes.empty()) out_ += " " + std::string(attributes);
  out_ += "/>\n";
}

void SvgPlot::rect(double x, double y, double w, double h, std::string_view attributes, std::string_view cls, std::string_view tooltip) {
  open("rect", cls);
  out_ += " x=\"" + num(x) + "\" y=\"" + num(y) + "\" width=\"" + num(w) + "\" height=\"" + num(h) + "\"";
  if (!attributes.empty()) out_ += " " + std::string(attributes);
  out_ += tooltip.empty() ? "/>\n" : "><title>" + xml_escape(tooltip) + "</title></rect>\n";
}

void SvgPlot::circle(double cx, double cy, double r, std::string_view attributes, std::string_view cls, std::string_view tooltip) {
  open("circle", cls);
  out_ += " cx=\"" + num(cx) + "\" cy=\"" + num(cy) + "\" r=\"" + num(r) + "\"";
  if (!attributes.empty()) out_ += " " + std::string(attributes);
  out_ += tooltip.empty() ? "/>\n" : "><title>" + xml_escape(tooltip) + "</title></circle>\n";
}

void SvgPlot::polyline(const std::vector<std::pair<double, double>>& points, std::string_view attributes, std::string_view cls) {
  if (points.empty()) return;
  open("polyline", cls);
  if (!attributes.empty()) out_ += " " + std::string(attributes);
  out_ += " points=\"";
  for (size_t i = 0; i < points.size(); ++i) out_ += (i ? " " : "") + num(points[i].first) + "," + num(points[i].second);
  out_ += "\"/>\n";
}

void SvgPlot::group(std::string_view attributes) { out_ += "<g " + std::string(attributes) + ">\n"; }

void SvgPlot::end_group() { out_ += "</g>\n"; }

void SvgPlot::axis(SvgSide side, const SvgArea& area, const SvgScale& scale, const std::vector<Tick>& ticks, const SvgAxisStyle& style) {
  std::string label_style = "fill=\"#444\"";
  label_style += side == SvgSide::kLeft ? " text-anchor=\"end\"" : side == SvgSide::kRight ? " text-anchor=\"start\"" : " text-anchor=\"middle\"";
  if (style.font_size > 0) label_style += " font-size=\"" + std::to_string(style.font_size) + "\"";
  for (const Tick& t : ticks) {
    const double at = scale.at(t.value);
    if (side == SvgSide::kBottom) {
      if (style.grid) line(at, area.top, at, area.bottom, "stroke=\"#e4e4e4\"");
      if (style.marks) line(at, area.bottom, at, area.bottom + 5, "stroke=\"#333\"");
      text(at, area.bottom + (style.marks ? 18 : 16), t.label, label_style);
      continue;
    }
    if (style.grid) line(area.left, at, area.right, at, "stroke=\"#e4e4e4\"");
    const double outside = side == SvgSide::kLeft ? area.left - 6 : area.right + 6;
    if (style.marks) line(side == SvgSide::kLeft ? area.left - 5 : area.right, at, side == SvgSide::kLeft ? area.left : area.right + 5, at, "stroke=\"#333\"");
    text(style.marks ? (side == SvgSide::kLeft ? outside - 3 : outside + 3) : outside, at + 4, t.label, label_style);
  }
}

std::string SvgPlot::finish() {
  out_ += "</svg>\n";
  return std::move(out_);
}

}  // namespace etscope::inspect
