// erf for float32 in 16 lanes that gives glibc's erff bit for bit, so the exact GELU of the
// portable kernels (std::erf on float, as ExecuTorch's portable gelu computes it on the same libm)
// runs vectorised with unchanged values.
//
// glibc (up to at least 2.36) computes erff in float alone, by ranges of |x|: x + x * P/Q in z =
// x^2 below 0.84375; erx + P/Q in |x| - 1 below 1.25; 1 - e^(-z^2 - 0.5625) e^((z - |x|)(z + |x|)
// + R/S) / |x| below 6 (z: |x| with its low 12 mantissa bits cleared; R/S in 1/x^2, one pair of
// polynomials below 1/0.35 and another above); +-1 beyond; x + x * c for tiny x. The
// polynomials are Horner chains of separate float products and sums (its x86-64 build has no
// fused multiply-add). Here each step is one rounded AVX-512 operation in the same order, with
// the rounding given explicitly (the *_round_ps forms), so the compiler cannot fuse a product and
// a sum as it may with plain vector arithmetic; e^x is expf16 (glibc's expf bit for bit). Checked
// over all 2^32 float inputs against glibc 2.36's erff; used only where exact_erff16() finds the
// process's std::erf the same.
#pragma once

#include <cmath>
#include <cstdint>

#include "kernels/util/expf.h"

namespace etscope::runtime::kernels {

#if ETSCOPE_EXACT_EXPF16

namespace erff_detail {

// Zero-masking forms with every lane selected, as in expf16 (GCC 12's plain forms start from an
// "undefined" register that -Wmaybe-uninitialized rejects).
constexpr int kNearest = _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC;
constexpr __mmask16 kAll = 0xffff;
inline __m512 mul(__m512 a, __m512 b) { return _mm512_maskz_mul_round_ps(kAll, a, b, kNearest); }
inline __m512 add(__m512 a, __m512 b) { return _mm512_maskz_add_round_ps(kAll, a, b, kNearest); }
inline __m512 sub(__m512 a, __m512 b) { return _mm512_maskz_sub_round_ps(kAll, a, b, kNearest); }
inline __m512 div(__m512 a, __m512 b) { return _mm512_maskz_div_round_ps(kAll, a, b, kNearest); }
inline __m512 splat(float v) { return _mm512_set1_ps(v); }

// c[0] s^(n-1) + ... + c[n-1] as ((c[0] s + c[1]) s + ...) + c[n-1], each step rounded.
template <size_t N>
inline __m512 horner(__m512 s, const float (&c)[N]) {
  __m512 v = splat(c[0]);
  for (size_t i = 1; i < N; ++i) v = add(mul(v, s), splat(c[i]));
  return v;
}

// |x| < 0.84375: r / s in z = x^2.
inline constexpr float kPP[] = {-0x1.8ead62p-16f, -0x1.7a2912p-8f, -0x1.d2a51ep-6f, -0x1.4cd7d6p-2f, 0x1.06eba8p-3f};
inline constexpr float kQQ[] = {-0x1.09c434p-18f, 0x1.15dc92p-13f, 0x1.4d022cp-8f, 0x1.0a54c6p-4f, 0x1.97779cp-2f, 1.0f};
// 0.84375 <= |x| < 1.25: P / Q in |x| - 1.
inline constexpr float kPA[] = {-0x1.1bf38p-9f,  0x1.22a366p-5f, -0x1.c63984p-4f, 0x1.45fca8p-2f,
                                -0x1.7d241p-2f,  0x1.a8d00ap-2f, -0x1.359b8cp-9f};
inline constexpr float kQA[] = {0x1.88b546p-7f, 0x1.bedc26p-7f, 0x1.02660ep-3f, 0x1.2635cep-4f,
                                0x1.14af0ap-1f, 0x1.b3e662p-4f, 1.0f};
// 1.25 <= |x| < 1/0.35 and 1/0.35 <= |x| < 6: R / S in 1 / x^2.
inline constexpr float kRA[] = {-0x1.3a0efcp+3f, -0x1.452656p+6f, -0x1.7135cep+7f, -0x1.44cb18p+7f,
                                -0x1.f300aep+5f, -0x1.51e044p+3f, -0x1.63416ep-1f, -0x1.434126p-7f};
inline constexpr float kSA[] = {-0x1.eeff2ep-5f, 0x1.a47ef8p+2f, 0x1.b28a3ep+6f, 0x1.ad0216p+8f, 0x1.42b192p+9f,
                                0x1.b290dep+8f,  0x1.1350c6p+7f, 0x1.3a6b9cp+4f, 1.0f};
inline constexpr float kRB[] = {-0x1.e384eap+8f, -0x1.004616p+10f, -0x1.3ec882p+9f, -0x1.4145d4p+7f,
                                -0x1.1c2096p+4f, -0x1.993ba8p-1f,  -0x1.434124p-7f};
inline constexpr float kSB[] = {-0x1.670e24p+4f, 0x1.da874ep+8f,  0x1.3f219cp+11f, 0x1.8ffb76p+11f,
                                0x1.802eb2p+10f, 0x1.45cae2p+8f,  0x1.e568b2p+4f,  1.0f};
constexpr float kErx = 0x1.b0ac16p-1f;   // erf(1) rounded
constexpr float kEfx = 0x1.06eba8p-3f;   // 2 / sqrt(pi) - 1
constexpr float kEfx16 = 0x1.06eba8p+1f;  // 16 kEfx

inline __m512i ibits(uint32_t v) { return _mm512_set1_epi32(static_cast<int>(v)); }

}  // namespace erff_detail

/// erff of 16 floats, each lane equal to glibc's erff of it.
inline __m512 erff16(__m512 x) {
  using namespace erff_detail;
  const __m512i bits = _mm512_castps_si512(x);
  const __m512i ix = _mm512_and_si512(bits, ibits(0x7fffffff));
  const __m512 ax = _mm512_castsi512_ps(ix);
  const __mmask16 neg = _mm512_cmplt_epi32_mask(bits, _mm512_setzero_si512());
  auto below = [&](uint32_t v) { return _mm512_cmplt_epi32_mask(ix, ibits(v)); };
  const __mmask16 tiny = below(0x31800000), small = below(0x3f580000), mid = below(0x3fa00000);
  const __mmask16 tail = below(0x40c00000), finite = below(0x7f800000);
  __m512 y;
  // Not finite: (1 - 2 sign) + 1 / x (+-1, NaN for NaN); |x| >= 6: 1 - tiny or tiny - 1 rounded.
  y = add(_mm512_mask_blend_ps(neg, splat(1.0f), splat(-1.0f)), div(splat(1.0f), x));
  y = _mm512_mask_blend_ps(finite & ~tail, y, _mm512_mask_blend_ps(neg, splat(1.0f), splat(-1.0f)));
  if (tiny) {
    const __m512 normal = add(mul(x, splat(kEfx)), x);
    const __m512 deep = mul(add(mul(x, splat(16.0f)), mul(x, splat(kEfx16))), splat(0.0625f));
    y = _mm512_mask_blend_ps(tiny, y, _mm512_mask_blend_ps(below(0x04000000), normal, deep));
  }
  if (small & ~tiny) {
    const __m512 z = mul(x, x);
    const __m512 r = div(horner(z, kPP), horner(z, kQQ));
    y = _mm512_mask_blend_ps(small & ~tiny, y, add(mul(r, x), x));
  }
  if (mid & ~small) {
    const __m512 s = sub(ax, splat(1.0f));
    const __m512 pq = div(horner(s, kPA), horner(s, kQA));
    y = _mm512_mask_blend_ps(mid & ~small, y,
                             _mm512_mask_blend_ps(neg, add(pq, splat(kErx)), sub(splat(-kErx), pq)));
  }
  const __mmask16 far = tail & ~mid;
  if (far) {
    const __m512 s = div(splat(1.0f), mul(x, x));
    const __mmask16 near = below(0x4036db6e);
    __m512 r = horner(s, kRB), q = horner(s, kSB);
    if (far & near) {
      r = _mm512_mask_blend_ps(near, r, horner(s, kRA));
      q = _mm512_mask_blend_ps(near, q, horner(s, kSA));
    }
    const __m512 z = _mm512_castsi512_ps(_mm512_and_si512(ix, ibits(0xfffff000)));
    const __m512 e1 = expf16(sub(mul(_mm512_xor_ps(z, splat(-0.0f)), z), splat(0.5625f)));
    const __m512 e2 = expf16(add(mul(sub(z, ax), add(z, ax)), div(r, q)));
    const __m512 ratio = div(mul(e2, e1), ax);
    y = _mm512_mask_blend_ps(far, y, _mm512_mask_blend_ps(neg, sub(splat(1.0f), ratio), sub(ratio, splat(1.0f))));
  }
  return y;
}
#endif

/// Whether erff16 is used: compiled in, expf16 in use, and erff16 equal to this process's
/// std::erf on 4096 spread inputs (checked on the first call; a libm with another erff, e.g. a
/// correctly rounded one, keeps std::erf).
inline bool exact_erff16() {
#if ETSCOPE_EXACT_EXPF16
  static const bool same = exact_expf16() && lanes_match(erff16, [](float v) { return std::erf(v); });
  return same;
#else
  return false;
#endif
}

}  // namespace etscope::runtime::kernels
