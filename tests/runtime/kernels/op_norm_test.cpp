// Tests of normalisation (op_norm.cpp).
//
// The former tests/runtime/kernel_layer_norm_any_test.cpp:
// native_layer_norm.out and the any.* reductions. Layer norm of [1, 2, 3, 4]: mean 2.5, biased
// variance 1.25, rstd = 1 / sqrt(1.25 + eps).
//
// The former tests/runtime/kernel_misc_ops_test.cpp:
// native_group_norm, div with rounding modes, clamp with tensor bounds, logit, glu, roll and
// pixel_shuffle / pixel_unshuffle; values by definition (group [1, 2, 3, 4]: mean 2.5,
// variance 1.25).
//
// The former tests/runtime/kernel_norm_test.cpp:
// _native_batch_norm_legit_no_training and native_dropout.
#include <cmath>
#include <string>

#include "runtime/kernels/kernel_test_util.h"

using etscope::ScalarType;
using etscope::EValue;
using etscope::Tag;
using etscope::testing::KernelCall;

TEST_CASE("native_layer_norm normalises the trailing dims, with weight and bias", "[kernels][norm]") {
  KernelCall c;
  const double eps = 1e-5;
  const double rstd = 1.0 / std::sqrt(1.25 + eps);
  EValue* y = c.f32({2, 4});
  EValue* mean = c.f32({2, 1});
  EValue* rs = c.f32({2, 1});
  REQUIRE_FALSE(c.run("aten::native_layer_norm.out",
                      {c.f32({2, 4}, {1, 2, 3, 4, 10, 10, 10, 10}), c.int_list({4}), c.f32({4}, {1, 1, 2, 2}),
                       c.f32({4}, {0, 0, 0, 1}), c.dbl(eps), y, mean, rs})
                    .failed());
  const float* v = c.t(y).data_as<float>();
  CHECK(v[0] == Approx(-1.5 * rstd));
  CHECK(v[1] == Approx(-0.5 * rstd));
  CHECK(v[2] == Approx(2 * 0.5 * rstd));
  CHECK(v[3] == Approx(2 * 1.5 * rstd + 1));
  // A constant row normalises to 0 (then bias).
  CHECK(v[4] == 0.0f);
  CHECK(v[7] == 1.0f);
  CHECK(c.t(mean).values<float>() == std::vector<float>{2.5f, 10});
  CHECK(c.t(rs).data_as<float>()[0] == Approx(rstd));
  CHECK(c.t(rs).data_as<float>()[1] == Approx(1.0 / std::sqrt(eps)));
  // Two normalised dims, no weight / bias, float64.
  EValue* y2 = c.tensor<double>(ScalarType::kDouble, {1, 2, 2});
  EValue* m2 = c.tensor<double>(ScalarType::kDouble, {1, 1, 1});
  EValue* r2 = c.tensor<double>(ScalarType::kDouble, {1, 1, 1});
  REQUIRE_FALSE(c.run("aten::native_layer_norm.out",
                      {c.tensor<double>(ScalarType::kDouble, {1, 2, 2}, {1, 2, 3, 4}), c.int_list({2, 2}), c.none(),
                       c.none(), c.dbl(eps), y2, m2, r2})
                    .failed());
  // ExecuTorch sums a short row in float whatever the dtype (conformance: layer_norm_f64 bit for
  // bit), so a float64 result has float32's precision.
  CHECK(c.t(y2).data_as<double>()[3] == Approx(1.5 * rstd).epsilon(1e-6));
  CHECK(c.t(y2).data_as<double>()[3] != Approx(1.5 * rstd).epsilon(1e-12));
  CHECK(c.t(m2).values<double>() == std::vector<double>{2.5});
  // Rejected: normalized_shape not matching the trailing dims, weight of the wrong shape.
  auto ctx = c.run("aten::native_layer_norm.out",
                   {c.f32({2, 4}), c.int_list({3}), c.none(), c.none(), c.dbl(eps), y, mean, rs});
  REQUIRE(ctx.failed());
  CHECK(std::string(ctx.message()).find("native_layer_norm.out") != std::string::npos);
  ctx = c.run("aten::native_layer_norm.out",
              {c.f32({2, 4}), c.int_list({4}), c.f32({3}), c.none(), c.dbl(eps), y, mean, rs});
  REQUIRE(ctx.failed());
  ctx = c.run("aten::native_layer_norm.out",
              {c.i64({2, 4}), c.int_list({4}), c.none(), c.none(), c.dbl(eps), c.i64({2, 4}), c.i64({2, 1}), c.i64({2, 1})});
  REQUIRE(ctx.failed());
}

TEST_CASE("native_group_norm normalises channel groups", "[kernels][norm]") {
  KernelCall c;
  const double eps = 1e-5, rstd = 1.0 / std::sqrt(1.25 + eps);
  EValue* y = c.f32({1, 4, 2});
  EValue* m = c.f32({1, 2});
  EValue* r = c.f32({1, 2});
  REQUIRE_FALSE(c.run("aten::native_group_norm.out",
                      {c.f32({1, 4, 2}, {1, 2, 3, 4, 10, 10, 10, 10}), c.f32({4}, {1, 1, 2, 2}), c.f32({4}, {0, 0, 0, 1}),
                       c.integer(1), c.integer(4), c.integer(2), c.integer(2), c.dbl(eps), y, m, r})
                    .failed());
  const float* v = c.t(y).data_as<float>();
  CHECK(v[0] == Approx(-1.5 * rstd));
  CHECK(v[3] == Approx(1.5 * rstd));
  CHECK(v[4] == 0.0f);
  CHECK(v[7] == 1.0f);
  CHECK(c.t(m).values<float>() == std::vector<float>{2.5f, 10});
  CHECK(c.t(r).data_as<float>()[0] == Approx(rstd));
  REQUIRE(c.run("aten::native_group_norm.out", {c.f32({1, 4, 2}), c.none(), c.none(), c.integer(1), c.integer(4),
                                                c.integer(2), c.integer(3), c.dbl(eps), y, m, r})
              .failed());
}

TEST_CASE("batch norm (no training) normalises each channel", "[kernels][norm]") {
  KernelCall c;
  EValue* out = c.f32({1, 2, 1, 2});
  EValue* e1 = c.f32({0});
  EValue* e2 = c.f32({0});
  // channel 0: (x - 1) / sqrt(4 + 0) * 2 + 1; channel 1 without weight/bias: (x - 0) / sqrt(1).
  auto ctx = c.run("aten::_native_batch_norm_legit_no_training.out",
                   {c.f32({1, 2, 1, 2}, {1, 5, 3, -3}), c.f32({2}, {2, 1}), c.f32({2}, {1, 0}), c.f32({2}, {1, 0}),
                    c.f32({2}, {4, 1}), c.dbl(0.1), c.dbl(0.0), out, e1, e2, c.none()});
  REQUIRE_FALSE(ctx.failed());
  CHECK(c.t(out).values<float>() == std::vector<float>{1, 5, 3, -3});
  EValue* out2 = c.f32({2, 1});
  ctx = c.run("aten::_native_batch_norm_legit_no_training.out",
              {c.f32({2, 1}, {3, 5}), c.none(), c.none(), c.f32({1}, {1}), c.f32({1}, {3}), c.dbl(0.1), c.dbl(1.0),
               out2, e1, e2, c.none()});
  REQUIRE_FALSE(ctx.failed());
  CHECK(c.t(out2).values<float>() == std::vector<float>{1, 2});  // (x - 1) / sqrt(3 + 1)
  ctx = c.run("aten::_native_batch_norm_legit_no_training.out",
              {c.f32({1, 3, 2}), c.none(), c.none(), c.f32({2}), c.f32({2}), c.dbl(0.1), c.dbl(1e-5), c.f32({1, 3, 2}),
               e1, e2, c.none()});
  REQUIRE(ctx.failed());
  CHECK(std::string(ctx.message()).find("batch_norm") != std::string::npos);
}
