// Comparing two profiled runs: the per-operator samples of a run, the Mann-Whitney U test (as
// scipy.stats.mannwhitneyu computes it, two-sided), the Benjamini-Hochberg adjustment over the
// operators of one comparison, and the operator-by-operator comparison that `etscope compare`
// prints and gates CI on (the viewer's Compare view shows the same verdicts). The store records
// samples; every number derived from them is defined here.
//
// A verdict needs two things (issue 28: two identical runs used to show a dozen "regressions"):
//   - significance: the operators of one comparison are ~100-200 tests at once, so their p-values
//     are adjusted with Benjamini-Hochberg and compared with `alpha` as a false-discovery rate:
//     among the operators flagged, the expected share of false ones is at most alpha. BH rather
//     than Holm because the question is "which operators regressed", where a change in one
//     kernel usually moves several of its call sites at once: Holm bounds the chance of even one
//     false flag (family-wise), which with ~160 tests of 20 samples each hides real changes; BH
//     keeps their power and its guarantee holds for positively dependent tests (timings of one
//     execution share the machine's load). The method total is one test at level alpha.
//   - a practical effect: the median must move by at least `threshold` of A's median AND by at
//     least `min_change_ms` (an absolute floor above the timer's resolution and the tracer's own
//     jitter, so that 50 ns -> 145 ns is not a "+190%" regression).
//
// Drift between the runs (issue 28, item 1: two back-to-back runs of one program still raised
// alarms). A whole run shifts with the machine's state (frequency, caches, other load), so every
// sample of B differs from A's and a rank test over iterations, which are not independent of
// their run, reads the shift as an effect. The comparison therefore estimates the run-wide drift
// factor d (B / A), the median over the matched operators of median_b / median_a, which no
// single operator can move, and judges each operator on its B samples divided by d: a uniform
// shift of the whole run is no operator's regression, one operator slowing down is. Drift is not
// quite uniform either (on a busy machine long operators are preempted more than short ones), so
// an operator's net change must also stand out from how far the operators scatter around d
// (Comparison::operator_scatter, CompareRow::p_scatter). The method total cannot be corrected so
// (with one run per side a uniform real change and drift look alike): its verdict needs a change
// beyond `drift_allowance` as well, and d is reported; with several runs per side
// (compare_run_sets) it is tested on the runs' medians, and still needs the allowance: sets made
// one after the other share the machine's state within a set and drift apart between sets.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "etscope/inspect/inspector.h"

namespace etscope::inspect {

struct MannWhitney {
  double u_a = 0;     ///< U of the first sample: pairs (a, b) with a > b, ties counting 1/2.
  double p = 1;       ///< Two-sided p-value.
  bool exact = false; ///< The exact distribution (no ties, one sample of at most 8); else the
                      ///< normal approximation with tie correction and continuity correction.
  /// Rank-biserial correlation, 2 u_a / (n_a n_b) - 1 in [-1, 1]: +1 when every a exceeds every b.
  double effect = 0;
};

/// scipy.stats.mannwhitneyu(a, b, alternative="two-sided") with its default method "auto" and
/// use_continuity=True. Empty samples give p = 1, effect 0.
MannWhitney mann_whitney_u(std::span<const double> a, std::span<const double> b);

/// One timed event of a run, with a sample per execution (milliseconds).
struct OperatorSamples {
  std::string name;        ///< Event name, e.g. "native_call_convolution.out", "DELEGATE_CALL".
  int32_t chain = 0;
  int32_t instruction = -1;
  std::optional<int64_t> debug_handle;  ///< First debug handle, when the dump has one.
  int32_t occurrence = 0;  ///< How many events of the same name come before it (program order).
  std::vector<double> samples_ms;
};

/// What a comparison needs of a run: its operators' samples and the method's total per execution.
struct RunSamples {
  std::vector<OperatorSamples> operators;
  std::vector<double> method_ms;  ///< Method::execute, one per execution.
};

/// The samples of every execution block of a dump (blocks named "Default", "Warmup" and "Eval"
/// left out, and the Inspector's own exclusions): kernel events (native_call_*), delegate calls
/// and the events delegates raise, and other timed events (user scopes, Optimizer::step), not
/// OPERATOR_CALL (its kernel stands for it) nor framework events. Events of several blocks with
/// the same chain, instruction and name are one operator.
RunSamples run_samples(const Inspector& inspector);

enum class Verdict : uint8_t {
  kUnchanged,    ///< Not significant, or a change too small to matter (CompareRow::practical).
  /// B slower: significant (CompareRow::significant) and its median above A's by more than
  /// both the relative threshold and the absolute floor.
  kRegression,
  kImprovement,  ///< B faster, likewise.
  kOnlyInA,
  kOnlyInB,
};
const char* to_string(Verdict v);

/// The default absolute floor of CompareOptions::min_change_ms, in microseconds (`--min-change-us`).
inline constexpr double kDefaultMinChangeUs = 5.0;

/// The default CompareOptions::drift_allowance (`--drift-allowance`): above how far the method
/// totals of back-to-back runs of one program moved on the busy 2-core test machine with nothing
/// changed (up to +133%, 95% within 46%: docs/store.md, "Drift between runs", measured by
/// bench/rerun_alarms.sh). A quiet machine measures far less; set it from its own reruns.
inline constexpr double kDefaultDriftAllowance = 1.5;

/// Fewest matched operators with positive medians from which the run's drift is estimated; with
/// fewer, d is 1 (no correction: one or two operators cannot tell their own change from the run's).
inline constexpr size_t kMinDriftOperators = 3;

/// Fewest such operators from which their between-run scatter (Comparison::operator_scatter) is
/// estimated; with fewer, operators are judged by their own samples alone.
inline constexpr size_t kMinScatterOperators = 5;

struct CompareOptions {
  double threshold = 0.05;  ///< Relative change of the median that counts (0.05 = 5%).
  /// Absolute change of the median that counts, milliseconds: both this and `threshold` must be
  /// exceeded. 0 disables the floor.
  double min_change_ms = kDefaultMinChangeUs / 1000;
  /// False-discovery rate of the operators' verdicts (Benjamini-Hochberg over the operators
  /// present in both runs) and significance level of the method total's test.
  double alpha = 0.05;
  /// Match operators by chain, instruction and name (the same program); otherwise by name and
  /// occurrence (the programs differ).
  bool same_program = true;
  /// Judge operators net of the run's drift (Comparison::drift). false: on the raw samples, as
  /// before issue 28 item 1 (for measuring what the correction buys).
  bool correct_drift = true;
  /// The method total is a regression (or improvement) only when its median also moved by more
  /// than this fraction, symmetrically on the log scale (1.5: more than 2.5 times A's median, or
  /// less than A's / 2.5): with one run per side, a uniform change of the whole run cannot be told
  /// from the drift between two runs. 0 judges it by `threshold` alone.
  double drift_allowance = kDefaultDriftAllowance;
};

struct CompareRow {
  std::string name;
  int32_t chain = 0, instruction = -1;  ///< A's position (B's when only in B).
  size_t n_a = 0, n_b = 0;
  double median_a_ms = 0, median_b_ms = 0;  ///< 0 when absent.
  double delta = 0;                    ///< (median_b_ms - median_a_ms) / median_a_ms; 0 when median_a_ms is 0.
  double change_ms = 0;                ///< median_b_ms - median_a_ms; 0 unless both are present.
  /// The change net of the run's drift d (Comparison::drift): median_b_ms / d against median_a_ms,
  /// relative and in milliseconds. Operators are judged by these; equal to delta and change_ms
  /// when d is 1.
  double net_delta = 0, net_change_ms = 0;
  /// Operators: B's samples divided by d against A's. Method total: the raw samples.
  /// effect > 0: B's samples tend to be larger (slower).
  MannWhitney test;
  /// Operators: the two-sided p of the net change log(median_b / (d median_a)) against the
  /// between-run scatter of all the operators' net changes (normal, scale
  /// log(1 + Comparison::operator_scatter)); 0 when that scatter is not estimated. 0 for the
  /// method total.
  double p_scatter = 0;
  /// Operators: max(test.p, p_scatter) (the change must stand out from the operator's own
  /// samples and from how much operators move between runs) adjusted for the operators of the
  /// comparison (Benjamini-Hochberg). The method total: its own test.p. 1 when a run lacks the
  /// operator.
  double p_adjusted = 1;
  bool significant = false;  ///< p_adjusted <= alpha.
  /// A change big enough to matter. Operators: |net_delta| > threshold and |net_change_ms| >=
  /// min_change_ms. Method total: |delta| > threshold, |change_ms| >= min_change_ms and
  /// |log(median_b_ms / median_a_ms)| > log(1 + drift_allowance).
  bool practical = false;
  Verdict verdict = Verdict::kUnchanged;
};

struct Comparison {
  std::vector<CompareRow> rows;  ///< A's operators in program order, then those only in B.
  CompareRow method;             ///< Method::execute ("method total").
  size_t regressions = 0, improvements = 0;
  size_t tests = 0;  ///< Operators present in both runs: the family the adjustment is over.
  /// The run-wide drift factor d, B over A: the median over the operators both runs have (with
  /// positive medians) of median_b / median_a, each operator counting once, so that one changed
  /// operator cannot move it. 1 when not estimated (drift_operators is 0).
  double drift = 1;
  /// Operators d was estimated from; 0 when it was not (fewer than kMinDriftOperators, or
  /// CompareOptions::correct_drift off).
  size_t drift_operators = 0;
  /// How far operators move apart between the runs once d is removed, as a relative change: the
  /// robust scale (1.4826 x the median absolute deviation) of their net log ratios
  /// log(median_b / (d median_a)), as exp(scale) - 1. 0 when not estimated (fewer than
  /// kMinScatterOperators).
  double operator_scatter = 0;
  /// True when the method total or any operator is a regression (significant and practical):
  /// `etscope compare` exits 1.
  bool gate_failed = false;
  /// Runs on each side: 1 and 1 from compare_runs; compare_run_sets' counts.
  size_t runs_a = 1, runs_b = 1;
};

Comparison compare_runs(const RunSamples& a, const RunSamples& b, const CompareOptions& options = {});

/// Several runs per side (`etscope compare A1,A2,A3,A4 B1,B2,B3,B4`). Operators: compare_runs of
/// each side's runs pooled (every run's samples of the operator together; matched as
/// `same_program` says). The method total, when both sides have at least two runs: the
/// Mann-Whitney U test of B's runs' medians against A's, its medians the median of the runs'
/// medians, n_a and n_b the runs, judged by `threshold`, `min_change_ms` and `drift_allowance`
/// (runs made back to back share the machine's state, so sets drift apart as single runs do:
/// sets of four unchanged runs moved by up to +72% on the busy test machine; on a quiet one
/// `--drift-allowance` can be set from its own reruns, down to 0). At level
/// 0.05 that needs four runs a side (the smallest exact p of 3 against 3 is 0.1, of 4 against 4
/// 0.029). With one run on a side, as compare_runs.
Comparison compare_run_sets(std::span<const RunSamples> a, std::span<const RunSamples> b, const CompareOptions& options = {});

/// Lines for people on what the drift did to a comparison made with `options`: the drift
/// between the runs and the operators' scatter (or why they were not estimated), and the method
/// total's change with the allowance it must pass (`etscope compare`'s header).
std::string drift_text(const Comparison& c, const CompareOptions& options);

/// Benjamini-Hochberg adjusted p-values ("q-values", as R's p.adjust(p, "BH") and
/// scipy.stats.false_discovery_control compute them): p_(i) m / i made monotone from the
/// largest down, capped at 1; in the input's order. Rejecting those <= q controls the FDR at q.
std::vector<double> benjamini_hochberg(std::span<const double> p);

/// Whether two runs time the same operators (name) at the same chains and instructions: the
/// test for CompareOptions::same_program when the programs themselves are not known.
bool same_operators(const RunSamples& a, const RunSamples& b);

// median(): etscope/core/stats.h.

}  // namespace etscope::inspect
