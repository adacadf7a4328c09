// Broadcasting binary kernels of op_pointwise.cpp; expected values by definition
// (Python's % takes the divisor's sign, C's fmod the dividend's; floor_divide rounds down).
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>

#include "runtime/kernel_test_util.h"

using etscope::ScalarType;
using etscope::EValue;
using etscope::testing::KernelCall;

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

TEST_CASE("logical and bitwise and / or / xor", "[kernels][pointwise]") {
  KernelCall c;
  EValue* la = c.boolean({4});
  REQUIRE_FALSE(c.run("aten::logical_and.out", {c.f32({4}, {0, 1, 2, 0}), c.i64({4}, {0, 0, 3, 5}), la, la}).failed());
  CHECK(c.t(la).values<bool>() == std::vector<bool>{false, false, true, false});
  EValue* lo = c.boolean({2, 2});
  REQUIRE_FALSE(c.run("aten::logical_or.out", {c.boolean({2, 1}, {true, false}), c.boolean({2}, {false, true}), lo, lo}).failed());
  CHECK(c.t(lo).values<bool>() == std::vector<bool>{true, true, false, true});
  EValue* lx = c.boolean({2});
  REQUIRE_FALSE(c.run("aten::logical_xor.out", {c.i64({2}, {0, 7}), c.i64({2}, {1, 1}), lx, lx}).failed());
  CHECK(c.t(lx).values<bool>() == std::vector<bool>{true, false});
  EValue* ba = c.i64({3});
  REQUIRE_FALSE(c.run("aten::bitwise_and.Tensor_out", {c.i64({3}, {6, 5, -1}), c.i64({3}, {3, 4, 9}), ba, ba}).failed());
  CHECK(c.t(ba).values<int64_t>() == std::vector<int64_t>{2, 4, 9});
  EValue* bo = c.tensor<int32_t>(ScalarType::kInt, {2});
  REQUIRE_FALSE(c.run("aten::bitwise_or.Scalar_out", {c.tensor<int32_t>(ScalarType::kInt, {2}, {1, 8}), c.integer(6), bo, bo}).failed());
  CHECK(c.t(bo).values<int32_t>() == std::vector<int32_t>{7, 14});
  EValue* bx = c.boolean({2});
  REQUIRE_FALSE(c.run("aten::bitwise_xor.Tensor_out", {c.boolean({2}, {true, true}), c.boolean({2}, {true, false}), bx, bx}).failed());
  CHECK(c.t(bx).values<bool>() == std::vector<bool>{false, true});
  auto ctx = c.run("aten::bitwise_and.Tensor_out", {c.f32({1}), c.i64({1}), c.i64({1}), c.none()});
  REQUIRE(ctx.failed());
  CHECK(std::string(ctx.message()).find("integral") != std::string::npos);
}

TEST_CASE("minimum / maximum propagate NaN", "[kernels][pointwise]") {
  KernelCall c;
  EValue* mx = c.f32({3});
  REQUIRE_FALSE(c.run("aten::maximum.out", {c.f32({3}, {1, NAN, -2}), c.f32({1}, {0}), mx, mx}).failed());
  CHECK(c.t(mx).data_as<float>()[0] == 1.0f);
  CHECK(std::isnan(c.t(mx).data_as<float>()[1]));
  CHECK(c.t(mx).data_as<float>()[2] == 0.0f);
  EValue* mn = c.i64({2});
  REQUIRE_FALSE(c.run("aten::minimum.out", {c.i64({2}, {4, -9}), c.i64({2}, {3, 0}), mn, mn}).failed());
  CHECK(c.t(mn).values<int64_t>() == std::vector<int64_t>{3, -9});
}

TEST_CASE("remainder / fmod / floor_divide: signs, scalars, division by zero", "[kernels][pointwise]") {
  KernelCall c;
  EValue* r = c.i64({4});
  REQUIRE_FALSE(c.run("aten::remainder.Tensor_out", {c.i64({4}, {7, -7, 7, -7}), c.i64({4}, {3, 3, -3, -3}), r, r}).failed());
  CHECK(c.t(r).values<int64_t>() == std::vector<int64_t>{1, 2, -2, -1});
  EValue* f = c.i64({4});
  REQUIRE_FALSE(c.run("aten::fmod.Tensor_out", {c.i64({4}, {7, -7, 7, -7}), c.i64({4}, {3, 3, -3, -3}), f, f}).failed());
  CHECK(c.t(f).values<int64_t>() == std::vector<int64_t>{1, -1, 1, -1});
  EValue* fd = c.i64({4});
  const int64_t lo = std::numeric_limits<int64_t>::min();
  REQUIRE_FALSE(c.run("aten::floor_divide.out", {c.i64({4}, {7, -7, 7, lo}), c.i64({4}, {2, 2, -2, -1}), fd, fd}).failed());
  CHECK(c.t(fd).values<int64_t>() == std::vector<int64_t>{3, -4, -4, lo});  // INT64_MIN / -1 wraps
  EValue* rf = c.f32({2});
  REQUIRE_FALSE(c.run("aten::remainder.Scalar_out", {c.f32({2}, {5.5f, -5.5f}), c.integer(2), rf, rf}).failed());
  CHECK(c.t(rf).values<float>() == std::vector<float>{1.5f, 0.5f});
  EValue* ff = c.f32({1});
  REQUIRE_FALSE(c.run("aten::fmod.Scalar_out", {c.f32({1}, {-5.5f}), c.dbl(2.0), ff, ff}).failed());
  CHECK(c.t(ff).values<float>() == std::vector<float>{-1.5f});
  auto ctx = c.run("aten::remainder.Tensor_out", {c.i64({2}, {1, 2}), c.i64({2}, {1, 0}), r, r});
  REQUIRE(ctx.failed());
  CHECK(std::string(ctx.message()).find("division by zero") != std::string::npos);
  REQUIRE(c.run("aten::floor_divide.out", {c.f32({1}), c.f32({1}), c.i64({1}), c.none()}).failed());
}

TEST_CASE("atan2 and rsub", "[kernels][pointwise]") {
  KernelCall c;
  EValue* a = c.f32({2});
  REQUIRE_FALSE(c.run("aten::atan2.out", {c.f32({2}, {1, -1}), c.f32({1}, {-1}), a, a}).failed());
  CHECK(c.t(a).data_as<float>()[0] == Approx(3 * M_PI / 4));
  CHECK(c.t(a).data_as<float>()[1] == Approx(-3 * M_PI / 4));
  EValue* rs = c.f32({3});
  REQUIRE_FALSE(c.run("aten::rsub.Scalar_out", {c.f32({3}, {1, 2, 3}), c.integer(1), c.integer(2), rs, rs}).failed());
  CHECK(c.t(rs).values<float>() == std::vector<float>{-1, -3, -5});
  EValue* ri = c.i64({2});
  REQUIRE_FALSE(c.run("aten::rsub.Scalar_out", {c.i64({2}, {1, 5}), c.integer(10), c.integer(1), ri, ri}).failed());
  CHECK(c.t(ri).values<int64_t>() == std::vector<int64_t>{9, 5});
  REQUIRE(c.run("aten::atan2.out", {c.f32({1}), c.f32({1}), c.i64({1}), c.none()}).failed());
}
