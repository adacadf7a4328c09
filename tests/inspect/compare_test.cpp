// The Mann-Whitney U test against scipy.stats.mannwhitneyu (tests/data/stats/mannwhitneyu.json,
// written by scipy 1.17 from the samples' virtualenv), and the run comparison's verdicts.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <random>
#include <fstream>
#include <nlohmann/json.hpp>

#include "etscope/etdump/etdump_reader.h"
#include "etscope/core/stats.h"
#include "etscope/inspect/compare.h"
#include "etscope/inspect/inspector.h"
#include "testing/test_util.h"

using namespace etscope::inspect;
using etscope::median;

TEST_CASE("Mann-Whitney U equals scipy's on exact and asymptotic cases with and without ties", "[inspect][compare]") {
  std::ifstream in(std::string(etscope::testing::test_data_dir()) + "/stats/mannwhitneyu.json");
  REQUIRE(in.good());
  const auto ref = nlohmann::json::parse(in);
  REQUIRE(ref["cases"].size() >= 10);
  for (const auto& c : ref["cases"]) {
    INFO(c["name"].get<std::string>());
    const auto a = c["a"].get<std::vector<double>>();
    const auto b = c["b"].get<std::vector<double>>();
    const MannWhitney r = mann_whitney_u(a, b);
    CHECK(r.u_a == Approx(c["u"].get<double>()).margin(1e-9));
    CHECK(r.p == Approx(c["p"].get<double>()).epsilon(1e-9).margin(1e-15));
    CHECK(r.effect >= -1);
    CHECK(r.effect <= 1);
  }
}

TEST_CASE("median follows numpy", "[inspect][compare]") {
  CHECK(median({}) == 0);
  CHECK(median({3, 1, 2}) == 2);
  CHECK(median({4, 1, 3, 2}) == 2.5);
}

TEST_CASE("compare_runs flags significant changes beyond the threshold and matches operators", "[inspect][compare]") {
  auto op = [](const char* name, int32_t instruction, std::vector<double> s, int32_t occurrence = 0) {
    OperatorSamples o;
    o.name = name;
    o.instruction = instruction;
    o.occurrence = occurrence;
    o.samples_ms = std::move(s);
    return o;
  };
  std::vector<double> base, slow, jitter;
  for (int i = 0; i < 30; ++i) {
    base.push_back(1.0 + 0.01 * (i % 7));
    slow.push_back(1.2 + 0.01 * (i % 5));
    jitter.push_back(1.0 + 0.01 * ((i + 3) % 7));
  }
  RunSamples a{{op("native_call_conv.out", 0, base), op("native_call_relu.out", 1, base), op("native_call_add.out", 2, base)}, base};
  RunSamples b{{op("native_call_conv.out", 0, slow), op("native_call_relu.out", 1, jitter), op("native_call_mul.out", 3, base)}, slow};
  // Two matched operators: too few to estimate a drift, so they are judged on their samples. The
  // method total gates only beyond the drift allowance (one run per side), here 10%.
  const Comparison c = compare_runs(a, b, {.threshold = 0.05, .drift_allowance = 0.1});
  REQUIRE(c.rows.size() == 4);
  CHECK(c.drift_operators == 0);
  CHECK(c.rows[0].verdict == Verdict::kRegression);
  CHECK(c.rows[0].delta == Approx(0.2).margin(0.02));
  CHECK(c.rows[0].test.p < 1e-6);
  CHECK(c.rows[0].test.effect == 1.0);  // every B sample is slower
  CHECK(c.rows[1].verdict == Verdict::kUnchanged);
  CHECK(c.rows[2].verdict == Verdict::kOnlyInA);
  CHECK(c.rows[3].verdict == Verdict::kOnlyInB);
  CHECK(c.method.verdict == Verdict::kRegression);
  CHECK(c.regressions == 1);
  CHECK(c.gate_failed);
  // A 20% change under a 25% threshold is not flagged; the reverse direction is an improvement.
  CHECK_FALSE(compare_runs(a, b, {.threshold = 0.25}).gate_failed);
  const Comparison back = compare_runs(b, a, {.threshold = 0.05});
  CHECK(back.rows[0].verdict == Verdict::kImprovement);
  CHECK_FALSE(back.gate_failed);
  // Different programs: operators matched by name and occurrence, not instruction.
  RunSamples moved{{op("native_call_conv.out", 5, slow)}, slow};
  CHECK(compare_runs(a, moved, {.same_program = false}).rows[0].verdict == Verdict::kRegression);
  CHECK(compare_runs(a, moved, {.same_program = true}).rows[0].verdict == Verdict::kOnlyInA);
  CHECK(same_operators(a, a));
  CHECK(same_operators(a, RunSamples{{op("native_call_conv.out", 0, slow), op("native_call_relu.out", 1, slow), op("native_call_add.out", 2, slow)}, slow}));
  CHECK_FALSE(same_operators(a, b));
  CHECK_FALSE(same_operators(a, moved));
}

TEST_CASE("benjamini_hochberg equals R's p.adjust(p, \"BH\")", "[inspect][compare]") {
  const std::vector<double> p = {0.01, 0.04, 0.03, 0.005, 0.5};
  const std::vector<double> q = benjamini_hochberg(p);
  // p.adjust(c(0.01, 0.04, 0.03, 0.005, 0.5), "BH")
  const std::vector<double> want = {0.025, 0.05, 0.05, 0.025, 0.5};
  REQUIRE(q.size() == want.size());
  for (size_t i = 0; i < q.size(); ++i) CHECK(q[i] == Approx(want[i]).epsilon(1e-12));
  CHECK(benjamini_hochberg(std::vector<double>{}).empty());
  CHECK(benjamini_hochberg(std::vector<double>{0.9, 0.9, 0.9}) == std::vector<double>{0.9, 0.9, 0.9});
  CHECK(benjamini_hochberg(std::vector<double>{1e-9, 0.8})[0] == Approx(2e-9));
}

namespace {

// Samples of 1 ms +- 5%: deterministic (mt19937's output is specified; distributions are not).
std::vector<double> noise(std::mt19937& rng, size_t n, double centre) {
  std::vector<double> v;
  for (size_t i = 0; i < n; ++i) v.push_back(centre * (0.95 + 0.1 * static_cast<double>(rng()) / 4294967296.0));
  return v;
}

// Two runs of n operators "native_call_op.out" at instructions 0..n-1, 20 samples each, operator
// i centred on a_ms(i) in A and b_ms(i) in B.
template <typename A, typename B>
std::pair<RunSamples, RunSamples> paired_runs(std::mt19937& rng, int32_t n, A a_ms, B b_ms) {
  RunSamples a, b;
  for (int32_t i = 0; i < n; ++i) {
    OperatorSamples o;
    o.name = "native_call_op.out";
    o.instruction = i;
    o.occurrence = i;
    o.samples_ms = noise(rng, 20, a_ms(i));
    a.operators.push_back(o);
    o.samples_ms = noise(rng, 20, b_ms(i));
    b.operators.push_back(o);
  }
  return {a, b};
}

}  // namespace

TEST_CASE("issue 28: 160 unchanged operators raise no alarm although several have p < alpha", "[inspect][compare]") {
  std::mt19937 rng(28);
  auto [a, b] = paired_runs(rng, 160, [](int32_t) { return 1.0; }, [](int32_t) { return 1.0; });
  a.method_ms = noise(rng, 20, 160.0);
  b.method_ms = noise(rng, 20, 160.0);
  // Loose thresholds, so that only the multiple-testing control stands between noise and alarms.
  const Comparison c = compare_runs(a, b, {.threshold = 0, .min_change_ms = 0});
  size_t unadjusted = 0;
  for (const CompareRow& r : c.rows) unadjusted += r.test.p < 0.05;
  CHECK(unadjusted >= 3);  // what a per-operator test at alpha flags: about 5% of 160
  CHECK(c.tests == 160);
  CHECK(c.regressions + c.improvements == 0);
  CHECK_FALSE(c.gate_failed);
  for (const CompareRow& r : c.rows) CHECK(r.p_adjusted >= r.test.p);
}

TEST_CASE("issue 28: a change below the absolute floor is no regression however large in percent", "[inspect][compare]") {
  // Clamp (NC) #1 50 ns -> 145 ns +190%: significant, real in its samples, and too small to matter.
  std::mt19937 rng(1);
  OperatorSamples clamp;
  clamp.name = "Clamp (NC) #1";
  clamp.instruction = 3;
  RunSamples a{{clamp}, noise(rng, 20, 1.0)}, b{{clamp}, noise(rng, 20, 1.0)};
  a.operators[0].samples_ms = noise(rng, 20, 50e-6);
  b.operators[0].samples_ms = noise(rng, 20, 145e-6);
  const Comparison c = compare_runs(a, b);
  REQUIRE(c.rows.size() == 1);
  const CompareRow& r = c.rows[0];
  CHECK(r.significant);
  CHECK_FALSE(r.practical);
  CHECK(r.change_ms == Approx(95e-6).epsilon(0.1));
  CHECK(r.verdict == Verdict::kUnchanged);
  CHECK_FALSE(c.gate_failed);
  // With the floor at 0.05 us it counts; so does a slowdown of 20% of a 100 us operator.
  CHECK(compare_runs(a, b, {.min_change_ms = 0.05e-3}).rows[0].verdict == Verdict::kRegression);
  a.operators[0].samples_ms = noise(rng, 20, 0.1);
  b.operators[0].samples_ms = noise(rng, 20, 0.12);
  CHECK(compare_runs(a, b).rows[0].verdict == Verdict::kRegression);
  CHECK(compare_runs(a, b).gate_failed);
  // ... and a method total that moved 20% gates by itself beyond a drift allowance under 20%, not
  // within the default one (back-to-back reruns on a busy machine move it further).
  b.operators[0].samples_ms = a.operators[0].samples_ms;
  b.method_ms = noise(rng, 20, 1.2);
  const Comparison m = compare_runs(a, b, {.drift_allowance = 0.1});
  CHECK(m.regressions == 0);
  CHECK(m.method.verdict == Verdict::kRegression);
  CHECK(m.gate_failed);
  const Comparison within = compare_runs(a, b);
  CHECK(within.method.significant);
  CHECK_FALSE(within.method.practical);
  CHECK(within.method.verdict == Verdict::kUnchanged);
  CHECK_FALSE(within.gate_failed);
}

TEST_CASE("run_samples are milliseconds whatever unit the Inspector reports in", "[inspect][compare]") {
  auto dump = std::make_shared<const etscope::etdump::EtDumpFile>(
      etscope::etdump::EtDumpReader::open(etscope::testing::fixture("cifar10/cifar10.etdp")).value());
  InspectorOptions ms, us;
  us.target = TimeScale::kUs;
  const RunSamples a = run_samples(Inspector::build(dump, nullptr, nullptr, ms).value());
  const RunSamples b = run_samples(Inspector::build(dump, nullptr, nullptr, us).value());
  REQUIRE_FALSE(a.method_ms.empty());
  REQUIRE(a.method_ms.size() == b.method_ms.size());
  for (size_t i = 0; i < a.method_ms.size(); ++i) CHECK(b.method_ms[i] == Approx(a.method_ms[i]).epsilon(1e-12));
  REQUIRE(a.operators.size() == b.operators.size());
  for (size_t i = 0; i < a.operators.size(); ++i) {
    REQUIRE(a.operators[i].samples_ms.size() == b.operators[i].samples_ms.size());
    for (size_t j = 0; j < a.operators[i].samples_ms.size(); ++j) {
      CHECK(b.operators[i].samples_ms[j] == Approx(a.operators[i].samples_ms[j]).epsilon(1e-12));
    }
  }
  // A method of a few milliseconds, not thousands.
  CHECK(median(b.method_ms) < 1000);
}

namespace {

// Twelve operators of 0.1 to 1.2 ms, 20 executions each, B's samples times `drift` (and `slow`
// times more for operator `slowed`); each side's own +-5% noise. Method total: the operators' sum.
std::pair<RunSamples, RunSamples> drifted_runs(double drift, int32_t slowed = -1, double slow = 1.0) {
  std::mt19937 rng(281);
  auto [a, b] = paired_runs(rng, 12, [](int32_t i) { return 0.1 * (i + 1); },
                            [&](int32_t i) { return 0.1 * (i + 1) * drift * (i == slowed ? slow : 1.0); });
  for (RunSamples* r : {&a, &b}) {
    auto& total = r->method_ms;
    total.assign(20, 0.0);
    for (const OperatorSamples& o : r->operators) {
      for (size_t k = 0; k < 20; ++k) total[k] += o.samples_ms[k];
    }
  }
  return {a, b};
}

}  // namespace

TEST_CASE("issue 28: a uniform drift of the whole run raises no operator alarm and is reported", "[inspect][compare]") {
  const auto [a, b] = drifted_runs(1.08);
  const Comparison c = compare_runs(a, b);
  CHECK(c.drift == Approx(1.08).margin(0.02));
  CHECK(c.drift_operators == 12);
  CHECK(c.operator_scatter > 0);
  CHECK(c.operator_scatter < 0.05);
  CHECK(c.regressions + c.improvements == 0);
  for (const CompareRow& r : c.rows) {
    CHECK(r.delta > 0.03);  // every operator moved
    CHECK(std::abs(r.net_delta) < 0.05);
  }
  // The method total moved 8%: within the allowance, so no verdict from one run per side.
  CHECK(c.method.delta == Approx(0.08).margin(0.02));
  CHECK(c.method.significant);
  CHECK(c.method.verdict == Verdict::kUnchanged);
  CHECK_FALSE(c.gate_failed);
  // What the correction prevents: judged on the raw samples, every operator large enough is a
  // "regression"; with a small allowance the method total is one too.
  const Comparison raw = compare_runs(a, b, {.correct_drift = false, .drift_allowance = 0});
  CHECK(raw.drift == 1);
  CHECK(raw.drift_operators == 0);
  CHECK(raw.regressions >= 6);
  CHECK(raw.method.verdict == Verdict::kRegression);
  CHECK(compare_runs(a, b, {.drift_allowance = 0.05}).method.verdict == Verdict::kRegression);
}

TEST_CASE("issue 28: one operator 20% slower under a uniform drift is that operator's regression and no other's", "[inspect][compare]") {
  const auto [a, b] = drifted_runs(1.08, 5, 1.2);
  const Comparison c = compare_runs(a, b);
  CHECK(c.drift == Approx(1.08).margin(0.02));  // the slowed operator does not move the drift
  REQUIRE(c.rows.size() == 12);
  for (const CompareRow& r : c.rows) {
    INFO("instruction " << r.instruction);
    if (r.instruction == 5) {
      CHECK(r.verdict == Verdict::kRegression);
      CHECK(r.net_delta == Approx(0.2).margin(0.04));
      CHECK(r.delta == Approx(1.08 * 1.2 - 1).margin(0.04));
      CHECK(r.p_scatter < 1e-4);
    } else {
      CHECK(r.verdict == Verdict::kUnchanged);
    }
  }
  CHECK(c.regressions == 1);
  CHECK(c.improvements == 0);
  CHECK(c.gate_failed);
  // The same slowdown in the other direction of drift, and with no drift at all.
  CHECK(compare_runs(drifted_runs(0.92, 5, 1.2).first, drifted_runs(0.92, 5, 1.2).second).regressions == 1);
  const auto [a1, b1] = drifted_runs(1.0, 5, 1.2);
  const Comparison still = compare_runs(a1, b1);
  CHECK(still.regressions == 1);
  CHECK(still.rows[5].verdict == Verdict::kRegression);
}

TEST_CASE("issue 28: operators that scatter between runs as much as a change raise no alarm", "[inspect][compare]") {
  // Half the operators 30% slower in B, half unchanged: no run-wide factor explains both, and
  // with one run per side no operator's change stands out from how far they scatter.
  std::mt19937 rng(282);
  const auto [a, b] = paired_runs(rng, 12, [](int32_t) { return 0.5; }, [](int32_t i) { return i % 2 ? 0.65 : 0.5; });
  const Comparison c = compare_runs(a, b);
  CHECK(c.operator_scatter > 0.1);
  CHECK(c.regressions + c.improvements == 0);
  for (const CompareRow& r : c.rows) CHECK(r.test.p < 0.05);  // each sample set alone differs
}

TEST_CASE("issue 28: the drift needs three operators and the scatter five", "[inspect][compare]") {
  std::mt19937 rng(283);
  auto runs = [&](int32_t n) {
    const auto [a, b] = paired_runs(rng, n, [](int32_t) { return 1.0; }, [](int32_t) { return 1.1; });
    return compare_runs(a, b);
  };
  const Comparison two = runs(2);
  CHECK(two.drift == 1);
  CHECK(two.drift_operators == 0);
  CHECK(two.regressions == 2);  // one or two operators cannot tell their change from the run's
  const Comparison three = runs(3);
  CHECK(three.drift == Approx(1.1).margin(0.03));
  CHECK(three.drift_operators == 3);
  CHECK(three.operator_scatter == 0);
  CHECK(three.regressions == 0);
  CHECK(runs(5).operator_scatter > 0);
}

TEST_CASE("several runs a side test the method total on the runs' medians, drift and all", "[inspect][compare]") {
  // Four runs a side, each drifted by the machine by up to 10%; B's runs all 20% slower, or not.
  auto side = [](std::vector<double> drifts, double change) {
    std::vector<RunSamples> runs;
    for (double d : drifts) runs.push_back(drifted_runs(d * change).second);
    return runs;
  };
  const std::vector<RunSamples> a = side({1.0, 1.1, 0.95, 1.05}, 1.0);
  const Comparison same = compare_run_sets(a, side({1.02, 0.97, 1.08, 1.0}, 1.0));
  CHECK(same.runs_a == 4);
  CHECK(same.runs_b == 4);
  CHECK(same.method.n_a == 4);  // runs
  CHECK(same.method.verdict == Verdict::kUnchanged);
  CHECK(same.regressions + same.improvements == 0);
  CHECK_FALSE(same.gate_failed);
  // A uniform 20% slowdown of everything: no operator stands out of the drift. Sets made back to
  // back drift apart as runs do, so the method total needs the drift allowance too: under the
  // default (150%) the test alone is no verdict; with an allowance a quiet machine measured
  // (10%), it is.
  const std::vector<RunSamples> slow = side({1.02, 0.97, 1.08, 1.0}, 1.2);
  const Comparison busy = compare_run_sets(a, slow);
  CHECK(busy.method.test.p == Approx(2.0 / 70).epsilon(1e-9));  // every B run above every A run, exact
  CHECK(busy.method.delta == Approx(0.2).margin(0.08));
  CHECK(busy.method.verdict == Verdict::kUnchanged);
  CHECK_FALSE(busy.gate_failed);
  const Comparison uniform = compare_run_sets(a, slow, {.drift_allowance = 0.1});
  CHECK(uniform.method.verdict == Verdict::kRegression);
  CHECK(uniform.regressions == 0);
  CHECK(uniform.gate_failed);
  CHECK(compare_runs(a[0], slow[0]).method.verdict == Verdict::kUnchanged);
  CHECK_THAT(drift_text(uniform, {}), Catch::Contains("medians of 4 and 4 runs"));
  CHECK_THAT(drift_text(busy, {}), Catch::Contains("--drift-allowance"));
  // One run on a side: as compare_runs.
  const Comparison one = compare_run_sets(std::span(a).first(1), std::span(slow).first(1));
  CHECK(one.method.verdict == compare_runs(a[0], slow[0]).method.verdict);
  CHECK(one.method.n_a == 20);
}
