// upsample_bilinear2d / upsample_nearest2d and 1-D convolution (NCL inputs). Bilinear values
// follow ATen's half-pixel mapping: upsampling [[1, 2], [3, 4]] to 4x4 samples at
// -0.25 (clamped to 0), 0.25, 0.75, 1.25 along each axis.
#include <string>

#include "runtime/kernel_test_util.h"

using etscope::ScalarType;
using etscope::EValue;
using etscope::Tag;
using etscope::testing::KernelCall;

namespace {

struct DoubleList {
  std::vector<double> values;
  EValue value;
  explicit DoubleList(std::vector<double> v) : values(std::move(v)) {
    value.tag = Tag::kDoubleList;
    value.double_list = {values.data(), values.size()};
  }
};

}  // namespace

TEST_CASE("upsample_bilinear2d: half-pixel and align_corners", "[kernels][upsample]") {
  KernelCall c;
  EValue* x = c.f32({1, 1, 2, 2}, {1, 2, 3, 4});
  EValue* y = c.f32({1, 1, 4, 4});
  REQUIRE_FALSE(c.run("aten::upsample_bilinear2d.vec_out", {x, c.int_list({4, 4}), c.boolean_scalar(false), c.none(), y, y}).failed());
  CHECK(c.t(y).values<float>() == std::vector<float>{1, 1.25f, 1.75f, 2, 1.5f, 1.75f, 2.25f, 2.5f,
                                                     2.5f, 2.75f, 3.25f, 3.5f, 3, 3.25f, 3.75f, 4});
  EValue* a = c.f32({1, 1, 3, 3});
  REQUIRE_FALSE(c.run("aten::upsample_bilinear2d.vec_out", {x, c.int_list({3, 3}), c.boolean_scalar(true), c.none(), a, a}).failed());
  CHECK(c.t(a).values<float>() == std::vector<float>{1, 1.5f, 2, 2, 2.5f, 3, 3, 3.5f, 4});
  // scale_factors instead of output_size give the same 4x4 result.
  DoubleList scales({2.0, 2.0});
  EValue* s = c.f32({1, 1, 4, 4});
  REQUIRE_FALSE(c.run("aten::upsample_bilinear2d.vec_out", {x, c.none(), c.boolean_scalar(false), &scales.value, s, s}).failed());
  CHECK(c.t(s).values<float>() == c.t(y).values<float>());
  // Exactly one of output_size and scale_factors; 4-D only.
  auto ctx = c.run("aten::upsample_bilinear2d.vec_out", {x, c.none(), c.boolean_scalar(false), c.none(), y, y});
  REQUIRE(ctx.failed());
  CHECK(std::string(ctx.message()).find("exactly one") != std::string::npos);
  REQUIRE(c.run("aten::upsample_bilinear2d.vec_out", {c.f32({2, 2}), c.int_list({4, 4}), c.boolean_scalar(false), c.none(), y, y}).failed());
}

TEST_CASE("upsample_nearest2d repeats pixels and downsampling picks floor(dst * in / out)", "[kernels][upsample]") {
  KernelCall c;
  DoubleList scales({2.0, 1.0});
  EValue* y = c.f32({1, 1, 4, 2});
  REQUIRE_FALSE(c.run("aten::upsample_nearest2d.vec_out", {c.f32({1, 1, 2, 2}, {1, 2, 3, 4}), c.none(), &scales.value, y, y}).failed());
  CHECK(c.t(y).values<float>() == std::vector<float>{1, 2, 1, 2, 3, 4, 3, 4});
  EValue* d = c.f32({1, 1, 1, 2});
  REQUIRE_FALSE(c.run("aten::upsample_nearest2d.vec_out", {c.f32({1, 1, 1, 3}, {5, 6, 7}), c.int_list({1, 2}), c.none(), d, d}).failed());
  CHECK(c.t(d).values<float>() == std::vector<float>{5, 6});
  REQUIRE(c.run("aten::upsample_nearest2d.vec_out", {c.i64({1, 1, 1, 1}), c.int_list({2, 2}), c.none(), c.i64({1, 1, 2, 2}), c.none()}).failed());
}

TEST_CASE("convolution with NCL input (Conv1d): padding, stride, groups", "[kernels][convolution]") {
  KernelCall c;
  // [1, 2, 3, 4, 5] * [1, 0, -1], padding 1, bias 0.5: y[i] = x[i-1] - x[i+1] + 0.5.
  EValue* x = c.f32({1, 1, 5}, {1, 2, 3, 4, 5});
  EValue* w = c.f32({1, 1, 3}, {1, 0, -1});
  EValue* y = c.f32({1, 1, 5});
  auto conv = [&](EValue* in, EValue* wt, EValue* bias, int64_t stride, int64_t pad, int64_t groups, EValue* out) {
    return c.run("aten::convolution.out", {in, wt, bias, c.int_list({stride}), c.int_list({pad}), c.int_list({1}),
                                           c.boolean_scalar(false), c.int_list({0}), c.integer(groups), out, out});
  };
  REQUIRE_FALSE(conv(x, w, c.f32({1}, {0.5f}), 1, 1, 1, y).failed());
  CHECK(c.t(y).values<float>() == std::vector<float>{-1.5f, -1.5f, -1.5f, -1.5f, 4.5f});
  EValue* ys = c.f32({1, 1, 3});
  REQUIRE_FALSE(conv(x, w, c.f32({1}, {0.5f}), 2, 1, 1, ys).failed());
  CHECK(c.t(ys).values<float>() == std::vector<float>{-1.5f, -1.5f, 4.5f});
  // Depthwise over two channels: ch0 sums neighbours, ch1 takes differences.
  EValue* yg = c.f32({1, 2, 3});
  REQUIRE_FALSE(conv(c.f32({1, 2, 4}, {1, 2, 3, 4, 10, 20, 40, 80}), c.f32({2, 1, 2}, {1, 1, 1, -1}), c.none(), 1, 0, 2, yg).failed());
  CHECK(c.t(yg).values<float>() == std::vector<float>{3, 5, 7, -10, -20, -40});
  // Dense, two in and two out channels.
  EValue* yd = c.f32({1, 2, 2});
  REQUIRE_FALSE(conv(c.f32({1, 2, 2}, {1, 2, 3, 4}), c.f32({2, 2, 1}, {1, 1, 1, -1}), c.none(), 1, 0, 1, yd).failed());
  CHECK(c.t(yd).values<float>() == std::vector<float>{4, 6, -2, -2});
  // Input and weight ranks must agree; the output must have rank 3.
  REQUIRE(conv(x, c.f32({1, 1, 1, 3}), c.none(), 1, 1, 1, y).failed());
  REQUIRE(conv(x, w, c.none(), 1, 1, 1, c.f32({1, 1, 1, 5})).failed());
}
