// Tests of reductions and cumsum (op_reduce.cpp).
//
// The former tests/runtime/kernel_reduce_test.cpp:
// sum.IntList_out, mean.out, argmax.out, _log_softmax.out, _softmax.out. Expected values are
// hand-computed; the softmax literals were evaluated with Python's math module
// (e.g. 3 + log(1 + e^-1 + e^-2) = 3.4076059644).
#include <cmath>
#include <string>

#include "runtime/kernels/kernel_test_util.h"

using etscope::ScalarType;
using etscope::EValue;
using etscope::testing::KernelCall;

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

TEST_CASE("any.all_out / any.out / any.dims_out", "[kernels][reduce]") {
  KernelCall c;
  EValue* x = c.f32({2, 3}, {0, 0, 0, 0, NAN, 0});
  EValue* all = c.boolean({});
  REQUIRE_FALSE(c.run("aten::any.all_out", {x, all, all}).failed());
  CHECK(c.t(all).values<bool>() == std::vector<bool>{true});  // NaN is non-zero
  EValue* none_set = c.boolean({});
  REQUIRE_FALSE(c.run("aten::any.all_out", {c.i64({0}), none_set, none_set}).failed());
  CHECK(c.t(none_set).values<bool>() == std::vector<bool>{false});  // empty: false
  EValue* rows = c.boolean({2});
  REQUIRE_FALSE(c.run("aten::any.out", {x, c.integer(-1), c.boolean_scalar(false), rows, rows}).failed());
  CHECK(c.t(rows).values<bool>() == std::vector<bool>{false, true});
  EValue* cols = c.boolean({1, 3});
  REQUIRE_FALSE(c.run("aten::any.out", {x, c.integer(0), c.boolean_scalar(true), cols, cols}).failed());
  CHECK(c.t(cols).values<bool>() == std::vector<bool>{false, true, false});
  EValue* m = c.boolean({2, 2, 2}, {false, false, false, true, false, false, false, false});
  EValue* d = c.boolean({2});
  REQUIRE_FALSE(c.run("aten::any.dims_out", {m, c.int_list({1, 2}), c.boolean_scalar(false), d, d}).failed());
  CHECK(c.t(d).values<bool>() == std::vector<bool>{true, false});
  EValue* dn = c.boolean({});
  REQUIRE_FALSE(c.run("aten::any.dims_out", {m, c.none(), c.boolean_scalar(false), dn, dn}).failed());
  CHECK(c.t(dn).values<bool>() == std::vector<bool>{true});
  // An empty dim list reduces nothing.
  EValue* de = c.boolean({3});
  REQUIRE_FALSE(c.run("aten::any.dims_out", {c.i64({3}, {0, 4, 0}), c.int_list({}), c.boolean_scalar(false), de, de}).failed());
  CHECK(c.t(de).values<bool>() == std::vector<bool>{false, true, false});
  // uint8 output works; float output and repeated / out-of-range dims do not.
  EValue* u8 = c.tensor<uint8_t>(ScalarType::kByte, {2});
  REQUIRE_FALSE(c.run("aten::any.out", {x, c.integer(1), c.boolean_scalar(false), u8, u8}).failed());
  CHECK(c.t(u8).values<uint8_t>() == std::vector<uint8_t>{0, 1});
  REQUIRE(c.run("aten::any.out", {x, c.integer(1), c.boolean_scalar(false), c.f32({2}), c.none()}).failed());
  REQUIRE(c.run("aten::any.out", {x, c.integer(2), c.boolean_scalar(false), rows, rows}).failed());
  REQUIRE(c.run("aten::any.dims_out", {m, c.int_list({1, -2}), c.boolean_scalar(false), d, d}).failed());
}

TEST_CASE("sum.IntList_out over all / one and several dims", "[kernels][reduce]") {
  KernelCall c;
  EValue* x = c.f32({2, 3}, {1, 2, 3, 4, 5, 6});
  EValue* all = c.f32({});
  REQUIRE_FALSE(
      c.run("aten::sum.IntList_out", {x, c.int_list({}), c.boolean_scalar(false), c.none(), all, all}).failed());
  CHECK(c.t(all).data_as<float>()[0] == 21);
  EValue* rows = c.f32({1, 3});
  REQUIRE_FALSE(
      c.run("aten::sum.IntList_out", {x, c.int_list({0}), c.boolean_scalar(true), c.none(), rows, rows}).failed());
  CHECK(c.t(rows).values<float>() == std::vector<float>{5, 7, 9});
  EValue* cols = c.f32({2});
  REQUIRE_FALSE(
      c.run("aten::sum.IntList_out", {x, c.int_list({-1}), c.boolean_scalar(false), c.none(), cols, cols}).failed());
  CHECK(c.t(cols).values<float>() == std::vector<float>{6, 15});
  EValue* none_dims = c.f32({});
  REQUIRE_FALSE(
      c.run("aten::sum.IntList_out", {x, c.none(), c.boolean_scalar(false), c.none(), none_dims, none_dims}).failed());
  CHECK(c.t(none_dims).data_as<float>()[0] == 21);
  EValue* x3 = c.f32({2, 2, 2}, {1, 2, 3, 4, 5, 6, 7, 8});
  EValue* o3 = c.f32({2});
  REQUIRE_FALSE(
      c.run("aten::sum.IntList_out", {x3, c.int_list({0, 2}), c.boolean_scalar(false), c.none(), o3, o3}).failed());
  CHECK(c.t(o3).values<float>() == std::vector<float>{1 + 2 + 5 + 6, 3 + 4 + 7 + 8});
}

TEST_CASE("sum.IntList_out counts a bool tensor into int64", "[kernels][reduce]") {
  KernelCall c;
  EValue* out = c.i64({});
  auto ctx = c.run("aten::sum.IntList_out", {c.boolean({4}, {true, false, true, true}), c.int_list({}),
                                             c.boolean_scalar(false), c.none(), out, out});
  REQUIRE_FALSE(ctx.failed());
  CHECK(c.t(out).data_as<int64_t>()[0] == 3);
}

TEST_CASE("sum.IntList_out rejects bad dims and output ranks", "[kernels][reduce]") {
  KernelCall c;
  EValue* x = c.f32({2, 3});
  EValue* out = c.f32({2});
  auto ctx = c.run("aten::sum.IntList_out", {x, c.int_list({2}), c.boolean_scalar(false), c.none(), out, out});
  REQUIRE(ctx.failed());
  CHECK(std::string(ctx.message()).find("sum.IntList_out") != std::string::npos);
  ctx = c.run("aten::sum.IntList_out", {x, c.int_list({1}), c.boolean_scalar(true), c.none(), out, out});
  REQUIRE(ctx.failed());
}

TEST_CASE("mean.out over the spatial dims with keepdim", "[kernels][reduce]") {
  KernelCall c;
  // As mobilenet_v2's global average pool: [N, C, H, W] -> [N, C, 1, 1] over dims [-1, -2].
  EValue* out = c.f32({1, 2, 1, 1});
  auto ctx = c.run("aten::mean.out", {c.f32({1, 2, 2, 2}, {1, 2, 3, 4, 10, 20, 30, 40}), c.int_list({-1, -2}),
                                      c.boolean_scalar(true), c.none(), out, out});
  REQUIRE_FALSE(ctx.failed());
  CHECK(c.t(out).values<float>() == std::vector<float>{2.5f, 25.0f});
  ctx = c.run("aten::mean.out",
              {c.i64({2}, {1, 2}), c.int_list({0}), c.boolean_scalar(false), c.none(), c.i64({}), c.none()});
  REQUIRE(ctx.failed());  // integral output
}

// ExecuTorch's portable mean and sum add float elements in a float, in order (double ones in a
// double): 2^24 + 1 + 1 + 1 stays 2^24 in float at every step (ties to even), where a double
// accumulator would give 2^24 + 3. An LLM's RMSNorm is this mean of squares; its last place can
// move a dynamically quantized integer in the layer after it.
TEST_CASE("mean.out and sum.IntList_out accumulate floats in the output's precision and in order", "[kernels][reduce]") {
  KernelCall c;
  const float big = 16777216.0f;  // 2^24: adding 1 rounds back to it
  EValue* x = c.f32({2, 4}, {big, 1, 1, 1, 1, 1, 1, big});
  EValue* m = c.f32({2, 1});
  REQUIRE_FALSE(c.run("aten::mean.out", {x, c.int_list({-1}), c.boolean_scalar(true), c.none(), m, m}).failed());
  // Row 0: ((2^24 + 1) + 1) + 1 = 2^24 in float; row 1: 1 + 1 + 1 = 3, + 2^24 = 2^24 + 4 (tie to even).
  CHECK(c.t(m).values<float>() == std::vector<float>{big / 4, (big + 4) / 4});
  EValue* s = c.f32({2});
  REQUIRE_FALSE(c.run("aten::sum.IntList_out", {x, c.int_list({1}), c.boolean_scalar(false), c.none(), s, s}).failed());
  CHECK(c.t(s).values<float>() == std::vector<float>{big, big + 4});
  // A double output still sums in double.
  EValue* d = c.tensor<double>(ScalarType::kDouble, {});
  auto ctx = c.run("aten::mean.out", {c.tensor<double>(ScalarType::kDouble, {4}, {9007199254740992.0, 1, 1, 1}),
                                      c.int_list({0}), c.boolean_scalar(false), c.none(), d, d});
  INFO(ctx.message());
  REQUIRE_FALSE(ctx.failed());
  CHECK(c.t(d).values<double>() == std::vector<double>{9007199254740992.0 / 4});
  // Many rows (16 at a time on AVX-512, then the rest): each still summed in order. Row r has
  // 2^24 at position r % 33 among ones and small fractions, so where it falls decides the sum.
  const int64_t rows = 37, n = 33;
  std::vector<float> v(static_cast<size_t>(rows * n));
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t i = 0; i < n; ++i) v[static_cast<size_t>(r * n + i)] = i == r % n ? big : 1.0f + 0.125f * static_cast<float>((r + i) % 3);
  }
  std::vector<float> want_sum(static_cast<size_t>(rows)), want_mean(static_cast<size_t>(rows));
  for (int64_t r = 0; r < rows; ++r) {
    float acc = 0;
    for (int64_t i = 0; i < n; ++i) acc += v[static_cast<size_t>(r * n + i)];
    want_sum[static_cast<size_t>(r)] = acc;
    want_mean[static_cast<size_t>(r)] = acc / static_cast<float>(n);
  }
  EValue* xs = c.f32({rows, 1, n}, v);
  EValue* ms = c.f32({rows, 1, 1});
  REQUIRE_FALSE(c.run("aten::mean.out", {xs, c.int_list({-1, -2}), c.boolean_scalar(true), c.none(), ms, ms}).failed());
  CHECK(c.t(ms).values<float>() == want_mean);
  EValue* ss = c.f32({rows, 1});
  REQUIRE_FALSE(c.run("aten::sum.IntList_out", {xs, c.int_list({2}), c.boolean_scalar(false), c.none(), ss, ss}).failed());
  CHECK(c.t(ss).values<float>() == want_sum);
}

TEST_CASE("argmax.out along a dim and flattened", "[kernels][reduce]") {
  KernelCall c;
  EValue* x = c.f32({2, 3}, {1, 7, 7, 9, -1, 2});
  EValue* out = c.i64({2});
  REQUIRE_FALSE(c.run("aten::argmax.out", {x, c.integer(1), c.boolean_scalar(false), out, out}).failed());
  CHECK(c.t(out).values<int64_t>() == std::vector<int64_t>{1, 0});  // first maximum wins
  EValue* o0 = c.i64({1, 3});
  REQUIRE_FALSE(c.run("aten::argmax.out", {x, c.integer(0), c.boolean_scalar(true), o0, o0}).failed());
  CHECK(c.t(o0).values<int64_t>() == std::vector<int64_t>{1, 0, 0});
  EValue* flat = c.i64({});
  REQUIRE_FALSE(c.run("aten::argmax.out", {x, c.none(), c.boolean_scalar(false), flat, flat}).failed());
  CHECK(c.t(flat).data_as<int64_t>()[0] == 3);
  EValue* nan = c.i64({});
  REQUIRE_FALSE(
      c.run("aten::argmax.out", {c.f32({3}, {1, NAN, 5}), c.none(), c.boolean_scalar(false), nan, nan}).failed());
  CHECK(c.t(nan).data_as<int64_t>()[0] == 1);
  auto ctx = c.run("aten::argmax.out", {x, c.integer(1), c.boolean_scalar(false), c.f32({2}), c.none()});
  REQUIRE(ctx.failed());
}

TEST_CASE("mean.dtype_out and sum.out reduce every element", "[kernels][reduce]") {
  KernelCall c;
  EValue* m = c.f32({});
  REQUIRE_FALSE(c.run("aten::mean.dtype_out", {c.f32({2, 2}, {1, 2, 3, 6}), c.none(), m, m}).failed());
  CHECK(c.t(m).data_as<float>()[0] == 3.0f);
  EValue* s = c.i64({});
  REQUIRE_FALSE(c.run("aten::sum.out", {c.i64({3}, {1, 2, 3}), c.none(), s, s}).failed());
  CHECK(c.t(s).data_as<int64_t>()[0] == 6);
  REQUIRE(c.run("aten::sum.out", {c.i64({3}), c.none(), c.i64({1}), c.none()}).failed());
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
