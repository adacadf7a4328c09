// Elementwise XNNPACK nodes on floats: one small inline function per operation, and the two
// node runners the table instantiates with them (run_unary<op_abs>, run_binary<op_add>).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "xnnpack/delegate_state.h"

namespace etscope::runtime::xnnpack {

/// XNNPACK's f32 reciprocal square root as ExecuTorch 1.5.1's XNNPACK computes it on x86-64 CPUs
/// with AVX512F (its avx512f "rsqrt" kernel, xnn_math.cpp): the hardware's 14-bit estimate and one
/// Newton-Raphson step, which is not always 1 / sqrt(v) correctly rounded (an LLM's RMSNorm
/// reads it, and a dynamically quantized layer after the norm turns one last-place difference
/// into a different integer). Without AVX512F at build time: 1 / sqrt(v).
float xnn_rsqrt(float a);
/// sqrt(a) as XNNPACK's AVX-512 square root computes it (a times xnn_rsqrt's root; +inf gives NaN),
/// or std::sqrt where the runtime is not built for AVX-512 (xnn_math.cpp).
float xnn_sqrt(float a);

/// Clamps node n's output 0 to the node's output range, unless that range is unbounded.
void apply_output_range(const DelegateState& m, const Node& n);

// Binary operations: (a, b).
inline float op_add(float a, float b) { return a + b; }
inline float op_subtract(float a, float b) { return a - b; }
inline float op_multiply(float a, float b) { return a * b; }
inline float op_divide(float a, float b) { return a / b; }
inline float op_minimum(float a, float b) { return std::fmin(a, b); }
inline float op_maximum(float a, float b) { return std::fmax(a, b); }
inline float op_prelu(float a, float slope) { return a < 0 ? a * slope : a; }

// Unary operations: (value, the node's alpha), alpha read by ELU and LeakyReLU only.
// (GELU, exponent, sigmoid, tanh and softmax run over whole buffers: vector_math.cpp.)
// XNNPACK's f32 HardSwish: x times min(max(x * (1/6) + 1/2, 0), 1), the first step one fused
// multiply-add (1/6 rounded to float).
inline float op_hardswish(float v, float) { return v * std::min(std::max(std::fma(v, 1.0f / 6.0f, 0.5f), 0.0f), 1.0f); }
inline float op_abs(float v, float) { return std::fabs(v); }
inline float op_negate(float v, float) { return -v; }
inline float op_square(float v, float) { return v * v; }
inline float op_sqrt(float v, float) { return xnn_sqrt(v); }
inline float op_rsqrt(float v, float) { return xnn_rsqrt(v); }
inline float op_log(float v, float) { return std::log(v); }
inline float op_floor(float v, float) { return std::floor(v); }
inline float op_ceil(float v, float) { return std::ceil(v); }
inline float op_sin(float v, float) { return std::sin(v); }
inline float op_cos(float v, float) { return std::cos(v); }
inline float op_elu(float v, float alpha) { return v < 0 ? alpha * std::expm1(v) : v; }
inline float op_leaky_relu(float v, float slope) { return v < 0 ? v * slope : v; }

/// out = Op(x, n.alpha) per element, then the node's output range (as clampf), in one pass.
template <float (*Op)(float, float)>
void run_unary(DelegateState& m, const Node& n) {
  const float* x = m.input(n, 0);
  float* out = m.output(n);
  const float alpha = n.alpha, lo = n.output_min, hi = n.output_max;
  const int64_t count = m.out_shape(n).numel();
  if (unbounded_range(n)) {
    for (int64_t i = 0; i < count; ++i) out[i] = Op(x[i], alpha);
  } else {
    for (int64_t i = 0; i < count; ++i) out[i] = clampf(Op(x[i], alpha), lo, hi);
  }
}

/// out = Op(a, b) with broadcasting, then the node's output range (as clampf), in one pass (a
/// residual Add with its ReLU reads and writes its tensors once).
template <float (*Op)(float, float)>
void run_binary(DelegateState& m, const Node& n) {
  const float lo = n.output_min, hi = n.output_max;
  auto with = [&](auto f) { binary_broadcast(m.in_shape(n, 0), m.input(n, 0), m.in_shape(n, 1), m.input(n, 1), m.out_shape(n), m.output(n), f); };
  if (unbounded_range(n)) {
    with([](float a, float b) { return Op(a, b); });
  } else {
    with([lo, hi](float a, float b) { return clampf(Op(a, b), lo, hi); });
  }
}

}  // namespace etscope::runtime::xnnpack
