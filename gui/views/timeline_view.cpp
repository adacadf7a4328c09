// Timeline view: one track per ETDump run block, one lane per nesting level, events as bars on
// a shared time axis. Wheel zooms around the mouse, dragging pans, a click selects the
// instruction under the mouse. Per lane the model returns only what is visible, already folded
// to the pixel grid, so the cost of a frame follows the window's width, not the trace's size.
#include <imgui.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

#include "model/text_format.h"
#include "views/palette.h"
#include "views/render_hooks.h"
#include "views/views.h"

namespace etscope::gui {
namespace {

constexpr double kMinWindowNs = 20.0;
constexpr double kFoldPx = 3.0;

struct Hovered {
  bool any = false;
  uint32_t track = 0, lane = 0;
  DrawItem item;
};

void Fit(const TimelineModel& model, TimelineViewState& tl) {
  const auto [lo, hi] = model.fit_range(tl.align_runs);
  const double width = static_cast<double>(std::max<uint64_t>(hi - lo, 1));
  tl.t0 = static_cast<double>(lo) - width * 0.01;
  tl.t1 = static_cast<double>(lo) + width * 1.01;
  tl.fit = false;
}

void CenterOn(double t, TimelineViewState& tl) {
  const double w = tl.t1 - tl.t0;
  tl.t0 = t - w * 0.5;
  tl.t1 = t + w * 0.5;
}

}  // namespace

void DrawTimelineView(const Session& session, ViewState& state) {
  const TimelineModel& model = *session.timeline;
  TimelineViewState& tl = state.timeline;
  if (model.tracks().empty()) {
    ImGui::TextDisabled("The ETDump has no profiling events (only logged values?).");
    return;
  }
  if (tl.fit || !(tl.t1 > tl.t0)) Fit(model, tl);

  // Toolbar.
  if (ImGui::Button("Fit")) Fit(model, tl);
  ImGui::SameLine();
  if (ImGui::Checkbox("Align runs at their start", &tl.align_runs)) Fit(model, tl);
  const auto& selected_bars = model.bars_of(state.selected);
  ImGui::SameLine();
  ImGui::BeginDisabled(selected_bars.empty());
  if (ImGui::Button("Zoom to selection") && !selected_bars.empty()) {
    const BarRef& ref = selected_bars.front();
    const Bar& b = model.bar(ref);
    const double off = static_cast<double>(model.track_offset(ref.track, tl.align_runs));
    const double pad = std::max(static_cast<double>(b.end - b.start), kMinWindowNs) * 0.6;
    tl.t0 = static_cast<double>(b.start) + off - pad;
    tl.t1 = static_cast<double>(b.end) + off + pad;
  }
  ImGui::EndDisabled();
  ImGui::SameLine(0, 24);
  ImGui::TextDisabled("%zu tracks, %s events; window %s; wheel zooms, drag pans, click selects",
                      model.tracks().size(), fixed_text(static_cast<double>(model.bar_count()), 0).c_str(),
                      duration_text(tl.t1 - tl.t0).c_str());

  // Bring a selection made elsewhere into the window, keeping the zoom.
  if (tl.scroll_to_selection) {
    tl.scroll_to_selection = false;
    if (!selected_bars.empty()) {
      const BarRef& ref = selected_bars.front();
      const Bar& b = model.bar(ref);
      const double off = static_cast<double>(model.track_offset(ref.track, tl.align_runs));
      const double s = static_cast<double>(b.start) + off, e = static_cast<double>(b.end) + off;
      if (e < tl.t0 || s > tl.t1) CenterOn((s + e) * 0.5, tl);
    }
  }

  const float line = ImGui::GetTextLineHeight();
  const float lane_h = std::floor(line + 7.0f);
  const float header_h = std::floor(line + 8.0f);
  const float axis_h = line + 10.0f;

  // Time axis above the scrolling tracks.
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  const ImVec2 axis_pos = ImGui::GetCursorScreenPos();
  const float plot_x0 = axis_pos.x;
  const float plot_w = std::max(50.0f, avail.x - ImGui::GetStyle().ScrollbarSize);
  const double ticks_per_px = (tl.t1 - tl.t0) / plot_w;
  auto x_of = [&](double t) { return plot_x0 + static_cast<float>((t - tl.t0) / ticks_per_px); };
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const auto ticks = time_ticks(tl.t0, tl.t1, std::max(2, static_cast<int>(plot_w / 110.0f)));
  dl->AddRectFilled(axis_pos, ImVec2(axis_pos.x + avail.x, axis_pos.y + axis_h), IM_COL32(24, 26, 31, 255));
  for (const Tick& t : ticks) {
    const float x = x_of(t.value);
    dl->AddLine(ImVec2(x, axis_pos.y + axis_h - 6), ImVec2(x, axis_pos.y + axis_h), palette::kAxis);
    dl->AddText(ImVec2(x + 3, axis_pos.y + 3), palette::kAxis, t.label.c_str());
  }
  ImGui::Dummy(ImVec2(avail.x, axis_h));

  // Tracks, scrolling vertically; the wheel is ours (zoom), so the child does not scroll with it.
  // Top of each track relative to the first one, and the height of them all.
  std::vector<float> track_top(model.tracks().size());
  float content_h = 0;
  for (size_t t = 0; t < model.tracks().size(); ++t) {
    track_top[t] = content_h;
    content_h += header_h + lane_h * static_cast<float>(model.tracks()[t].lanes.size()) + 6.0f;
  }
  ImGui::BeginChild("tracks", ImVec2(0, 0), false, ImGuiWindowFlags_NoScrollWithMouse);
  const ImVec2 top = ImGui::GetCursorScreenPos();
  const float view_h = ImGui::GetContentRegionAvail().y;
  ImGui::InvisibleButton("timeline_plot", ImVec2(plot_w, std::max(content_h, view_h)));
  const bool hovered = ImGui::IsItemHovered();
  const bool active = ImGui::IsItemActive();
  const ImGuiIO& io = ImGui::GetIO();
  dl = ImGui::GetWindowDrawList();
  const ImVec2 clip0 = ImGui::GetWindowPos();
  const ImVec2 clip1(clip0.x + ImGui::GetWindowSize().x, clip0.y + ImGui::GetWindowSize().y);

  for (const Tick& t : ticks) {
    const float x = x_of(t.value);
    dl->AddLine(ImVec2(x, clip0.y), ImVec2(x, clip1.y), palette::kGrid);
  }

  // Bars are opaque: they go to channel 0, drawn with blending off when the renderer offers it
  // (it halves what a software rasterizer spends per pixel); text and edges go to channel 1.
  dl->ChannelsSplit(2);
  dl->ChannelsSetCurrent(0);
  if (render_hooks::opaque_begin != nullptr) dl->AddCallback(render_hooks::opaque_begin, nullptr);
  dl->ChannelsSetCurrent(1);
  Hovered hover;
  std::vector<DrawItem> items;
  const ImVec2 mouse = io.MousePos;
  float y = top.y;
  for (size_t ti = 0; ti < model.tracks().size(); ++ti) {
    const Track& track = model.tracks()[ti];
    const float track_h = header_h + lane_h * static_cast<float>(track.lanes.size()) + 6.0f;
    if (y > clip1.y) break;
    if (y + track_h < clip0.y) {
      y += track_h;
      continue;
    }
    const double off = static_cast<double>(model.track_offset(ti, tl.align_runs));
    char header[160];
    std::snprintf(header, sizeof header, "%s   %s events, %s", track.name.c_str(),
                  fixed_text(static_cast<double>(track.events), 0).c_str(),
                  duration_text(static_cast<double>(track.duration)).c_str());
    dl->AddLine(ImVec2(clip0.x, y), ImVec2(clip1.x, y), IM_COL32(70, 74, 84, 255));
    dl->AddText(ImVec2(clip0.x + 6, y + 4), ImGui::GetColorU32(ImGuiCol_Text), header);
    float lane_y = y + header_h;
    for (size_t li = 0; li < track.lanes.size(); ++li, lane_y += lane_h) {
      const Lane& lane = track.lanes[li];
      items.clear();
      TimelineModel::layout_lane(lane, tl.t0 - off, tl.t1 - off, ticks_per_px, kFoldPx, items);
      const float by0 = lane_y + 1, by1 = lane_y + lane_h - 1;
      for (const DrawItem& item : items) {
        const float x0 = std::max(x_of(item.start + off), clip0.x - 2);
        const float x1 = std::min(std::max(x_of(item.end + off), x0 + 1.0f), clip1.x + 2);
        if (item.count == 1) {
          const Bar& bar = lane.bars[item.first];
          const BarStyle& style = model.styles()[bar.style];
          const ImU32 fill = palette::bar(style);
          dl->ChannelsSetCurrent(0);
          dl->AddRectFilled(ImVec2(x0, by0), ImVec2(x1, by1), fill);
          dl->ChannelsSetCurrent(1);
          if (x1 - x0 > 24) {
            // A dark left edge separates neighbours; one quad, where an outline costs six.
            dl->AddRectFilled(ImVec2(x0, by0), ImVec2(x0 + 1, by1), IM_COL32(0, 0, 0, 90));
            char label[160];
            const etdump::Event& e = model.dump().events[bar.raw];
            if (style.kind == BarKind::kOperatorCall || style.kind == BarKind::kDelegateCall) {
              std::snprintf(label, sizeof label, "#%d %s", e.instruction, style.label.c_str());
            } else {
              std::snprintf(label, sizeof label, "%s", style.label.c_str());
            }
            const ImVec4 clip(x0 + 3, by0, x1 - 3, by1);
            dl->AddText(ImGui::GetFont(), ImGui::GetFontSize(), ImVec2(std::max(x0, clip0.x) + 4, by0 + 3),
                        palette::text_on(fill), label, nullptr, 0.0f, &clip);
          }
        } else {
          // A fold: many events under a few pixels, one grey block. Folds are most of what a
          // zoomed-out frame draws, so they stay a single quad each (hatching them cost a
          // software renderer more than the rest of the frame).
          dl->ChannelsSetCurrent(0);
          dl->AddRectFilled(ImVec2(x0, by0 + 2), ImVec2(x1, by1 - 2), palette::kFold);
          dl->ChannelsSetCurrent(1);
          if (x1 - x0 > 60) {
            char label[48];
            std::snprintf(label, sizeof label, "%s events", fixed_text(item.count, 0).c_str());
            const ImVec4 clip(x0 + 3, by0, x1 - 3, by1);
            dl->AddText(ImGui::GetFont(), ImGui::GetFontSize(), ImVec2(std::max(x0, clip0.x) + 4, by0 + 3),
                        IM_COL32(245, 245, 250, 255), label, nullptr, 0.0f, &clip);
          }
        }
        if (hovered && mouse.x >= x0 && mouse.x < std::max(x1, x0 + 2) && mouse.y >= by0 && mouse.y < by1) {
          hover = {true, static_cast<uint32_t>(ti), static_cast<uint32_t>(li), item};
        }
      }
    }
    y += track_h;
  }

  dl->ChannelsSetCurrent(0);
  if (render_hooks::opaque_begin != nullptr) dl->AddCallback(ImDrawCallback_ResetRenderState, nullptr);
  dl->ChannelsMerge();

  // Selected instruction: outline its bars (at least a few pixels wide, so folded ones show).
  for (const BarRef& ref : selected_bars) {
    const Bar& b = model.bar(ref);
    const double off = static_cast<double>(model.track_offset(ref.track, tl.align_runs));
    if (static_cast<double>(b.end) + off < tl.t0 || static_cast<double>(b.start) + off > tl.t1) continue;
    const float by0 = top.y + track_top[ref.track] + header_h + lane_h * static_cast<float>(ref.lane);
    if (by0 > clip1.y || by0 + lane_h < clip0.y) continue;
    float x0 = x_of(static_cast<double>(b.start) + off), x1 = x_of(static_cast<double>(b.end) + off);
    if (x1 - x0 < 4) {
      const float c = (x0 + x1) * 0.5f;
      x0 = c - 2, x1 = c + 2;
    }
    dl->AddRect(ImVec2(x0 - 1, by0), ImVec2(x1 + 1, by0 + lane_h), palette::kSelection, 0, 0, 2.0f);
  }

  // Tooltip.
  if (hover.any && !(active && io.MouseDragMaxDistanceSqr[0] > 9.0f)) {
    const Lane& lane = model.tracks()[hover.track].lanes[hover.lane];
    ImGui::BeginTooltip();
    ImGui::PushTextWrapPos(ImGui::GetFontSize() * 50);
    if (hover.item.count == 1) {
      const Bar& bar = lane.bars[hover.item.first];
      ImGui::TextUnformatted(model.describe(bar, session.lookup.get()).c_str());
      if (model.instruction_of(bar).valid()) ImGui::TextDisabled("click to select this instruction everywhere");
    } else {
      ImGui::TextUnformatted(model.describe_fold(lane, hover.item).c_str());
    }
    ImGui::PopTextWrapPos();
    ImGui::EndTooltip();
  }

  // Zoom with the wheel around the mouse; Shift+wheel scrolls the tracks.
  if (hovered && io.MouseWheel != 0) {
    if (io.KeyShift) {
      ImGui::SetScrollY(ImGui::GetScrollY() - io.MouseWheel * lane_h * 3);
    } else {
      const double tm = tl.t0 + static_cast<double>(mouse.x - plot_x0) * ticks_per_px;
      const double extent = static_cast<double>(std::max<uint64_t>(model.extent(tl.align_runs), 1));
      double factor = std::pow(0.8, static_cast<double>(io.MouseWheel));
      const double w = tl.t1 - tl.t0;
      factor = std::clamp(factor, kMinWindowNs / w, extent * 4.0 / w);
      tl.t0 = tm - (tm - tl.t0) * factor;
      tl.t1 = tm + (tl.t1 - tm) * factor;
    }
  }
  // Drag to pan (both ways); a click without movement selects.
  if (active && ImGui::IsMouseDragging(ImGuiMouseButton_Left, 2.0f)) {
    const double dt = static_cast<double>(io.MouseDelta.x) * ticks_per_px;
    tl.t0 -= dt;
    tl.t1 -= dt;
    ImGui::SetScrollY(ImGui::GetScrollY() - io.MouseDelta.y);
  }
  if (ImGui::IsItemDeactivated() && io.MouseDragMaxDistanceSqr[0] <= 9.0f) {
    if (hover.any && hover.item.count == 1) {
      const InstructionRef ref =
          model.instruction_of(model.tracks()[hover.track].lanes[hover.lane].bars[hover.item.first]);
      if (ref.valid()) state.select(ref == state.selected ? InstructionRef{} : ref);
    } else if (hover.any) {
      // Clicking a fold zooms into it.
      const double off = static_cast<double>(model.track_offset(hover.track, tl.align_runs));
      const double pad = (hover.item.end - hover.item.start) * 0.1 + kMinWindowNs;
      tl.t0 = hover.item.start + off - pad;
      tl.t1 = hover.item.end + off + pad;
    }
    state.timeline.scroll_to_selection = false;
  }
  ImGui::EndChild();
}

}  // namespace etscope::gui
