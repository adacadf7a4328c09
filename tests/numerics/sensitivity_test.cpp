// Quantization sensitivity (numerics/sensitivity.h, runtime's quantization emulation,
// `etscope debug --sensitivity`) on int8 programs ExecuTorch's exporter wrote.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "etscope/formats/npy.h"
#include "etscope/numerics/sensitivity.h"
#include "testing/test_util.h"

namespace etscope::numerics {
namespace {

using testing::fixture;

std::unique_ptr<runner::Runner> load_runner(const std::string& model, bool emulate) {
  runner::RunnerOptions o;
  o.model = model;
  o.emulate_quantization = emulate;
  auto r = runner::Runner::load(o);
  REQUIRE(r.ok());
  return std::move(r).value();
}

std::vector<OutputTensor> run_outputs(runner::Runner& r, const std::string& input) {
  REQUIRE(r.set_inputs_from_files({input}).ok());
  REQUIRE(r.execute_once("Execute").ok());
  return snapshot_outputs(r);
}

OutputTensor npy_output(const std::string& path) {
  auto a = read_npy(path);
  REQUIRE(a.ok());
  return OutputTensor{a->dtype, a->shape, a->data};
}

double sqnr(const std::vector<OutputTensor>& ref, const std::vector<OutputTensor>& out) {
  auto s = outputs_sqnr(ref, out);
  REQUIRE(s.ok());
  return *s;
}

}  // namespace

TEST_CASE("an emulating method rounds each int8 layer's output only while its quantizer is on", "[numerics][sensitivity]") {
  const std::string base = std::string(testing::fixture_dir()) + "/xnnpack/xnn_qcnn";
  const std::vector<OutputTensor> executorch{npy_output(base + ".output0.npy")};
  auto integer = load_runner(base + ".pte", false);
  const std::vector<OutputTensor> as_run = run_outputs(*integer, base + ".input0.npy");
  CHECK(integer->method().quantizers().empty());
  CHECK(integer->method().set_quantizers({}).error().code() == ErrorCode::kInvalidArgument);

  auto emu = load_runner(base + ".pte", true);
  const std::vector<runtime::QuantizerSite> sites = emu->method().quantizers();
  // The input's quantization, two convolutions and the linear head; max pooling, transposes
  // and the reshape pass their producer's values on and have none of their own.
  REQUIRE(sites.size() == 4);
  CHECK(sites[0].op.rfind("Convert (NC)", 0) == 0);
  CHECK(sites[1].op.find("Convolution (NHWC, QC8)") != std::string::npos);
  CHECK(sites[3].op.find("Fully Connected") != std::string::npos);
  for (const auto& s : sites) CHECK(!s.dynamic);

  // Every quantizer on: ExecuTorch's integer result, bit for bit.
  const std::vector<OutputTensor> all_on = run_outputs(*emu, base + ".input0.npy");
  CHECK(std::isinf(sqnr(executorch, as_run)));
  CHECK(std::isinf(sqnr(executorch, all_on)));
  // Every one off: a float computation from the dequantized weights, measurably elsewhere.
  REQUIRE(emu->method().set_quantizers(std::vector<uint8_t>(sites.size(), 0)).ok());
  const std::vector<OutputTensor> all_off = run_outputs(*emu, base + ".input0.npy");
  const double off_db = sqnr(executorch, all_off);
  CHECK(off_db < 45);
  // Back on: the same as before (nothing of the float run stays behind).
  REQUIRE(emu->method().set_quantizers(std::vector<uint8_t>(sites.size(), 1)).ok());
  CHECK(sqnr(all_on, run_outputs(*emu, base + ".input0.npy")) == Approx(std::numeric_limits<double>::infinity()));
  CHECK(emu->method().set_quantizers(std::vector<uint8_t>(3, 1)).error().code() == ErrorCode::kInvalidArgument);
}

TEST_CASE("a dynamically quantized linear's quantizer is its input rows' rounding", "[numerics][sensitivity]") {
  for (const char* name : {"xnnpack/xnn_dqlinear", "xnnpack/xnn_4bit"}) {
    INFO(name);
    const std::string base = testing::fixture_dir() + "/" + name;
    auto emu = load_runner(base + ".pte", true);
    const auto sites = emu->method().quantizers();
    REQUIRE(sites.size() == 2);
    for (const auto& s : sites) {
      CHECK(s.dynamic);
      CHECK(s.op.find("Fully Connected") != std::string::npos);
      CHECK(s.event_debug_handle != s.delegate_debug_handle);  // the Convert's, then the layer's
    }
    // With the rounding on, ExecuTorch's output (its integer kernels) bit for bit; off, farther.
    const std::vector<OutputTensor> executorch{npy_output(base + ".output0.npy")};
    CHECK(std::isinf(sqnr(executorch, run_outputs(*emu, base + ".input0.npy"))));
    REQUIRE(emu->method().set_quantizers(std::vector<uint8_t>(2, 0)).ok());
    CHECK(sqnr(executorch, run_outputs(*emu, base + ".input0.npy")) < 60);
  }
}

TEST_CASE("emulation with every quantizer on is ExecuTorch's int8 result, one off changes only what it reaches",
          "[numerics][sensitivity]") {
  // Programs where XNNPACK's integer rounding (ties in pools, fixed-point adds) differs from a
  // float fake-quant emulation by whole output steps: the emulation keeps the integer kernels
  // wherever values stay on their grid.
  for (const char* name : {"xnnq_resnet_block", "xnnq_mbv2_pool", "xnnq_mixed", "xnnq_clamps"}) {
    INFO(name);
    const std::string base = testing::fixture_dir() + "/xnnpack_quantized/" + name;
    const std::vector<OutputTensor> executorch{npy_output(base + ".output0.npy")};
    auto emu = load_runner(base + ".pte", true);
    const size_t n = emu->method().quantizers().size();
    REQUIRE(n > 2);
    CHECK(std::isinf(sqnr(executorch, run_outputs(*emu, base + ".input0.npy"))));
    // The last layer's quantizer off: the output moves off ExecuTorch's grid, but by less than
    // with every quantizer off.
    std::vector<uint8_t> on(n, 1);
    on.back() = 0;
    REQUIRE(emu->method().set_quantizers(on).ok());
    const double last_off = sqnr(executorch, run_outputs(*emu, base + ".input0.npy"));
    REQUIRE(emu->method().set_quantizers(std::vector<uint8_t>(n, 0)).ok());
    const double all_off = sqnr(executorch, run_outputs(*emu, base + ".input0.npy"));
    CHECK(std::isfinite(last_off));
    CHECK(all_off < last_off);
  }
}

TEST_CASE("quantization_sensitivity ranks layers by the SQNR they recover and suggests the fewest to keep in float",
          "[numerics][sensitivity]") {
  const std::string base = std::string(testing::fixture_dir()) + "/xnnpack/xnn_qcnn";
  runner::RunnerOptions o;
  o.model = base + ".pte";
  const std::vector<InputSet> set_inputs{{"input0", [&](runner::Runner& r) { return r.set_inputs_from_files({base + ".input0.npy"}); }}};
  SensitivityOptions so;
  so.target_sqnr_db = 1000;  // unreachable short of every layer: the whole curve
  auto s = quantization_sensitivity(o, set_inputs, nullptr, so);
  REQUIRE(s.ok());
  CHECK(s->program.mean_db == s->emulated.mean_db);
  CHECK(std::isinf(s->all_float.mean_db));
  REQUIRE(s->program.per_input_db.size() == 1);
  CHECK(s->program.top1 == 1.0);  // xnn_qcnn's [1, 10] logits: top-1 as the float emulation's
  REQUIRE(s->layers.size() == 4);
  for (size_t i = 0; i + 1 < s->layers.size(); ++i) CHECK(s->layers[i].recovered_db >= s->layers[i + 1].recovered_db);
  for (const LayerSensitivity& l : s->layers) {
    CHECK(l.recovered_db == Approx(l.float_sqnr.mean_db - s->emulated.mean_db));
    CHECK(l.int8_ms.has_value());
    CHECK(l.float_ms.has_value());
  }
  // The curve climbs to the float emulation itself once every layer is off.
  REQUIRE(s->cumulative_sqnr_db.size() == 4);
  CHECK(std::isinf(s->cumulative_sqnr_db.back()));
  CHECK(s->target_reached);
  CHECK(s->keep_float.size() == 4);

  // A target between: the top layer alone does not reach it unless its float SQNR does.
  so.target_sqnr_db = s->layers[0].float_sqnr.mean_db - 0.01;
  auto one = quantization_sensitivity(o, set_inputs, nullptr, so);
  REQUIRE(one.ok());
  CHECK(one->target_reached);
  REQUIRE(one->keep_float.size() == 1);
  CHECK(one->keep_float[0] == 0);
  CHECK(one->keep_float_sqnr.mean_db == Approx(s->layers[0].float_sqnr.mean_db));
  CHECK(!one->exclude_modules.empty() == !one->layers[0].exclude.empty());

  // Already there: nothing to keep.
  so.target_sqnr_db = 10;
  auto none = quantization_sensitivity(o, set_inputs, nullptr, so);
  REQUIRE(none.ok());
  CHECK(none->keep_float.empty());
  CHECK(none->target_reached);
}

TEST_CASE("quantization_sensitivity refuses programs without quantized XNNPACK layers and mismatched references",
          "[numerics][sensitivity]") {
  runner::RunnerOptions o;
  o.model = fixture("xnnpack/xnn_cnn.pte");
  const std::string input = fixture("xnnpack/xnn_cnn.input0.npy");
  const std::vector<InputSet> set_inputs{{"input0", [&](runner::Runner& r) { return r.set_inputs_from_files({input}); }}};
  auto s = quantization_sensitivity(o, set_inputs, nullptr, {});
  REQUIRE(!s.ok());
  CHECK(s.error().code() == ErrorCode::kInvalidArgument);
  CHECK(s.error().message().find("no quantized layer") != std::string::npos);

  const std::string q = std::string(testing::fixture_dir()) + "/xnnpack/xnn_qcnn";
  o.model = q + ".pte";
  SensitivityOptions so;
  so.reference = {{OutputTensor{ScalarType::kFloat, {1, 3}, std::vector<uint8_t>(12, 0)}}};
  so.reference_name = "a wrong reference";
  const std::vector<InputSet> q_inputs{{"input0", [&](runner::Runner& r) { return r.set_inputs_from_files({q + ".input0.npy"}); }}};
  auto qs = quantization_sensitivity(o, q_inputs, nullptr, so);
  REQUIRE(!qs.ok());
  CHECK(qs.error().message().find("a wrong reference") != std::string::npos);

  o.engine = runner::EngineKind::kExecutorch;
  auto et = quantization_sensitivity(o, set_inputs, nullptr, {});
  REQUIRE(!et.ok());
  CHECK(et.error().code() == ErrorCode::kNotSupported);
}

}  // namespace etscope::numerics

namespace etscope::numerics {

TEST_CASE("a layer in float takes its float export's filter only when the int8 one was rounded from it", "[numerics][sensitivity]") {
  for (const char* name : {"sens_cnn", "dqlinear_mlp"}) {
    INFO(name);
    const std::string base = testing::fixture_dir() + "/sensitivity/" + name;
    auto fp32 = load_runner(base + ".fp32.pte", false);
    auto emu = load_runner(base + ".int8.pte", true);
    const auto sites = emu->method().quantizers();
    const auto constants = fp32->method().delegate_float_constants();
    REQUIRE(!constants.empty());
    size_t layers = 0, matched = 0;
    for (size_t k = 0; k < sites.size(); ++k) {
      if (sites[k].filter_shape.empty()) {
        CHECK(emu->method().set_float_filter(k, constants[0].values).error().code() == ErrorCode::kInvalidArgument);
        continue;
      }
      ++layers;
      for (const auto& c : constants) {
        if (c.shape != sites[k].filter_shape || !emu->method().set_float_filter(k, c.values).ok()) continue;
        ++matched;
        // One value moved by a whole step of any int8 filter no longer rounds to it.
        std::vector<float> moved(c.values.begin(), c.values.end());
        moved[moved.size() / 2] += 1.0f;
        const auto refused = emu->method().set_float_filter(k, moved);
        REQUIRE(!refused.ok());
        CHECK(refused.error().message().find("does not round to the int8 filter") != std::string::npos);
        moved.pop_back();
        CHECK(!emu->method().set_float_filter(k, moved).ok());
        break;
      }
    }
    // Every quantized layer of the export has its float filter in the float export.
    CHECK(layers > 0);
    CHECK(matched == layers);
    // Every layer in float with those filters: the float export's output, up to the int32 biases'
    // rounding and float sums in another order.
    const std::vector<OutputTensor> reference = run_outputs(*fp32, base + ".input0.npy");
    const double quantized = sqnr(reference, run_outputs(*emu, base + ".input0.npy"));
    REQUIRE(emu->method().set_quantizers(std::vector<uint8_t>(sites.size(), 0)).ok());
    const double floats = sqnr(reference, run_outputs(*emu, base + ".input0.npy"));
    CHECK(floats > 45);
    CHECK(floats > quantized + 5);
  }
  auto integer = load_runner(testing::fixture_dir() + "/sensitivity/sens_cnn.int8.pte", false);
  CHECK(integer->method().set_float_filter(0, {}).error().code() == ErrorCode::kInvalidArgument);
}

}  // namespace etscope::numerics
