// Tests of unary math (op_unary.cpp).
//
// The former tests/runtime/kernel_unary_test.cpp:
// Unary math kernels (op_unary.cpp) and pow. Expected values follow the definitions:
// tanh(0.5) = 0.4621171573, gelu(x) = x * Phi(x) (gelu(1) = 0.8413447461), the tanh
// approximation 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))) (gelu(1) = 0.8411919906).
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

TEST_CASE("exp / neg / hardtanh / clamp", "[kernels][elementwise]") {
  KernelCall c;
  EValue* e = c.f32({3});
  REQUIRE_FALSE(c.run("aten::exp.out", {c.f32({3}, {0, 1, -1}), e, e}).failed());
  CHECK(c.t(e).data_as<float>()[1] == Approx(2.718281828));
  CHECK(c.t(e).data_as<float>()[2] == Approx(0.3678794412));
  EValue* n = c.f32({2});
  REQUIRE_FALSE(c.run("aten::neg.out", {c.f32({2}, {1.5f, -2}), n, n}).failed());
  CHECK(c.t(n).values<float>() == std::vector<float>{-1.5f, 2});
  EValue* h = c.f32({5});
  REQUIRE_FALSE(
      c.run("aten::hardtanh.out", {c.f32({5}, {-3, 0, 3, 7, NAN}), c.integer(0), c.integer(6), h, h}).failed());
  CHECK(c.t(h).data_as<float>()[0] == 0);
  CHECK(c.t(h).data_as<float>()[2] == 3);
  CHECK(c.t(h).data_as<float>()[3] == 6);
  CHECK(std::isnan(c.t(h).data_as<float>()[4]));
  EValue* cl = c.f32({3});
  REQUIRE_FALSE(c.run("aten::clamp.out", {c.f32({3}, {-3, 0.5f, 3}), c.none(), c.dbl(1.0), cl, cl}).failed());
  CHECK(c.t(cl).values<float>() == std::vector<float>{-3, 0.5f, 1});
  auto ctx = c.run("aten::clamp.out", {c.f32({3}), c.none(), c.none(), cl, cl});
  REQUIRE(ctx.failed());
  ctx = c.run("aten::exp.out", {c.f32({3}), c.i64({3}), c.none()});
  REQUIRE(ctx.failed());
  ctx = c.run("aten::neg.out", {c.f32({3}), c.f32({2}), c.none()});
  REQUIRE(ctx.failed());
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

TEST_CASE("tanh / sqrt / rsqrt / log / sin compute in the output's floating type", "[kernels][unary]") {
  KernelCall c;
  EValue* t = c.f32({3});
  REQUIRE_FALSE(c.run("aten::tanh.out", {c.f32({3}, {0.5f, 0, -2}), t, t}).failed());
  CHECK(c.t(t).data_as<float>()[0] == Approx(0.46211715726));
  CHECK(c.t(t).data_as<float>()[1] == 0.0f);
  CHECK(c.t(t).data_as<float>()[2] == Approx(-0.96402758008));
  // Integral input, float output.
  EValue* s = c.f32({2, 2});
  REQUIRE_FALSE(c.run("aten::sqrt.out", {c.i64({2, 2}, {0, 1, 4, 9}), s, s}).failed());
  CHECK(c.t(s).values<float>() == std::vector<float>{0, 1, 2, 3});
  EValue* r = c.tensor<double>(ScalarType::kDouble, {2});
  REQUIRE_FALSE(c.run("aten::rsqrt.out", {c.tensor<double>(ScalarType::kDouble, {2}, {4.0, 0.25}), r, r}).failed());
  CHECK(c.t(r).values<double>() == std::vector<double>{0.5, 2.0});
  EValue* l = c.f32({3});
  REQUIRE_FALSE(c.run("aten::log.out", {c.f32({3}, {1, 0, -1}), l, l}).failed());
  CHECK(c.t(l).data_as<float>()[0] == 0.0f);
  CHECK(std::isinf(c.t(l).data_as<float>()[1]));
  CHECK(std::isnan(c.t(l).data_as<float>()[2]));
  EValue* b = c.f32({2});
  REQUIRE_FALSE(c.run("aten::cos.out", {c.boolean({2}, {true, false}), b, b}).failed());
  CHECK(c.t(b).data_as<float>()[0] == Approx(0.5403023059));
  CHECK(c.t(b).data_as<float>()[1] == 1.0f);
  // Empty tensors resize and touch nothing.
  EValue* e = c.f32({0, 3}, {}, 8);
  REQUIRE_FALSE(c.run("aten::erf.out", {c.f32({0, 3}), e, e}).failed());
  CHECK(c.t(e).numel() == 0);
  // An integral output is refused.
  auto ctx = c.run("aten::tanh.out", {c.f32({2}), c.i64({2}), c.none()});
  REQUIRE(ctx.failed());
  CHECK(mentions(ctx, "tanh.out"));
  // So is a shape that does not fit a static output.
  ctx = c.run("aten::sin.out", {c.f32({3}), c.f32({2}), c.none()});
  REQUIRE(ctx.failed());
}

TEST_CASE("abs / sign / rounding keep the dtype and round is half-to-even", "[kernels][unary]") {
  KernelCall c;
  const int64_t lo = std::numeric_limits<int64_t>::min();
  EValue* a = c.i64({3});
  REQUIRE_FALSE(c.run("aten::abs.out", {c.i64({3}, {-5, 7, lo}), a, a}).failed());
  CHECK(c.t(a).values<int64_t>() == std::vector<int64_t>{5, 7, lo});  // wraps, as ATen
  EValue* sg = c.f32({4});
  REQUIRE_FALSE(c.run("aten::sign.out", {c.f32({4}, {-2, 0, 3, NAN}), sg, sg}).failed());
  CHECK(c.t(sg).data_as<float>()[0] == -1.0f);
  CHECK(c.t(sg).data_as<float>()[1] == 0.0f);
  CHECK(c.t(sg).data_as<float>()[2] == 1.0f);
  CHECK(std::isnan(c.t(sg).data_as<float>()[3]));
  EValue* rd = c.f32({5});
  REQUIRE_FALSE(c.run("aten::round.out", {c.f32({5}, {0.5f, 1.5f, 2.5f, -0.5f, -1.7f}), rd, rd}).failed());
  CHECK(c.t(rd).values<float>() == std::vector<float>{0, 2, 2, -0.0f, -2});
  EValue* fl = c.f32({2});
  REQUIRE_FALSE(c.run("aten::floor.out", {c.f32({2}, {-1.5f, 1.5f}), fl, fl}).failed());
  CHECK(c.t(fl).values<float>() == std::vector<float>{-2, 1});
  EValue* ce = c.f32({2});
  REQUIRE_FALSE(c.run("aten::ceil.out", {c.f32({2}, {-1.5f, 1.5f}), ce, ce}).failed());
  CHECK(c.t(ce).values<float>() == std::vector<float>{-1, 2});
  EValue* tr = c.i64({2});
  REQUIRE_FALSE(c.run("aten::trunc.out", {c.i64({2}, {-3, 4}), tr, tr}).failed());
  CHECK(c.t(tr).values<int64_t>() == std::vector<int64_t>{-3, 4});
  auto ctx = c.run("aten::abs.out", {c.f32({2}), c.tensor<double>(ScalarType::kDouble, {2}), c.none()});
  REQUIRE(ctx.failed());
  CHECK(mentions(ctx, "dtype"));
}

TEST_CASE("logical_not / bitwise_not / isnan / isinf", "[kernels][unary]") {
  KernelCall c;
  EValue* ln = c.boolean({4});
  REQUIRE_FALSE(c.run("aten::logical_not.out", {c.f32({4}, {0, 2, -0.0f, NAN}), ln, ln}).failed());
  CHECK(c.t(ln).values<bool>() == std::vector<bool>{true, false, true, false});
  EValue* lf = c.f32({2});
  REQUIRE_FALSE(c.run("aten::logical_not.out", {c.boolean({2}, {true, false}), lf, lf}).failed());
  CHECK(c.t(lf).values<float>() == std::vector<float>{0, 1});
  EValue* bn = c.i64({2});
  REQUIRE_FALSE(c.run("aten::bitwise_not.out", {c.i64({2}, {0, 5}), bn, bn}).failed());
  CHECK(c.t(bn).values<int64_t>() == std::vector<int64_t>{-1, -6});
  EValue* bb = c.boolean({2});
  REQUIRE_FALSE(c.run("aten::bitwise_not.out", {c.boolean({2}, {true, false}), bb, bb}).failed());
  CHECK(c.t(bb).values<bool>() == std::vector<bool>{false, true});
  REQUIRE(c.run("aten::bitwise_not.out", {c.f32({1}), c.f32({1}), c.none()}).failed());
  EValue* in = c.boolean({3});
  REQUIRE_FALSE(c.run("aten::isnan.out", {c.f32({3}, {NAN, INFINITY, 1}), in, in}).failed());
  CHECK(c.t(in).values<bool>() == std::vector<bool>{true, false, false});
  EValue* ii = c.boolean({3});
  REQUIRE_FALSE(c.run("aten::isinf.out", {c.f32({3}, {NAN, -INFINITY, 1}), ii, ii}).failed());
  CHECK(c.t(ii).values<bool>() == std::vector<bool>{false, true, false});
  REQUIRE(c.run("aten::isinf.out", {c.f32({3}), c.f32({3}), c.none()}).failed());
}
