// gui/model/memory_model: the arena picture's rectangles and layout.
#include <catch2/catch.hpp>

#include <algorithm>

#include "etscope/formats/pte_reader.h"
#include "model/memory_model.h"
#include "testing/test_util.h"

using namespace etscope;
using namespace etscope::gui;

namespace {
Program open_program(const std::string& path) {
  auto p = PteReader::open(path);
  if (!p.ok()) FAIL(p.error().message());
  return std::move(p).value();
}
size_t plan_index(const Program& p, const std::string& name) {
  return static_cast<size_t>(p.find_plan(name) - &p.plans[0]);
}
}  // namespace

TEST_CASE("one rectangle per placed, live tensor, inside its arena", "[gui][memory]") {
  const Program program = open_program(etscope::testing::real_artifact("xor_training.pte"));
  auto built = MemoryModel::build(program, plan_index(program, "forward"));
  REQUIRE(built.ok());
  const MemoryModel& m = *built;
  REQUIRE(m.columns().size() == 1);
  const ArenaColumn& col = m.columns()[0];
  CHECK(col.memory_id == 1);
  CHECK(col.size == 624);
  CHECK(col.x0 == 0.0);
  CHECK(col.x1 == Approx(1.0));
  CHECK(col.peak_bytes == 560);
  CHECK(col.peak_step == 34);
  size_t expected = 0;
  for (const auto& t : m.plan().tensors()) expected += t.placed && !t.lifetime.empty();
  CHECK(m.rects().size() == expected);
  CHECK(m.rects().size() == 72);
  CHECK(col.rects.size() == m.rects().size());
  for (size_t i = 1; i < col.rects.size(); ++i) CHECK(m.rects()[col.rects[i - 1]].begin <= m.rects()[col.rects[i]].begin);
  for (const MemoryRect& r : m.rects()) {
    CHECK(r.begin < r.end);
    CHECK(r.end <= col.size);
    CHECK(r.first_step >= -1);
    CHECK(r.last_step <= m.plan().instruction_count());
    CHECK(r.first_step <= r.last_step);
    CHECK_FALSE(r.conflict);
  }
  CHECK(m.step_count() == 68);
  CHECK(m.role_counts()[static_cast<size_t>(inspect::TensorRole::kWeight)] > 0);
  CHECK(m.role_counts()[static_cast<size_t>(inspect::TensorRole::kGradient)] > 0);
}

TEST_CASE("hit-testing finds the tensor under a point, the smallest when several share it", "[gui][memory]") {
  const Program program = open_program(etscope::testing::real_artifact("xor_training.pte"));
  auto built = MemoryModel::build(program, plan_index(program, "forward"));
  REQUIRE(built.ok());
  const MemoryModel& m = *built;
  for (size_t r = 0; r < m.rects().size(); ++r) {
    const MemoryRect& rect = m.rects()[r];
    const double mid = (static_cast<double>(rect.begin) + static_cast<double>(rect.end)) / 2;
    const int64_t hit = m.hit(rect.column, mid, rect.first_step);
    REQUIRE(hit >= 0);
    const MemoryRect& found = m.rects()[static_cast<size_t>(hit)];
    CHECK(static_cast<double>(found.begin) <= mid);
    CHECK(mid < static_cast<double>(found.end));
    CHECK(found.first_step <= rect.first_step);
    CHECK(rect.first_step <= found.last_step);
    CHECK(found.end - found.begin <= rect.end - rect.begin);
  }
  CHECK(m.hit(0, 10'000, 0) == -1);   // beyond the arena
  CHECK(m.hit(5, 0, 0) == -1);        // no such column
  // The weight %0 at [320, 400) lives from start to end.
  const int64_t w = m.hit(0, 330, -1);
  REQUIRE(w >= 0);
  const std::string text = m.describe(static_cast<size_t>(w));
  CHECK(text.find("value %0, weight") != std::string::npos);
  CHECK(text.find("f32[10,2], 80 bytes") != std::string::npos);
  CHECK(text.find("arena 1 [320, 400)") != std::string::npos);
  CHECK(text.find("live from step start to end") != std::string::npos);
}

TEST_CASE("thin tensors are drawn last and found within the slack", "[gui][memory]") {
  const Program program = open_program(etscope::testing::real_artifact("xor_training.pte"));
  auto built = MemoryModel::build(program, plan_index(program, "forward"));
  REQUIRE(built.ok());
  const MemoryModel& m = *built;
  // Every rectangle once, widest first.
  REQUIRE(m.draw_order().size() == m.rects().size());
  std::vector<bool> seen(m.rects().size(), false);
  for (size_t i = 0; i < m.draw_order().size(); ++i) {
    const MemoryRect& r = m.rects()[m.draw_order()[i]];
    seen[m.draw_order()[i]] = true;
    if (i > 0) {
      const MemoryRect& before = m.rects()[m.draw_order()[i - 1]];
      CHECK(before.end - before.begin >= r.end - r.begin);
    }
  }
  CHECK(std::find(seen.begin(), seen.end(), false) == seen.end());
  // Just outside a tensor: missed without slack, found with it (the mouse on a widened sliver).
  const MemoryRect& thin = m.rects()[m.draw_order().back()];
  const double beside = static_cast<double>(thin.end) + 0.5;
  const int64_t exact = m.hit(thin.column, beside, thin.first_step);
  const int64_t slack = m.hit(thin.column, beside, thin.first_step, 1.0);
  REQUIRE(slack >= 0);
  CHECK(m.rects()[static_cast<size_t>(slack)].end - m.rects()[static_cast<size_t>(slack)].begin <= thin.end - thin.begin);
  if (exact >= 0) CHECK(exact != static_cast<int64_t>(m.draw_order().back()));
  // Each column's arena is the plan's, for its live bytes.
  for (const ArenaColumn& col : m.columns()) CHECK(m.plan().arenas()[col.arena].memory_id == col.memory_id);
}

TEST_CASE("an instruction's tensors are found by its step", "[gui][memory]") {
  const Program program = open_program(etscope::testing::fixture("simple_conv/simple_conv.pte"));
  auto built = MemoryModel::build(program, 0);
  REQUIRE(built.ok());
  const MemoryModel& m = *built;
  // convolution: input %2 -> %3; relu: %3 -> %18.
  auto values_at = [&](int64_t step) {
    std::vector<int32_t> v;
    for (uint32_t r : m.rects_at_step(step)) v.push_back(m.plan().tensors()[m.rects()[r].tensor].value);
    std::sort(v.begin(), v.end());
    return v;
  };
  CHECK(values_at(0) == std::vector<int32_t>{2, 3});
  CHECK(values_at(1) == std::vector<int32_t>{3, 18});
  CHECK(m.rects_at_step(2).empty());
  CHECK(m.rects_at_step(-1).empty());
}

TEST_CASE("several arenas share the width by size with a floor for small ones", "[gui][memory]") {
  // Every fixture program with more than one arena would do; build one by hand from xor's plan.
  Program program = open_program(etscope::testing::real_artifact("xor_training.pte"));
  ExecutionPlan& plan = program.plans[plan_index(program, "forward")];
  plan.non_const_buffer_sizes.push_back(16);  // a tiny second arena nothing uses
  auto built = MemoryModel::build(program, plan_index(program, "forward"));
  REQUIRE(built.ok());
  const auto& cols = built->columns();
  REQUIRE(cols.size() == 2);
  CHECK(cols[0].x0 == 0.0);
  CHECK(cols[0].x1 < cols[1].x0);                 // a gap between arenas
  CHECK(cols[1].x1 == Approx(1.0));
  CHECK(cols[1].x1 - cols[1].x0 >= (cols[0].x1 - cols[0].x0) * 0.08);  // never a sliver
  CHECK(cols[1].rects.empty());
}

TEST_CASE("an LLM's KV caches are buffers drawn over every step (issue 28)", "[gui][memory][issue28]") {
  const Program program = open_program(etscope::testing::fixture("models/kv_cache_decoder.pte"));
  auto built = MemoryModel::build(program, plan_index(program, "forward"));
  REQUIRE(built.ok());
  const int64_t T = built->plan().instruction_count();
  size_t buffers = 0;
  for (const MemoryRect& r : built->rects()) {
    if (r.role != inspect::TensorRole::kBuffer) continue;
    ++buffers;
    CHECK(r.first_step == -1);
    CHECK(r.last_step == T);
  }
  CHECK(buffers > 0);
  CHECK(built->role_counts()[static_cast<size_t>(inspect::TensorRole::kBuffer)] == buffers);
}
