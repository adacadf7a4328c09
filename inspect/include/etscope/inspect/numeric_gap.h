// Numeric gap: ExecuTorch's `Inspector.calculate_numeric_gap` (semantics.md §3.10, §3.11),
// natively. Compares each operator's runtime output (logged in the ETDump's debug buffer at
// intermediate-output level) with the output of the same graph node ahead of time.
//
// C++ cannot run the AOT reference graph, so its outputs come from a file written once by
// samples/export/write_aot_intermediates.py: a FlatTensor .ptd with one tensor per key, the key
// being the node's debug handles joined with "," ("3", "4,5") plus "/i" for element i of a
// sequence output, and an optional JSON index (op names, order, which outputs are sequences,
// non-tensor values, the reference graph's name).
//
// What is reproduced, with ExecuTorch's rules and quirks:
//   - runtime side: linked events (op types) except OPERATOR_CALL; a DELEGATE_CALL is dropped when
//     inner delegate events of its backend already cover its handles; per handle tuple the event
//     with the largest instruction id; overlapping handle tuples merged (§3.10 step 4);
//   - matching: connected components of the AOT/runtime overlap graph, output i of a runtime key
//     compared with the AOT output keyed by its handle at index -(i+1), runtime lists narrowed by
//     shape then dtype for multi-output kernels, sequences compared element-wise (step 5);
//   - L1 (sum), MSE (mean) and SNR (dB) in float64, NaN/inf replaced only when a NaN is present,
//     numpy broadcasting (§3.11).
// One deliberate difference: events that were linked but logged no debug data (program-outputs
// level, or a kernel whose output was dropped) are skipped instead of failing at indexing.
//
// Ownership: views borrow bytes from the AotIntermediates' .ptd and from the Inspector's debug
// buffer; rows stay valid while both live.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "etscope/formats/tensor_data_file.h"
#include "etscope/core/result.h"
#include "etscope/core/scalar_type.h"
#include "etscope/inspect/inspector.h"

namespace etscope::inspect {

/// A dense, contiguous, row-major tensor whose bytes are borrowed.
struct TensorView {
  ScalarType dtype = ScalarType::kFloat;
  std::vector<int64_t> shape;        ///< [] for a 0-dim tensor.
  std::span<const uint8_t> bytes;    ///< numel() elements; empty for zero-size tensors.
  uint64_t numel() const;
};

/// One compared value as the Inspector sees it: None, a Python scalar, a tensor, or a list
/// (a sequence output, a TensorList, or an event's list of logged values).
struct GapValue {
  enum class Kind : uint8_t { kNone, kScalar, kTensor, kList };
  Kind kind = Kind::kNone;
  double scalar = 0;                 ///< kScalar (ints and bools as numbers).
  TensorView tensor;                 ///< kTensor.
  std::vector<GapValue> items;       ///< kList.

  bool is_list() const { return kind == Kind::kList; }
};

/// One key of the AOT intermediate outputs.
struct AotEntry {
  std::vector<int64_t> handles;       ///< The key: the node's debug handle(s).
  std::vector<std::string> op_names;  ///< FX node names; empty without an index.
  GapValue output;                    ///< A tensor, a scalar, or a kList for sequence outputs.
};

/// AOT intermediate outputs loaded from a .ptd (+ index). Entries keep the capture order, which
/// decides the row order (from the index; by key order in the .ptd without one).
struct AotIntermediates {
  std::shared_ptr<const TensorDataFile> file;  ///< Owns the tensor bytes the entries view.
  std::string reference_graph;  ///< e.g. "exported_program"; "" when there is no index.
  std::vector<AotEntry> entries;
};

/// Another program's run as the reference of a numeric gap (`etscope debug --against`): two exports
/// of one model (fp32 and int8, XNNPACK and portable, before and after a pass) share their
/// modules, not their debug handles. For each module (the innermost frame of the ETRecords' module
/// stacks, the root left out) in which both runs logged a floating tensor of the same shape, the
/// last one `other` logged there becomes an entry keyed by the last debug handle of the last event
/// of `run` in that module, in `run`'s order: calculate_numeric_gap(run, result) then compares the
/// two programs module output by module output, and the local gaps (numerics/local_gap.h) run
/// `run`'s operators from `other`'s values. op_names hold "<module path>: <other's last op type>";
/// reference_graph is "". Tensors borrow `other`'s debug buffer: keep `other` alive. Errors
/// (kInvalidArgument): a run without an ETRecord or debug buffer, no module in common.
Result<AotIntermediates> run_as_reference(const Inspector& run, const Inspector& other);

/// Loads AOT intermediates. `index_json_path` may be empty: keys and tensors then come from the
/// .ptd alone (no op names, no non-tensor sequence elements). Errors name the file: kNotFound/kIo
/// (cannot read), kWrongKind (not a .ptd / not JSON), kCorrupt (a malformed key, an index entry
/// naming a key the .ptd lacks, a tensor without a layout, an unknown dtype), kInvalidArgument
/// (no entries at all).
Result<AotIntermediates> load_aot_intermediates(const std::string& ptd_path,
                                                const std::string& index_json_path);
/// Where samples/export/write_aot_intermediates.py writes the index of a .ptd: X.json for X.ptd.
std::string aot_index_path(const std::string& ptd_path);
/// aot_index_path() when that file exists, else "".
std::string aot_index_beside(const std::string& ptd_path);
/// The warning a front end gives when a .ptd is compared without its index: one line saying
/// where the index was looked for and that the AOT-op column stays empty.
std::string missing_aot_index_warning(const std::string& ptd_path);
/// The AOT intermediates of a program by the same script's naming (M.aot_intermediates.ptd
/// beside M.pte or M.bpte) when that file exists, else "".
std::string aot_intermediates_beside(const std::string& model_path);

/// The same from an already-read .ptd and index text (`index_json` may be empty); for tests.
Result<AotIntermediates> load_aot_intermediates(std::shared_ptr<const TensorDataFile> ptd,
                                                std::string_view index_json,
                                                const std::string& index_name = "index.json");

enum class GapMetric : uint8_t { kL1, kMSE, kSNR };

/// The metric `etscope debug` and the viewer's Numeric gaps view start with: SNR (dB) reads the
/// same for tensors of any scale, where L1 and MSE grow with the values' magnitude.
inline constexpr GapMetric kDefaultGapMetric = GapMetric::kSNR;

/// "L1", "MSE", "SNR".
const char* to_string(GapMetric metric);
/// Case-insensitive, surrounding whitespace ignored (as ExecuTorch); kInvalidArgument otherwise.
Result<GapMetric> parse_gap_metric(std::string_view text);

/// The comparator of §3.11 on two non-list values (scalars or tensors), in float64, shapes
/// broadcast like numpy. `a` is the AOT reference (SNR's signal). kInvalidArgument for None,
/// lists, non-numeric dtypes and shapes that do not broadcast.
Result<double> compare_values(GapMetric metric, const GapValue& a, const GapValue& b);

/// The figures users compute by hand beside ExecuTorch's L1/MSE/SNR (executorch#16426), for one
/// compared pair (`aot` the reference), in float64 over numpy's broadcast of the two shapes. Unlike
/// the comparator they read the raw values (no NaN replacement): NaN and Inf are counted, and the
/// error figures are over the elements both sides hold finite.
struct GapStats {
  uint64_t compared = 0;           ///< Elements of the broadcast shape.
  uint64_t exact = 0;              ///< Elements equal on both sides (NaN equal to NaN).
  uint64_t aot_nan = 0, aot_inf = 0, runtime_nan = 0, runtime_inf = 0;
  double max_abs = 0;              ///< Largest |runtime - aot|.
  /// Largest |runtime - aot| / |aot| over elements whose aot is not 0; nullopt when none is.
  std::optional<double> max_rel;
  /// aot.runtime / (|aot| |runtime|); 1 when both are all zeros, nullopt when one of them is
  /// (or no element is finite on both sides).
  std::optional<double> cosine;
  /// Per output channel (channel_dim of the broadcast shape), 10 log10(sum aot^2 / sum (runtime -
  /// aot)^2) of the worst channel (+inf when it is exact); nullopt for scalars and 1-d tensors.
  std::optional<double> worst_channel_sqnr_db;
  int64_t worst_channel = -1;
  int64_t channel_dim = -1;        ///< The dimension read as channels, -1 when none.
  /// Largest distance in units in the last place, when both sides are floats of one dtype (f16,
  /// bf16, f32, f64): how many representable values lie between them; nullopt otherwise.
  std::optional<uint64_t> max_ulp;
};

/// The channel dimension of an operator's output of rank `rank`: 1 from rank 4 (NCHW, PyTorch's
/// layout of images and their activations) and for a rank-3 convolution (an op name containing
/// "conv", any case: NCL), the last dimension otherwise (linear, matmul, attention:
/// [..., features]); -1 below rank 2.
int64_t output_channel_dim(const std::vector<std::string>& op_names, size_t rank);

/// gap_stats of two non-list values (tensors or scalars), channels along `channel_dim` of the
/// broadcast shape (-1: none). kInvalidArgument as compare_values.
Result<GapStats> gap_stats(const GapValue& aot, const GapValue& runtime, int64_t channel_dim);

/// The stats as (label, text) pairs in one order, for the CLI's table and the viewer: "max abs",
/// "max rel", "cosine", "worst channel", "max ULP", "exact", "NaN/Inf"; "-" where a figure does
/// not apply ("worst channel": "38.2 dB (channel 3 of dim 1)"; "NaN/Inf": "-" when neither side has any,
/// else "aot N/I, runtime N/I").
std::vector<std::pair<std::string, std::string>> gap_stats_text(const GapStats& stats);

/// One row of calculate_numeric_gap's DataFrame.
struct GapRow {
  std::vector<int64_t> aot_handles;     ///< The matched runtime key, as ExecuTorch reports it.
  std::vector<std::string> aot_ops;     ///< AOT op names whose key lies within aot_handles.
  GapValue aot_output;
  std::vector<std::string> runtime_ops; ///< Runtime event names whose key lies within.
  std::vector<int64_t> runtime_handles;
  GapValue runtime_output;

  std::vector<double> gap;              ///< One per compared element (usually one).
  /// One per compared element, beside `gap`; channels by output_channel_dim of the row's AOT and
  /// runtime op names.
  std::vector<GapStats> stats;
  /// Per AOT op name (first-seen order, no duplicates): its stack trace in the reference graph,
  /// nullopt when the graph, the node or its trace is unknown.
  std::vector<std::pair<std::string, std::optional<std::string>>> stack_traces;
};

/// calculate_numeric_gap(metric) over every block of `inspector`, rows in ExecuTorch's order.
/// Needs an ETRecord (debug handles) and a debug buffer in the Inspector. Errors (one line,
/// naming the file): kInvalidArgument without an ETRecord or debug buffer, or when nothing ran at
/// intermediate-output level; kCorrupt for a logged tensor outside the debug buffer; the errors
/// ExecuTorch raises (a component with several runtime keys, sequence/non-sequence mismatches).
Result<std::vector<GapRow>> calculate_numeric_gap(const Inspector& inspector,
                                                  const AotIntermediates& aot, GapMetric metric);

/// What a gap row's number hides: where and how two values differ, for the viewer's side-by-side
/// view. Values are read as compare_values reads them (float64, NaN/inf replaced when a NaN is
/// present, numpy broadcasting); `aot` is the reference.
struct GapDetail {
  uint64_t compared = 0;               ///< Elements of the broadcast shape.
  std::vector<int64_t> shape;          ///< The broadcast shape.
  double max_abs = 0;                  ///< Largest |runtime - aot|; 0 when nothing was compared.
  uint64_t max_index = 0;              ///< Its row-major index in `shape` (first one on ties).
  std::vector<int64_t> max_at;         ///< The same as coordinates.
  double aot_at_max = 0, runtime_at_max = 0;
  double mean_abs = 0;                 ///< Mean of |runtime - aot|.
  double aot_min = 0, aot_max = 0, runtime_min = 0, runtime_max = 0;  ///< Over compared elements.
  /// (aot, runtime) pairs of at most `max_points` elements taken at an even stride, the element
  /// of max_index always among them.
  std::vector<std::pair<double, double>> points;
  /// Counts of (runtime - aot) in `bins` equal bins over [-max_abs, max_abs] (all in the middle
  /// bin when max_abs is 0).
  std::vector<uint64_t> histogram;
};

/// The detail of two non-list values (tensors or scalars), as compare_values takes them.
/// kInvalidArgument for None, lists, non-numeric dtypes and shapes that do not broadcast.
Result<GapDetail> gap_detail(const GapValue& aot, const GapValue& runtime, size_t max_points = 2048, size_t bins = 41);

/// Short text of a value for tables: "f32[1,16,32,32]", "3.5", "None", "[f32[2], i64[2]]".
std::string describe(const GapValue& value);

/// Whether a run executed with the inputs its AOT intermediates were made from: the program
/// inputs etscope's runtime logs at intermediate-output level (EventBlock::run_inputs, first
/// block that has them) against the ETRecord's representative inputs of the Inspector's method.
/// A gap against outputs of other inputs measures the inputs, not the runtime.
struct InputCheck {
  enum class Outcome : uint8_t {
    kSame,         ///< Every tensor input equal within the tolerance.
    kDifferent,    ///< Count, dtype, shape or values differ.
    kNotRecorded,  ///< The dump holds no inputs (ExecuTorch's runtime does not log them) or the
                   ///< ETRecord no representative inputs: nothing to compare.
  };
  Outcome outcome = Outcome::kNotRecorded;
  /// kDifferent: the one-line refusal ("<dump>: the run used different inputs from the AOT
  /// intermediates (input 0: ...): rerun with --inputs-from-etrecord"); kNotRecorded: why
  /// nothing could be checked; kSame: "".
  std::string message;
  double max_abs_difference = 0;  ///< Largest |run - AOT| over compared elements.
};

/// Elements a, b are equal when |a - b| <= atol + rtol * |b| (numpy's allclose; NaN equals NaN).
inline constexpr double kInputRtol = 1e-5;
inline constexpr double kInputAtol = 1e-6;

/// Compares the run's recorded inputs with the AOT inputs. Errors: kCorrupt for a logged input
/// outside the debug buffer; without a debug buffer or ETRecord the outcome is kNotRecorded.
Result<InputCheck> check_run_inputs(const Inspector& inspector, double rtol = kInputRtol, double atol = kInputAtol);

/// The event that logged `row`'s runtime output: among `inspector`'s events with debug handles
/// (not OPERATOR_CALL, not framework events) whose handles all lie within the row's runtime
/// handles, the one with the largest instruction id (the output ExecuTorch compares, §3.10);
/// null when none. Its module path and instruction name where the row sits in the program.
const Event* gap_row_event(const Inspector& inspector, const GapRow& row);

/// One row's gap over several input sets (`etscope debug --against --inputs`): rows are matched by
/// their runtime handles; a set whose run has no such row (or no gap) leaves nullopt.
struct GapOverInputs {
  std::vector<int64_t> runtime_handles;
  std::vector<std::string> aot_ops;
  std::vector<std::optional<double>> per_input;  ///< Gap of the row's first compared element, per set.
  double mean = 0;   ///< Over the sets that have it.
  double worst = 0;  ///< The largest L1 / MSE, the lowest SNR.
  size_t worst_input = 0;
};

/// The rows of the first set's table, each with its gaps in every set (`per_set[k]`: the rows of
/// set k, same metric). Rows no set compared are left out.
std::vector<GapOverInputs> gaps_over_inputs(const std::vector<std::vector<GapRow>>& per_set, GapMetric metric);

/// Whether a row's gap passes `threshold`: L1 and MSE above it, SNR below it (a lower SNR is a
/// larger gap); NaN does not (it means nothing was compared: empty tensors, zero signal and zero
/// noise). A sequence row passes when any of its elements does.
bool gap_passes(const GapRow& row, GapMetric metric, double threshold);
/// The same test on one row's gaps (GapRow::gap, or a local gap: numerics/local_gap.h).
bool gaps_pass(const std::vector<double>& gaps, GapMetric metric, double threshold);

/// The first row (in ExecuTorch's row order: the reference graph's execution order) whose gap
/// passes `threshold`, or nullopt when none does.
std::optional<size_t> first_divergence(const std::vector<GapRow>& rows, GapMetric metric, double threshold);

/// Each row's local gap (issue 32): the gap the operator adds by itself, from a second run in
/// which every operator computed from the AOT values of its inputs (numerics/local_gap.h runs
/// it). Per row of `accumulated`, one value per compared element as GapRow::gap: the gap of the
/// row of `forced` (calculate_numeric_gap of that run) with the same AOT handles; nullopt for
/// rows the forced run does not have.
using LocalGaps = std::vector<std::optional<std::vector<double>>>;
LocalGaps local_gaps(const std::vector<GapRow>& accumulated, const std::vector<GapRow>& forced);

/// The culprit: the first row (in row order) whose local gap passes `threshold` (gaps_pass),
/// nullopt when none does.
std::optional<size_t> first_local_divergence(const LocalGaps& local, GapMetric metric, double threshold);

/// Where `etscope debug --etdump D --debug-buffer B` keeps the run its local gaps come from, and
/// where the viewer looks for it: ".local" before each file's extension ("run.etdp" ->
/// "run.local.etdp", "run.bin" -> "run.local.bin").
std::pair<std::string, std::string> local_run_paths(const std::string& etdump_path, const std::string& debug_buffer_path);

/// The threshold `etscope debug` uses without --threshold: L1 1e-3, MSE 1e-6, SNR 40 dB.
double default_gap_threshold(GapMetric metric);

}  // namespace etscope::inspect
