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

  // Every quantizer on: ExecuTorch's integer result up to float rounding in the sums.
  const std::vector<OutputTensor> all_on = run_outputs(*emu, base + ".input0.npy");
  CHECK(sqnr(executorch, as_run) == Approx(std::numeric_limits<double>::infinity()));
  const double on_db = sqnr(executorch, all_on);
  CHECK(on_db > 60);
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
    // With the rounding on, ExecuTorch's output (its integer kernels) closely; off, farther.
    const std::vector<OutputTensor> executorch{npy_output(base + ".output0.npy")};
    const double on_db = sqnr(executorch, run_outputs(*emu, base + ".input0.npy"));
    REQUIRE(emu->method().set_quantizers(std::vector<uint8_t>(2, 0)).ok());
    const double off_db = sqnr(executorch, run_outputs(*emu, base + ".input0.npy"));
    CHECK(on_db > 60);
    CHECK(off_db < on_db - 10);
  }
}

TEST_CASE("quantization_sensitivity ranks layers by the SQNR they recover and suggests the fewest to keep in float",
          "[numerics][sensitivity]") {
  const std::string base = std::string(testing::fixture_dir()) + "/xnnpack/xnn_qcnn";
  runner::RunnerOptions o;
  o.model = base + ".pte";
  auto set_inputs = [&](runner::Runner& r) { return r.set_inputs_from_files({base + ".input0.npy"}); };
  SensitivityOptions so;
  so.target_sqnr_db = 1000;  // unreachable short of every layer: the whole curve
  auto s = quantization_sensitivity(o, set_inputs, nullptr, so);
  REQUIRE(s.ok());
  CHECK(s->program_sqnr_db == Approx(s->emulated_sqnr_db).margin(0.5));
  CHECK(std::isinf(s->float_sqnr_db));
  REQUIRE(s->layers.size() == 4);
  for (size_t i = 0; i + 1 < s->layers.size(); ++i) CHECK(s->layers[i].recovered_db >= s->layers[i + 1].recovered_db);
  for (const LayerSensitivity& l : s->layers) {
    CHECK(l.recovered_db == Approx(l.float_sqnr_db - s->emulated_sqnr_db));
    CHECK(l.int8_ms.has_value());
    CHECK(l.float_ms.has_value());
  }
  // The curve climbs to the float emulation itself once every layer is off.
  REQUIRE(s->cumulative_sqnr_db.size() == 4);
  CHECK(std::isinf(s->cumulative_sqnr_db.back()));
  CHECK(s->target_reached);
  CHECK(s->keep_float.size() == 4);

  // A target between: the top layer alone does not reach it unless its float SQNR does.
  so.target_sqnr_db = s->layers[0].float_sqnr_db - 0.01;
  auto one = quantization_sensitivity(o, set_inputs, nullptr, so);
  REQUIRE(one.ok());
  CHECK(one->target_reached);
  REQUIRE(one->keep_float.size() == 1);
  CHECK(one->keep_float[0] == 0);
  CHECK(one->keep_float_sqnr_db == Approx(s->layers[0].float_sqnr_db));

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
  auto set_inputs = [&](runner::Runner& r) { return r.set_inputs_from_files({input}); };
  auto s = quantization_sensitivity(o, set_inputs, nullptr, {});
  REQUIRE(!s.ok());
  CHECK(s.error().code() == ErrorCode::kInvalidArgument);
  CHECK(s.error().message().find("no quantized layer") != std::string::npos);

  const std::string q = std::string(testing::fixture_dir()) + "/xnnpack/xnn_qcnn";
  o.model = q + ".pte";
  SensitivityOptions so;
  so.reference = {OutputTensor{ScalarType::kFloat, {1, 3}, std::vector<uint8_t>(12, 0)}};
  so.reference_name = "a wrong reference";
  auto qs = quantization_sensitivity(o, [&](runner::Runner& r) { return r.set_inputs_from_files({q + ".input0.npy"}); }, nullptr, so);
  REQUIRE(!qs.ok());
  CHECK(qs.error().message().find("a wrong reference") != std::string::npos);

  o.engine = runner::EngineKind::kExecutorch;
  auto et = quantization_sensitivity(o, set_inputs, nullptr, {});
  REQUIRE(!et.ok());
  CHECK(et.error().code() == ErrorCode::kNotSupported);
}

}  // namespace etscope::numerics
