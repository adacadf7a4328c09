// sum.IntList_out, mean.out, argmax.out, _log_softmax.out, _softmax.out. Expected values are
// hand-computed; the softmax literals were evaluated with Python's math module
// (e.g. 3 + log(1 + e^-1 + e^-2) = 3.4076059644).
#include <string>

#include "runtime/kernel_test_util.h"

using etscope::ScalarType;
using etscope::EValue;
using etscope::testing::KernelCall;

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

TEST_CASE("_log_softmax.out and _softmax.out", "[kernels][reduce]") {
  KernelCall c;
  EValue* ls = c.f32({2, 3});
  auto ctx = c.run("aten::_log_softmax.out",
                   {c.f32({2, 3}, {1, 2, 3, 1001, 1002, 1003}), c.integer(1), c.boolean_scalar(false), ls, ls});
  REQUIRE_FALSE(ctx.failed());
  const double expect[3] = {-2.4076059644, -1.4076059644, -0.4076059644};
  for (int r = 0; r < 2; ++r)
    for (int i = 0; i < 3; ++i) CHECK(c.t(ls).data_as<float>()[r * 3 + i] == Approx(expect[i]).margin(1e-5));
  EValue* sm = c.f32({3, 1});
  ctx = c.run("aten::_softmax.out", {c.f32({3, 1}, {1, 2, 3}), c.integer(0), c.boolean_scalar(false), sm, sm});
  REQUIRE_FALSE(ctx.failed());
  CHECK(c.t(sm).data_as<float>()[0] == Approx(0.0900305732));
  CHECK(c.t(sm).data_as<float>()[1] == Approx(0.2447284711));
  CHECK(c.t(sm).data_as<float>()[2] == Approx(0.6652409558));
  ctx = c.run("aten::_log_softmax.out", {c.f32({2, 3}), c.integer(2), c.boolean_scalar(false), ls, ls});
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
