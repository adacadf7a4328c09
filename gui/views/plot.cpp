#include "views/plot.h"

#include <algorithm>

#include "views/palette.h"

namespace etscope::gui {

PlotArea BeginPlot(const char* id, ImVec2 size, PlotMargins m) {
  PlotArea p;
  p.dl = ImGui::GetWindowDrawList();
  p.frame_min = ImGui::GetCursorScreenPos();
  size.x = std::max(size.x, m.left + m.right + 1), size.y = std::max(size.y, m.top + m.bottom + 1);
  p.frame_max = ImVec2(p.frame_min.x + size.x, p.frame_min.y + size.y);
  p.a = ImVec2(p.frame_min.x + m.left, p.frame_min.y + m.top);
  p.b = ImVec2(p.frame_max.x - m.right, p.frame_max.y - m.bottom);
  p.dl->AddRectFilled(p.frame_min, p.frame_max, palette::kPlotBackground);
  ImGui::InvisibleButton(id, size);
  return p;
}

}  // namespace etscope::gui
