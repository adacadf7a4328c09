// The AVX-512 VNNI dot product the integer GEMMs (int8_gemm.cpp, qd8_layers.cpp) accumulate with.
#pragma once

#if defined(__AVX512VNNI__) && defined(__AVX512BW__)
#include <immintrin.h>

namespace etscope::runtime::xnnpack {

/// acc + the sums of 4 products of u8's unsigned bytes and s8's signed bytes, per 32-bit lane
/// (vpdpbusd, wrapping). Written as assembly: GCC 12 does not give the intrinsic's result the
/// accumulator's register inside a loop, and copies every accumulator in and out on each pass
/// (33 register moves per 16 products in the 4 x 4 block of int8_gemm.cpp; 6 this way).
inline __m512i dpbusd(__m512i acc, __m512i u8, __m512i s8) {
  asm("vpdpbusd %2, %1, %0" : "+v"(acc) : "v"(u8), "v"(s8));
  return acc;
}

}  // namespace etscope::runtime::xnnpack
#endif
