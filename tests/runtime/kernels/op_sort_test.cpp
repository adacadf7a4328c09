// Tests of topk (op_sort.cpp).
#include <cstdint>
#include <string>

#include "runtime/kernels/kernel_test_util.h"

using etscope::ScalarType;
using etscope::EValue;
using etscope::testing::KernelCall;

TEST_CASE("topk returns the k largest or smallest with their positions and NaN counts as largest", "[kernels][sort]") {
  KernelCall c;
  EValue* x = c.f32({5}, {3, NAN, 1, 5, 3});
  EValue* v = c.f32({3}, {}, 3);
  EValue* i = c.i64({3}, {}, 3);
  REQUIRE_FALSE(c.run("aten::topk.values", {x, c.integer(3), c.integer(-1), c.boolean_scalar(true), c.boolean_scalar(true), v, i}).failed());
  const auto vals = c.t(v).values<float>();
  CHECK(std::isnan(vals[0]));
  CHECK(vals[1] == 5);
  CHECK(vals[2] == 3);
  // The two 3s tie: which one comes is the selection algorithm's (ExecuTorch's) choice.
  const auto first = c.t(i).values<int64_t>();
  CHECK(first[0] == 1);
  CHECK(first[1] == 3);
  CHECK((first[2] == 0 || first[2] == 4));
  REQUIRE_FALSE(c.run("aten::topk.values", {x, c.integer(2), c.integer(0), c.boolean_scalar(false), c.boolean_scalar(true), v, i}).failed());
  CHECK(c.t(v).values<float>() == std::vector<float>{1, 3});
  CHECK(c.t(i).values<int64_t>()[0] == 2);
  REQUIRE(c.run("aten::topk.values", {x, c.integer(6), c.integer(0), c.boolean_scalar(true), c.boolean_scalar(true), v, i}).failed());
  REQUIRE(c.run("aten::topk.values", {x, c.integer(1), c.integer(1), c.boolean_scalar(true), c.boolean_scalar(true), v, i}).failed());
  REQUIRE(c.run("aten::topk.values", {x, c.integer(1), c.integer(0), c.boolean_scalar(true), c.boolean_scalar(true), v, i}, 8).failed());
}
