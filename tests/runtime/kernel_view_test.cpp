// permute_copy (tiled transposes and N-D permutations) and view_copy, against index arithmetic
// done here.
#include "runtime/kernel_test_util.h"

using etscope::ScalarType;
using etscope::EValue;
using etscope::testing::KernelCall;

TEST_CASE("permute_copy transposes matrices of sizes that do not divide the tile", "[kernels][view]") {
  for (auto [rows, cols] : {std::pair<int64_t, int64_t>{1, 1}, {3, 5}, {17, 9}, {64, 40}}) {
    KernelCall c;
    std::vector<float> a(static_cast<size_t>(rows * cols));
    for (size_t i = 0; i < a.size(); ++i) a[i] = static_cast<float>(i);
    EValue* out = c.f32({cols, rows});
    REQUIRE_FALSE(c.run("aten::permute_copy.out", {c.f32({rows, cols}, a), c.int_list({1, 0}), out, out}).failed());
    const auto y = c.t(out).values<float>();
    for (int64_t i = 0; i < rows; ++i)
      for (int64_t j = 0; j < cols; ++j)
        CHECK(y[static_cast<size_t>(j * rows + i)] == a[static_cast<size_t>(i * cols + j)]);
  }
}

TEST_CASE("permute_copy of a 4-D int64 and a bool tensor", "[kernels][view]") {
  KernelCall c;
  const int64_t s0 = 2, s1 = 3, s2 = 4, s3 = 5;
  std::vector<int64_t> a(static_cast<size_t>(s0 * s1 * s2 * s3));
  for (size_t i = 0; i < a.size(); ++i) a[i] = static_cast<int64_t>(i) * 3 - 7;
  // dims [2, 0, 3, 1]: out[i][j][k][l] = in[j][l][i][k], out shape [s2, s0, s3, s1].
  EValue* out = c.i64({s2, s0, s3, s1});
  REQUIRE_FALSE(
      c.run("aten::permute_copy.out", {c.i64({s0, s1, s2, s3}, a), c.int_list({2, 0, 3, 1}), out, out}).failed());
  const auto y = c.t(out).values<int64_t>();
  for (int64_t i = 0; i < s2; ++i)
    for (int64_t j = 0; j < s0; ++j)
      for (int64_t k = 0; k < s3; ++k)
        for (int64_t l = 0; l < s1; ++l)
          CHECK(y[static_cast<size_t>(((i * s0 + j) * s3 + k) * s1 + l)] ==
                a[static_cast<size_t>(((j * s1 + l) * s2 + i) * s3 + k)]);
  EValue* b = c.boolean({2, 1});
  REQUIRE_FALSE(c.run("aten::permute_copy.out", {c.boolean({1, 2}, {true, false}), c.int_list({1, 0}), b, b}).failed());
  CHECK(c.t(b).values<bool>() == std::vector<bool>{true, false});
  REQUIRE(c.run("aten::permute_copy.out", {c.f32({2, 2}), c.int_list({0, 0}), c.f32({2, 2}), c.none()}).failed());
}

TEST_CASE("view_copy refuses negative sizes and sizes whose product overflows", "[kernels][view]") {
  etscope::testing::KernelCall c;
  etscope::EValue* x = c.f32({2, 3});
  etscope::EValue* out = c.f32({6});
  REQUIRE(c.run("aten::view_copy.out", {x, c.int_list({-2, -3}), out, out}).failed());
  REQUIRE(c.run("aten::view_copy.out", {x, c.int_list({int64_t{1} << 62, 4, -1}), out, out}).failed());
  REQUIRE_FALSE(c.run("aten::view_copy.out", {x, c.int_list({-1}), out, out}).failed());
}
