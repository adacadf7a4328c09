// Colours shared by the views, so a role or an operator has the same colour everywhere.
#pragma once

#include <cstdint>

#include <imgui.h>

#include "etscope/findings/findings.h"
#include "etscope/inspect/memory_plan.h"
#include "model/timeline_model.h"

namespace etscope::gui::palette {

/// Tensor roles, as `etscope memory --svg` colours them.
ImU32 role(inspect::TensorRole role);
/// A timeline bar: framework and wrapper events in muted tones, kernels and delegate events
/// by a hash of their name.
ImU32 bar(const BarStyle& style);
/// A finding's severity: high red, medium orange, low yellow, info grey (readable as text on
/// the dark theme and as a chip under dark text).
ImU32 severity(findings::Severity severity);
/// Black or white, whichever reads better on `background`.
ImU32 text_on(ImU32 background);

constexpr ImU32 kSelection = IM_COL32(255, 200, 0, 255);      ///< Selected instruction.
constexpr ImU32 kSelectionFill = IM_COL32(255, 200, 0, 60);
constexpr ImU32 kPeak = IM_COL32(214, 39, 40, 255);
constexpr ImU32 kPeakText = IM_COL32(255, 120, 110, 255);  ///< Readable on the dark plot.
constexpr ImU32 kFold = IM_COL32(138, 146, 160, 255);  ///< Folded run of tiny events.
constexpr ImU32 kAxis = IM_COL32(150, 150, 160, 255);
constexpr ImU32 kGrid = IM_COL32(255, 255, 255, 22);
constexpr ImU32 kPlotBackground = IM_COL32(30, 32, 38, 255);
constexpr ImU32 kConflict = IM_COL32(214, 39, 40, 255);

}  // namespace etscope::gui::palette
