// Copies and fills added to op_copy.cpp, the slice family's narrow / unbind / scatters, and the
// var / prod / max / min reductions. Expected values by definition (var of [1, 2, 3, 4] is
// 1.25 biased, 5/3 unbiased).
#include <cmath>
#include <string>

#include "runtime/kernel_test_util.h"

using etscope::ScalarType;
using etscope::EValue;
using etscope::testing::KernelCall;

TEST_CASE("detach_copy / _to_copy / copy / fill / empty", "[kernels][copy]") {
  KernelCall c;
  EValue* d = c.f32({2});
  REQUIRE_FALSE(c.run("aten::detach_copy.out", {c.f32({2}, {1, 2}), d, d}).failed());
  CHECK(c.t(d).values<float>() == std::vector<float>{1, 2});
  REQUIRE(c.run("aten::lift_fresh_copy.out", {c.f32({2}), c.i64({2}), c.none()}).failed());
  EValue* tc = c.i64({3});
  REQUIRE_FALSE(c.run("aten::_to_copy.out", {c.f32({3}, {1.9f, -1.9f, 0}), c.boolean_scalar(false), c.none(), tc, tc}).failed());
  CHECK(c.t(tc).values<int64_t>() == std::vector<int64_t>{1, -1, 0});
  EValue* cp = c.f32({2, 2});
  REQUIRE_FALSE(c.run("aten::copy.out", {c.f32({2, 2}), c.i64({2}, {5, 6}), c.boolean_scalar(false), cp, cp}).failed());
  CHECK(c.t(cp).values<float>() == std::vector<float>{5, 6, 5, 6});
  REQUIRE(c.run("aten::copy.out", {c.f32({2, 2}), c.f32({3}), c.boolean_scalar(false), cp, cp}).failed());
  EValue* fs = c.i64({2});
  REQUIRE_FALSE(c.run("aten::fill.Scalar_out", {c.i64({2}), c.integer(-4), fs, fs}).failed());
  CHECK(c.t(fs).values<int64_t>() == std::vector<int64_t>{-4, -4});
  EValue* ft = c.f32({3});
  REQUIRE_FALSE(c.run("aten::fill.Tensor_out", {c.f32({3}), c.tensor<double>(ScalarType::kDouble, {}, {2.5}), ft, ft}).failed());
  CHECK(c.t(ft).values<float>() == std::vector<float>{2.5f, 2.5f, 2.5f});
  REQUIRE(c.run("aten::fill.Tensor_out", {c.f32({3}), c.f32({1}, {1}), ft, ft}).failed());
  EValue* e = c.f32({1, 1}, {}, 8);
  REQUIRE_FALSE(c.run("aten::empty.out", {c.int_list({2, 4}), c.none(), e, e}).failed());
  CHECK(c.t(e).numel() == 8);
  REQUIRE(c.run("aten::empty.out", {c.int_list({3, 4}), c.none(), e, e}).failed());  // past capacity
}

TEST_CASE("narrow_copy / unbind_copy / slice_scatter / select_scatter", "[kernels][slice]") {
  KernelCall c;
  EValue* x = c.f32({2, 3}, {0, 1, 2, 3, 4, 5});
  EValue* n = c.f32({2, 2});
  REQUIRE_FALSE(c.run("aten::narrow_copy.out", {x, c.integer(1), c.integer(-2), c.integer(2), n, n}).failed());
  CHECK(c.t(n).values<float>() == std::vector<float>{1, 2, 4, 5});
  REQUIRE(c.run("aten::narrow_copy.out", {x, c.integer(1), c.integer(2), c.integer(2), n, n}).failed());
  EValue* u0 = c.f32({2});
  EValue* u1 = c.f32({2});
  EValue* u2 = c.f32({2});
  REQUIRE_FALSE(c.run("aten::unbind_copy.int_out", {x, c.integer(-1), c.tensor_list({u0, u1, u2})}).failed());
  CHECK(c.t(u2).values<float>() == std::vector<float>{2, 5});
  REQUIRE(c.run("aten::unbind_copy.int_out", {x, c.integer(0), c.tensor_list({u0, u1, u2})}).failed());
  EValue* ss = c.f32({2, 3});
  REQUIRE_FALSE(c.run("aten::slice_scatter.out", {x, c.f32({2, 2}, {-1, -2, -3, -4}), c.integer(1), c.integer(0),
                                                  c.none(), c.integer(2), ss, ss})
                    .failed());
  CHECK(c.t(ss).values<float>() == std::vector<float>{-1, 1, -2, -3, 4, -4});
  REQUIRE(c.run("aten::slice_scatter.out", {x, c.f32({2, 3}), c.integer(1), c.integer(0), c.none(), c.integer(2), ss, ss}).failed());
  EValue* se = c.f32({2, 3});
  REQUIRE_FALSE(c.run("aten::select_scatter.out", {x, c.f32({3}, {7, 8, 9}), c.integer(0), c.integer(-1), se, se}).failed());
  CHECK(c.t(se).values<float>() == std::vector<float>{0, 1, 2, 7, 8, 9});
  REQUIRE(c.run("aten::select_scatter.out", {x, c.f32({2}), c.integer(0), c.integer(0), se, se}).failed());
}

TEST_CASE("var / prod / max.unary / min.unary", "[kernels][reduce]") {
  KernelCall c;
  EValue* x = c.f32({2, 4}, {1, 2, 3, 4, 5, 5, 5, 5});
  EValue* v = c.f32({2});
  REQUIRE_FALSE(c.run("aten::var.correction_out", {x, c.int_list({-1}), c.none(), c.boolean_scalar(false), v, v}).failed());
  CHECK(c.t(v).data_as<float>()[0] == Approx(5.0 / 3.0));
  CHECK(c.t(v).data_as<float>()[1] == 0.0f);
  EValue* vb = c.f32({2, 1});
  REQUIRE_FALSE(c.run("aten::var.out", {x, c.int_list({1}), c.boolean_scalar(false), c.boolean_scalar(true), vb, vb}).failed());
  CHECK(c.t(vb).data_as<float>()[0] == Approx(1.25));
  EValue* v1 = c.f32({});
  REQUIRE_FALSE(c.run("aten::var.correction_out", {c.f32({1}, {3}), c.none(), c.integer(1), c.boolean_scalar(false), v1, v1}).failed());
  CHECK(std::isnan(c.t(v1).data_as<float>()[0]));  // N - correction = 0
  REQUIRE(c.run("aten::var.out", {c.i64({2}), c.none(), c.boolean_scalar(true), c.boolean_scalar(false), c.i64({}), c.none()}).failed());
  EValue* p = c.i64({});
  REQUIRE_FALSE(c.run("aten::prod.out", {c.tensor<int32_t>(ScalarType::kInt, {3}, {2, -3, 4}), c.none(), p, p}).failed());
  CHECK(c.t(p).values<int64_t>() == std::vector<int64_t>{-24});
  EValue* pd = c.f32({2});
  REQUIRE_FALSE(c.run("aten::prod.int_out", {x, c.integer(1), c.boolean_scalar(false), c.none(), pd, pd}).failed());
  CHECK(c.t(pd).values<float>() == std::vector<float>{24, 625});
  EValue* pe = c.f32({});
  REQUIRE_FALSE(c.run("aten::prod.out", {c.f32({0}), c.none(), pe, pe}).failed());
  CHECK(c.t(pe).values<float>() == std::vector<float>{1});  // empty product
  EValue* mx = c.f32({});
  REQUIRE_FALSE(c.run("aten::max.unary_out", {x, mx, mx}).failed());
  CHECK(c.t(mx).values<float>() == std::vector<float>{5});
  EValue* mn = c.f32({});
  REQUIRE_FALSE(c.run("aten::min.unary_out", {c.f32({3}, {2, NAN, -1}), mn, mn}).failed());
  CHECK(std::isnan(c.t(mn).data_as<float>()[0]));
  REQUIRE(c.run("aten::max.unary_out", {c.f32({0}), mx, mx}).failed());
}
