// The ExecuTorch engine (runner/engine.h, EngineKind::kExecutorch; the worker is executorch/):
// ExecuTorch's own runtime from the executorch wheel, behind etscope's runner. Its outputs are
// ExecuTorch's recorded outputs of every fixture, its dumps have the etscope engine's blocks,
// markers and delegate events, and ExecuTorch aborting ends only its worker.
//
// Every test skips (with a warning) when the build has no ExecuTorch engine: scripts/dev.sh setup
// fetches the wheel, so CI always runs them.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>

#include "etscope/etdump/etdump_reader.h"
#include "etscope/formats/npy.h"
#include "etscope/formats/pte_writer.h"
#include "etscope/formats/tensor_stats.h"
#include "etscope/runner/engine.h"
#include "etscope/runner/runner.h"
#include "etscope/worker/messages.h"
#include "etscope/worker/process.h"
#include "inspect/crafted_programs.h"
#include "testing/test_util.h"

using namespace etscope;
using etscope::testing::fixture;
using etscope::testing::temp_dir;
namespace fs = std::filesystem;

namespace {

bool have_engine() {
  Status s = runner::engine_available(runner::EngineKind::kExecutorch);
  if (!s.ok()) WARN("the ExecuTorch engine is not built (" << s.error().message() << "): skipped");
  return s.ok();
}

Result<std::unique_ptr<runner::Runner>> load_et(const std::string& model, runner::RunnerOptions options = {}) {
  options.model = model;
  options.engine = runner::EngineKind::kExecutorch;
  return runner::Runner::load(options);
}

// The fixtures whose inputs and ExecuTorch outputs were recorded: <dir>/<name>.pte with
// <name>[.shape<k>].input<i>.npy and .output<i>.npy.
struct Case {
  std::string pte;
  std::vector<std::string> inputs, outputs;
};

std::vector<Case> recorded_cases(const std::string& dir) {
  std::vector<Case> out;
  if (!fs::exists(dir)) return out;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (entry.path().extension() != ".pte") continue;
    const std::string stem = (entry.path().parent_path() / entry.path().stem()).string();
    for (const std::string& variant : {std::string(), std::string(".shape0"), std::string(".shape1"), std::string(".shape2")}) {
      Case c;
      c.pte = entry.path().string();
      for (int i = 0; fs::exists(stem + variant + ".input" + std::to_string(i) + ".npy"); ++i) {
        c.inputs.push_back(stem + variant + ".input" + std::to_string(i) + ".npy");
      }
      for (int i = 0; fs::exists(stem + variant + ".output" + std::to_string(i) + ".npy"); ++i) {
        c.outputs.push_back(stem + variant + ".output" + std::to_string(i) + ".npy");
      }
      if (!c.inputs.empty() && !c.outputs.empty()) out.push_back(std::move(c));
    }
  }
  return out;
}

}  // namespace

TEST_CASE("the ExecuTorch engine gives ExecuTorch's recorded outputs on every fixture", "[executorch]") {
  if (!have_engine()) return;
  size_t checked = 0, exact = 0;
  std::set<std::string> families;
  for (const std::string dir : {"models", "xnnpack", "xnnpack_dynamic", "xnnpack_quantized"}) {
    std::vector<Case> cases = recorded_cases(testing::fixture_extracted_dir() + "/" + dir);
    for (Case& c : recorded_cases(fixture(dir))) cases.push_back(std::move(c));
    for (const Case& c : cases) {
      INFO(c.pte << " with " << c.inputs.front());
      auto r = load_et(c.pte);
      if (!r.ok()) FAIL(r.error().message());
      auto& runner = *r;
      Status s = runner->set_inputs_from_files(c.inputs);
      if (!s.ok()) FAIL(s.error().message());
      auto timing = runner->run(0, 1);
      if (!timing.ok()) FAIL(timing.error().message());
      const std::string out = temp_dir("et_engine_outputs");
      fs::remove_all(out);
      auto written = runner->write_outputs(out);
      REQUIRE(written.ok());
      REQUIRE(*written == c.outputs.size());
      bool all_exact = true;
      for (size_t i = 0; i < c.outputs.size(); ++i) {
        auto got = read_npy(out + "/output_" + std::to_string(i) + ".npy");
        auto want = read_npy(c.outputs[i]);
        REQUIRE(got.ok());
        REQUIRE(want.ok());
        CHECK(got->shape == want->shape);
        CHECK(got->dtype == want->dtype);
        if (got->data == want->data) continue;
        all_exact = false;
        // Recorded by ExecuTorch's Python runtime; the C++ libraries compute float16 with
        // another order of accumulation: at most two float16 steps apart.
        REQUIRE(got->dtype == ScalarType::kHalf);
        REQUIRE(got->data.size() == want->data.size());
        for (size_t k = 0; k < got->data.size() / 2; ++k) {
          uint16_t a, b;
          std::memcpy(&a, got->data.data() + 2 * k, 2);
          std::memcpy(&b, want->data.data() + 2 * k, 2);
          const float fa = half_to_float(a), fb = half_to_float(b);
          CHECK(std::abs(fa - fb) <= 2 * std::ldexp(1.0f, std::ilogb(std::max(std::abs(fb), 6.1e-5f)) - 10));
        }
      }
      ++checked;
      exact += all_exact;
      families.insert(dir);
    }
  }
  // Portable (fp32, bf16, fp16, quantized, training, LSTM/GRU, transformers), XNNPACK fp32,
  // fp16, int8, 4-bit, dynamically quantized, dynamic shapes, partial delegation.
  CHECK(checked >= 40);
  CHECK(exact + 1 >= checked);  // all bit for bit but the float16 XNNPACK program
  CHECK(families.size() == 4);
}

TEST_CASE("the ExecuTorch engine's dump has the etscope engine's blocks and one event per XNNPACK operator", "[executorch]") {
  if (!have_engine()) return;
  runner::RunnerOptions options;
  options.trace = true;
  auto r = load_et(fixture("xnnpack/xnn_cnn.pte"), options);
  if (!r.ok()) FAIL(r.error().message());
  auto& runner = *r;
  CHECK(runner->engine() == runner::EngineKind::kExecutorch);
  CHECK(runner->engine_version() == runner::executorch_build_version());
  REQUIRE(runner->set_random_inputs(3).ok());
  REQUIRE(runner->run(2, 3).ok());
  auto bytes = runner->trace_bytes();
  REQUIRE(bytes.ok());
  auto dump = etdump::EtDumpReader::read(Blob::from_bytes("et.etdp", *bytes));
  REQUIRE(dump.ok());
  std::vector<std::string> names;
  for (const auto& b : dump->blocks) names.push_back(b.name);
  CHECK(names == std::vector<std::string>{"Default", "Warmup", "Warmup", "Execute", "Execute", "Execute"});
  // The load block holds ExecuTorch's own load events.
  std::set<std::string> load_events;
  for (uint32_t k = 0; k < dump->blocks[0].event_count; ++k) load_events.insert(dump->name_of(dump->events[dump->blocks[0].first_event + k]));
  CHECK(load_events.count("Program::load_method") == 1);
  CHECK(load_events.count("Method::init") == 1);
  // Every execution: Method::execute, a DELEGATE_CALL per delegate call, and inside each the
  // XNNPACK operators as XNNPACK's profiler names them, timed within the delegate call.
  size_t per_block = SIZE_MAX;
  for (size_t bi = 3; bi < dump->blocks.size(); ++bi) {
    const auto& b = dump->blocks[bi];
    size_t delegate_events = 0, executes = 0;
    uint64_t call_start = 0, call_end = 0;
    for (uint32_t k = 0; k < b.event_count; ++k) {
      const etdump::Event& e = dump->events[b.first_event + k];
      if (e.kind != etdump::EventKind::kProfile) continue;
      if (e.delegate) {
        ++delegate_events;
        const std::string& id = dump->delegate_refs[e.ref].id_str;
        CHECK(id.find(" #") != std::string::npos);
        CHECK(e.end >= e.start);
      } else if (dump->name_of(e) == "Method::execute") {
        ++executes;
        call_start = e.start;
        call_end = e.end;
      }
    }
    CHECK(executes == 1);
    CHECK(delegate_events > 5);
    CHECK(call_end > call_start);
    if (per_block != SIZE_MAX) CHECK(delegate_events == per_block);
    per_block = delegate_events;
  }
}

TEST_CASE("the ExecuTorch engine logs program outputs into the debug buffer and marks what did not fit", "[executorch]") {
  if (!have_engine()) return;
  runner::RunnerOptions options;
  options.trace = true;
  options.debug_level = DebugLevel::kProgramOutputs;
  auto r = load_et(fixture("simple_conv_xnnpack/simple_conv_xnnpack.pte"), options);
  if (!r.ok()) FAIL(r.error().message());
  auto& runner = *r;
  // One output of f32[1,16,32,32] (64 KiB) fits once in 100 KiB; the second execution's does not.
  REQUIRE(runner->reserve_debug_buffer(100 << 10).ok());
  REQUIRE(runner->set_ones_inputs().ok());
  REQUIRE(runner->run(0, 2).ok());
  const std::string dir = temp_dir("et_engine_debug");
  auto files = runner->write_trace(dir + "/t.etdp", dir + "/d.bin");
  REQUIRE_FALSE(files.ok());  // the buffer ran out: an error once both files are written
  CHECK_THAT(files.error().message(), Catch::Contains("debug buffer ran out: 1 logged values were not recorded"));
  auto dump = etdump::EtDumpReader::open(dir + "/t.etdp");
  REQUIRE(dump.ok());
  size_t outputs = 0, overflow_markers = 0, engine_markers = 0;
  for (const etdump::Event& e : dump->events) {
    if (e.kind == etdump::EventKind::kDebug && dump->values[e.ref].output) ++outputs;
    if (e.kind != etdump::EventKind::kProfile || e.delegate) continue;
    if (dump->name_of(e) == "etscope::debug_buffer_overflow") ++overflow_markers;
    if (dump->name_of(e) == "etscope::engine:executorch " + std::string(runner::executorch_build_version())) ++engine_markers;
  }
  CHECK(outputs == 1);
  CHECK(overflow_markers == 1);
  CHECK(engine_markers == 1);  // the dump says which engine timed it
  // One f32[1,16,32,32] at a 64-byte aligned address of the buffer.
  CHECK(fs::file_size(dir + "/d.bin") >= 64u << 10);
  CHECK(fs::file_size(dir + "/d.bin") < (64u << 10) + 64);
}

TEST_CASE("the ExecuTorch engine runs every method, bundled cases and external data", "[executorch]") {
  if (!have_engine()) return;
  // Two methods: the bundled suite of each checked by ExecuTorch's runtime.
  auto two = load_et(fixture("models/two_methods.bpte"));
  if (!two.ok()) FAIL(two.error().message());
  auto checked = (*two)->check_bundled(std::nullopt, 1e-3, 1e-5);
  REQUIRE(checked.ok());
  std::set<std::string> methods;
  for (const auto& c : *checked) {
    methods.insert(c.method);
    CHECK(c.passed);
  }
  CHECK(methods.size() == 2);
  // Weights in a .ptd: the same outputs as the etscope engine's.
  runner::RunnerOptions options;
  options.ptd_files = {testing::real_artifact("xor_training.ptd")};
  auto et = load_et(testing::real_artifact("xor_training.pte"), options);
  if (!et.ok()) FAIL(et.error().message());
  options.model = testing::real_artifact("xor_training.pte");
  auto own = runner::Runner::load(options);
  REQUIRE(own.ok());
  REQUIRE((*et)->set_ones_inputs().ok());
  REQUIRE((*own)->set_ones_inputs().ok());
  REQUIRE((*et)->run(0, 1).ok());
  REQUIRE((*own)->run(0, 1).ok());
  auto a = (*et)->output_summaries(4);
  auto b = (*own)->output_summaries(4);
  REQUIRE(a.size() == b.size());
  REQUIRE(a[0].has_value());
  REQUIRE(a[0]->stats.has_value());
  CHECK(a[0]->stats->mean == Approx(b[0]->stats->mean).epsilon(1e-5));
}

TEST_CASE("what ExecuTorch's libraries lack is named before loading, with the way out", "[executorch]") {
  if (!have_engine()) return;
  auto r = load_et(testing::real_artifact("cadence_quantized_conv.pte"));
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().code() == ErrorCode::kNotSupported);
  CHECK_THAT(r.error().message(), Catch::Contains("lacks kernels cadence::quantize_per_tensor.out, cadence::quantized_conv2d_nchw.per_tensor_out, "
                                                  "cadence::dequantize_per_tensor.out") &&
                                      Catch::Contains("--engine etscope"));
  // --threads sets ExecuTorch's threadpool.
  runner::RunnerOptions options;
  options.threads = 2;
  auto two = load_et(fixture("xnnpack/xnn_cnn.pte"), options);
  REQUIRE(two.ok());
  CHECK((*two)->engine_threads() == 2);
}

// A program etscope's loader accepts and ExecuTorch's runtime aborts on: choose_qparams with
// quant_min above quant_max fails one of ExecuTorch's ET_CHECKs, which end the process.
TEST_CASE("ExecuTorch aborting ends its worker, and the run ends with one line quoting ExecuTorch", "[executorch]") {
  if (!have_engine()) return;
  ExecutionPlan plan;
  plan.name = "forward";
  auto int_value = [](int64_t v) {
    Value x;
    x.kind = ValueKind::kInt;
    x.int_value = v;
    return x;
  };
  Value eps;
  eps.kind = ValueKind::kDouble;
  eps.double_value = 1e-5;
  plan.values = {testing::crafted_tensor({4}, Allocation{1, 0}),
                 int_value(10),
                 int_value(5),
                 eps,
                 int_value(1),  // int8
                 testing::crafted_tensor({1}, Allocation{1, 16}, ScalarType::kDouble),
                 testing::crafted_tensor({1}, Allocation{1, 32}, ScalarType::kLong)};
  plan.inputs = {0};
  plan.outputs = {5, 6};
  plan.operators = {{"quantized_decomposed::choose_qparams", "Tensor_out"}};
  Chain chain;
  chain.instructions = {testing::crafted_kernel(0, {0, 1, 2, 3, 4, 5, 6, 5})};
  plan.chains = {chain};
  plan.non_const_buffer_sizes = {0, 48};
  const std::string dir = temp_dir("et_engine_abort");
  const std::string path = dir + "/aborts.pte";
  {
    const std::vector<uint8_t> bytes = testing::crafted_bytes(plan);
    std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  }
  auto r = load_et(path);
  if (!r.ok()) FAIL(r.error().message());
  REQUIRE((*r)->set_ones_inputs().ok());
  auto run = (*r)->run(0, 1);
  REQUIRE_FALSE(run.ok());
  CHECK_THAT(run.error().message(), Catch::Contains("aborted") && Catch::Contains("qmin should be less than qmax"));
  // The process that asked is intact: the etscope engine refuses the same call in its words.
  auto cli = testing::run_etscope("run --engine executorch " + path + " --iterations 1 --etdump " + dir + "/t.etdp");
  CHECK(cli.exit_code == 1);
  CHECK(cli.err.rfind("etscope: " + path + ":", 0) == 0);
  CHECK(cli.err.find('\n') == cli.err.size() - 1);
  CHECK_THAT(cli.err, Catch::Contains("aborted"));
}

TEST_CASE("the worker refuses an ExecuTorch library other than the one it was built against", "[executorch]") {
  if (!have_engine()) return;
  // A copy of the runtime library with one byte appended loads the same, but is another file:
  // LD_LIBRARY_PATH comes before the worker's RUNPATH.
  const std::string dir = temp_dir("et_engine_other_library");
  const std::string worker = testing::binary_dir() + "/bin/etscope-executorch";
  std::string lib_dir;
  {
    FILE* p = popen(("ldd " + worker + " | grep 'libexecutorch.so ' | sed 's/.*=> \\(.*\\)\\/libexecutorch.so.*/\\1/'").c_str(), "r");
    REQUIRE(p != nullptr);
    char buf[4096] = {0};
    if (fgets(buf, sizeof buf, p) != nullptr) lib_dir = buf;
    pclose(p);
  }
  while (!lib_dir.empty() && (lib_dir.back() == '\n' || lib_dir.back() == ' ')) lib_dir.pop_back();
  REQUIRE_FALSE(lib_dir.empty());
  for (const auto& entry : fs::directory_iterator(lib_dir)) {
    if (entry.path().extension() != ".so") continue;
    const fs::path to = fs::path(dir) / entry.path().filename();
    fs::remove(to);
    fs::copy_file(entry.path(), to);
  }
  std::ofstream(dir + "/libexecutorch.so", std::ios::binary | std::ios::app).put('\0');
  const int ok_status = std::system((worker + " --check >/dev/null").c_str());
  CHECK(ok_status == 0);
  FILE* p = popen(("LD_LIBRARY_PATH=" + dir + " " + worker + " --check; echo status=$?").c_str(), "r");
  REQUIRE(p != nullptr);
  std::string out;
  char buf[4096];
  while (fgets(buf, sizeof buf, p) != nullptr) out += buf;
  pclose(p);
  CHECK_THAT(out, Catch::Contains("is not the one etscope was built with") && Catch::Contains(dir + "/libexecutorch.so") &&
                      Catch::Contains("status=3"));
}

TEST_CASE("worker messages are validated when decoded", "[executorch][worker]") {
  worker::WireWriter w;
  worker::WireValue v;
  v.tag = Tag::kTensor;
  v.tensors.push_back({ScalarType::kFloat, {2, 3}, std::vector<uint8_t>(24, 1)});
  worker::LoggedValue logged;
  logged.value = v;
  worker::encode(w, logged);
  worker::LoggedValue back;
  REQUIRE(worker::decode(w.bytes(), back).ok());
  CHECK(back.value.tensors.at(0).sizes == std::vector<int64_t>{2, 3});
  // Every truncation is refused, never read past.
  for (size_t n = 0; n < w.bytes().size(); ++n) {
    worker::LoggedValue cut;
    CHECK_FALSE(worker::decode(std::span<const uint8_t>(w.bytes().data(), n), cut).ok());
  }
  // Bytes that the shape does not fit, a negative size, an unknown dtype, too many dimensions.
  auto refused = [](worker::WireValue bad) {
    worker::WireWriter b;
    worker::LoggedValue m;
    m.value = std::move(bad);
    worker::encode(b, m);
    worker::LoggedValue out;
    return !worker::decode(b.bytes(), out).ok();
  };
  worker::WireValue wrong_bytes = v;
  wrong_bytes.tensors[0].bytes.resize(20);
  CHECK(refused(wrong_bytes));
  worker::WireValue negative = v;
  negative.tensors[0].sizes = {-2, -3};
  CHECK(refused(negative));
  worker::WireValue dtype = v;
  dtype.tensors[0].dtype = static_cast<ScalarType>(99);
  CHECK(refused(dtype));
  worker::WireValue rank = v;
  rank.tensors[0].sizes.assign(17, 1);
  rank.tensors[0].bytes.resize(4);
  CHECK(refused(rank));
  worker::WireValue overflow = v;
  overflow.tensors[0].sizes = {int64_t{1} << 40, int64_t{1} << 40};
  CHECK(refused(overflow));
  // The quoted line of what a worker printed: a fatal check first, else the first error.
  CHECK(worker::last_error_line("I 00:00 x.cpp:1] fine\nE 00:00 m.cpp:9] the cause\nE 00:00 m.cpp:10] arg 0\n") == "the cause");
  CHECK(worker::last_error_line("E 00:00 a.cpp:1] first\nF 00:00 b.cpp:2] assert failed (x)\n") == "assert failed (x)");
}
