// Weight-only quantised kernels (embedding_byte / 4bit / 2bit, mixed_mm, mixed_linear), the older
// flow's quantised add, allclose, rand / randn, the in-place copy_ / index_put_, the antialiased
// bilinear resize, and half / bfloat16 through the float32 kernels. Expected values are worked
// out by hand from the operators' definitions; the conformance suite checks the same kernels
// against ExecuTorch's runtime.
#include <cmath>
#include <numeric>

#include "runtime/kernel_test_util.h"

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

TEST_CASE("quantized_decomposed::add dequantises, adds and requantises", "[kernels][qweight]") {
  KernelCall c;
  EValue* a = c.tensor<uint8_t>(ScalarType::kByte, {3}, {10, 20, 255});
  EValue* b = c.tensor<uint8_t>(ScalarType::kByte, {3}, {0, 40, 255});
  EValue* out = c.tensor<uint8_t>(ScalarType::kByte, {3});
  // a: scale 0.5, zp 10; b: scale 0.25, zp 0; out: scale 1, zp 5, range [0, 100].
  REQUIRE_FALSE(c.run("quantized_decomposed::add.out",
                      {a, c.dbl(0.5), c.integer(10), c.integer(0), c.integer(255), b, c.dbl(0.25), c.integer(0), c.integer(0),
                       c.integer(255), c.dbl(1.0), c.integer(5), c.integer(0), c.integer(100), out, out})
                    .failed());
  // 0 + 0 -> 5; 5 + 10 -> 20; 122.5 + 63.75 = 186.25 -> 191 clamped to 100.
  CHECK(c.t(out).values<uint8_t>() == std::vector<uint8_t>{5, 20, 100});
  auto ctx = c.run("quantized_decomposed::add.out",
                   {a, c.dbl(0.5), c.integer(10), c.integer(0), c.integer(300), b, c.dbl(0.25), c.integer(0), c.integer(0),
                    c.integer(255), c.dbl(1.0), c.integer(5), c.integer(0), c.integer(100), out, out});
  CHECK(ctx.failed());  // quant range beyond [0, 255]
}

TEST_CASE("allclose follows ExecuTorch's definition", "[kernels][qweight]") {
  KernelCall c;
  EValue* out = c.boolean({1});
  REQUIRE_FALSE(c.run("aten::allclose.out", {c.f32({2}, {1.0f, 2.0f}), c.f32({2}, {1.0f, 2.00001f}), c.dbl(1e-5), c.dbl(1e-8),
                                             c.boolean_scalar(false), c.boolean_scalar(false), out, out})
                    .failed());
  CHECK(c.t(out).values<bool>()[0]);
  REQUIRE_FALSE(c.run("aten::allclose.out", {c.f32({1}, {NAN}), c.f32({1}, {NAN}), c.dbl(1e-5), c.dbl(1e-8),
                                             c.boolean_scalar(true), c.boolean_scalar(false), out, out})
                    .failed());
  CHECK_FALSE(c.t(out).values<bool>()[0]);  // NaN is never close, equal_nan or not
  REQUIRE_FALSE(c.run("aten::allclose.Tensor", {c.i64({2}, {1, 2}), c.i64({2}, {1, 3}), c.dbl(1.0), c.dbl(1.0),
                                                c.boolean_scalar(false), c.boolean_scalar(false), out})
                    .failed());
  CHECK_FALSE(c.t(out).values<bool>()[0]);  // integers compare exactly
  CHECK(c.run("aten::allclose.out", {c.f32({2}), c.f32({3}), c.dbl(0), c.dbl(0), c.boolean_scalar(false),
                                     c.boolean_scalar(false), out, out})
            .failed());
}

TEST_CASE("rand and randn fill their output from the runtime's random stream", "[kernels][qweight]") {
  KernelCall c;
  const int64_t n = 20000;
  EValue* u = c.f32({n});
  REQUIRE_FALSE(c.run("aten::rand.out", {c.int_list({n}), u, u}).failed());
  const auto uv = c.t(u).values<float>();
  CHECK(*std::min_element(uv.begin(), uv.end()) >= 0.0f);
  CHECK(*std::max_element(uv.begin(), uv.end()) < 1.0f);
  CHECK(std::accumulate(uv.begin(), uv.end(), 0.0) / n == Approx(0.5).margin(0.02));
  EValue* g = c.tensor<double>(ScalarType::kDouble, {100, 200});
  REQUIRE_FALSE(c.run("aten::randn.out", {c.int_list({100, 200}), g, g}).failed());
  const auto gv = c.t(g).values<double>();
  const double mean = std::accumulate(gv.begin(), gv.end(), 0.0) / n;
  double var = 0;
  for (double x : gv) var += (x - mean) * (x - mean);
  CHECK(mean == Approx(0.0).margin(0.03));
  CHECK(var / n == Approx(1.0).margin(0.05));
  // Two calls draw different numbers; integer outputs and wrong ranks are refused.
  EValue* u2 = c.f32({n});
  REQUIRE_FALSE(c.run("aten::rand.out", {c.int_list({n}), u2, u2}).failed());
  CHECK(c.t(u2).values<float>() != uv);
  EValue* bad = c.i64({2});
  CHECK(c.run("aten::rand.out", {c.int_list({2}), bad, bad}).failed());
  CHECK(c.run("aten::randn.out", {c.int_list({2, 1}), u, u}).failed());
}

TEST_CASE("copy_ and index_put_ write self in place", "[kernels][qweight]") {
  KernelCall c;
  EValue* self = c.f32({2, 3}, {0, 0, 0, 0, 0, 0});
  REQUIRE_FALSE(c.run("aten::copy_", {self, c.f32({3}, {1, 2, 3}), c.boolean_scalar(false), self}).failed());
  CHECK(c.t(self).values<float>() == std::vector<float>{1, 2, 3, 1, 2, 3});
  EValue* indices = c.tensor_list({c.i64({2}, {1, 0})});
  REQUIRE_FALSE(c.run("aten::index_put_", {self, indices, c.f32({2, 3}, {7, 7, 7, 9, 9, 9}), c.boolean_scalar(true), self}).failed());
  CHECK(c.t(self).values<float>() == std::vector<float>{10, 11, 12, 8, 9, 10});
  auto ctx = c.run("aten::index_put_", {self, c.tensor_list({c.i64({1}, {2})}), c.f32({3}), c.boolean_scalar(false), self});
  CHECK(ctx.failed());  // row 2 of 2
}

TEST_CASE("_upsample_bilinear2d_aa averages with a triangle filter as wide as the scale", "[kernels][qweight]") {
  KernelCall c;
  // Same size: the identity.
  EValue* in = c.f32({1, 1, 1, 4}, {0, 1, 2, 3});
  EValue* same = c.f32({1, 1, 1, 4});
  REQUIRE_FALSE(c.run("aten::_upsample_bilinear2d_aa.out", {in, c.int_list({1, 4}), c.boolean_scalar(false), c.none(), c.none(), same, same}).failed());
  CHECK(c.t(same).values<float>() == std::vector<float>{0, 1, 2, 3});
  // Width 4 -> 2: scale 2, centre 1 and 3, weights 0.75 / 0.75 / 0.25 over [0, 3) and 0.25 / 0.75 / 0.75 over [1, 4).
  EValue* half = c.f32({1, 1, 1, 2});
  REQUIRE_FALSE(c.run("aten::_upsample_bilinear2d_aa.out", {in, c.int_list({1, 2}), c.boolean_scalar(false), c.none(), c.none(), half, half}).failed());
  const auto v = c.t(half).values<float>();
  CHECK(v[0] == Approx(1.25 / 1.75));
  CHECK(v[1] == Approx(3.0 - 1.25 / 1.75));
  // Channels-last input and output give the same numbers as contiguous ones.
  EValue* cl = c.tensor<float>(ScalarType::kFloat, {1, 2, 2, 2}, {0, 10, 1, 11, 2, 12, 3, 13}, 0, {0, 2, 3, 1});
  EValue* cl_out = c.tensor<float>(ScalarType::kFloat, {1, 2, 1, 1}, {}, 0, {0, 2, 3, 1});
  REQUIRE_FALSE(c.run("aten::_upsample_bilinear2d_aa.out", {cl, c.int_list({1, 1}), c.boolean_scalar(false), c.none(), c.none(), cl_out, cl_out}).failed());
  CHECK(c.t(cl_out).values<float>()[0] == Approx(1.5));
  CHECK(c.t(cl_out).values<float>()[1] == Approx(11.5));
  CHECK(c.run("aten::_upsample_bilinear2d_aa.out", {in, c.int_list({1, 0}), c.boolean_scalar(false), c.none(), c.none(), same, same}).failed());
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

TEST_CASE("index_put refuses index shapes that broadcast into more positions than the call holds", "[kernels][index]") {
  KernelCall c;
  // A 2x3 block of a 3x4 self through [2, 1] rows and [1, 3] columns: 6 positions, allowed.
  EValue* self = c.f32({3, 4}, std::vector<float>(12, 0.0f));
  EValue* out = c.f32({3, 4});
  REQUIRE_FALSE(c.run("aten::index_put.out", {self, c.tensor_list({c.i64({2, 1}, {0, 2}), c.i64({1, 3}, {1, 2, 3})}),
                                              c.f32({}, {5.0f}), c.boolean_scalar(false), out, out})
                    .failed());
  CHECK(c.t(out).values<float>() == std::vector<float>{0, 5, 5, 5, 0, 0, 0, 0, 0, 5, 5, 5});
  // [N, 1] with [1, N] indices and a scalar value: N * N positions into a 2x2 self.
  const int64_t n = 3000;
  EValue* small = c.f32({2, 2}, {0, 0, 0, 0});
  EValue* small_out = c.f32({2, 2});
  auto ctx = c.run("aten::index_put.out", {small, c.tensor_list({c.i64({n, 1}, std::vector<int64_t>(n, 0)),
                                                                  c.i64({1, n}, std::vector<int64_t>(n, 1))}),
                                           c.f32({}, {1.0f}), c.boolean_scalar(true), small_out, small_out});
  REQUIRE(ctx.failed());
  CHECK(std::string(ctx.message()).find("more positions than self, values and indices hold") != std::string::npos);
}
