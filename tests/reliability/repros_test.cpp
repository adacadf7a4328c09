// Every file in tests/data/repros (copied from ../shared/reliability-repros, see SOURCE.md there)
// once made etscope crash, hang, exhaust memory or touch memory it does not own. Each must now
// end in one line naming the file and the problem with exit code 1, or, where the program is
// valid, in a correct result; the sanitizer build runs the same cases.
#include <catch2/catch.hpp>

#include <filesystem>
#include <string>

#include "etscope/formats/npy.h"
#include "etscope/runner/engine.h"
#include "etscope/runner/runner.h"
#include "testing/test_util.h"

using etscope::testing::real_artifact;
using etscope::testing::run_etscope;
using etscope::testing::temp_dir;

namespace {

std::string repro(const std::string& name) { return std::string(etscope::testing::test_data_dir()) + "/repros/" + name; }

// One line on stderr, starting with "etscope: <file>:" and holding `problem`; exit code 1.
void expect_refusal(const std::string& args, const std::string& file, const std::string& problem) {
  INFO("etscope " << args);
  auto r = run_etscope(args);
  INFO("stderr: " << r.err);
  CHECK(r.exit_code == 1);
  CHECK(r.err.rfind("etscope: " + repro(file) + ":", 0) == 0);
  CHECK(r.err.find(problem) != std::string::npos);
  // One line: the message and its newline, nothing after.
  CHECK(r.err.find('\n') == r.err.size() - 1);
}

// add.out writes value 0, the program's input: with ones as input, every iteration must see
// ones again (the engine sets the input afresh before each execution).
void expect_same_output_after_reruns(const std::string& engine) {
  const std::string dir1 = temp_dir("repro_writes_input_1_" + engine), dir3 = temp_dir("repro_writes_input_3_" + engine);
  const std::string run = "run --engine " + engine + " " + repro("add_writes_input.pte") + " --ones";
  auto one = run_etscope(run + " --iterations 1 --warmup 0 --output-dir " + dir1);
  auto three = run_etscope(run + " --iterations 3 --output-dir " + dir3);
  REQUIRE(one.exit_code == 0);
  REQUIRE(three.exit_code == 0);
  auto a = etscope::read_npy(dir1 + "/output_0.npy");
  auto b = etscope::read_npy(dir3 + "/output_0.npy");
  REQUIRE(a.ok());
  REQUIRE(b.ok());
  CHECK(a->data == b->data);
}

}  // namespace

TEST_CASE("writes into constant memory are refused at load", "[repro][runtime]") {
  expect_refusal("run --engine etscope " + repro("t1_out_is_constant.pte"), "t1_out_is_constant.pte",
                 "instruction 0 (aten::mul.out): writes value 0, a constant of the program");
  expect_refusal("run --engine etscope " + repro("t5_move_constant_into_output.pte"), "t5_move_constant_into_output.pte",
                 "(aten::add.out): writes value 4, a constant of the program");
}

TEST_CASE("a method input that is a constant is refused at load", "[repro][runtime]") {
  expect_refusal("run --engine etscope " + repro("t2_input_is_constant.pte"), "t2_input_is_constant.pte",
                 "input 0 is value 0, a constant of the program");
  expect_refusal("run --engine etscope " + repro("fuzz_input_is_constant.pte"), "fuzz_input_is_constant.pte",
                 "input 0 is value 1, a constant of the program");
}

TEST_CASE("a plan that places what an instruction writes inside what it reads is refused at load", "[repro][runtime]") {
  expect_refusal("run --engine etscope " + repro("fuzz_slice_output_inside_input.pte") + " --ones", "fuzz_slice_output_inside_input.pte",
                 "instruction 1 (aten::slice_copy.Tensor_out): writes value 3 into the memory of value 2, which it reads");
}

TEST_CASE("tensors without memory never reach a kernel", "[repro][runtime]") {
  expect_refusal("run --engine etscope " + repro("t3_unplanned_intermediate.pte"), "t3_unplanned_intermediate.pte",
                 "instruction 0 (aten::mul.out): value 3 has no memory");
  expect_refusal("run --engine etscope " + repro("t4_free_then_use.pte"), "t4_free_then_use.pte",
                 "instruction 2 (aten::add.out): uses value 3 after a FreeCall released it");
  expect_refusal("run --engine etscope " + repro("flip_constant_becomes_unplanned.pte"), "flip_constant_becomes_unplanned.pte",
                 "(aten::add.out): value 1 has no memory");
  expect_refusal("run --engine etscope " + repro("flip_external_becomes_unplanned.pte") + " --ptd " + real_artifact("linear_external_legacy.ptd"),
                 "flip_external_becomes_unplanned.pte", "(aten::permute_copy.out): value 0 has no memory");
}

TEST_CASE("declared sizes beyond the memory limit are refused before allocating", "[repro][runtime]") {
  expect_refusal("run --engine etscope " + repro("t10_huge_arena.pte"), "t10_huge_arena.pte", "memory arena 1 needs 4503599627370496 bytes");
  expect_refusal("run --engine etscope " + repro("flip_arena_abort.pte"), "flip_arena_abort.pte", "memory arena 1 needs");
  // Its convolution's im2col matrix would hold more than 2^58 elements: the kernel refuses the
  // sizes themselves, before any scratch is sized or allocated.
  expect_refusal("run --engine etscope " + repro("flip_scratch_abort.pte"), "flip_scratch_abort.pte",
                 "(aten::convolution.out): convolution.out: the im2col matrix of this convolution is out of range");
}

TEST_CASE("pte and memory warn about programs that declare more memory than run allows", "[repro][cli]") {
  for (const char* verb : {"pte ", "memory "}) {
    auto r = run_etscope(std::string(verb) + repro("t10_huge_arena.pte"));
    INFO(verb << r.err);
    CHECK(r.exit_code == 0);  // describing the program is still possible
    CHECK(r.err.rfind("etscope: " + repro("t10_huge_arena.pte") + ": warning: method 'forward' declares "
                      "4503599627370496 bytes (4194304.00 GiB) of planned memory", 0) == 0);
    CHECK(r.err.find("run will refuse it") != std::string::npos);
  }
  // A program that fits says nothing.
  auto fine = run_etscope("pte " + repro("add_writes_input.pte"));
  CHECK(fine.exit_code == 0);
  CHECK(fine.err.empty());
}

TEST_CASE("an arena declared far larger than used costs neither time nor memory", "[repro][runtime]") {
  // add_v2.pte with one byte flipped: its arena says 4.2 GB. Large arenas are mapped, not
  // written, so the run is correct and touches only what the program uses.
  auto r = run_etscope("run " + repro("flip_arena_4GiB.pte") + " --ones --iterations 2");
  INFO(r.err);
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("outputs    1") != std::string::npos);
}

TEST_CASE("a program that writes its input never writes the caller's bytes", "[repro][runtime]") {
  // add.out writes value 0, the program's input: with ones as input, every iteration must see
  // ones again (the input is copied into the method's own buffer before each execution).
  expect_same_output_after_reruns("etscope");
  // The bundled form: every case passes, none crashes.
  auto bundled = run_etscope("run " + repro("bpte_writes_borrowed_input.bpte") + " --bundled");
  CHECK(bundled.exit_code == 0);
  CHECK(bundled.out.find("0 failed") != std::string::npos);
}

TEST_CASE("hostile inputs are refused: wrapping shapes and bools that are not 0 or 1", "[repro][runtime]") {
  expect_refusal("run --engine etscope " + repro("add_dynamic2d.pte") + " --input " + repro("wrap_2e62_f4.npy") + " --input " +
                     repro("wrap_2e62_f4.npy"),
                 "wrap_2e62_f4.npy", "f32[1099511627776,4194304] does not fit input 0 (f32[1,1])");
  expect_refusal("run --engine etscope " + repro("add_bool.pte") + " --input " + repro("bool_2.npy") + " --input " + repro("bool_2.npy"),
                 "bool_2.npy", "bool element 0 holds the byte 2");
}

TEST_CASE("hostile kernel attributes fail the instruction without overflowing", "[repro][runtime]") {
  // max_pool2d with kernel 2^30 and dilation 2^40, and a convolution whose im2col size overflows
  // int64: the kernels check the window arithmetic before doing any of it (UBSan runs this too).
  expect_refusal("run --engine etscope " + repro("maxpool_overflow.pte"), "maxpool_overflow.pte",
                 "instruction 0 (aten::max_pool2d_with_indices.out): max_pool2d_with_indices.out: kernel_size, stride, "
                 "padding or dilation out of range");
  expect_refusal("run --engine etscope " + repro("fuzz_conv_scratch_overflow.pte"), "fuzz_conv_scratch_overflow.pte",
                 "instruction 0 (aten::convolution.out): convolution.out: sizes, padding or dilation out of range");
}

TEST_CASE("a misaligned constant is copied, not loaded misaligned", "[repro][runtime]") {
  auto r = run_etscope("run " + repro("fuzz_misaligned_constant.pte") + " --iterations 1");
  INFO(r.err);
  CHECK(r.exit_code == 0);
}

TEST_CASE("a torn ETDump is refused instead of read in part", "[repro][etdump]") {
  expect_refusal("etdump " + repro("race_mixed.etdp"), "race_mixed.etdp",
                 "49032 bytes follow the end of the ETDump its size prefix declares");
}

TEST_CASE("an ETRecord tensor bomb is refused within bounded time and memory", "[repro][etrecord]") {
  expect_refusal("etrecord " + repro("etrecord_stride0_bomb.etrecord"), "etrecord_stride0_bomb.etrecord",
                 "(stride 0 or overlapping strides) is larger than etscope expands");
}

TEST_CASE("a full debug buffer is counted and said exactly / its markers are not events", "[repro][etdump]") {
  const std::string dir = temp_dir("repro_debug_overflow");
  const std::string pte = etscope::testing::fixture("cifar10/cifar10.pte");
  // `etscope run` now refuses a buffer too small for the run before the first execution (issue
  // 28), so the full buffer is made through the runner library, which still records past it.
  etscope::runner::RunnerOptions options;
  options.model = pte;
  options.trace = true;
  options.debug_level = etscope::DebugLevel::kIntermediateOutputs;
  options.debug_buffer_bytes = uint64_t{1} << 20;
  auto runner = etscope::runner::Runner::load(options);
  REQUIRE(runner.ok());
  REQUIRE((*runner)->set_ones_inputs().ok());
  REQUIRE((*runner)->run(0, 2).ok());
  auto written = (*runner)->write_trace(dir + "/c.etdp", dir + "/c.bin");
  REQUIRE_FALSE(written.ok());
  CHECK(written.error().message().find("MiB debug buffer ran out: ") != std::string::npos);
  CHECK(written.error().message().find(" logged values were not recorded") != std::string::npos);
  auto inspect = run_etscope("inspect --etdump " + dir + "/c.etdp --debug-buffer " + dir + "/c.bin --format csv");
  INFO(inspect.err);
  CHECK(inspect.exit_code == 0);
  CHECK(inspect.out.find("etscope::") == std::string::npos);  // no marker row
  CHECK(inspect.err.find("etscope: " + dir + "/c.etdp: warning: block 1 'Execute'") != std::string::npos);
  CHECK(inspect.err.find("logged values were not recorded: the debug buffer was full") != std::string::npos);
}

TEST_CASE("memory never writes its picture or trace over the program it reads", "[repro][cli]") {
  const std::string dir = temp_dir("repro_memory_clobber");
  const std::string copy = dir + "/add.pte";
  std::filesystem::copy_file(real_artifact("add.pte"), copy);
  const auto size = std::filesystem::file_size(copy);
  for (const std::string& flags : {" --svg " + copy, " --chrome-trace " + dir + "/./add.pte", " --svg " + dir + "/x --chrome-trace " + dir + "/x"}) {
    auto r = run_etscope("memory " + copy + flags);
    INFO(flags << ": " << r.err);
    CHECK(r.exit_code == 2);
    CHECK(r.err.rfind("etscope memory: ", 0) == 0);
    CHECK(std::filesystem::file_size(copy) == size);
  }
  CHECK_FALSE(std::filesystem::exists(dir + "/x"));
}


// The ExecuTorch engine meets every hostile program only after etscope's loader validated it
// (the same refusals), and ExecuTorch's own failures end its worker, never etscope: each repro
// ends in a result or in one line naming the file, under either engine.
TEST_CASE("every repro program under the ExecuTorch engine: a result or one line, never a crash", "[repro][executorch]") {
  if (!etscope::runner::engine_available(etscope::runner::EngineKind::kExecutorch).ok()) {
    WARN("the ExecuTorch engine is not built (scripts/dev.sh setup fetches the executorch wheel): skipped");
    return;
  }
  size_t refused = 0, ran = 0;
  for (const auto& entry : std::filesystem::directory_iterator(std::string(etscope::testing::test_data_dir()) + "/repros")) {
    const std::string name = entry.path().filename().string();
    if (entry.path().extension() != ".pte" && entry.path().extension() != ".bpte") continue;
    INFO(name);
    auto r = run_etscope("run --engine executorch " + entry.path().string() +
                         (entry.path().extension() == ".bpte" ? " --bundled" : " --ones --iterations 2"));
    INFO("stderr: " << r.err);
    REQUIRE((r.exit_code == 0 || r.exit_code == 1));
    if (r.exit_code == 1) {
      ++refused;
      CHECK(r.err.rfind("etscope: " + entry.path().string() + ":", 0) == 0);
      CHECK(r.err.find('\n') == r.err.size() - 1);
    } else {
      ++ran;
    }
  }
  CHECK(refused >= 10);  // the hostile plans are refused by the loader before ExecuTorch sees them
  CHECK(ran >= 2);
}

TEST_CASE("a program that writes its input, under the ExecuTorch engine, sees its inputs afresh each time", "[repro][executorch]") {
  if (!etscope::runner::engine_available(etscope::runner::EngineKind::kExecutorch).ok()) {
    WARN("the ExecuTorch engine is not built: skipped");
    return;
  }
  expect_same_output_after_reruns("executorch");
}
