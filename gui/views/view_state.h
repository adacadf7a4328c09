// ViewState: everything the UI remembers that is not data: which tab is open, the selected
// instruction, the timeline's visible window, filters, dialogs. The views read and write it; the
// App acts on the requests it carries (open files, quit). Models never see it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "etscope/inspect/compare.h"
#include "model/gap_model.h"
#include "model/graph_model.h"
#include "model/instruction_ref.h"
#include "model/stats_model.h"

namespace etscope::gui {

enum class ViewId : uint8_t { kProgram, kGraph, kTimeline, kStats, kMemory, kGaps, kCompare, kTraining, kGeneration, kFindings };

/// Every view: its --view name, its tab title (in tab order; Alt+1..9 and Alt+0 follow it).
struct ViewInfo {
  ViewId id;
  const char* key;
  const char* title;
};
inline constexpr ViewInfo kViews[] = {{ViewId::kProgram, "program", "Program"},
                                      {ViewId::kGraph, "graph", "Graph"},
                                      {ViewId::kTimeline, "timeline", "Timeline"},
                                      {ViewId::kStats, "stats", "Op statistics"},
                                      {ViewId::kMemory, "memory", "Memory"},
                                      {ViewId::kGaps, "gaps", "Numeric gaps"},
                                      {ViewId::kCompare, "compare", "Compare"},
                                      {ViewId::kTraining, "training", "Training"},
                                      {ViewId::kGeneration, "generation", "Generation"},
                                      {ViewId::kFindings, "findings", "Findings"}};
inline constexpr int kViewCount = static_cast<int>(sizeof kViews / sizeof kViews[0]);

struct TimelineViewState {
  double t0 = 0, t1 = 0;       ///< Visible window in ticks (ns) on the shared axis.
  bool fit = true;             ///< Show everything on the next frame.
  bool align_runs = true;      ///< Every track starts at 0 instead of at its time in the run.
  bool scroll_to_selection = false;
};

struct StatsViewState {
  size_t block = SIZE_MAX;     ///< SIZE_MAX: the model's default block.
  char filter[256] = {};
  StatsQuery query;
};

struct GenerationViewState {
  int prompt_tokens = 0;       ///< The prompt's token count the user gave (0: unknown).
  bool clip_outliers = true;   ///< The latency axis stops at twice the decode p90.
};

struct GapsViewState {
  /// inspect::GapMetric: L1, MSE or SNR; `etscope debug`'s default (inspect::kDefaultGapMetric).
  int metric = static_cast<int>(inspect::kDefaultGapMetric);
  double threshold = 0;
  bool threshold_set = false;  ///< False: take the metric's default on the next frame.
  size_t row = SIZE_MAX;       ///< Selected gap row; SIZE_MAX: follow the shared selection.
  size_t element = 0;          ///< Element of a sequence output.
  bool scroll_table = false;
};

struct MemoryViewState {
  size_t plan = SIZE_MAX;       ///< The plan the window belongs to (another plan resets it).
  double u0 = 0, u1 = 1;        ///< Visible bytes: unit x across the arena columns.
  double f0 = 0, f1 = 1;        ///< Visible steps: fraction of the rows, step -1 at 0.
  bool dragged = false;         ///< The current press panned (so its release does not select).
};

struct GraphViewState {
  size_t plan = SIZE_MAX;        ///< The plan `shape` belongs to (another plan resets it).
  GraphShape shape;              ///< Collapsed groups, expanded delegates.
  std::shared_ptr<const GraphLayout> shown;  ///< The layout drawn (the last one ready).
  const GraphModel* model = nullptr;         ///< The model `shown` came from.
  double cx = 0, cy = 0;         ///< Centre of the window in layout points.
  double zoom = 1;               ///< Pixels per layout point.
  bool fit = true;               ///< Fit the whole graph on the next frame.
  bool fit_readable = true;      ///< ...or, when it is too big to read, show its start.
  bool center_on_selection = false;
  int colour = 1;                ///< 0 none, 1 time share, 2 numeric gap, 3 live bytes.
  // Per graph node colour value in [0, 1] (NaN: none), cached under what it was made from.
  std::vector<float> heat;
  std::vector<float> group_heat;   ///< Per module group: its hottest member's (NaN: none).
  const void* heat_source = nullptr;
  int heat_colour = -1;
  size_t heat_block = SIZE_MAX;
  int heat_metric = -1;
};

struct CompareViewState {
  float threshold_percent = 5;  ///< CompareOptions::threshold, in percent.
  /// CompareOptions::min_change_ms, in microseconds.
  float min_change_us = static_cast<float>(inspect::kDefaultMinChangeUs);
  float alpha = 0.05f;          ///< CompareOptions::alpha: the operators' false-discovery rate.
  bool changed_only = false;    ///< Hide unchanged operators.
  char filter[256] = {};
  double t1 = 0;                ///< Shared axis of the stacked timelines: [0, t1] ticks; 0 fits.
};

struct FindingsViewState {
  const void* model = nullptr;   ///< The FindingsModel `open` belongs to (another one resets it).
  std::vector<uint8_t> open;     ///< Per row: expanded to show where, evidence and advice.
};

struct TrainingViewState {
  bool log_loss = false;        ///< The loss plot's axis is logarithmic.
};

struct ViewState {
  ViewId view = ViewId::kProgram;
  bool select_view = true;     ///< Switch the tab bar to `view` on the next frame.
  size_t plan = 0;             ///< Execution plan shown by the Program and Memory views.
  InstructionRef selected;     ///< Shared selection.
  bool scroll_program = false; ///< Scroll the instruction list to the selection once.
  int program_tab = 0;         ///< 0 instructions, 1 values.

  TimelineViewState timeline;
  StatsViewState stats;
  GenerationViewState generation;
  GapsViewState gaps;
  MemoryViewState memory;
  GraphViewState graph;
  CompareViewState compare;
  TrainingViewState training;
  FindingsViewState findings;

  // Loading, shown by the main window.
  bool loading = false;
  float load_fraction = 0;
  std::string load_stage;

  // Dialogs.
  bool open_dialog = false;    ///< Show the "Open file" path dialog.
  char open_path[1024] = {};
  std::vector<std::string> errors;  ///< Shown in a modal until dismissed.
  bool errors_popup_open = false;
  std::vector<std::string> recent;  ///< Recent files for the File menu (copied by the App).

  // Requests for the App, cleared once handled.
  std::vector<std::string> open_requests;
  std::string run_request;       ///< A stored run to show (Compare's candidate picker).
  std::string baseline_request;  ///< A baseline to compare with (a stored run "id" or an ETDump).
  bool close_requested = false;
  bool clear_recent_requested = false;
  bool quit_requested = false;

  /// Selects an instruction and asks every view to bring it into sight.
  void select(const InstructionRef& ref) {
    selected = ref;
    scroll_program = true;
    timeline.scroll_to_selection = true;
    graph.center_on_selection = true;
  }
};

}  // namespace etscope::gui
