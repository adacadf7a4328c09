// Issue 28 item 1: `etscope compare` with its false-discovery control and effect floors still finds
// a real regression: a real fixture program is run through the runner as `etscope run
// --iterations 20 --store S` does (one warm-up, 20 timed executions, the ETDump read back as the
// store reads it), and a 20% slowdown planted in one operator's samples must be found.
#include <catch2/catch.hpp>
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "etscope/core/stats.h"
#include "etscope/formats/blob.h"
#include "etscope/inspect/compare.h"
#include "etscope/inspect/profile.h"
#include "etscope/runner/runner.h"
#include "testing/test_util.h"

using namespace etscope;
using etscope::median;
using etscope::testing::fixture;

namespace {

// One `etscope run PROGRAM --iterations 20` with a trace, its samples as the store keeps them.
inspect::RunSamples run_once(const std::string& program) {
  runner::RunnerOptions options;
  options.model = fixture(program);
  options.trace = true;
  auto loaded = runner::Runner::load(options);
  INFO((loaded.ok() ? "" : loaded.error().message()));
  REQUIRE(loaded.ok());
  runner::Runner& r = **loaded;
  REQUIRE(r.set_random_inputs(1).ok());
  REQUIRE(r.run(1, 20).ok());
  auto trace = r.trace_bytes();
  REQUIRE(trace.ok());
  inspect::ProfileFiles files;
  files.etdump_bytes = Blob::from_bytes(program, *trace);
  auto profile = inspect::open_profile(files);
  INFO((profile.ok() ? "" : profile.error().message()));
  REQUIRE(profile.ok());
  return inspect::run_samples(*profile->inspector);
}


}  // namespace

TEST_CASE("issue 28: a 20% slowdown planted in one operator of a rerun pair is found", "[inspect][compare][reruns]") {
  for (const char* program : {"xnnpack/xnn_cnn.pte", "simple_conv_xnnpack/simple_conv_xnnpack.pte"}) {
    INFO(program);
    // One run against itself with one operator 20% slower: what a real regression of that
    // operator looks like, without the drift between two runs (see docs/store.md) in the way.
    const inspect::RunSamples a = run_once(program);
    inspect::RunSamples b = a;
    // The slowest operator (tens of microseconds and more): a 20% change of it is well above the
    // absolute floor.
    auto slowest = std::max_element(b.operators.begin(), b.operators.end(), [](const auto& x, const auto& y) {
      return median(x.samples_ms) < median(y.samples_ms);
    });
    REQUIRE(slowest != b.operators.end());
    for (double& s : slowest->samples_ms) s *= 1.2;
    const inspect::Comparison c = inspect::compare_runs(a, b);
    const auto row = std::find_if(c.rows.begin(), c.rows.end(), [&](const inspect::CompareRow& r) {
      return r.name == slowest->name && r.instruction == slowest->instruction;
    });
    REQUIRE(row != c.rows.end());
    INFO(row->name << " " << row->median_a_ms << " -> " << row->median_b_ms << " ms, q " << row->p_adjusted);
    CHECK(row->verdict == inspect::Verdict::kRegression);
    CHECK(c.gate_failed);
  }
}
