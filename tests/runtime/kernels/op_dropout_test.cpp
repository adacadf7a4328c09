// Tests of native_dropout (op_dropout.cpp).
#include <string>

#include "runtime/kernels/kernel_test_util.h"

using etscope::ScalarType;
using etscope::EValue;
using etscope::testing::KernelCall;

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
