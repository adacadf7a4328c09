// Float GEMM with filters packed at load, for XNNPACK's f32 convolutions and fully connected
// layers (float_nodes.cpp), as XNNPACK runs them: the filter and bias packed once into panels of
// kF32Panel outputs ([k][kF32Panel] floats per panel, the last panel padded with zeros), each
// output the bias plus the products summed input by input with fused multiply-adds, clamped to
// the node's range as it is stored. AVX-512 where the build targets it, a plain loop elsewhere.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <vector>

#include "kernels/util/aligned.h"

namespace etscope::runtime::xnnpack {

constexpr int64_t kF32Panel = 32;  // outputs per panel
constexpr int64_t kF32Rows = 10;   // rows per block of the kernel, at most

struct PackedF32 {
  int64_t k = 0, n = 0, panels = 0;
  kernels::aligned_vector<float> data;  // panels x k x kF32Panel
  kernels::aligned_vector<float> bias;  // panels x kF32Panel
};

/// Floats a packing of an n x k filter takes.
inline uint64_t packed_f32_floats(uint64_t n, uint64_t k) { return (n + kF32Panel) * (k + 1); }

/// Packs an n x k filter whose element (output o, input i) is filter(o, i), with bias(o).
template <typename F, typename B>
void pack_f32(PackedF32& p, int64_t n, int64_t k, F filter, B bias) {
  p.k = k;
  p.n = n;
  p.panels = (n + kF32Panel - 1) / kF32Panel;
  p.data.assign(static_cast<size_t>(p.panels * k * kF32Panel), 0.0f);
  p.bias.assign(static_cast<size_t>(p.panels * kF32Panel), 0.0f);
  for (int64_t o = 0; o < n; ++o) {
    float* panel = p.data.data() + (o / kF32Panel) * k * kF32Panel;
    for (int64_t i = 0; i < k; ++i) panel[i * kF32Panel + o % kF32Panel] = filter(o, i);
    p.bias[static_cast<size_t>(o)] = bias(o);
  }
}

/// Taps (row pointers per row) a GEMM over rows given by pointers takes at most, and the row
/// pointers it gathers per chunk of rows, on its stack.
constexpr int64_t kF32MaxTaps = 512;
constexpr int64_t kF32MaxRowPointers = kF32MaxTaps * kF32Rows;

/// Fills at[(r - r0) * taps + t] with the floats row r reads for tap t, for rows [r0, r1).
using RowPointers = std::function<void(int64_t r0, int64_t r1, const float** at)>;

/// The GEMM of a matrix whose rows are given by pointers (an im2col matrix left in its image):
/// row r's inputs are `taps` runs of `width` floats (taps x width = the filter's k, in the
/// filter's order), run t at the pointer rows_of gives; otherwise as f32_gemm, the same sums in
/// the same order. taps <= kF32MaxTaps.
void f32_gemm_rows(const RowPointers& rows_of, int64_t taps, int64_t width, int64_t rows, const PackedF32& w, float* out, int64_t out_stride, float lo,
                   float hi, int64_t panel_begin, int64_t panel_end);

/// As f32_gemm_rows with every row's pointers given at once (an indirection buffer built once
/// and kept, as XNNPACK's): row r's tap t reads `width` floats at table[r * taps + t].
void f32_gemm_indirect(const float* const* table, int64_t taps, int64_t width, int64_t rows, const PackedF32& w, float* out, int64_t out_stride,
                       float lo, float hi, int64_t panel_begin, int64_t panel_end);

/// As f32_gemm_rows for rows a fixed distance apart per tap (neighbouring windows of a
/// convolution): row r's tap t reads `width` floats at first[t] + r * steps[t] (a step of 0: a
/// tap every row reads at the same place, a zero row). taps <= kF32MaxTaps.
void f32_gemm_strided(const float* const* first, const int64_t* steps, int64_t taps, int64_t width, int64_t rows, const PackedF32& w, float* out,
                      int64_t out_stride, float lo, float hi, int64_t panel_begin, int64_t panel_end);

/// out[r * out_stride + o] = clamp(bias[o] + sum_i a[r * stride + i] * filter(o, i), lo, hi) for
/// `rows` rows and the outputs o of panels [panel_begin, panel_end) of the packing.
void f32_gemm(const float* a, int64_t stride, int64_t rows, const PackedF32& w, float* out, int64_t out_stride, float lo, float hi,
              int64_t panel_begin, int64_t panel_end);

}  // namespace etscope::runtime::xnnpack
