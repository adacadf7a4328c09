// slice_copy, select_copy, split_copy, split_with_sizes_copy, embedding and full (op_slice.cpp,
// op_copy.cpp). Inputs are ramps, so every expected element is its source index.
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

TEST_CASE("slice_copy: negative dim and bounds, steps, clamping, empty results", "[kernels][slice]") {
  KernelCall c;
  EValue* x = c.f32({2, 5}, ramp(10));
  // x[:, 1:4]
  EValue* a = c.f32({2, 3});
  REQUIRE_FALSE(c.run("aten::slice_copy.Tensor_out", {x, c.integer(-1), c.integer(1), c.integer(4), c.integer(1), a, a}).failed());
  CHECK(c.t(a).values<float>() == std::vector<float>{1, 2, 3, 6, 7, 8});
  // x[:, ::2] with None bounds; end = INT64_MAX as exported programs write it.
  EValue* b = c.f32({2, 3});
  REQUIRE_FALSE(c.run("aten::slice_copy.Tensor_out",
                      {x, c.integer(1), c.none(), c.integer(INT64_MAX), c.integer(2), b, b})
                    .failed());
  CHECK(c.t(b).values<float>() == std::vector<float>{0, 2, 4, 5, 7, 9});
  // x[:, -2:] and x[1:, ...]
  EValue* d = c.f32({2, 2});
  REQUIRE_FALSE(c.run("aten::slice_copy.Tensor_out", {x, c.integer(1), c.integer(-2), c.none(), c.integer(1), d, d}).failed());
  CHECK(c.t(d).values<float>() == std::vector<float>{3, 4, 8, 9});
  EValue* e = c.f32({1, 5});
  REQUIRE_FALSE(c.run("aten::slice_copy.Tensor_out", {x, c.integer(0), c.integer(1), c.integer(9), c.integer(1), e, e}).failed());
  CHECK(c.t(e).values<float>() == std::vector<float>{5, 6, 7, 8, 9});
  // start past end gives an empty dimension (dynamic output shrinks).
  EValue* z = c.f32({2, 5}, {}, 10);
  REQUIRE_FALSE(c.run("aten::slice_copy.Tensor_out", {x, c.integer(1), c.integer(4), c.integer(2), c.integer(1), z, z}).failed());
  CHECK(c.t(z).size(1) == 0);
  CHECK(c.t(z).size(0) == 2);
  // Rejected: step 0, dim out of range, dtype change.
  auto ctx = c.run("aten::slice_copy.Tensor_out", {x, c.integer(1), c.integer(0), c.integer(2), c.integer(0), a, a});
  REQUIRE(ctx.failed());
  CHECK(std::string(ctx.message()).find("step") != std::string::npos);
  ctx = c.run("aten::slice_copy.Tensor_out", {x, c.integer(2), c.integer(0), c.integer(2), c.integer(1), a, a});
  REQUIRE(ctx.failed());
  ctx = c.run("aten::slice_copy.Tensor_out", {x, c.integer(1), c.integer(1), c.integer(4), c.integer(1), c.i64({2, 3}), c.none()});
  REQUIRE(ctx.failed());
}

TEST_CASE("select_copy removes the dimension and a negative index counts from the end", "[kernels][slice]") {
  KernelCall c;
  EValue* x = c.tensor<int64_t>(ScalarType::kLong, {2, 3, 2}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11});
  EValue* a = c.i64({2, 2});
  REQUIRE_FALSE(c.run("aten::select_copy.int_out", {x, c.integer(1), c.integer(-1), a, a}).failed());
  CHECK(c.t(a).values<int64_t>() == std::vector<int64_t>{4, 5, 10, 11});
  EValue* b = c.i64({3, 2});
  REQUIRE_FALSE(c.run("aten::select_copy.int_out", {x, c.integer(0), c.integer(1), b, b}).failed());
  CHECK(c.t(b).values<int64_t>() == std::vector<int64_t>{6, 7, 8, 9, 10, 11});
  // A 1-D input gives a 0-dim output (the attention-mask pattern).
  EValue* s = c.boolean({});
  REQUIRE_FALSE(c.run("aten::select_copy.int_out", {c.boolean({3}, {false, true, false}), c.integer(0), c.integer(1), s, s}).failed());
  CHECK(c.t(s).values<bool>() == std::vector<bool>{true});
  auto ctx = c.run("aten::select_copy.int_out", {x, c.integer(1), c.integer(3), a, a});
  REQUIRE(ctx.failed());
  CHECK(std::string(ctx.message()).find("index 3") != std::string::npos);
  REQUIRE(c.run("aten::select_copy.int_out", {x, c.integer(-4), c.integer(0), a, a}).failed());
  REQUIRE(c.run("aten::select_copy.int_out", {x, c.integer(1), c.integer(0), c.i64({2, 1, 2}), c.none()}).failed());
}

TEST_CASE("split_copy and split_with_sizes_copy", "[kernels][slice]") {
  KernelCall c;
  EValue* x = c.f32({5, 2}, ramp(10));
  EValue* o0 = c.f32({2, 2});
  EValue* o1 = c.f32({2, 2});
  EValue* o2 = c.f32({1, 2});
  REQUIRE_FALSE(c.run("aten::split_copy.Tensor_out", {x, c.integer(2), c.integer(0), c.tensor_list({o0, o1, o2})}).failed());
  CHECK(c.t(o0).values<float>() == std::vector<float>{0, 1, 2, 3});
  CHECK(c.t(o1).values<float>() == std::vector<float>{4, 5, 6, 7});
  CHECK(c.t(o2).values<float>() == std::vector<float>{8, 9});
  // LSTM gates: split along the last dim (-1) with sizes.
  EValue* s0 = c.f32({5, 1});
  EValue* s1 = c.f32({5, 1});
  REQUIRE_FALSE(c.run("aten::split_with_sizes_copy.out", {x, c.int_list({1, 1}), c.integer(-1), c.tensor_list({s0, s1})}).failed());
  CHECK(c.t(s0).values<float>() == std::vector<float>{0, 2, 4, 6, 8});
  CHECK(c.t(s1).values<float>() == std::vector<float>{1, 3, 5, 7, 9});
  // Wrong output count, sizes that do not add up, a zero split size.
  auto ctx = c.run("aten::split_copy.Tensor_out", {x, c.integer(2), c.integer(0), c.tensor_list({o0, o1})});
  REQUIRE(ctx.failed());
  CHECK(std::string(ctx.message()).find("expected 3 outputs") != std::string::npos);
  ctx = c.run("aten::split_with_sizes_copy.out", {x, c.int_list({1, 2}), c.integer(1), c.tensor_list({s0, s1})});
  REQUIRE(ctx.failed());
  REQUIRE(c.run("aten::split_copy.Tensor_out", {x, c.integer(0), c.integer(0), c.tensor_list({o0})}).failed());
  REQUIRE(c.run("aten::split_copy.Tensor_out", {x, c.integer(5), c.integer(2), c.tensor_list({o0})}).failed());
}

TEST_CASE("embedding gathers rows for int64 and int32 indices", "[kernels][slice]") {
  KernelCall c;
  EValue* w = c.f32({3, 2}, {0, 1, 10, 11, 20, 21});
  EValue* out = c.f32({2, 2, 2});
  REQUIRE_FALSE(c.run("aten::embedding.out", {w, c.i64({2, 2}, {2, 0, 1, 2}), c.integer(-1), c.boolean_scalar(false),
                                              c.boolean_scalar(false), out, out})
                    .failed());
  CHECK(c.t(out).values<float>() == std::vector<float>{20, 21, 0, 1, 10, 11, 20, 21});
  EValue* o32 = c.f32({1, 2});
  REQUIRE_FALSE(c.run("aten::embedding.out", {w, c.tensor<int32_t>(ScalarType::kInt, {1}, {1}), c.integer(-1),
                                              c.boolean_scalar(false), c.boolean_scalar(false), o32, o32})
                    .failed());
  CHECK(c.t(o32).values<float>() == std::vector<float>{10, 11});
  auto ctx = c.run("aten::embedding.out", {w, c.i64({1}, {3}), c.integer(-1), c.boolean_scalar(false),
                                           c.boolean_scalar(false), o32, o32});
  REQUIRE(ctx.failed());
  CHECK(std::string(ctx.message()).find("out of range") != std::string::npos);
  ctx = c.run("aten::embedding.out", {w, c.f32({1}, {0}), c.integer(-1), c.boolean_scalar(false),
                                      c.boolean_scalar(false), o32, o32});
  REQUIRE(ctx.failed());
}

TEST_CASE("full.out resizes and fills, converting the value", "[kernels][slice]") {
  KernelCall c;
  EValue* f = c.f32({2, 3}, {}, 6);
  REQUIRE_FALSE(c.run("aten::full.out", {c.int_list({3, 2}), c.dbl(1.5), f, f}).failed());
  CHECK(c.t(f).size(0) == 3);
  CHECK(c.t(f).values<float>() == std::vector<float>(6, 1.5f));
  EValue* b = c.boolean({2});
  REQUIRE_FALSE(c.run("aten::full.out", {c.int_list({2}), c.integer(3), b, b}).failed());
  CHECK(c.t(b).values<bool>() == std::vector<bool>{true, true});
  REQUIRE(c.run("aten::full.out", {c.int_list({2, 2}), c.integer(0), b, b}).failed());
}
