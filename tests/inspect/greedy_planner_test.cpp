// GreedyPlanner on small hand-worked examples of ExecuTorch's greedy algorithm.
#include <catch2/catch.hpp>

#include "etscope/inspect/greedy_planner.h"

using namespace etscope::inspect;

TEST_CASE("greedy planner reuses time-disjoint slots and stacks within an object", "[inspect][greedy]") {
  // By hand, largest first: D(48) opens object 0. A(32, steps 0..2) is disjoint from D (4..6):
  // offset 0 of object 0. B(16, 1..3) overlaps A, so it goes above A at 32 (32 + 16 <= 48).
  // C(16, 3..5) overlaps D and B: no room in object 0 (48 + 16 > 48), new object 1 at 48.
  // E(8 -> 16, 0..6) overlaps everything: new object 2 at 64. Total 80.
  std::vector<GreedyRequest> r = {
      {32, {0, 2}},  // A
      {16, {1, 3}},  // B
      {16, {3, 5}},  // C
      {48, {4, 6}},  // D
      {8, {0, 6}},   // E
  };
  GreedyPlan plan = GreedyPlanner::plan(r);
  CHECK(plan.offsets == std::vector<uint64_t>{0, 32, 48, 0, 64});
  CHECK(plan.object_sizes == std::vector<uint64_t>{48, 16, 16});
  CHECK(plan.total_bytes == 80);
}

TEST_CASE("greedy planner rounds sizes up to the alignment", "[inspect][greedy]") {
  std::vector<GreedyRequest> r = {{4, {0, 1}}, {4, {0, 1}}, {4, {0, 1}}};
  CHECK(GreedyPlanner::plan(r).total_bytes == 48);
  CHECK(GreedyPlanner::plan(r, 1).total_bytes == 12);
  CHECK(round_up(17, 16) == 32);
  CHECK(round_up(0, 16) == 0);
}

TEST_CASE("greedy planner gives disjoint lifetimes one slot", "[inspect][greedy]") {
  std::vector<GreedyRequest> r = {{64, {0, 1}}, {64, {2, 3}}, {32, {4, 5}}};
  GreedyPlan plan = GreedyPlanner::plan(r);
  CHECK(plan.total_bytes == 64);
  CHECK(plan.offsets == std::vector<uint64_t>{0, 0, 0});
}

TEST_CASE("greedy planner ignores requests without a lifetime", "[inspect][greedy]") {
  std::vector<GreedyRequest> r = {{64, Lifetime{}}, {16, {0, 0}}};
  GreedyPlan plan = GreedyPlanner::plan(r);
  CHECK(plan.total_bytes == 16);
  CHECK(GreedyPlanner::plan({}).total_bytes == 0);
}
