// quantized_decomposed:: quantize / dequantize, per tensor and per channel. With scale 0.5 the
// products x * (1 / scale) are exact, so round-half-to-even and clamping are seen directly.
#include <cmath>
#include <string>

#include "runtime/kernel_test_util.h"

using etscope::ScalarType;
using etscope::EValue;
using etscope::testing::KernelCall;

namespace {
int64_t code(ScalarType t) { return static_cast<int64_t>(t); }
}  // namespace

TEST_CASE("quantize_per_tensor rounds half to even, adds the zero point and clamps", "[kernels][quantize]") {
  KernelCall c;
  EValue* q = c.tensor<uint8_t>(ScalarType::kByte, {2, 4});
  REQUIRE_FALSE(c.run("quantized_decomposed::quantize_per_tensor.out",
                      {c.f32({2, 4}, {-2, 0.25f, 0.75f, 1, 200, NAN, 0, -0.25f}), c.dbl(0.5), c.integer(3), c.integer(0),
                       c.integer(255), c.integer(code(ScalarType::kByte)), q, q})
                    .failed());
  CHECK(c.t(q).values<uint8_t>() == std::vector<uint8_t>{0, 3, 5, 5, 255, 3, 3, 3});
  // The .Tensor_out overload reads one-element scale / zero_point tensors; int8 with a narrower range.
  EValue* q8 = c.tensor<int8_t>(ScalarType::kChar, {3});
  REQUIRE_FALSE(c.run("quantized_decomposed::quantize_per_tensor.Tensor_out",
                      {c.f32({3}, {-100, 1.5f, 100}), c.tensor<double>(ScalarType::kDouble, {1}, {0.5}), c.i64({1}, {-1}),
                       c.integer(-127), c.integer(127), c.integer(code(ScalarType::kChar)), q8, q8})
                    .failed());
  CHECK(c.t(q8).values<int8_t>() == std::vector<int8_t>{-127, 2, 127});
  // Rejected: dtype argument not the output's, range outside the dtype, float output.
  auto ctx = c.run("quantized_decomposed::quantize_per_tensor.out",
                   {c.f32({1}), c.dbl(0.5), c.integer(0), c.integer(0), c.integer(255), c.integer(code(ScalarType::kChar)),
                    c.tensor<uint8_t>(ScalarType::kByte, {1}), c.none()});
  REQUIRE(ctx.failed());
  CHECK(std::string(ctx.message()).find("dtype") != std::string::npos);
  ctx = c.run("quantized_decomposed::quantize_per_tensor.out",
              {c.f32({1}), c.dbl(0.5), c.integer(0), c.integer(-1), c.integer(255), c.integer(code(ScalarType::kByte)),
               c.tensor<uint8_t>(ScalarType::kByte, {1}), c.none()});
  REQUIRE(ctx.failed());
  REQUIRE(c.run("quantized_decomposed::quantize_per_tensor.out",
                {c.f32({1}), c.dbl(0.5), c.integer(0), c.integer(0), c.integer(1), c.integer(code(ScalarType::kFloat)),
                 c.f32({1}), c.none()})
              .failed());
}

TEST_CASE("dequantize_per_tensor: (q - zero_point) * scale", "[kernels][quantize]") {
  KernelCall c;
  EValue* x = c.f32({4});
  REQUIRE_FALSE(c.run("quantized_decomposed::dequantize_per_tensor.out",
                      {c.tensor<uint8_t>(ScalarType::kByte, {4}, {0, 3, 5, 255}), c.dbl(0.5), c.integer(3), c.integer(0),
                       c.integer(255), c.integer(code(ScalarType::kByte)), c.none(), x, x})
                    .failed());
  CHECK(c.t(x).values<float>() == std::vector<float>{-1.5f, 0, 1, 126});
  EValue* xt = c.f32({2});
  REQUIRE_FALSE(c.run("quantized_decomposed::dequantize_per_tensor.Tensor_out",
                      {c.tensor<int8_t>(ScalarType::kChar, {2}, {-128, 127}), c.f32({1}, {0.25f}), c.i64({1}, {0}),
                       c.integer(-128), c.integer(127), c.integer(code(ScalarType::kChar)),
                       c.integer(code(ScalarType::kFloat)), xt, xt})
                    .failed());
  CHECK(c.t(xt).values<float>() == std::vector<float>{-32, 31.75f});
  // out_dtype naming another dtype, two-element scale tensor.
  REQUIRE(c.run("quantized_decomposed::dequantize_per_tensor.out",
                {c.tensor<uint8_t>(ScalarType::kByte, {4}), c.dbl(0.5), c.integer(3), c.integer(0), c.integer(255),
                 c.integer(code(ScalarType::kByte)), c.integer(code(ScalarType::kDouble)), x, x})
              .failed());
  REQUIRE(c.run("quantized_decomposed::dequantize_per_tensor.Tensor_out",
                {c.tensor<int8_t>(ScalarType::kChar, {2}), c.f32({2}), c.i64({1}), c.integer(-128), c.integer(127),
                 c.integer(code(ScalarType::kChar)), c.none(), xt, xt})
              .failed());
}

TEST_CASE("quantize / dequantize per channel along a (negative) axis", "[kernels][quantize]") {
  KernelCall c;
  EValue* q = c.tensor<int8_t>(ScalarType::kChar, {2, 3});
  REQUIRE_FALSE(c.run("quantized_decomposed::quantize_per_channel.out",
                      {c.f32({2, 3}, {1, 2, -3, 1, 2, -3}), c.tensor<double>(ScalarType::kDouble, {2}, {1.0, 0.5}),
                       c.i64({2}, {0, 1}), c.integer(0), c.integer(-128), c.integer(127),
                       c.integer(code(ScalarType::kChar)), q, q})
                    .failed());
  CHECK(c.t(q).values<int8_t>() == std::vector<int8_t>{1, 2, -3, 3, 5, -5});
  // Dequantize along the last axis (-1), no zero points.
  EValue* x = c.f32({2, 3});
  REQUIRE_FALSE(c.run("quantized_decomposed::dequantize_per_channel.out",
                      {q, c.f32({3}, {1, 2, 4}), c.none(), c.integer(-1), c.integer(-128), c.integer(127),
                       c.integer(code(ScalarType::kChar)), c.none(), x, x})
                    .failed());
  CHECK(c.t(x).values<float>() == std::vector<float>{1, 4, -12, 3, 10, -20});
  // One scale per channel is required; the axis must exist.
  REQUIRE(c.run("quantized_decomposed::dequantize_per_channel.out",
                {q, c.f32({2}, {1, 2}), c.none(), c.integer(-1), c.integer(-128), c.integer(127),
                 c.integer(code(ScalarType::kChar)), c.none(), x, x})
              .failed());
  auto ctx = c.run("quantized_decomposed::quantize_per_channel.out",
                   {c.f32({2, 3}), c.tensor<double>(ScalarType::kDouble, {2}), c.i64({2}), c.integer(2), c.integer(-128),
                    c.integer(127), c.integer(code(ScalarType::kChar)), q, q});
  REQUIRE(ctx.failed());
  CHECK(std::string(ctx.message()).find("axis") != std::string::npos);
}
