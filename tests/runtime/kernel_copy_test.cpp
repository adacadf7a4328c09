// Copies, shape changes, fills, gather/scatter. Expected values follow from the definitions and
// are written out by hand.
#include <string>

#include "runtime/kernel_test_util.h"

using etscope::ScalarType;
using etscope::EValue;
using etscope::testing::KernelCall;

TEST_CASE("alias_copy / squeeze_copy.dims_out / unsqueeze_copy", "[kernels][copy]") {
  KernelCall c;
  EValue* a = c.f32({2, 2});
  REQUIRE_FALSE(c.run("aten::alias_copy.out", {c.f32({2, 2}, {1, 2, 3, 4}), a, a}).failed());
  CHECK(c.t(a).values<float>() == std::vector<float>{1, 2, 3, 4});
  EValue* sq = c.f32({4});
  REQUIRE_FALSE(c.run("aten::squeeze_copy.dims_out", {c.f32({4, 1}, {1, 2, 3, 4}), c.int_list({1}), sq, sq}).failed());
  CHECK(c.t(sq).values<float>() == std::vector<float>{1, 2, 3, 4});
  // A listed dim whose size is not 1 stays.
  EValue* keep = c.f32({1, 3});
  REQUIRE_FALSE(
      c.run("aten::squeeze_copy.dims_out", {c.f32({1, 1, 3}, {1, 2, 3}), c.int_list({0, 2}), keep, keep}).failed());
  EValue* sq1 = c.f32({3});
  REQUIRE_FALSE(c.run("aten::squeeze_copy.dim_out", {c.f32({1, 3}, {7, 8, 9}), c.integer(0), sq1, sq1}).failed());
  CHECK(c.t(sq1).values<float>() == std::vector<float>{7, 8, 9});
  EValue* un = c.i64({4, 1});
  REQUIRE_FALSE(c.run("aten::unsqueeze_copy.out", {c.i64({4}, {1, 2, 3, 4}), c.integer(-1), un, un}).failed());
  CHECK(c.t(un).values<int64_t>() == std::vector<int64_t>{1, 2, 3, 4});
  EValue* un0 = c.i64({1, 4});
  REQUIRE_FALSE(c.run("aten::unsqueeze_copy.out", {c.i64({4}, {1, 2, 3, 4}), c.integer(0), un0, un0}).failed());
  auto ctx = c.run("aten::unsqueeze_copy.out", {c.i64({4}), c.integer(3), un, un});
  REQUIRE(ctx.failed());
  CHECK(std::string(ctx.message()).find("unsqueeze_copy.out") != std::string::npos);
  ctx = c.run("aten::squeeze_copy.dims_out", {c.f32({4, 1}), c.int_list({1}), c.f32({4, 1}), c.none()});
  REQUIRE(ctx.failed());
}

TEST_CASE("_to_dim_order_copy converts dtypes and dim orders", "[kernels][copy]") {
  KernelCall c;
  EValue* f = c.f32({});
  REQUIRE_FALSE(
      c.run("dim_order_ops::_to_dim_order_copy.out", {c.i64({}, {3}), c.boolean_scalar(false), c.int_list({}), f, f})
          .failed());
  CHECK(c.t(f).data_as<float>()[0] == 3.0f);
  EValue* fm = c.f32({2, 2});
  REQUIRE_FALSE(c.run("dim_order_ops::_to_dim_order_copy.out", {c.boolean({2, 2}, {true, false, false, true}),
                                                                c.boolean_scalar(false), c.int_list({0, 1}), fm, fm})
                    .failed());
  CHECK(c.t(fm).values<float>() == std::vector<float>{1, 0, 0, 1});
  // NCHW [1,2,2,2] -> channels-last (dim order 0,2,3,1): memory holds (h, w, c) triples.
  std::vector<float> nchw = {0, 1, 2, 3, 10, 11, 12, 13};
  EValue* cl = c.tensor<float>(ScalarType::kFloat, {1, 2, 2, 2}, {}, 0, {0, 2, 3, 1});
  REQUIRE_FALSE(c.run("dim_order_ops::_clone_dim_order.out",
                      {c.f32({1, 2, 2, 2}, nchw), c.boolean_scalar(false), c.int_list({0, 2, 3, 1}), cl, cl})
                    .failed());
  CHECK(c.t(cl).values<float>() == std::vector<float>{0, 10, 1, 11, 2, 12, 3, 13});
  // ... and back.
  EValue* back = c.f32({1, 2, 2, 2});
  REQUIRE_FALSE(
      c.run("dim_order_ops::_to_dim_order_copy.out", {cl, c.boolean_scalar(false), c.none(), back, back}).failed());
  CHECK(c.t(back).values<float>() == nchw);
  auto ctx = c.run("dim_order_ops::_to_dim_order_copy.out",
                   {c.f32({2, 2}), c.boolean_scalar(false), c.int_list({1, 0}), fm, fm});
  REQUIRE(ctx.failed());  // dim_order disagrees with the output's
  ctx = c.run("dim_order_ops::_clone_dim_order.out",
              {c.f32({2, 2}), c.boolean_scalar(false), c.none(), c.f32({2, 3}), c.none()});
  REQUIRE(ctx.failed());
}

TEST_CASE("clone / expand_copy / cat", "[kernels][copy]") {
  KernelCall c;
  EValue* cl = c.f32({3});
  REQUIRE_FALSE(c.run("aten::clone.out", {c.f32({3}, {1, 2, 3}), c.none(), cl, cl}).failed());
  CHECK(c.t(cl).values<float>() == std::vector<float>{1, 2, 3});
  EValue* ex = c.f32({2, 2, 3});
  REQUIRE_FALSE(
      c.run("aten::expand_copy.out", {c.f32({2, 1}, {1, 2}), c.int_list({2, -1, 3}), c.boolean_scalar(false), ex, ex})
          .failed());
  CHECK(c.t(ex).values<float>() == std::vector<float>{1, 1, 1, 2, 2, 2, 1, 1, 1, 2, 2, 2});
  auto ctx = c.run("aten::expand_copy.out", {c.f32({2, 2}), c.int_list({2, 3}), c.boolean_scalar(false), ex, ex});
  REQUIRE(ctx.failed());
  // Whole trailing dimensions are copied as blocks: [3,1,2] -> [2,3,4,2] takes rows of 2 from
  // self, broadcast over a leading dimension and a middle one; against the definition.
  std::vector<float> self(6);
  for (size_t i = 0; i < self.size(); ++i) self[i] = static_cast<float>(i);
  EValue* big = c.f32({2, 3, 4, 2});
  REQUIRE_FALSE(c.run("aten::expand_copy.out",
                      {c.f32({3, 1, 2}, self), c.int_list({2, 3, 4, -1}), c.boolean_scalar(false), big, big})
                    .failed());
  std::vector<float> want;
  for (int a = 0; a < 2; ++a)
    for (int b = 0; b < 3; ++b)
      for (int k = 0; k < 4; ++k)
        for (int d = 0; d < 2; ++d) want.push_back(self[static_cast<size_t>(b * 2 + d)]);
  CHECK(c.t(big).values<float>() == want);
  EValue* cat = c.f32({2, 3});
  REQUIRE_FALSE(c.run("aten::cat.out", {c.tensor_list({c.f32({2, 1}, {1, 2}), c.f32({0}), c.f32({2, 2}, {3, 4, 5, 6})}),
                                        c.integer(1), cat, cat})
                    .failed());
  CHECK(c.t(cat).values<float>() == std::vector<float>{1, 3, 4, 2, 5, 6});
  EValue* cat0 = c.f32({3, 1});
  REQUIRE_FALSE(
      c.run("aten::cat.out", {c.tensor_list({c.f32({2, 1}, {1, 2}), c.f32({1, 1}, {9})}), c.integer(0), cat0, cat0})
          .failed());
  CHECK(c.t(cat0).values<float>() == std::vector<float>{1, 2, 9});
  ctx = c.run("aten::cat.out", {c.tensor_list({c.f32({2, 1}), c.f32({3, 1})}), c.integer(1), cat, cat});
  REQUIRE(ctx.failed());
  CHECK(std::string(ctx.message()).find("cat.out") != std::string::npos);
}

TEST_CASE("full_like and scalar_tensor", "[kernels][copy]") {
  KernelCall c;
  EValue* fl = c.f32({2, 2});
  REQUIRE_FALSE(c.run("aten::full_like.out", {c.f32({2, 2}), c.integer(1), c.integer(1), fl, fl}).failed());
  CHECK(c.t(fl).values<float>() == std::vector<float>{1, 1, 1, 1});
  EValue* st = c.i64({});
  REQUIRE_FALSE(c.run("aten::scalar_tensor.out", {c.integer(0), st, st}).failed());
  CHECK(c.t(st).data_as<int64_t>()[0] == 0);
  EValue* sf = c.f32({});
  REQUIRE_FALSE(c.run("aten::scalar_tensor.out", {c.dbl(-0.5), sf, sf}).failed());
  CHECK(c.t(sf).data_as<float>()[0] == -0.5f);
  auto ctx = c.run("aten::full_like.out", {c.f32({2, 3}), c.integer(1), c.none(), fl, fl});
  REQUIRE(ctx.failed());
}

TEST_CASE("gather and scatter.value_out with int64 index", "[kernels][copy]") {
  KernelCall c;
  // The cross-entropy pattern: pick each row's label column from log-probs [4, 3].
  EValue* g = c.f32({4, 1});
  EValue* lp = c.f32({4, 3}, {0, 1, 2, 10, 11, 12, 20, 21, 22, 30, 31, 32});
  REQUIRE_FALSE(
      c.run("aten::gather.out", {lp, c.integer(1), c.i64({4, 1}, {2, 0, 1, 2}), c.boolean_scalar(false), g, g})
          .failed());
  CHECK(c.t(g).values<float>() == std::vector<float>{2, 10, 21, 32});
  EValue* g0 = c.f32({1, 3});
  REQUIRE_FALSE(c.run("aten::gather.out", {lp, c.integer(0), c.i64({1, 3}, {3, 0, 2}), c.boolean_scalar(false), g0, g0})
                    .failed());
  CHECK(c.t(g0).values<float>() == std::vector<float>{30, 1, 22});
  auto ctx = c.run("aten::gather.out", {lp, c.integer(1), c.i64({4, 1}, {3, 0, 0, 0}), c.boolean_scalar(false), g, g});
  REQUIRE(ctx.failed());
  CHECK(std::string(ctx.message()).find("gather.out") != std::string::npos);
  ctx = c.run("aten::gather.out", {lp, c.integer(1), c.i64({4}, {0, 0, 0, 0}), c.boolean_scalar(false), g, g});
  REQUIRE(ctx.failed());

  EValue* s = c.f32({2, 3});
  REQUIRE_FALSE(c.run("aten::scatter.value_out",
                      {c.f32({2, 3}, {0, 0, 0, 0, 0, 0}), c.integer(1), c.i64({2, 1}, {1, 2}), c.integer(-1), s, s})
                    .failed());
  CHECK(c.t(s).values<float>() == std::vector<float>{0, -1, 0, 0, 0, -1});
  ctx = c.run("aten::scatter.value_out", {c.f32({2, 3}), c.integer(1), c.i64({2, 1}, {1, 5}), c.integer(-1), s, s});
  REQUIRE(ctx.failed());
}
