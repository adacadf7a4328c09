// Tests of indexing (op_index.cpp): gather / scatter, index_select, embedding, index.Tensor and index_put.
//
// The former tests/runtime/kernel_index_pad_test.cpp:
// Advanced indexing (index.Tensor, index_put), nonzero, masked_select, reflection/replication
// padding, strided-view copies and topk: small hand-checked values here, and the refusals of
// arguments ExecuTorch's kernels reject. Their agreement with ExecuTorch on many shapes and
// dtypes is proven by the conformance suite (op_conformance_test.cpp).
//
// The former tests/runtime/kernel_shape_test.cpp:
// Shape and index kernels of op_shape.cpp on ramps (each expected value is a source index).
#include <cmath>
#include <cstdint>
#include <numeric>
#include <string>

#include "runtime/kernels/kernel_test_util.h"

using etscope::ScalarType;
using etscope::EValue;
using etscope::testing::KernelCall;
using etscope::testing::ramp;

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

TEST_CASE("index.Tensor selects rows with negative and broadcast indices and refuses out-of-range ones", "[kernels][index]") {
  KernelCall c;
  EValue* x = c.f32({3, 2}, {0, 1, 10, 11, 20, 21});
  EValue* out = c.f32({2, 2});
  REQUIRE_FALSE(c.run("aten::index.Tensor_out", {x, c.tensor_list({c.i64({2}, {2, -3})}), out, out}).failed());
  CHECK(c.t(out).values<float>() == std::vector<float>{20, 21, 0, 1});
  // x[:, [1]] keeps dimension 0 in front; x[[0, 2], [1]] broadcasts the two index tensors.
  EValue* col = c.f32({3, 1});
  REQUIRE_FALSE(c.run("aten::index.Tensor_out", {x, c.tensor_list({nullptr, c.i64({1}, {1})}), col, col}).failed());
  CHECK(c.t(col).values<float>() == std::vector<float>{1, 11, 21});
  EValue* pair = c.f32({2});
  REQUIRE_FALSE(c.run("aten::index.Tensor_out", {x, c.tensor_list({c.i64({2}, {0, 2}), c.i64({1}, {1})}), pair, pair}).failed());
  CHECK(c.t(pair).values<float>() == std::vector<float>{1, 21});
  // A bool mask selects the rows where it is true.
  EValue* masked = c.f32({2, 2});
  REQUIRE_FALSE(c.run("aten::index.Tensor_out", {x, c.tensor_list({c.boolean({3}, {true, false, true})}), masked, masked}).failed());
  CHECK(c.t(masked).values<float>() == std::vector<float>{0, 1, 20, 21});

  EValue* one_row = c.f32({1, 2});
  auto bad = c.run("aten::index.Tensor_out", {x, c.tensor_list({c.i64({1}, {3})}), one_row, one_row});
  REQUIRE(bad.failed());
  CHECK(std::string(bad.message()).find("out of range") != std::string::npos);
  REQUIRE(c.run("aten::index.Tensor_out", {x, c.tensor_list({c.i64({1}, {-4})}), one_row, one_row}).failed());
  REQUIRE(c.run("aten::index.Tensor_out", {x, c.tensor_list({c.i64({2}, {0, 1}), c.i64({3}, {0, 1, 0})}), out, out}).failed());
  REQUIRE(c.run("aten::index.Tensor_out", {x, c.tensor_list({c.boolean({2}, {true, true})}), out, out}).failed());
  REQUIRE(c.run("aten::index.Tensor_out", {x, c.tensor_list({c.f32({1}, {0})}), out, out}).failed());
  REQUIRE(c.run("aten::index.Tensor_out", {x, c.tensor_list({c.i64({1}, {0}), c.i64({1}, {0}), c.i64({1}, {0})}), out, out}).failed());
  REQUIRE(c.run("aten::index.Tensor_out", {x, c.tensor_list({nullptr}), out, out}).failed());
  // A mask bigger than the scratch sized at load is refused, not read past.
  REQUIRE(c.run("aten::index.Tensor_out", {x, c.tensor_list({c.boolean({3}, {true, true, true})}), out, out}, 8).failed());
}

TEST_CASE("index_put sets or accumulates broadcast values and refuses bad indices", "[kernels][index]") {
  KernelCall c;
  EValue* x = c.f32({3, 2}, {0, 0, 0, 0, 0, 0});
  EValue* out = c.f32({3, 2});
  REQUIRE_FALSE(c.run("aten::index_put.out", {x, c.tensor_list({c.i64({2}, {0, 0})}), c.f32({2}, {1, 2}), c.boolean_scalar(true), out}).failed());
  CHECK(c.t(out).values<float>() == std::vector<float>{2, 4, 0, 0, 0, 0});
  REQUIRE_FALSE(c.run("aten::index_put.out", {x, c.tensor_list({c.i64({1}, {-1})}), c.f32({}, {5}), c.boolean_scalar(false), out}).failed());
  CHECK(c.t(out).values<float>() == std::vector<float>{0, 0, 0, 0, 5, 5});
  REQUIRE(c.run("aten::index_put.out", {x, c.tensor_list({c.i64({1}, {3})}), c.f32({}, {5}), c.boolean_scalar(false), out}).failed());
  REQUIRE(c.run("aten::index_put.out", {x, c.tensor_list({c.i64({1}, {0})}), c.f32({3}, {1, 2, 3}), c.boolean_scalar(false), out}).failed());
  REQUIRE(c.run("aten::index_put.out", {x, c.tensor_list({c.i64({1}, {0})}), c.i64({}, {1}), c.boolean_scalar(false), out}).failed());
}

TEST_CASE("index_put refuses index shapes that broadcast into more positions than the call holds", "[kernels][index]") {
  KernelCall c;
  // A 2x3 block of a 3x4 self through [2, 1] rows and [1, 3] columns: 6 positions, allowed.
  EValue* self = c.f32({3, 4}, std::vector<float>(12, 0.0f));
  EValue* out = c.f32({3, 4});
  REQUIRE_FALSE(c.run("aten::index_put.out", {self, c.tensor_list({c.i64({2, 1}, {0, 2}), c.i64({1, 3}, {1, 2, 3})}),
                                              c.f32({}, {5.0f}), c.boolean_scalar(false), out, out})
                    .failed());
  CHECK(c.t(out).values<float>() == std::vector<float>{0, 5, 5, 5, 0, 0, 0, 0, 0, 5, 5, 5});
  // [N, 1] with [1, N] indices and a scalar value: N * N positions into a 2x2 self.
  const int64_t n = 3000;
  EValue* small = c.f32({2, 2}, {0, 0, 0, 0});
  EValue* small_out = c.f32({2, 2});
  auto ctx = c.run("aten::index_put.out", {small, c.tensor_list({c.i64({n, 1}, std::vector<int64_t>(n, 0)),
                                                                  c.i64({1, n}, std::vector<int64_t>(n, 1))}),
                                           c.f32({}, {1.0f}), c.boolean_scalar(true), small_out, small_out});
  REQUIRE(ctx.failed());
  CHECK(std::string(ctx.message()).find("more positions than self, values and indices hold") != std::string::npos);
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
