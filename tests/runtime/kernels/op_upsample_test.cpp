// Tests of upsampling (op_upsample.cpp).
//
// The former tests/runtime/kernel_upsample_conv1d_test.cpp:
// upsample_bilinear2d / upsample_nearest2d and 1-D convolution (NCL inputs). Bilinear values
// follow ATen's half-pixel mapping: upsampling [[1, 2], [3, 4]] to 4x4 samples at
// -0.25 (clamped to 0), 0.25, 0.75, 1.25 along each axis.
#include <cmath>
#include <numeric>
#include <string>

#include "runtime/kernels/kernel_test_util.h"

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
