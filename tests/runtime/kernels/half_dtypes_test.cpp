// Tests of float16 and bfloat16 across kernels: conversions, elementwise kernels and float32 kernels that
// take half inputs through float32 copies.
//
// The former tests/runtime/kernel_half_test.cpp:
// Half and bfloat16 through the elementwise kernels and copies: bit patterns of IEEE binary16
// (1.0 = 0x3C00, 0.5 = 0x3800, 65504 = 0x7BFF, smallest subnormal 2^-24 = 0x0001) and bfloat16
// (1.0 = 0x3F80; 0.1f = 0x3DCCCCCD rounds to 0x3DCD). Also: float -> int conversions saturate.
#include <cmath>
#include <limits>
#include <numeric>

#include "runtime/kernels/kernel_test_util.h"

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

TEST_CASE("float32 kernels take half and bfloat16 through float32 copies", "[kernels][half]") {
  KernelCall c;
  // softmax over [0, ln 3] in float16 -> [0.25, 0.75].
  EValue* x = c.tensor<uint16_t>(ScalarType::kHalf, {2}, {0x0000, 0x3C65});  // 0, 1.0986 (ln 3)
  EValue* y = c.tensor<uint16_t>(ScalarType::kHalf, {2});
  REQUIRE_FALSE(c.run("aten::_softmax.out", {x, c.integer(0), c.boolean_scalar(false), y, y}).failed());
  CHECK(c.t(y).values<uint16_t>() == std::vector<uint16_t>{0x3400, 0x3A00});
  // A multi-output kernel: layer norm in bfloat16 writes all three outputs.
  EValue* b = c.tensor<uint16_t>(ScalarType::kBFloat16, {1, 2}, {0x3F80, 0x4040});  // 1, 3
  EValue* o = c.tensor<uint16_t>(ScalarType::kBFloat16, {1, 2});
  EValue* mean = c.tensor<uint16_t>(ScalarType::kBFloat16, {1, 1});
  EValue* rstd = c.tensor<uint16_t>(ScalarType::kBFloat16, {1, 1});
  REQUIRE_FALSE(c.run("aten::native_layer_norm.out", {b, c.int_list({2}), c.none(), c.none(), c.dbl(0.0), o, mean, rstd,
                                                       c.tensor_list({o, mean, rstd})})
                    .failed());
  CHECK(c.t(o).values<uint16_t>() == std::vector<uint16_t>{0xBF80, 0x3F80});  // -1, 1
  CHECK(c.t(mean).values<uint16_t>()[0] == 0x4000);                          // 2
  CHECK(c.t(rstd).values<uint16_t>()[0] == 0x3F80);                          // 1
  // A matrix product with its scratch, in float16: [1 2] x [[1],[2]] = 5.
  EValue* mm = c.tensor<uint16_t>(ScalarType::kHalf, {1, 1});
  REQUIRE_FALSE(c.run("aten::mm.out", {c.tensor<uint16_t>(ScalarType::kHalf, {1, 2}, {0x3C00, 0x4000}),
                                      c.tensor<uint16_t>(ScalarType::kHalf, {2, 1}, {0x3C00, 0x4000}), mm, mm})
                    .failed());
  CHECK(c.t(mm).values<uint16_t>()[0] == 0x4500);
  // Too little scratch for the copies is a failure, not an overflow.
  CHECK(c.run("aten::_softmax.out", {x, c.integer(0), c.boolean_scalar(false), y, y}, 16).failed());
}
