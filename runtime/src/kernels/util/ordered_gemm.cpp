// The matrix product as ExecuTorch's portable addmm computes it: each output is a sum over
// k in order, starting from zero, of products rounded to float, every sum rounded (no fused
// multiply-add). Compiled with -ffp-contract=off (runtime/CMakeLists.txt) so the compiler fuses
// no product into a sum, in the vector and the scalar code alike.
#include <cstdint>

#include "kernels/util/gemm.h"

#if defined(__AVX512F__)
#include <immintrin.h>
#endif

namespace etscope::runtime::kernels {
namespace {

#if defined(__AVX512F__)
// Rows [0, R) of A times columns [j0, j0 + 16 V) of B, the last vector masked by `tail`: R x V
// sums in registers, B read once for all R rows.
template <int R, int V>
void ordered_block(int64_t n, int64_t k, const float* a, const float* b, float* c, int64_t j0, __mmask16 tail) {
  __m512 acc[R][V];
  for (int r = 0; r < R; ++r) {
    for (int v = 0; v < V; ++v) acc[r][v] = _mm512_setzero_ps();
  }
  for (int64_t t = 0; t < k; ++t) {
    __m512 bv[V];
    for (int v = 0; v < V; ++v) {
      const float* p = b + t * n + j0 + 16 * v;
      bv[v] = v == V - 1 ? _mm512_maskz_loadu_ps(tail, p) : _mm512_loadu_ps(p);
    }
    for (int r = 0; r < R; ++r) {
      const __m512 av = _mm512_set1_ps(a[r * k + t]);
      for (int v = 0; v < V; ++v) acc[r][v] = _mm512_add_ps(acc[r][v], _mm512_mul_ps(av, bv[v]));
    }
  }
  for (int r = 0; r < R; ++r) {
    for (int v = 0; v < V; ++v) {
      float* p = c + r * n + j0 + 16 * v;
      if (v == V - 1) {
        _mm512_mask_storeu_ps(p, tail, acc[r][v]);
      } else {
        _mm512_storeu_ps(p, acc[r][v]);
      }
    }
  }
}

template <int R>
void ordered_rows(int64_t n, int64_t k, const float* a, const float* b, float* c) {
  int64_t j = 0;
  for (; j + 64 <= n; j += 64) ordered_block<R, 4>(n, k, a, b, c, j, 0xffff);
  const int64_t left = n - j;
  if (left == 0) return;
  const int vectors = static_cast<int>((left + 15) / 16);
  const __mmask16 tail = static_cast<__mmask16>(left % 16 == 0 ? 0xffff : (1u << (left % 16)) - 1);
  switch (vectors) {
    case 1: ordered_block<R, 1>(n, k, a, b, c, j, tail); break;
    case 2: ordered_block<R, 2>(n, k, a, b, c, j, tail); break;
    case 3: ordered_block<R, 3>(n, k, a, b, c, j, tail); break;
    default: ordered_block<R, 4>(n, k, a, b, c, j, tail); break;
  }
}
#endif

}  // namespace

bool prefer_ordered_gemm(int64_t m) { return m <= kOrderedGemmMaxRows; }

void gemm_ordered(int64_t m, int64_t n, int64_t k, const float* a, const float* b, float* c) {
  int64_t i = 0;
#if defined(__AVX512F__)
  for (; i + 4 <= m; i += 4) ordered_rows<4>(n, k, a + i * k, b, c + i * n);
  switch (m - i) {
    case 3: ordered_rows<3>(n, k, a + i * k, b, c + i * n); break;
    case 2: ordered_rows<2>(n, k, a + i * k, b, c + i * n); break;
    case 1: ordered_rows<1>(n, k, a + i * k, b, c + i * n); break;
    default: break;
  }
  return;
#endif
  for (; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      float sum = 0.0f;
      for (int64_t t = 0; t < k; ++t) sum += a[i * k + t] * b[t * n + j];
      c[i * n + j] = sum;
    }
  }
}

}  // namespace etscope::runtime::kernels
