// The packed float GEMM's kernel (f32_gemm.h): blocks of up to kF32Rows rows by one panel of 32 outputs.
#include "xnnpack/f32_gemm.h"
#include "kernels/util/lanes.h"

#include <cmath>
#if defined(__AVX512F__)
#include <immintrin.h>
#endif

namespace etscope::runtime::xnnpack {
namespace {

// The rows of a block: row r's tap t reads `width` floats at at[r * taps + t], or, with steps
// (rows a fixed distance apart per tap: neighbouring windows of a convolution), at
// at[t] + r * steps[t].
struct Rows {
  const float* const* at;
  int64_t taps, width;
  const int64_t* steps = nullptr;
  const float* row(int64_t r, int64_t t) const { return steps != nullptr ? at[t] + r * steps[t] : at[r * taps + t]; }
};

#if defined(__AVX512F__)
// R rows by NP panels of 32 outputs in V x R x NP registers (V = 2, or 1 for a single panel of
// at most 16 outputs): per input, V x NP filter loads and R broadcasts feed V x R x NP fused
// multiply-adds. Each output's sum still runs input by input; several panels at once give few
// rows enough independent chains to hide the latency.
template <int R, int NP, int V>
[[gnu::noinline]] void rows_block(const Rows& a, const float* panel, int64_t panel_floats, const float* bias, float* out, int64_t out_stride, int64_t width, float lo,
                float hi) {
  __m512 acc[R][NP][V];
  for (int q = 0; q < NP; ++q) {
    for (int v = 0; v < V; ++v) {
      const __m512 b = _mm512_loadu_ps(bias + q * kF32Panel + 16 * v);
      for (int r = 0; r < R; ++r) acc[r][q][v] = b;
    }
  }
  for (int64_t t = 0; t < a.taps; ++t) {
    const float* row[R];
    for (int r = 0; r < R; ++r) row[r] = a.row(r, t);
    const float* tp = panel + t * a.width * kF32Panel;
    for (int64_t i = 0; i < a.width; ++i) {
      __m512 f[NP][V];
      for (int q = 0; q < NP; ++q) {
        for (int v = 0; v < V; ++v) f[q][v] = _mm512_loadu_ps(tp + q * panel_floats + i * kF32Panel + 16 * v);
      }
      for (int r = 0; r < R; ++r) {
        const __m512 x = _mm512_set1_ps(row[r][i]);
        for (int q = 0; q < NP; ++q) {
          for (int v = 0; v < V; ++v) acc[r][q][v] = _mm512_fmadd_ps(x, f[q][v], acc[r][q][v]);
        }
      }
    }
  }
  const __m512 vlo = _mm512_set1_ps(lo), vhi = _mm512_set1_ps(hi);
  for (int q = 0; q < NP; ++q) {
    for (int v = 0; v < V; ++v) {
      const int64_t w = width - q * kF32Panel - 16 * v;  // outputs left from this register on
      const __mmask16 m = kernels::first_lanes(w);
      for (int r = 0; r < R; ++r) {
        // The bound first, as XNNPACK: max and min return their second operand when either is
        // NaN, so a NaN sum stays NaN (as the scalar loop's std::max and std::min keep it).
        const __m512 y = _mm512_min_ps(vhi, _mm512_max_ps(vlo, acc[r][q][v]));
        if (w >= 16) {
          _mm512_storeu_ps(out + r * out_stride + q * kF32Panel + 16 * v, y);
        } else {
          _mm512_mask_storeu_ps(out + r * out_stride + q * kF32Panel + 16 * v, m, y);
        }
      }
    }
  }
}

// Panels a block of `nrows` rows takes at once: registers for the sums of up to about 20.
constexpr int64_t panels_for(int64_t nrows) { return nrows <= 1 ? 4 : nrows <= 2 ? 3 : nrows <= 5 ? 2 : 1; }

template <int R, int NP>
void block_any(int64_t nrows, int64_t npanels, const Rows& a, const float* panel, int64_t panel_floats, const float* bias, float* out, int64_t out_stride,
               int64_t width, float lo, float hi) {
  if constexpr (R > 1) {
    if (nrows < R) return block_any<R - 1, panels_for(R - 1)>(nrows, npanels, a, panel, panel_floats, bias, out, out_stride, width, lo, hi);
  }
  if constexpr (NP > 1) {
    if (npanels < NP) return block_any<R, NP - 1>(nrows, npanels, a, panel, panel_floats, bias, out, out_stride, width, lo, hi);
  }
  if constexpr (NP == 1) {
    if (width <= 16) return rows_block<R, 1, 1>(a, panel, panel_floats, bias, out, out_stride, width, lo, hi);
  }
  rows_block<R, NP, 2>(a, panel, panel_floats, bias, out, out_stride, width, lo, hi);
}

// `nrows` rows (1..R) by `npanels` panels (1..panels_for(nrows)).
template <int R>
void block(const Rows& a, int64_t nrows, const float* panel, int64_t panel_floats, int64_t npanels, const float* bias, float* out, int64_t out_stride,
           int64_t width, float lo, float hi) {
  static_assert(R <= kF32Rows);
  block_any<R, panels_for(R)>(nrows, npanels, a, panel, panel_floats, bias, out, out_stride, width, lo, hi);
}
#else
constexpr int64_t panels_for(int64_t) { return 1; }

template <int R>
void block(const Rows& a, int64_t nrows, const float* panel, int64_t, int64_t, const float* bias, float* out, int64_t out_stride, int64_t width, float lo,
           float hi) {
  width = std::min(width, kF32Panel);
  for (int64_t r = 0; r < nrows; ++r) {
    float acc[kF32Panel];
    for (int64_t j = 0; j < kF32Panel; ++j) acc[j] = bias[j];
    for (int64_t t = 0; t < a.taps; ++t) {
      const float* ar = a.row(r, t);
      const float* tp = panel + t * a.width * kF32Panel;
      for (int64_t i = 0; i < a.width; ++i) {
        const float x = ar[i];
        for (int64_t j = 0; j < kF32Panel; ++j) acc[j] = std::fma(x, tp[i * kF32Panel + j], acc[j]);
      }
    }
    for (int64_t j = 0; j < width; ++j) out[r * out_stride + j] = std::min(std::max(acc[j], lo), hi);
  }
}
#endif

}  // namespace

namespace {
// The GEMM over rows whose pointers chunk(c0, c1) gives (rows c0..c1 - 1's taps, row by row):
// rows in chunks that stay in cache while every panel passes over them, blocks of R rows one
// panel at a time, then the chunk's last rows several panels at a time.
template <int R, typename Chunk>
void gemm_chunks_of(Chunk chunk_rows, int64_t taps, int64_t width, int64_t rows, const PackedF32& w, float* out, int64_t out_stride, float lo, float hi,
                    int64_t panel_begin, int64_t panel_end) {
  const int64_t panel_floats = w.k * kF32Panel;
  const int64_t chunk = std::max<int64_t>(R, std::min<int64_t>(12 * R, kF32MaxRowPointers / taps / R * R));
  for (int64_t c0 = 0; c0 < rows; c0 += chunk) {
    const int64_t c1 = std::min(rows, c0 + chunk);
    const float* const* at = chunk_rows(c0, c1);
    const int64_t rest = (c1 - c0) % R, full_end = c1 - rest;
    const int64_t step = rest > 0 ? panels_for(rest) : 1;
    auto rows_from = [&](int64_t r) { return Rows{at + (r - c0) * taps, taps, width}; };
    for (int64_t p = panel_begin; p < panel_end; ++p) {
      const float* panel = w.data.data() + p * panel_floats;
      const float* bias = w.bias.data() + p * kF32Panel;
      for (int64_t r0 = c0; r0 < full_end; r0 += R) {
        block<R>(rows_from(r0), R, panel, panel_floats, 1, bias, out + r0 * out_stride + p * kF32Panel, out_stride, w.n - p * kF32Panel, lo, hi);
      }
    }
    if (rest == 0) continue;
    for (int64_t p = panel_begin; p < panel_end; p += step) {
      block<R>(rows_from(full_end), rest, w.data.data() + p * panel_floats, panel_floats, std::min(step, panel_end - p), w.bias.data() + p * kF32Panel,
               out + full_end * out_stride + p * kF32Panel, out_stride, w.n - p * kF32Panel, lo, hi);
    }
  }
}

// A panel's filter of more than 256 inputs (32 KiB) leaves the first-level cache, and every
// block of rows streams it from the second again: blocks of 10 rows then, fewer passes for the
// same sums (EDSR's 64-channel 3x3 convolutions 5% faster), and 8 otherwise (MobileNetV2's 1x1
// convolutions were 5% slower with 10).
template <typename Chunk>
void gemm_chunks(Chunk chunk_rows, int64_t taps, int64_t width, int64_t rows, const PackedF32& w, float* out, int64_t out_stride, float lo, float hi,
                 int64_t panel_begin, int64_t panel_end) {
  if (w.k > 256) return gemm_chunks_of<kF32Rows>(chunk_rows, taps, width, rows, w, out, out_stride, lo, hi, panel_begin, panel_end);
  gemm_chunks_of<8>(chunk_rows, taps, width, rows, w, out, out_stride, lo, hi, panel_begin, panel_end);
}
}  // namespace

void f32_gemm_rows(const RowPointers& rows_of, int64_t taps, int64_t width, int64_t rows, const PackedF32& w, float* out, int64_t out_stride, float lo,
                   float hi, int64_t panel_begin, int64_t panel_end) {
  // A chunk's row pointers are gathered once, on the stack.
  const float* at[kF32MaxRowPointers];
  gemm_chunks(
      [&](int64_t c0, int64_t c1) {
        rows_of(c0, c1, at);
        return static_cast<const float* const*>(at);
      },
      taps, width, rows, w, out, out_stride, lo, hi, panel_begin, panel_end);
}

void f32_gemm_indirect(const float* const* table, int64_t taps, int64_t width, int64_t rows, const PackedF32& w, float* out, int64_t out_stride,
                       float lo, float hi, int64_t panel_begin, int64_t panel_end) {
  gemm_chunks([&](int64_t c0, int64_t) { return table + c0 * taps; }, taps, width, rows, w, out, out_stride, lo, hi, panel_begin, panel_end);
}

void f32_gemm_strided(const float* const* first, const int64_t* steps, int64_t taps, int64_t width, int64_t rows, const PackedF32& w, float* out,
                      int64_t out_stride, float lo, float hi, int64_t panel_begin, int64_t panel_end) {
  constexpr int64_t kRows = 8;
  // Blocks of kRows rows, each over every panel while its rows are in cache; the last rows
  // several panels at a time.
  const int64_t panel_floats = w.k * kF32Panel;
  const float* at[kF32MaxTaps];
  auto rows_from = [&](int64_t r0) {
    for (int64_t t = 0; t < taps; ++t) at[t] = first[t] + r0 * steps[t];
    return Rows{at, taps, width, steps};
  };
  const int64_t rest = rows % kRows, full_end = rows - rest;
  for (int64_t r0 = 0; r0 < full_end; r0 += kRows) {
    const Rows a = rows_from(r0);
    for (int64_t p = panel_begin; p < panel_end; ++p) {
      block<kRows>(a, kRows, w.data.data() + p * panel_floats, panel_floats, 1, w.bias.data() + p * kF32Panel, out + r0 * out_stride + p * kF32Panel,
                   out_stride, w.n - p * kF32Panel, lo, hi);
    }
  }
  if (rest == 0) return;
  const Rows a = rows_from(full_end);
  const int64_t step = panels_for(rest);
  for (int64_t p = panel_begin; p < panel_end; p += step) {
    block<kRows>(a, rest, w.data.data() + p * panel_floats, panel_floats, std::min(step, panel_end - p), w.bias.data() + p * kF32Panel,
                 out + full_end * out_stride + p * kF32Panel, out_stride, w.n - p * kF32Panel, lo, hi);
  }
}

void f32_gemm(const float* a, int64_t stride, int64_t rows, const PackedF32& w, float* out, int64_t out_stride, float lo, float hi,
              int64_t panel_begin, int64_t panel_end) {
  f32_gemm_rows([&](int64_t r0, int64_t r1, const float** at) {
        for (int64_t r = r0; r < r1; ++r) at[r - r0] = a + r * stride;
      },
      1, w.k, rows, w, out, out_stride, lo, hi, panel_begin, panel_end);
}

}  // namespace etscope::runtime::xnnpack
