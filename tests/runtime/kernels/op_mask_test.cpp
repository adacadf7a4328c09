// Tests of boolean masks (op_mask.cpp).
#include <cstdint>
#include <string>

#include "runtime/kernels/kernel_test_util.h"

using etscope::ScalarType;
using etscope::EValue;
using etscope::testing::KernelCall;

TEST_CASE("nonzero and masked_select size their outputs by the data", "[kernels][index]") {
  KernelCall c;
  EValue* nz = c.i64({4, 2}, {}, 8);
  REQUIRE_FALSE(c.run("aten::nonzero.out", {c.f32({2, 2}, {0, 3, 4, 0}), nz}).failed());
  CHECK(c.t(nz).values<int64_t>() == std::vector<int64_t>{0, 1, 1, 0});
  EValue* sel = c.f32({4}, {}, 4);
  REQUIRE_FALSE(c.run("aten::masked_select.out", {c.f32({2, 2}, {1, 2, 3, 4}), c.boolean({2}, {false, true}), sel}).failed());
  CHECK(c.t(sel).values<float>() == std::vector<float>{2, 4});
  REQUIRE(c.run("aten::masked_select.out", {c.f32({2, 2}), c.boolean({3}), sel}).failed());
  REQUIRE(c.run("aten::nonzero.out", {c.f32({2, 2}), c.f32({4, 2})}).failed());
}
