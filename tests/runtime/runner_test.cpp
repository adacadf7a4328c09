// runner::Runner: the library behind `etscope run` (inputs, timed executions, bundled checks of every
// method, outputs, the trace).
#include <catch2/catch.hpp>

#include <algorithm>

#include "etscope/etdump/etdump_reader.h"
#include "etscope/formats/npy.h"
#include "etscope/formats/pte_reader.h"
#include "etscope/core/stats.h"
#include "etscope/core/text.h"
#include "etscope/core/version.h"
#include "etscope/inspect/engine_identity.h"
#include "etscope/inspect/debug_buffer_planner.h"
#include "etscope/inspect/inspector.h"
#include "etscope/runner/runner.h"
#include "testing/test_json.h"
#include "testing/test_util.h"

using etscope::testing::fixture;
using etscope::testing::real_artifact;
using etscope::testing::temp_dir;
using namespace etscope;

namespace {

std::unique_ptr<runner::Runner> load(const std::string& model, runner::RunnerOptions options = {}) {
  options.model = model;
  auto r = runner::Runner::load(options);
  INFO((r.ok() ? std::string() : r.error().message()));
  REQUIRE(r.ok());
  return std::move(r).value();
}

}  // namespace

TEST_CASE("timed executions: statistics are libinspect's percentiles of the samples", "[runner]") {
  auto runner = load(fixture("cifar10/cifar10.pte"));
  REQUIRE(runner->set_random_inputs(7).ok());
  auto timing = runner->run(1, 5);
  REQUIRE(timing.ok());
  REQUIRE(timing->samples.size() == 5);
  std::vector<double> sorted = timing->samples;
  std::sort(sorted.begin(), sorted.end());
  CHECK(timing->min == sorted.front());
  CHECK(timing->max == sorted.back());
  CHECK(timing->p50 == percentile_sorted(sorted, 50));
  CHECK(timing->p90 == percentile_sorted(sorted, 90));
  CHECK_FALSE(runner->run(0, 0).ok());
}

TEST_CASE("inputs from .npy files, ones, and the ETRecord's representative inputs", "[runner]") {
  auto runner = load(fixture("cifar10/cifar10.pte"));
  REQUIRE(runner->set_inputs_from_files({fixture("cifar10/cifar10.input0.npy")}).ok());
  REQUIRE(runner->run(0, 1).ok());
  const std::string dir = temp_dir("runner_outputs");
  auto written = runner->write_outputs(dir);
  REQUIRE(written.ok());
  CHECK(*written == runner->method().num_outputs());
  auto out = read_npy(dir + "/output_0.npy");
  REQUIRE(out.ok());
  CHECK(out->shape == std::vector<int64_t>{4, 10});

  REQUIRE(runner->set_inputs_from_etrecord(fixture("cifar10/cifar10.etrecord")).ok());
  REQUIRE(runner->run(0, 1).ok());
  REQUIRE(runner->set_ones_inputs().ok());

  // Wrong count and wrong shape name the file and both shapes.
  auto count = runner->set_inputs_from_files({});
  REQUIRE_FALSE(count.ok());
  CHECK(count.error().message().find("takes 1 inputs, 0 input files given") != std::string::npos);
  auto shape = runner->set_inputs_from_files({fixture("simple_conv/simple_conv.input0.npy")});
  REQUIRE_FALSE(shape.ok());
  CHECK(shape.error().message().find("simple_conv.input0.npy: f32[1,3,32,32] does not fit input 0 (f32[4,3,32,32])") !=
        std::string::npos);
}

TEST_CASE("output summaries give each tensor output's dtype, sizes, count and first values", "[runner]") {
  auto runner = load(real_artifact("add.pte"));
  REQUIRE(runner->set_ones_inputs().ok());
  REQUIRE(runner->run(0, 1).ok());
  const auto summaries = runner->output_summaries(6);
  REQUIRE(summaries.size() == runner->method().num_outputs());
  REQUIRE(summaries[0].has_value());
  const runner::TensorSummary& out = *summaries[0];
  CHECK(out.dtype == ScalarType::kFloat);
  CHECK(out.sizes == std::vector<int64_t>{1});
  CHECK(out.count == 1);
  REQUIRE(out.stats.has_value());
  CHECK(out.stats->first_values == std::vector<double>{2.0});  // 1 + 1
  CHECK(out.stats->finite_count == 1);
  CHECK(out.stats->mean == 2.0);
  // first_n bounds the first values, never the statistics.
  auto cifar = load(fixture("cifar10/cifar10.pte"));
  REQUIRE(cifar->set_ones_inputs().ok());
  REQUIRE(cifar->run(0, 1).ok());
  const auto logits = cifar->output_summaries(3);
  REQUIRE(logits.at(0).has_value());
  CHECK(logits[0]->sizes == std::vector<int64_t>{4, 10});
  CHECK(logits[0]->count == 40);
  REQUIRE(logits[0]->stats.has_value());
  CHECK(logits[0]->stats->first_values.size() == 3);
  CHECK(logits[0]->stats->count == 40);
}

TEST_CASE("bundled cases of every method are checked, not only forward's", "[runner]") {
  auto runner = load(fixture("models/two_methods.bpte"));
  auto results = runner->check_bundled(std::nullopt, 1e-3, 1e-5);
  REQUIRE(results.ok());
  size_t forward = 0, encode = 0;
  for (const auto& r : *results) {
    CHECK(r.passed);
    forward += r.method == "forward";
    encode += r.method == "encode";
  }
  CHECK(forward == 2);
  CHECK(encode == 2);
  // One case of the runner's own method.
  auto one = runner->check_bundled(1, 1e-3, 1e-5);
  REQUIRE(one.ok());
  REQUIRE(one->size() == 1);
  CHECK((*one)[0].index == 1);
  CHECK_FALSE(runner->check_bundled(9, 1e-3, 1e-5).ok());
}

TEST_CASE("the trace records warm-up executions in Warmup blocks", "[runner]") {
  runner::RunnerOptions options;
  options.trace = true;
  auto runner = load(real_artifact("add.pte"), options);
  REQUIRE(runner->set_ones_inputs().ok());
  REQUIRE(runner->run(2, 3).ok());
  const std::string dir = temp_dir("runner_trace");
  auto files = runner->write_trace(dir + "/t.etdp", "");
  REQUIRE(files.ok());
  auto dump = etdump::EtDumpReader::open(dir + "/t.etdp");
  REQUIRE(dump.ok());
  std::vector<std::string> names;
  for (const auto& b : dump->blocks) names.push_back(b.name);
  CHECK(names == std::vector<std::string>{"Default", "Warmup", "Warmup", "Execute", "Execute", "Execute"});
  // The Default block ends with the engine marker: which engine (and version) made the timings.
  const etdump::RunBlock& load_block = dump->blocks[0];
  REQUIRE(load_block.event_count > 0);
  const etdump::Event& marker = dump->events[load_block.first_event + load_block.event_count - 1];
  CHECK(dump->name_of(marker) == "etscope::engine:etscope " + std::string(etscope_version()));
  CHECK(dump->is_marker(marker));
  CHECK(inspect::dump_engine(*dump) == inspect::EngineIdentity{"etscope", runner->engine_version()});
  // A runner without a tracer has nothing to write.
  auto plain = load(real_artifact("add.pte"));
  CHECK_FALSE(plain->write_trace(dir + "/u.etdp", "").ok());
}

TEST_CASE("transposed convolutions in every configuration match ExecuTorch's runtime", "[runner][conformance]") {
  // samples/export/export_conv_transpose.py: ConvTranspose1d/2d with strides, padding,
  // output_padding, dilation, groups (depthwise too), 1x1 kernels, no bias, float64; each case's
  // expected output is what ExecuTorch 1.5.1's runtime computed.
  const nlohmann::json manifest = etscope::testing::load_json(fixture("conv_transpose/manifest.json"));
  REQUIRE(manifest["programs"].size() >= 13);
  for (const auto& [name, info] : manifest["programs"].items()) {
    INFO(name << " " << info["config"].get<std::string>());
    auto runner = load(fixture("conv_transpose/" + name + ".bpte"));
    auto results = runner->check_bundled(std::nullopt, 0, 1e-5);
    REQUIRE(results.ok());
    REQUIRE(results->size() == 2);
    for (const auto& r : *results) {
      CHECK(r.passed);
      CHECK(r.max_abs_error < 1e-5);
    }
  }
}

TEST_CASE("issue 28: the debug buffer is set up apart from load, at the size the memory plan gives", "[runner][debug_buffer]") {
  for (const char* stem : {"simple_conv/simple_conv", "cifar10/cifar10", "mobilenet_v2/mobilenet_v2"}) {
    INFO(stem);
    for (DebugLevel level : {DebugLevel::kIntermediateOutputs, DebugLevel::kProgramOutputs}) {
      runner::RunnerOptions options;
      options.trace = true;
      options.debug_level = level;
      auto runner = load(fixture(std::string(stem) + ".pte"), options);
      CHECK(runner->debug_buffer_bytes() == 0);  // nothing allocated while loading
      const ExecutionPlan* plan = runner->program().find_plan(runner->method_name());
      REQUIRE(plan != nullptr);
      const uint64_t needed = inspect::DebugBufferPlanner::runner_bytes(*plan, level, 3);
      REQUIRE(runner->reserve_debug_buffer(needed).ok());
      CHECK(runner->debug_buffer_bytes() == needed);
      CHECK(runner->debug_setup_ms() >= 0);
      REQUIRE(runner->set_random_inputs(1).ok());
      REQUIRE(runner->run(1, 2).ok());
      const std::string dir = temp_dir("runner_debug_size");
      auto files = runner->write_trace(dir + "/t.etdp", dir + "/t.bin");
      INFO((files.ok() ? std::string() : files.error().message()));
      REQUIRE(files.ok());  // every value of the three executions fit
      // The plan is exact up to where the buffer starts relative to a 64-byte boundary.
      CHECK(files->debug_bytes <= needed);
      CHECK(files->debug_bytes + 2 * 64 > needed);
    }
  }
}

TEST_CASE("the debug buffer counts the values etscope logs inside XNNPACK delegate calls and holds every one", "[runner][debug_buffer][xnnpack]") {
  for (const char* stem : {"simple_conv_xnnpack/simple_conv_xnnpack", "xnnpack/xnn_cnn", "xnnpack/xnn_qcnn", "xnnpack/xnn_transformer",
                           "xnnpack/xnn_partial", "xnnpack_dynamic/xnn_dyn_cnn"}) {
    INFO(stem);
    runner::RunnerOptions options;
    options.trace = true;
    options.debug_level = DebugLevel::kIntermediateOutputs;
    auto runner = load(fixture(std::string(stem) + ".pte"), options);
    const ExecutionPlan* plan = runner->program().find_plan(runner->method_name());
    REQUIRE(plan != nullptr);
    const std::vector<uint64_t> inside = runner->method().delegate_logged_bytes();
    CHECK_FALSE(inside.empty());
    const uint64_t plan_only = inspect::DebugBufferPlanner::runner_bytes(*plan, options.debug_level, 3);
    const uint64_t needed = inspect::DebugBufferPlanner::runner_bytes(*plan, options.debug_level, 3, inside);
    CHECK(needed > plan_only);
    REQUIRE(runner->reserve_debug_buffer(needed).ok());
    REQUIRE(runner->set_random_inputs(1).ok());
    REQUIRE(runner->run(1, 2).ok());
    const std::string dir = temp_dir("runner_debug_delegate");
    auto files = runner->write_trace(dir + "/t.etdp", dir + "/t.bin");
    INFO((files.ok() ? std::string() : files.error().message()));
    REQUIRE(files.ok());  // nothing ran out
    CHECK(files->debug_bytes <= needed);
    // Exact for static shapes (up to the buffer's start relative to a 64-byte boundary); a dynamic
    // graph's values are counted at their declared shapes, the most they log.
    if (std::string(stem).find("dynamic") == std::string::npos) CHECK(files->debug_bytes + 2 * 64 > needed);
  }
}

TEST_CASE("issue 28: a debug buffer for fewer executions runs out and the error names its size", "[runner][debug_buffer]") {
  runner::RunnerOptions options;
  options.trace = true;
  options.debug_level = DebugLevel::kIntermediateOutputs;
  auto runner = load(fixture("cifar10/cifar10.pte"), options);
  const uint64_t one = inspect::DebugBufferPlanner::runner_bytes(*runner->program().find_plan("forward"), options.debug_level, 1);
  REQUIRE(runner->reserve_debug_buffer(one).ok());
  REQUIRE(runner->set_random_inputs(1).ok());
  REQUIRE(runner->run(0, 2).ok());
  CHECK_FALSE(runner->reserve_debug_buffer(one).ok());  // values were already logged into it
  const std::string dir = temp_dir("runner_debug_small");
  auto files = runner->write_trace(dir + "/t.etdp", dir + "/t.bin");
  REQUIRE_FALSE(files.ok());
  CHECK_THAT(files.error().message(), Catch::Contains("the " + bytes_text(one) + " debug buffer ran out"));
  // Past the memory limit, the set-up is refused naming both sizes.
  options.max_memory = uint64_t{64} << 20;
  auto limited = load(fixture("cifar10/cifar10.pte"), options);
  auto refused = limited->reserve_debug_buffer(uint64_t{128} << 20);
  REQUIRE_FALSE(refused.ok());
  CHECK_THAT(refused.error().message(), Catch::Contains("(" + bytes_text(uint64_t{128} << 20) + ") is larger than the memory limit (" +
                                                        bytes_text(uint64_t{64} << 20) + ")"));
}

TEST_CASE("the runner names the engine that executes the method, and the engine runs as its method does", "[runner][engine]") {
  CHECK(std::string(runner::engine_name(runner::EngineKind::kEtscope)) == "etscope");
  CHECK(std::string(runner::engine_description(runner::EngineKind::kEtscope)).find("not ExecuTorch's runtime") != std::string::npos);
  auto parsed = runner::parse_engine("etscope");
  REQUIRE(parsed.ok());
  CHECK(*parsed == runner::EngineKind::kEtscope);
  auto unknown = runner::parse_engine("executorch-typo");
  REQUIRE_FALSE(unknown.ok());
  CHECK(unknown.error().message() == "unknown engine 'executorch-typo' (engines: executorch, etscope)");

  auto r = load(fixture("cifar10/cifar10.pte"));
  CHECK(r->engine() == runner::EngineKind::kEtscope);
  CHECK(r->engine_version() == etscope_version());
  REQUIRE(r->set_ones_inputs().ok());
  REQUIRE(r->run(0, 1).ok());
  const std::vector<uint8_t> via_runner(static_cast<const uint8_t*>(r->method().output(0).tensor->data()),
                                        static_cast<const uint8_t*>(r->method().output(0).tensor->data()) +
                                            r->method().output(0).tensor->nbytes());

  // The same program and inputs through the engine interface directly.
  auto program = PteReader::open(fixture("cifar10/cifar10.pte"));
  REQUIRE(program.ok());
  auto engine = runner::load_etscope_engine(*program, "forward", {});
  REQUIRE(engine.ok());
  runner::Engine& e = **engine;
  CHECK(e.kind() == runner::EngineKind::kEtscope);
  CHECK(e.version() == etscope_version());
  REQUIRE(e.method() != nullptr);
  REQUIRE(e.num_inputs() == r->method().num_inputs());
  for (size_t i = 0; i < e.num_inputs(); ++i) {
    const TensorImpl& t = *e.input(i).tensor;
    REQUIRE(t.dtype() == ScalarType::kFloat);
    const std::vector<float> ones(static_cast<size_t>(t.numel()), 1.0f);
    REQUIRE(e.set_input(i, {reinterpret_cast<const uint8_t*>(ones.data()), ones.size() * sizeof(float)}, {}).ok());
  }
  REQUIRE(e.execute("Execute").ok());
  REQUIRE(e.num_outputs() == r->method().num_outputs());
  const TensorImpl& out = *e.output(0).tensor;
  const std::vector<uint8_t> via_engine(static_cast<const uint8_t*>(out.data()), static_cast<const uint8_t*>(out.data()) + out.nbytes());
  CHECK(via_engine == via_runner);
}
