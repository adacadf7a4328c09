// The viewer's windows. Each Draw function issues ImGui calls only: it reads a Session's view
// models, writes UI state into ViewState, and never reads files or analyses data.
#pragma once

#include "model/session.h"
#include "views/view_state.h"

namespace etscope::gui {

/// The whole window: menu bar, one tab per view, status line, loading bar and dialogs.
/// `session` may be null (nothing loaded yet).
void DrawMainWindow(const Session* session, ViewState& state);

/// A combo box choosing the plan (method) shown; draws nothing when there is only one plan.
/// Choosing another plan clears the selection.
void DrawPlanPicker(const Session& session, ViewState& state);

void DrawProgramView(const Session& session, ViewState& state);
void DrawTimelineView(const Session& session, ViewState& state);
void DrawStatsView(const Session& session, ViewState& state);
void DrawMemoryView(const Session& session, ViewState& state);
void DrawGapsView(const Session& session, ViewState& state);
void DrawGraphView(const Session& session, ViewState& state);
void DrawCompareView(const Session& session, ViewState& state);
void DrawTrainingView(const Session& session, ViewState& state);
void DrawGenerationView(const Session& session, ViewState& state);
void DrawFindingsView(const Session& session, ViewState& state);

}  // namespace etscope::gui
