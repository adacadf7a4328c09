// The run store: profiled runs kept for comparison and history, in SQLite (one file, the
// default) or PostgreSQL (a server shared by a team or a device fleet), one schema for both
// (docs/store.md). Imports are one transaction each and idempotent: the same ETDump bytes are the
// same run. Every number stored (medians, percentiles, samples) comes from libinspect; no SQL
// leaves this library.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "etscope/core/result.h"
#include "etscope/formats/blob.h"
#include "etscope/inspect/compare.h"
#include "etscope/inspect/engine_identity.h"
#include "etscope/inspect/numeric_gap.h"
#include "etscope/inspect/training_curve.h"

namespace etscope::store {

/// The schema version this build writes and reads; a store with a newer one is refused, an older
/// one is migrated when opened (docs/store.md).
inline constexpr int kSchemaVersion = 4;

/// Where a run was made.
struct Environment {
  std::string host, device, os, backend = "etscope portable";
  int64_t threads = 1;
  std::string etscope_version, git_commit;
};

/// This machine: host name, `uname` (system, release, machine), etscope's version and the git
/// commit it was built from.
Environment this_machine();

/// A program output of the run's last execution (`run --store`).
struct OutputSummary {
  int64_t index = 0;
  std::string dtype, shape;  ///< "f32", "[1,10]".
  std::optional<double> min, max, mean;  ///< Over finite elements; absent for non-numeric outputs.
};

/// One row of a numeric gap (`debug --store`): the operator (runtime event names), the metric
/// (L1, MSE, SNR) and the gap libinspect's calculate_numeric_gap gave.
struct GapPoint {
  int64_t row = 0;  ///< Program order of the compared operator.
  std::string name;
  std::string metric;
  double gap = 0;
};

/// The points of one compared operator: its gap under `metric`, then its stats (inspect::GapStats)
/// as metrics of their own, those that apply: "max_abs", "max_rel", "cosine",
/// "worst_channel_sqnr_db", "max_ulp", "exact" and "compared" (element counts), "runtime_nan",
/// "runtime_inf", "aot_nan", "aot_inf".
std::vector<GapPoint> gap_points(int64_t row, const std::string& name, const std::string& metric, double gap,
                                 const inspect::GapStats& stats);

struct ImportRequest {
  std::string etdump;    ///< The ETDump file (required unless etdump_bytes is given).
  /// The ETDump in memory instead of a file (`run --store` without --etdump): stored exactly as
  /// importing a file of these bytes would store it (same content hash, samples and run), except
  /// that the run's file is the blob's name().
  std::shared_ptr<const Blob> etdump_bytes;
  std::string etrecord;  ///< Optional: debug handles and module paths of the operators.
  std::string pte;       ///< Optional: the program (its identity, methods, operators, arenas).
  std::string method;    ///< The method the dump ran ("" = inspect::profile_method's default).
  std::string source = "etdump";  ///< "etdump" (imported), "run" or "train".
  std::map<std::string, std::string> tags;
  Environment environment;
  inspect::Curve curve;  ///< A training run's curve (`train --store`); empty otherwise.
  std::vector<OutputSummary> outputs;
  std::vector<GapPoint> gaps;
};

/// The tag add() gives a run whose ETDump was recorded with intermediate logging on (its value:
/// "intermediate"): its timings include the logging, and compare says so.
inline constexpr std::string_view kLoggingTag = "logging";

/// The tag `run --repeat K` gives each of its K runs: its value is the id of the set's first run.
/// The runs of one set are one side of a comparison (resolve_runs, `compare set=12 set=16`).
inline constexpr std::string_view kSetTag = "set";

struct ImportResult {
  int64_t run_id = 0;
  bool created = false;  ///< False when the same ETDump was already stored.
  /// What the caller should say about the stored run, one line each (e.g. timings taken with
  /// intermediate logging on: such a run is tagged logging=intermediate, which compare warns of).
  std::vector<std::string> warnings;
};

struct RunRow {
  int64_t id = 0;
  std::string created_at;  ///< UTC, "YYYY-MM-DD HH:MM:SS".
  std::string source, file, program, program_hash, method;
  Environment environment;
  std::map<std::string, std::string> tags;
  int64_t executions = 0;
  std::optional<double> median_ms;  ///< Method::execute's median.
  /// The engine that made the run's timings: from the ETDump's engine marker when it was stored;
  /// unknown (empty name) for a dump without one. Runs stored before schema version 3 by etscope's
  /// runner (run, train, debug) are "etscope" at their etscope_version; imported ETDumps of that
  /// time are unknown (docs/store.md).
  inspect::EngineIdentity engine;
};

struct RunFilter {
  /// A program file (matched by its hash: exactly that program, whatever its name), a hash
  /// prefix, or a stored name (every program stored under it); "" = any.
  std::string program;
  std::map<std::string, std::string> tags;
  std::string since;    ///< "YYYY-MM-DD" or a full timestamp; "" = any time.
  size_t limit = 0;     ///< 0 = all, newest first.
};

/// A program the store keeps: its identity is the SHA-256 of its bytes (of the program inside a
/// .bpte); the name is the file name it was stored under, a label only.
struct StoredProgram {
  int64_t id = 0;
  std::string hash, name;
  int64_t runs = 0;  ///< Stored runs of it.
};

/// A program where its name alone could be several: "prog.pte (sha256 1a2b3c4d5e6f)".
std::string program_label(const StoredProgram& program);

/// How Store::open treats a location that holds no store yet.
enum class OpenMode {
  kCreate,    ///< Create it (the SQLite file, its directory, the schema): verbs that store runs.
  kExisting,  ///< Refuse it with one line: read-only verbs (runs, history, sql) never create one.
};

struct HistoryPoint {
  int64_t run_id = 0;
  std::string created_at;
  double median_ms = 0;
  int64_t samples = 0;
  inspect::EngineIdentity engine;  ///< RunRow::engine of the run.
};

/// A finding stored with its run (findings::analyse of the run's profile, program and ETRecord, at
/// import): what `v_findings` holds.
struct StoredFinding {
  int64_t rank = 0;                ///< Its place in the run's ranking, from 0.
  std::string rule, severity, what;
  std::optional<int64_t> chain, instruction;  ///< Its first place, when it names an instruction.
  std::string op;
  std::optional<double> time_ms, share;
  int64_t bytes = 0;
  std::string advice;
  /// What identifies a finding from run to run: its rule and its text (which names operators and
  /// instructions, never times).
  std::string key() const { return rule + ": " + what; }
};

/// A stored run's findings beside the run before it (history --findings).
struct FindingsPoint {
  int64_t run_id = 0;
  std::string created_at;
  inspect::EngineIdentity engine;
  std::vector<StoredFinding> findings;
  /// Indices into findings of those the previous run of the program did not have (all of them
  /// for the first run).
  std::vector<size_t> appeared;
  /// Findings of the previous run that this one no longer has.
  std::vector<StoredFinding> gone;
};

struct QueryResult {
  std::vector<std::string> columns;
  std::vector<std::vector<std::optional<std::string>>> rows;
};

class Store {
 public:
  /// Opens `location`: a postgresql:// or postgres:// URI, else an SQLite file (with kCreate,
  /// created with its directory when absent). Creates (kCreate) or migrates the schema; refuses a
  /// newer schema, a file that is not a store, a locked or unreachable database, and with
  /// kExisting a missing file or a database without a store (kNotFound), with one line naming it.
  static Result<std::unique_ptr<Store>> open(const std::string& location, OpenMode mode = OpenMode::kCreate);
  /// $ETSCOPE_STORE, else $XDG_DATA_HOME/etscope/runs.sqlite, else ~/.local/share/etscope/runs.sqlite.
  static std::string default_location();
  ~Store();
  Store(const Store&) = delete;
  Store& operator=(const Store&) = delete;

  const std::string& location() const;
  const char* backend() const;

  /// Imports a run: opens its files as inspect::open_profile does (files that do not belong
  /// together are refused) and stores its samples and its engine (the dump's engine marker); the
  /// same ETDump bytes twice are one run.
  Result<ImportResult> add(const ImportRequest& request);
  Result<std::vector<RunRow>> runs(const RunFilter& filter);
  Result<RunRow> run(int64_t id);
  /// A run named by its id, by `key=value` (the newest run with that tag), or by an ETDump file
  /// (imported first, with `environment`).
  Result<int64_t> resolve(const std::string& ref, const Environment& environment);
  /// The runs `ref` names as one side of a comparison, oldest first: ids and key=value tags
  /// separated by commas ("12,13,14"), each a run id (that run), a tag (the newest run with it;
  /// when that run is one of a `run --repeat` set, every run of its set) or an ETDump file
  /// (imported first, as resolve()). A run named twice counts once.
  Result<std::vector<int64_t>> resolve_runs(const std::string& ref, const Environment& environment);
  /// Tags a stored run with key=value (replacing that key's value); kNotFound without the run.
  Status tag(int64_t run_id, const std::string& key, const std::string& value);
  /// The runs tagged kSetTag=`set`, oldest first (none when no run is).
  Result<std::vector<int64_t>> set_runs(const std::string& set);
  /// The runs of the newest set before `set` of the same program (hash), method and engine as the
  /// set's first run, oldest first: what `run --repeat` offers to compare its set with. Empty
  /// when there is none.
  Result<std::vector<int64_t>> previous_set(const std::string& set);
  /// The per-operator samples of a run, as inspect::compare_runs takes them.
  Result<inspect::RunSamples> samples(int64_t run_id);
  /// The stored programs `ref` names, most runs first: a program file (.pte or .bpte) by the hash
  /// of its program (none when that program is not stored), else those whose hash starts with
  /// `ref` or whose name is `ref` (one name may be several programs). A file that cannot be read
  /// as a program is an error naming it.
  Result<std::vector<StoredProgram>> programs(const std::string& ref);
  /// The method's median per stored run of one program, oldest first; with `op` an operator's
  /// (event name, e.g. "native_call_convolution.out" or "convolution.out"). `program` is
  /// resolved by programs(): none is kNotFound, several (a name stored for different programs,
  /// a short hash prefix) is kInvalidArgument listing them, since their runs are no one trend.
  Result<std::vector<HistoryPoint>> history(const std::string& program, const std::string& op);
  /// A training run's curve as it was stored (steps, loss, accuracy, step times split into
  /// forward-backward and optimizer, validation points); an empty curve for other runs.
  /// kNotFound when there is no such run. Runs stored by schema version 1 have no time split.
  Result<inspect::Curve> curve(int64_t run_id);
  /// A run's findings, ranked; kNotFound for an unknown run.
  Result<std::vector<StoredFinding>> findings(int64_t run_id);
  /// The findings of every stored run of `program` (resolved as history() resolves it), oldest
  /// first, each with what appeared and what went since the run before.
  Result<std::vector<FindingsPoint>> findings_history(const std::string& program);
  /// One read-only SELECT (or WITH) statement over the documented views.
  Result<QueryResult> sql(const std::string& statement);

 private:
  struct Impl;
  explicit Store(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace etscope::store
