// The packed float GEMM's kernel (f32_gemm.h): blocks of up to 8 rows by one panel of 32 outputs.
#include "xnnpack/f32_gemm.h"

#include <cmath>
#if defined(__AVX512F__)
#include <immintrin.h>
#endif

namespace etscope::runtime::xnnpack {
namespace {

#if defined(__AVX512F__)
// R rows (up to 8) by 32 outputs in 2R registers: per input, two filter loads and R broadcasts
// feed 2R fused multiply-adds.
template <int R>
void rows_block(const float* a, int64_t stride, const float* panel, const float* bias, int64_t k, float* out, int64_t out_stride,
                int64_t width, float lo, float hi) {
  const float* row[R];
  for (int r = 0; r < R; ++r) row[r] = a + r * stride;
  __m512 acc[R][2];
  const __m512 b0 = _mm512_loadu_ps(bias), b1 = _mm512_loadu_ps(bias + 16);
  for (int r = 0; r < R; ++r) acc[r][0] = b0, acc[r][1] = b1;
  for (int64_t i = 0; i < k; ++i) {
    const __m512 f0 = _mm512_loadu_ps(panel + i * kF32Panel), f1 = _mm512_loadu_ps(panel + i * kF32Panel + 16);
    for (int r = 0; r < R; ++r) {
      const __m512 x = _mm512_set1_ps(row[r][i]);
      acc[r][0] = _mm512_fmadd_ps(x, f0, acc[r][0]);
      acc[r][1] = _mm512_fmadd_ps(x, f1, acc[r][1]);
    }
  }
  const __m512 vlo = _mm512_set1_ps(lo), vhi = _mm512_set1_ps(hi);
  const __mmask16 m0 = width >= 16 ? __mmask16{0xffff} : static_cast<__mmask16>((1u << width) - 1);
  const __mmask16 m1 = width >= 32 ? __mmask16{0xffff} : width <= 16 ? __mmask16{0} : static_cast<__mmask16>((1u << (width - 16)) - 1);
  for (int r = 0; r < R; ++r) {
    float* o = out + r * out_stride;
    _mm512_mask_storeu_ps(o, m0, _mm512_min_ps(_mm512_max_ps(acc[r][0], vlo), vhi));
    _mm512_mask_storeu_ps(o + 16, m1, _mm512_min_ps(_mm512_max_ps(acc[r][1], vlo), vhi));
  }
}

void block(const float* a, int64_t stride, int64_t nrows, const float* panel, const float* bias, int64_t k, float* out,
           int64_t out_stride, int64_t width, float lo, float hi) {
  switch (nrows) {
    case 1: return rows_block<1>(a, stride, panel, bias, k, out, out_stride, width, lo, hi);
    case 2: return rows_block<2>(a, stride, panel, bias, k, out, out_stride, width, lo, hi);
    case 3: return rows_block<3>(a, stride, panel, bias, k, out, out_stride, width, lo, hi);
    case 4: return rows_block<4>(a, stride, panel, bias, k, out, out_stride, width, lo, hi);
    case 5: return rows_block<5>(a, stride, panel, bias, k, out, out_stride, width, lo, hi);
    case 6: return rows_block<6>(a, stride, panel, bias, k, out, out_stride, width, lo, hi);
    case 7: return rows_block<7>(a, stride, panel, bias, k, out, out_stride, width, lo, hi);
    default: return rows_block<8>(a, stride, panel, bias, k, out, out_stride, width, lo, hi);
  }
}
#else
void block(const float* a, int64_t stride, int64_t nrows, const float* panel, const float* bias, int64_t k, float* out,
           int64_t out_stride, int64_t width, float lo, float hi) {
  for (int64_t r = 0; r < nrows; ++r) {
    float acc[kF32Panel];
    for (int64_t j = 0; j < kF32Panel; ++j) acc[j] = bias[j];
    const float* ar = a + r * stride;
    for (int64_t i = 0; i < k; ++i) {
      const float x = ar[i];
      for (int64_t j = 0; j < kF32Panel; ++j) acc[j] = std::fma(x, panel[i * kF32Panel + j], acc[j]);
    }
    for (int64_t j = 0; j < width; ++j) out[r * out_stride + j] = std::min(std::max(acc[j], lo), hi);
  }
}
#endif

}  // namespace

void f32_gemm(const float* a, int64_t stride, int64_t rows, const PackedF32& w, float* out, int64_t out_stride, float lo, float hi,
              int64_t panel_begin, int64_t panel_end) {
  // Rows in chunks that stay in cache while every panel passes over them.
  constexpr int64_t kChunk = 12 * kF32Rows;
  for (int64_t c0 = 0; c0 < rows; c0 += kChunk) {
    const int64_t c1 = std::min(rows, c0 + kChunk);
    for (int64_t p = panel_begin; p < panel_end; ++p) {
      const float* panel = w.data.data() + p * w.k * kF32Panel;
      const float* bias = w.bias.data() + p * kF32Panel;
      const int64_t width = std::min(kF32Panel, w.n - p * kF32Panel);
      for (int64_t r0 = c0; r0 < c1; r0 += kF32Rows) {
        block(a + r0 * stride, stride, std::min(kF32Rows, c1 - r0), panel, bias, w.k, out + r0 * out_stride + p * kF32Panel, out_stride,
              width, lo, hi);
      }
    }
  }
}

}  // namespace etscope::runtime::xnnpack
