// convolution.out and convolution_backward.out against direct (definition-following) loops
// written here, plus hand-computed cases and bad inputs.
#include <cmath>
#include <string>

#include "runtime/kernel_test_util.h"

using etscope::EValue;
using etscope::testing::KernelCall;

namespace {

// Deterministic pseudo-random floats in [-1, 1).
std::vector<float> noise(size_t n, uint32_t seed) {
  std::vector<float> v(n);
  uint32_t s = seed * 2654435761u + 12345u;
  for (auto& x : v) {
    s = s * 1664525u + 1013904223u;
    x = static_cast<float>((s >> 8) & 0xFFFF) / 32768.0f - 1.0f;
  }
  return v;
}

struct Cfg {
  int64_t n, c, h, w, oc, kh, kw, s, p, d, g;
  bool bias;
  int64_t oh() const { return (h + 2 * p - d * (kh - 1) - 1) / s + 1; }
  int64_t ow() const { return (w + 2 * p - d * (kw - 1) - 1) / s + 1; }
};

// in(n, c, y, x) for (y, x) inside the padded plane, 0 in the padding.
double at(const Cfg& k, const std::vector<float>& x, int64_t n, int64_t c, int64_t y, int64_t xx) {
  if (y < 0 || y >= k.h || xx < 0 || xx >= k.w) return 0;
  return x[static_cast<size_t>(((n * k.c + c) * k.h + y) * k.w + xx)];
}

std::vector<double> reference_forward(const Cfg& k, const std::vector<float>& x, const std::vector<float>& w,
                                      const std::vector<float>& b) {
  const int64_t cg = k.c / k.g, ocg = k.oc / k.g;
  std::vector<double> y(static_cast<size_t>(k.n * k.oc * k.oh() * k.ow()));
  for (int64_t n = 0; n < k.n; ++n)
    for (int64_t o = 0; o < k.oc; ++o)
      for (int64_t oy = 0; oy < k.oh(); ++oy)
        for (int64_t ox = 0; ox < k.ow(); ++ox) {
          double acc = k.bias ? b[static_cast<size_t>(o)] : 0.0;
          const int64_t g = o / ocg;
          for (int64_t ci = 0; ci < cg; ++ci)
            for (int64_t i = 0; i < k.kh; ++i)
              for (int64_t j = 0; j < k.kw; ++j)
                acc += w[static_cast<size_t>(((o * cg + ci) * k.kh + i) * k.kw + j)] *
                       at(k, x, n, g * cg + ci, oy * k.s - k.p + i * k.d, ox * k.s - k.p + j * k.d);
          y[static_cast<size_t>(((n * k.oc + o) * k.oh() + oy) * k.ow() + ox)] = acc;
        }
  return y;
}

EValue* conv_args(KernelCall& call, const Cfg& k, std::vector<EValue*>* args, EValue* x, EValue* w, EValue* b) {
  EValue* out = call.f32({k.n, k.oc, k.oh(), k.ow()});
  *args = {x,
           w,
           b,
           call.int_list({k.s, k.s}),
           call.int_list({k.p, k.p}),
           call.int_list({k.d, k.d}),
           call.boolean_scalar(false),
           call.int_list({0, 0}),
           call.integer(k.g),
           out,
           out};
  return out;
}

const Cfg kConfigs[] = {
    {2, 3, 7, 6, 4, 3, 3, 1, 1, 1, 1, true},   // cifar-style 3x3 pad 1
    {1, 4, 9, 8, 6, 3, 2, 2, 1, 2, 1, false},  // stride 2, dilation 2, non-square kernel
    {2, 4, 5, 5, 6, 3, 3, 1, 0, 1, 2, true},   // 2 groups
    {1, 4, 8, 7, 8, 3, 3, 2, 1, 1, 4, true},   // depthwise, multiplier 2, stride 2
    {2, 6, 5, 4, 6, 3, 3, 1, 1, 1, 6, false},  // depthwise, stride 1
    {2, 5, 4, 3, 7, 1, 1, 1, 0, 1, 1, true},   // pointwise 1x1
};

}  // namespace

TEST_CASE("convolution matches the direct definition", "[kernels][convolution]") {
  int idx = 0;
  for (const Cfg& k : kConfigs) {
    DYNAMIC_SECTION("config " << idx++) {
      KernelCall call;
      const auto xv = noise(static_cast<size_t>(k.n * k.c * k.h * k.w), 1);
      const auto wv = noise(static_cast<size_t>(k.oc * (k.c / k.g) * k.kh * k.kw), 2);
      const auto bv = noise(static_cast<size_t>(k.oc), 3);
      std::vector<EValue*> args;
      EValue* out = conv_args(call, k, &args, call.f32({k.n, k.c, k.h, k.w}, xv),
                              call.f32({k.oc, k.c / k.g, k.kh, k.kw}, wv), k.bias ? call.f32({k.oc}, bv) : call.none());
      auto ctx = call.run("aten::convolution.out", args);
      REQUIRE_FALSE(ctx.failed());
      const auto ref = reference_forward(k, xv, wv, bv);
      const auto got =
          call.t(out).numel() == static_cast<int64_t>(ref.size())
              ? std::vector<float>(out->tensor->data_as<float>(), out->tensor->data_as<float>() + ref.size())
              : std::vector<float>{};
      REQUIRE(got.size() == ref.size());
      for (size_t i = 0; i < ref.size(); ++i) CHECK(got[i] == Approx(ref[i]).margin(1e-4));
    }
  }
}

TEST_CASE("convolution of a 3x3 ramp with a 2x2 box kernel", "[kernels][convolution]") {
  // Hand-computed: windows of [[1,2,3],[4,5,6],[7,8,9]] sum to 12, 16, 24, 28; bias 0.5.
  KernelCall call;
  std::vector<EValue*> args;
  const Cfg k{1, 1, 3, 3, 1, 2, 2, 1, 0, 1, 1, true};
  EValue* out = conv_args(call, k, &args, call.f32({1, 1, 3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9}),
                          call.f32({1, 1, 2, 2}, {1, 1, 1, 1}), call.f32({1}, {0.5f}));
  auto ctx = call.run("aten::convolution.out", args);
  REQUIRE_FALSE(ctx.failed());
  CHECK(call.t(out).size(2) == 2);
  const float* y = out->tensor->data_as<float>();
  CHECK(y[0] == 12.5f);
  CHECK(y[1] == 16.5f);
  CHECK(y[2] == 24.5f);
  CHECK(y[3] == 28.5f);
}

TEST_CASE("convolution rejects mismatched channels / bad rank and transposed", "[kernels][convolution]") {
  KernelCall call;
  std::vector<EValue*> args;
  const Cfg k{1, 3, 5, 5, 2, 3, 3, 1, 1, 1, 1, false};
  conv_args(call, k, &args, call.f32({1, 3, 5, 5}), call.f32({2, 4, 3, 3}), call.none());
  auto ctx = call.run("aten::convolution.out", args);
  REQUIRE(ctx.failed());
  CHECK(std::string(ctx.message()).find("convolution.out") != std::string::npos);

  args[0] = call.f32({3, 5, 5});
  args[1] = call.f32({2, 3, 3, 3});
  ctx = call.run("aten::convolution.out", args);
  REQUIRE(ctx.failed());

  // Transposed: the weight is [Cin, Cout / groups, kh, kw], so this 2-channel weight does not fit
  // the 3-channel input.
  args[0] = call.f32({1, 3, 5, 5});
  args[6] = call.boolean_scalar(true);
  ctx = call.run("aten::convolution.out", args);
  REQUIRE(ctx.failed());
  CHECK(ctx.error_code() == etscope::ErrorCode::kInvalidArgument);
  CHECK(std::string(ctx.message()).find("input channels, weight shape and groups disagree") != std::string::npos);

  args[6] = call.boolean_scalar(false);
  args[0] = call.tensor<int64_t>(etscope::ScalarType::kLong, {1, 3, 5, 5});
  ctx = call.run("aten::convolution.out", args);
  REQUIRE(ctx.failed());
}

TEST_CASE("convolution_backward matches the direct definition", "[kernels][convolution]") {
  int idx = 0;
  for (const Cfg& k : kConfigs) {
    DYNAMIC_SECTION("config " << idx++) {
      KernelCall call;
      const int64_t cg = k.c / k.g, ocg = k.oc / k.g;
      const auto xv = noise(static_cast<size_t>(k.n * k.c * k.h * k.w), 4);
      const auto wv = noise(static_cast<size_t>(k.oc * cg * k.kh * k.kw), 5);
      const auto gv = noise(static_cast<size_t>(k.n * k.oc * k.oh() * k.ow()), 6);
      EValue* gi = call.f32({k.n, k.c, k.h, k.w});
      EValue* gw = call.f32({k.oc, cg, k.kh, k.kw});
      EValue* gb = call.f32({k.oc});
      std::vector<EValue*> args = {call.f32({k.n, k.oc, k.oh(), k.ow()}, gv),
                                   call.f32({k.n, k.c, k.h, k.w}, xv),
                                   call.f32({k.oc, cg, k.kh, k.kw}, wv),
                                   call.int_list({k.oc}),
                                   call.int_list({k.s, k.s}),
                                   call.int_list({k.p, k.p}),
                                   call.int_list({k.d, k.d}),
                                   call.boolean_scalar(false),
                                   call.int_list({0, 0}),
                                   call.integer(k.g),
                                   call.bool_list({true, true, true}),
                                   gi,
                                   gw,
                                   gb,
                                   call.none()};
      auto ctx = call.run("aten::convolution_backward.out", args);
      REQUIRE_FALSE(ctx.failed());
      // Reference: each output gradient flows back through the same index map as the forward.
      std::vector<double> ri(xv.size()), rw(wv.size()), rb(static_cast<size_t>(k.oc));
      for (int64_t n = 0; n < k.n; ++n)
        for (int64_t o = 0; o < k.oc; ++o)
          for (int64_t oy = 0; oy < k.oh(); ++oy)
            for (int64_t ox = 0; ox < k.ow(); ++ox) {
              const double g = gv[static_cast<size_t>(((n * k.oc + o) * k.oh() + oy) * k.ow() + ox)];
              rb[static_cast<size_t>(o)] += g;
              for (int64_t ci = 0; ci < cg; ++ci)
                for (int64_t i = 0; i < k.kh; ++i)
                  for (int64_t j = 0; j < k.kw; ++j) {
                    const int64_t y = oy * k.s - k.p + i * k.d, x = ox * k.s - k.p + j * k.d;
                    if (y < 0 || y >= k.h || x < 0 || x >= k.w) continue;
                    const int64_t c = (o / ocg) * cg + ci;
                    const size_t wi = static_cast<size_t>(((o * cg + ci) * k.kh + i) * k.kw + j);
                    const size_t xi = static_cast<size_t>(((n * k.c + c) * k.h + y) * k.w + x);
                    rw[wi] += g * xv[xi];
                    ri[xi] += g * wv[wi];
                  }
            }
      for (size_t i = 0; i < ri.size(); ++i) CHECK(gi->tensor->data_as<float>()[i] == Approx(ri[i]).margin(1e-4));
      for (size_t i = 0; i < rw.size(); ++i) CHECK(gw->tensor->data_as<float>()[i] == Approx(rw[i]).margin(1e-4));
      for (size_t i = 0; i < rb.size(); ++i) CHECK(gb->tensor->data_as<float>()[i] == Approx(rb[i]).margin(1e-4));
    }
  }
}

TEST_CASE("convolution_backward leaves unrequested gradients untouched", "[kernels][convolution]") {
  KernelCall call;
  // As in the cifar10 training program: grad_input is a u8[0] placeholder, mask [false,true,true].
  EValue* gi = call.tensor<uint8_t>(etscope::ScalarType::kByte, {0});
  EValue* gw = call.f32({2, 1, 1, 1});
  EValue* gb = call.f32({2});
  std::vector<EValue*> args = {call.f32({1, 2, 1, 2}, {1, 2, 3, 4}),
                               call.f32({1, 1, 1, 2}, {10, 20}),
                               call.f32({2, 1, 1, 1}, {1, 1}),
                               call.int_list({2}),
                               call.int_list({1, 1}),
                               call.int_list({0, 0}),
                               call.int_list({1, 1}),
                               call.boolean_scalar(false),
                               call.int_list({0, 0}),
                               call.integer(1),
                               call.bool_list({false, true, true}),
                               gi,
                               gw,
                               gb,
                               call.none()};
  auto ctx = call.run("aten::convolution_backward.out", args);
  REQUIRE_FALSE(ctx.failed());
  CHECK(call.t(gi).numel() == 0);
  // grad_weight[o] = sum_x grad[o][x] * input[x]: 1*10 + 2*20 = 50, 3*10 + 4*20 = 110.
  CHECK(gw->tensor->data_as<float>()[0] == 50.0f);
  CHECK(gw->tensor->data_as<float>()[1] == 110.0f);
  CHECK(gb->tensor->data_as<float>()[0] == 3.0f);
  CHECK(gb->tensor->data_as<float>()[1] == 7.0f);

  args[11] = call.none();
  args[10] = call.bool_list({false, false, true});
  args[12] = call.none();
  ctx = call.run("aten::convolution_backward.out", args);
  REQUIRE_FALSE(ctx.failed());
}

TEST_CASE("convolution_backward rejects a grad_output of the wrong shape", "[kernels][convolution]") {
  KernelCall call;
  std::vector<EValue*> args = {call.f32({1, 2, 3, 3}),
                               call.f32({1, 1, 4, 4}),
                               call.f32({2, 1, 3, 3}),
                               call.none(),
                               call.int_list({1, 1}),
                               call.int_list({0, 0}),
                               call.int_list({1, 1}),
                               call.boolean_scalar(false),
                               call.int_list({0, 0}),
                               call.integer(1),
                               call.bool_list({true, true, true}),
                               call.f32({1, 1, 4, 4}),
                               call.f32({2, 1, 3, 3}),
                               call.f32({2}),
                               call.none()};
  auto ctx = call.run("aten::convolution_backward.out", args);
  REQUIRE(ctx.failed());
  CHECK(std::string(ctx.message()).find("grad_output") != std::string::npos);
}

TEST_CASE("convolution in float64 and with too little scratch", "[kernels][convolution]") {
  KernelCall call;
  // Same ramp/box case as above, in double.
  EValue* out = call.tensor<double>(etscope::ScalarType::kDouble, {1, 1, 2, 2});
  std::vector<EValue*> args = {
      call.tensor<double>(etscope::ScalarType::kDouble, {1, 1, 3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9}),
      call.tensor<double>(etscope::ScalarType::kDouble, {1, 1, 2, 2}, {1, 1, 1, 1}),
      call.none(),
      call.int_list({1, 1}),
      call.int_list({0, 0}),
      call.int_list({1, 1}),
      call.boolean_scalar(false),
      call.int_list({0, 0}),
      call.integer(1),
      out,
      out};
  auto ctx = call.run("aten::convolution.out", args);
  REQUIRE_FALSE(ctx.failed());
  CHECK(call.t(out).values<double>() == std::vector<double>{12, 16, 24, 28});
  ctx = call.run("aten::convolution.out", args, 0);
  REQUIRE(ctx.failed());
  CHECK(std::string(ctx.message()).find("scratch") != std::string::npos);
}
