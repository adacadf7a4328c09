// Session: everything the viewer has loaded (a program, an ETDump, an ETRecord, a debug buffer)
// and the view models built from them. A Session is built on the loading thread by
// load_session() and is read-only afterwards, except for the models' own row caches, which only
// the UI thread touches.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "etscope/etdump/etdump_reader.h"
#include "etscope/etrecord/etrecord.h"
#include "etscope/formats/blob.h"
#include "etscope/formats/program.h"
#include "etscope/core/result.h"
#include "etscope/inspect/engine_identity.h"
#include "etscope/inspect/inspector.h"
#include "etscope/inspect/training_curve.h"
#include "etscope/store/store.h"
#include "model/compare_model.h"
#include "model/event_lookup.h"
#include "model/findings_model.h"
#include "model/gap_model.h"
#include "model/generation_model.h"
#include "model/graph_model.h"
#include "model/memory_model.h"
#include "model/program_model.h"
#include "model/stats_model.h"
#include "model/timeline_model.h"

namespace etscope::gui {

/// What a file given to the viewer is, decided from its bytes.
enum class InputKind : uint8_t { kProgram, kBundledProgram, kETDump, kETRecord, kDebugBuffer, kAotIntermediates, kCurve };

const char* to_string(InputKind kind);

/// Sniffs `blob`'s identifiers: a .pte (any ET.. version), .bpte, ETDump, zip (an ETRecord) or
/// .ptd (AOT intermediates). Bytes without an identifier are a debug buffer when the name ends in
/// ".bin", a training curve (`etscope train --curve`) when it ends in ".json". Errors
/// (kWrongKind) name the file and say what it is instead.
Result<InputKind> detect_input_kind(const Blob& blob);

/// Progress of a load, written by the loading thread and read by the UI thread.
class LoadProgress {
 public:
  void set(float fraction, std::string stage);
  float fraction() const { return fraction_.load(); }
  std::string stage() const;

 private:
  std::atomic<float> fraction_{0.0f};
  mutable std::mutex mutex_;
  std::string stage_;
};

/// What to open: files (each kind read from its bytes) and, from a run store, runs.
struct OpenRequest {
  std::vector<std::string> paths;
  /// The Compare view's baseline: an ETDump file, or with a store runs as `etscope compare` takes
  /// them (ids and tags separated by commas; a tag of a `run --repeat` set is the whole set). The
  /// current run (the loaded ETDump or `run`, which may name several runs likewise) is compared
  /// with it.
  std::string baseline;
  std::string store;  ///< A run store location (SQLite file or postgresql:// URI); "" keeps the open one.
  /// A stored run (id or key=value) to show: its ETDump when the file still exists, its
  /// per-operator samples (Compare) and its training curve (Training).
  std::string run;
  bool empty() const { return paths.empty() && baseline.empty() && store.empty() && run.empty(); }
};

struct Session {
  // The loaded files; each pointer is null when that kind was not given.
  std::string program_path, dump_path, record_path, debug_path, aot_path;
  std::shared_ptr<const Program> program;  ///< A .pte, or the program inside a .bpte.
  std::shared_ptr<const etdump::EtDumpFile> dump;
  std::shared_ptr<const etrecord::EtRecord> record;
  std::shared_ptr<const Blob> debug_buffer;
  /// AOT intermediate outputs (samples/export/write_aot_intermediates.py): given, or found beside
  /// the program as M.aot_intermediates.ptd.
  std::shared_ptr<const inspect::AotIntermediates> aot;

  // View models.
  std::vector<ProgramModel> plans;                 ///< One per execution plan.
  std::vector<std::optional<MemoryModel>> memory;  ///< One per plan; empty when it failed.
  /// One per plan: the operator graph, its module groups (with an ETRecord) and its layouts.
  /// The default plan's first layout (GraphModel::default_shape) is made while loading.
  std::vector<std::shared_ptr<const GraphModel>> graphs;
  std::unique_ptr<inspect::Inspector> inspector;   ///< When an ETDump is loaded.
  /// The engine that made the loaded ETDump's timings (its engine marker; unknown without one).
  inspect::EngineIdentity engine;
  /// The method the ETDump was read as (inspect::profile_method), "" without one.
  std::string profile_method;
  std::unique_ptr<EventLookup> lookup;             ///< Borrows *inspector.
  std::optional<TimelineModel> timeline;
  std::optional<StatsModel> stats;
  /// The Generation view's model, when the ETDump has Prefill/Decode blocks (etscope generate).
  std::optional<GenerationModel> generation;
  std::optional<GapModel> gaps;
  /// Why there are no gaps although AOT intermediates are loaded ("" otherwise).
  std::string gaps_problem;
  /// The Findings view's model: one findings::analyse of the program, ETRecord and profile,
  /// when a program or a profile is loaded.
  std::optional<FindingsModel> findings;

  // Training: a curve from `etscope train --curve` JSON, or the store run's.
  std::string curve_path;  ///< The file, or "store run N".
  std::optional<inspect::Curve> curve;

  // The run store, when one is open: its runs (newest first, at most kStoreRunsShown) for the
  // pickers, and which of them are loaded (0: none).
  static constexpr size_t kStoreRunsShown = 2000;
  std::string store_location;
  std::vector<store::RunRow> store_runs;
  int64_t store_run = 0, store_baseline = 0;
  /// Every run `run` and `baseline` named (store_run and store_baseline are their first).
  std::vector<int64_t> store_run_set, store_baseline_set;

  // Compare: a baseline (an ETDump or a store run) against the current run.
  std::shared_ptr<const etdump::EtDumpFile> baseline_dump;  ///< When the baseline is an ETDump.
  std::optional<TimelineModel> baseline_timeline;
  std::vector<inspect::RunSamples> baseline_samples;  ///< Its runs; empty without a baseline.
  std::string baseline_label;
  inspect::EngineIdentity baseline_engine;  ///< The engine that timed the baseline.
  std::optional<CompareModel> compare;

  /// Messages for the error dialog, as the CLI words them: "<file>: <problem>".
  std::vector<std::string> errors;

  /// Every loaded file, program first (not the baseline nor the store).
  std::vector<std::string> paths() const;
  bool empty() const {
    return !program && !dump && !record && !debug_buffer && !aot && !curve && baseline_samples.empty() && store_location.empty();
  }
  /// The plan the views start on: "forward" when there is one, else the first.
  size_t default_plan() const;
  /// Index of the plan named `name`, or -1.
  int64_t find_plan(const std::string& name) const;
};

/// Loads what `request` names and builds the view models. Files of a kind `paths` does not
/// provide are taken from `previous` (may be null) without reading them again, so dropping an
/// ETDump on a window showing a program adds to it. Never fails as a whole: a file that cannot
/// be read is reported in Session::errors and the others are still shown. `progress` may be null.
std::unique_ptr<Session> load_session(const OpenRequest& request, const Session* previous, LoadProgress* progress);
/// The same for files only.
std::unique_ptr<Session> load_session(const std::vector<std::string>& paths, const Session* previous,
                                      LoadProgress* progress);

}  // namespace etscope::gui
