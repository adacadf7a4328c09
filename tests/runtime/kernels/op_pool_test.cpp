// Tests of pooling (op_pool.cpp).
//
// The former tests/runtime/kernel_pool_test.cpp:
// max_pool2d_with_indices (+ backward), avg_pool2d, _adaptive_avg_pool2d. Expected values were
// worked out by hand from the window definitions (ATen's pooling output-size rule) and are
// written next to each check.
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "runtime/kernels/kernel_test_util.h"

using etscope::EValue;
using etscope::testing::KernelCall;

namespace {

// [[1,5,2,0],[3,4,8,1],[0,2,6,7],[9,1,3,2]]
const std::vector<float> kPlane = {1, 5, 2, 0, 3, 4, 8, 1, 0, 2, 6, 7, 9, 1, 3, 2};

std::vector<EValue*> max_pool_args(KernelCall& c, EValue* in, int64_t k, int64_t s, int64_t p, bool ceil, EValue* out,
                                   EValue* idx) {
  return {in,
          c.int_list({k, k}),
          c.int_list({s, s}),
          c.int_list({p, p}),
          c.int_list({1, 1}),
          c.boolean_scalar(ceil),
          out,
          idx,
          c.tensor_list({out, idx})};
}

}  // namespace

TEST_CASE("max_pool2d_with_indices 2x2 stride 2", "[kernels][pool]") {
  KernelCall c;
  EValue* out = c.f32({1, 1, 2, 2});
  EValue* idx = c.i64({1, 1, 2, 2});
  auto ctx = c.run("aten::max_pool2d_with_indices.out",
                   max_pool_args(c, c.f32({1, 1, 4, 4}, kPlane), 2, 2, 0, false, out, idx));
  REQUIRE_FALSE(ctx.failed());
  CHECK(out->tensor->data_as<float>()[0] == 5);
  CHECK(out->tensor->data_as<float>()[1] == 8);
  CHECK(out->tensor->data_as<float>()[2] == 9);
  CHECK(out->tensor->data_as<float>()[3] == 7);
  CHECK(c.t(idx).data_as<int64_t>()[0] == 1);
  CHECK(c.t(idx).data_as<int64_t>()[1] == 6);
  CHECK(c.t(idx).data_as<int64_t>()[2] == 12);
  CHECK(c.t(idx).data_as<int64_t>()[3] == 11);
}

TEST_CASE("max_pool2d_with_indices with padding / overlap and ceil_mode", "[kernels][pool]") {
  KernelCall c;
  // kernel 3, stride 2, padding 1 on 4x4: output 2x2 (floor) or 3x3 (ceil: (4+2-3+1)/2+1 = 3,
  // and the last window starts at row 3 < 4 + 1, so it is kept).
  EValue* out = c.f32({1, 1, 2, 2});
  EValue* idx = c.i64({1, 1, 2, 2});
  auto ctx = c.run("aten::max_pool2d_with_indices.out",
                   max_pool_args(c, c.f32({1, 1, 4, 4}, kPlane), 3, 2, 1, false, out, idx));
  REQUIRE_FALSE(ctx.failed());
  CHECK(c.t(out).values<float>() == std::vector<float>{5, 8, 9, 8});
  CHECK(c.t(idx).values<int64_t>() == std::vector<int64_t>{1, 6, 12, 6});

  EValue* out3 = c.f32({1, 1, 3, 3});
  EValue* idx3 = c.i64({1, 1, 3, 3});
  ctx = c.run("aten::max_pool2d_with_indices.out",
              max_pool_args(c, c.f32({1, 1, 4, 4}, kPlane), 3, 2, 1, true, out3, idx3));
  REQUIRE_FALSE(ctx.failed());
  // Last row of windows covers input row 3 only: [9,1,3,2] -> 9 (cols 0-1), 3 (cols 1-3)... computed:
  // (2,0): rows 3, cols -1..1 -> {9,1} -> 9 @12; (2,1): cols 1..3 -> {1,3,2} -> 3 @14; (2,2): col 3 -> 2 @15.
  CHECK(c.t(out3).values<float>() == std::vector<float>{5, 8, 1, 9, 8, 7, 9, 3, 2});
  CHECK(c.t(idx3).values<int64_t>() == std::vector<int64_t>{1, 6, 7, 12, 6, 11, 12, 14, 15});

  // 5x5 ramp, kernel 2 stride 2, ceil_mode: 3x3 output whose last windows are clipped.
  std::vector<float> ramp(25);
  for (size_t i = 0; i < ramp.size(); ++i) ramp[i] = static_cast<float>(i);
  EValue* o5 = c.f32({1, 3, 3});
  EValue* i5 = c.i64({1, 3, 3});
  ctx = c.run("aten::max_pool2d_with_indices.out", max_pool_args(c, c.f32({1, 5, 5}, ramp), 2, 2, 0, true, o5, i5));
  REQUIRE_FALSE(ctx.failed());
  CHECK(c.t(o5).values<float>() == std::vector<float>{6, 8, 9, 16, 18, 19, 21, 23, 24});
}

TEST_CASE("max_pool2d_with_indices propagates NaN and rejects bad shapes", "[kernels][pool]") {
  KernelCall c;
  EValue* out = c.f32({1, 1, 1});
  EValue* idx = c.i64({1, 1, 1});
  auto ctx = c.run("aten::max_pool2d_with_indices.out",
                   max_pool_args(c, c.f32({1, 2, 2}, {1, NAN, 3, 4}), 2, 2, 0, false, out, idx));
  REQUIRE_FALSE(ctx.failed());
  CHECK(std::isnan(c.t(out).data_as<float>()[0]));
  CHECK(c.t(idx).data_as<int64_t>()[0] == 1);

  ctx = c.run("aten::max_pool2d_with_indices.out", max_pool_args(c, c.f32({4, 4}), 2, 2, 0, false, out, idx));
  REQUIRE(ctx.failed());
  CHECK(std::string(ctx.message()).find("max_pool2d_with_indices.out") != std::string::npos);
  ctx = c.run("aten::max_pool2d_with_indices.out",
              max_pool_args(c, c.f32({1, 4, 4}), 2, 2, 0, false, c.f32({1, 3, 3}), idx));
  REQUIRE(ctx.failed());  // static output of the wrong shape
}

// The windows inside the plane's width run 16 outputs at a time: they must choose as the window
// definition does (taps row by row, column by column; a later tap taken when greater or NaN, none
// after a NaN; the first tap's index for a window of -inf), checked against that definition on
// planes wide enough for whole and partial vectors, with ties, NaN and -inf, every stride,
// padding, dilation and ceil mode below.
TEST_CASE("max_pool2d_with_indices chooses as the window definition does on wide planes", "[kernels][pool]") {
  const float inf = std::numeric_limits<float>::infinity();
  for (int64_t k : {2, 3, 5}) {
    for (int64_t s : {1, 2, 3}) {
      for (int64_t pad = 0; pad <= k / 2; ++pad) {
        for (int64_t d : {1, 2}) {
          for (bool ceil : {false, true}) {
            const int64_t h = 13, w = 45;
            std::vector<float> plane(static_cast<size_t>(2 * h * w));
            uint32_t state = static_cast<uint32_t>(k * 1000 + s * 100 + pad * 10 + d);
            for (float& v : plane) {
              state = state * 1664525u + 1013904223u;
              const uint32_t r = state >> 24;
              v = r < 4 ? NAN : r < 12 ? -inf : static_cast<float>(r % 7);  // ties, NaN, -inf
            }
            auto out_size = [&](int64_t in) {
              const int64_t span = in + 2 * pad - d * (k - 1) - 1 + (ceil ? s - 1 : 0);
              int64_t o = span / s + 1;
              if (ceil && (o - 1) * s >= in + pad) --o;
              return o;
            };
            const int64_t oh = out_size(h), ow = out_size(w);
            if (oh < 1 || ow < 1) continue;
            INFO("k " << k << " s " << s << " pad " << pad << " d " << d << " ceil " << ceil);
            KernelCall c;
            EValue* out = c.f32({2, oh, ow});
            EValue* idx = c.i64({2, oh, ow});
            auto ctx = c.run("aten::max_pool2d_with_indices.out",
                             {c.f32({2, h, w}, plane), c.int_list({k, k}), c.int_list({s, s}), c.int_list({pad, pad}), c.int_list({d, d}),
                              c.boolean_scalar(ceil), out, idx, c.tensor_list({out, idx})});
            REQUIRE_FALSE(ctx.failed());
            const std::vector<float> got = c.t(out).values<float>();
            const std::vector<int64_t> got_idx = c.t(idx).values<int64_t>();
            size_t wrong = 0;
            for (int64_t pl = 0; pl < 2; ++pl) {
              for (int64_t oy = 0; oy < oh; ++oy) {
                for (int64_t ox = 0; ox < ow; ++ox) {
                  float best = -inf;
                  int64_t bi = -1;
                  bool stop = false;
                  for (int64_t ky = 0; ky < k && !stop; ++ky) {
                    for (int64_t kx = 0; kx < k && !stop; ++kx) {
                      const int64_t y = oy * s - pad + ky * d, x = ox * s - pad + kx * d;
                      if (y < 0 || y >= h || x < 0 || x >= w) continue;
                      const float v = plane[static_cast<size_t>((pl * h + y) * w + x)];
                      if (bi < 0) bi = y * w + x;  // the first tap inside
                      if (v > best || std::isnan(v)) {
                        best = v, bi = y * w + x;
                        stop = std::isnan(v);
                      }
                    }
                  }
                  const size_t at = static_cast<size_t>((pl * oh + oy) * ow + ox);
                  const bool same = (std::isnan(best) ? std::isnan(got[at]) : got[at] == best) && (bi < 0 || got_idx[at] == bi);
                  wrong += same ? 0 : 1;
                }
              }
            }
            CHECK(wrong == 0);
          }
        }
      }
    }
  }
}

TEST_CASE("max_pool2d_with_indices_backward scatters to the argmax", "[kernels][pool]") {
  KernelCall c;
  EValue* gi = c.f32({1, 1, 4, 4});
  std::vector<EValue*> args = {c.f32({1, 1, 2, 2}, {1, 2, 3, 4}),
                               c.f32({1, 1, 4, 4}, kPlane),
                               c.int_list({3, 3}),
                               c.int_list({2, 2}),
                               c.int_list({1, 1}),
                               c.int_list({1, 1}),
                               c.boolean_scalar(false),
                               c.i64({1, 1, 2, 2}, {1, 6, 12, 6}),
                               gi,
                               gi};
  auto ctx = c.run("aten::max_pool2d_with_indices_backward.grad_input", args);
  REQUIRE_FALSE(ctx.failed());
  std::vector<float> expect(16, 0.0f);
  expect[1] = 1, expect[6] = 2 + 4, expect[12] = 3;
  CHECK(c.t(gi).values<float>() == expect);

  args[0] = c.f32({1, 1, 3, 3});
  ctx = c.run("aten::max_pool2d_with_indices_backward.grad_input", args);
  REQUIRE(ctx.failed());
}

TEST_CASE("avg_pool2d with and without counting padding", "[kernels][pool]") {
  KernelCall c;
  EValue* out = c.f32({1, 1, 2, 2});
  auto run = [&](int64_t k, int64_t p, bool include_pad, EValue* divisor) {
    return c.run("aten::avg_pool2d.out",
                 {c.f32({1, 1, 4, 4}, kPlane), c.int_list({k, k}), c.int_list({2, 2}), c.int_list({p, p}),
                  c.boolean_scalar(false), c.boolean_scalar(include_pad), divisor, out, out});
  };
  REQUIRE_FALSE(run(2, 0, true, c.none()).failed());
  CHECK(c.t(out).values<float>() == std::vector<float>{3.25f, 2.75f, 3.0f, 4.5f});
  // kernel 3, padding 1: window (0,0) holds 1+5+3+4 = 13 over 9 padded cells or 4 real ones;
  // window (1,1) holds rows 1-3, cols 1-3 = 34 over 9.
  REQUIRE_FALSE(run(3, 1, true, c.none()).failed());
  CHECK(c.t(out).data_as<float>()[0] == Approx(13.0 / 9));
  CHECK(c.t(out).data_as<float>()[3] == Approx(34.0 / 9));
  REQUIRE_FALSE(run(3, 1, false, c.none()).failed());
  CHECK(c.t(out).data_as<float>()[0] == Approx(13.0 / 4));
  REQUIRE_FALSE(run(3, 1, false, c.integer(2)).failed());
  CHECK(c.t(out).data_as<float>()[0] == Approx(13.0 / 2));
}

TEST_CASE("_adaptive_avg_pool2d uses floor/ceil windows", "[kernels][pool]") {
  KernelCall c;
  EValue* out = c.f32({1, 1, 3, 3});
  auto ctx = c.run("aten::_adaptive_avg_pool2d.out", {c.f32({1, 1, 4, 4}, kPlane), c.int_list({3, 3}), out, out});
  REQUIRE_FALSE(ctx.failed());
  // Windows along each axis: [0,2), [1,3), [2,4).
  CHECK(c.t(out).data_as<float>()[0] == Approx(3.25));
  CHECK(c.t(out).data_as<float>()[4] == Approx(5.0));
  CHECK(c.t(out).data_as<float>()[8] == Approx(4.5));
  EValue* g = c.f32({1, 1, 1, 1});
  ctx = c.run("aten::_adaptive_avg_pool2d.out", {c.f32({1, 1, 4, 4}, kPlane), c.int_list({1, 1}), g, g});
  REQUIRE_FALSE(ctx.failed());
  CHECK(c.t(g).data_as<float>()[0] == Approx(54.0 / 16));
}

// The 2x2/2 window runs 16 outputs at a time on float32: every output and index must be the
// window's first maximum in order (row 0 left, right, row 1 left, right), a NaN winning and ending
// the window, -inf windows keeping the first index; planes wider than 32 with ragged ends.
TEST_CASE("max_pool2d_with_indices 2x2 stride 2 on wide planes picks as the definition says", "[kernels][pool]") {
  // 37 outputs a row: two blocks of 16 and a masked block of 5; rows of 1, 4, 8 and 16 outputs
  // (the CNNs' small planes) in one masked or one full block; an odd width leaves a column out.
  const int64_t w = GENERATE(75, 2, 8, 9, 16, 32);
  const int64_t planes = 3, h = 6;
  const int64_t oh = h / 2, ow = w / 2;
  std::vector<float> x(static_cast<size_t>(planes * h * w));
  uint32_t state = 7u;
  for (float& v : x) {
    state = state * 1664525u + 1013904223u;
    const uint32_t r = state >> 24;
    v = r < 8 ? std::numeric_limits<float>::quiet_NaN()
        : r < 24 ? -std::numeric_limits<float>::infinity()
        : r < 64 ? 1.0f  // ties
                 : static_cast<float>(static_cast<int>(r % 17) - 8);
  }
  KernelCall c;
  EValue* out = c.f32({1, planes, oh, ow});
  EValue* idx = c.i64({1, planes, oh, ow});
  REQUIRE_FALSE(c.run("aten::max_pool2d_with_indices.out",
                      max_pool_args(c, c.f32({1, planes, h, w}, x), 2, 2, 0, false, out, idx))
                    .failed());
  const float* y = out->tensor->data_as<float>();
  const int64_t* ind = c.t(idx).data_as<int64_t>();
  size_t wrong = 0;
  for (int64_t pl = 0; pl < planes; ++pl) {
    for (int64_t oy = 0; oy < oh; ++oy) {
      for (int64_t ox = 0; ox < ow; ++ox) {
        const int64_t offs[4] = {2 * oy * w + 2 * ox, 2 * oy * w + 2 * ox + 1, (2 * oy + 1) * w + 2 * ox,
                                 (2 * oy + 1) * w + 2 * ox + 1};
        float best = -std::numeric_limits<float>::infinity();
        int64_t at = offs[0];
        for (int64_t o : offs) {
          const float v = x[static_cast<size_t>(pl * h * w + o)];
          if (v > best || std::isnan(v)) {
            best = v, at = o;
            if (std::isnan(v)) break;
          }
        }
        const size_t k = static_cast<size_t>((pl * oh + oy) * ow + ox);
        const bool same = std::isnan(best) ? std::isnan(y[k]) : y[k] == best;
        wrong += !same || ind[k] != at;
      }
    }
  }
  CHECK(wrong == 0);
}
