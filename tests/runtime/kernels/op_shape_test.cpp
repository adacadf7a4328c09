// Tests of cat, stack, repeat, flip, roll, pixel_shuffle, tril (op_shape.cpp).
#include <cmath>
#include <cstdint>
#include <string>

#include "runtime/kernels/kernel_test_util.h"

using etscope::ScalarType;
using etscope::EValue;
using etscope::Tag;
using etscope::testing::KernelCall;
using etscope::testing::ramp;

TEST_CASE("repeat_interleave.Tensor lists each position as often as it repeats and checks output_size", "[kernels][index]") {
  KernelCall c;
  EValue* out = c.i64({5}, {}, 8);
  REQUIRE_FALSE(c.run("aten::repeat_interleave.Tensor_out", {c.i64({4}, {1, 0, 3, 1}), c.none(), out, out}).failed());
  CHECK(c.t(out).values<int64_t>() == std::vector<int64_t>{0, 2, 2, 2, 3});
  REQUIRE_FALSE(c.run("aten::repeat_interleave.Tensor_out", {c.i64({2}, {2, 1}), c.integer(3), out, out}).failed());
  CHECK(c.t(out).values<int64_t>() == std::vector<int64_t>{0, 0, 1});
  REQUIRE(c.run("aten::repeat_interleave.Tensor_out", {c.i64({2}, {2, 1}), c.integer(4), out, out}).failed());
  REQUIRE(c.run("aten::repeat_interleave.Tensor_out", {c.i64({2}, {-1, 1}), c.none(), out, out}).failed());
  REQUIRE(c.run("aten::repeat_interleave.Tensor_out", {c.i64({1}, {int64_t{1} << 50}), c.none(), out, out}).failed());
  REQUIRE(c.run("aten::repeat_interleave.Tensor_out", {c.i64({2}, {5, 5}), c.none(), out, out}).failed());
}

TEST_CASE("roll and pixel_shuffle / pixel_unshuffle", "[kernels][shape]") {
  KernelCall c;
  EValue* x = c.f32({2, 3}, ramp(6));
  EValue* r = c.f32({2, 3});
  REQUIRE_FALSE(c.run("aten::roll.out", {x, c.int_list({1}), c.int_list({-1}), r, r}).failed());
  CHECK(c.t(r).values<float>() == std::vector<float>{2, 0, 1, 5, 3, 4});
  EValue* rf = c.f32({2, 3});
  REQUIRE_FALSE(c.run("aten::roll.out", {x, c.int_list({-2}), c.int_list({}), rf, rf}).failed());
  CHECK(c.t(rf).values<float>() == std::vector<float>{2, 3, 4, 5, 0, 1});
  REQUIRE(c.run("aten::roll.out", {x, c.int_list({1, 1}), c.int_list({0}), r, r}).failed());
  // 4 channels of 1x1 -> 1 channel of 2x2, and back.
  EValue* ps = c.f32({1, 1, 2, 2});
  REQUIRE_FALSE(c.run("aten::pixel_shuffle.out", {c.f32({1, 4, 1, 1}, {1, 2, 3, 4}), c.integer(2), ps, ps}).failed());
  CHECK(c.t(ps).values<float>() == std::vector<float>{1, 2, 3, 4});
  // [4, 1, 2] -> [1, 2, 4]: out[y][x] = in[(y % 2) * 2 + x % 2][y / 2][x / 2].
  EValue* big = c.f32({4, 1, 2}, ramp(8));
  EValue* sh = c.f32({1, 2, 2});
  EValue* s2 = c.f32({1, 2, 4});
  REQUIRE_FALSE(c.run("aten::pixel_shuffle.out", {big, c.integer(2), s2, s2}).failed());
  CHECK(c.t(s2).values<float>() == std::vector<float>{0, 2, 1, 3, 4, 6, 5, 7});
  EValue* back = c.f32({4, 1, 2});
  REQUIRE_FALSE(c.run("aten::pixel_unshuffle.out", {s2, c.integer(2), back, back}).failed());
  CHECK(c.t(back).values<float>() == ramp(8));
  REQUIRE(c.run("aten::pixel_shuffle.out", {c.f32({1, 3, 1, 1}), c.integer(2), sh, sh}).failed());
}

TEST_CASE("stack inserts a dimension, negative dims count from rank + 1", "[kernels][shape]") {
  KernelCall c;
  EValue* a = c.f32({2}, {1, 2});
  EValue* b = c.f32({2}, {3, 4});
  EValue* s0 = c.f32({2, 2});
  REQUIRE_FALSE(c.run("aten::stack.out", {c.tensor_list({a, b}), c.integer(0), s0, s0}).failed());
  CHECK(c.t(s0).values<float>() == std::vector<float>{1, 2, 3, 4});
  EValue* s1 = c.f32({2, 2});
  REQUIRE_FALSE(c.run("aten::stack.out", {c.tensor_list({a, b}), c.integer(-1), s1, s1}).failed());
  CHECK(c.t(s1).values<float>() == std::vector<float>{1, 3, 2, 4});
  REQUIRE(c.run("aten::stack.out", {c.tensor_list({a, c.f32({3})}), c.integer(0), s0, s0}).failed());
  REQUIRE(c.run("aten::stack.out", {c.tensor_list({a, b}), c.integer(2), s0, s0}).failed());
}
