// Engine fidelity (engine_fidelity.h): two hand-made profiles of one program, as the two engines
// record them, joined node by node; Spearman's rank correlation as scipy defines it; outputs
// compared element by element.
#include <catch2/catch.hpp>

#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "etscope/etdump/etdump_reader.h"
#include "etscope/etdump/etdump_writer.h"
#include "etscope/inspect/engine_fidelity.h"
#include "testing/test_util.h"

using namespace etscope;
using namespace etscope::inspect;

namespace {

// One timed event of a hand-made execution: name, instruction, delegate-raised, microseconds.
struct Ev {
  const char* name;
  uint32_t instruction;
  bool delegate;
  double us;
};

// `runs` executions of `events` (each run's times scaled by 1 + run / 100, so that the medians are
// the middle run's), recorded as the runner records them: a Warmup block, then Execute blocks, each
// with Method::execute around everything.
Inspector profile(const std::vector<Ev>& events, int runs, double execute_us) {
  etdump::EtDumpWriter writer({});
  uint64_t t = 1'000'000;
  for (int r = -1; r < runs; ++r) {
    writer.create_event_block(r < 0 ? "Warmup" : "Execute");
    const double scale = 1.0 + (r < 0 ? 0 : r) / 100.0;
    const uint64_t start = t;
    for (const Ev& e : events) {
      const auto ns = static_cast<uint64_t>(e.us * 1000 * scale);
      writer.record_timed_event(e.name, 0, e.instruction, e.delegate, -1, t, t + ns);
      t += ns;
    }
    t = start + static_cast<uint64_t>(execute_us * 1000 * scale);
    writer.record_timed_event("Method::execute", -1, 0, false, -1, start, t);
    t += 1000;
  }
  auto bytes = writer.finish();
  REQUIRE(bytes.ok());
  auto dump = etdump::EtDumpReader::read(etscope::testing::blob_of(*bytes, "hand.etdp"));
  REQUIRE(dump.ok());
  auto in = Inspector::build(std::make_shared<const etdump::EtDumpFile>(std::move(*dump)), nullptr, nullptr, {});
  REQUIRE(in.ok());
  return std::move(*in);
}

const FidelityRow* find(const std::vector<FidelityRow>& rows, const std::string& name, int32_t instruction) {
  for (const FidelityRow& r : rows) {
    if (r.name == name && r.instruction == instruction) return &r;
  }
  return nullptr;
}

}  // namespace

TEST_CASE("engine fidelity joins nodes by instruction and name and sorts by the time apart", "[inspect][fidelity]") {
  // Instruction 0: a kernel (OPERATOR_CALL wraps it: not a node); 1: an XNNPACK delegate call with
  // three operators (the call is a container); 2: a kernel only etscope's engine names this way.
  const std::vector<Ev> etscope_events{
      {"native_call_permute_copy.out", 0, false, 10}, {"OPERATOR_CALL", 0, false, 11},
      {"Convolution (NHWC, F32) IGEMM #1", 1, true, 300}, {"Convolution (NHWC, F32) IGEMM #2", 1, true, 50},
      {"Max Pooling (NHWC, F32) #1", 1, true, 20},       {"DELEGATE_CALL", 1, false, 380},
      {"native_call_gelu.out", 2, false, 40},             {"OPERATOR_CALL", 2, false, 41},
  };
  const std::vector<Ev> executorch_events{
      {"native_call_permute_copy.out", 0, false, 20}, {"OPERATOR_CALL", 0, false, 22},
      {"Convolution (NHWC, F32) IGEMM #1", 1, true, 100}, {"Convolution (NHWC, F32) IGEMM #2", 1, true, 65},
      {"Max Pooling (NHWC, F32) #1", 1, true, 0},         {"DELEGATE_CALL", 1, false, 170},
      {"OPERATOR_CALL", 2, false, 30},  // no kernel event: the OPERATOR_CALL is the node
  };
  const Inspector a = profile(etscope_events, 5, 500), b = profile(executorch_events, 5, 250);
  auto f = engine_fidelity(a, b);
  REQUIRE(f.ok());
  CHECK(f->etscope.runs == 5);  // the Warmup block is left out
  CHECK(f->executorch.runs == 5);
  CHECK(f->etscope.source == RunTimeSource::kMethodExecute);
  CHECK(f->etscope.run_ms == Approx(0.5 * 1.02));  // the median run scales by 1.02
  CHECK(f->executorch.run_ms == Approx(0.25 * 1.02));
  REQUIRE(f->run_ratio.has_value());
  CHECK(*f->run_ratio == Approx(2.0).epsilon(1e-3));

  // Matched nodes, by |difference| largest first: conv #1 (+200 us), max pooling (+20 us), conv #2
  // (-15 us), permute (-10 us); each scaled by the median run's 1.02.
  REQUIRE(f->rows.size() == 4);
  CHECK(f->rows[0].name == "Convolution (NHWC, F32) IGEMM #1");
  CHECK(f->rows[0].kind == events::EventClass::kDelegateOp);
  CHECK(f->rows[0].difference_ms == Approx(0.2 * 1.02).epsilon(1e-3));
  REQUIRE(f->rows[0].ratio.has_value());
  CHECK(*f->rows[0].ratio == Approx(3.0).epsilon(1e-3));
  CHECK(*f->rows[0].etscope_share == Approx(300.0 / 500).epsilon(1e-3));
  CHECK(*f->rows[0].executorch_share == Approx(100.0 / 250).epsilon(1e-3));
  CHECK(f->rows[1].name == "Max Pooling (NHWC, F32) #1");
  CHECK_FALSE(f->rows[1].ratio.has_value());  // ExecuTorch's median is 0
  CHECK(f->rows[2].name == "Convolution (NHWC, F32) IGEMM #2");
  CHECK(f->rows[2].difference_ms == Approx(-0.015 * 1.02).epsilon(1e-3));
  CHECK(f->rows[3].name == "native_call_permute_copy.out");
  for (const FidelityRow& r : f->rows) CHECK(r.name != "OPERATOR_CALL");

  // Nodes one engine has alone, and the delegate call kept apart as a container.
  REQUIRE(f->only_etscope.size() == 1);
  CHECK(f->only_etscope[0].name == "native_call_gelu.out");
  CHECK_FALSE(f->only_etscope[0].executorch_share.has_value());
  CHECK(f->only_etscope[0].in_etscope);
  CHECK_FALSE(f->only_etscope[0].in_executorch);
  CHECK(f->rows[1].in_executorch);  // present with a median of 0
  REQUIRE(f->only_executorch.size() == 1);
  CHECK(f->only_executorch[0].name == "OPERATOR_CALL");
  CHECK(f->only_executorch[0].instruction == 2);
  REQUIRE(f->delegate_calls.size() == 1);
  CHECK(f->delegate_calls[0].name == "DELEGATE_CALL");
  CHECK(*f->delegate_calls[0].ratio == Approx(380.0 / 170).epsilon(1e-3));
  CHECK(f->etscope.nodes_ms == Approx((10 + 300 + 50 + 20 + 40) * 1.02 / 1000).epsilon(1e-3));

  // The medians' ranks in program order: etscope (10, 300, 50, 20) -> (1, 4, 3, 2) against
  // ExecuTorch (20, 100, 65, 0) -> (2, 4, 3, 1): 1 - 6 * 2 / (4 * 15).
  REQUIRE(f->spearman.has_value());
  CHECK(*f->spearman == Approx(0.8));
  CHECK(find(f->rows, "native_call_gelu.out", 2) == nullptr);

  // The same run against itself: everything matches, ratio 1, perfect rank correlation.
  auto same = engine_fidelity(a, a);
  REQUIRE(same.ok());
  CHECK(same->only_etscope.empty());
  CHECK(same->only_executorch.empty());
  CHECK(*same->spearman == Approx(1.0));
  for (const FidelityRow& r : same->rows) CHECK(*r.ratio == 1.0);
}

TEST_CASE("a delegate call that raised no events is a node of its own", "[inspect][fidelity]") {
  const Inspector a = profile({{"DELEGATE_CALL", 0, false, 80}}, 3, 100), b = profile({{"DELEGATE_CALL", 0, false, 40}}, 3, 50);
  auto f = engine_fidelity(a, b);
  REQUIRE(f.ok());
  REQUIRE(f->rows.size() == 1);
  CHECK(f->rows[0].kind == events::EventClass::kDelegateCall);
  CHECK(f->delegate_calls.empty());
  CHECK_FALSE(f->spearman.has_value());  // one pair has no rank correlation
}

TEST_CASE("Spearman rank correlation averages tied ranks as scipy does", "[inspect][fidelity]") {
  // scipy.stats.spearmanr(a, b).statistic, worked by hand: Pearson of the average ranks
  const std::vector<double> a{1, 2, 3, 4, 5}, b{5, 6, 7, 8, 7};
  CHECK(*spearman_correlation(a, b) == Approx(0.8207826816681233));
  const std::vector<double> c{10, 20, 30}, d{3, 2, 1};
  CHECK(*spearman_correlation(c, d) == Approx(-1.0));
  const std::vector<double> e{1, 1, 2, 3}, f{2, 1, 4, 4};
  CHECK(*spearman_correlation(e, f) == Approx(8.0 / 9.0));  // 0.8888888888888888
  const std::vector<double> flat{2, 2, 2};
  CHECK_FALSE(spearman_correlation(flat, c).has_value());
  CHECK_FALSE(spearman_correlation(a, c).has_value());  // sizes differ
}

TEST_CASE("outputs compare by tolerance for floats and exactly for integers", "[inspect][fidelity]") {
  auto bytes = [](const auto& v) {
    std::vector<uint8_t> out(v.size() * sizeof(v[0]));
    std::memcpy(out.data(), v.data(), out.size());
    return out;
  };
  const std::vector<int64_t> shape{1, 4};
  const std::vector<float> x{1.0f, -2.0f, 0.5f, 0.0f}, y{1.0f, -2.0001f, 0.5f, 1e-7f};
  auto f = compare_outputs(ScalarType::kFloat, shape, bytes(x), ScalarType::kFloat, shape, bytes(y), 1e-3, 1e-5);
  REQUIRE(f.ok());
  CHECK(f->comparable);
  CHECK(f->floating);
  CHECK(f->count == 4);
  CHECK(f->differing == 2);
  CHECK(f->max_abs_error == Approx(1e-4).epsilon(1e-2));
  CHECK(f->max_rel_error == Approx(1.0));  // 0 against 1e-7
  CHECK(f->within_tolerance);
  auto tight = compare_outputs(ScalarType::kFloat, shape, bytes(x), ScalarType::kFloat, shape, bytes(y), 0, 0);
  CHECK_FALSE(tight->within_tolerance);

  const std::vector<int8_t> q{1, 2, 3, -4}, r{1, 2, 4, -4};
  auto i = compare_outputs(ScalarType::kChar, shape, bytes(q), ScalarType::kChar, shape, bytes(q), 1e-3, 1e-5);
  CHECK(i->differing == 0);
  CHECK(i->within_tolerance);
  auto j = compare_outputs(ScalarType::kChar, shape, bytes(q), ScalarType::kChar, shape, bytes(r), 1, 1);
  CHECK_FALSE(j->floating);
  CHECK(j->differing == 1);
  CHECK_FALSE(j->within_tolerance);  // integers are exact whatever the tolerance

  const std::vector<float> nan{std::nanf(""), 1, 2, 3}, inf{std::nanf(""), 1, 2, INFINITY};
  auto n = compare_outputs(ScalarType::kFloat, shape, bytes(nan), ScalarType::kFloat, shape, bytes(inf), 1e-3, 1e-5);
  CHECK(n->differing == 1);
  CHECK(n->nonfinite_mismatches == 1);
  CHECK(n->max_abs_error == 0);
  CHECK_FALSE(n->within_tolerance);

  const std::vector<int64_t> other{4, 1};
  auto s = compare_outputs(ScalarType::kFloat, shape, bytes(x), ScalarType::kFloat, other, bytes(x), 1e-3, 1e-5);
  REQUIRE(s.ok());
  CHECK_FALSE(s->comparable);
  CHECK(s->problem == "etscope's is f32[1,4], ExecuTorch's f32[4,1]");
  auto short_bytes = compare_outputs(ScalarType::kFloat, shape, bytes(q), ScalarType::kFloat, shape, bytes(x), 1e-3, 1e-5);
  CHECK_FALSE(short_bytes.ok());
}
