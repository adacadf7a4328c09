// A plot's frame for the views that draw charts with ImGui's draw list: the background, the data
// rectangle inside the margins, and an invisible button over the whole frame, so the caller can
// ask ImGui::IsItemHovered() / IsItemClicked() right after and map the mouse into data space.
#pragma once

#include <imgui.h>

namespace etscope::gui {

struct PlotArea {
  ImDrawList* dl = nullptr;
  ImVec2 frame_min, frame_max;  ///< The whole frame, margins included.
  ImVec2 a, b;                  ///< Data rectangle: a top-left, b bottom-right.
  float width() const { return b.x - a.x; }
  float height() const { return b.y - a.y; }
  /// x in [lo, hi] to pixels.
  float x(double v, double lo, double hi) const { return static_cast<float>(a.x + (v - lo) / (hi - lo) * (b.x - a.x)); }
  /// y in [lo, hi] to pixels, up.
  float y(double v, double lo, double hi) const { return static_cast<float>(b.y - (v - lo) / (hi - lo) * (b.y - a.y)); }
};

struct PlotMargins {
  float left = 6, right = 6, top = 6, bottom = 6;
};

/// Reserves `size` at the cursor (an invisible button named `id`), fills it with the plot
/// background and returns where to draw.
PlotArea BeginPlot(const char* id, ImVec2 size, PlotMargins margins);

}  // namespace etscope::gui
