// Tests of copies of views (op_view.cpp).
//
// The former tests/runtime/kernel_view_test.cpp:
// permute_copy (tiled transposes and N-D permutations) and view_copy, against index arithmetic
// done here.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>

#include "runtime/kernels/kernel_test_util.h"

using etscope::ScalarType;
using etscope::EValue;
using etscope::testing::KernelCall;
using etscope::testing::ramp;

TEST_CASE("strided view copies stay inside self", "[kernels][view]") {
  KernelCall c;
  EValue* x = c.f32({3, 3}, {0, 1, 2, 3, 4, 5, 6, 7, 8});
  EValue* d = c.f32({2});
  REQUIRE_FALSE(c.run("aten::diagonal_copy.out", {x, c.integer(1), c.integer(0), c.integer(1), d}).failed());
  CHECK(c.t(d).values<float>() == std::vector<float>{1, 5});
  EValue* u = c.f32({3, 2, 2});
  REQUIRE_FALSE(c.run("aten::unfold_copy.out", {x, c.integer(1), c.integer(2), c.integer(1), u}).failed());
  CHECK(c.t(u).values<float>() == std::vector<float>{0, 1, 1, 2, 3, 4, 4, 5, 6, 7, 7, 8});
  EValue* s = c.f32({2, 2});
  REQUIRE_FALSE(c.run("aten::as_strided_copy.out", {x, c.int_list({2, 2}), c.int_list({4, 1}), c.integer(1), s}).failed());
  CHECK(c.t(s).values<float>() == std::vector<float>{1, 2, 5, 6});
  REQUIRE(c.run("aten::as_strided_copy.out", {x, c.int_list({2, 2}), c.int_list({8, 1}), c.integer(0), s}).failed());
  REQUIRE(c.run("aten::as_strided_copy.out", {x, c.int_list({2, 2}), c.int_list({-1, 1}), c.integer(4), s}).failed());
  REQUIRE(c.run("aten::as_strided_copy.out", {x, c.int_list({2, 2}), c.int_list({int64_t{1} << 62, 1}), c.integer(0), s}).failed());
  REQUIRE(c.run("aten::unfold_copy.out", {x, c.integer(1), c.integer(4), c.integer(1), u}).failed());
  REQUIRE(c.run("aten::unfold_copy.out", {x, c.integer(1), c.integer(2), c.integer(0), u}).failed());
  REQUIRE(c.run("aten::diagonal_copy.out", {x, c.integer(0), c.integer(1), c.integer(1), d}).failed());
}

TEST_CASE("transpose_copy / t_copy / flip / repeat", "[kernels][shape]") {
  KernelCall c;
  EValue* x = c.f32({2, 3}, ramp(6));
  EValue* t = c.f32({3, 2});
  REQUIRE_FALSE(c.run("aten::transpose_copy.int_out", {x, c.integer(0), c.integer(-1), t, t}).failed());
  CHECK(c.t(t).values<float>() == std::vector<float>{0, 3, 1, 4, 2, 5});
  EValue* tt = c.f32({3, 2});
  REQUIRE_FALSE(c.run("aten::t_copy.out", {x, tt, tt}).failed());
  CHECK(c.t(tt).values<float>() == c.t(t).values<float>());
  EValue* f = c.f32({2, 3});
  REQUIRE_FALSE(c.run("aten::flip.out", {x, c.int_list({-1}), f, f}).failed());
  CHECK(c.t(f).values<float>() == std::vector<float>{2, 1, 0, 5, 4, 3});
  EValue* r = c.f32({2, 2, 3});
  REQUIRE_FALSE(c.run("aten::repeat.out", {c.f32({1, 3}, {7, 8, 9}), c.int_list({2, 2, 1}), r, r}).failed());
  CHECK(c.t(r).values<float>() == std::vector<float>{7, 8, 9, 7, 8, 9, 7, 8, 9, 7, 8, 9});
  REQUIRE(c.run("aten::repeat.out", {x, c.int_list({2}), r, r}).failed());
  REQUIRE(c.run("aten::transpose_copy.int_out", {x, c.integer(0), c.integer(2), t, t}).failed());
  REQUIRE(c.run("aten::flip.out", {x, c.int_list({1, -1}), f, f}).failed());
}

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

// Every permutation of a 4-D tensor and a pixel-shuffle-like 6-D one, with sizes that do not
// divide the copy's tiles (64 bytes by 8 lines, or 16 x 16 blocks), against index arithmetic.
// Float (4-byte) and int8 (1-byte: in-register 16 x 16 byte blocks) elements alike.
TEST_CASE("permute_copy of every 4-D permutation and a 6-D pixel shuffle", "[kernels][view]") {
  auto check_as = [](auto element, std::vector<int64_t> sizes, std::vector<int64_t> dims) {
    using T = decltype(element);
    const ScalarType dtype = std::is_same_v<T, float> ? ScalarType::kFloat : ScalarType::kChar;
    const size_t rank = sizes.size();
    int64_t count = 1;
    for (int64_t s : sizes) count *= s;
    std::vector<T> a(static_cast<size_t>(count));
    for (size_t i = 0; i < a.size(); ++i) a[i] = static_cast<T>(std::is_same_v<T, float> ? static_cast<int64_t>(i) : static_cast<int64_t>(i % 251) - 125);
    std::vector<int64_t> in_strides(rank, 1), out_sizes(rank);
    for (size_t d = rank - 1; d > 0; --d) in_strides[d - 1] = in_strides[d] * sizes[d];
    for (size_t d = 0; d < rank; ++d) out_sizes[d] = sizes[static_cast<size_t>(dims[d])];
    KernelCall c;
    EValue* out = c.tensor<T>(dtype, out_sizes);
    REQUIRE_FALSE(c.run("aten::permute_copy.out", {c.tensor<T>(dtype, sizes, a), c.int_list(dims), out, out}).failed());
    const auto y = c.t(out).values<T>();
    std::vector<int64_t> idx(rank, 0);
    size_t wrong = 0;
    for (int64_t i = 0; i < count; ++i) {
      int64_t src = 0;
      for (size_t d = 0; d < rank; ++d) src += idx[d] * in_strides[static_cast<size_t>(dims[d])];
      wrong += y[static_cast<size_t>(i)] != a[static_cast<size_t>(src)];
      for (size_t d = rank; d-- > 0;) {
        if (++idx[d] < out_sizes[d]) break;
        idx[d] = 0;
      }
    }
    CHECK(wrong == 0);
  };
  auto check = [&](std::vector<int64_t> sizes, std::vector<int64_t> dims) {
    check_as(float{}, sizes, dims);
    check_as(int8_t{}, sizes, dims);
  };
  std::vector<int64_t> dims{0, 1, 2, 3};
  do {
    check({3, 17, 5, 20}, dims);
  } while (std::next_permutation(dims.begin(), dims.end()));
  check({1, 5, 2, 2, 19, 23}, {0, 1, 4, 2, 5, 3});
  check({1, 21, 13, 70}, {0, 3, 1, 2});  // NHWC to NCHW
  check({1, 70, 13, 21}, {0, 2, 3, 1});  // NCHW to NHWC
  // Several whole 16 x 16 blocks (the in-register transpose) with ragged edges on both sides.
  check({40, 53}, {1, 0});
  check({2, 35, 3, 49}, {0, 3, 2, 1});
  check({64, 32}, {1, 0});
  // Three channels into pixels and back (an RGB image's NCHW <-> NHWC, 16 pixels at a time), with
  // ragged ends, and batched.
  check({1, 3, 7, 9}, {0, 2, 3, 1});
  check({2, 3, 5, 32}, {0, 2, 3, 1});
  check({1, 7, 9, 3}, {0, 3, 1, 2});
  check({2, 5, 32, 3}, {0, 3, 1, 2});
  check({3, 48}, {1, 0});
  check({48, 3}, {1, 0});
  // Two and four rows into runs of two and four (a pixel shuffle's interleave), ragged ends.
  check({1, 5, 2, 7, 37, 2}, {0, 1, 3, 5, 4, 2});
  check({1, 3, 2, 5, 32, 2}, {0, 1, 3, 2, 4, 5});
  check({2, 35}, {1, 0});
  check({4, 35}, {1, 0});
  check({2, 4, 3, 50}, {0, 2, 3, 1});
  check({1, 2, 4, 6, 16, 4}, {0, 1, 3, 4, 5, 2});
}
