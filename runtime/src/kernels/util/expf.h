// e^x for float32 in 16 lanes that gives glibc's expf bit for bit, so vectorised softmax and
// sigmoid give exactly what ExecuTorch's portable kernels (which call std::exp on the same libm)
// give.
//
// glibc's expf (since 2.28) works in double: with N = 32, k = round(x * N / ln 2) and
// r = x * N / ln 2 - k, the result is 2^(k / N) (a 32-entry table of 2^(i / N) scaled by the
// exponent bits of k) times a degree-3 polynomial in r, rounded once to float. Every step is exact
// or rounded in double, so the same steps in 8-lane doubles round the same way. Checked over all
// 2^32 float inputs against glibc 2.36's expf (the FMA build this machine's glibc picks); the
// reduction from a rounded or from a fused product gave the same floats. Outside glibc the lanes
// would not be the platform's expf, and a glibc could change its algorithm: callers take the
// lanes only when exact_expf16() (compiled for them, and checked once per process against this
// process's std::exp on 4096 inputs spread over every magnitude), else std::exp.
#pragma once

#include <cmath>
#include <cstdint>

#include "kernels/util/lanes.h"

#if defined(__AVX512F__) && defined(__AVX512DQ__) && defined(__GLIBC__) && \
    (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 28))
#define ETSCOPE_EXACT_EXPF16 1
#include <immintrin.h>
#else
#define ETSCOPE_EXACT_EXPF16 0
#endif

namespace etscope::runtime::kernels {

#if ETSCOPE_EXACT_EXPF16

namespace expf_detail {

// 2^(i / 32) rounded to double, less i << 47 (what the exponent bits of k add back).
alignas(64) inline constexpr uint64_t kTable[32] = {
    0x3ff0000000000000, 0x3fefd9b0d3158574, 0x3fefb5586cf9890f, 0x3fef9301d0125b51, 0x3fef72b83c7d517b,
    0x3fef54873168b9aa, 0x3fef387a6e756238, 0x3fef1e9df51fdee1, 0x3fef06fe0a31b715, 0x3feef1a7373aa9cb,
    0x3feedea64c123422, 0x3feece086061892d, 0x3feebfdad5362a27, 0x3feeb42b569d4f82, 0x3feeab07dd485429,
    0x3feea47eb03a5585, 0x3feea09e667f3bcd, 0x3fee9f75e8ec5f74, 0x3feea11473eb0187, 0x3feea589994cce13,
    0x3feeace5422aa0db, 0x3feeb737b0cdc5e5, 0x3feec49182a3f090, 0x3feed503b23e255d, 0x3feee89f995ad3ad,
    0x3feeff76f2fb5e47, 0x3fef199bdd85529c, 0x3fef3720dcef9069, 0x3fef5818dcfba487, 0x3fef7c97337b9b5f,
    0x3fefa4afa2a490da, 0x3fefd0765b6e4540};

// e^x for 8 doubles holding floats; the result still in double (rounded to float by the caller).
inline __m512d exp8(__m512d x) {
  const __m512d shift = _mm512_set1_pd(0x1.8p+52);  // rounds to an integer in the low mantissa bits
  const __m512d z = _mm512_mul_pd(_mm512_set1_pd(0x1.71547652b82fep+0 * 32), x);
  const __m512d kd_shifted = _mm512_add_pd(z, shift);
  const __m512i ki = _mm512_castpd_si512(kd_shifted);
  const __m512d r = _mm512_sub_pd(z, _mm512_sub_pd(kd_shifted, shift));
  const __m512i lo = _mm512_load_si512(kTable), mid1 = _mm512_load_si512(kTable + 8);
  const __m512i mid2 = _mm512_load_si512(kTable + 16), hi = _mm512_load_si512(kTable + 24);
  const __m512i low16 = _mm512_permutex2var_epi64(lo, ki, mid1), high16 = _mm512_permutex2var_epi64(mid2, ki, hi);
  const __m512i t = _mm512_mask_mov_epi64(low16, _mm512_test_epi64_mask(ki, _mm512_set1_epi64(16)), high16);
  const __m512d s = _mm512_castsi512_pd(_mm512_add_epi64(t, _mm512_maskz_slli_epi64(0xff, ki, 47)));
  const __m512d c0 = _mm512_set1_pd(0x1.c6af84b912394p-5 / 32 / 32 / 32);
  const __m512d c1 = _mm512_set1_pd(0x1.ebfce50fac4f3p-3 / 32 / 32);
  const __m512d c2 = _mm512_set1_pd(0x1.62e42ff0c52d6p-1 / 32);
  const __m512d p = _mm512_fmadd_pd(c0, r, c1);
  const __m512d q = _mm512_fmadd_pd(c2, r, _mm512_set1_pd(1.0));
  return _mm512_mul_pd(_mm512_fmadd_pd(p, _mm512_mul_pd(r, r), q), s);
}

}  // namespace expf_detail

/// expf of 16 floats, each lane equal to glibc's expf of it (infinities, NaN, overflow to
/// infinity and underflow to zero included).
inline __m512 expf16(__m512 x) {
  constexpr __mmask8 kAll8 = 0xff;
  constexpr __mmask16 kAll16 = 0xffff;
  // Zero-masking forms with every lane selected throughout: GCC 12's plain forms start from an
  // "undefined" register that -Wmaybe-uninitialized rejects.
  const __m512d lo = _mm512_maskz_cvtps_pd(kAll8, _mm512_maskz_extractf32x8_ps(kAll8, x, 0));
  const __m512d hi = _mm512_maskz_cvtps_pd(kAll8, _mm512_maskz_extractf32x8_ps(kAll8, x, 1));
  const __m256 ylo = _mm512_maskz_cvtpd_ps(kAll8, expf_detail::exp8(lo));
  const __m256 yhi = _mm512_maskz_cvtpd_ps(kAll8, expf_detail::exp8(hi));
  __m512 y = _mm512_maskz_insertf32x8(kAll16, _mm512_castps256_ps512(ylo), yhi, 1);
  // glibc's thresholds: above the largest x whose e^x rounds below FLT_MAX, infinity; below the
  // smallest whose e^x rounds to a denormal above zero, zero; NaN stays NaN.
  y = _mm512_mask_mov_ps(y, _mm512_cmp_ps_mask(x, _mm512_set1_ps(0x1.62e42ep6f), _CMP_GT_OQ),
                         _mm512_set1_ps(INFINITY));
  y = _mm512_mask_mov_ps(y, _mm512_cmp_ps_mask(x, _mm512_set1_ps(-0x1.9fe368p6f), _CMP_LT_OQ), _mm512_setzero_ps());
  return _mm512_mask_mov_ps(y, _mm512_cmp_ps_mask(x, x, _CMP_UNORD_Q), _mm512_add_ps(x, x));
}
#endif

/// The index-th of `count` float32 bit patterns spread evenly over all 2^32 (every magnitude, both
/// signs, infinities and NaNs): what the once-per-process checks of the 16-lane functions compare.
inline float spread_float(uint32_t index, uint32_t count) {
  const uint32_t bits = static_cast<uint32_t>((uint64_t{index} << 32) / count) + index;
  float v;
  __builtin_memcpy(&v, &bits, sizeof v);
  return v;
}

#if ETSCOPE_EXACT_EXPF16
/// Whether a 16-lane function gives the scalar one's bits on 4096 spread inputs.
template <typename Lanes, typename Scalar>
bool lanes_match(Lanes lanes, Scalar scalar) {
  for (uint32_t i = 0; i < 4096; i += 16) {
    alignas(64) float x[16], y[16];
    for (uint32_t l = 0; l < 16; ++l) x[l] = spread_float(i + l, 4096);
    _mm512_store_ps(y, lanes(_mm512_load_ps(x)));
    for (uint32_t l = 0; l < 16; ++l) {
      const float e = scalar(x[l]);
      if (__builtin_memcmp(&e, &y[l], sizeof e) != 0) return false;
    }
  }
  return true;
}
#endif

/// Whether expf16 is used: compiled in, and equal to this process's std::exp on 4096 spread
/// inputs (checked on the first call).
inline bool exact_expf16() {
#if ETSCOPE_EXACT_EXPF16
  static const bool same = lanes_match(expf16, [](float v) { return std::exp(v); });
  return same;
#else
  return false;
#endif
}

/// y[i] = std::exp(x[i]) for n floats (y may be x).
inline void expf_n(const float* x, float* y, int64_t n) {
  int64_t i = 0;
#if ETSCOPE_EXACT_EXPF16
  if (exact_expf16()) {
    for (; i + 16 <= n; i += 16) _mm512_storeu_ps(y + i, expf16(_mm512_loadu_ps(x + i)));
    if (i < n) {
      const __mmask16 m = first_lanes(n - i);
      _mm512_mask_storeu_ps(y + i, m, expf16(_mm512_maskz_loadu_ps(m, x + i)));
    }
    return;
  }
#endif
  for (; i < n; ++i) y[i] = std::exp(x[i]);
}

/// y[i] = 1 / (1 + std::exp(-x[i])) for n floats, in float (y may be x).
inline void sigmoidf_n(const float* x, float* y, int64_t n) {
  int64_t i = 0;
#if ETSCOPE_EXACT_EXPF16
  const __m512 one = _mm512_set1_ps(1.0f), sign = _mm512_set1_ps(-0.0f);
  const int64_t lanes_end = exact_expf16() ? n : 0;
  for (; i + 16 <= lanes_end; i += 16) {
    const __m512 e = expf16(_mm512_xor_ps(_mm512_loadu_ps(x + i), sign));
    _mm512_storeu_ps(y + i, _mm512_div_ps(one, _mm512_add_ps(one, e)));
  }
#endif
  for (; i < n; ++i) y[i] = 1.0f / (1.0f + std::exp(-x[i]));
}

}  // namespace etscope::runtime::kernels
