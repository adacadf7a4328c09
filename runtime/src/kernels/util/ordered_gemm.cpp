// The matrix product as ExecuTorch's portable addmm computes it: each output is a sum over
// k in order, starting from zero, of products rounded to float, every sum rounded (no fused
// multiply-add). Compiled with -ffp-contract=off (runtime/CMakeLists.txt) so the compiler fuses
// no product into a sum, in the vector and the scalar code alike.
#include <cstdint>

#include <algorithm>

#include "kernels/util/gemm.h"
#include "kernels/util/lanes.h"
#include "kernels/util/permute_util.h"

#if defined(__AVX512F__)
#include <immintrin.h>
#endif

namespace etscope::runtime::kernels {
namespace {

#if defined(__AVX512F__)
// Rows [0, R) of A times columns [j0, j0 + 16 V) of B, the last vector masked by `tail`: R x V
// sums in registers, B read once for all R rows.
template <int R, int V>
void ordered_block(int64_t n, int64_t k, const float* a, int64_t sar, int64_t sat, const float* b, float* c, int64_t j0,
                   __mmask16 tail) {
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
      const __m512 av = _mm512_set1_ps(a[r * sar + t * sat]);
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

// B stored transposed (bt: n x k, row j holds column j of B): 16 x 16 tiles of it transposed into
// a stack tile, then the same sums in the same order.
template <int R>
void ordered_block_bt(int64_t n, int64_t k, const float* a, int64_t sar, int64_t sat, const float* bt, float* c,
                      int64_t j0) {
  const int64_t cols = std::min<int64_t>(16, n - j0);
  const __mmask16 tail = first_lanes(cols);
  __m512 acc[R];
  for (int r = 0; r < R; ++r) acc[r] = _mm512_setzero_ps();
  alignas(64) float rows[16][16];
  alignas(64) float tile[16][16];
  for (int64_t t0 = 0; t0 < k; t0 += 16) {
    const int64_t depth = std::min<int64_t>(16, k - t0);
    const __mmask16 dm = first_lanes(depth);
    for (int64_t q = 0; q < 16; ++q) {
      const __m512 v = q < cols ? _mm512_maskz_loadu_ps(dm, bt + (j0 + q) * k + t0) : _mm512_setzero_ps();
      _mm512_store_ps(rows[q], v);
    }
    permute_detail::transpose16x16(&rows[0][0], 16, &tile[0][0], 16);
    for (int64_t q = 0; q < depth; ++q) {
      const __m512 bv = _mm512_load_ps(tile[q]);
      for (int r = 0; r < R; ++r) acc[r] = _mm512_add_ps(acc[r], _mm512_mul_ps(_mm512_set1_ps(a[r * sar + (t0 + q) * sat]), bv));
    }
  }
  for (int r = 0; r < R; ++r) _mm512_mask_storeu_ps(c + r * n + j0, tail, acc[r]);
}

template <int R>
void ordered_rows(int64_t n, int64_t k, const float* a, int64_t sar, int64_t sat, const float* b, bool trans_b, float* c) {
  int64_t j = 0;
  if (trans_b) {
    for (; j < n; j += 16) ordered_block_bt<R>(n, k, a, sar, sat, b, c, j);
    return;
  }
  for (; j + 64 <= n; j += 64) ordered_block<R, 4>(n, k, a, sar, sat, b, c, j, 0xffff);
  const int64_t left = n - j;
  if (left == 0) return;
  const int vectors = static_cast<int>((left + 15) / 16);
  const __mmask16 tail = first_lanes(left % 16 == 0 ? 16 : left % 16);
  switch (vectors) {
    case 1: ordered_block<R, 1>(n, k, a, sar, sat, b, c, j, tail); break;
    case 2: ordered_block<R, 2>(n, k, a, sar, sat, b, c, j, tail); break;
    case 3: ordered_block<R, 3>(n, k, a, sar, sat, b, c, j, tail); break;
    default: ordered_block<R, 4>(n, k, a, sar, sat, b, c, j, tail); break;
  }
}
#endif

}  // namespace

bool prefer_ordered_gemm(int64_t m) { return m <= kOrderedGemmMaxRows; }

void gemm_ordered(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, const float* a, const float* b, float* c) {
  // A's element (i, t): a[i * sar + t * sat].
  const int64_t sar = trans_a ? 1 : k, sat = trans_a ? m : 1;
  int64_t i = 0;
#if defined(__AVX512F__)
  for (; i + 4 <= m; i += 4) ordered_rows<4>(n, k, a + i * sar, sar, sat, b, trans_b, c + i * n);
  switch (m - i) {
    case 3: ordered_rows<3>(n, k, a + i * sar, sar, sat, b, trans_b, c + i * n); break;
    case 2: ordered_rows<2>(n, k, a + i * sar, sar, sat, b, trans_b, c + i * n); break;
    case 1: ordered_rows<1>(n, k, a + i * sar, sar, sat, b, trans_b, c + i * n); break;
    default: break;
  }
  return;
#endif
  for (; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      float sum = 0.0f;
      for (int64_t t = 0; t < k; ++t) sum += a[i * sar + t * sat] * (trans_b ? b[j * k + t] : b[t * n + j]);
      c[i * n + j] = sum;
    }
  }
}

}  // namespace etscope::runtime::kernels
