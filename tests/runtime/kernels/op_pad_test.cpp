// Tests of padding (op_pad.cpp).
#include <cmath>
#include <cstdint>
#include <string>

#include "runtime/kernels/kernel_test_util.h"

using etscope::ScalarType;
using etscope::EValue;
using etscope::testing::KernelCall;

TEST_CASE("reflection and replication padding mirror or repeat the edges and refuse pads too large", "[kernels][pad]") {
  KernelCall c;
  EValue* x = c.f32({1, 3}, {1, 2, 3});
  EValue* r = c.f32({1, 6});
  REQUIRE_FALSE(c.run("aten::reflection_pad1d.out", {x, c.int_list({2, 1}), r}).failed());
  CHECK(c.t(r).values<float>() == std::vector<float>{3, 2, 1, 2, 3, 2});
  EValue* p = c.f32({1, 6});
  REQUIRE_FALSE(c.run("aten::replication_pad1d.out", {x, c.int_list({2, 1}), p}).failed());
  CHECK(c.t(p).values<float>() == std::vector<float>{1, 1, 1, 2, 3, 3});
  auto too_big = c.run("aten::reflection_pad1d.out", {x, c.int_list({3, 0}), r});
  REQUIRE(too_big.failed());
  CHECK(std::string(too_big.message()).find("smaller than dimension") != std::string::npos);
  REQUIRE(c.run("aten::reflection_pad2d.out", {x, c.int_list({1, 1}), r}).failed());
  REQUIRE(c.run("aten::replication_pad1d.out", {c.f32({1, 0}), c.int_list({1, 1}), p}).failed());
  REQUIRE(c.run("aten::replication_pad1d.out", {x, c.int_list({int64_t{1} << 62, 0}), p}).failed());
}

TEST_CASE("constant_pad_nd pads the last dims first and crops with negative pads", "[kernels][shape]") {
  KernelCall c;
  EValue* p = c.f32({3, 4});
  REQUIRE_FALSE(c.run("aten::constant_pad_nd.out", {c.f32({2, 2}, {1, 2, 3, 4}), c.int_list({1, 1, 0, 1}), c.dbl(-1), p, p}).failed());
  CHECK(c.t(p).values<float>() == std::vector<float>{-1, 1, 2, -1, -1, 3, 4, -1, -1, -1, -1, -1});
  EValue* cr = c.f32({2, 1});
  REQUIRE_FALSE(c.run("aten::constant_pad_nd.out", {c.f32({2, 2}, {1, 2, 3, 4}), c.int_list({-1, 0}), c.integer(0), cr, cr}).failed());
  CHECK(c.t(cr).values<float>() == std::vector<float>{2, 4});
  REQUIRE(c.run("aten::constant_pad_nd.out", {c.f32({2}), c.int_list({1}), c.integer(0), c.f32({3}), c.none()}).failed());
}
