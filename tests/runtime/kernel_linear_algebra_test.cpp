// mm, addmm, bmm against triple loops written here, at sizes large enough that the GEMM's
// packing buffers come from the kernel's scratch (util/gemm.h), plus bad shapes.
#include <string>
#include <tuple>

#include "runtime/kernel_test_util.h"

using etscope::EValue;
using etscope::testing::KernelCall;

namespace {

std::vector<float> ramp(int64_t n, int mul, int mod) {
  std::vector<float> v(static_cast<size_t>(n));
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(static_cast<int>(i) * mul % mod - mod / 2) / 8.0f;
  return v;
}

}  // namespace

TEST_CASE("mm and addmm match the definition / with bias broadcast", "[kernels][linear_algebra]") {
  for (auto [m, n, k] : {std::tuple<int64_t, int64_t, int64_t>{1, 2, 10}, {4, 512, 2048}, {37, 300, 129}}) {
    KernelCall c;
    const auto a = ramp(m * k, 7, 13), b = ramp(k * n, 5, 11), bias = ramp(n, 3, 7);
    EValue* mm = c.f32({m, n});
    auto ctx = c.run("aten::mm.out", {c.f32({m, k}, a), c.f32({k, n}, b), mm, mm});
    REQUIRE_FALSE(ctx.failed());
    EValue* addmm = c.f32({m, n});
    ctx = c.run("aten::addmm.out",
                {c.f32({n}, bias), c.f32({m, k}, a), c.f32({k, n}, b), c.dbl(0.5), c.integer(2), addmm, addmm});
    REQUIRE_FALSE(ctx.failed());
    const auto got = c.t(mm).values<float>(), got2 = c.t(addmm).values<float>();
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        double s = 0;
        for (int64_t p = 0; p < k; ++p)
          s += double(a[static_cast<size_t>(i * k + p)]) * b[static_cast<size_t>(p * n + j)];
        CHECK(got[static_cast<size_t>(i * n + j)] == Approx(s).margin(1e-3));
        CHECK(got2[static_cast<size_t>(i * n + j)] == Approx(0.5 * bias[static_cast<size_t>(j)] + 2 * s).margin(1e-3));
      }
    }
  }
}

TEST_CASE("bmm multiplies each batch", "[kernels][linear_algebra]") {
  KernelCall c;
  EValue* out = c.f32({2, 2, 2});
  // [[1,2],[3,4]] @ I and [[1,0],[0,1]] @ [[5,6],[7,8]].
  auto ctx = c.run("aten::bmm.out",
                   {c.f32({2, 2, 2}, {1, 2, 3, 4, 1, 0, 0, 1}), c.f32({2, 2, 2}, {1, 0, 0, 1, 5, 6, 7, 8}), out, out});
  REQUIRE_FALSE(ctx.failed());
  CHECK(c.t(out).values<float>() == std::vector<float>{1, 2, 3, 4, 5, 6, 7, 8});
}

TEST_CASE("matrix products reject mismatched shapes and dtypes", "[kernels][linear_algebra]") {
  KernelCall c;
  auto ctx = c.run("aten::mm.out", {c.f32({2, 3}), c.f32({4, 2}), c.f32({2, 2}), c.none()});
  REQUIRE(ctx.failed());
  CHECK(std::string(ctx.message()).find("mm.out") != std::string::npos);
  ctx = c.run("aten::addmm.out",
              {c.f32({3}), c.f32({2, 4}), c.f32({4, 2}), c.integer(1), c.integer(1), c.f32({2, 2}), c.none()});
  REQUIRE(ctx.failed());
  ctx = c.run("aten::bmm.out", {c.i64({1, 2, 2}), c.f32({1, 2, 2}), c.i64({1, 2, 2}), c.none()});
  REQUIRE(ctx.failed());
  // Integer operands of one dtype multiply exactly (ExecuTorch's portable kernels accept them).
  EValue* prod = c.i64({1, 2, 2});
  REQUIRE_FALSE(c.run("aten::bmm.out", {c.i64({1, 2, 2}, {1, 2, 3, 4}), c.i64({1, 2, 2}, {5, 6, 7, 8}), prod, prod}).failed());
  CHECK(c.t(prod).values<int64_t>() == std::vector<int64_t>{19, 22, 43, 50});
}
