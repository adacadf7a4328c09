// MemoryPlan on real ExecuTorch programs, with expected values worked out by hand from the decoded
// programs (`etscope pte --values --instructions`), and on crafted programs with broken plans.
#include <catch2/catch.hpp>

#include "crafted_programs.h"
#include "etscope/inspect/memory_plan.h"
#include "etscope/inspect/program_description.h"
#include "testing/test_util.h"

using namespace etscope;
using namespace etscope::inspect;
using etscope::testing::real_artifact;

namespace {

Program read_real(const std::string& name) {
  auto p = PteReader::open(real_artifact(name));
  if (!p.ok()) FAIL(p.error().message());
  return std::move(p).value();
}

MemoryPlan build_first(const Program& program) {
  auto m = MemoryPlan::build(program, program.plans.at(0));
  if (!m.ok()) FAIL(m.error().message());
  return std::move(m).value();
}

Lifetime steps(int64_t start, int64_t end) { return Lifetime{start, end}; }

bool same(const Lifetime& a, const Lifetime& b) { return a.start == b.start && a.end == b.end; }

}  // namespace

TEST_CASE("add.pte: three 4-byte tensors in 16-byte slots of a 48-byte arena / all live at step 0",
          "[inspect][memory]") {
  Program program = read_real("add.pte");
  MemoryPlan m = build_first(program);
  CHECK(m.instruction_count() == 1);
  REQUIRE(m.arenas().size() == 1);
  const Arena& a = m.arenas()[0];
  CHECK(a.memory_id == 1);
  CHECK(a.size == 48);
  CHECK(a.tensor_count == 3);
  // Steps start(-1), 0, end(1): the two inputs, then all three, then only the output.
  CHECK(a.live_bytes == std::vector<uint64_t>{32, 48, 16});
  CHECK(a.live_data_bytes == std::vector<uint64_t>{8, 12, 4});
  CHECK(a.peak_bytes == 48);
  CHECK(a.peak_step == 0);
  CHECK(a.peak_data_bytes == 12);
  CHECK(a.utilisation == Approx(1.0));
  CHECK(a.never_used_bytes == 36);
  CHECK(a.greedy_bytes == 48);  // All three overlap in time: nothing to share.
  CHECK(a.potential_saving() == 0);
  REQUIRE(m.tensors().size() == 3);
  const PlannedTensor& x = *m.find(0);
  CHECK(x.offset == 0);
  CHECK(x.nbytes == 4);
  CHECK(x.reserved == 16);
  CHECK(x.role == TensorRole::kInput);
  CHECK(same(x.lifetime, steps(-1, 0)));
  CHECK(m.find(1)->offset == 16);
  const PlannedTensor& out = *m.find(2);
  CHECK(out.offset == 32);
  CHECK(out.role == TensorRole::kOutput);
  CHECK(same(out.lifetime, steps(0, 1)));
  CHECK(out.name == "%2 aten::add.out");
  CHECK(x.name == "%0 input 0");
  CHECK(m.conflicts().empty());
  CHECK(m.problems().empty());
  CHECK(m.sharing_groups().empty());
}

TEST_CASE("maxpool2d.pte: input / values and indices fill the arena exactly at step 0", "[inspect][memory]") {
  Program program = read_real("maxpool2d.pte");
  MemoryPlan m = build_first(program);
  REQUIRE(m.arenas().size() == 1);
  const Arena& a = m.arenas()[0];
  // 1x64x112x112 f32 + 1x64x56x56 i64 + 1x64x56x56 f32, back to back.
  CHECK(a.size == 3211264 + 1605632 + 802816);
  CHECK(a.peak_bytes == a.size);
  CHECK(a.peak_step == 0);
  CHECK(a.never_used_bytes == 0);
  CHECK(a.live_bytes == std::vector<uint64_t>{3211264, 5619712, 802816});
  // The indices (%2) are written by the only instruction and read by nobody.
  CHECK(same(m.find(2)->lifetime, steps(0, 0)));
  CHECK(m.find(2)->role == TensorRole::kActivation);
  CHECK(m.find(1)->role == TensorRole::kOutput);
  CHECK(m.find(1)->producer == 0);
  CHECK(m.find(2)->producer == 0);
  CHECK(a.greedy_bytes == a.size);
  CHECK(m.conflicts().empty());
}

TEST_CASE("xor_training.pte: 72 planned tensors in 624 bytes / peak 560 bytes at step 34", "[inspect][memory]") {
  Program program = read_real("xor_training.pte");
  MemoryPlan m = build_first(program);
  CHECK(m.plan_name() == "forward");
  CHECK(m.instruction_count() == 66);
  REQUIRE(m.arenas().size() == 1);
  const Arena& a = m.arenas()[0];
  CHECK(a.size == 624);
  // 73 tensor values, one of them (%4) a constant.
  CHECK(m.tensors().size() == 72);
  CHECK(a.tensor_count == 72);
  // Peak derived independently (a script over `etscope pte --json`, taking every live tensor's
  // 16-byte slot at each step): 560 bytes, first reached at step 34.
  CHECK(a.peak_bytes == 560);
  CHECK(a.peak_step == 34);
  CHECK(a.live_bytes.size() == 68);
  CHECK(m.conflicts().empty());
  CHECK(m.problems().empty());

  // Lifetimes read off the instruction listing.
  CHECK(same(m.find(0)->lifetime, steps(-1, 66)));   // weight, also an output
  CHECK(same(m.find(5)->lifetime, steps(-1, 61)));   // input x, last read by mm at 61
  CHECK(same(m.find(6)->lifetime, steps(-1, 31)));   // input y, last read at 31
  CHECK(same(m.find(14)->lifetime, steps(2, 50)));   // sigmoid, read again by mm at 50
  CHECK(same(m.find(17)->lifetime, steps(5, 47)));
  CHECK(same(m.find(61)->lifetime, steps(24, 66)));  // loss output
  CHECK(same(m.find(151)->lifetime, steps(65, 66)));

  // Roles: the marker methods say outputs 2..5 are gradients, 6..9 the parameters.
  CHECK(m.find(0)->role == TensorRole::kWeight);
  CHECK(m.find(0)->fqn == "net.linear.weight");
  CHECK(m.find(0)->name == "%0 net.linear.weight");
  CHECK(m.find(3)->role == TensorRole::kWeight);
  CHECK(m.find(5)->role == TensorRole::kInput);
  CHECK(m.find(151)->role == TensorRole::kGradient);
  CHECK(m.find(148)->role == TensorRole::kGradient);
  CHECK(m.find(124)->role == TensorRole::kGradient);
  CHECK(m.find(121)->role == TensorRole::kGradient);
  CHECK(m.find(61)->role == TensorRole::kOutput);
  CHECK(m.find(65)->role == TensorRole::kOutput);
  CHECK(m.find(11)->role == TensorRole::kActivation);

  // Offset 0 is reused by 23 tensors one after another; none are live together.
  bool found = false;
  for (const SharingGroup& g : m.sharing_groups()) {
    if (g.offset != 0) continue;
    found = true;
    CHECK(g.tensors.size() == 23);
    CHECK_FALSE(g.aliases);
  }
  CHECK(found);
  auto largest = m.largest(3);
  REQUIRE(largest.size() == 3);
  CHECK(m.tensors()[largest[0]].nbytes == 80);
}

TEST_CASE("every real program with a memory plan builds without conflicts", "[inspect][memory]") {
  for (const std::string& name : etscope::testing::real_artifacts_with_extension(".pte")) {
    INFO(name);
    Program program = read_real(name);
    for (const ExecutionPlan& plan : program.plans) {
      auto m = MemoryPlan::build(program, plan);
      REQUIRE(m.ok());
      CHECK(m->conflicts().empty());
      CHECK(m->problems().empty());
      for (const Arena& a : m->arenas()) {
        CHECK(a.peak_bytes <= a.size);
        CHECK(a.live_bytes.size() == static_cast<size_t>(m->instruction_count() + 2));
      }
    }
  }
}

TEST_CASE("a plan from another program is rejected", "[inspect][memory][errors]") {
  Program a = read_real("add.pte");
  Program b = read_real("add_v2.pte");
  auto m = MemoryPlan::build(a, b.plans.at(0));
  REQUIRE_FALSE(m.ok());
  CHECK(m.error().code() == ErrorCode::kInvalidArgument);
}

TEST_CASE("a valid crafted chain has the lifetimes the instructions imply", "[inspect][memory]") {
  Program p = etscope::testing::crafted_program(etscope::testing::chain_plan({1, 0}, {1, 16}, {1, 32}));
  MemoryPlan m = build_first(p);
  CHECK(same(m.find(0)->lifetime, steps(-1, 1)));
  CHECK(same(m.find(1)->lifetime, steps(0, 1)));
  CHECK(same(m.find(2)->lifetime, steps(1, 2)));
  CHECK(m.arenas().at(0).live_bytes == std::vector<uint64_t>{16, 32, 48, 16});
  CHECK(m.conflicts().empty());
}

TEST_CASE("memory_id 0 is a problem naming the value / not a crash", "[inspect][memory][errors]") {
  Program p = etscope::testing::crafted_program(etscope::testing::chain_plan({0, 0}, {1, 16}, {1, 32}));
  MemoryPlan m = build_first(p);
  REQUIRE(m.problems().size() == 1);
  CHECK(m.problems()[0] == "plan 'forward' value 0: memory_id 0 is not a valid arena id (the plan has arenas 1..1)");
  // Worded exactly as the reader words it, so the CLI can report each once.
  REQUIRE(p.problems.size() == 1);
  CHECK(p.problems[0] == m.problems()[0]);
  CHECK_FALSE(m.find(0)->placed);
  CHECK(m.arenas().at(0).tensor_count == 2);
  CHECK(m.arenas().at(0).live_bytes == std::vector<uint64_t>{0, 16, 32, 16});
}

TEST_CASE("a memory_id beyond the arenas is a problem", "[inspect][memory][errors]") {
  Program p = etscope::testing::crafted_program(etscope::testing::chain_plan({1, 0}, {7, 0}, {1, 32}));
  MemoryPlan m = build_first(p);
  REQUIRE(m.problems().size() == 1);
  CHECK_THAT(m.problems()[0], Catch::Contains("value 1: memory_id 7 is not a valid arena id"));
  CHECK_FALSE(m.find(1)->placed);
}

TEST_CASE("bytes beyond the arena are a problem", "[inspect][memory][errors]") {
  Program p = etscope::testing::crafted_program(etscope::testing::chain_plan({1, 0}, {1, 16}, {1, 40}));
  MemoryPlan m = build_first(p);
  REQUIRE(m.problems().size() == 1);
  CHECK(m.problems()[0] == "plan 'forward' value 2: planned bytes [40, +16) extend beyond arena 1 (48 bytes)");
  CHECK_FALSE(m.find(2)->placed);
  // An offset so large that offset + size overflows is caught the same way.
  Program q = etscope::testing::crafted_program(
      etscope::testing::chain_plan({1, 0}, {1, 16}, {1, UINT64_MAX - 4}));
  MemoryPlan mq = build_first(q);
  REQUIRE(mq.problems().size() == 1);
  CHECK_THAT(mq.problems()[0], Catch::Contains("extend beyond arena 1"));
}

TEST_CASE("two overlapping tensors live at the same step are a conflict", "[inspect][memory][errors]") {
  // y = relu(x) placed at 8 overlaps x's bytes [8, 16) while both are live (steps 0..1).
  Program p = etscope::testing::crafted_program(etscope::testing::chain_plan({1, 0}, {1, 8}, {1, 32}));
  MemoryPlan m = build_first(p);
  CHECK(m.problems().empty());
  REQUIRE(m.conflicts().size() == 1);
  const Conflict& c = m.conflicts()[0];
  CHECK(m.tensors()[c.first].value == 0);
  CHECK(m.tensors()[c.second].value == 1);
  CHECK(c.overlap_begin == 8);
  CHECK(c.overlap_end == 16);
  CHECK(same(c.steps, steps(0, 1)));
  CHECK(c.message ==
        "plan 'forward': values 0 and 1 overlap on bytes [8, 16) of arena 1 while both are live (steps 0..1; "
        "%0 [0, 16) live -1..1, %1 [8, 24) live 0..1)");
}

TEST_CASE("tensors sharing an offset are aliases / not conflicts", "[inspect][memory]") {
  // An in-place relu: y takes x's slot, and both are live at steps 0..1.
  Program p = etscope::testing::crafted_program(etscope::testing::chain_plan({1, 0}, {1, 0}, {1, 16}, 32));
  MemoryPlan m = build_first(p);
  CHECK(m.conflicts().empty());
  REQUIRE(m.sharing_groups().size() == 1);
  const SharingGroup& g = m.sharing_groups()[0];
  CHECK(g.aliases);
  CHECK(g.offset == 0);
  CHECK(g.tensors.size() == 2);
  CHECK(m.find(0)->group == 0);
  CHECK(m.find(1)->group == 0);
  // Shared bytes count once: at step 0, x/y's slot plus nothing else.
  CHECK(m.arenas().at(0).live_bytes == std::vector<uint64_t>{16, 16, 32, 16});
  // The alias pair is one spec for the greedy bound: 16 + 16.
  CHECK(m.arenas().at(0).greedy_bytes == 32);
}

TEST_CASE("a planned tensor nothing uses gets a note and no lifetime", "[inspect][memory]") {
  ExecutionPlan plan = etscope::testing::chain_plan({1, 0}, {1, 16}, {1, 32}, 64);
  plan.values.push_back(etscope::testing::crafted_tensor({2}, Allocation{1, 48}));
  Program p = etscope::testing::crafted_program(plan);
  MemoryPlan m = build_first(p);
  REQUIRE(m.notes().size() == 1);
  CHECK_THAT(m.notes()[0], Catch::Contains("value 3: planned, but no instruction uses it"));
  CHECK(m.find(3)->lifetime.empty());
  CHECK(m.arenas().at(0).never_used_bytes == 64 - 48 - 8);
}

TEST_CASE("a tensor no instruction writes / at the start of an earlier result / is a view that keeps its base alive",
          "[inspect][memory]") {
  // relu(x) -> y at 16; v, a view of y (memory.view emits no instruction), also at 16;
  // mul(v, x) -> z at 32. y's last own use is step 0, but its bytes are read through v at 1.
  ExecutionPlan plan = etscope::testing::chain_plan({1, 0}, {1, 16}, {1, 32});
  plan.values.push_back(etscope::testing::crafted_tensor({2, 2}, Allocation{1, 16}));  // 3 v
  plan.chains[0].instructions[1].args = {3, 0, 2, 2};
  Program p = etscope::testing::crafted_program(plan);
  MemoryPlan m = build_first(p);
  const PlannedTensor& v = *m.find(3);
  CHECK(v.view_of == 1);
  CHECK(v.name == "%3 view of %1");
  CHECK(v.op_name == "memory.view");
  CHECK(same(v.lifetime, steps(1, 1)));
  CHECK(same(m.find(1)->lifetime, steps(0, 1)));
  REQUIRE(m.sharing_groups().size() == 1);
  CHECK(m.sharing_groups()[0].aliases);
  CHECK(m.conflicts().empty());
  CHECK(m.find(0)->view_of == -1);
}

TEST_CASE("the greedy bound of an XNNPACK program includes the planner's 64-byte padding", "[inspect][memory]") {
  auto program = PteReader::open(etscope::testing::fixture("simple_conv_xnnpack/simple_conv_xnnpack.pte"));
  if (!program.ok()) {
    WARN("fixture simple_conv_xnnpack.pte not available; skipped");
    return;
  }
  MemoryPlan m = build_first(*program);
  REQUIRE(m.arenas().size() == 1);
  const Arena& a = m.arenas()[0];
  // Input 1x3x32x32 f32 (12288 B) and the delegate's output 1x16x32x32 f32 (65536 B), live
  // together at step 0, plus 64 bytes of padding: the arena ExecuTorch wrote.
  CHECK(a.size == 12288 + 65536 + 64);
  CHECK(a.greedy_bytes == a.size);
  CHECK(a.never_used_bytes == 64);
  CHECK(m.find(1)->name == "%1 delegate XnnpackBackend");
}

TEST_CASE("declared arena bytes saturate and only methods over the budget are warned about", "[inspect][memory]") {
  Program program = read_real("add.pte");
  REQUIRE(program.plans.size() == 1);
  CHECK(declared_arena_bytes(program.plans[0]) == 48);
  CHECK(declared_memory_warnings(program, 48).empty());
  const auto one = declared_memory_warnings(program, 47);
  REQUIRE(one.size() == 1);
  CHECK(one[0].rfind("method 'forward' declares 48 bytes (48 B) of planned memory, more than the 47 B", 0) == 0);

  // Sizes whose sum wraps 64 bits, and negative sizes, are "2^64 bytes or more", never small.
  program.plans[0].non_const_buffer_sizes = {0, INT64_MAX, INT64_MAX, 4};
  CHECK(declared_arena_bytes(program.plans[0]) == UINT64_MAX);
  program.plans[0].non_const_buffer_sizes = {0, -16};
  CHECK(declared_arena_bytes(program.plans[0]) == UINT64_MAX);
  const auto neg = declared_memory_warnings(program, UINT64_MAX - 1);
  REQUIRE(neg.size() == 1);
  CHECK(neg[0].find("declares 2^64 bytes or more") != std::string::npos);
}

TEST_CASE("dynamic_seq.pte: bounded-dynamic tensors are planned for their upper bound, and the plan says so",
          "[inspect][memory]") {
  auto p = PteReader::open(etscope::testing::fixture("models/dynamic_seq.pte"));
  REQUIRE(p.ok());
  MemoryPlan m = build_first(*p);
  size_t bounded = 0;
  for (const PlannedTensor& t : m.tensors()) {
    if (t.dynamism != ShapeDynamism::kDynamicBound) continue;
    ++bounded;
    int64_t numel = 1;
    for (int32_t s : t.sizes) numel *= s;
    CHECK(t.nbytes == static_cast<uint64_t>(numel) * *element_size(t.dtype));  // the bound's bytes
  }
  REQUIRE(bounded > 0);
  REQUIRE_FALSE(m.notes().empty());
  CHECK(m.notes().front().find(std::to_string(bounded) + " planned tensors have bounded-dynamic shapes (<=)") == 0);
  CHECK(m.notes().front().find("the plan (arena sizes, byte ranges, peaks) is for the upper bounds") != std::string::npos);
  CHECK(tensor_type_text(m.tensors().front().dtype, {1, 32, 8}, ShapeDynamism::kDynamicBound) == "f32[<=1,<=32,<=8]");
}

namespace {

// forward(x) in the shape of an LLM's KV cache (issue 28 item 3): step 0 update_cache(x, cache)
// writes into the cache it is given (a mutated input, not an out argument) and produces tmp;
// step 1 z = cache * x; step 2 w = z + x, the output. The planner kept the cache for the whole
// method: x [0,16), cache [16,32), tmp and z [32,48), w [48,64).
ExecutionPlan kv_cache_plan() {
  using etscope::testing::crafted_kernel;
  using etscope::testing::crafted_tensor;
  ExecutionPlan plan;
  plan.name = "forward";
  plan.values = {crafted_tensor({4}, Allocation{1, 0}), crafted_tensor({4}, Allocation{1, 16}),
                 crafted_tensor({4}, Allocation{1, 32}), crafted_tensor({4}, Allocation{1, 32}),
                 crafted_tensor({4}, Allocation{1, 48})};
  plan.inputs = {0};
  plan.outputs = {4};
  plan.operators = {{"llama::update_cache", "out"}, {"aten::mul", "out"}, {"aten::add", "out"}};
  Chain chain;
  chain.instructions = {crafted_kernel(0, {0, 1, 2, 2}), crafted_kernel(1, {1, 0, 3, 3}), crafted_kernel(2, {3, 0, 4, 4})};
  plan.chains = {chain};
  plan.non_const_buffer_sizes = {0, 64};
  return plan;
}

}  // namespace

TEST_CASE("a KV cache read before anything writes it is a mutable buffer live over the whole method",
          "[inspect][memory][issue28]") {
  Program p = etscope::testing::crafted_program(kv_cache_plan());
  MemoryPlan m = build_first(p);
  const PlannedTensor& cache = *m.find(1);
  CHECK(cache.role == TensorRole::kBuffer);
  CHECK(cache.name == "%1 mutable buffer");
  CHECK(same(cache.lifetime, steps(-1, 3)));
  // tmp is written by the call that updates the cache: an activation.
  CHECK(m.find(2)->role == TensorRole::kActivation);
  REQUIRE(m.arenas().size() == 1);
  const Arena& a = m.arenas()[0];
  // In the peak (x, cache, z and w at step 2), never space to save, and the plan is sound.
  CHECK(a.peak_bytes == 64);
  CHECK(a.live_bytes[0] == 32);  // before the first instruction: x and the cache
  CHECK(a.greedy_bytes == 64);
  CHECK(a.potential_saving() == 0);
  CHECK(m.conflicts().empty());
}

TEST_CASE("the KV caches of a real LLM export are mutable buffers and the plan stays sound", "[inspect][memory][issue28]") {
  for (const char* name : {"models/kv_cache_decoder.pte", "models/llm_quantized_decoder.pte"}) {
    INFO(name);
    auto program = PteReader::open(etscope::testing::fixture(name));
    REQUIRE(program.ok());
    MemoryPlan m = build_first(*program);
    size_t buffers = 0;
    for (const PlannedTensor& t : m.tensors()) {
      if (t.role != TensorRole::kBuffer) continue;
      ++buffers;
      CHECK(same(t.lifetime, steps(-1, m.instruction_count())));
    }
    CHECK(buffers > 0);
    CHECK(m.conflicts().empty());
    // Every buffer counts in its arena's peak.
    for (const PlannedTensor& t : m.tensors()) {
      if (t.role == TensorRole::kBuffer) CHECK(t.lifetime.contains(m.arenas().at(t.memory_id - 1).peak_step));
    }
  }
}
