// Half and bfloat16 through the elementwise kernels and copies: bit patterns of IEEE binary16
// (1.0 = 0x3C00, 0.5 = 0x3800, 65504 = 0x7BFF, smallest subnormal 2^-24 = 0x0001) and bfloat16
// (1.0 = 0x3F80; 0.1f = 0x3DCCCCCD rounds to 0x3DCD). Also: float -> int conversions saturate.
#include <cmath>
#include <limits>

#include "runtime/kernel_test_util.h"

using etscope::ScalarType;
using etscope::EValue;
using etscope::testing::KernelCall;

TEST_CASE("float32 -> float16 / bfloat16 copies round to nearest even", "[kernels][half]") {
  KernelCall c;
  EValue* h = c.tensor<uint16_t>(ScalarType::kHalf, {8});
  REQUIRE_FALSE(c.run("dim_order_ops::_to_dim_order_copy.out",
                      {c.f32({8}, {1.0f, -2.0f, 65504.0f, 65520.0f, 5.9604645e-08f, 1e-8f, 0.1f, NAN}),
                       c.boolean_scalar(false), c.none(), h, h})
                    .failed());
  const auto bits = c.t(h).values<uint16_t>();
  CHECK(bits[0] == 0x3C00);
  CHECK(bits[1] == 0xC000);
  CHECK(bits[2] == 0x7BFF);
  CHECK(bits[3] == 0x7C00);  // rounds past the largest half: infinity
  CHECK(bits[4] == 0x0001);
  CHECK(bits[5] == 0x0000);
  CHECK(bits[6] == 0x2E66);
  CHECK((bits[7] & 0x7C00) == 0x7C00);
  CHECK((bits[7] & 0x03FF) != 0);
  // And back.
  EValue* f = c.f32({8});
  REQUIRE_FALSE(c.run("aten::_to_copy.out", {h, c.boolean_scalar(false), c.none(), f, f}).failed());
  const auto back = c.t(f).values<float>();
  CHECK(back[0] == 1.0f);
  CHECK(back[2] == 65504.0f);
  CHECK(std::isinf(back[3]));
  CHECK(back[4] == 5.9604645e-08f);
  CHECK(back[6] == Approx(0.0999755859375));
  CHECK(std::isnan(back[7]));
  EValue* b = c.tensor<uint16_t>(ScalarType::kBFloat16, {3});
  REQUIRE_FALSE(c.run("aten::_to_copy.out", {c.f32({3}, {1.0f, 0.1f, -INFINITY}), c.boolean_scalar(false), c.none(), b, b}).failed());
  CHECK(c.t(b).values<uint16_t>() == std::vector<uint16_t>{0x3F80, 0x3DCD, 0xFF80});
}

TEST_CASE("elementwise kernels on half and bfloat16 tensors", "[kernels][half]") {
  KernelCall c;
  EValue* sum = c.tensor<uint16_t>(ScalarType::kHalf, {2});
  REQUIRE_FALSE(c.run("aten::add.out", {c.tensor<uint16_t>(ScalarType::kHalf, {2}, {0x3C00, 0x3800}),
                                        c.tensor<uint16_t>(ScalarType::kHalf, {2}, {0x4000, 0x3400}), c.integer(1), sum, sum})
                    .failed());
  CHECK(c.t(sum).values<uint16_t>() == std::vector<uint16_t>{0x4200, 0x3A00});  // 3.0, 0.75
  // bf16 * a scalar, then tanh(0) and relu.
  EValue* m = c.tensor<uint16_t>(ScalarType::kBFloat16, {2});
  REQUIRE_FALSE(c.run("aten::mul.Scalar_out", {c.tensor<uint16_t>(ScalarType::kBFloat16, {2}, {0x3F80, 0xC000}), c.integer(3), m, m}).failed());
  CHECK(c.t(m).values<uint16_t>() == std::vector<uint16_t>{0x4040, 0xC0C0});  // 3.0, -6.0
  EValue* t = c.tensor<uint16_t>(ScalarType::kBFloat16, {2});
  REQUIRE_FALSE(c.run("aten::relu.out", {m, t, t}).failed());
  CHECK(c.t(t).values<uint16_t>() == std::vector<uint16_t>{0x4040, 0x0000});
  EValue* cmp = c.boolean({2});
  REQUIRE_FALSE(c.run("aten::gt.Tensor_out", {m, c.f32({1}, {0}), cmp, cmp}).failed());
  CHECK(c.t(cmp).values<bool>() == std::vector<bool>{true, false});
  // Kernels without half support still refuse it.
  REQUIRE(c.run("aten::bitwise_not.out", {sum, sum, sum}).failed());
}

TEST_CASE("floating -> integral conversions saturate instead of overflowing", "[kernels][half]") {
  KernelCall c;
  EValue* i = c.tensor<int32_t>(ScalarType::kInt, {4});
  REQUIRE_FALSE(c.run("aten::_to_copy.out", {c.f32({4}, {1e20f, -1e20f, NAN, -7.9f}), c.boolean_scalar(false), c.none(), i, i}).failed());
  CHECK(c.t(i).values<int32_t>() == std::vector<int32_t>{std::numeric_limits<int32_t>::max(), std::numeric_limits<int32_t>::min(), 0, -7});
}
