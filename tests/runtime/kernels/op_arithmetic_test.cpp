// Tests of arithmetic of two tensors or a tensor and a scalar (op_arithmetic.cpp).
//
// The former tests/runtime/kernel_pointwise_test.cpp:
// Broadcasting binary kernels of op_pointwise.cpp; expected values by definition
// (Python's % takes the divisor's sign, C's fmod the dividend's; floor_divide rounds down).
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>

#include "runtime/kernels/kernel_test_util.h"

using etscope::ScalarType;
using etscope::EValue;
using etscope::Tag;
using etscope::testing::KernelCall;
using etscope::testing::mentions;
using etscope::testing::string_value;

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

TEST_CASE("minimum / maximum propagate NaN", "[kernels][pointwise]") {
  KernelCall c;
  EValue* mx = c.f32({3});
  REQUIRE_FALSE(c.run("aten::maximum.out", {c.f32({3}, {1, NAN, -2}), c.f32({1}, {0}), mx, mx}).failed());
  CHECK(c.t(mx).data_as<float>()[0] == 1.0f);
  CHECK(std::isnan(c.t(mx).data_as<float>()[1]));
  CHECK(c.t(mx).data_as<float>()[2] == 0.0f);
  EValue* mn = c.i64({2});
  REQUIRE_FALSE(c.run("aten::minimum.out", {c.i64({2}, {4, -9}), c.i64({2}, {3, 0}), mn, mn}).failed());
  CHECK(c.t(mn).values<int64_t>() == std::vector<int64_t>{3, -9});
}

TEST_CASE("remainder / fmod / floor_divide: signs, scalars, division by zero", "[kernels][pointwise]") {
  KernelCall c;
  EValue* r = c.i64({4});
  REQUIRE_FALSE(c.run("aten::remainder.Tensor_out", {c.i64({4}, {7, -7, 7, -7}), c.i64({4}, {3, 3, -3, -3}), r, r}).failed());
  CHECK(c.t(r).values<int64_t>() == std::vector<int64_t>{1, 2, -2, -1});
  EValue* f = c.i64({4});
  REQUIRE_FALSE(c.run("aten::fmod.Tensor_out", {c.i64({4}, {7, -7, 7, -7}), c.i64({4}, {3, 3, -3, -3}), f, f}).failed());
  CHECK(c.t(f).values<int64_t>() == std::vector<int64_t>{1, -1, 1, -1});
  EValue* fd = c.i64({4});
  const int64_t lo = std::numeric_limits<int64_t>::min();
  REQUIRE_FALSE(c.run("aten::floor_divide.out", {c.i64({4}, {7, -7, 7, lo}), c.i64({4}, {2, 2, -2, -1}), fd, fd}).failed());
  CHECK(c.t(fd).values<int64_t>() == std::vector<int64_t>{3, -4, -4, lo});  // INT64_MIN / -1 wraps
  EValue* rf = c.f32({2});
  REQUIRE_FALSE(c.run("aten::remainder.Scalar_out", {c.f32({2}, {5.5f, -5.5f}), c.integer(2), rf, rf}).failed());
  CHECK(c.t(rf).values<float>() == std::vector<float>{1.5f, 0.5f});
  EValue* ff = c.f32({1});
  REQUIRE_FALSE(c.run("aten::fmod.Scalar_out", {c.f32({1}, {-5.5f}), c.dbl(2.0), ff, ff}).failed());
  CHECK(c.t(ff).values<float>() == std::vector<float>{-1.5f});
  auto ctx = c.run("aten::remainder.Tensor_out", {c.i64({2}, {1, 2}), c.i64({2}, {1, 0}), r, r});
  REQUIRE(ctx.failed());
  CHECK(std::string(ctx.message()).find("division by zero") != std::string::npos);
  REQUIRE(c.run("aten::floor_divide.out", {c.f32({1}), c.f32({1}), c.i64({1}), c.none()}).failed());
}

TEST_CASE("atan2 and rsub", "[kernels][pointwise]") {
  KernelCall c;
  EValue* a = c.f32({2});
  REQUIRE_FALSE(c.run("aten::atan2.out", {c.f32({2}, {1, -1}), c.f32({1}, {-1}), a, a}).failed());
  CHECK(c.t(a).data_as<float>()[0] == Approx(3 * M_PI / 4));
  CHECK(c.t(a).data_as<float>()[1] == Approx(-3 * M_PI / 4));
  EValue* rs = c.f32({3});
  REQUIRE_FALSE(c.run("aten::rsub.Scalar_out", {c.f32({3}, {1, 2, 3}), c.integer(1), c.integer(2), rs, rs}).failed());
  CHECK(c.t(rs).values<float>() == std::vector<float>{-1, -3, -5});
  EValue* ri = c.i64({2});
  REQUIRE_FALSE(c.run("aten::rsub.Scalar_out", {c.i64({2}, {1, 5}), c.integer(10), c.integer(1), ri, ri}).failed());
  CHECK(c.t(ri).values<int64_t>() == std::vector<int64_t>{9, 5});
  REQUIRE(c.run("aten::atan2.out", {c.f32({1}), c.f32({1}), c.i64({1}), c.none()}).failed());
}

TEST_CASE("pow: Tensor_Tensor broadcasts, Tensor_Scalar and Scalar promote", "[kernels][unary][pow]") {
  KernelCall c;
  EValue* pt = c.f32({2, 2});
  REQUIRE_FALSE(
      c.run("aten::pow.Tensor_Tensor_out", {c.f32({2, 1}, {2, 3}), c.f32({2}, {2, 0.5f}), pt, pt}).failed());
  CHECK(c.t(pt).data_as<float>()[0] == 4.0f);
  CHECK(c.t(pt).data_as<float>()[1] == Approx(std::sqrt(2.0)));
  CHECK(c.t(pt).data_as<float>()[2] == 9.0f);
  // Integral pow stays integral and wraps instead of overflowing; negative exponents truncate.
  EValue* pi = c.i64({4});
  REQUIRE_FALSE(c.run("aten::pow.Tensor_Tensor_out",
                      {c.i64({4}, {3, 2, -1, 1}), c.i64({4}, {4, 64, -3, -2}), pi, pi})
                    .failed());
  CHECK(c.t(pi).values<int64_t>() == std::vector<int64_t>{81, 0, -1, 1});
  // MSELoss's square: Tensor_Scalar with an Int exponent.
  EValue* sq = c.f32({3});
  REQUIRE_FALSE(c.run("aten::pow.Tensor_Scalar_out", {c.f32({3}, {-1.5f, 0, 2}), c.integer(2), sq, sq}).failed());
  CHECK(c.t(sq).values<float>() == std::vector<float>{2.25f, 0, 4});
  // An integral tensor to a float power gives a float result.
  EValue* pf = c.f32({2});
  REQUIRE_FALSE(c.run("aten::pow.Tensor_Scalar_out", {c.i64({2}, {4, 9}), c.dbl(0.5), pf, pf}).failed());
  CHECK(c.t(pf).values<float>() == std::vector<float>{2, 3});
  EValue* ps = c.f32({3});
  REQUIRE_FALSE(c.run("aten::pow.Scalar_out", {c.integer(2), c.f32({3}, {0, 3, -1}), ps, ps}).failed());
  CHECK(c.t(ps).values<float>() == std::vector<float>{1, 8, 0.5f});
  // A float result cannot go to an integral out; shapes must broadcast.
  auto ctx = c.run("aten::pow.Tensor_Scalar_out", {c.i64({2}, {4, 9}), c.dbl(0.5), c.i64({2}), c.none()});
  REQUIRE(ctx.failed());
  CHECK(mentions(ctx, "pow.Tensor_Scalar_out"));
  ctx = c.run("aten::pow.Tensor_Tensor_out", {c.f32({2}), c.f32({3}), c.f32({3}), c.none()});
  REQUIRE(ctx.failed());
  EValue* pe = c.f32({0}, {}, 4);
  REQUIRE_FALSE(c.run("aten::pow.Tensor_Scalar_out", {c.f32({0}), c.integer(3), pe, pe}).failed());
  CHECK(c.t(pe).numel() == 0);
}

namespace {

// The element of a contiguous input of `in` sizes that broadcasts to output index `i` of `out`.
int64_t broadcast_source(const std::vector<int64_t>& out, const std::vector<int64_t>& in, int64_t i) {
  int64_t src = 0, stride = 1;
  for (size_t d = out.size(); d-- > 0;) {
    const int64_t coord = i % out[d];
    i /= out[d];
    const size_t off = out.size() - in.size();
    if (d >= off) {
      const int64_t size = in[d - off];
      if (size != 1) src += coord * stride;
      stride *= size;
    }
  }
  return src;
}

}  // namespace

// The broadcast kernels walk the output in runs (an input steps or stays along each); every
// pattern of which input broadcasts where, against index arithmetic.
TEST_CASE("sub and where broadcast in runs as index arithmetic says", "[kernels][pointwise]") {
  const std::vector<std::pair<std::vector<int64_t>, std::vector<int64_t>>> shapes{
      {{2, 3, 4, 5}, {3, 1, 1}}, {{2, 3, 4, 5}, {1, 5}},       {{2, 1, 4, 1}, {2, 3, 4, 5}}, {{2, 3, 4, 1}, {1, 1, 1, 6}},
      {{1, 3, 7, 7}, {1, 3, 7, 1}}, {{4, 1}, {1, 4}},           {{5}, {3, 1}},                {{2, 3, 1, 5}, {2, 1, 4, 5}},
      {{1, 1, 1}, {2, 3, 4}},     {{3, 4, 5}, {1, 1, 1}},       {{2, 1}, {2, 1}}};
  for (const auto& [sa, sb] : shapes) {
    const size_t dim = std::max(sa.size(), sb.size());
    std::vector<int64_t> out_sizes(dim);
    for (size_t d = 0; d < dim; ++d) {
      const int64_t x = d + sa.size() < dim ? 1 : sa[d + sa.size() - dim];
      const int64_t y = d + sb.size() < dim ? 1 : sb[d + sb.size() - dim];
      out_sizes[d] = std::max(x, y);
    }
    auto count = [](const std::vector<int64_t>& s) {
      int64_t n = 1;
      for (int64_t v : s) n *= v;
      return n;
    };
    std::vector<float> a(static_cast<size_t>(count(sa))), b(static_cast<size_t>(count(sb)));
    std::vector<bool> cond(a.size());
    for (size_t i = 0; i < a.size(); ++i) a[i] = static_cast<float>(i) * 0.5f, cond[i] = i % 3 == 1;
    for (size_t i = 0; i < b.size(); ++i) b[i] = 1000.0f + static_cast<float>(i);
    const int64_t n = count(out_sizes);
    KernelCall c;
    EValue* diff = c.f32(out_sizes);
    REQUIRE_FALSE(c.run("aten::sub.out", {c.f32(sa, a), c.f32(sb, b), c.dbl(1.0), diff, diff}).failed());
    EValue* picked = c.f32(out_sizes);
    REQUIRE_FALSE(c.run("aten::where.self_out", {c.boolean(sa, cond), c.f32(sb, b), c.f32(sa, a), picked, picked}).failed());
    const auto d = c.t(diff).values<float>();
    const auto p = c.t(picked).values<float>();
    size_t wrong = 0;
    for (int64_t i = 0; i < n; ++i) {
      const size_t ia = static_cast<size_t>(broadcast_source(out_sizes, sa, i));
      const size_t ib = static_cast<size_t>(broadcast_source(out_sizes, sb, i));
      wrong += d[static_cast<size_t>(i)] != a[ia] - b[ib];
      wrong += p[static_cast<size_t>(i)] != (cond[ia] ? b[ib] : a[ia]);
    }
    INFO(sa.size() << "-D with " << sb.size() << "-D");
    CHECK(wrong == 0);
  }
}
