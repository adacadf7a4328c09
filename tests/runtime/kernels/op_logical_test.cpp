// Tests of logical operators (op_logical.cpp).
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>

#include "runtime/kernels/kernel_test_util.h"

using etscope::ScalarType;
using etscope::EValue;
using etscope::testing::KernelCall;

TEST_CASE("logical and bitwise and / or / xor", "[kernels][pointwise]") {
  KernelCall c;
  EValue* la = c.boolean({4});
  REQUIRE_FALSE(c.run("aten::logical_and.out", {c.f32({4}, {0, 1, 2, 0}), c.i64({4}, {0, 0, 3, 5}), la, la}).failed());
  CHECK(c.t(la).values<bool>() == std::vector<bool>{false, false, true, false});
  EValue* lo = c.boolean({2, 2});
  REQUIRE_FALSE(c.run("aten::logical_or.out", {c.boolean({2, 1}, {true, false}), c.boolean({2}, {false, true}), lo, lo}).failed());
  CHECK(c.t(lo).values<bool>() == std::vector<bool>{true, true, false, true});
  EValue* lx = c.boolean({2});
  REQUIRE_FALSE(c.run("aten::logical_xor.out", {c.i64({2}, {0, 7}), c.i64({2}, {1, 1}), lx, lx}).failed());
  CHECK(c.t(lx).values<bool>() == std::vector<bool>{true, false});
  EValue* ba = c.i64({3});
  REQUIRE_FALSE(c.run("aten::bitwise_and.Tensor_out", {c.i64({3}, {6, 5, -1}), c.i64({3}, {3, 4, 9}), ba, ba}).failed());
  CHECK(c.t(ba).values<int64_t>() == std::vector<int64_t>{2, 4, 9});
  EValue* bo = c.tensor<int32_t>(ScalarType::kInt, {2});
  REQUIRE_FALSE(c.run("aten::bitwise_or.Scalar_out", {c.tensor<int32_t>(ScalarType::kInt, {2}, {1, 8}), c.integer(6), bo, bo}).failed());
  CHECK(c.t(bo).values<int32_t>() == std::vector<int32_t>{7, 14});
  EValue* bx = c.boolean({2});
  REQUIRE_FALSE(c.run("aten::bitwise_xor.Tensor_out", {c.boolean({2}, {true, true}), c.boolean({2}, {true, false}), bx, bx}).failed());
  CHECK(c.t(bx).values<bool>() == std::vector<bool>{false, true});
  auto ctx = c.run("aten::bitwise_and.Tensor_out", {c.f32({1}), c.i64({1}), c.i64({1}), c.none()});
  REQUIRE(ctx.failed());
  CHECK(std::string(ctx.message()).find("integral") != std::string::npos);
}
