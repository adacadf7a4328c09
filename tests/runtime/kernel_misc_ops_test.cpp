// native_group_norm, div with rounding modes, clamp with tensor bounds, logit, glu, roll and
// pixel_shuffle / pixel_unshuffle; values by definition (group [1, 2, 3, 4]: mean 2.5,
// variance 1.25).
#include <cmath>
#include <string>

#include "runtime/kernel_test_util.h"

using etscope::ScalarType;
using etscope::EValue;
using etscope::Tag;
using etscope::testing::KernelCall;

namespace {
EValue string_value(const char* s) {
  EValue v;
  v.tag = Tag::kString;
  v.str = s;
  return v;
}
std::vector<float> ramp(int n) {
  std::vector<float> v(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) v[static_cast<size_t>(i)] = static_cast<float>(i);
  return v;
}
}  // namespace

TEST_CASE("native_group_norm normalises channel groups", "[kernels][norm]") {
  KernelCall c;
  const double eps = 1e-5, rstd = 1.0 / std::sqrt(1.25 + eps);
  EValue* y = c.f32({1, 4, 2});
  EValue* m = c.f32({1, 2});
  EValue* r = c.f32({1, 2});
  REQUIRE_FALSE(c.run("aten::native_group_norm.out",
                      {c.f32({1, 4, 2}, {1, 2, 3, 4, 10, 10, 10, 10}), c.f32({4}, {1, 1, 2, 2}), c.f32({4}, {0, 0, 0, 1}),
                       c.integer(1), c.integer(4), c.integer(2), c.integer(2), c.dbl(eps), y, m, r})
                    .failed());
  const float* v = c.t(y).data_as<float>();
  CHECK(v[0] == Approx(-1.5 * rstd));
  CHECK(v[3] == Approx(1.5 * rstd));
  CHECK(v[4] == 0.0f);
  CHECK(v[7] == 1.0f);
  CHECK(c.t(m).values<float>() == std::vector<float>{2.5f, 10});
  CHECK(c.t(r).data_as<float>()[0] == Approx(rstd));
  REQUIRE(c.run("aten::native_group_norm.out", {c.f32({1, 4, 2}), c.none(), c.none(), c.integer(1), c.integer(4),
                                                c.integer(2), c.integer(3), c.dbl(eps), y, m, r})
              .failed());
}

TEST_CASE("div with rounding modes", "[kernels][pointwise]") {
  KernelCall c;
  EValue trunc = string_value("trunc"), floor = string_value("floor"), bad = string_value("round");
  EValue* t = c.i64({2});
  REQUIRE_FALSE(c.run("aten::div.out_mode", {c.i64({2}, {7, -7}), c.i64({1}, {2}), &trunc, t, t}).failed());
  CHECK(c.t(t).values<int64_t>() == std::vector<int64_t>{3, -3});
  EValue* f = c.i64({2});
  REQUIRE_FALSE(c.run("aten::div.out_mode", {c.i64({2}, {7, -7}), c.i64({1}, {2}), &floor, f, f}).failed());
  CHECK(c.t(f).values<int64_t>() == std::vector<int64_t>{3, -4});
  EValue* ff = c.f32({2});
  REQUIRE_FALSE(c.run("aten::div.Scalar_mode_out", {c.f32({2}, {7, -7}), c.integer(2), &floor, ff, ff}).failed());
  CHECK(c.t(ff).values<float>() == std::vector<float>{3, -4});
  EValue* tn = c.f32({2});
  REQUIRE_FALSE(c.run("aten::div.out_mode", {c.i64({2}, {7, -7}), c.i64({1}, {2}), c.none(), tn, tn}).failed());
  CHECK(c.t(tn).values<float>() == std::vector<float>{3.5f, -3.5f});
  REQUIRE(c.run("aten::div.out_mode", {c.i64({1}, {1}), c.i64({1}, {0}), &trunc, t, t}).failed());
  REQUIRE(c.run("aten::div.out_mode", {c.f32({1}), c.f32({1}), &bad, ff, ff}).failed());
  REQUIRE(c.run("aten::div.out_mode", {c.i64({1}), c.i64({1}, {1}), c.none(), c.i64({1}), c.none()}).failed());
}

TEST_CASE("clamp.Tensor_out broadcasts bounds", "[kernels][pointwise]") {
  KernelCall c;
  EValue* out = c.f32({2, 3});
  REQUIRE_FALSE(c.run("aten::clamp.Tensor_out", {c.f32({3}, {-5, 0.5f, 5}), c.f32({2, 1}, {0, -1}), c.f32({1}, {1}), out, out}).failed());
  CHECK(c.t(out).values<float>() == std::vector<float>{0, 0.5f, 1, -1, 0.5f, 1});
  EValue* o2 = c.i64({2});
  REQUIRE_FALSE(c.run("aten::clamp.Tensor_out", {c.i64({2}, {-3, 9}), c.none(), c.i64({2}, {0, 4}), o2, o2}).failed());
  CHECK(c.t(o2).values<int64_t>() == std::vector<int64_t>{-3, 4});
  REQUIRE(c.run("aten::clamp.Tensor_out", {c.f32({2}), c.none(), c.none(), c.f32({2}), c.none()}).failed());
  REQUIRE(c.run("aten::clamp.Tensor_out", {c.f32({2}), c.f32({3}), c.none(), c.f32({2}), c.none()}).failed());
}

TEST_CASE("logit and glu", "[kernels][unary]") {
  KernelCall c;
  EValue* l = c.f32({3});
  REQUIRE_FALSE(c.run("aten::logit.out", {c.f32({3}, {0.5f, 0.75f, 0}), c.dbl(0.25), l, l}).failed());
  CHECK(c.t(l).data_as<float>()[0] == 0.0f);
  CHECK(c.t(l).data_as<float>()[1] == Approx(std::log(3.0)));
  CHECK(c.t(l).data_as<float>()[2] == Approx(-std::log(3.0)));  // clamped to eps
  EValue* g = c.f32({2, 1});
  REQUIRE_FALSE(c.run("aten::glu.out", {c.f32({2, 2}, {2, 0, 4, 100}), c.integer(-1), g, g}).failed());
  CHECK(c.t(g).data_as<float>()[0] == 1.0f);
  CHECK(c.t(g).data_as<float>()[1] == Approx(4.0));
  REQUIRE(c.run("aten::glu.out", {c.f32({3}), c.integer(0), c.f32({1}), c.none()}).failed());
}

TEST_CASE("roll and pixel_shuffle / pixel_unshuffle", "[kernels][shape]") {
  KernelCall c;
  EValue* x = c.f32({2, 3}, ramp(6));
  EValue* r = c.f32({2, 3});
  REQUIRE_FALSE(c.run("aten::roll.out", {x, c.int_list({1}), c.int_list({-1}), r, r}).failed());
  CHECK(c.t(r).values<float>() == std::vector<float>{2, 0, 1, 5, 3, 4});
  EValue* rf = c.f32({2, 3});
  REQUIRE_FALSE(c.run("aten::roll.out", {x, c.int_list({-2}), c.int_list({}), rf, rf}).failed());
  CHECK(c.t(rf).values<float>() == std::vector<float>{2, 3, 4, 5, 0, 1});
  REQUIRE(c.run("aten::roll.out", {x, c.int_list({1, 1}), c.int_list({0}), r, r}).failed());
  // 4 channels of 1x1 -> 1 channel of 2x2, and back.
  EValue* ps = c.f32({1, 1, 2, 2});
  REQUIRE_FALSE(c.run("aten::pixel_shuffle.out", {c.f32({1, 4, 1, 1}, {1, 2, 3, 4}), c.integer(2), ps, ps}).failed());
  CHECK(c.t(ps).values<float>() == std::vector<float>{1, 2, 3, 4});
  // [4, 1, 2] -> [1, 2, 4]: out[y][x] = in[(y % 2) * 2 + x % 2][y / 2][x / 2].
  EValue* big = c.f32({4, 1, 2}, ramp(8));
  EValue* sh = c.f32({1, 2, 2});
  EValue* s2 = c.f32({1, 2, 4});
  REQUIRE_FALSE(c.run("aten::pixel_shuffle.out", {big, c.integer(2), s2, s2}).failed());
  CHECK(c.t(s2).values<float>() == std::vector<float>{0, 2, 1, 3, 4, 6, 5, 7});
  EValue* back = c.f32({4, 1, 2});
  REQUIRE_FALSE(c.run("aten::pixel_unshuffle.out", {s2, c.integer(2), back, back}).failed());
  CHECK(c.t(back).values<float>() == ramp(8));
  REQUIRE(c.run("aten::pixel_shuffle.out", {c.f32({1, 3, 1, 1}), c.integer(2), sh, sh}).failed());
}
