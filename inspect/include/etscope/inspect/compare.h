// Comparing two profiled runs: the per-operator samples of a run, the Mann-Whitney U test (as
// scipy.stats.mannwhitneyu computes it, two-sided), and the operator-by-operator comparison that
// `etscope compare` prints and gates CI on. The store records samples; every number derived from
// them is defined here.
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
  kUnchanged,    ///< Not significant, or within the threshold.
  kRegression,   ///< B slower: significant (p < alpha) and its median more than threshold above A's.
  kImprovement,  ///< B faster, likewise.
  kOnlyInA,
  kOnlyInB,
};
const char* to_string(Verdict v);

struct CompareOptions {
  double threshold = 0.05;  ///< Relative change of the median that counts (0.05 = 5%).
  double alpha = 0.05;      ///< Significance level of the Mann-Whitney U test.
  /// Match operators by chain, instruction and name (the same program); otherwise by name and
  /// occurrence (the programs differ).
  bool same_program = true;
};

struct CompareRow {
  std::string name;
  int32_t chain = 0, instruction = -1;  ///< A's position (B's when only in B).
  size_t n_a = 0, n_b = 0;
  double median_a = 0, median_b = 0;   ///< Milliseconds; 0 when absent.
  double delta = 0;                    ///< (median_b - median_a) / median_a; 0 when median_a is 0.
  MannWhitney test;                    ///< effect > 0: B's samples tend to be larger (slower).
  Verdict verdict = Verdict::kUnchanged;
};

struct Comparison {
  std::vector<CompareRow> rows;  ///< A's operators in program order, then those only in B.
  CompareRow method;             ///< Method::execute ("method total").
  size_t regressions = 0, improvements = 0;
  /// True when the method total or any operator is a regression: `etscope compare` exits 1.
  bool gate_failed = false;
};

Comparison compare_runs(const RunSamples& a, const RunSamples& b, const CompareOptions& options = {});

/// Whether two runs time the same operators (name) at the same chains and instructions: the
/// test for CompareOptions::same_program when the programs themselves are not known.
bool same_operators(const RunSamples& a, const RunSamples& b);

/// Median with numpy's rule (the mean of the middle two for an even count); 0 for none.
double median(std::vector<double> samples);

}  // namespace etscope::inspect
