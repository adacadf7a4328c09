// Tests of weight-only quantised embeddings and matrix products (op_quantized_weight.cpp).
//
// The former tests/runtime/kernel_quantized_weight_test.cpp:
// Weight-only quantised kernels (embedding_byte / 4bit / 2bit, mixed_mm, mixed_linear), the older
// flow's quantised add, allclose, rand / randn, the in-place copy_ / index_put_, the antialiased
// bilinear resize, and half / bfloat16 through the float32 kernels. Expected values are worked
// out by hand from the operators' definitions; the conformance suite checks the same kernels
// against ExecuTorch's runtime.
#include <cmath>
#include <numeric>

#include "runtime/kernels/kernel_test_util.h"

using etscope::ScalarType;
using etscope::EValue;
using etscope::testing::KernelCall;

namespace {

uint16_t half_bits(float f) {
  // Exact for the small values these tests use (integers and halves up to 2048).
  if (f == 0.0f) return 0;
  uint32_t b;
  std::memcpy(&b, &f, 4);
  return static_cast<uint16_t>(((b >> 16) & 0x8000u) | ((((b >> 23) & 0xFFu) - 112u) << 10) | ((b >> 13) & 0x3FFu));
}

}  // namespace

TEST_CASE("embedding_byte dequantises the gathered rows per row and per group", "[kernels][qweight]") {
  KernelCall c;
  // 3 rows of 4 uint8 values; per-row scale and zero point.
  EValue* w = c.tensor<uint8_t>(ScalarType::kByte, {3, 4}, {0, 1, 2, 3, 10, 20, 30, 40, 255, 128, 0, 7});
  EValue* scales = c.f32({3}, {1.0f, 0.5f, 2.0f});
  EValue* zps = c.f32({3}, {0.0f, 10.0f, 128.0f});
  EValue* idx = c.i64({2}, {2, 1});
  EValue* out = c.f32({2, 4});
  REQUIRE_FALSE(c.run("quantized_decomposed::embedding_byte.out", {w, scales, zps, c.integer(0), c.integer(255), idx, out, out}).failed());
  CHECK(c.t(out).values<float>() == std::vector<float>{254, 0, -256, -242, 0, 5, 10, 15});
  // Two groups of two columns per row; no zero points; int8 weight; float16 output through dtype_out.
  EValue* w8 = c.tensor<int8_t>(ScalarType::kChar, {1, 4}, {-1, 2, -3, 4});
  EValue* gscales = c.f32({1, 2}, {0.5f, 2.0f});
  EValue* h = c.tensor<uint16_t>(ScalarType::kHalf, {1, 1, 4});
  REQUIRE_FALSE(c.run("quantized_decomposed::embedding_byte.dtype_out",
                      {w8, gscales, c.none(), c.integer(-128), c.integer(127), c.i64({1, 1}, {0}), c.integer(5), h, h})
                    .failed());
  CHECK(c.t(h).values<uint16_t>() == std::vector<uint16_t>{half_bits(-0.5f), half_bits(1.0f), half_bits(-6.0f), half_bits(8.0f)});
}

TEST_CASE("embedding_4bit and embedding_2bit unpack their bytes as ExecuTorch packs them", "[kernels][qweight]") {
  KernelCall c;
  // 4-bit: the even column is the high nibble, values are stored + 8.
  EValue* w4 = c.tensor<uint8_t>(ScalarType::kByte, {2, 2}, {0x1F, 0x80, 0x00, 0xFF});
  EValue* out4 = c.f32({2, 4});
  REQUIRE_FALSE(c.run("quantized_decomposed::embedding_4bit.out",
                      {w4, c.f32({2}, {1.0f, 0.5f}), c.none(), c.integer(-8), c.integer(7), c.i64({2}, {0, 1}), out4, out4})
                    .failed());
  CHECK(c.t(out4).values<float>() == std::vector<float>{-7, 7, 0, -8, -4, -4, 3.5f, 3.5f});
  // 2-bit: four values per byte, the lowest bits first, stored + 2; int32 indices.
  EValue* w2 = c.tensor<uint8_t>(ScalarType::kByte, {1, 1}, {0xE4});
  EValue* out2 = c.f32({1, 4});
  REQUIRE_FALSE(c.run("quantized_decomposed::embedding_2bit.out",
                      {w2, c.f32({1}, {3.0f}), c.f32({1}, {1.0f}), c.integer(-2), c.integer(1),
                       c.tensor<int32_t>(ScalarType::kInt, {1}, {0}), out2, out2})
                    .failed());
  CHECK(c.t(out2).values<float>() == std::vector<float>{-9, -6, -3, 0});
}

TEST_CASE("quantised embeddings refuse bad indices, shapes and dtypes", "[kernels][qweight]") {
  KernelCall c;
  EValue* w = c.tensor<uint8_t>(ScalarType::kByte, {3, 4});
  EValue* s = c.f32({3}, {1, 1, 1});
  EValue* out = c.f32({1, 4});
  auto ctx = c.run("quantized_decomposed::embedding_byte.out", {w, s, c.none(), c.integer(0), c.integer(255), c.i64({1}, {3}), out, out});
  REQUIRE(ctx.failed());
  CHECK(std::string(ctx.message()).find("index 3 is outside [0, 3)") != std::string::npos);
  ctx = c.run("quantized_decomposed::embedding_byte.out", {w, s, c.none(), c.integer(0), c.integer(255), c.i64({1}, {-1}), out, out});
  CHECK(ctx.failed());
  ctx = c.run("quantized_decomposed::embedding_byte.out", {w, c.f32({2}, {1, 1}), c.none(), c.integer(0), c.integer(255), c.i64({1}, {0}), out, out});
  REQUIRE(ctx.failed());
  CHECK(std::string(ctx.message()).find("2 scales for a weight of 3 rows") != std::string::npos);
  ctx = c.run("quantized_decomposed::embedding_byte.out", {w, c.f32({3, 3}), c.none(), c.integer(0), c.integer(255), c.i64({1}, {0}), out, out});
  CHECK(ctx.failed());  // 3 groups do not divide 4 columns
  ctx = c.run("quantized_decomposed::embedding_4bit.out",
              {c.tensor<int8_t>(ScalarType::kChar, {3, 2}), s, c.none(), c.integer(-8), c.integer(7), c.i64({1}, {0}), out, out});
  CHECK(ctx.failed());  // packed weights are uint8
  ctx = c.run("quantized_decomposed::embedding_byte.out", {w, s, c.none(), c.integer(0), c.integer(255), c.f32({1}, {0}), out, out});
  CHECK(ctx.failed());  // float indices
  ctx = c.run("quantized_decomposed::embedding_byte.out", {w, s, c.none(), c.integer(5), c.integer(4), c.i64({1}, {0}), out, out});
  CHECK(ctx.failed());  // quant_min above quant_max
}

TEST_CASE("mixed_mm and mixed_linear multiply by int8 weights and their scales", "[kernels][qweight]") {
  KernelCall c;
  // mixed_mm: in [1, 2] x w [2, 3], scale per weight row k.
  EValue* out = c.f32({1, 3});
  REQUIRE_FALSE(c.run("quantized_decomposed::mixed_mm.out",
                      {c.f32({1, 2}, {1, 2}), c.tensor<int8_t>(ScalarType::kChar, {2, 3}, {1, 2, 3, -1, -2, -3}),
                       c.f32({2}, {0.5f, 2.0f}), c.none(), out, out})
                    .failed());
  CHECK(c.t(out).values<float>() == std::vector<float>{-3.5f, -7.0f, -10.5f});
  // mixed_linear: w [2, 4], two groups of two columns per output row.
  EValue* lin = c.f32({1, 2});
  REQUIRE_FALSE(c.run("quantized_decomposed::mixed_linear.out",
                      {c.f32({1, 4}, {1, 1, 1, 1}), c.tensor<int8_t>(ScalarType::kChar, {2, 4}, {1, 1, 1, 1, 2, 0, 0, 2}),
                       c.f32({2, 2}, {1.0f, 10.0f, 0.5f, 0.25f}), c.none(), c.none(), lin, lin})
                    .failed());
  CHECK(c.t(lin).values<float>() == std::vector<float>{22.0f, 1.5f});
  // Zero points are refused, as by ExecuTorch; so is a float weight.
  auto ctx = c.run("quantized_decomposed::mixed_linear.out",
                   {c.f32({1, 4}), c.tensor<int8_t>(ScalarType::kChar, {2, 4}), c.f32({2}), c.f32({2}), c.none(), lin, lin});
  CHECK(ctx.failed());
  ctx = c.run("quantized_decomposed::mixed_mm.out", {c.f32({1, 2}), c.f32({2, 3}), c.f32({2}), c.none(), out, out});
  CHECK(ctx.failed());
  ctx = c.run("quantized_decomposed::mixed_mm.out",
              {c.f32({1, 3}), c.tensor<int8_t>(ScalarType::kChar, {2, 3}), c.f32({2}), c.none(), out, out});
  CHECK(ctx.failed());  // inner sizes differ
}
