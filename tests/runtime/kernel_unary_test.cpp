// Unary math kernels (op_unary.cpp) and pow. Expected values follow the definitions:
// tanh(0.5) = 0.4621171573, gelu(x) = x * Phi(x) (gelu(1) = 0.8413447461), the tanh
// approximation 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))) (gelu(1) = 0.8411919906).
#include <cmath>
#include <cstdint>
#include <limits>
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

bool mentions(const etscope::runtime::KernelContext& ctx, const char* what) {
  return std::string(ctx.message()).find(what) != std::string::npos;
}

}  // namespace

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

TEST_CASE("gelu: exact and tanh-approximate", "[kernels][unary]") {
  KernelCall c;
  EValue none_str = string_value("none"), tanh_str = string_value("tanh"), bad = string_value("sigmoid");
  EValue* g = c.f32({3});
  REQUIRE_FALSE(c.run("aten::gelu.out", {c.f32({3}, {1, -0.5f, 0}), &none_str, g, g}).failed());
  CHECK(c.t(g).data_as<float>()[0] == Approx(0.8413447461));
  CHECK(c.t(g).data_as<float>()[1] == Approx(-0.1542687694));
  CHECK(c.t(g).data_as<float>()[2] == 0.0f);
  EValue* gt = c.tensor<double>(ScalarType::kDouble, {2});
  REQUIRE_FALSE(
      c.run("aten::gelu.out", {c.tensor<double>(ScalarType::kDouble, {2}, {1, -0.5}), &tanh_str, gt, gt}).failed());
  CHECK(c.t(gt).data_as<double>()[0] == Approx(0.8411919906082768).epsilon(1e-12));
  CHECK(c.t(gt).data_as<double>()[1] == Approx(-0.15428599017485606).epsilon(1e-12));
  auto ctx = c.run("aten::gelu.out", {c.f32({1}), &bad, g, g});
  REQUIRE(ctx.failed());
  CHECK(mentions(ctx, "approximate"));
  ctx = c.run("aten::gelu.out", {c.i64({1}, {1}), &none_str, c.i64({1}), c.none()});
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

TEST_CASE("leaky_relu and elu", "[kernels][unary]") {
  KernelCall c;
  EValue* lr = c.f32({3});
  REQUIRE_FALSE(c.run("aten::leaky_relu.out", {c.f32({3}, {-2, 0, 3}), c.dbl(0.1), lr, lr}).failed());
  CHECK(c.t(lr).data_as<float>()[0] == Approx(-0.2));
  CHECK(c.t(lr).data_as<float>()[2] == 3.0f);
  EValue* el = c.f32({2});
  REQUIRE_FALSE(c.run("aten::elu.out", {c.f32({2}, {-1, 2}), c.dbl(1.0), c.integer(1), c.integer(1), el, el}).failed());
  CHECK(c.t(el).data_as<float>()[0] == Approx(std::expm1(-1.0)));
  CHECK(c.t(el).data_as<float>()[1] == 2.0f);
  REQUIRE(c.run("aten::leaky_relu.out", {c.i64({1}, {1}), c.dbl(0.1), c.i64({1}), c.none()}).failed());
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
