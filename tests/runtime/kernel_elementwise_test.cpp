// Scalar comparisons, where.self_out, and the unary kernels (exp, neg, hardtanh, clamp,
// threshold_backward). Expected values are hand-computed (exp(1) = 2.718281828...).
#include <cmath>
#include <string>

#include "runtime/kernel_test_util.h"

using etscope::ScalarType;
using etscope::EValue;
using etscope::testing::KernelCall;

TEST_CASE("ne.Scalar_out on int64 labels and le.Scalar_out on floats", "[kernels][elementwise]") {
  KernelCall c;
  EValue* ne = c.boolean({4});
  REQUIRE_FALSE(c.run("aten::ne.Scalar_out", {c.i64({4}, {3, -100, 0, 7}), c.integer(-100), ne, ne}).failed());
  CHECK(c.t(ne).values<bool>() == std::vector<bool>{true, false, true, true});
  EValue* le = c.boolean({2, 2});
  REQUIRE_FALSE(c.run("aten::le.Scalar_out", {c.f32({2, 2}, {-1, 0, 0.5f, NAN}), c.integer(0), le, le}).failed());
  CHECK(c.t(le).values<bool>() == std::vector<bool>{true, true, false, false});
  // 0.1 (double) rounds to 0.1f before comparing, as ATen does for a float32 tensor.
  EValue* le01 = c.boolean({1});
  REQUIRE_FALSE(c.run("aten::le.Scalar_out", {c.f32({1}, {0.1f}), c.dbl(0.1), le01, le01}).failed());
  CHECK(c.t(le01).values<bool>() == std::vector<bool>{true});
  EValue* gt = c.boolean({3});
  REQUIRE_FALSE(c.run("aten::gt.Scalar_out", {c.i64({3}, {1, 2, 3}), c.dbl(1.5), gt, gt}).failed());
  CHECK(c.t(gt).values<bool>() == std::vector<bool>{false, true, true});
  auto ctx = c.run("aten::eq.Scalar_out", {c.f32({3}), c.integer(0), c.boolean({2}), c.none()});
  REQUIRE(ctx.failed());
  CHECK(std::string(ctx.message()).find("eq.Scalar_out") != std::string::npos);
}

TEST_CASE("where.self_out broadcasts condition / self and other", "[kernels][elementwise]") {
  KernelCall c;
  // As in the training graphs: where(mask [4,1], scalar tensor, 0-dim tensor) -> [4,1].
  EValue* out = c.f32({4, 1});
  REQUIRE_FALSE(c.run("aten::where.self_out",
                      {c.boolean({4, 1}, {true, false, true, false}), c.f32({}, {2.5f}), c.f32({}, {0}), out, out})
                    .failed());
  CHECK(c.t(out).values<float>() == std::vector<float>{2.5f, 0, 2.5f, 0});
  EValue* o2 = c.f32({2, 3});
  REQUIRE_FALSE(c.run("aten::where.self_out", {c.boolean({1, 3}, {true, false, true}), c.f32({2, 1}, {1, 2}),
                                               c.f32({2, 3}, {10, 20, 30, 40, 50, 60}), o2, o2})
                    .failed());
  CHECK(c.t(o2).values<float>() == std::vector<float>{1, 20, 1, 2, 50, 2});
  EValue* oi = c.i64({3});
  REQUIRE_FALSE(c.run("aten::where.self_out",
                      {c.boolean({3}, {true, false, true}), c.i64({3}, {5, 6, 7}), c.i64({}, {0}), oi, oi})
                    .failed());
  CHECK(c.t(oi).values<int64_t>() == std::vector<int64_t>{5, 0, 7});
  auto ctx = c.run("aten::where.self_out", {c.boolean({3}), c.f32({2}), c.f32({3}), c.f32({3}), c.none()});
  REQUIRE(ctx.failed());
  CHECK(std::string(ctx.message()).find("where.self_out") != std::string::npos);
}

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

TEST_CASE("threshold_backward zeroes the gradient where self <= threshold", "[kernels][elementwise]") {
  KernelCall c;
  EValue* out = c.f32({4});
  REQUIRE_FALSE(c.run("aten::threshold_backward.grad_input",
                      {c.f32({4}, {1, 2, 3, 4}), c.f32({4}, {-1, 0, 0.1f, 5}), c.integer(0), out, out})
                    .failed());
  CHECK(c.t(out).values<float>() == std::vector<float>{0, 0, 3, 4});
  auto ctx = c.run("aten::threshold_backward.grad_input", {c.f32({4}), c.f32({3}), c.integer(0), out, out});
  REQUIRE(ctx.failed());
}
