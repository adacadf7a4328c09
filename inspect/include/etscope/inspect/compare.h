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
};

struct CompareRow {
  std::string name;
  int32_t chain = 0, instruction = -1;  ///< A's position (B's when only in B).
  size_t n_a = 0, n_b = 0;
  double median_a_ms = 0, median_b_ms = 0;  ///< 0 when absent.
  double delta = 0;                    ///< (median_b_ms - median_a_ms) / median_a_ms; 0 when median_a_ms is 0.
  double change_ms = 0;                ///< median_b_ms - median_a_ms; 0 unless both are present.
  MannWhitney test;                    ///< effect > 0: B's samples tend to be larger (slower).
  /// test.p adjusted for the operators of the comparison (Benjamini-Hochberg); the method total's
  /// own p. 1 when a run lacks the operator.
  double p_adjusted = 1;
  bool significant = false;  ///< p_adjusted <= alpha.
  /// |delta| > threshold and |change_ms| >= min_change_ms: a change big enough to matter.
  bool practical = false;
  Verdict verdict = Verdict::kUnchanged;
};

struct Comparison {
  std::vector<CompareRow> rows;  ///< A's operators in program order, then those only in B.
  CompareRow method;             ///< Method::execute ("method total").
  size_t regressions = 0, improvements = 0;
  size_t tests = 0;  ///< Operators present in both runs: the family the adjustment is over.
  /// True when the method total or any operator is a regression (significant and practical):
  /// `etscope compare` exits 1.
  bool gate_failed = false;
};

Comparison compare_runs(const RunSamples& a, const RunSamples& b, const CompareOptions& options = {});

/// Benjamini-Hochberg adjusted p-values ("q-values", as R's p.adjust(p, "BH") and
/// scipy.stats.false_discovery_control compute them): p_(i) m / i made monotone from the
/// largest down, capped at 1; in the input's order. Rejecting those <= q controls the FDR at q.
std::vector<double> benjamini_hochberg(std::span<const double> p);

/// Whether two runs time the same operators (name) at the same chains and instructions: the
/// test for CompareOptions::same_program when the programs themselves are not known.
bool same_operators(const RunSamples& a, const RunSamples& b);

// median(): etscope/core/stats.h.

}  // namespace etscope::inspect
