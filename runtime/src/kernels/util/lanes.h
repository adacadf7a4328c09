// The mask of a partial AVX-512 vector: its first n of 16 float or int32 lanes.
#pragma once

#include <cstdint>

#if defined(__AVX512F__)
#include <immintrin.h>

namespace etscope::runtime::kernels {

/// Lanes 0 .. n - 1 set, n clamped to 0 .. 16.
inline __mmask16 first_lanes(int64_t n) {
  return n <= 0 ? __mmask16{0} : n >= 16 ? __mmask16{0xffff} : static_cast<__mmask16>((1u << n) - 1u);
}

}  // namespace etscope::runtime::kernels
#endif
