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
  const Comparison c = compare_runs(a, b, {.threshold = 0.05});
  REQUIRE(c.rows.size() == 4);
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

}  // namespace

TEST_CASE("issue 28: 160 unchanged operators raise no alarm although several have p < alpha", "[inspect][compare]") {
  std::mt19937 rng(28);
  RunSamples a, b;
  for (int32_t i = 0; i < 160; ++i) {
    OperatorSamples o;
    o.name = "native_call_op.out";
    o.instruction = i;
    o.occurrence = i;
    o.samples_ms = noise(rng, 20, 1.0);
    a.operators.push_back(o);
    o.samples_ms = noise(rng, 20, 1.0);
    b.operators.push_back(o);
  }
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
  // ... and a method total that moved 20% gates by itself.
  b.operators[0].samples_ms = a.operators[0].samples_ms;
  b.method_ms = noise(rng, 20, 1.2);
  const Comparison m = compare_runs(a, b);
  CHECK(m.regressions == 0);
  CHECK(m.method.verdict == Verdict::kRegression);
  CHECK(m.gate_failed);
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
