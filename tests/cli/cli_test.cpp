// End-to-end: the etscope binary on real artifacts, checking output text, JSON and exit codes.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "etscope/core/version.h"
#include "etscope/formats/npy.h"

#include "inspect/crafted_programs.h"
#include "etscope/runner/engine.h"
#include "testing/test_json.h"
#include "testing/test_util.h"

using etscope::testing::real_artifact;
using etscope::testing::run_etscope;

TEST_CASE("etscope pte prints a summary of a real program", "[cli]") {
  auto r = run_etscope("pte " + real_artifact("add.pte"));
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.out, Catch::Contains("ExecuTorch program ET12, 728 bytes"));
  CHECK_THAT(r.out, Catch::Contains("1 x  aten::add.out"));
  CHECK_THAT(r.out, Catch::Contains("0: %0 f32[1]  arena 1 @ 0"));
  CHECK(r.err.empty());
}

TEST_CASE("etscope pte --json has the documented shape", "[cli][json]") {
  auto r = run_etscope("pte --json " + real_artifact("xor_training.pte"));
  REQUIRE(r.exit_code == 0);
  auto j = nlohmann::json::parse(r.out);
  CHECK(j["file_identifier"] == "ET12");
  CHECK(j["segments"].size() == 1);
  REQUIRE(j["plans"].size() == 4);
  const auto& fwd = j["plans"][0];
  CHECK(fwd["name"] == "forward");
  CHECK(fwd["inputs"] == nlohmann::json::array({5, 6}));
  CHECK(fwd["outputs"].size() == 10);
  CHECK(fwd["values"].size() == 155);
  CHECK(fwd["instructions"].size() == 66);
  CHECK(fwd["operators"].size() == 23);
  CHECK(fwd["operators"][0] == "aten::permute_copy.out");
  CHECK(fwd["delegates"].is_array());
  CHECK(fwd["non_const_buffer_sizes"] == nlohmann::json::array({0, 624}));
  CHECK(fwd["values"][0]["location"]["kind"] == "external+planned");
  CHECK(fwd["values"][0]["location"]["fqn"] == "net.linear.weight");
}

TEST_CASE("etscope pte --json on a delegated plan lists delegates with ids", "[cli][json]") {
  // The cadence program has no delegates; its JSON still has the arrays.
  auto r = run_etscope("pte --json --plan forward " + real_artifact("cadence_quantized_conv.pte"));
  REQUIRE(r.exit_code == 0);
  auto j = nlohmann::json::parse(r.out);
  CHECK(j["plans"].size() == 1);
  CHECK(j["plans"][0]["operators"][1] == "cadence::quantized_conv2d_nchw.per_tensor_out");
  CHECK(j["constants"]["storage"] == "constant_segment");
}

TEST_CASE("etscope pte --instructions shows outputs after the arrow", "[cli]") {
  auto r = run_etscope("pte --instructions " + real_artifact("maxpool2d.pte"));
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.out, Catch::Contains("aten::max_pool2d_with_indices.out(%0 f32[1,64,112,112], %5 =[3,3], %8 =[2,2], "
                                    "%11 =[1,1], %14 =[1,1], %15 =false) -> %1 f32[1,64,56,56], %2 i64[1,64,56,56]"));
}

TEST_CASE("etscope pte --tensor summarises constants and external tensors", "[cli]") {
  auto c = run_etscope("pte --tensor 1 " + real_artifact("linear_constant_buffer.pte"));
  REQUIRE(c.exit_code == 0);
  CHECK_THAT(c.out, Catch::Contains("min 2  max 2  mean 2"));
  auto e = run_etscope("pte --tensor 0 --ptd " + real_artifact("linear_external_legacy.ptd") + " " +
                       real_artifact("linear_external.pte"));
  REQUIRE(e.exit_code == 0);
  CHECK_THAT(e.out, Catch::Contains("external 'linear.weight'"));
  CHECK_THAT(e.out, Catch::Contains("first: 0.2525756 0.24412912 -0.490723"));
  auto missing_ptd = run_etscope("pte --tensor 0 " + real_artifact("linear_external.pte"));
  CHECK(missing_ptd.exit_code == 1);
  CHECK_THAT(missing_ptd.err, Catch::Contains("pass the .ptd that holds it with --ptd FILE"));
  auto planned = run_etscope("pte --tensor 2 " + real_artifact("add.pte"));
  CHECK(planned.exit_code == 1);
  CHECK_THAT(planned.err, Catch::Contains("exists only at run time"));
  auto range = run_etscope("pte --tensor 99 " + real_artifact("add.pte"));
  CHECK(range.exit_code == 1);
  CHECK_THAT(range.err, Catch::Contains("value 99 is out of range (the method has 4 values)"));
}

TEST_CASE("etscope ptd lists keys and summarises a tensor", "[cli]") {
  auto r = run_etscope("ptd " + real_artifact("xor_training.ptd"));
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.out, Catch::Contains("net.linear2.weight  f32[2,10]  dim_order (0,1)  80 B  segment 2"));
  auto j = run_etscope("ptd --json " + real_artifact("linear_external_legacy.ptd"));
  REQUIRE(j.exit_code == 0);
  auto json = nlohmann::json::parse(j.out);
  CHECK(json["layout"] == "legacy");
  CHECK(json["entries"][1]["key"] == "linear.bias");
  auto bad_key = run_etscope("ptd --tensor nope " + real_artifact("xor_training.ptd"));
  CHECK(bad_key.exit_code == 1);
  CHECK_THAT(bad_key.err, Catch::Contains("no entry 'nope'"));
}

TEST_CASE("etscope bpte shows test cases and extracts the program", "[cli]") {
  const std::string out = etscope::testing::temp_dir("bpte_extract") + "/program.pte";
  auto r = run_etscope("bpte --extract-program " + out + " " + real_artifact("bundled_program.bpte"));
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.out, Catch::Contains("method forward: 10 test cases"));
  CHECK_THAT(r.out, Catch::Contains("case 0-9: inputs i32[2,2], i32[2,2] -> expected i32[2,2]"));
  auto extracted = run_etscope("pte " + out);
  REQUIRE(extracted.exit_code == 0);
  CHECK_THAT(extracted.out, Catch::Contains("1696 bytes"));
}

TEST_CASE("bad input gives one line naming the file and a non-zero exit", "[cli][errors]") {
  auto missing = run_etscope("pte /nonexistent.pte");
  CHECK(missing.exit_code == 1);
  CHECK(missing.err == "etscope: /nonexistent.pte: no such file\n");
  auto wrong = run_etscope("pte " + real_artifact("xor_training.ptd"));
  CHECK(wrong.exit_code == 1);
  CHECK(wrong.err.find('\n') == wrong.err.size() - 1);
  CHECK_THAT(wrong.err, Catch::Contains("xor_training.ptd: not an ExecuTorch program"));
  auto plan = run_etscope("pte --plan nope " + real_artifact("add.pte"));
  CHECK(plan.exit_code == 1);
  CHECK_THAT(plan.err, Catch::Contains("no method named 'nope' (methods: forward)"));
  auto dir = run_etscope("pte /tmp");
  CHECK(dir.exit_code == 1);
  CHECK_THAT(dir.err, Catch::Contains("is a directory"));
  auto usage = run_etscope("pte");
  CHECK(usage.exit_code == 2);
}

TEST_CASE("etscope run checks every bundled case and fails on a bad case index", "[cli][run]") {
  auto ok = run_etscope("run --bundled " + real_artifact("bundled_program.bpte"));
  CHECK(ok.exit_code == 0);
  CHECK_THAT(ok.out, Catch::Contains("10 passed, 0 failed"));
  auto bad = run_etscope("run --bundled 99 " + real_artifact("bundled_program.bpte"));
  CHECK(bad.exit_code == 1);
  CHECK_THAT(bad.err, Catch::Contains("test case '99' is out of range (10 cases)"));
  auto not_bundled = run_etscope("run --bundled " + real_artifact("add.pte"));
  CHECK(not_bundled.exit_code == 1);
  CHECK_THAT(not_bundled.err, Catch::Contains("--bundled needs a bundled program"));
}

// Regression: the memory plan reuses the input's bytes, so repeated executions must copy the
// inputs in again (they did not, and iteration 2 onwards computed on garbage).
TEST_CASE("etscope run repeats executions on the same inputs and matches ExecuTorch", "[cli][run][fixtures]") {
  const std::string dir = etscope::testing::temp_dir("run_mobilenet");
  auto r = run_etscope("run " + etscope::testing::fixture("mobilenet_v2/mobilenet_v2.pte") + " --input " +
                       etscope::testing::fixture("mobilenet_v2/mobilenet_v2.input0.npy") +
                       " --iterations 3 --warmup 2 --output-dir " + dir);
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.out, Catch::Contains("latency    3 iterations (2 warmup)"));
  std::ifstream in(etscope::testing::fixture("mobilenet_v2/mobilenet_v2.run.json"));
  const auto expected = nlohmann::json::parse(in)["runtime_outputs"][0];
  auto npy = etscope::read_npy(dir + "/output_0.npy");
  REQUIRE(npy.ok());
  const auto want = expected["data"].get<std::vector<double>>();
  REQUIRE(npy->data.size() == want.size() * 4);
  const double scale = std::max(std::abs(expected["min"].get<double>()), std::abs(expected["max"].get<double>()));
  for (size_t i = 0; i < want.size(); ++i) {
    float got;
    std::memcpy(&got, npy->data.data() + 4 * i, 4);
    CHECK(std::abs(got - want[i]) <= 1e-5 * scale);
  }
}

TEST_CASE("etscope run writes an ETDump and debug buffer that etscope etdump reads", "[cli][run][etdump]") {
  const std::string dir = etscope::testing::temp_dir("run_etdump");
  auto r = run_etscope("run " + real_artifact("add.pte") + " --ones --iterations 2 --warmup 0 --etdump " + dir +
                       "/t.etdp --debug-buffer " + dir + "/d.bin --debug-level intermediate");
  REQUIRE(r.exit_code == 0);
  auto d = run_etscope("etdump " + dir + "/t.etdp");
  REQUIRE(d.exit_code == 0);
  CHECK_THAT(d.out, Catch::Contains("3 run blocks"));
  CHECK_THAT(d.out, Catch::Contains("native_call_add.out"));
  CHECK_THAT(d.out, Catch::Contains("program output"));
  // The dump names the engine that made its timings.
  const std::string version(etscope::etscope_version());
  CHECK_THAT(d.out, Catch::Contains("\nengine: etscope " + version + "\n"));
  auto j = run_etscope("etdump --json " + dir + "/t.etdp");
  REQUIRE(j.exit_code == 0);
  auto json = nlohmann::json::parse(j.out);
  CHECK(json["engine"] == "etscope");
  CHECK(json["engine_version"] == version);
  CHECK(json["run_data"][0]["name"] == "Default");
  CHECK(json["run_data"][1]["events"].size() == 7);  // 2 program inputs, add, its 2 events, execute, output
  auto no_etdump = run_etscope("run " + real_artifact("add.pte") + " --debug-buffer " + dir + "/x.bin");
  CHECK(no_etdump.exit_code == 2);  // a usage error
  CHECK_THAT(no_etdump.err, Catch::Contains("need --etdump"));
  // Warm-up executions are recorded, in blocks of their own that reports leave out.
  auto warm = run_etscope("run " + real_artifact("add.pte") + " --iterations 2 --warmup 1 --etdump " + dir + "/w.etdp");
  REQUIRE(warm.exit_code == 0);
  auto wj = nlohmann::json::parse(run_etscope("etdump --json " + dir + "/w.etdp").out);
  REQUIRE(wj["run_data"].size() == 4);
  CHECK(wj["run_data"][1]["name"] == "Warmup");
  CHECK(wj["run_data"][2]["name"] == "Execute");
  CHECK(wj["run_data"][3]["name"] == "Execute");
}

TEST_CASE("etscope run: usage errors exit 2 with a readable line, outputs never overwrite inputs", "[cli][run][errors]") {
  auto zero = run_etscope("run " + real_artifact("add.pte") + " --iterations 0");
  CHECK(zero.exit_code == 2);
  CHECK_THAT(zero.err, Catch::Contains("--iterations must be at least 1 (got 0)"));
  auto bad_memory = run_etscope("run " + real_artifact("add.pte") + " --max-memory lots");
  CHECK(bad_memory.exit_code == 2);
  CHECK_THAT(bad_memory.err, Catch::Contains("--max-memory takes a byte count"));
  // The program as its own trace: refused before anything is written.
  const std::string dir = etscope::testing::temp_dir("run_output_is_input");
  const std::string copy = dir + "/add.pte";
  std::filesystem::copy_file(real_artifact("add.pte"), copy);
  const auto size = std::filesystem::file_size(copy);
  auto clobber = run_etscope("run " + copy + " --etdump " + copy);
  CHECK(clobber.exit_code == 2);
  CHECK_THAT(clobber.err, Catch::Contains("is also an input of this command"));
  CHECK(std::filesystem::file_size(copy) == size);
  // A memory limit below what the program declares refuses it at load, naming the limit.
  auto small = run_etscope("run " + real_artifact("add.pte") + " --max-memory 1");
  CHECK(small.exit_code == 1);
  CHECK_THAT(small.err, Catch::Contains("more than the memory limit allows"));
}

TEST_CASE("etscope run executes XNNPACK delegates and refuses missing kernels with one line", "[cli][run][errors]") {
  // The delegated program runs on etscope's kernels and matches PyTorch eager's bundled outputs.
  auto delegated = run_etscope("run " + etscope::testing::fixture("simple_conv_xnnpack/simple_conv_xnnpack.bpte") + " --bundled 0");
  CHECK(delegated.exit_code == 0);
  CHECK_THAT(delegated.out, Catch::Contains("1 passed, 0 failed"));
  auto custom = run_etscope("run " + real_artifact("cadence_quantized_conv.pte") + " --engine etscope");
  CHECK(custom.exit_code == 1);
  CHECK_THAT(custom.err, Catch::Contains("missing kernels: cadence::quantize_per_tensor.out"));
  auto ext = run_etscope("run " + real_artifact("xor_training.pte"));
  CHECK(ext.exit_code == 1);
  CHECK_THAT(ext.err, Catch::Contains("external tensor 'net.linear.weight' not found (no .ptd given"));
}

TEST_CASE("etscope kernels lists the registry with each kernel's dtypes", "[cli][kernels]") {
  auto table = run_etscope("kernels");
  REQUIRE(table.exit_code == 0);
  CHECK_THAT(table.out, Catch::Contains("aten::native_layer_norm.out"));
  CHECK_THAT(table.out, Catch::Contains("quantized_decomposed::quantize_per_tensor.out"));
  auto json = run_etscope("kernels --format json");
  REQUIRE(json.exit_code == 0);
  auto j = nlohmann::json::parse(json.out);
  REQUIRE(j.is_array());
  CHECK(j.size() > 100);
  bool found_conv = false;
  for (const auto& k : j) {
    REQUIRE(k.contains("name"));
    REQUIRE(k["dtypes"].is_array());
    if (k["name"] == "aten::convolution.out") {
      found_conv = true;
      CHECK(k["dtypes"] == nlohmann::json::array({"Half", "Float", "Double", "BFloat16"}));
    }
  }
  CHECK(found_conv);
  CHECK_THAT(table.out, Catch::Contains(std::to_string(j.size()) + " kernels"));
  CHECK(run_etscope("kernels --format yaml").exit_code != 0);
}

TEST_CASE("inspect refuses files of different programs unless --force and leaves warm-up out", "[cli][inspect]") {
  using etscope::testing::fixture;
  const std::string mix = "inspect --etdump " + fixture("cifar10/cifar10.etdp") + " --etrecord " +
                          fixture("mobilenet_v2/mobilenet_v2.etrecord");
  auto refused = run_etscope(mix);
  CHECK(refused.exit_code == 1);
  CHECK_THAT(refused.err, Catch::Contains("cifar10.etdp and mobilenet_v2.etrecord do not belong together"));
  CHECK_THAT(refused.err, Catch::Contains("--force"));
  auto forced = run_etscope(mix + " --force");
  CHECK(forced.exit_code == 0);
  CHECK_THAT(forced.err, Catch::Contains("warning:"));
  auto wrong_pte = run_etscope("trace --etdump " + fixture("cifar10/cifar10.etdp") + " --pte " + fixture("mobilenet_v2/mobilenet_v2.pte") +
                               " -o " + etscope::testing::temp_dir("trace_mix") + "/t.json");
  CHECK(wrong_pte.exit_code == 1);
  CHECK_THAT(wrong_pte.err, Catch::Contains("cifar10.etdp and mobilenet_v2.pte do not belong together"));

  // etscope's own dump: 1 warm-up + 4 timed runs; the warm-up is left out unless asked for.
  const std::string dir = etscope::testing::temp_dir("inspect_warmup");
  auto run = run_etscope("run " + fixture("cifar10/cifar10.pte") + " --iterations 4 --warmup 1 --etdump " + dir + "/c.etdp");
  REQUIRE(run.exit_code == 0);
  auto count_runs = [&](const std::string& extra) {
    auto r = run_etscope("inspect --etdump " + dir + "/c.etdp --format json --block Execute" + extra);
    REQUIRE(r.exit_code == 0);
    auto j = nlohmann::json::parse(r.out);
    REQUIRE(j["blocks"].size() == 1);
    return static_cast<int>(j["blocks"][0]["runs"].size());
  };
  CHECK(count_runs("") == 4);
  CHECK(count_runs(" --include-warmup") == 5);
  CHECK(count_runs(" --skip-runs 1") == 3);
}

TEST_CASE("inspect etdump and trace name the engine of a dump and an unknown one without its marker", "[cli][inspect][trace][engine]") {
  const std::string dir = etscope::testing::temp_dir("engine_lines");
  const std::string version(etscope::etscope_version());
  auto run = run_etscope("run " + etscope::testing::fixture("cifar10/cifar10.pte") + " --engine etscope --iterations 2 --etdump " + dir + "/c.etdp");
  REQUIRE(run.exit_code == 0);
  const std::string ours = dir + "/c.etdp", theirs = etscope::testing::fixture("cifar10/cifar10.etdp");  // ExecuTorch's runtime wrote theirs
  auto table = run_etscope("inspect --etdump " + ours);
  REQUIRE(table.exit_code == 0);
  CHECK_THAT(table.out, Catch::StartsWith("engine: etscope " + version + "\n\n"));
  // The marker is no event: the Default block shows load and init only.
  CHECK(table.out.find("etscope::engine") == std::string::npos);
  CHECK_THAT(table.out, Catch::Contains("block 0 'Default': 1 run, 2 events"));
  CHECK_THAT(run_etscope("inspect --etdump " + theirs).out, Catch::StartsWith("engine: unknown (no etscope engine marker)\n"));
  CHECK_THAT(run_etscope("inspect --etdump " + ours + " --by-type").out, Catch::StartsWith("engine: etscope " + version));
  auto json = nlohmann::json::parse(run_etscope("inspect --etdump " + ours + " --format json").out);
  CHECK(json["engine"] == "etscope");
  CHECK(json["engine_version"] == version);
  for (const auto& block : json["blocks"]) {
    for (const auto& e : block["events"]) CHECK(e["event_name"].get<std::string>().rfind("etscope::", 0) == std::string::npos);
  }
  auto unknown = nlohmann::json::parse(run_etscope("inspect --etdump " + theirs + " --format json").out);
  CHECK(unknown["engine"].is_null());
  CHECK(unknown["engine_version"].is_null());
  // CSV stays one table.
  CHECK_THAT(run_etscope("inspect --etdump " + ours + " --format csv").out, Catch::StartsWith("event_block_name,"));
  CHECK_THAT(run_etscope("etdump " + theirs).out, Catch::Contains("\nengine: unknown (no etscope engine marker)\n"));
  CHECK(nlohmann::json::parse(run_etscope("etdump --json " + theirs).out)["engine"].is_null());

  auto trace = run_etscope("trace --etdump " + ours + " -o " + dir + "/t.json");
  REQUIRE(trace.exit_code == 0);
  CHECK_THAT(trace.out, Catch::Contains("(engine etscope " + version + ")"));
  const auto t = etscope::testing::load_json(dir + "/t.json");
  CHECK(t["otherData"]["engine"] == "etscope");
  CHECK(t["otherData"]["engine_version"] == version);
  // Never drawn, and the time axis starts at the dump's first event, not at 0.
  double first_ts = 1e300;
  for (const auto& e : t["traceEvents"]) {
    if (e["ph"] != "X") continue;
    CHECK(e["name"].get<std::string>().rfind("etscope::", 0) == std::string::npos);
    first_ts = std::min(first_ts, e["ts"].get<double>());
  }
  CHECK(first_ts == 0.0);
  const auto theirs_trace = nlohmann::json::parse(run_etscope("trace --etdump " + theirs + " -o -").out);
  CHECK(theirs_trace["otherData"]["engine"].is_null());
}

TEST_CASE("etscope-synth-etdump --help prints its usage instead of writing a file named --help", "[cli][errors]") {
  const std::string dir = etscope::testing::temp_dir("synth_help");
  const std::string tool = (std::filesystem::path(etscope::testing::cli_path()).parent_path() / "etscope-synth-etdump").string();
  const std::string out = dir + "/out.txt";
  const int help = std::system(("cd " + dir + " && " + tool + " --help >" + out + " 2>&1").c_str());
  CHECK(WIFEXITED(help));
  CHECK(WEXITSTATUS(help) == 0);
  CHECK(etscope::testing::load(out)->size() > 0);
  const int option_first = std::system(("cd " + dir + " && " + tool + " --events 5 >/dev/null 2>&1").c_str());
  CHECK(WEXITSTATUS(option_first) == 2);
  for (const auto& entry : std::filesystem::directory_iterator(dir)) CHECK(entry.path().filename() == "out.txt");
}

TEST_CASE("pte and memory take --method with --plan as its old name", "[cli]") {
  const std::string program = etscope::testing::fixture("models/two_methods.pte");
  for (const char* verb : {"pte ", "memory "}) {
    auto by_method = run_etscope(std::string(verb) + program + " --method encode");
    auto by_plan = run_etscope(std::string(verb) + program + " --plan encode");
    INFO(verb << by_method.err);
    CHECK(by_method.exit_code == 0);
    CHECK(by_method.out == by_plan.out);
    CHECK(by_method.out.find("encode") != std::string::npos);
    auto missing = run_etscope(std::string(verb) + program + " --method decode");
    CHECK(missing.exit_code == 1);
    CHECK(missing.err.find("decode") != std::string::npos);
  }
}

namespace {

// Records of an RFC 4180 CSV text: quoted cells may hold commas, doubled quotes and line breaks.
std::vector<std::vector<std::string>> parse_csv(const std::string& text) {
  std::vector<std::vector<std::string>> rows(1);
  std::string cell;
  bool quoted = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (quoted) {
      if (c == '"' && i + 1 < text.size() && text[i + 1] == '"') cell += '"', ++i;
      else if (c == '"') quoted = false;
      else cell += c;
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      rows.back().push_back(std::move(cell)), cell.clear();
    } else if (c == '\n') {
      rows.back().push_back(std::move(cell)), cell.clear();
      rows.emplace_back();
    } else {
      cell += c;
    }
  }
  if (rows.back().empty()) rows.pop_back();
  return rows;
}

}  // namespace

TEST_CASE("inspect CSV quotes stack traces so every record has the header's columns", "[cli][inspect]") {
  auto r = run_etscope("inspect --etdump " + etscope::testing::fixture("cifar10/cifar10.etdp") + " --etrecord " +
                       etscope::testing::fixture("cifar10/cifar10.etrecord") + " --format csv");
  REQUIRE(r.exit_code == 0);
  const auto rows = parse_csv(r.out);
  REQUIRE(rows.size() > 10);
  size_t multi_line = 0;
  for (const auto& row : rows) {
    CHECK(row.size() == rows.front().size());
    for (const std::string& cell : row) multi_line += cell.find('\n') != std::string::npos;
  }
  CHECK(multi_line > 0);  // stack traces span lines inside their quotes
}

TEST_CASE("trace writes to standard output with -o - and never over one of its inputs", "[cli][trace]") {
  const std::string dump = etscope::testing::fixture("simple_conv/simple_conv.etdp");
  auto to_stdout = run_etscope("trace --etdump " + dump + " -o - --target-time-scale us");
  REQUIRE(to_stdout.exit_code == 0);
  const nlohmann::json trace = nlohmann::json::parse(to_stdout.out);
  CHECK(trace["otherData"]["target_time_scale"] == "us");
  bool us = false;
  for (const auto& e : trace["traceEvents"]) us |= e["ph"] == "X" && e["args"].contains("duration_us");
  CHECK(us);
  // The dump as the output: refused before anything is written.
  const std::string dir = etscope::testing::temp_dir("trace_clobber");
  const std::string copy = dir + "/d.etdp";
  std::filesystem::copy_file(dump, copy);
  const auto size = std::filesystem::file_size(copy);
  auto clobber = run_etscope("trace --etdump " + copy + " -o " + copy);
  CHECK(clobber.exit_code == 2);
  CHECK(clobber.err.find("is also an input of this command") != std::string::npos);
  CHECK(std::filesystem::file_size(copy) == size);
  auto per_run = run_etscope("trace --etdump " + dump + " -o " + dir + "/t.json --tracks per-run");
  CHECK(per_run.exit_code == 0);
  CHECK(per_run.out.find("on 11 tracks") != std::string::npos);
  auto joined = run_etscope("trace --etdump " + dump + " -o " + dir + "/t.json");
  CHECK(joined.out.find("on 2 tracks") != std::string::npos);
  CHECK(run_etscope("trace --etdump " + dump + " -o " + dir + "/t.json --tracks sideways").exit_code == 2);
}

TEST_CASE("inspect --by-type and --modules honour csv tsv and json", "[cli][inspect]") {
  const std::string args = "inspect --etdump " + etscope::testing::fixture("cifar10/cifar10.etdp") + " --etrecord " +
                           etscope::testing::fixture("cifar10/cifar10.etrecord") + " --block Execute";
  auto types = run_etscope(args + " --by-type --format csv");
  REQUIRE(types.exit_code == 0);
  const auto type_rows = parse_csv(types.out);
  REQUIRE(type_rows.size() > 3);
  CHECK(type_rows[0][2] == "type");
  double share = 0;
  for (size_t i = 1; i < type_rows.size(); ++i) share += std::stod(type_rows[i][6]);
  CHECK(share == Approx(1.0).epsilon(0.05));  // the types account for (nearly) the whole run
  auto modules = run_etscope(args + " --modules --format csv");
  REQUIRE(modules.exit_code == 0);
  const auto module_rows = parse_csv(modules.out);
  REQUIRE(module_rows.size() > 3);
  CHECK(module_rows[1][2] == "<root>");
  bool conv = false;
  for (const auto& r : module_rows) conv |= r[2] == "features.0" && r[3] == "features";
  CHECK(conv);
  auto json = run_etscope(args + " --modules --format json");
  REQUIRE(json.exit_code == 0);
  const nlohmann::json tree = nlohmann::json::parse(json.out)["blocks"][0]["module_tree"];
  for (const char* key : {"module", "type", "total", "events", "children"}) CHECK(tree.contains(key));
  CHECK(run_etscope(args + " --modules --by-type --format csv").exit_code == 2);  // a usage error
}

TEST_CASE("run memory and pte print one JSON object with --format json", "[cli]") {
  const std::string pte = real_artifact("add.pte");
  auto run = run_etscope("run " + pte + " --ones --iterations 3 --format json");
  INFO(run.err);
  REQUIRE(run.exit_code == 0);
  const nlohmann::json r = nlohmann::json::parse(run.out);
  CHECK(r["method"] == "forward");
  CHECK(r["latency_ms"]["samples"].size() == 3);
  CHECK(r["latency_ms"]["p50"].get<double>() >= r["latency_ms"]["min"].get<double>());
  CHECK(r["input_source"] == "ones");
  REQUIRE(r["output_values"].size() == 1);
  CHECK(r["output_values"][0]["first"][0] == 2.0);  // 1 + 1
  auto bundled = run_etscope("run " + real_artifact("bundled_program.bpte") + " --bundled --format json");
  REQUIRE(bundled.exit_code == 0);
  CHECK(nlohmann::json::parse(bundled.out)["bundled"]["failed"] == 0);
  const std::vector<std::string> reports = {"memory " + pte, "pte " + pte, "etdump " + real_artifact("tutorial.etdp"),
                                             "ptd " + real_artifact("linear_external_legacy.ptd"),
                                             "bpte " + real_artifact("bundled_program.bpte"),
                                             "etrecord " + real_artifact("tutorial_2023.etrecord")};
  for (const std::string& verb_and_file : reports) {
    INFO(verb_and_file);
    auto by_format = run_etscope(verb_and_file + " --format json");
    auto by_flag = run_etscope(verb_and_file + " --json");
    CHECK(by_format.exit_code == 0);
    CHECK(by_format.out == by_flag.out);
    CHECK_NOTHROW(nlohmann::json::parse(by_format.out));
    CHECK(run_etscope(verb_and_file + " --format yaml").exit_code == 2);
  }
}

TEST_CASE("memory describes the program inside a bundled program", "[cli]") {
  auto bpte = run_etscope("memory " + real_artifact("bundled_program.bpte"));
  INFO(bpte.err);
  REQUIRE(bpte.exit_code == 0);
  CHECK(bpte.out.find("(embedded program)") != std::string::npos);
  CHECK(bpte.out.find("method forward") != std::string::npos);
}

TEST_CASE("run prints durations in --time-unit or with three significant figures", "[cli]") {
  const std::string pte = real_artifact("add.pte");
  auto us = run_etscope("run " + pte + " --ones --iterations 2 --time-unit us");
  REQUIRE(us.exit_code == 0);
  const size_t latency = us.out.find("latency");
  REQUIRE(latency != std::string::npos);
  const std::string line = us.out.substr(latency, us.out.find('\n', latency) - latency);
  CHECK(line.find(" us") != std::string::npos);
  CHECK(line.find(" ms") == std::string::npos);
  CHECK(run_etscope("run " + pte + " --ones --time-unit minutes").exit_code == 2);
}

TEST_CASE("memory --svg - and --chrome-trace - write to standard output alone", "[cli]") {
  const std::string pte = real_artifact("add.pte");
  auto svg = run_etscope("memory " + pte + " --svg -");
  REQUIRE(svg.exit_code == 0);
  CHECK(svg.out.rfind("<svg", 0) == 0);  // nothing but the picture
  auto trace = run_etscope("memory " + pte + " --chrome-trace -");
  REQUIRE(trace.exit_code == 0);
  CHECK_NOTHROW(nlohmann::json::parse(trace.out));
  CHECK(run_etscope("memory " + pte + " --svg - --chrome-trace -").exit_code == 2);
}

TEST_CASE("every verb exits 2 on a usage error", "[cli][errors]") {
  const std::string pte = real_artifact("add.pte");
  for (const char* verb : {"pte", "memory", "run", "inspect", "trace", "etdump", "etrecord", "ptd", "bpte", "kernels", "debug"}) {
    INFO(verb);
    CHECK(run_etscope(std::string(verb) + " " + pte + " --no-such-flag").exit_code == 2);
  }
  CHECK(run_etscope("no-such-verb").exit_code == 2);
  CHECK(run_etscope("run " + pte + " --iterations many").exit_code == 2);
  CHECK(run_etscope("run " + pte + " --ones --random 3").exit_code == 2);
  CHECK(run_etscope("inspect --etdump x.etdp --sort sideways").exit_code == 2);
  // Bad data is 1: the file is there but is not what it should be.
  CHECK(run_etscope("pte " + real_artifact("tutorial.etdp")).exit_code == 1);
}

TEST_CASE("etscope pte --delegates lists each XNNPACK node with its values and quantization", "[cli][xnnpack]") {
  auto text = run_etscope("pte --delegates " + etscope::testing::fixture("simple_conv_xnnpack/simple_conv_xnnpack.pte"));
  REQUIRE(text.exit_code == 0);
  CHECK_THAT(text.out, Catch::Contains("delegate 0: XnnpackBackend") && Catch::Contains("3 nodes, 6 values"));
  CHECK_THAT(text.out, Catch::Contains("1  Conv2d  handle 1") &&
                           Catch::Contains("in: v1 f32[1,32,32,3], v2 f32[16,3,3,3] const, v4 f32[16] const") &&
                           Catch::Contains("kernel 3x3 stride 1x1 pad [1,1,1,1] dilation 1x1 groups 1 (3->16) range [0, inf]"));
  CHECK_THAT(text.out, Catch::Contains("out: v5 f32[1,16,32,32] out#1"));
  CHECK_THAT(text.out, !Catch::Contains("dynamic shapes"));
  // A program exported with a dynamic sequence length: the listing says its shapes are bounds.
  auto dyn = run_etscope("pte --delegates " + etscope::testing::fixture("xnnpack_dynamic/xnn_dyn_transformer.pte"));
  CHECK_THAT(dyn.out, Catch::Contains("22 nodes, 33 values, dynamic shapes (values declared at their upper bounds)"));
  CHECK_THAT(dyn.out, Catch::Contains("shape [1,0,4,8]"));
  // The first form of dynamic quantization: the graph input itself asks to be quantized.
  const std::string legacy = etscope::testing::fixture("xnnpack_handmade/xnnh_dq_legacy.pte");
  auto dq = run_etscope("pte --delegates " + legacy);
  CHECK_THAT(dq.out, Catch::Contains("in: v0 f32[2,5,32] in#0 quantized to qint8 per row on arrival (dq_datatype), v1 qcint8[24,32]"));
  auto dqj = run_etscope("pte --delegates --format json " + legacy);
  REQUIRE(dqj.exit_code == 0);
  CHECK(nlohmann::json::parse(dqj.out)["plans"][0]["delegates"][0]["graph"]["values"][0]["quantized_on_arrival_to"] == "qint8");
  auto q = run_etscope("pte --delegates --format json " + etscope::testing::fixture("xnnpack/xnn_qcnn.pte"));
  REQUIRE(q.exit_code == 0);
  const auto j = nlohmann::json::parse(q.out);
  const auto& values = j["plans"][0]["delegates"][0]["graph"]["values"];
  bool per_tensor = false, per_channel = false;
  for (const auto& v : values) {
    if (!v.contains("quantization")) continue;
    per_tensor |= v["type"] == "qint8" && v["quantization"]["kind"] == "per_tensor";
    per_channel |= v["type"] == "qcint8" && v["quantization"]["kind"] == "per_channel" && v["constant"] == true;
  }
  CHECK(per_tensor);
  CHECK(per_channel);
  CHECK(j["plans"][0]["delegates"][0]["graph"]["nodes"][0]["kind"] == "Convert");
}

TEST_CASE("etscope pte --kernels says before running which operators and delegates etscope lacks", "[cli]") {
  auto all = run_etscope("pte --kernels " + etscope::testing::fixture("training/mlp_mse.pte"));
  CHECK(all.exit_code == 0);
  CHECK_THAT(all.out, Catch::Contains("method forward: 15 operators, 15 with a kernel") && Catch::Contains("yes      aten::addmm.out  x2"));
  CHECK_THAT(all.out, !Catch::Contains("__et_training"));  // the marker methods hold no computation
  auto cadence = run_etscope("pte --kernels " + real_artifact("cadence_quantized_conv.pte"));
  CHECK(cadence.exit_code == 1);
  CHECK_THAT(cadence.out, Catch::Contains("3 missing") && Catch::Contains("MISSING  cadence::quantized_conv2d_nchw.per_tensor_out  x1"));
  // XNNPACK delegates run on etscope's executor: nothing is missing.
  auto xnn = run_etscope("pte --kernels --format json " + etscope::testing::fixture("simple_conv_xnnpack/simple_conv_xnnpack.pte"));
  CHECK(xnn.exit_code == 0);
  const auto j = nlohmann::json::parse(xnn.out);
  REQUIRE(j["plans"].size() == 1);
  CHECK(j["plans"][0]["delegates"][0]["backend"] == "XnnpackBackend");
  CHECK(j["plans"][0]["delegates"][0]["calls"] == 1);
  // The refusal at load names every missing kernel and every delegate in one line.
  auto run = run_etscope("run " + real_artifact("cadence_quantized_conv.pte") + " --engine etscope");
  CHECK(run.exit_code == 1);
  CHECK_THAT(run.err, Catch::Contains("missing kernels: cadence::quantize_per_tensor.out, cadence::quantized_conv2d_nchw.per_tensor_out, "
                                      "cadence::dequantize_per_tensor.out"));
}

// .npy has no bfloat16: a bf16 program's outputs are written as float32 (which holds them
// exactly), and its inputs take float32 values that bfloat16 holds exactly, never rounding others.
TEST_CASE("etscope run writes bf16 outputs as float32 and takes exact float32 inputs", "[cli][run]") {
  const std::string dir = etscope::testing::fixture("bf16");
  const std::string out_npy = etscope::testing::temp_dir("bf16_npy"), out_raw = etscope::testing::temp_dir("bf16_raw");
  auto load = [](const std::string& path) {
    auto r = etscope::read_npy(path);
    if (!r.ok()) FAIL(r.error().message());
    return std::move(r).value();
  };
  auto a = run_etscope("run " + dir + "/bf16_cnn.pte --engine etscope --iterations 1 --input " + dir + "/input0.as_f32.npy --output-dir " + out_npy);
  INFO(a.err);
  REQUIRE(a.exit_code == 0);
  auto b = run_etscope("run " + dir + "/bf16_cnn.pte --engine etscope --iterations 1 --input " + dir + "/input0.bin --output-dir " + out_raw);
  REQUIRE(b.exit_code == 0);
  for (int i = 0; i < 2; ++i) {
    const std::string name = "/output_" + std::to_string(i) + ".npy";
    const auto got = load(out_npy + name);
    CHECK(got.dtype == etscope::ScalarType::kFloat);
    CHECK(got.data == load(out_raw + name).data);
    // etscope's portable bf16 kernels agree with eager PyTorch to the bit.
    CHECK(got.data == load(dir + "/eager_output" + std::to_string(i) + ".npy").data);
  }
  // A float32 value bfloat16 cannot hold: refused with one line naming the file and the element.
  auto input = load(dir + "/input0.as_f32.npy");
  input.data[0] ^= 1;
  const std::string bad_path = out_npy + "/not_bf16.npy";
  REQUIRE(etscope::write_npy(bad_path, input.dtype, input.shape, input.data).ok());
  auto bad = run_etscope("run " + dir + "/bf16_cnn.pte --iterations 1 --input " + bad_path);
  CHECK(bad.exit_code == 1);
  CHECK_THAT(bad.err, Catch::Contains("not_bf16.npy: element 0") && Catch::Contains("is no bfloat16 value"));
}

TEST_CASE("run --store without --etdump stores the trace from memory, writing no file", "[cli][store]") {
  const std::string dir = etscope::testing::temp_dir("run_store_memory");
  const std::string store = dir + "/runs.sqlite";
  auto stored = run_etscope("run " + etscope::testing::fixture("simple_conv/simple_conv.pte") + " --iterations 3 --store " + store);
  INFO(stored.err);
  REQUIRE(stored.exit_code == 0);
  auto rows = run_etscope("sql \"SELECT file, method, executions FROM v_runs\" --format json --store " + store);
  REQUIRE(rows.exit_code == 0);
  const auto j = nlohmann::json::parse(rows.out);
  REQUIRE(j.size() == 1);
  CHECK(j[0]["file"] == "(in memory)");
  CHECK(j[0]["method"] == "forward");
  CHECK(j[0]["executions"] == 3);
  // Nothing but the store is left in the directory.
  size_t files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) files += entry.path().filename().string().rfind("runs.sqlite", 0) != 0;
  CHECK(files == 0);
}

// Issue 28 item 9: ExecuTorch runs a program whose bool constant holds bytes other than 0/1
// (non-zero is true); so does etscope, and pte and run name the constant and its reader.
TEST_CASE("pte and run warn about a bool constant holding bytes other than 0 or 1 and run it", "[cli][issue28]") {
  const std::string path = etscope::testing::temp_dir("cli_bool_mask") + "/mask.pte";
  const auto bytes = etscope::testing::bool_mask_program_bytes({0x00, 0x93, 0x01, 0x7f});
  std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(bytes.data()),
                                              static_cast<std::streamsize>(bytes.size()));
  const std::string warning = "etscope: " + path + ": warning: method 'forward' value 0 (bool[4] constant): 2 of 4 bytes";
  auto pte = run_etscope("pte " + path);
  REQUIRE(pte.exit_code == 0);
  CHECK_THAT(pte.err, Catch::Contains(warning) && Catch::Contains("read by instruction 0 aten::where.self_out"));
  auto run = run_etscope("run --ones --iterations 1 " + path);
  CHECK(run.exit_code == 0);
  CHECK_THAT(run.err, Catch::Contains(warning));
  auto json = run_etscope("pte --json " + path);
  REQUIRE(json.exit_code == 0);
  CHECK(nlohmann::json::parse(json.out)["warnings"].size() == 1);
}

TEST_CASE("issue 28: run sizes the debug buffer from the memory plan and says the timings include logging", "[cli][run][etdump]") {
  const std::string dir = etscope::testing::temp_dir("run_debug_size");
  const std::string model = etscope::testing::fixture("cifar10/cifar10.pte");
  const std::string logged = " --debug-level intermediate --etdump " + dir + "/t.etdp --debug-buffer " + dir + "/d.bin";
  // A size too small for the run is refused before the first execution, naming what is needed.
  auto small = run_etscope("run " + model + " --iterations 20" + logged + " --debug-buffer-size 1");
  CHECK(small.exit_code != 0);
  CHECK_THAT(small.err, Catch::StartsWith("etscope: " + model + ": --debug-buffer-size 1 MiB cannot hold"));
  CHECK_THAT(small.err, Catch::Contains("21 executions (1 warm-up + 20 timed)"));
  CHECK_THAT(small.err, Catch::Contains("give --debug-buffer-size "));
  CHECK(std::count(small.err.begin(), small.err.end(), '\n') == 1);
  CHECK_FALSE(std::filesystem::exists(dir + "/t.etdp"));  // nothing ran
  // Left out, the size is what the run logs: every value fits, and the summary says so.
  auto sized = run_etscope("run " + model + " --iterations 20 --format json" + logged);
  INFO(sized.err);
  REQUIRE(sized.exit_code == 0);
  const auto j = nlohmann::json::parse(sized.out);
  const auto& logging = j["debug_logging"];
  CHECK(logging["level"] == "intermediate");
  CHECK(logging["timings_include_logging"] == true);
  CHECK(logging["buffer_bytes"] == logging["needed_bytes"]);
  CHECK(logging["needed_bytes"].get<uint64_t>() > 21 * logging["bytes_per_execution"].get<uint64_t>() - 21 * 64);
  CHECK(j["debug_buffer"]["bytes"].get<uint64_t>() <= logging["needed_bytes"].get<uint64_t>());
  auto table = run_etscope("run " + model + " --iterations 2" + logged);
  REQUIRE(table.exit_code == 0);
  CHECK_THAT(table.out, Catch::Contains("logging    intermediate level into a"));
  CHECK_THAT(table.out, Catch::Contains("the latencies include the logging"));
  // inspect warns that the dump's timings include the logging; the store tags the run so that
  // compare warns too.
  auto in = run_etscope("inspect --etdump " + dir + "/t.etdp");
  REQUIRE(in.exit_code == 0);
  CHECK_THAT(in.err, Catch::Contains("etscope: " + dir + "/t.etdp: warning: recorded with intermediate logging on"));
  const std::string store = dir + "/runs.sqlite";
  auto stored = run_etscope("store add " + dir + "/t.etdp --store " + store);
  REQUIRE(stored.exit_code == 0);
  CHECK_THAT(stored.err, Catch::Contains("warning: recorded with intermediate logging on"));
  auto plain = run_etscope("run " + model + " --iterations 2 --etdump " + dir + "/p.etdp --store " + store);
  REQUIRE(plain.exit_code == 0);
  CHECK_THAT(plain.err, !Catch::Contains("logging"));
  auto cmp = run_etscope("compare 1 2 --store " + store);
  CHECK_THAT(cmp.err, Catch::Contains("run 1 (t.etdp): warning: recorded with intermediate logging on"));
  CHECK_THAT(cmp.err, !Catch::Contains("run 2"));
}

namespace {
size_t line_count(const std::string& s) { return static_cast<size_t>(std::count(s.begin(), s.end(), '\n')); }
}  // namespace

TEST_CASE("issue 28: an unknown verb is named with the verbs, and CLI11's errors are one etscope line", "[cli][errors]") {
  auto unknown = run_etscope("frobnicate " + real_artifact("add.pte"));
  CHECK(unknown.exit_code == 2);
  CHECK(unknown.out.empty());
  CHECK(line_count(unknown.err) == 1);
  CHECK_THAT(unknown.err, Catch::StartsWith("etscope: unknown verb 'frobnicate'; the verbs are pte, ptd,") &&
                              Catch::Contains("history, sql"));
  auto none = run_etscope("");
  CHECK(none.exit_code == 2);
  CHECK_THAT(none.err, Catch::StartsWith("etscope: give a verb: pte,"));
  auto bad_value = run_etscope("run " + real_artifact("add.pte") + " --iterations many");
  CHECK(bad_value.exit_code == 2);
  CHECK(line_count(bad_value.err) == 1);
  CHECK_THAT(bad_value.err, Catch::StartsWith("etscope run: ") && Catch::Contains("--iterations") &&
                                Catch::Contains("(etscope run --help lists the options)"));
  auto bad_flag = run_etscope("pte " + real_artifact("add.pte") + " --no-such-flag");
  CHECK(bad_flag.exit_code == 2);
  CHECK(line_count(bad_flag.err) == 1);
  CHECK_THAT(bad_flag.err, Catch::StartsWith("etscope pte: ") && Catch::Contains("--no-such-flag"));
  // Help and version still print their text and exit 0.
  auto help = run_etscope("run --help");
  CHECK(help.exit_code == 0);
  CHECK_THAT(help.out, Catch::Contains("--iterations"));
  CHECK(run_etscope("--version").exit_code == 0);
}

TEST_CASE("issue 28: trace -o into a missing directory names the directory", "[cli][trace][errors]") {
  const std::string dir = etscope::testing::temp_dir("trace_missing_dir");
  auto r = run_etscope("trace --etdump " + etscope::testing::fixture("simple_conv/simple_conv.etdp") + " -o " + dir + "/missing/x.json");
  CHECK(r.exit_code == 1);
  CHECK(r.out.empty());
  CHECK(line_count(r.err) == 1);
  CHECK_THAT(r.err, Catch::Contains("x.json: the directory '" + dir + "/missing' does not exist"));
  CHECK_FALSE(std::filesystem::exists(dir + "/missing"));
}

TEST_CASE("issue 28: run prints nothing before an input error and names the engine that timed it", "[cli][run]") {
  const std::string dir = etscope::testing::temp_dir("run_input_error");
  auto missing = run_etscope("run " + real_artifact("add.pte") + " --input " + dir + "/missing.npy --input " + dir + "/missing2.npy");
  CHECK(missing.exit_code == 1);
  CHECK(missing.out.empty());
  CHECK(line_count(missing.err) == 1);
  CHECK_THAT(missing.err, Catch::Contains("missing.npy"));
  auto table = run_etscope("run " + etscope::testing::fixture("simple_conv_xnnpack/simple_conv_xnnpack.pte") + " --iterations 2 --engine etscope");
  INFO(table.err);
  REQUIRE(table.exit_code == 0);
  CHECK_THAT(table.out, Catch::Contains("engine     etscope " + std::string(etscope::etscope_version()) +
                                        ", 1 thread: etscope's own kernels, XNNPACK delegate graphs run node by node by etscope "
                                        "(named with XNNPACK's operator names); not ExecuTorch's runtime"));
  auto json = run_etscope("run " + real_artifact("add.pte") + " --iterations 2 --format json --engine etscope");
  REQUIRE(json.exit_code == 0);
  CHECK(nlohmann::json::parse(json.out)["engine"] == "etscope");
  CHECK(nlohmann::json::parse(json.out)["engine_version"] == etscope::etscope_version());
  CHECK(nlohmann::json::parse(json.out)["engine_threads"] == 1);
  // --threads is the etscope engine's too: its XNNPACK layers split over them, the same outputs.
  const std::string conv = etscope::testing::fixture("simple_conv_xnnpack/simple_conv_xnnpack.pte");
  auto one = run_etscope("run " + conv + " --iterations 1 --engine etscope --random 3 --output-dir " + dir + "/one");
  auto two = run_etscope("run " + conv + " --iterations 1 --format json --engine etscope --random 3 --threads 2 --output-dir " + dir + "/two");
  REQUIRE(one.exit_code == 0);
  REQUIRE(two.exit_code == 0);
  CHECK(nlohmann::json::parse(two.out)["engine_threads"] == 2);
  CHECK(etscope::read_npy(dir + "/one/output_0.npy")->data == etscope::read_npy(dir + "/two/output_0.npy")->data);
  // Without --engine: ExecuTorch's runtime when this build has it, saying it was the default.
  auto chosen = run_etscope("run " + real_artifact("add.pte") + " --iterations 2");
  REQUIRE(chosen.exit_code == 0);
  const bool have_executorch = etscope::runner::engine_available(etscope::runner::EngineKind::kExecutorch).ok();
  CHECK_THAT(chosen.out, Catch::Contains(have_executorch ? "engine     executorch " : "engine     etscope ") && Catch::Contains("(the default)"));
}
