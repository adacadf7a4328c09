// Shape and index kernels of op_shape.cpp on ramps (each expected value is a source index).
#include <cmath>
#include <string>

#include "runtime/kernel_test_util.h"

using etscope::ScalarType;
using etscope::EValue;
using etscope::testing::KernelCall;

namespace {
std::vector<float> ramp(int n) {
  std::vector<float> v(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) v[static_cast<size_t>(i)] = static_cast<float>(i);
  return v;
}
}  // namespace

TEST_CASE("stack inserts a dimension, negative dims count from rank + 1", "[kernels][shape]") {
  KernelCall c;
  EValue* a = c.f32({2}, {1, 2});
  EValue* b = c.f32({2}, {3, 4});
  EValue* s0 = c.f32({2, 2});
  REQUIRE_FALSE(c.run("aten::stack.out", {c.tensor_list({a, b}), c.integer(0), s0, s0}).failed());
  CHECK(c.t(s0).values<float>() == std::vector<float>{1, 2, 3, 4});
  EValue* s1 = c.f32({2, 2});
  REQUIRE_FALSE(c.run("aten::stack.out", {c.tensor_list({a, b}), c.integer(-1), s1, s1}).failed());
  CHECK(c.t(s1).values<float>() == std::vector<float>{1, 3, 2, 4});
  REQUIRE(c.run("aten::stack.out", {c.tensor_list({a, c.f32({3})}), c.integer(0), s0, s0}).failed());
  REQUIRE(c.run("aten::stack.out", {c.tensor_list({a, b}), c.integer(2), s0, s0}).failed());
}

TEST_CASE("transpose_copy / t_copy / flip / repeat", "[kernels][shape]") {
  KernelCall c;
  EValue* x = c.f32({2, 3}, ramp(6));
  EValue* t = c.f32({3, 2});
  REQUIRE_FALSE(c.run("aten::transpose_copy.int_out", {x, c.integer(0), c.integer(-1), t, t}).failed());
  CHECK(c.t(t).values<float>() == std::vector<float>{0, 3, 1, 4, 2, 5});
  EValue* tt = c.f32({3, 2});
  REQUIRE_FALSE(c.run("aten::t_copy.out", {x, tt, tt}).failed());
  CHECK(c.t(tt).values<float>() == c.t(t).values<float>());
  EValue* f = c.f32({2, 3});
  REQUIRE_FALSE(c.run("aten::flip.out", {x, c.int_list({-1}), f, f}).failed());
  CHECK(c.t(f).values<float>() == std::vector<float>{2, 1, 0, 5, 4, 3});
  EValue* r = c.f32({2, 2, 3});
  REQUIRE_FALSE(c.run("aten::repeat.out", {c.f32({1, 3}, {7, 8, 9}), c.int_list({2, 2, 1}), r, r}).failed());
  CHECK(c.t(r).values<float>() == std::vector<float>{7, 8, 9, 7, 8, 9, 7, 8, 9, 7, 8, 9});
  REQUIRE(c.run("aten::repeat.out", {x, c.int_list({2}), r, r}).failed());
  REQUIRE(c.run("aten::transpose_copy.int_out", {x, c.integer(0), c.integer(2), t, t}).failed());
  REQUIRE(c.run("aten::flip.out", {x, c.int_list({1, -1}), f, f}).failed());
}

TEST_CASE("constant_pad_nd pads the last dims first and crops with negative pads", "[kernels][shape]") {
  KernelCall c;
  EValue* p = c.f32({3, 4});
  REQUIRE_FALSE(c.run("aten::constant_pad_nd.out", {c.f32({2, 2}, {1, 2, 3, 4}), c.int_list({1, 1, 0, 1}), c.dbl(-1), p, p}).failed());
  CHECK(c.t(p).values<float>() == std::vector<float>{-1, 1, 2, -1, -1, 3, 4, -1, -1, -1, -1, -1});
  EValue* cr = c.f32({2, 1});
  REQUIRE_FALSE(c.run("aten::constant_pad_nd.out", {c.f32({2, 2}, {1, 2, 3, 4}), c.int_list({-1, 0}), c.integer(0), cr, cr}).failed());
  CHECK(c.t(cr).values<float>() == std::vector<float>{2, 4});
  REQUIRE(c.run("aten::constant_pad_nd.out", {c.f32({2}), c.int_list({1}), c.integer(0), c.f32({3}), c.none()}).failed());
}

TEST_CASE("index_select / masked_fill / tril", "[kernels][shape]") {
  KernelCall c;
  EValue* x = c.f32({2, 3}, ramp(6));
  EValue* s = c.f32({2, 2});
  REQUIRE_FALSE(c.run("aten::index_select.out", {x, c.integer(-1), c.i64({2}, {2, -3}), s, s}).failed());
  CHECK(c.t(s).values<float>() == std::vector<float>{2, 0, 5, 3});
  REQUIRE(c.run("aten::index_select.out", {x, c.integer(1), c.i64({1}, {3}), c.f32({2, 1}), c.none()}).failed());
  // Attention masks: a [1, 3] bool mask broadcast over rows.
  EValue* m = c.f32({2, 3});
  REQUIRE_FALSE(c.run("aten::masked_fill.Scalar_out", {x, c.boolean({1, 3}, {false, true, false}), c.dbl(-INFINITY), m, m}).failed());
  CHECK(std::isinf(c.t(m).data_as<float>()[1]));
  CHECK(c.t(m).data_as<float>()[3] == 3.0f);
  REQUIRE(c.run("aten::masked_fill.Scalar_out", {x, c.f32({1, 3}), c.dbl(0), m, m}).failed());
  EValue* t = c.f32({2, 3});
  REQUIRE_FALSE(c.run("aten::tril.out", {x, c.integer(0), t, t}).failed());
  CHECK(c.t(t).values<float>() == std::vector<float>{0, 0, 0, 3, 4, 0});
  EValue* tn = c.f32({2, 3});
  REQUIRE_FALSE(c.run("aten::tril.out", {x, c.integer(-1), tn, tn}).failed());
  CHECK(c.t(tn).values<float>() == std::vector<float>{0, 0, 0, 3, 0, 0});
  REQUIRE(c.run("aten::tril.out", {c.f32({3}), c.integer(0), c.f32({3}), c.none()}).failed());
}

TEST_CASE("arange / zeros / ones / cumsum", "[kernels][shape]") {
  KernelCall c;
  EValue* a = c.i64({5}, {}, 8);
  REQUIRE_FALSE(c.run("aten::arange.out", {c.integer(5), a, a}).failed());
  CHECK(c.t(a).values<int64_t>() == std::vector<int64_t>{0, 1, 2, 3, 4});
  EValue* af = c.f32({4}, {}, 8);
  REQUIRE_FALSE(c.run("aten::arange.start_out", {c.integer(1), c.dbl(2.5), c.dbl(0.5), af, af}).failed());
  CHECK(c.t(af).values<float>() == std::vector<float>{1, 1.5f, 2});
  REQUIRE(c.run("aten::arange.start_out", {c.integer(0), c.integer(5), c.integer(0), af, af}).failed());
  EValue* z = c.f32({2});
  REQUIRE_FALSE(c.run("aten::ones.out", {c.int_list({2}), z, z}).failed());
  CHECK(c.t(z).values<float>() == std::vector<float>{1, 1});
  REQUIRE_FALSE(c.run("aten::zeros.out", {c.int_list({2}), z, z}).failed());
  CHECK(c.t(z).values<float>() == std::vector<float>{0, 0});
  EValue* cs = c.i64({2, 3});
  REQUIRE_FALSE(c.run("aten::cumsum.out", {c.tensor<int32_t>(ScalarType::kInt, {2, 3}, {1, 2, 3, 4, 5, 6}), c.integer(-1),
                                           c.integer(static_cast<int64_t>(ScalarType::kLong)), cs, cs})
                    .failed());
  CHECK(c.t(cs).values<int64_t>() == std::vector<int64_t>{1, 3, 6, 4, 9, 15});
  EValue* c0 = c.f32({2, 3});
  REQUIRE_FALSE(c.run("aten::cumsum.out", {c.f32({2, 3}, ramp(6)), c.integer(0), c.none(), c0, c0}).failed());
  CHECK(c.t(c0).values<float>() == std::vector<float>{0, 1, 2, 3, 5, 7});
  REQUIRE(c.run("aten::cumsum.out", {c.f32({2}), c.integer(0), c.integer(static_cast<int64_t>(ScalarType::kLong)), c0, c0}).failed());
}

TEST_CASE("amax / amin / max.dim / min.dim / argmin", "[kernels][shape][reduce]") {
  KernelCall c;
  EValue* x = c.f32({2, 3}, {3, -1, 4, 1, 5, NAN});
  EValue* am = c.f32({2});
  REQUIRE_FALSE(c.run("aten::amax.out", {x, c.int_list({-1}), c.boolean_scalar(false), am, am}).failed());
  CHECK(c.t(am).data_as<float>()[0] == 4.0f);
  CHECK(std::isnan(c.t(am).data_as<float>()[1]));
  EValue* an = c.f32({1, 3});
  REQUIRE_FALSE(c.run("aten::amin.out", {x, c.int_list({0}), c.boolean_scalar(true), an, an}).failed());
  CHECK(c.t(an).data_as<float>()[0] == 1.0f);
  CHECK(c.t(an).data_as<float>()[1] == -1.0f);
  EValue* all = c.f32({});
  REQUIRE_FALSE(c.run("aten::amin.out", {c.f32({2, 2}, {4, 2, 3, 9}), c.int_list({}), c.boolean_scalar(false), all, all}).failed());
  CHECK(c.t(all).values<float>() == std::vector<float>{2});
  EValue* v = c.i64({2});
  EValue* i = c.i64({2});
  REQUIRE_FALSE(c.run("aten::max.dim_max", {c.i64({2, 3}, {1, 7, 7, 9, 0, 2}), c.integer(1), c.boolean_scalar(false), v, i}).failed());
  CHECK(c.t(v).values<int64_t>() == std::vector<int64_t>{7, 9});
  CHECK(c.t(i).values<int64_t>() == std::vector<int64_t>{1, 0});  // first of the ties
  EValue* mv = c.f32({3});
  EValue* mi = c.i64({3});
  REQUIRE_FALSE(c.run("aten::min.dim_min", {x, c.integer(0), c.boolean_scalar(false), mv, mi}).failed());
  CHECK(c.t(mi).values<int64_t>() == std::vector<int64_t>{1, 0, 1});
  EValue* ai = c.i64({});
  REQUIRE_FALSE(c.run("aten::argmin.out", {c.f32({2, 2}, {4, 2, 3, -9}), c.none(), c.boolean_scalar(false), ai, ai}).failed());
  CHECK(c.t(ai).values<int64_t>() == std::vector<int64_t>{3});
  REQUIRE(c.run("aten::argmin.out", {c.f32({0}), c.none(), c.boolean_scalar(false), ai, ai}).failed());
  REQUIRE(c.run("aten::amax.out", {c.f32({0, 2}), c.int_list({0}), c.boolean_scalar(false), c.f32({2}), c.none()}).failed());
}

TEST_CASE("scatter.src_out and scatter_add.out", "[kernels][index]") {
  KernelCall c;
  // dim 1: out[i][index[i][j]] = src[i][j]; src is larger than index.
  EValue* out = c.f32({2, 3});
  REQUIRE_FALSE(c.run("aten::scatter.src_out", {c.f32({2, 3}, {0, 0, 0, 0, 0, 0}), c.integer(1), c.i64({2, 1}, {2, 0}),
                                               c.f32({2, 2}, {7, 8, 9, 10}), out, out})
                    .failed());
  CHECK(c.t(out).values<float>() == std::vector<float>{0, 0, 7, 9, 0, 0});
  EValue* add = c.i64({3});
  REQUIRE_FALSE(c.run("aten::scatter_add.out", {c.i64({3}, {1, 1, 1}), c.integer(0), c.i64({4}, {0, 2, 0, 0}),
                                               c.i64({4}, {5, 6, 7, 8}), add, add})
                    .failed());
  CHECK(c.t(add).values<int64_t>() == std::vector<int64_t>{21, 1, 7});
  auto ctx = c.run("aten::scatter_add.out", {c.i64({3}), c.integer(0), c.i64({1}, {3}), c.i64({1}), add, add});
  REQUIRE(ctx.failed());
  CHECK(std::string(ctx.message()).find("out of range") != std::string::npos);
  REQUIRE(c.run("aten::scatter.src_out", {c.f32({3}), c.integer(0), c.i64({2}, {0, 1}), c.f32({1}), c.f32({3}), c.none()}).failed());
}
