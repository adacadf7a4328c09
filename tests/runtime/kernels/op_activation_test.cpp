// Tests of activation functions (op_activation.cpp): relu family, clamp, gelu, elu, glu, softmax.
#include <cmath>
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>

#include "runtime/kernels/kernel_test_util.h"

using etscope::ScalarType;
using etscope::EValue;
using etscope::Tag;
using etscope::testing::KernelCall;
using etscope::testing::mentions;
using etscope::testing::string_value;

TEST_CASE("threshold_backward zeroes the gradient where self <= threshold", "[kernels][elementwise]") {
  KernelCall c;
  EValue* out = c.f32({4});
  REQUIRE_FALSE(c.run("aten::threshold_backward.grad_input",
                      {c.f32({4}, {1, 2, 3, 4}), c.f32({4}, {-1, 0, 0.1f, 5}), c.integer(0), out, out})
                    .failed());
  CHECK(c.t(out).values<float>() == std::vector<float>{0, 0, 3, 4});
  auto ctx = c.run("aten::threshold_backward.grad_input", {c.f32({4}), c.f32({3}), c.integer(0), out, out});
  REQUIRE(ctx.failed());
}

TEST_CASE("clamp.Tensor_out broadcasts bounds", "[kernels][pointwise]") {
  KernelCall c;
  EValue* out = c.f32({2, 3});
  REQUIRE_FALSE(c.run("aten::clamp.Tensor_out", {c.f32({3}, {-5, 0.5f, 5}), c.f32({2, 1}, {0, -1}), c.f32({1}, {1}), out, out}).failed());
  CHECK(c.t(out).values<float>() == std::vector<float>{0, 0.5f, 1, -1, 0.5f, 1});
  EValue* o2 = c.i64({2});
  REQUIRE_FALSE(c.run("aten::clamp.Tensor_out", {c.i64({2}, {-3, 9}), c.none(), c.i64({2}, {0, 4}), o2, o2}).failed());
  CHECK(c.t(o2).values<int64_t>() == std::vector<int64_t>{-3, 4});
  REQUIRE(c.run("aten::clamp.Tensor_out", {c.f32({2}), c.none(), c.none(), c.f32({2}), c.none()}).failed());
  REQUIRE(c.run("aten::clamp.Tensor_out", {c.f32({2}), c.f32({3}), c.none(), c.f32({2}), c.none()}).failed());
}

TEST_CASE("_log_softmax.out and _softmax.out", "[kernels][reduce]") {
  KernelCall c;
  EValue* ls = c.f32({2, 3});
  auto ctx = c.run("aten::_log_softmax.out",
                   {c.f32({2, 3}, {1, 2, 3, 1001, 1002, 1003}), c.integer(1), c.boolean_scalar(false), ls, ls});
  REQUIRE_FALSE(ctx.failed());
  const double expect[3] = {-2.4076059644, -1.4076059644, -0.4076059644};
  for (int r = 0; r < 2; ++r)
    for (int i = 0; i < 3; ++i) CHECK(c.t(ls).data_as<float>()[r * 3 + i] == Approx(expect[i]).margin(1e-5));
  EValue* sm = c.f32({3, 1});
  ctx = c.run("aten::_softmax.out", {c.f32({3, 1}, {1, 2, 3}), c.integer(0), c.boolean_scalar(false), sm, sm});
  REQUIRE_FALSE(ctx.failed());
  CHECK(c.t(sm).data_as<float>()[0] == Approx(0.0900305732));
  CHECK(c.t(sm).data_as<float>()[1] == Approx(0.2447284711));
  CHECK(c.t(sm).data_as<float>()[2] == Approx(0.6652409558));
  ctx = c.run("aten::_log_softmax.out", {c.f32({2, 3}), c.integer(2), c.boolean_scalar(false), ls, ls});
  REQUIRE(ctx.failed());
}

TEST_CASE("gelu: exact and tanh-approximate", "[kernels][unary]") {
  KernelCall c;
  EValue none_str = string_value("none"), tanh_str = string_value("tanh"), bad = string_value("sigmoid");
  EValue* g = c.f32({3});
  REQUIRE_FALSE(c.run("aten::gelu.out", {c.f32({3}, {1, -0.5f, 0}), &none_str, g, g}).failed());
  CHECK(c.t(g).data_as<float>()[0] == Approx(0.8413447461));
  CHECK(c.t(g).data_as<float>()[1] == Approx(-0.1542687694));
  CHECK(c.t(g).data_as<float>()[2] == 0.0f);
  EValue* gt = c.tensor<double>(ScalarType::kDouble, {2});
  REQUIRE_FALSE(
      c.run("aten::gelu.out", {c.tensor<double>(ScalarType::kDouble, {2}, {1, -0.5}), &tanh_str, gt, gt}).failed());
  CHECK(c.t(gt).data_as<double>()[0] == Approx(0.8411919906082768).epsilon(1e-12));
  CHECK(c.t(gt).data_as<double>()[1] == Approx(-0.15428599017485606).epsilon(1e-12));
  auto ctx = c.run("aten::gelu.out", {c.f32({1}), &bad, g, g});
  REQUIRE(ctx.failed());
  CHECK(mentions(ctx, "approximate"));
  ctx = c.run("aten::gelu.out", {c.i64({1}, {1}), &none_str, c.i64({1}), c.none()});
  REQUIRE(ctx.failed());
}

TEST_CASE("leaky_relu and elu", "[kernels][unary]") {
  KernelCall c;
  EValue* lr = c.f32({3});
  REQUIRE_FALSE(c.run("aten::leaky_relu.out", {c.f32({3}, {-2, 0, 3}), c.dbl(0.1), lr, lr}).failed());
  CHECK(c.t(lr).data_as<float>()[0] == Approx(-0.2));
  CHECK(c.t(lr).data_as<float>()[2] == 3.0f);
  EValue* el = c.f32({2});
  REQUIRE_FALSE(c.run("aten::elu.out", {c.f32({2}, {-1, 2}), c.dbl(1.0), c.integer(1), c.integer(1), el, el}).failed());
  CHECK(c.t(el).data_as<float>()[0] == Approx(std::expm1(-1.0)));
  CHECK(c.t(el).data_as<float>()[1] == 2.0f);
  REQUIRE(c.run("aten::leaky_relu.out", {c.i64({1}, {1}), c.dbl(0.1), c.i64({1}), c.none()}).failed());
}

namespace {

// Every step-th float32 bit pattern: all magnitudes and both signs, NaNs and infinities included.
std::vector<float> spread_floats(uint64_t step) {
  std::vector<float> x;
  for (uint64_t u = 0; u < (uint64_t{1} << 32); u += step) {
    const uint32_t bits = static_cast<uint32_t>(u);
    float v;
    std::memcpy(&v, &bits, sizeof v);
    x.push_back(v);
  }
  return x;
}

}  // namespace

// exp, sigmoid and softmax on float32 run 16 lanes at a time (util/expf.h on glibc); each value must
// still be what the scalar arithmetic of ExecuTorch's portable kernels gives with this platform's
// std::exp: float bit patterns spread over the whole range, infinities, NaN, the overflow and
// underflow edges, and softmax rows of every tail length.
TEST_CASE("float32 exp sigmoid and softmax equal std::exp's arithmetic bit for bit", "[kernels][elementwise]") {
  std::vector<float> x = spread_floats(4099);
  for (float v : {0.0f, -0.0f, 1.0f, -1.0f, 88.0f, 0x1.62e42ep6f, 0x1.62e430p6f, -0x1.9fe368p6f, -0x1.9fe36ap6f, -87.5f,
                  -103.0f, std::numeric_limits<float>::infinity(), -std::numeric_limits<float>::infinity(),
                  std::numeric_limits<float>::denorm_min(), std::numeric_limits<float>::quiet_NaN()}) {
    x.push_back(v);
  }
  const int64_t n = static_cast<int64_t>(x.size());
  auto same_bits = [](float a, float b) { return std::memcmp(&a, &b, sizeof a) == 0; };
  KernelCall c;
  EValue* e = c.f32({n});
  EValue* s = c.f32({n});
  REQUIRE_FALSE(c.run("aten::exp.out", {c.f32({n}, x), e, e}).failed());
  REQUIRE_FALSE(c.run("aten::sigmoid.out", {c.f32({n}, x), s, s}).failed());
  const auto ev = c.t(e).values<float>(), sv = c.t(s).values<float>();
  size_t exp_wrong = 0, sigmoid_wrong = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    exp_wrong += !same_bits(ev[i], std::exp(x[i]));
    sigmoid_wrong += !same_bits(sv[i], 1.0f / (1.0f + std::exp(-x[i])));
  }
  CHECK(exp_wrong == 0);
  CHECK(sigmoid_wrong == 0);

  // Softmax over the last dimension: rows of 1..40 and 197 elements, logits spread over +-60 so
  // that some terms underflow; one row holds -inf, one NaN.
  for (int64_t len : {1, 2, 15, 16, 17, 31, 33, 40, 197}) {
    const int64_t rows = 37;  // two blocks of 16 rows summed a row to a lane, and 5 alone
    std::vector<float> in(static_cast<size_t>(rows * len));
    uint32_t state = 12345u + static_cast<uint32_t>(len);
    for (float& v : in) {
      state = state * 1664525u + 1013904223u;
      v = (static_cast<float>(state >> 8) / 16777216.0f - 0.5f) * 120.0f;
    }
    in[static_cast<size_t>(len)] = -std::numeric_limits<float>::infinity();
    if (len > 1) in[static_cast<size_t>(2 * len + 1)] = std::numeric_limits<float>::quiet_NaN();
    EValue* y = c.f32({rows, len});
    REQUIRE_FALSE(c.run("aten::_softmax.out", {c.f32({rows, len}, in), c.integer(-1), c.boolean_scalar(false), y, y}).failed());
    const auto got = c.t(y).values<float>();
    size_t wrong = 0;
    for (int64_t r = 0; r < rows; ++r) {
      const float* row = in.data() + r * len;
      float mx = -std::numeric_limits<float>::infinity();
      for (int64_t k = 0; k < len; ++k) mx = std::max(mx, row[k]);
      float sum = 0;
      for (int64_t k = 0; k < len; ++k) sum += std::exp(row[k] - mx);
      for (int64_t k = 0; k < len; ++k) {
        wrong += !same_bits(got[static_cast<size_t>(r * len + k)], std::exp(row[k] - mx) / sum);
      }
    }
    INFO("rows of " << len);
    CHECK(wrong == 0);
  }
}

// The exact GELU on float32 runs 16 lanes at a time (util/erff.h on glibc); each value must be the
// scalar formula's with this platform's std::erf, over float bit patterns spread across the range.
TEST_CASE("float32 exact gelu equals std::erf's arithmetic bit for bit", "[kernels][elementwise]") {
  std::vector<float> x = spread_floats(2053);
  // The range boundaries of erff (0.84375, 1.25, 1/0.35, 6 and 2^-28 after the 1/sqrt(2) scaling).
  for (float b : {0.84375f, 1.25f, 2.857142857f, 6.0f, 0x1p-28f, 0x1p-120f}) {
    for (float v : {b * 1.41421356f, std::nextafter(b * 1.41421356f, 0.0f), std::nextafter(b * 1.41421356f, 10.0f)}) {
      x.push_back(v);
      x.push_back(-v);
    }
  }
  const int64_t n = static_cast<int64_t>(x.size());
  KernelCall c;
  EValue* y = c.f32({n});
  EValue none_str = string_value("none");
  REQUIRE_FALSE(c.run("aten::gelu.out", {c.f32({n}, x), &none_str, y, y}).failed());
  const auto got = c.t(y).values<float>();
  size_t wrong = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    const float want = 0.5f * x[i] * (1.0f + std::erf(x[i] * 0.70710678118654752440f));
    wrong += std::memcmp(&want, &got[i], sizeof want) != 0;
  }
  CHECK(wrong == 0);
}
