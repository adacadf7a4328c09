// Float operations whose result depends on how XNNPACK writes them, step by step. This file is
// compiled with -ffp-contract=off (runtime/CMakeLists.txt): no product and sum fuse where
// XNNPACK's kernels keep them apart.
#include <cfloat>
#include <cmath>
#if defined(__AVX512F__)
#include <immintrin.h>
#endif

#include "xnnpack/elementwise_ops.h"

namespace etscope::runtime::xnnpack {
#if defined(__AVX512F__)
namespace {

// XNNPACK runs its operators with denormals off (flush to zero, denormals are zero): a subnormal
// operand or result is a zero of the same sign.
float flush(float v) { return (v != 0.0f && std::fabs(v) < FLT_MIN) ? std::copysign(0.0f, v) : v; }

// XNNPACK's AVX-512 reciprocal square root of x (flushed): the 14-bit estimate (vrsqrt14), then
// one Newton-Raphson step on x^-2 - a in XNNPACK's unfactored form, y = t - (a * t * t - 1) *
// (0.5 * t), each operation rounded and flushed. A zero (or subnormal) input gives NaN (its
// estimate is infinite, 0 x inf), a negative input or NaN gives NaN.
float refined_rsqrt(float x) {
  const float t0 = _mm_cvtss_f32(_mm_rsqrt14_ss(_mm_setzero_ps(), _mm_set_ss(x)));
  const float t1 = flush(t0 * t0);
  const float t2 = flush(x * t1);
  const float t3 = flush(t2 - 1.0f);
  const float t4 = flush(0.5f * t0);
  const float t5 = flush(t3 * t4);
  return flush(t0 - t5);
}

}  // namespace
#endif

float xnn_rsqrt(float a) {
#if defined(__AVX512F__)
  // +inf gives +0 (XNNPACK masks it).
  const float x = flush(a);
  const float y = refined_rsqrt(x);
  return x == INFINITY ? 0.0f : y;
#else
  return 1.0f / std::sqrt(a);
#endif
}

float xnn_sqrt(float a) {
#if defined(__AVX512F__)
  // XNNPACK's AVX-512 square root: x times its reciprocal square root, that root taken as 0 for a
  // zero input. +inf gives NaN (inf x 0), as XNNPACK's does.
  const float x = flush(a);
  const float t = x != 0.0f ? refined_rsqrt(x) : 0.0f;
  return flush(x * t);
#else
  return std::sqrt(a);
#endif
}

}  // namespace etscope::runtime::xnnpack
