// Tests of bitwise operators (op_bitwise.cpp).
#include <cstdint>
#include <string>

#include "runtime/kernels/kernel_test_util.h"

using etscope::ScalarType;
using etscope::EValue;
using etscope::testing::KernelCall;

TEST_CASE("bit shifts by a negative amount or the type's width or more give 0 or -1 and never hit undefined behaviour", "[kernels][pointwise]") {
  KernelCall c;
  EValue* out = c.tensor<int32_t>(ScalarType::kInt, {4});
  REQUIRE_FALSE(c.run("aten::bitwise_left_shift.Tensor_out",
                      {c.tensor<int32_t>(ScalarType::kInt, {4}, {1, -1, 3, 1}), c.tensor<int32_t>(ScalarType::kInt, {4}, {31, 1, 32, -1}), out}).failed());
  CHECK(c.t(out).values<int32_t>() == std::vector<int32_t>{INT32_MIN, -2, 0, 0});
  REQUIRE_FALSE(c.run("aten::bitwise_right_shift.Tensor_out",
                      {c.tensor<int32_t>(ScalarType::kInt, {4}, {-8, 8, -8, 8}), c.tensor<int32_t>(ScalarType::kInt, {4}, {2, 2, 40, 40}), out}).failed());
  CHECK(c.t(out).values<int32_t>() == std::vector<int32_t>{-2, 2, -1, 0});
  REQUIRE(c.run("aten::bitwise_left_shift.Tensor_out", {c.f32({4}), c.f32({4}), c.f32({4})}).failed());
}
