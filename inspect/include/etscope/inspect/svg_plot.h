// SvgPlot: the small SVG writer behind etscope's pictures (the memory plan, the training curve,
// `etscope history --plot`). It writes the document frame, shapes, text escaped through
// core/xml.h and axes whose ticks come from core/text.h (nice_ticks, time_ticks, byte_ticks,
// number_ticks), so every plot labels its axes the same way. It lays nothing out: callers decide
// where the plot area and each shape go.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "etscope/core/text.h"

namespace etscope::inspect {

/// A linear map from values [lo, hi] to pixels [from, to] (to < from for a y axis growing up).
struct SvgScale {
  double lo = 0, hi = 1;
  double from = 0, to = 1;
  /// The pixel of `v`; the middle of [from, to] when the range is empty.
  double at(double v) const;
};

/// The rectangle the data is drawn in, in pixels.
struct SvgArea {
  double left = 0, top = 0, right = 0, bottom = 0;
};

enum class SvgSide { kLeft, kRight, kBottom };

struct SvgAxisStyle {
  bool grid = false;       ///< A light line across the area at every tick.
  bool marks = false;      ///< A short mark outside the area at every tick.
  int font_size = 0;       ///< Label size; 0 keeps the document's.
};

/// Builds one SVG document. Shape methods take `cls` (written first as class="...", skipped when
/// empty) and `attributes`, raw SVG attributes written after the geometry (colours, strokes):
/// callers pass constants there, never file-provided text. Text content and tooltips are escaped.
class SvgPlot {
 public:
  /// Starts a `width` x `height` document (sans-serif 12 px, white background). Coordinates are
  /// written with at most `decimals` digits after the point, trailing zeros dropped.
  SvgPlot(int width, int height, int decimals = 1);

  /// A coordinate as this plot writes it ("12", "64.5").
  std::string num(double v) const;

  void text(double x, double y, std::string_view content, std::string_view attributes = {}, std::string_view cls = {});
  void line(double x1, double y1, double x2, double y2, std::string_view attributes, std::string_view cls = {});
  /// A rectangle; with a non-empty `tooltip`, that text as its <title>.
  void rect(double x, double y, double w, double h, std::string_view attributes, std::string_view cls = {},
            std::string_view tooltip = {});
  void circle(double cx, double cy, double r, std::string_view attributes, std::string_view cls = {},
              std::string_view tooltip = {});
  /// An open line through `points` (x, y pixels); nothing for no points.
  void polyline(const std::vector<std::pair<double, double>>& points, std::string_view attributes, std::string_view cls = {});
  /// Opens and closes a <g> whose attributes its children inherit.
  void group(std::string_view attributes);
  void end_group();

  /// Ticks along one side of `area`: labels outside it (left: right-aligned, right: left-aligned,
  /// bottom: centred), with grid lines and marks as `style` asks. `scale` maps a tick's value to
  /// the pixel along that side.
  void axis(SvgSide side, const SvgArea& area, const SvgScale& scale, const std::vector<Tick>& ticks,
            const SvgAxisStyle& style = {});

  /// The document, closed.
  std::string finish();

 private:
  void open(std::string_view element, std::string_view cls);

  std::string out_;
  int decimals_;
};

}  // namespace etscope::inspect
