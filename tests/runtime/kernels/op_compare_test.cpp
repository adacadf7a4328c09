// Tests of comparisons, where and allclose (op_compare.cpp).
//
// The former tests/runtime/kernel_elementwise_test.cpp:
// Scalar comparisons, where.self_out, and the unary kernels (exp, neg, hardtanh, clamp,
// threshold_backward). Expected values are hand-computed (exp(1) = 2.718281828...).
#include <cmath>
#include <cstdint>
#include <limits>
#include <numeric>
#include <string>

#include "runtime/kernels/kernel_test_util.h"

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
  // A mask over the whole tensor and a 0-dim value on either side (ReLU backward's form).
  EValue* o3 = c.f32({2, 5});
  const std::vector<bool> mask{true, false, false, true, true, false, true, false, false, true};
  REQUIRE_FALSE(c.run("aten::where.self_out", {c.boolean({2, 5}, mask), c.f32({}, {-1}),
                                               c.f32({2, 5}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9}), o3, o3})
                    .failed());
  CHECK(c.t(o3).values<float>() == std::vector<float>{-1, 1, 2, -1, -1, 5, -1, 7, 8, -1});
  EValue* o4 = c.f32({2, 5});
  REQUIRE_FALSE(c.run("aten::where.self_out", {c.boolean({2, 5}, mask), c.f32({2, 5}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9}),
                                               c.f32({}, {-1}), o4, o4})
                    .failed());
  CHECK(c.t(o4).values<float>() == std::vector<float>{0, -1, -1, 3, 4, -1, 6, -1, -1, 9});
  EValue* oi = c.i64({3});
  REQUIRE_FALSE(c.run("aten::where.self_out",
                      {c.boolean({3}, {true, false, true}), c.i64({3}, {5, 6, 7}), c.i64({}, {0}), oi, oi})
                    .failed());
  CHECK(c.t(oi).values<int64_t>() == std::vector<int64_t>{5, 0, 7});
  auto ctx = c.run("aten::where.self_out", {c.boolean({3}), c.f32({2}), c.f32({3}), c.f32({3}), c.none()});
  REQUIRE(ctx.failed());
  CHECK(std::string(ctx.message()).find("where.self_out") != std::string::npos);
}

TEST_CASE("comparisons of two tensors broadcast and mix dtypes", "[kernels][pointwise]") {
  KernelCall c;
  EValue* lt = c.boolean({2, 3});
  REQUIRE_FALSE(c.run("aten::lt.Tensor_out", {c.f32({2, 1}, {1, 5}), c.i64({3}, {0, 2, 5}), lt, lt}).failed());
  CHECK(c.t(lt).values<bool>() == std::vector<bool>{false, true, true, false, false, false});
  EValue* eq = c.boolean({3});
  REQUIRE_FALSE(c.run("aten::eq.Tensor_out", {c.i64({3}, {1, 2, 3}), c.i64({3}, {1, 0, 3}), eq, eq}).failed());
  CHECK(c.t(eq).values<bool>() == std::vector<bool>{true, false, true});
  EValue* ne = c.boolean({2});
  REQUIRE_FALSE(c.run("aten::ne.Tensor_out", {c.f32({2}, {NAN, 1}), c.f32({2}, {NAN, 1}), ne, ne}).failed());
  CHECK(c.t(ne).values<bool>() == std::vector<bool>{true, false});
  REQUIRE(c.run("aten::ge.Tensor_out", {c.f32({2}), c.f32({3}), c.boolean({3}), c.none()}).failed());
}

TEST_CASE("allclose follows ExecuTorch's definition", "[kernels][qweight]") {
  KernelCall c;
  EValue* out = c.boolean({1});
  REQUIRE_FALSE(c.run("aten::allclose.out", {c.f32({2}, {1.0f, 2.0f}), c.f32({2}, {1.0f, 2.00001f}), c.dbl(1e-5), c.dbl(1e-8),
                                             c.boolean_scalar(false), c.boolean_scalar(false), out, out})
                    .failed());
  CHECK(c.t(out).values<bool>()[0]);
  REQUIRE_FALSE(c.run("aten::allclose.out", {c.f32({1}, {NAN}), c.f32({1}, {NAN}), c.dbl(1e-5), c.dbl(1e-8),
                                             c.boolean_scalar(true), c.boolean_scalar(false), out, out})
                    .failed());
  CHECK_FALSE(c.t(out).values<bool>()[0]);  // NaN is never close, equal_nan or not
  REQUIRE_FALSE(c.run("aten::allclose.Tensor", {c.i64({2}, {1, 2}), c.i64({2}, {1, 3}), c.dbl(1.0), c.dbl(1.0),
                                                c.boolean_scalar(false), c.boolean_scalar(false), out})
                    .failed());
  CHECK_FALSE(c.t(out).values<bool>()[0]);  // integers compare exactly
  CHECK(c.run("aten::allclose.out", {c.f32({2}), c.f32({3}), c.dbl(0), c.dbl(0), c.boolean_scalar(false),
                                     c.boolean_scalar(false), out, out})
            .failed());
}
