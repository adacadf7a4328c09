// Inspector: joins an ETDump with (optionally) an ETRecord and a debug buffer, the way
// ExecuTorch's Python Inspector does (../shared/spec/semantics.md §3), natively.
//
// What it computes, with ExecuTorch's exact definitions:
//   - EventBlocks: run blocks grouped by their signature (name, the ordered event signatures,
//     bundled_input_index), so ten `Execute` runs become one block with ten samples per event;
//     within one run, repeated signatures keep the last occurrence.
//   - Per event: name, instruction id, delegate identifier, PerfData (raw samples converted from
//     the source to the target time scale with the 32-bit wraparound rule, p10/p50/p90 with
//     linear interpolation, avg, min, max), raw start times, debug values (first run).
//   - With an ETRecord: debug handles, num_outputs, delegate backend names, op types, stack
//     traces and module hierarchy of the graph nodes each event came from.
//   - find_total_for_module, a per-operator-type summary, a module tree with totals, and
//     delegate events' unattributed time (DELEGATE_CALL minus its sub-events).
//
// What it adds, defined here once for every front end (ExecuTorch has no such numbers):
//   - a block's run time (run_time) and each event's share of it (share_of_run);
//   - per-event totals (PerfData::total), module totals (module_tree) and the per-type summary.
//
// Memory: events are not copied. Each Event keeps the indices of its raw ETDump events (one per
// run), so loading N raw events costs 4 bytes each on top of the reader's 32.
//
// Ownership: an Inspector holds shared pointers to the EtDumpFile, the EtRecord and the debug
// buffer it was built from; they stay alive as long as it does.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "etscope/etdump/etdump_reader.h"
#include "etscope/etrecord/etrecord.h"
#include "etscope/formats/blob.h"
#include "etscope/core/event_names.h"
#include "etscope/formats/program.h"
#include "etscope/core/result.h"

namespace etscope::inspect {

/// Units of ETDump timestamps (source) and of reported statistics (target).
enum class TimeScale : uint8_t { kNs, kUs, kMs, kS, kCycles };

/// "ns", "us", "ms", "s", "cycles".
const char* to_string(TimeScale scale);
/// How many of `scale` make one second (1 for cycles, which have no fixed rate).
double units_per_second(TimeScale scale);
/// Parses a unit name; kInvalidArgument for anything else.
Result<TimeScale> parse_time_scale(std::string_view text);

/// Elapsed ticks between two raw timestamps, as ExecuTorch computes them: end - start, or, when
/// start > end and both fit in 32 bits, (2^32 - 1 - start) + end. kCorrupt otherwise.
Result<uint64_t> elapsed_ticks(uint64_t start, uint64_t end);
/// elapsed_ticks for drawing raw events: an interval it cannot measure is drawn 0 ticks long.
uint64_t elapsed_ticks_or_zero(uint64_t start, uint64_t end);

/// Percentile p in [0, 100] of sorted samples with numpy's default linear interpolation.
double percentile_sorted(const std::vector<double>& sorted, double p);
/// percentile_sorted of a sorted copy of `samples` (any order); 0 for none.
double percentile(std::vector<double> samples, double p);

struct PerfData {
  std::vector<double> raw;  ///< One sample per run, in the target unit, in run order.
  double p10 = 0, p50 = 0, p90 = 0, avg = 0, min = 0, max = 0;
  double total = 0;         ///< Sum of the samples, in run order (all runs' time together).
};

/// One graph node an event maps to (through its debug handles), in first-seen order.
struct NodeLink {
  std::string node_name;     ///< FX node name plus a trailing '_', as the Inspector keys them.
  std::string stack_trace;
  std::vector<etrecord::ModuleFrame> module_stack;  ///< Outermost first.
};

struct Event {
  std::string name;
  int32_t instruction_id = 0;            ///< 0 for framework events (Method::execute etc.).
  int32_t chain = 0;
  /// Delegate debug identifier: the int id when >= 0, else the string id, else none.
  std::optional<int64_t> delegate_id_int;
  std::optional<std::string> delegate_id_str;
  /// True for delegate-raised events, false for others; nullopt only when the event had no
  /// signature at all (never with ETDumps written by ExecuTorch or etscope).
  std::optional<bool> is_delegated_op;
  std::optional<std::string> delegate_backend_name;
  std::optional<std::vector<int64_t>> debug_handles;
  int64_t num_outputs = 1;
  std::vector<std::string> op_types;     ///< e.g. "aten.convolution.default", one per node hit.
  std::vector<NodeLink> nodes;           ///< stack_traces and module_hierarchy, by node name.
  std::optional<PerfData> perf;          ///< Absent for debug-only events.
  std::vector<uint64_t> start_times;     ///< Raw start timestamp of each run.
  std::vector<uint32_t> raw_events;      ///< Index into EtDumpFile::events, one per run.
  std::vector<uint32_t> debug_values;    ///< Indices into EtDumpFile::values (first run).
  std::vector<std::string> delegate_metadata;  ///< Per run; empty unless any run had some.

  /// events::classify of the name and is_delegated_op.
  events::EventClass kind() const;
  /// ExecuTorch's rule: the name contains OPERATOR_CALL (delegated or not).
  bool is_operator_call() const;
  bool is_framework() const;            ///< Program::load_method, Method::init, Method::execute.
  /// The delegate identifier as ExecuTorch prints it (int as decimal), or "" when none.
  std::string delegate_identifier_text() const;
};

struct EventBlock {
  std::string name;                      ///< "Default", "Execute", or a method's name.
  int32_t bundled_input_index = -1;
  std::vector<Event> events;
  std::vector<uint32_t> runs;            ///< Indices into EtDumpFile::blocks grouped here.
  std::vector<uint32_t> run_outputs;     ///< EtDumpFile::values logged as outputs (first run).
  /// EtDumpFile::values logged as the program's inputs (first run; etscope's runtime logs them
  /// at intermediate-output level under instruction id kProgramInputInstruction).
  std::vector<uint32_t> run_inputs;
  /// What etscope's ETDump writer could not record in these runs, from its overflow markers
  /// (core/event_names.h; never events), summed over the runs: logged values whose bytes did not
  /// fit the debug buffer, events beyond its capacity, and executions after its last block.
  uint64_t values_dropped = 0, events_dropped = 0, executions_dropped = 0;
  /// A marker without a count (dumps written before etscope counted): something was lost.
  bool drops_uncounted = false;
  /// The ETRecord method whose debug maps linked this block's events: the one that explains its
  /// kernel events (see InspectorOptions::method), "" without an ETRecord or maps.
  std::string method;
};

/// One row of the per-operator-type summary (TFLite's "summary by node type").
struct TypeSummary {
  std::string type;        ///< "aten::convolution.out", or "<backend>: <op>" for delegate ops.
  uint64_t count = 0;      ///< Events of this type per run.
  double total = 0;        ///< Sum of their average times (target unit).
  double avg = 0;          ///< total / count.
  double share = 0;        ///< total / the block's run time (Inspector::run_time), 0..1.
  double cumulative_share = 0;  ///< Sum of share over this row and the rows before it.
};

/// Where a block's run time comes from.
enum class RunTimeSource : uint8_t {
  kNone,           ///< No timed event to define it: the run time is 0.
  kMethodExecute,  ///< The block's Method::execute average.
  kCallSum,        ///< No Method::execute: the sum of the instructions' calls (Inspector::run_time).
};

/// "Method::execute avg", "sum of kernel and delegate calls", "none".
std::string to_string(RunTimeSource source);

/// A block's run time (target unit) and its definition.
struct RunTime {
  double value = 0;
  RunTimeSource source = RunTimeSource::kNone;
};

/// An event's share of its block's run time, perf avg / run.value (0..1 for events inside the
/// run, 1 for Method::execute itself); nullopt when the event has no timing or run.value <= 0.
std::optional<double> share_of_run(const Event& event, const RunTime& run);

/// A node of the module tree: totals of the events under a module path.
struct ModuleNode {
  std::string key;         ///< nn_module_stack key, e.g. "L__self___features_0".
  std::string path;        ///< e.g. "features.0".
  std::string type;        ///< e.g. "torch.nn.modules.conv.Conv2d".
  double total = 0;        ///< Sum of perf avg of events inside (each event once).
  double share = 0;        ///< total / the root's total (the time the tree accounts for), 0..1.
  uint64_t events = 0;
  std::vector<ModuleNode> children;
};

/// A DELEGATE_CALL and the delegate events inside it.
struct DelegateSummary {
  int32_t instruction_id = 0;
  std::string backend;
  double call_avg = 0;         ///< DELEGATE_CALL avg (target unit).
  double sub_events_avg = 0;   ///< Sum of its delegate events' avg.
  double unattributed = 0;     ///< call_avg - sub_events_avg.
  std::vector<uint32_t> sub_events;  ///< Indices into the block's events.
};

struct InspectorOptions {
  TimeScale source = TimeScale::kNs;
  TimeScale target = TimeScale::kMs;
  /// Whose ETRecord maps link a block whose method its events cannot tell ("" = "forward", the
  /// only method ExecuTorch's Inspector reads). A block whose kernel events one method of the
  /// record explains (instructions mapped, operators agreeing) always uses that method's maps,
  /// so every block of a multi-method dump is linked to its own method.
  std::string method;
  /// etscope records warm-up executions as "Warmup" blocks; they are left out unless this is
  /// set, and then count as "Execute" runs.
  bool include_warmup = false;
  /// "Execute" runs to leave out first, for dumps that do not mark warm-up (ExecuTorch's).
  uint32_t skip_runs = 0;
};

class Inspector {
 public:
  /// Builds the event blocks. `record` and `debug_buffer` may be null. Errors: kInvalidArgument
  /// when one scale is cycles and the other is not; kCorrupt for timestamps that cannot be
  /// subtracted; allocation events in a run block are skipped (ExecuTorch raises on them).
  static Result<Inspector> build(std::shared_ptr<const etdump::EtDumpFile> dump,
                                 std::shared_ptr<const etrecord::EtRecord> record,
                                 std::shared_ptr<const Blob> debug_buffer,
                                 const InspectorOptions& options = {});

  const std::vector<EventBlock>& blocks() const { return blocks_; }
  const etdump::EtDumpFile& dump() const { return *dump_; }
  const etrecord::EtRecord* record() const { return record_.get(); }
  const Blob* debug_buffer() const { return debug_buffer_.get(); }
  const InspectorOptions& options() const { return options_; }

  /// Sum of perf avg over events (all blocks, OPERATOR_CALL skipped) whose module hierarchy has
  /// a key containing `module_name`; each event counted once. Target unit.
  double find_total_for_module(std::string_view module_name) const;

  /// The block's run time, the denominator of every share (target unit):
  ///   - its Method::execute average when it has a timed Method::execute;
  ///   - otherwise (a dump cut short, a tracer that records no method scope) the sum of the
  ///     average times of its instructions' calls: every native_call_* kernel and DELEGATE_CALL,
  ///     plus the OPERATOR_CALL of an instruction that has no kernel event (a kernel without a
  ///     codegen wrapper). An OPERATOR_CALL wraps its kernel and delegate-raised events lie
  ///     inside their DELEGATE_CALL, so neither is counted twice. Other events (Method::step,
  ///     JF_CALL, user scopes) are not counted;
  ///   - 0 (kNone) when there is neither.
  RunTime run_time(size_t block) const;

  /// Per-type summary of one block (sorted by total, largest first). Framework events and those
  /// recorded beside Method::execute (the trainer's Optimizer::step) are not rows: the shares are
  /// of the run time, which holds neither.
  std::vector<TypeSummary> summary_by_type(size_t block) const;

  /// Module tree of one block; the root has an empty key and holds the block's total. A node's
  /// total sums the avg of the block's events (OPERATOR_CALL, framework and delegate-raised
  /// events left out: the kernel and the DELEGATE_CALL stand for them) with a graph node under
  /// that module, each event once. A parent is never below a child. When the other blocks have
  /// no linked events and delegate-raised events no graph nodes (XNNPACK's have none), a node's
  /// total equals find_total_for_module of its key, unless that key is a substring of another
  /// module's key (ExecuTorch matches by substring: "features.1" also takes in "features.10").
  ModuleNode module_tree(size_t block) const;

  /// Delegate calls of one block with their unattributed time.
  std::vector<DelegateSummary> delegate_summaries(size_t block) const;

  /// The method each block ran, found by matching its kernel events (native_call_<op> at
  /// chain/instruction) and DELEGATE_CALLs against every plan of `program`: ExecuTorch names
  /// every run "Execute" and every method's run "Method::execute", so the dump alone cannot
  /// tell. "" for a block no plan explains, or that several plans explain equally (framework
  /// blocks such as "Default" have no kernels and stay "").
  std::vector<std::string> block_methods(const Program& program) const;

  /// One sentence per block that lost something while recording (see EventBlock's drop
  /// counts), naming the block, the counts and the cause; empty when nothing was lost.
  std::vector<std::string> recording_losses() const;

  /// Top-level module keys seen in the module hierarchy (children of the root module).
  std::vector<std::string> top_level_modules() const;

 private:
  Inspector() = default;
  void link_record();
  void link_block(EventBlock& block);
  std::shared_ptr<const etdump::EtDumpFile> dump_;
  std::shared_ptr<const etrecord::EtRecord> record_;
  std::shared_ptr<const Blob> debug_buffer_;
  InspectorOptions options_;
  std::vector<EventBlock> blocks_;
};

}  // namespace etscope::inspect
