#include "etscope/inspect/compare.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <tuple>

#include "etscope/core/event_names.h"
#include "etscope/core/stats.h"

namespace etscope::inspect {
namespace {

// Upper tail P(U >= u) of the Mann-Whitney U statistic for sample sizes m and n with no ties:
// the counts of U are the coefficients of the Gaussian binomial [m+n choose m]_q, built as
// prod_{i=1..m} (1 - q^(n+i)) / (1 - q^i) (each division exact).
double exact_sf(int64_t u, size_t m, size_t n) {
  if (m > n) std::swap(m, n);
  const size_t top = m * n;
  std::vector<double> c(top + 1, 0.0);
  c[0] = 1;
  size_t degree = 0;
  for (size_t i = 1; i <= m; ++i) {
    // Multiply by (1 - q^(n+i)).
    const size_t shift = n + i;
    const size_t new_degree = std::min(top, degree + shift);
    for (size_t k = new_degree; k >= shift && k <= new_degree; --k) c[k] -= c[k - shift];
    degree = new_degree;
    // Divide by (1 - q^i): c[k] += c[k - i].
    for (size_t k = i; k <= degree; ++k) c[k] += c[k - i];
  }
  double total = 0, tail = 0;
  for (size_t k = 0; k <= top; ++k) {
    total += c[k];
    if (static_cast<int64_t>(k) >= u) tail += c[k];
  }
  return total > 0 ? tail / total : 1.0;
}

double normal_sf(double z) { return 0.5 * std::erfc(z / std::sqrt(2.0)); }

}  // namespace

MannWhitney mann_whitney_u(std::span<const double> a, std::span<const double> b) {
  MannWhitney r;
  const size_t n1 = a.size(), n2 = b.size();
  if (n1 == 0 || n2 == 0) return r;
  // Ranks of the pooled samples, ties given their average rank; tie group sizes for the variance.
  std::vector<std::pair<double, int>> pooled;
  pooled.reserve(n1 + n2);
  for (double x : a) pooled.emplace_back(x, 0);
  for (double x : b) pooled.emplace_back(x, 1);
  std::sort(pooled.begin(), pooled.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
  double rank_sum_a = 0, tie_term = 0;
  bool ties = false;
  for (size_t i = 0; i < pooled.size();) {
    size_t j = i;
    while (j < pooled.size() && pooled[j].first == pooled[i].first) ++j;
    const double rank = (static_cast<double>(i + 1) + static_cast<double>(j)) / 2.0;  // ranks i+1..j
    const auto t = static_cast<double>(j - i);
    if (j - i > 1) ties = true;
    tie_term += t * t * t - t;
    for (size_t k = i; k < j; ++k) {
      if (pooled[k].second == 0) rank_sum_a += rank;
    }
    i = j;
  }
  const double dn1 = static_cast<double>(n1), dn2 = static_cast<double>(n2);
  const double u1 = rank_sum_a - dn1 * (dn1 + 1) / 2;
  const double u2 = dn1 * dn2 - u1;
  const double u = std::max(u1, u2);
  r.u_a = u1;
  r.effect = 2 * u1 / (dn1 * dn2) - 1;
  r.exact = !ties && (n1 <= 8 || n2 <= 8);
  double p;
  if (r.exact) {
    p = 2 * exact_sf(static_cast<int64_t>(std::llround(u)), n1, n2);
  } else {
    const double n = dn1 + dn2;
    const double s = std::sqrt(dn1 * dn2 / 12.0 * ((n + 1) - tie_term / (n * (n - 1))));
    const double numerator = u - dn1 * dn2 / 2 - 0.5;
    const double z = s > 0 ? numerator / s : (numerator > 0 ? INFINITY : -INFINITY);
    p = 2 * normal_sf(z);
  }
  r.p = std::clamp(p, 0.0, 1.0);
  return r;
}

RunSamples run_samples(const Inspector& inspector) {
  RunSamples out;
  // Samples are milliseconds whatever unit the Inspector reports in (cycles have no rate: as is).
  const TimeScale target = inspector.options().target;
  const double to_ms = target == TimeScale::kCycles ? 1.0 : units_per_second(TimeScale::kMs) / units_per_second(target);
  auto append = [to_ms](std::vector<double>& to, const std::vector<double>& from) {
    for (double v : from) to.push_back(v * to_ms);
  };
  std::map<std::tuple<int32_t, int32_t, std::string>, size_t> index;
  std::map<std::string, int32_t> occurrences;
  for (const EventBlock& block : inspector.blocks()) {
    if (block.name == events::kBlockDefault || block.name == events::kBlockWarmup || block.name == events::kBlockEval) continue;
    for (const Event& ev : block.events) {
      if (!ev.perf) continue;
      if (ev.name == events::kMethodExecute) {
        append(out.method_ms, ev.perf->raw);
        continue;
      }
      if (ev.is_framework() || ev.is_operator_call()) continue;
      const auto key = std::make_tuple(ev.chain, ev.instruction_id, ev.name);
      auto [it, inserted] = index.emplace(key, out.operators.size());
      if (inserted) {
        OperatorSamples s;
        s.name = ev.name;
        s.chain = ev.chain;
        s.instruction = ev.instruction_id;
        if (ev.debug_handles && !ev.debug_handles->empty()) s.debug_handle = ev.debug_handles->front();
        s.occurrence = occurrences[ev.name]++;
        out.operators.push_back(std::move(s));
      }
      append(out.operators[it->second].samples_ms, ev.perf->raw);
    }
  }
  return out;
}

const char* to_string(Verdict v) {
  switch (v) {
    case Verdict::kUnchanged: return "unchanged";
    case Verdict::kRegression: return "regression";
    case Verdict::kImprovement: return "improvement";
    case Verdict::kOnlyInA: return "only in A";
    case Verdict::kOnlyInB: return "only in B";
  }
  return "?";
}

namespace {

// The medians and raw changes of one operator; its test waits for the drift, its verdict for
// the adjustment.
CompareRow describe(const std::string& name, const std::vector<double>& a, const std::vector<double>& b) {
  CompareRow row;
  row.name = name;
  row.n_a = a.size();
  row.n_b = b.size();
  row.median_a_ms = median(a);
  row.median_b_ms = median(b);
  row.delta = row.median_a_ms > 0 ? (row.median_b_ms - row.median_a_ms) / row.median_a_ms : 0;
  if (row.n_a > 0 && row.n_b > 0) row.change_ms = row.median_b_ms - row.median_a_ms;
  return row;
}

// The test of B's samples divided by `drift` against A's, and the changes net of the drift.
void test(CompareRow& row, const std::vector<double>& a, const std::vector<double>& b, double drift) {
  std::vector<double> net(b);
  if (drift != 1) {
    for (double& x : net) x /= drift;
  }
  // B's samples first: a positive effect means B tends to be slower.
  row.test = mann_whitney_u(net, a);
  row.p_adjusted = row.test.p;
  if (row.n_a > 0 && row.n_b > 0) {
    row.net_change_ms = row.median_b_ms / drift - row.median_a_ms;
    row.net_delta = row.median_a_ms > 0 ? row.net_change_ms / row.median_a_ms : 0;
  }
}

// The verdict of a row whose p_adjusted is final, on a change that counts above `threshold`.
void decide(CompareRow& row, double change_ms, double delta, double threshold, const CompareOptions& o) {
  if (row.n_a == 0 || row.n_b == 0) return;
  row.significant = row.p_adjusted <= o.alpha;
  row.practical = std::abs(delta) > threshold && std::abs(change_ms) >= o.min_change_ms;
  if (row.significant && row.practical) row.verdict = change_ms > 0 ? Verdict::kRegression : Verdict::kImprovement;
}

struct Drift {
  double factor = 1;
  size_t operators = 0;
  double scale = 0;  // of the net log ratios: log(1 + Comparison::operator_scatter)
};

// The run-wide drift factor (Comparison::drift): the median over the operators both runs have
// of median_b / median_a (on the log scale), each operator counting once. One changed operator
// cannot move a median of three or more. Not weighted by time (bench/rerun_alarms.sh measured
// both): on a busy machine long operators (milliseconds, preempted in proportion to their
// length) drift by more than short ones, and a time-weighted centre made the many short ones
// look faster; a centre that every operator moves by one vote, together with the scatter below,
// lets the planted slowdown through more often and raises as few alarms. The scatter is the
// median absolute deviation of the log ratios from that centre, times 1.4826 (a normal
// distribution's standard deviation).
Drift estimate_drift(const std::vector<CompareRow>& rows) {
  std::vector<double> ratios;
  for (const CompareRow& r : rows) {
    if (r.n_a == 0 || r.n_b == 0 || !(r.median_a_ms > 0) || !(r.median_b_ms > 0)) continue;
    ratios.push_back(std::log(r.median_b_ms / r.median_a_ms));
  }
  Drift d;
  if (ratios.size() < kMinDriftOperators) return d;
  const double centre = median(ratios);
  d.factor = std::exp(centre);
  d.operators = ratios.size();
  if (ratios.size() >= kMinScatterOperators) {
    for (double& x : ratios) x = std::abs(x - centre);
    d.scale = 1.4826 * median(ratios);
  }
  return d;
}

// The method total's row from samples `a` and `b` (raw: no drift correction), a verdict only
// beyond `allowance`, symmetrically on the log scale (1.5 passes totals between 1/2.5 and 2.5
// times A's); then the gate.
void judge_method(Comparison& c, const std::vector<double>& a, const std::vector<double>& b, const CompareOptions& o, double allowance) {
  CompareRow& m = c.method;
  m = describe(std::string(events::kMethodExecute), a, b);
  test(m, a, b, 1.0);
  if (c.drift != 1 && m.n_a > 0 && m.n_b > 0 && m.median_a_ms > 0) {
    m.net_change_ms = m.median_b_ms / c.drift - m.median_a_ms;
    m.net_delta = m.net_change_ms / m.median_a_ms;
  }
  decide(m, m.change_ms, m.delta, o.threshold, o);
  if (m.practical && m.median_a_ms > 0 && m.median_b_ms > 0 && !(std::abs(std::log(m.median_b_ms / m.median_a_ms)) > std::log1p(allowance))) {
    m.practical = false;
    m.verdict = Verdict::kUnchanged;
  }
  c.gate_failed = c.regressions > 0 || m.verdict == Verdict::kRegression;
}

}  // namespace

Comparison compare_runs(const RunSamples& a, const RunSamples& b, const CompareOptions& o) {
  Comparison c;
  auto key_of = [&](const OperatorSamples& s) {
    return o.same_program ? std::make_tuple(s.chain, s.instruction, s.name) : std::make_tuple(-1, s.occurrence, s.name);
  };
  std::map<std::tuple<int32_t, int32_t, std::string>, const OperatorSamples*> in_b;
  for (const OperatorSamples& s : b.operators) in_b.emplace(key_of(s), &s);
  std::vector<bool> used(b.operators.size(), false);
  // Each row's samples, for the tests once the drift is known.
  std::vector<std::pair<const std::vector<double>*, const std::vector<double>*>> samples;
  const std::vector<double> none;
  for (const OperatorSamples& s : a.operators) {
    auto it = in_b.find(key_of(s));
    CompareRow row;
    if (it == in_b.end()) {
      row = describe(s.name, s.samples_ms, {});
      row.verdict = Verdict::kOnlyInA;
      samples.emplace_back(&s.samples_ms, &none);
    } else {
      row = describe(s.name, s.samples_ms, it->second->samples_ms);
      used[static_cast<size_t>(it->second - b.operators.data())] = true;
      samples.emplace_back(&s.samples_ms, &it->second->samples_ms);
    }
    row.chain = s.chain;
    row.instruction = s.instruction;
    c.rows.push_back(std::move(row));
  }
  for (size_t i = 0; i < b.operators.size(); ++i) {
    if (used[i]) continue;
    CompareRow row = describe(b.operators[i].name, {}, b.operators[i].samples_ms);
    row.verdict = Verdict::kOnlyInB;
    row.chain = b.operators[i].chain;
    row.instruction = b.operators[i].instruction;
    samples.emplace_back(&none, &b.operators[i].samples_ms);
    c.rows.push_back(std::move(row));
  }
  if (o.correct_drift) {
    const Drift d = estimate_drift(c.rows);
    c.drift = d.factor;
    c.drift_operators = d.operators;
    c.operator_scatter = std::expm1(d.scale);
  }
  for (size_t i = 0; i < c.rows.size(); ++i) {
    CompareRow& r = c.rows[i];
    test(r, *samples[i].first, *samples[i].second, c.drift);
    // An operator's net change against the other operators' between-run scatter: with one run
    // per side this is the only measure of how much an operator moves between runs by itself.
    if (c.drift_operators > 0 && r.n_a > 0 && r.n_b > 0 && r.median_a_ms > 0 && r.median_b_ms > 0 && c.operator_scatter > 0) {
      const double z = std::abs(std::log(r.median_b_ms / (r.median_a_ms * c.drift))) / std::log1p(c.operator_scatter);
      r.p_scatter = std::clamp(2 * normal_sf(z), 0.0, 1.0);
    } else {
      r.p_scatter = 0;
    }
  }
  // One family: every operator both runs have.
  std::vector<size_t> family;
  std::vector<double> p;
  for (size_t i = 0; i < c.rows.size(); ++i) {
    if (c.rows[i].n_a == 0 || c.rows[i].n_b == 0) continue;
    family.push_back(i);
    p.push_back(std::max(c.rows[i].test.p, c.rows[i].p_scatter));
  }
  const std::vector<double> q = benjamini_hochberg(p);
  for (size_t k = 0; k < family.size(); ++k) c.rows[family[k]].p_adjusted = q[k];
  for (CompareRow& r : c.rows) decide(r, r.net_change_ms, r.net_delta, o.threshold, o);
  c.tests = family.size();
  for (const CompareRow& r : c.rows) {
    c.regressions += r.verdict == Verdict::kRegression;
    c.improvements += r.verdict == Verdict::kImprovement;
  }
  // The method total: raw samples (its change is the drift's estimate too), judged beyond the
  // drift allowance.
  judge_method(c, a.method_ms, b.method_ms, o, o.drift_allowance);
  return c;
}

namespace {

// One side's runs as one: each operator's samples of every run together, in the first run's
// operator order (then those the first lacks), and every run's method totals.
RunSamples pool(std::span<const RunSamples> runs, bool same_program) {
  RunSamples out;
  std::map<std::tuple<int32_t, int32_t, std::string>, size_t> index;
  for (const RunSamples& r : runs) {
    for (const OperatorSamples& s : r.operators) {
      const auto key = same_program ? std::make_tuple(s.chain, s.instruction, s.name) : std::make_tuple(-1, s.occurrence, s.name);
      auto [it, inserted] = index.emplace(key, out.operators.size());
      if (inserted) {
        out.operators.push_back(s);
      } else {
        auto& to = out.operators[it->second].samples_ms;
        to.insert(to.end(), s.samples_ms.begin(), s.samples_ms.end());
      }
    }
    out.method_ms.insert(out.method_ms.end(), r.method_ms.begin(), r.method_ms.end());
  }
  return out;
}

std::vector<double> method_medians(std::span<const RunSamples> runs) {
  std::vector<double> m;
  for (const RunSamples& r : runs) {
    if (!r.method_ms.empty()) m.push_back(median(r.method_ms));
  }
  return m;
}

}  // namespace

Comparison compare_run_sets(std::span<const RunSamples> a, std::span<const RunSamples> b, const CompareOptions& o) {
  Comparison c = compare_runs(pool(a, o.same_program), pool(b, o.same_program), o);
  c.runs_a = a.size();
  c.runs_b = b.size();
  const std::vector<double> ma = method_medians(a), mb = method_medians(b);
  // Runs made back to back share the machine's state, so two sets drift apart as two runs do
  // (measured: sets of four unchanged runs separated by up to +72% on the busy test machine):
  // the test on the runs' medians must also pass the drift allowance.
  if (ma.size() >= 2 && mb.size() >= 2) judge_method(c, ma, mb, o, o.drift_allowance);
  return c;
}

std::string drift_text(const Comparison& c, const CompareOptions& o) {
  char buf[512];
  std::string out;
  if (!o.correct_drift) {
    out = "drift between the runs: not corrected (operators are judged on their own samples)";
  } else if (c.drift_operators == 0) {
    std::snprintf(buf, sizeof buf, "drift between the runs: not estimated (fewer than %zu operators in both runs): operators are judged on their own samples",
                  kMinDriftOperators);
    out = buf;
  } else {
    std::snprintf(buf, sizeof buf, "drift between the runs: %+.1f%% (the median change of %zu operators); operators are judged net of it (net)",
                  (c.drift - 1) * 100, c.drift_operators);
    out = buf;
    if (c.drift_operators >= kMinScatterOperators) {
      std::snprintf(buf, sizeof buf, "\nand against how far operators scatter around it between the runs: %.1f%% (p_scatter)", c.operator_scatter * 100);
      out += buf;
    }
  }
  if (c.runs_a >= 2 && c.runs_b >= 2) {
    std::snprintf(buf, sizeof buf,
                  "\nmethod total %+.1f%%: tested on the medians of %zu and %zu runs, a verdict only beyond +%g%% or %+.1f%% (--drift-allowance): "
                  "sets made one after the other drift apart as runs do",
                  c.method.delta * 100, c.runs_a, c.runs_b, o.drift_allowance * 100, (1 / (1 + o.drift_allowance) - 1) * 100);
    out += buf;
  } else if (c.method.n_a > 0 && c.method.n_b > 0) {
    std::snprintf(buf, sizeof buf, "\nmethod total %+.1f%%: a verdict only beyond +%g%% or %+.1f%% (--drift-allowance): one run per side cannot tell a uniform change from drift",
                  c.method.delta * 100, o.drift_allowance * 100, (1 / (1 + o.drift_allowance) - 1) * 100);
    out += buf;
  }
  return out;
}

std::vector<double> benjamini_hochberg(std::span<const double> p) {
  const size_t m = p.size();
  std::vector<size_t> order(m);
  for (size_t i = 0; i < m; ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t x, size_t y) { return p[x] < p[y]; });
  std::vector<double> q(m, 1.0);
  double running = 1.0;
  for (size_t rank = m; rank >= 1; --rank) {
    const size_t i = order[rank - 1];
    running = std::min(running, p[i] * static_cast<double>(m) / static_cast<double>(rank));
    q[i] = std::clamp(running, 0.0, 1.0);
  }
  return q;
}

bool same_operators(const RunSamples& a, const RunSamples& b) {
  std::set<std::tuple<int32_t, int32_t, std::string>> ka, kb;
  for (const OperatorSamples& o : a.operators) ka.emplace(o.chain, o.instruction, o.name);
  for (const OperatorSamples& o : b.operators) kb.emplace(o.chain, o.instruction, o.name);
  return ka == kb;
}

}  // namespace etscope::inspect
