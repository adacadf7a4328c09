// The mask of a partial AVX-512 vector: its first n of 16 float or int32 lanes; stores of the
// lanes a mask holds.
#pragma once

#include <cstdint>

#if defined(__AVX512F__)
#include <immintrin.h>

namespace etscope::runtime::kernels {

/// Lanes 0 .. n - 1 set, n clamped to 0 .. 16.
inline __mmask16 first_lanes(int64_t n) {
  return n <= 0 ? __mmask16{0} : n >= 16 ? __mmask16{0xffff} : static_cast<__mmask16>((1u << n) - 1u);
}

/// Stores v's lanes of mask m at p: one whole store when m holds all 16 (a masked store costs
/// several times a whole one on AMD's Zen cores).
inline void store_lanes(float* p, __mmask16 m, __m512 v) {
  if (m == 0xffff) {
    _mm512_storeu_ps(p, v);
  } else {
    _mm512_mask_storeu_ps(p, m, v);
  }
}

#if defined(__AVX512BW__)
/// As store_lanes for 64 bytes.
inline void store_lanes(void* p, __mmask64 m, __m512i v) {
  if (m == ~__mmask64{0}) {
    _mm512_storeu_si512(p, v);
  } else {
    _mm512_mask_storeu_epi8(p, m, v);
  }
}
#endif

}  // namespace etscope::runtime::kernels
#endif
