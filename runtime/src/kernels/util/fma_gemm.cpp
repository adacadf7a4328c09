// The matrix product with fused multiply-adds and nothing packed (gemm.h: gemm_fma): blocks of
// up to 8 rows of A by 32 columns of B, each B row's vectors loaded once for the block's rows.
#include <algorithm>
#include <cmath>
#include <cstdint>

#include "kernels/util/gemm.h"
#include "kernels/util/lanes.h"

#if defined(__AVX512F__)
#include <immintrin.h>
#endif

namespace etscope::runtime::kernels {

namespace {
#if defined(__AVX512F__)
// R rows by V registers of 16 columns from column j (the last register masked to `left`).
template <int R, int V>
[[gnu::noinline]] void unpacked_block(const float* a, int64_t a_stride, const float* b, int64_t b_stride, int64_t k, float* out, int64_t out_stride,
                                      int64_t left) {
  const __mmask16 last = first_lanes(left - 16 * (V - 1));
  __m512 acc[R][V];
  _Pragma("GCC unroll 8") for (int r = 0; r < R; ++r) {
    _Pragma("GCC unroll 2") for (int v = 0; v < V; ++v) acc[r][v] = _mm512_setzero_ps();
  }
  for (int64_t i = 0; i < k; ++i) {
    __m512 f[V];
    _Pragma("GCC unroll 2") for (int v = 0; v < V; ++v) {
      f[v] = v + 1 < V ? _mm512_loadu_ps(b + i * b_stride + 16 * v) : _mm512_maskz_loadu_ps(last, b + i * b_stride + 16 * v);
    }
    _Pragma("GCC unroll 8") for (int r = 0; r < R; ++r) {
      const __m512 x = _mm512_set1_ps(a[r * a_stride + i]);
      _Pragma("GCC unroll 2") for (int v = 0; v < V; ++v) acc[r][v] = _mm512_fmadd_ps(x, f[v], acc[r][v]);
    }
  }
  _Pragma("GCC unroll 8") for (int r = 0; r < R; ++r) {
    _Pragma("GCC unroll 2") for (int v = 0; v < V; ++v) {
      if (v + 1 < V || last == 0xffff) {
        _mm512_storeu_ps(out + r * out_stride + 16 * v, acc[r][v]);
      } else {
        _mm512_mask_storeu_ps(out + r * out_stride + 16 * v, last, acc[r][v]);
      }
    }
  }
}

template <int R>
void unpacked_rows(const float* a, int64_t a_stride, const float* b, int64_t b_stride, int64_t cols, int64_t k, float* out, int64_t out_stride) {
  int64_t j = 0;
  for (; cols - j > 16; j += 32) unpacked_block<R, 2>(a, a_stride, b + j, b_stride, k, out + j, out_stride, std::min<int64_t>(32, cols - j));
  if (j < cols) unpacked_block<R, 1>(a, a_stride, b + j, b_stride, k, out + j, out_stride, cols - j);
}

template <int R>
void unpacked_any(int64_t nr, const float* a, int64_t a_stride, const float* b, int64_t b_stride, int64_t cols, int64_t k, float* out,
                  int64_t out_stride) {
  if constexpr (R > 1) {
    if (nr < R) return unpacked_any<R - 1>(nr, a, a_stride, b, b_stride, cols, k, out, out_stride);
  }
  unpacked_rows<R>(a, a_stride, b, b_stride, cols, k, out, out_stride);
}
#endif
}  // namespace

void gemm_fma(const float* a, int64_t a_stride, const float* b, int64_t b_stride, int64_t rows, int64_t cols, int64_t k, float* out, int64_t out_stride) {
#if defined(__AVX512F__)
  constexpr int64_t kRows = 8;  // (the blocks' loops are unrolled 8 deep to keep sums in registers)
  for (int64_t r0 = 0; r0 < rows; r0 += kRows) {
    unpacked_any<kRows>(std::min(kRows, rows - r0), a + r0 * a_stride, a_stride, b, b_stride, cols, k, out + r0 * out_stride, out_stride);
  }
#else
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t j = 0; j < cols; ++j) {
      float acc = 0.0f;
      for (int64_t i = 0; i < k; ++i) acc = std::fma(a[r * a_stride + i], b[i * b_stride + j], acc);
      out[r * out_stride + j] = acc;
    }
  }
#endif
}

}  // namespace etscope::runtime::kernels
