// native_layer_norm.out and the any.* reductions. Layer norm of [1, 2, 3, 4]: mean 2.5, biased
// variance 1.25, rstd = 1 / sqrt(1.25 + eps).
#include <cmath>
#include <string>

#include "runtime/kernel_test_util.h"

using etscope::ScalarType;
using etscope::EValue;
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
  CHECK(c.t(y2).data_as<double>()[3] == Approx(1.5 * rstd).epsilon(1e-12));
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
