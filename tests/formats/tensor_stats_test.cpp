#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <limits>

#include "etscope/formats/tensor_stats.h"

using namespace etscope;

TEST_CASE("float statistics count NaN and Inf apart and use finite values for the moments", "[stats]") {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  const float data[] = {1.0f, 2.0f, nan, 3.0f, -inf, 6.0f};
  std::vector<uint8_t> bytes(sizeof(data));
  std::memcpy(bytes.data(), data, sizeof(data));
  auto s = compute_tensor_stats(ScalarType::kFloat, bytes, 6, 3);
  REQUIRE(s);
  CHECK(s->count == 6);
  CHECK(s->nan_count == 1);
  CHECK(s->inf_count == 1);
  CHECK(s->finite_count == 4);
  CHECK(s->min == 1.0);
  CHECK(s->max == 6.0);
  CHECK(s->mean == Approx(3.0));
  CHECK(s->std == Approx(std::sqrt(3.5)));  // population variance of {1,2,3,6} is 3.5
  REQUIRE(s->first_values.size() == 3);
  CHECK(std::isnan(s->first_values[2]));
}

TEST_CASE("half / bfloat16 / int64 and bool decode", "[stats]") {
  CHECK(half_to_float(0x3c00) == 1.0f);
  CHECK(half_to_float(0xc000) == -2.0f);
  CHECK(half_to_float(0x0001) == std::ldexp(1.0f, -24));  // smallest subnormal
  CHECK(std::isinf(half_to_float(0x7c00)));
  CHECK(bfloat16_to_float(0x3f80) == 1.0f);
  const int64_t longs[] = {-5, 7};
  std::vector<uint8_t> bytes(16);
  std::memcpy(bytes.data(), longs, 16);
  auto s = compute_tensor_stats(ScalarType::kLong, bytes, 2);
  REQUIRE(s);
  CHECK(s->min == -5);
  CHECK(s->max == 7);
  std::vector<uint8_t> flags = {0, 1, 1, 1};
  auto b = compute_tensor_stats(ScalarType::kBool, flags, 4);
  REQUIRE(b);
  CHECK(b->mean == Approx(0.75));
}

TEST_CASE("too few bytes or a non-numeric type give no statistics", "[stats]") {
  std::vector<uint8_t> bytes(7);
  CHECK_FALSE(compute_tensor_stats(ScalarType::kFloat, bytes, 2));
  CHECK_FALSE(compute_tensor_stats(ScalarType::kComplexFloat, bytes, 0));
  CHECK_FALSE(compute_tensor_stats(static_cast<ScalarType>(77), bytes, 1));
}
