// _native_batch_norm_legit_no_training and native_dropout.
#include <string>

#include "runtime/kernel_test_util.h"

using etscope::ScalarType;
using etscope::EValue;
using etscope::testing::KernelCall;

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

TEST_CASE("native_dropout: eval passes through / train keeps about 1 - p scaled", "[kernels][norm]") {
  KernelCall c;
  std::vector<float> ones(1000, 1.0f);
  EValue* out = c.f32({1000});
  EValue* mask = c.boolean({1000});
  REQUIRE_FALSE(
      c.run("aten::native_dropout.out", {c.f32({1000}, ones), c.dbl(0.5), c.boolean_scalar(false), out, mask, c.none()})
          .failed());
  CHECK(c.t(out).values<float>() == ones);
  for (bool b : c.t(mask).values<bool>()) CHECK(b);
  REQUIRE_FALSE(
      c.run("aten::native_dropout.out", {c.f32({1000}, ones), c.dbl(0.25), c.boolean_scalar(true), out, mask, c.none()})
          .failed());
  const auto m = c.t(mask).values<bool>();
  const auto y = c.t(out).values<float>();
  int kept = 0;
  for (size_t i = 0; i < m.size(); ++i) {
    kept += m[i];
    CHECK(y[i] == (m[i] ? Approx(1.0 / 0.75) : Approx(0.0)));
  }
  CHECK(kept > 650);
  CHECK(kept < 850);
  auto ctx =
      c.run("aten::native_dropout.out", {c.f32({1000}, ones), c.dbl(1.5), c.boolean_scalar(true), out, mask, c.none()});
  REQUIRE(ctx.failed());
  ctx = c.run("aten::native_dropout.out",
              {c.f32({1000}), c.dbl(0.5), c.boolean_scalar(true), out, c.f32({1000}), c.none()});
  REQUIRE(ctx.failed());
}
