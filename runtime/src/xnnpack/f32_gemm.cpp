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
//
// With PF, input i of tap t also fetches the cache line at prefetch + 16 x (t x a.width + i)
// floats into the second-level cache: a block fetches 64 bytes per input, half of a panel.
template <int R, int NP, int V, bool PF = false>
[[gnu::noinline]] void rows_block(const Rows& a, const float* panel, int64_t panel_floats, const float* bias, float* out, int64_t out_stride, int64_t width, float lo,
                float hi, const float* prefetch = nullptr) {
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
      if constexpr (PF) _mm_prefetch(reinterpret_cast<const char*>(prefetch + (t * a.width + i) * 16), _MM_HINT_T1);
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

// R rows a fixed stride apart (a dense matrix's) by every panel of [panel, panel + npanels x
// panel_floats): XNNPACK's order for a GEMM, the rows' inputs staying in the first-level cache
// while the packing streams past them, and one call per block of rows. `width` outputs are left
// from the first panel on. Seven rows, as XNNPACK's 7x32 kernel: 14 sums, two filter registers
// and the broadcasts fit the 32 registers (eight rows spill).
template <int R>
[[gnu::noinline]] void dense_block(const float* a, int64_t stride, int64_t k, const float* panel, int64_t panel_floats, int64_t npanels, const float* bias,
                                   float* out, int64_t out_stride, int64_t width, float lo, float hi) {
  const float* row[R];
  for (int r = 0; r < R; ++r) row[r] = a + r * stride;
  const __m512 vlo = _mm512_set1_ps(lo), vhi = _mm512_set1_ps(hi);
  for (int64_t q = 0; q < npanels; ++q, panel += panel_floats, bias += kF32Panel, out += kF32Panel, width -= kF32Panel) {
    __m512 acc[R][2];
    const __m512 b0 = _mm512_loadu_ps(bias), b1 = _mm512_loadu_ps(bias + 16);
    for (int r = 0; r < R; ++r) {
      acc[r][0] = b0;
      acc[r][1] = b1;
    }
    for (int64_t i = 0; i < k; ++i) {
      const __m512 f0 = _mm512_loadu_ps(panel + i * kF32Panel), f1 = _mm512_loadu_ps(panel + i * kF32Panel + 16);
      for (int r = 0; r < R; ++r) {
        const __m512 x = _mm512_set1_ps(row[r][i]);
        acc[r][0] = _mm512_fmadd_ps(x, f0, acc[r][0]);
        acc[r][1] = _mm512_fmadd_ps(x, f1, acc[r][1]);
      }
    }
    // The bound first, as rows_block.
    const __mmask16 m0 = kernels::first_lanes(width), m1 = kernels::first_lanes(width - 16);
    for (int r = 0; r < R; ++r) {
      kernels::store_lanes(out + r * out_stride, m0, _mm512_min_ps(vhi, _mm512_max_ps(vlo, acc[r][0])));
      if (m1 != 0) kernels::store_lanes(out + r * out_stride + 16, m1, _mm512_min_ps(vhi, _mm512_max_ps(vlo, acc[r][1])));
    }
  }
}
constexpr int64_t kDenseRows = 7;

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

// R rows by one whole panel (32 outputs), fetching half a panel at `prefetch` meanwhile.
template <int R>
void prefetching_block(const Rows& a, const float* panel, int64_t panel_floats, const float* bias, float* out, int64_t out_stride, float lo, float hi,
                       const float* prefetch) {
  rows_block<R, 1, 2, true>(a, panel, panel_floats, bias, out, out_stride, kF32Panel, lo, hi, prefetch);
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

template <int R>
void prefetching_block(const Rows& a, const float* panel, int64_t panel_floats, const float* bias, float* out, int64_t out_stride, float lo, float hi,
                       const float*) {
  block<R>(a, R, panel, panel_floats, 1, bias, out, out_stride, kF32Panel, lo, hi);
}
#endif

}  // namespace

namespace {
// The GEMM over rows whose pointers chunk(c0, c1) gives (rows c0..c1 - 1's taps, row by row):
// rows in chunks that stay in cache while every panel passes over them, blocks of R rows one
// panel at a time, the chunk's last rows several panels at a time as soon as the blocks are done
// with those panels (still in cache). A layer's packing comes from memory (ResNet-50's: 100 MB
// for a run, none of it cached by the next): while the first two blocks run over a panel they
// fetch the next one into the second-level cache, half each (ResNet-50 and ResNet-18 5% faster,
// its 7x7 layers of 2048 inputs or outputs 8-12%).
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
    for (int64_t g = panel_begin; g < panel_end; g += step) {
      const int64_t g_end = std::min(g + step, panel_end);
      for (int64_t p = g; p < g_end; ++p) {
        const float* panel = w.data.data() + p * panel_floats;
        const float* bias = w.bias.data() + p * kF32Panel;
        for (int64_t r0 = c0; r0 < full_end; r0 += R) {
          const int64_t b = (r0 - c0) / R;
          if (b < 2 && p + 1 < panel_end) {  // not the last panel: 32 outputs
            prefetching_block<R>(rows_from(r0), panel, panel_floats, bias, out + r0 * out_stride + p * kF32Panel, out_stride, lo, hi,
                                 panel + panel_floats + b * panel_floats / 2);
          } else {
            block<R>(rows_from(r0), R, panel, panel_floats, 1, bias, out + r0 * out_stride + p * kF32Panel, out_stride, w.n - p * kF32Panel, lo, hi);
          }
        }
      }
      if (rest > 0) {
        block<R>(rows_from(full_end), rest, w.data.data() + g * panel_floats, panel_floats, g_end - g, w.bias.data() + g * kF32Panel,
                 out + full_end * out_stride + g * kF32Panel, out_stride, w.n - g * kF32Panel, lo, hi);
      }
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
#if defined(__AVX512F__)
  // A packing that stays in the second-level cache streams past blocks of 7 rows (XNNPACK's
  // order): 2-16% faster than the chunks of f32_gemm_rows at ResNet's and MobileNet's 1x1
  // convolutions of 16 to 256 inputs. Larger packings, which every block would read from the
  // third level, and the last rows keep the chunks. The sums are the same either way.
  constexpr uint64_t kDenseMaxPacking = 512u << 10;  // bytes: half the second-level cache of the machines measured
  const int64_t panel_floats = w.k * kF32Panel;
  if (static_cast<uint64_t>(panel_floats) * static_cast<uint64_t>(panel_end - panel_begin) * sizeof(float) <= kDenseMaxPacking) {
    const int64_t dense_rows = rows / kDenseRows * kDenseRows;
    for (int64_t r0 = 0; r0 < dense_rows; r0 += kDenseRows) {
      dense_block<kDenseRows>(a + r0 * stride, stride, w.k, w.data.data() + panel_begin * panel_floats, panel_floats, panel_end - panel_begin,
                              w.bias.data() + panel_begin * kF32Panel, out + r0 * out_stride + panel_begin * kF32Panel, out_stride,
                              w.n - panel_begin * kF32Panel, lo, hi);
    }
    a += dense_rows * stride;
    out += dense_rows * out_stride;
    rows -= dense_rows;
  }
#endif
  f32_gemm_rows([&](int64_t r0, int64_t r1, const float** at) {
        for (int64_t r = r0; r < r1; ++r) at[r - r0] = a + r * stride;
      },
      1, w.k, rows, w, out, out_stride, lo, hi, panel_begin, panel_end);
}

}  // namespace etscope::runtime::xnnpack
