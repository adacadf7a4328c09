// `etscope run --engine both`: the same inputs through ExecuTorch's runtime and etscope's, their
// outputs and per-node times side by side (inspect/engine_fidelity.h). Each test skips, with a
// warning, when this build has no ExecuTorch engine.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "etscope/runner/engine.h"
#include "testing/test_util.h"

using etscope::testing::fixture;
using etscope::testing::run_etscope;

namespace {

bool have_executorch() { return etscope::runner::engine_available(etscope::runner::EngineKind::kExecutorch).ok(); }

// The JSON report of `--engine both` on `model`, after checking what holds for every program: it
// parses, both engines ran every timed execution, and the run times and shares are real.
nlohmann::json both_json(const std::string& model, const std::string& extra = "") {
  auto r = run_etscope("run --engine both " + model + " --iterations 6 --warmup 1 --format json" + extra);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const nlohmann::json j = nlohmann::json::parse(r.out);
  CHECK(j["engine"] == "both");
  CHECK(j["turn"] == 5);  // 5 then 1: the engines alternate
  for (const char* engine : {"etscope", "executorch"}) {
    INFO(engine);
    const auto& e = j["engines"][engine];
    CHECK(e["samples_ms"].size() == 6);
    CHECK(e["runs"] == 6);  // the warm-up is not a run
    CHECK(e["run_time_source"] == "Method::execute median");
    CHECK(e["run_ms"].get<double>() > 0);
    // The nodes are inside the run: together at most its time (medians, so with some slack).
    CHECK(e["nodes_ms"].get<double>() <= e["run_ms"].get<double>() * 1.5);
  }
  CHECK(j["run_ratio"].get<double>() ==
        Approx(j["engines"]["etscope"]["run_ms"].get<double>() / j["engines"]["executorch"]["run_ms"].get<double>()));
  for (const auto& row : j["nodes"]) {
    CHECK(row["etscope_ms"].is_number());
    CHECK(row["executorch_ms"].is_number());
    CHECK(row["etscope_share"].get<double>() >= 0);
    CHECK(row["etscope_share"].get<double>() <= 1.0);
    CHECK(row["difference_ms"].get<double>() ==
          Approx(row["etscope_ms"].get<double>() - row["executorch_ms"].get<double>()).margin(1e-12));
  }
  // Sorted by how far apart the engines are.
  for (size_t i = 1; i < j["nodes"].size(); ++i) {
    CHECK(std::abs(j["nodes"][i - 1]["difference_ms"].get<double>()) >= std::abs(j["nodes"][i]["difference_ms"].get<double>()));
  }
  return j;
}

}  // namespace

TEST_CASE("run --engine both matches every XNNPACK node and agrees on fp32 outputs within tolerance", "[cli][run][executorch]") {
  if (!have_executorch()) {
    WARN("the ExecuTorch engine is not built (scripts/dev.sh setup fetches the executorch wheel): skipped");
    return;
  }
  for (const char* model : {"xnnpack/xnn_cnn.pte", "simple_conv_xnnpack/simple_conv_xnnpack.pte"}) {
    INFO(model);
    const nlohmann::json j = both_json(fixture(model));
    // Every operator XNNPACK's profiler names, etscope's interpreter names the same at the same
    // instruction: nothing is left over on either side.
    CHECK(j["only_etscope"].empty());
    CHECK(j["only_executorch"].empty());
    REQUIRE(j["nodes"].size() == j["nodes_total"]);
    REQUIRE(j["nodes"].size() >= 3);
    for (const auto& row : j["nodes"]) {
      CHECK(row["kind"] == "delegate");
      CHECK(std::string(row["name"]).find(" #") != std::string::npos);
    }
    REQUIRE(j["delegate_calls"].size() == 1);
    CHECK(j["delegate_calls"][0]["name"] == "DELEGATE_CALL");
    REQUIRE(j["outputs"].size() == 1);
    const auto& out = j["outputs"][0];
    CHECK(out["comparable"] == true);
    CHECK(out["floating"] == true);
    CHECK(out["within_tolerance"] == true);
    CHECK(out["max_abs_error"].get<double>() < 1e-5);
    CHECK(j["spearman"].is_number());
  }
  // --top keeps the first rows; nodes_total still counts them all.
  const nlohmann::json top = both_json(fixture("xnnpack/xnn_cnn.pte"), " --top 2");
  CHECK(top["nodes"].size() == 2);
  CHECK(top["nodes_total"].get<size_t>() > 2);
}

TEST_CASE("run --engine both gives bit-equal outputs for the int8 XNNPACK program", "[cli][run][executorch]") {
  if (!have_executorch()) {
    WARN("the ExecuTorch engine is not built: skipped");
    return;
  }
  // xnn_qcnn quantizes its input, runs QC8 convolutions and a QS8 fully-connected layer and
  // dequantizes at the end: etscope's integer kernels give ExecuTorch's bits exactly.
  for (const char* inputs : {"", " --random 7", " --ones"}) {
    INFO(inputs);
    const nlohmann::json j = both_json(fixture("xnnpack/xnn_qcnn.pte"), inputs);
    CHECK(j["only_etscope"].empty());
    CHECK(j["only_executorch"].empty());
    const auto& out = j["outputs"][0];
    CHECK(out["differing"] == 0);
    CHECK(out["exactly_equal"] == true);
    CHECK(out["max_abs_error"] == 0);
  }
}

TEST_CASE("run --engine both names the operators of pt2e int8 programs as ExecuTorch's XNNPACK does", "[cli][run][executorch]") {
  if (!have_executorch()) {
    WARN("the ExecuTorch engine is not built: skipped");
    return;
  }
  // A pt2e int8 MobileNetV2: 1x1 convolutions (XNNPACK's QS8/QC8W fully connected GEMMs),
  // depthwise convolutions, residual adds and an int8 mean; every node pairs with ExecuTorch's,
  // and the outputs are ExecuTorch's bits. (Not yet xnnq_mixed and xnnq_resnet_block: after an
  // add with a ReLU, ExecuTorch's XNNPACK records a Clamp operator etscope's events fold into the
  // add's.)
  for (const char* model : {"xnnq_mbv2_pool"}) {
    INFO(model);
    const std::string base = std::string("xnnpack_quantized/") + model;
    const nlohmann::json j = both_json(fixture(base + ".pte"), " --input " + fixture(base + ".input0.npy"));
    CHECK(j["only_etscope"].empty());
    CHECK(j["only_executorch"].empty());
    CHECK(j["outputs"][0]["exactly_equal"] == true);
  }
}

TEST_CASE("run --engine both joins a portable program's kernels instruction by instruction", "[cli][run][executorch]") {
  if (!have_executorch()) {
    WARN("the ExecuTorch engine is not built: skipped");
    return;
  }
  const std::string model = fixture("models/mlp_layernorm.pte");
  const nlohmann::json j = both_json(model);
  REQUIRE(j["nodes"].size() == 11);  // one kernel per instruction, OPERATOR_CALL left out
  std::vector<bool> seen(11, false);
  for (const auto& row : j["nodes"]) {
    CHECK(row["kind"] == "kernel");
    CHECK(std::string(row["name"]).rfind("native_call_", 0) == 0);
    seen.at(row["instruction"].get<size_t>()) = true;
  }
  CHECK(std::count(seen.begin(), seen.end(), true) == 11);
  CHECK(j["delegate_calls"].empty());
  CHECK(j["outputs"][0]["within_tolerance"] == true);

  // The table: outputs, run time, the node rows.
  auto table = run_etscope("run --engine both " + model + " --iterations 3 --top 4");
  INFO(table.err);
  REQUIRE(table.exit_code == 0);
  CHECK_THAT(table.out, Catch::Contains("schedule   3 timed executions each after 1 warm-up, the engines alternating in turns of 3"));
  CHECK_THAT(table.out, Catch::Contains("  0: f32[5,3]  max abs error "));
  CHECK_THAT(table.out, Catch::Contains("(medians of Method::execute): etscope/executorch "));
  CHECK_THAT(table.out, Catch::Contains("nodes      11 in both, 0 only in etscope, 0 only in executorch; Spearman rank correlation"));
  CHECK_THAT(table.out, Catch::Contains("  ... 7 more (--top 0 lists all)"));
}

TEST_CASE("run --engine both refuses the options it cannot honour in one line", "[cli][run]") {
  const std::string model = fixture("models/mlp_layernorm.pte");
  const std::string dir = etscope::testing::temp_dir("engine_both_usage");
  const std::vector<std::string> refused{" --etdump " + dir + "/x.etdp", " --bundled", " --store " + dir + "/s.db",
                                         " --output-dir " + dir, " --etdump " + dir + "/x.etdp --debug-buffer " + dir + "/x.bin"};
  for (const std::string& extra : refused) {
    INFO(extra);
    auto r = run_etscope("run --engine both " + model + extra);
    CHECK(r.exit_code == 2);
    CHECK(r.out.empty());
    CHECK_THAT(r.err, Catch::StartsWith("etscope run: --engine both does not take --"));
    CHECK(r.err.find('\n') == r.err.size() - 1);
  }
  auto top = run_etscope("run --engine etscope " + model + " --top 3");
  CHECK(top.exit_code == 2);
  CHECK(top.err == "etscope run: --top needs --engine both\n");
  if (!have_executorch()) {
    // Without the ExecuTorch engine: one line saying how to enable it, exit 1.
    auto r = run_etscope("run --engine both " + model);
    CHECK(r.exit_code == 1);
    CHECK_THAT(r.err, Catch::StartsWith("etscope: " + model + ": --engine both: "));
    CHECK(r.err.find('\n') == r.err.size() - 1);
  }
}
