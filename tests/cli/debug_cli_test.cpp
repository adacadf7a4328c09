// End-to-end: the numeric-gap flow right by construction (issue 11 item 10): the ETRecord's
// representative inputs extracted as .npy, the gap refused for a run with other inputs, the AOT
// index found beside its .ptd, and `etscope debug` (run + gap + first divergence + profile).
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <cstring>
#include <fstream>
#include <limits>
#include <map>
#include <regex>
#include <set>

#include "etscope/etrecord/etrecord_reader.h"
#include "etscope/formats/npy.h"
#include "testing/test_json.h"
#include "testing/test_util.h"

using etscope::testing::fixture;
using etscope::testing::run_etscope;
using etscope::testing::temp_dir;

namespace {

const std::string kBase = "simple_conv/simple_conv";
// ExecuTorch 1.5.1's calculate_numeric_gap("SNR") for conv2d on a dump of etscope's runtime run
// with the representative inputs (the command is in the test below and in docs/debug.md): inf.
// etscope's portable convolution (each output summed over its inputs in order with fused
// multiply-adds, then the bias) gives eager PyTorch's conv2d bit for bit on this input; it gave
// 158.19657912063025 dB while the blocked GEMM computed it. (ExecuTorch's own portable kernels:
// 141.08 dB, simple_conv.inspector.json.)
constexpr double kExecuTorchConvSnr = std::numeric_limits<double>::infinity();

// A gap as `sql --format json` writes it: a number, or "inf", "-inf", "nan" (docs/json.md).
double json_gap(const nlohmann::json& v) { return v.is_string() ? std::strtod(v.get<std::string>().c_str(), nullptr) : v.get<double>(); }

// sens_cnn's representative input with every value multiplied by `factor`, as .npy bytes' data.
std::vector<uint8_t> scaled_input(const etscope::NpyArray& x, float factor) {
  std::vector<uint8_t> out = x.data;
  for (size_t i = 0; i + 4 <= out.size(); i += 4) {
    float f;
    std::memcpy(&f, out.data() + i, 4);
    f *= factor;
    std::memcpy(out.data() + i, &f, 4);
  }
  return out;
}

std::string model() { return fixture(kBase + ".pte"); }
std::string etrecord() { return fixture(kBase + ".etrecord"); }
std::string aot() { return fixture(kBase + ".aot_intermediates.ptd"); }

// The gap values of a table printed by `inspect --aot-intermediates` or `debug` (the gap column,
// before debug's local gap).
std::vector<double> table_gaps(const std::string& out) {
  std::vector<double> gaps;
  static const std::regex row(R"(native_call_\S+\s+\d+\s+\S+\s+(-?[0-9.e+-]+|inf|-inf|nan)(?:\s+(?:-?[0-9.e+-]+|inf|-inf|nan|-))?\n)");
  for (auto it = std::sregex_iterator(out.begin(), out.end(), row); it != std::sregex_iterator(); ++it) {
    gaps.push_back(std::strtod((*it)[1].str().c_str(), nullptr));
  }
  return gaps;
}

// Every row's gap, whatever produced the runtime value (the shape column precedes the gap).
std::vector<double> all_row_gaps(const std::string& out) {
  std::vector<double> gaps;
  static const std::regex row(R"([a-z]+[0-9]+\[[0-9,]*\]\s+(-?[0-9.e+-]+|inf|-inf|nan)(?:\s+(?:-?[0-9.e+-]+|inf|-inf|nan|-))?\n)");
  for (auto it = std::sregex_iterator(out.begin(), out.end(), row); it != std::sregex_iterator(); ++it) {
    gaps.push_back(std::strtod((*it)[1].str().c_str(), nullptr));
  }
  return gaps;
}

}  // namespace

TEST_CASE("etscope etrecord --extract-inputs writes the representative inputs as npy", "[cli][gap]") {
  const std::string dir = temp_dir("extract_inputs");
  auto r = run_etscope("etrecord " + etrecord() + " --extract-inputs " + dir);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.out, Catch::Contains("input_0.npy  f32[1,3,32,32]"));
  auto written = etscope::read_npy(dir + "/input_0.npy");
  REQUIRE(written.ok());
  auto record = etscope::etrecord::EtRecordReader::open(etrecord());
  REQUIRE(record.ok());
  const auto& want = record->representative_inputs.at("forward").at(0).at(0);
  CHECK(written->dtype == want.dtype);
  CHECK(written->shape == want.shape);
  CHECK(written->data == want.bytes);
  CHECK_FALSE(std::filesystem::exists(dir + "/input_1.npy"));

  // `run --input` with the extracted file runs what --inputs-from-etrecord runs.
  const std::string a = temp_dir("extract_inputs_a"), b = temp_dir("extract_inputs_b");
  REQUIRE(run_etscope("run " + model() + " --input " + dir + "/input_0.npy --output-dir " + a).exit_code == 0);
  REQUIRE(run_etscope("run " + model() + " --inputs-from-etrecord " + etrecord() + " --output-dir " + b).exit_code == 0);
  CHECK(etscope::read_npy(a + "/output_0.npy")->data == etscope::read_npy(b + "/output_0.npy")->data);

  // An output path that is the ETRecord itself is refused, and the file is left alone.
  const std::string trap = temp_dir("extract_inputs_trap");
  std::filesystem::copy_file(etrecord(), trap + "/input_0.npy");
  auto refused = run_etscope("etrecord " + trap + "/input_0.npy --extract-inputs " + trap);
  CHECK(refused.exit_code == 1);
  CHECK_THAT(refused.err, Catch::Contains("is also an input"));
  CHECK(std::filesystem::file_size(trap + "/input_0.npy") == std::filesystem::file_size(etrecord()));

  auto no_method = run_etscope("etrecord " + etrecord() + " --method encode --extract-inputs " + dir);
  CHECK(no_method.exit_code == 1);
}

TEST_CASE("the numeric gap refuses a run with other inputs than the AOT intermediates", "[cli][gap]") {
  const std::string dir = temp_dir("gap_refusal");
  const std::string run = "run " + model() + " --debug-level intermediate --etdump " + dir + "/%s.etdp --debug-buffer " + dir +
                          "/%s.bin";
  auto traced = [&](const std::string& name, const std::string& inputs) {
    std::string cmd = run;
    for (size_t at; (at = cmd.find("%s")) != std::string::npos;) cmd.replace(at, 2, name);
    return run_etscope(cmd + " " + inputs);
  };
  REQUIRE(traced("random", "").exit_code == 0);  // run's default: random inputs
  REQUIRE(traced("etrecord", "--inputs-from-etrecord " + etrecord()).exit_code == 0);
  // No --aot-index: the index beside the .ptd names the ops.
  auto gap = [&](const std::string& name, const std::string& extra) {
    return run_etscope("inspect --etdump " + dir + "/" + name + ".etdp --debug-buffer " + dir + "/" + name + ".bin --etrecord " +
                       etrecord() + " --aot-intermediates " + aot() + " --gap SNR " + extra);
  };

  auto refused = gap("random", "");
  CHECK(refused.exit_code == 1);
  CHECK(refused.out.empty());
  CHECK_THAT(refused.err, Catch::Contains("the run used different inputs from the AOT intermediates"));
  CHECK_THAT(refused.err, Catch::Contains("rerun with --inputs-from-etrecord"));
  CHECK(std::count(refused.err.begin(), refused.err.end(), '\n') == 1);

  auto forced = gap("random", "--force");
  CHECK(forced.exit_code == 0);
  CHECK_THAT(forced.err, Catch::Contains("warning: "));
  const auto bad = table_gaps(forced.out);
  REQUIRE(bad.size() == 2);
  CHECK(bad[0] < 40.0);

  auto good = gap("etrecord", "");
  INFO(good.err);
  REQUIRE(good.exit_code == 0);
  CHECK(good.err.empty());
  CHECK_THAT(good.out, Catch::Contains("conv2d"));  // op names: the index was found beside the .ptd
  const auto gaps = table_gaps(good.out);
  REQUIRE(gaps.size() == 2);
  // ExecuTorch 1.5.1's Inspector on this very dump (written by etscope's runtime, with its
  // program-input events), made by:
  //   etscope run simple_conv.pte --inputs-from-etrecord simple_conv.etrecord --debug-level intermediate
  //     --etdump d.etdp --debug-buffer d.bin
  //   /work/venv/export/bin/python -c "from executorch.devtools import Inspector; i = Inspector(etdump_path='d.etdp',
  //     etrecord='simple_conv.etrecord', debug_buffer_path='d.bin'); print(i.calculate_numeric_gap('SNR')['gap'])"
  // gave [inf] for conv2d (and relu).
  CHECK(gaps[0] == kExecuTorchConvSnr);
}

TEST_CASE("etscope debug runs, compares, names the first divergence and profiles in one call", "[cli][gap]") {
  auto r = run_etscope("debug " + model() + " --etrecord " + etrecord());
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.err.empty());
  CHECK_THAT(r.out, Catch::Contains("representative inputs"));
  CHECK_THAT(r.out, Catch::Contains("numeric gap (SNR)"));
  CHECK_THAT(r.out, Catch::Contains("first divergence (SNR < 40): none of 2 operators"));
  CHECK_THAT(r.out, Catch::Contains("native_call_convolution.out"));
  CHECK_THAT(r.out, Catch::Contains("profile"));
  const auto gaps = table_gaps(r.out);
  REQUIRE(gaps.size() == 2);
  CHECK(gaps[0] == kExecuTorchConvSnr);

  // --store keeps the run and every gap row, an infinite SNR as such.
  const std::string store = etscope::testing::temp_dir("debug_store") + "/runs.sqlite";
  auto stored = run_etscope("debug " + model() + " --etrecord " + etrecord() + " --store " + store + " --tag check=gap");
  INFO(stored.err);
  REQUIRE(stored.exit_code == 0);
  CHECK_THAT(stored.out, Catch::Contains("store: run 1") && Catch::Contains("(2 gap rows)"));
  auto rows = run_etscope("sql \"SELECT op, name, metric, gap FROM v_gaps WHERE metric = 'SNR' ORDER BY op\" --format json --store " + store);
  REQUIRE(rows.exit_code == 0);
  const auto j = nlohmann::json::parse(rows.out);
  REQUIRE(j.size() == 2);
  CHECK(j[0]["metric"] == "SNR");
  CHECK(j[0]["gap"] == "inf");
  CHECK(json_gap(j[0]["gap"]) == kExecuTorchConvSnr);
  CHECK_THAT(j[0]["name"].get<std::string>(), Catch::Contains("convolution"));
  // Beside the gap, each row's stats and its local gap are metrics of their own.
  auto metrics = run_etscope("sql \"SELECT metric, gap FROM v_gaps WHERE op = 0 ORDER BY metric\" --format json --store " + store);
  REQUIRE(metrics.exit_code == 0);
  std::map<std::string, double> by_metric;
  for (const auto& m : nlohmann::json::parse(metrics.out)) by_metric[m["metric"].get<std::string>()] = json_gap(m["gap"]);
  CHECK(by_metric.count("cosine") == 1);
  CHECK(by_metric["cosine"] == Approx(1.0).epsilon(1e-9));
  CHECK(by_metric["compared"] == 1 * 16 * 32 * 32);
  CHECK(by_metric.count("worst_channel_sqnr_db") == 1);
  CHECK(by_metric.count("max_ulp") == 1);
  CHECK(by_metric["runtime_nan"] == 0);
  REQUIRE(by_metric.count("local_SNR") == 1);
  CHECK(by_metric["local_SNR"] == kExecuTorchConvSnr);  // the first operator's inputs are the AOT inputs
  CHECK(by_metric["exact"] == by_metric["compared"]);

  // Outputs equal bit for bit meet even a threshold of 0.
  auto strict = run_etscope("debug " + model() + " --etrecord " + etrecord() + " --aot-intermediates " + aot() +
                            " --gap L1 --threshold 0");
  REQUIRE(strict.exit_code == 0);
  CHECK_THAT(strict.out, Catch::Contains("first divergence (L1 > 0): none of 2 operators"));
  // One no float computation of XNNPACK's meets names the first node, the convolution that took
  // its batch norm and ReLU in, and the model's own frame.
  auto strict_cnn = run_etscope("debug " + fixture("xnnpack/xnn_cnn.pte") + " --etrecord " + fixture("xnnpack/xnn_cnn.etrecord") +
                                " --aot-intermediates " + fixture("xnnpack/xnn_cnn.aot_intermediates.ptd") + " --gap L1 --threshold 0");
  INFO(strict_cnn.err);
  REQUIRE(strict_cnn.exit_code == 0);
  CHECK_THAT(strict_cnn.out, Catch::Contains("first divergence (L1 > 0): row 1 of 6, aot handles 1,2,3 (conv2d, batch_norm, relu)"));
  CHECK_THAT(strict_cnn.out, Catch::Contains("  conv2d at:\n    File \""));  // the model's own frame
  CHECK_THAT(strict_cnn.out, Catch::Contains("export_xnnpack.py\", line 93, in forward"));

  // Without AOT intermediates beside the program: the profile and how to make them.
  const std::string lone = temp_dir("debug_lone");
  std::filesystem::copy_file(model(), lone + "/m.pte");
  auto bare = run_etscope("debug " + lone + "/m.pte --etrecord " + etrecord());
  INFO(bare.err);
  REQUIRE(bare.exit_code == 0);
  CHECK_THAT(bare.out, Catch::Contains("no AOT intermediates"));
  CHECK_THAT(bare.out, Catch::Contains("samples/export/write_aot_intermediates.py"));
  CHECK_THAT(bare.out, Catch::Contains("native_call_convolution.out"));
  CHECK_THAT(bare.out, !Catch::Contains("numeric gap"));

  CHECK(run_etscope("debug " + model()).exit_code == 2);  // --etrecord is required
  CHECK(run_etscope("debug " + model() + " --etrecord " + etrecord() + " --gap XYZ").exit_code == 1);
}

TEST_CASE("etscope debug keeps its run for inspect and the viewer with --etdump and --debug-buffer", "[cli][gap]") {
  const std::string dir = temp_dir("debug_keep");
  const std::string dump = dir + "/run.etdp", buffer = dir + "/run.debug.bin";
  auto r = run_etscope("debug " + model() + " --etrecord " + etrecord() + " --etdump " + dump + " --debug-buffer " + buffer);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.out, Catch::Contains("kept: " + dump + " and " + buffer));
  CHECK_THAT(r.out, Catch::Contains("--view gaps"));
  REQUIRE(std::filesystem::file_size(dump) > 0);
  REQUIRE(std::filesystem::file_size(buffer) > 0);
  // The kept files give inspect the same gaps as the debug run printed.
  auto again = run_etscope("inspect --etdump " + dump + " --etrecord " + etrecord() + " --debug-buffer " + buffer +
                           " --aot-intermediates " + aot() + " --gap SNR");
  INFO(again.err);
  REQUIRE(again.exit_code == 0);
  const auto first = table_gaps(r.out), second = table_gaps(again.out);
  REQUIRE(first.size() == 2);
  CHECK(second == first);

  // Usage: both or neither, never over an input, never one file for both.
  CHECK(run_etscope("debug " + model() + " --etrecord " + etrecord() + " --etdump " + dump).exit_code == 2);
  CHECK(run_etscope("debug " + model() + " --etrecord " + etrecord() + " --etdump " + dump + " --debug-buffer " + dump).exit_code == 2);
  const std::string copy = dir + "/m.etrecord";
  std::filesystem::copy_file(etrecord(), copy);
  const auto size = std::filesystem::file_size(copy);
  auto clobber = run_etscope("debug " + model() + " --etrecord " + copy + " --etdump " + copy + " --debug-buffer " + buffer);
  CHECK(clobber.exit_code == 2);
  CHECK(std::filesystem::file_size(copy) == size);
}

// Inside XNNPACK delegates: etscope's executor logs each node's output under the node's debug
// handle, in the edge graph's dimension order (docs/xnnpack.md), so the gap is per node where
// ExecuTorch's tools have one number (or none) per delegate call.
TEST_CASE("etscope debug reports the numeric gap per node inside XNNPACK delegates", "[cli][gap][xnnpack]") {
  const std::string store = etscope::testing::temp_dir("debug_xnnpack") + "/runs.sqlite";
  auto debug = [&](const std::string& name) {
    const std::string base = name.find('/') == std::string::npos ? "xnnpack/" + name : name;
    return run_etscope("debug " + fixture(base + ".pte") + " --etrecord " + fixture(base + ".etrecord") + " --aot-intermediates " +
                       fixture(base + ".aot_intermediates.ptd") + " --store " + store);
  };
  // The CNN: a convolution that absorbed its batch norm and ReLU is compared with the ReLU's
  // output; every node agrees with PyTorch far beyond the threshold.
  auto cnn = debug("xnn_cnn");
  INFO(cnn.err);
  REQUIRE(cnn.exit_code == 0);
  CHECK_THAT(cnn.out, Catch::Contains("AOT reference vs runtime: 6 rows"));
  CHECK_THAT(cnn.out, Catch::Contains(" 1,2,3        conv2d, batch_norm, relu  1            1,2,3            f32[1,16,32,32]"));
  CHECK_THAT(cnn.out, Catch::Contains("first divergence (SNR < 40): none of 6 operators"));
  const auto cnn_gaps = all_row_gaps(cnn.out);
  CHECK(cnn_gaps.size() == 6);
  for (double snr : cnn_gaps) CHECK(snr > 100);
  // The transformer encoder: 63 operators, portable kernels and fifteen delegate calls between.
  auto tr = debug("xnn_transformer");
  INFO(tr.err);
  REQUIRE(tr.exit_code == 0);
  CHECK_THAT(tr.out, Catch::Contains("AOT reference vs runtime: 63 rows"));
  CHECK_THAT(tr.out, Catch::Contains("first divergence (SNR < 40): none of 63 operators"));
  // A 1-D convolution that XNNPACK runs as a 2-D one on NHWC data, with its layout conversions.
  auto conv1d = debug("xnn_ops_more");
  INFO(conv1d.err);
  REQUIRE(conv1d.exit_code == 0);
  CHECK_THAT(conv1d.out, Catch::Contains(" 2            conv1d      2            2                f32[1,8,64]"));
  CHECK_THAT(conv1d.out, Catch::Contains("first divergence (SNR < 40): none of"));
  // ExecuTorch 1.5.1 lowers softmax(dim=-1) after an NHWC operator over the channels: the node
  // where the delegate's numbers leave PyTorch's is named, with the model's source line.
  auto bug = debug("xnn_nhwc_softmax");
  INFO(bug.err);
  REQUIRE(bug.exit_code == 0);
  CHECK_THAT(bug.out, Catch::Contains("first divergence (SNR < 40): row 3 of 3, aot handles 3 (softmax)"));
  const auto gaps = all_row_gaps(bug.out);
  REQUIRE(gaps.size() == 3);
  CHECK(gaps[0] > 100);
  CHECK(gaps[1] > 100);
  CHECK(gaps[2] < 20);
  // Programs exported with dynamic shapes, run at a shape below their bounds (the ETRecord's
  // representative inputs): the logged node outputs have the run's sizes.
  auto dyn = debug("xnnpack_dynamic/xnn_dyn_cnn");
  INFO(dyn.err);
  REQUIRE(dyn.exit_code == 0);
  CHECK_THAT(dyn.out, Catch::Contains("AOT reference vs runtime: 5 rows"));
  CHECK_THAT(dyn.out, Catch::Contains("f32[2,8,24,40]"));
  CHECK_THAT(dyn.out, Catch::Contains("first divergence (SNR < 40): none of 5 operators"));
  auto dyn_tr = debug("xnnpack_dynamic/xnn_dyn_transformer");
  INFO(dyn_tr.err);
  REQUIRE(dyn_tr.exit_code == 0);
  CHECK_THAT(dyn_tr.out, Catch::Contains("AOT reference vs runtime: 29 rows"));
  CHECK_THAT(dyn_tr.out, Catch::Contains(" 6            view_1                   6                                  6                f32[4,5,8]"));
  CHECK_THAT(dyn_tr.out, Catch::Contains("first divergence (SNR < 40): none of 29 operators"));
}

// ExecuTorch's LLM exporter's programs with the ETRecord it writes (no representative inputs):
// debug runs the example inputs the program was exported with, which the AOT intermediates were
// made from too (samples/export/write_aot_intermediates.py), and compares. Every row ExecuTorch's
// Inspector gives on its own run is there (its row of a whole delegate call is a row per node
// inside it here); on the 8da4w program (integer linears equal to ExecuTorch's) with ExecuTorch's
// gap, within 0.05 dB; on the portable one far above the threshold, as ExecuTorch's (other float
// kernels: often exact). The portable program's linears, which the
// ETRecord maps no debug handle for, are said in a warning instead of refusing the files.
TEST_CASE("etscope debug compares an LLM export with the ETRecord its exporter wrote", "[cli][gap][llm]") {
  const std::string store = temp_dir("debug_llm") + "/runs.sqlite";
  for (const char* n : {"xnn_8da4w_emb4", "portable_fp32_sdpa"}) {
    INFO(n);
    const std::string base = std::string("llm_etrecord/") + n + "/" + n;
    auto r = run_etscope("debug " + fixture(base + ".pte") + " --etrecord " + fixture(base + ".etrecord") + " --aot-intermediates " +
                         fixture(base + ".aot_intermediates.ptd") + " --format json --store " + store);
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    const auto j = nlohmann::json::parse(r.out);
    CHECK_THAT(j["inputs"].get<std::string>(), Catch::StartsWith("the example inputs"));
    std::map<std::vector<int64_t>, double> ours;
    std::set<int64_t> covered;
    for (const auto& row : j["gap"]["rows"]) {
      const auto& g = row["gap"][0];
      const auto handles = row["aot_debug_handle"].get<std::vector<int64_t>>();
      ours[handles] = g.is_number() ? g.get<double>() : g == "inf" ? HUGE_VAL : std::nan("");
      covered.insert(handles.begin(), handles.end());
    }
    const auto theirs = etscope::testing::load_json(fixture(base + ".inspector.json"))["calculate_numeric_gap"]["SNR"]["rows"];
    REQUIRE(theirs.size() > 40);
    size_t compared = 0;
    for (const auto& row : theirs) {
      const auto handles = row["aot_debug_handle"].get<std::vector<int64_t>>();
      INFO("handles " << row["aot_debug_handle"].dump());
      // A whole delegate call's row there (its handles together) is one row per node inside it here.
      for (int64_t h : handles) CHECK(covered.count(h) == 1);
      if (ours.count(handles) == 0 || row["gap"].size() != 1 || !row["gap"][0].is_number()) continue;  // inf, nan: exact
      const double want = row["gap"][0].get<double>(), got = ours[handles];
      if (std::string(n) == "xnn_8da4w_emb4") {
        CHECK(std::fabs(got - want) < 0.05);
      } else {
        CHECK(got > 100);
        CHECK(want > 100);
      }
      ++compared;
    }
    CHECK(compared > 10);
    if (std::string(n) == "portable_fp32_sdpa") CHECK_THAT(r.err, Catch::Contains("maps no debug handle for 15 of"));
  }
}

TEST_CASE("issue 28: debug says what is missing with real commands, and writes JSON", "[cli][gap]") {
  // Without AOT intermediates the hint names files and commands that exist or can be run, never a
  // placeholder for the dump debug has already deleted.
  const std::string lone = temp_dir("debug_hint");
  std::filesystem::copy_file(model(), lone + "/m.pte");
  auto bare = run_etscope("debug " + lone + "/m.pte --etrecord " + etrecord());
  INFO(bare.err);
  REQUIRE(bare.exit_code == 0);
  CHECK_THAT(bare.out, !Catch::Contains("ETDUMP"));
  CHECK_THAT(bare.out, Catch::Contains("etscope debug " + lone + "/m.pte --etrecord " + etrecord() + " --etdump " + lone +
                                       "/m.debug.etdp --debug-buffer " + lone + "/m.debug.bin"));
  CHECK_THAT(bare.out, Catch::Contains("--etdump " + lone + "/m.debug.etdp --out " + lone + "/m"));
  // With --etdump the kept dump is the one named.
  auto kept = run_etscope("debug " + lone + "/m.pte --etrecord " + etrecord() + " --etdump " + lone + "/k.etdp --debug-buffer " +
                          lone + "/k.bin");
  REQUIRE(kept.exit_code == 0);
  CHECK_THAT(kept.out, Catch::Contains("write_aot_intermediates.py --etrecord " + etrecord() + " --etdump " + lone + "/k.etdp"));

  // A .ptd without its index beside it: the AOT-op column stays empty, and both verbs say so.
  std::filesystem::copy_file(aot(), lone + "/split.ptd");
  auto split = run_etscope("debug " + model() + " --etrecord " + etrecord() + " --aot-intermediates " + lone + "/split.ptd");
  REQUIRE(split.exit_code == 0);
  CHECK_THAT(split.err, Catch::Contains("etscope: " + lone + "/split.ptd: warning: no index beside it (" + lone + "/split.json)"));
  CHECK_THAT(split.err, Catch::Contains("--aot-index"));
  auto inspected = run_etscope("inspect --etdump " + lone + "/k.etdp --etrecord " + etrecord() + " --debug-buffer " + lone +
                               "/k.bin --aot-intermediates " + lone + "/split.ptd --gap SNR");
  REQUIRE(inspected.exit_code == 0);
  CHECK_THAT(inspected.err, Catch::Contains("warning: no index beside it"));
  CHECK_THAT(inspected.err, !Catch::Contains("logging"));  // the gap needs the logging: no timing warning
  auto indexed = run_etscope("debug " + model() + " --etrecord " + etrecord());
  CHECK(indexed.err.empty());  // the index beside the fixture's .ptd is found

  // --format json: one object with the run, the gap rows, the first divergence and the profile.
  auto j = run_etscope("debug " + model() + " --etrecord " + etrecord() + " --format json");
  INFO(j.err);
  REQUIRE(j.exit_code == 0);
  const auto json = nlohmann::json::parse(j.out);
  CHECK(json["method"] == "forward");
  CHECK(json["logging"]["timings_include_logging"] == true);
  CHECK(json["gap"]["metric"] == "SNR");
  REQUIRE(json["gap"]["rows"].size() == 2);
  CHECK(json["first_divergence"]["threshold"] == 40.0);
  CHECK(json["first_divergence"]["row"].is_null());
  CHECK(json["profile"].is_object());
  CHECK(json["warnings"].empty());
  auto none = nlohmann::json::parse(run_etscope("debug " + lone + "/m.pte --etrecord " + etrecord() + " --format json").out);
  CHECK(none["gap"].is_null());
  CHECK_THAT(none["hint"].get<std::string>(), Catch::Contains("etscope debug " + lone + "/m.pte"));
}

TEST_CASE("etscope debug --sensitivity ranks quantized layers, in the table and in JSON", "[cli][gap][sensitivity]") {
  const std::string base = "xnnpack/xnn_qcnn";
  const std::string args = "debug " + fixture(base + ".pte") + " --etrecord " + fixture(base + ".etrecord") + " --no-local --sensitivity";
  auto table = run_etscope(args);
  INFO(table.err);
  REQUIRE(table.exit_code == 0);
  CHECK(table.out.find("quantization sensitivity (etscope engine") != std::string::npos);
  CHECK(table.out.find("conv1 (Conv2d)") != std::string::npos);
  CHECK(table.out.find("suggestion: ") != std::string::npos);

  auto j = run_etscope(args + " --format json --target-sqnr 1000");
  REQUIRE(j.exit_code == 0);
  const auto report = nlohmann::json::parse(j.out);
  const auto& s = report.at("sensitivity");
  CHECK(s.at("engine") == "etscope");
  REQUIRE(s.at("layers").size() == 4);
  double previous = 1e300;
  for (const auto& l : s.at("layers")) {
    CHECK(l.at("recovered_db").get<double>() <= previous);
    previous = l.at("recovered_db").get<double>();
    CHECK(l.at("int8_ms").is_number());
  }
  CHECK(s.at("sqnr").at("float").at("mean_db") == "inf");
  CHECK(s.at("suggestion").at("keep_float_ranks").size() == 4);

  // A float program of another model (xnn_cnn has other weights) as the reference: measured
  // against it, and doubted in a warning.
  auto against = run_etscope(args + " --format json --float-reference " + fixture("xnnpack/xnn_cnn.pte"));
  INFO(against.err);
  REQUIRE(against.exit_code == 0);
  const auto a = nlohmann::json::parse(against.out).at("sensitivity");
  CHECK(a.at("reference").get<std::string>().find("xnn_cnn.pte") != std::string::npos);
  REQUIRE(!a.at("warnings").empty());
  CHECK(a.at("warnings")[0].get<std::string>().find("same model") != std::string::npos);
  CHECK(a.at("float_filters") == 1);  // only conv2, drawn from the same seed in both models
}

TEST_CASE("etscope debug --sensitivity refuses what it cannot rank with one line", "[cli][gap][sensitivity]") {
  const std::string f = "xnnpack/xnn_cnn";
  auto fp = run_etscope("debug " + fixture(f + ".pte") + " --etrecord " + fixture(f + ".etrecord") + " --no-local --sensitivity");
  CHECK(fp.exit_code != 0);
  CHECK(fp.err.find("xnn_cnn.pte: no quantized layer") != std::string::npos);
  CHECK(std::count(fp.err.begin(), fp.err.end(), '\n') == 1);

  auto usage = run_etscope("debug " + fixture(f + ".pte") + " --etrecord " + fixture(f + ".etrecord") + " --float-reference x.pte");
  CHECK(usage.exit_code == 2);
  CHECK(usage.err.find("--float-reference goes with --sensitivity") != std::string::npos);

  const std::string q = "xnnpack/xnn_qcnn";
  auto missing = run_etscope("debug " + fixture(q + ".pte") + " --etrecord " + fixture(q + ".etrecord") +
                             " --no-local --sensitivity --float-reference /nonexistent/float.pte");
  CHECK(missing.exit_code != 0);
  CHECK(missing.err.find("/nonexistent/float.pte") != std::string::npos);
}

// The ranking checked against re-exports (tests/fixtures/executorch/sensitivity/MANIFEST.md):
// each program's suggestion, exported again with that module left unquantized and run by
// ExecuTorch's runtime, recovers what etscope's emulation predicted.
TEST_CASE("etscope debug --sensitivity suggests what a re-export confirms", "[cli][gap][sensitivity]") {
  struct Case {
    const char* model;
    const char* module;   // the suggestion's module (keep.pte leaves it unquantized)
    const char* target;   // --target-sqnr
  };
  for (const Case& c : {Case{"sens_cnn", "conv4", "30"}, Case{"dqlinear_mlp", "fc2", "44"}}) {
    INFO(c.model);
    const std::string base = "sensitivity/" + std::string(c.model);
    auto r = run_etscope("debug " + fixture(base + ".int8.pte") + " --etrecord " + fixture(base + ".int8.etrecord") +
                         " --no-local --sensitivity --float-reference " + fixture(base + ".fp32.pte") + " --target-sqnr " + c.target +
                         " --format json");
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    const auto s = nlohmann::json::parse(r.out).at("sensitivity");
    std::ifstream facts_file(fixture(base + ".json"));
    const auto facts = nlohmann::json::parse(facts_file);
    // The program as run is ExecuTorch's int8 output against the float export (within float noise
    // of ExecuTorch's figure against eager), and the emulation with every quantizer on is it.
    CHECK(s.at("sqnr").at("program").at("mean_db").get<double>() == Approx(facts.at("sqnr_db").at("int8_vs_eager").get<double>()).margin(0.05));
    CHECK(s.at("sqnr").at("emulated").at("mean_db") == s.at("sqnr").at("program").at("mean_db"));
    CHECK(s.at("float_filters") == s.at("filtered_layers"));
    // The top layer is the one the model was built to make sensitive, by far.
    const auto& top = s.at("layers")[0];
    CHECK(top.at("exclude") == nlohmann::json::array({c.module}));
    CHECK(top.at("recovered_db").get<double>() > 5);
    CHECK(top.at("recovered_db").get<double>() > 5 * s.at("layers")[1].at("recovered_db").get<double>());
    // The suggestion is that module alone, and the re-export measures what was predicted.
    const auto& sug = s.at("suggestion");
    CHECK(sug.at("target_reached") == true);
    CHECK(sug.at("exclude_modules") == nlohmann::json::array({c.module}));
    const double predicted = sug.at("sqnr").at("mean_db").get<double>();
    const double measured = facts.at("keep").at("sqnr_db").get<double>();
    CHECK(predicted == Approx(measured).margin(0.5));
  }
}

TEST_CASE("etscope debug --against compares two exports of one model module by module", "[cli][gap][against]") {
  const std::string s = "sensitivity/sens_cnn";
  const std::string both = "debug " + fixture(s + ".int8.pte") + " --etrecord " + fixture(s + ".int8.etrecord") + " --against " +
                           fixture(s + ".fp32.pte") + " --against-etrecord " + fixture(s + ".fp32.etrecord");
  auto r = run_etscope(both + " --threshold 20 --format json");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const auto j = nlohmann::json::parse(r.out);
  CHECK(j.at("against").at("modules").get<int>() >= 4);
  const auto& rows = j.at("gap").at("rows");
  REQUIRE(rows.size() == j.at("against").at("modules").get<size_t>());
  // Every layer, from the first (the delegate call, which logs the program's output under the
  // first module's frame, is not taken for that module's output).
  REQUIRE(rows.size() == 6);
  CHECK(rows[0].at("aot_ops")[0].get<std::string>().rfind("conv1: ", 0) == 0);
  // The int8 program drifts from the float one where conv4 reads the quantized wide tensor, and
  // the drift is conv4's own: its local gap (conv4 computed from the float program's input) stays
  // low while conv5's recovers.
  CHECK(j.at("culprit").at("module") == "conv4 (Conv2d)");
  CHECK(j.at("first_divergence").at("module") == "conv4 (Conv2d)");
  const size_t c = j.at("culprit").at("row").get<size_t>();
  REQUIRE(c + 1 < rows.size());
  CHECK(rows[c].at("local_gap")[0].get<double>() < 10);
  CHECK(rows[c + 1].at("gap")[0].get<double>() < 20);
  CHECK(rows[c + 1].at("local_gap")[0].get<double>() > 30);

  auto table = run_etscope(both);
  REQUIRE(table.exit_code == 0);
  CHECK(table.out.find("its module outputs aligned by module path") != std::string::npos);
  CHECK(table.out.find("sens_cnn.fp32.pte (reference) vs runtime") != std::string::npos);

  // Another family (dynamically quantized linears): the culprit is the module with the largest
  // own gap (the lowest local SNR), as on sens_cnn.
  for (const auto& [model, threshold] : {std::pair<std::string, std::string>{"sens_cnn", "20"}, {"dqlinear_mlp", "40"}}) {
    INFO(model);
    const std::string m = "sensitivity/" + model;
    auto d = run_etscope("debug " + fixture(m + ".int8.pte") + " --etrecord " + fixture(m + ".int8.etrecord") + " --against " +
                         fixture(m + ".fp32.pte") + " --against-etrecord " + fixture(m + ".fp32.etrecord") + " --threshold " + threshold +
                         " --format json");
    REQUIRE(d.exit_code == 0);
    const auto dj = nlohmann::json::parse(d.out);
    const auto& drows = dj.at("gap").at("rows");
    size_t lowest = 0;
    for (size_t i = 1; i < drows.size(); ++i) {
      if (drows[i].at("local_gap")[0].get<double>() < drows[lowest].at("local_gap")[0].get<double>()) lowest = i;
    }
    CHECK(dj.at("culprit").at("row").get<size_t>() == lowest);
  }

  // Over two input sets: each row's gap in both, its mean and worst.
  auto x = etscope::read_npy(fixture(s + ".input0.npy"));
  REQUIRE(x.ok());
  const std::string dir = temp_dir("against_inputs");
  const std::vector<uint8_t> scaled = scaled_input(*x, 2.0f);
  REQUIRE(etscope::write_npy(dir + "/0.npy", x->dtype, x->shape, x->data).ok());
  REQUIRE(etscope::write_npy(dir + "/1.npy", x->dtype, x->shape, scaled).ok());
  auto over = run_etscope(both + " --no-local --format json --inputs " + dir);
  INFO(over.err);
  REQUIRE(over.exit_code == 0);
  const auto o = nlohmann::json::parse(over.out).at("gap_over_inputs");
  REQUIRE(o.at("inputs").size() == 2);
  REQUIRE(o.at("rows").size() == rows.size());
  for (size_t i = 0; i < rows.size(); ++i) {
    const auto& r = o.at("rows")[i];
    // Set 0 is the representative input: the same gap as the table's.
    CHECK(r.at("per_input")[0].get<double>() == Approx(rows[i].at("gap")[0].get<double>()));
    const double a = r.at("per_input")[0].get<double>(), b = r.at("per_input")[1].get<double>();
    CHECK(r.at("mean").get<double>() == Approx((a + b) / 2));
    CHECK(r.at("worst").get<double>() == Approx(std::min(a, b)));
  }
  auto aot_inputs = run_etscope("debug " + fixture(s + ".int8.pte") + " --etrecord " + fixture(s + ".int8.etrecord") + " --inputs " + dir);
  CHECK(aot_inputs.exit_code == 2);
  CHECK(aot_inputs.err.find("--inputs goes with --sensitivity or --against") != std::string::npos);

  // Bad input: one line, non-zero exit.
  auto lone = run_etscope("debug " + fixture(s + ".int8.pte") + " --etrecord " + fixture(s + ".int8.etrecord") + " --against " +
                          fixture(s + ".fp32.pte"));
  CHECK(lone.exit_code == 2);
  CHECK(lone.err.find("--against and --against-etrecord go together") != std::string::npos);
  const std::string q = "sensitivity/dqlinear_mlp";
  auto other_model = run_etscope("debug " + fixture(s + ".int8.pte") + " --etrecord " + fixture(s + ".int8.etrecord") + " --against " +
                                 fixture(q + ".fp32.pte") + " --against-etrecord " + fixture(q + ".fp32.etrecord"));
  CHECK(other_model.exit_code != 0);
  CHECK(other_model.err.find("dqlinear_mlp.fp32.pte") != std::string::npos);
  CHECK(std::count(other_model.err.begin(), other_model.err.end(), '\n') == 1);
}

TEST_CASE("etscope debug --sensitivity over a folder of input sets gives per-set and aggregate figures", "[cli][gap][sensitivity]") {
  const std::string s = "sensitivity/sens_cnn";
  auto x = etscope::read_npy(fixture(s + ".input0.npy"));
  REQUIRE(x.ok());
  const std::string dir = temp_dir("sensitivity_inputs");
  // Two sets: the representative input and a scaled copy (another operating point).
  const std::vector<uint8_t> scaled = scaled_input(*x, 0.5f);
  REQUIRE(etscope::write_npy(dir + "/a.npy", x->dtype, x->shape, x->data).ok());
  REQUIRE(etscope::write_npy(dir + "/b.npy", x->dtype, x->shape, scaled).ok());
  const std::string base = "debug " + fixture(s + ".int8.pte") + " --etrecord " + fixture(s + ".int8.etrecord") +
                           " --no-local --sensitivity --float-reference " + fixture(s + ".fp32.pte");
  auto r = run_etscope(base + " --inputs " + dir + " --format json");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const auto sens = nlohmann::json::parse(r.out).at("sensitivity");
  REQUIRE(sens.at("inputs").size() == 2);
  const auto& program = sens.at("sqnr").at("program");
  REQUIRE(program.at("per_input_db").size() == 2);
  const double a = program.at("per_input_db")[0].get<double>(), b = program.at("per_input_db")[1].get<double>();
  CHECK(program.at("mean_db").get<double>() == Approx((a + b) / 2));
  CHECK(program.at("worst_db").get<double>() == Approx(std::min(a, b)));
  CHECK(a != b);
  // The same sensitive tensor tops the ranking over both sets.
  CHECK(sens.at("layers")[0].at("exclude") == nlohmann::json::array({"conv4"}));
  auto table = run_etscope(base + " --inputs " + dir);
  REQUIRE(table.exit_code == 0);
  CHECK(table.out.find("over 2 input sets") != std::string::npos);

  // A set of the wrong shape: one line naming the file.
  const std::vector<int64_t> wrong{1, 3, 16, 16};
  REQUIRE(etscope::write_npy(dir + "/c.npy", x->dtype, wrong, std::span<const uint8_t>(x->data).first(3 * 16 * 16 * 4)).ok());
  auto bad = run_etscope(base + " --inputs " + dir);
  CHECK(bad.exit_code != 0);
  CHECK(bad.err.find("c.npy") != std::string::npos);
  CHECK(std::count(bad.err.begin(), bad.err.end(), '\n') == 1);
  // Not a folder, no sets.
  auto none = run_etscope(base + " --inputs " + dir + "/nothing-here");
  CHECK(none.exit_code != 0);
  CHECK(none.err.find("nothing-here") != std::string::npos);
}
