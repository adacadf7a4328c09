// XNNPACK nodes computed on floats (quantized values are held as the floats they stand for and
// rounded to their grid after the node, DelegateState::quantize_outputs). Each function applies
// its node's output range (a fused activation). Sections: [elementwise] [convolution and matrix
// products] [pooling] [data movement]
//
// Softmax and pooling stay apart from the ATen kernels' (kernels/op_reduce.cpp, op_pool.cpp):
// those walk NCHW planes and start a row's maximum at -inf, where XNNPACK starts at its first
// element (a leading NaN then wins), and the results must stay XNNPACK's bit for bit.
#include <cmath>
#include <cstring>
#include <limits>
#if defined(__AVX512F__)
#include <immintrin.h>
#endif

#include "kernels/util/gemm.h"
#include "kernels/util/lanes.h"
#include "kernels/util/permute_util.h"
#include "xnnpack/elementwise_ops.h"
#include "xnnpack/nhwc_windows.h"
#include "xnnpack/node_table.h"

namespace etscope::runtime::xnnpack {

// ---------------------------------------------------------------------------------------------
// [elementwise]

void apply_output_range(const DelegateState& m, const Node& n) {
  if (unbounded_range(n)) return;
  const float lo = n.output_min, hi = n.output_max;
  float* out = m.output(n);
  const int64_t count = m.out_shape(n).numel();
  for (int64_t i = 0; i < count; ++i) out[i] = clampf(out[i], lo, hi);
}

void run_clamp(DelegateState& m, const Node& n) {
  const float* x = m.input(n, 0);
  float* out = m.output(n);
  const int64_t count = m.out_shape(n).numel();
  for (int64_t i = 0; i < count; ++i) out[i] = clampf(x[i], n.output_min, n.output_max);
}

// Copy, Convert (rounded to its output's grid afterwards) and Reshape.
void run_copy(DelegateState& m, const Node& n) {
  const float* x = m.input(n, 0);
  float* out = m.output(n);
  if (out != x) std::memmove(out, x, static_cast<size_t>(m.out_shape(n).numel()) * 4);
  apply_output_range(m, n);
}


// ---------------------------------------------------------------------------------------------
// [convolution and matrix products]

namespace {

// What a convolution node reads and writes: NHWC input x (H x W x C per image), filter w,
// bias (null without one), output (OH x OW x CO per image).
struct ConvOperands {
  const Shape& sx;
  const Shape& so;
  const float* x;
  float* out;
  const float* w;
  const float* bias;
  int64_t H, W, C, OH, OW, CO;
};

// Named locals for a ConvOperands' fields (sx, so, x, out, w, bias, H, W, C, OH, OW, CO) rather
// than a structured binding: the convolutions' lambdas use them, and clang before 16 cannot
// capture a structured binding.
#define ETSCOPE_CONV_OPERANDS(o)                                                       \
  [[maybe_unused]] const Shape &sx = (o).sx, &so = (o).so;                             \
  [[maybe_unused]] const float *x = (o).x, *w = (o).w, *bias = (o).bias;               \
  [[maybe_unused]] float* out = (o).out;                                               \
  [[maybe_unused]] const int64_t H = (o).H, W = (o).W, C = (o).C, OH = (o).OH, OW = (o).OW, CO = (o).CO

ConvOperands conv_operands(const DelegateState& m, const Node& n) {
  const Shape& sx = m.in_shape(n, 0);
  const Shape& so = m.out_shape(n);
  return {sx, so, m.input(n, 0), m.output(n), m.input(n, 1), n.inputs[2] >= 0 ? m.input(n, 2) : nullptr,
          sx.d[1], sx.d[2], sx.d[3], so.d[1], so.d[2], so.d[3]};
}

}  // namespace

bool DelegateState::packed_f32_layer(const Node& n) const {
  // A depthwise convolution of one input channel (a channel multiplier on a mono image) is an
  // ordinary one, as XNNPACK runs it: the same sums, its filter read in its own layout.
  const bool mono_depthwise = n.kind == NodeKind::kDepthwiseConv2d && n.conv.groups == 1;
  if ((n.kind != NodeKind::kConv2d && n.kind != NodeKind::kFullyConnected && n.kind != NodeKind::kConvTranspose2d && !mono_depthwise) ||
      n.inputs.size() < 3 || n.outputs.size() != 1 || n.inputs[1] < 0) {
    return false;
  }
  // A deconvolution is packed per output phase (deconv_phases); strides of few phases and windows
  // of a row pointer list's taps.
  if (n.kind == NodeKind::kConvTranspose2d &&
      (uint64_t{n.conv.stride_h} * n.conv.stride_w > kMaxDeconvPhases || uint64_t{n.conv.kernel_h} * n.conv.kernel_w > kF32MaxTaps)) {
    return false;
  }
  const xnn::TensorValue& w = value(n.inputs[1]);
  if (value(n.inputs[0]).type != ElementType::kF32 || value(n.outputs[0]).type != ElementType::kF32 || w.type != ElementType::kF32 ||
      !w.is_constant) {
    return false;
  }
  return n.inputs[2] < 0 || (value(n.inputs[2]).type == ElementType::kF32 && value(n.inputs[2]).is_constant);
}

Status DelegateState::plan_f32(size_t i) {
  const Node& n = graph.nodes[i];
  const xnn::TensorValue& wv = value(n.inputs[1]);
  auto read = [](const xnn::TensorValue& v, uint64_t k) {
    float f;
    std::memcpy(&f, v.constant.data() + 4 * k, 4);
    return f;
  };
  const xnn::TensorValue* bv = n.inputs[2] >= 0 ? &value(n.inputs[2]) : nullptr;
  std::vector<PackedF32> packs;
  if (n.kind == NodeKind::kFullyConnected) {
    const bool t = (n.flags & kFlagTransposeB) != 0;
    const int64_t k = t ? wv.shape.at(0) : wv.shape.at(1), nout = t ? wv.shape.at(1) : wv.shape.at(0);
    packs.resize(1);
    pack_f32(
        packs[0], nout, k, [&](int64_t o, int64_t j) { return read(wv, static_cast<uint64_t>(t ? j * nout + o : o * k + j)); },
        [&](int64_t o) { return bv ? read(*bv, static_cast<uint64_t>(o)) : 0.0f; });
  } else if (n.kind == NodeKind::kConvTranspose2d) {
    // Per group and output phase, the filter's taps that reach the phase's pixels (deconv_taps),
    // in XNNPACK's order.
    const xnn::ConvParams& c = n.conv;
    const int64_t og = c.group_out, cg = c.group_in, KH = c.kernel_h, KW = c.kernel_w;
    packs.resize(static_cast<size_t>(c.groups) * c.stride_h * c.stride_w);
    for (uint32_t g = 0; g < c.groups; ++g) {
      for (uint32_t py = 0; py < c.stride_h; ++py) {
        for (uint32_t px = 0; px < c.stride_w; ++px) {
          int64_t ky[kF32MaxTaps], kx[kF32MaxTaps];
          const int64_t ny = deconv_taps(py, c.padding[0], KH, c.dilation_h, c.stride_h, ky);
          const int64_t nx = deconv_taps(px, c.padding[3], KW, c.dilation_w, c.stride_w, kx);
          pack_f32(
              packs[(g * c.stride_h + py) * c.stride_w + px], og, ny * nx * cg,
              [&](int64_t o, int64_t j) {
                const int64_t t = j / cg, ci = j % cg;
                return read(wv, static_cast<uint64_t>((((g * og + o) * KH + ky[t / nx]) * KW + kx[t % nx]) * cg + ci));
              },
              [&](int64_t o) { return bv ? read(*bv, static_cast<uint64_t>(g * og + o)) : 0.0f; });
        }
      }
    }
  } else {
    const xnn::ConvParams& c = n.conv;
    const int64_t og = c.group_out, kk = int64_t{c.kernel_h} * c.kernel_w * c.group_in;
    packs.resize(c.groups);
    const bool depthwise = n.kind == NodeKind::kDepthwiseConv2d;  // one group: [1, KH, KW, outputs]
    for (uint32_t g = 0; g < c.groups; ++g) {
      pack_f32(
          packs[g], og, kk,
          [&](int64_t o, int64_t j) { return read(wv, static_cast<uint64_t>(depthwise ? j * og + o : (g * og + o) * kk + j)); },
          [&](int64_t o) { return bv ? read(*bv, static_cast<uint64_t>(g * og + o)) : 0.0f; });
    }
  }
  f32_of_node[i] = static_cast<int32_t>(f32_layers.size());
  f32_layers.push_back(std::move(packs));
  return ok_status();
}

uint64_t DelegateState::conv_rows_size(const Node& n) const {
  if ((n.kind != NodeKind::kConv2d && n.kind != NodeKind::kDepthwiseConv2d) || !packed_f32_layer(n)) return 0;
  const xnn::ConvParams& c = n.conv;
  if (pointwise_conv(c) || c.groups != 1) return 0;
  // run_conv2d's conditions for reading windows in place: a pointer per tap, or for few channels
  // per kernel row (pixels x taps <= the im2col size, checked for overflow with the node)
  const int64_t C = in_shape(n, 0).d[3];
  const uint64_t taps = C >= 8 ? uint64_t{c.kernel_h} * c.kernel_w : c.dilation_w == 1 ? c.kernel_h : 0;
  if (taps > kF32MaxTaps) return 0;
  return static_cast<uint64_t>(out_shape(n).d[1] * out_shape(n).d[2]) * taps;
}

// f32_gemm on the method's threads: blocks of rows, or of panels when there are few rows.
void packed_f32_gemm(const DelegateState& m, const float* a, int64_t stride, int64_t rows, const PackedF32& w, float* out,
                     int64_t out_stride, float lo, float hi) {
  for_blocks(worth_splitting(m.parallel, rows * w.n * w.k), rows, 4 * kF32Rows, w.panels, 1, [&](int64_t r0, int64_t r1, int64_t p0, int64_t p1) {
    f32_gemm(a + r0 * stride, stride, r1 - r0, w, out + r0 * out_stride, out_stride, lo, hi, p0, p1);
  });
}

// A packed convolution's GEMM over one image's output pixels on the method's threads, its rows
// read where they are (f32_gemm_rows): pointers(pb, pe, at) writes output pixels pb..pe - 1's
// `taps` row pointers each (each `width` floats) from `at` on.
template <typename Pointers>
void gemm_over_pixels(const DelegateState& m, int64_t pixels, int64_t taps, int64_t width, const PackedF32& w0, float* dst, int64_t CO, float lo,
                      float hi, Pointers pointers) {
  for_blocks(worth_splitting(m.parallel, pixels * w0.n * w0.k), pixels, 4 * kF32Rows, w0.panels, 1, [&](int64_t p0, int64_t p1, int64_t q0, int64_t q1) {
    auto rows_of = [&](int64_t r0, int64_t r1, const float** at) { pointers(p0 + r0, p0 + r1, at); };
    f32_gemm_rows(rows_of, taps, width, p1 - p0, w0, dst + p0 * CO, CO, lo, hi, q0, q1);
  });
}

// The same from row pointers built before (f32_gemm_indirect): output pixel p's taps at
// table[p * taps ...].
void gemm_over_table(const DelegateState& m, const float* const* table, int64_t pixels, int64_t taps, int64_t width, const PackedF32& w0, float* dst,
                     int64_t CO, float lo, float hi) {
  for_blocks(worth_splitting(m.parallel, pixels * w0.n * w0.k), pixels, 4 * kF32Rows, w0.panels, 1, [&](int64_t p0, int64_t p1, int64_t q0, int64_t q1) {
    f32_gemm_indirect(table + p0 * taps, taps, width, p1 - p0, w0, dst + p0 * CO, CO, lo, hi, q0, q1);
  });
}

void run_conv2d(DelegateState& m, const Node& n) {
  const xnn::ConvParams& c = n.conv;
  const float lo = n.output_min, hi = n.output_max;
  const ConvOperands ops = conv_operands(m, n);
  ETSCOPE_CONV_OPERANDS(ops);
  const int64_t kk = int64_t{c.kernel_h} * c.kernel_w * c.group_in, pixels = OH * OW;
  const int64_t og = c.group_out;
  float* col = m.scratch.data();
  float* tmp = col + pixels * kk;
  const bool direct = pointwise_conv(c);
  if (const int32_t f = m.f32_of_node[static_cast<size_t>(&n - m.graph.nodes.data())]; f >= 0) {
    // Filter and bias packed at load; each group's outputs stored in place, clamped.
    const std::vector<PackedF32>& packs = m.f32_layers[static_cast<size_t>(f)];
    const int64_t taps = int64_t{c.kernel_h} * c.kernel_w;
    if (!direct && c.groups == 1 && C >= 8 && taps <= kF32MaxTaps) {
      // One group of 8 channels or more: the GEMM reads each tap's C floats where they are in the image (a zero row
      // for taps outside it) instead of an im2col copy; the same sums in the same order.
      float* zeros = m.scratch.data();
      std::fill(zeros, zeros + C, 0.0f);
      int64_t tap_offset[kF32MaxTaps];  // floats from a window's first tap to each
      window_tap_offsets(c, W, C, tap_offset);
      for (int64_t b = 0; b < sx.d[0]; ++b) {
        const float* img = x + b * H * W * C;
        // Pixels in order (no division per pixel); a window wholly inside the image takes its
        // taps' fixed offsets from its first, one at the border checks each tap.
        const int64_t span_h = int64_t{c.kernel_h - 1} * c.dilation_h, span_w = int64_t{c.kernel_w - 1} * c.dilation_w;
        auto pointers = [&](int64_t pb, int64_t pe, const float** at) {
          int64_t oy = pb / OW, ox = pb % OW;
          for (int64_t p = pb; p < pe; ++p) {
            const int64_t iy0 = oy * c.stride_h - c.padding[0], ix0 = ox * c.stride_w - c.padding[3];
            if (iy0 >= 0 && iy0 + span_h < H && ix0 >= 0 && ix0 + span_w < W) {
              const float* first = img + (iy0 * W + ix0) * C;
              for (int64_t t = 0; t < taps; ++t) at[t] = first + tap_offset[t];
              at += taps;
            } else {
              for (uint32_t ky = 0; ky < c.kernel_h; ++ky) {
                const int64_t iy = iy0 + int64_t{ky} * c.dilation_h;
                for (uint32_t kx = 0; kx < c.kernel_w; ++kx) {
                  const int64_t ix = ix0 + int64_t{kx} * c.dilation_w;
                  *at++ = iy >= 0 && iy < H && ix >= 0 && ix < W ? img + (iy * W + ix) * C : zeros;
                }
              }
            }
            if (++ox == OW) {
              ox = 0;
              ++oy;
            }
          }
        };
        DelegateState::ConvRows& kept = m.conv_rows[static_cast<size_t>(&n - m.graph.nodes.data())];
        if (static_cast<uint64_t>(pixels * taps) > kept.at.size()) {  // not sized at load: gathered as it goes
          gemm_over_pixels(m, pixels, taps, C, packs[0], out + b * pixels * CO, CO, lo, hi, pointers);
          continue;
        }
        if (kept.renew(img, zeros, H, W, OH, OW)) pointers(0, pixels, kept.at.data());
        gemm_over_table(m, kept.at.data(), pixels, taps, C, packs[0], out + b * pixels * CO, CO, lo, hi);
      }
      return;
    }
    // Few channels (an RGB stem): a kernel row of a window is kernel_w * C contiguous floats of
    // the image when the window lies inside the image's width, so the GEMM reads it there, a row
    // pointer per kernel row, instead of an im2col matrix of every window (a 7x7 stem's is 49
    // times the image). Kernel rows above or below the image read a zero row; those of the few
    // output columns whose window crosses the left or right edge are copied with their zeros
    // into the scratch first. Same sums in the same order as an im2col matrix's.
    const int64_t krow = int64_t{c.kernel_w} * C, pl = c.padding[3], pt = c.padding[0];
    int64_t ox_lo = 0, ox_hi = OW;  // output columns whose window lies inside the width
    while (ox_lo < OW && ox_lo * c.stride_w - pl < 0) ++ox_lo;
    while (ox_hi > ox_lo && (ox_hi - 1) * c.stride_w - pl + c.kernel_w > W) --ox_hi;
    const int64_t edge_cols = ox_lo + (OW - ox_hi);
    // Narrow images (a spectrogram's few columns: rows of few windows) in one GEMM over every
    // window instead, each kernel row read in a copy of the image with its padding, from row
    // pointers kept from run to run (conv_rows).
    const int64_t kh = c.kernel_h;
    const int64_t PH = (OH - 1) * c.stride_h + (kh - 1) * c.dilation_h + 1, PW = (OW - 1) * c.stride_w + c.kernel_w;  // padded extents read
    // (each below the padded input's extent, at most about 2^33: their product may not fit)
    auto fits_in = [](int64_t rows, int64_t row, size_t floats) { return static_cast<uint64_t>(row) <= floats && static_cast<uint64_t>(rows) <= floats / static_cast<uint64_t>(std::max<int64_t>(row, 1)); };
    DelegateState::ConvRows& kept = m.conv_rows[static_cast<size_t>(&n - m.graph.nodes.data())];
    if (!direct && c.groups == 1 && C < 8 && c.dilation_w == 1 && ox_hi - ox_lo < 4 * kF32Rows && fits_in(PH, PW * C, m.scratch.size()) &&
        static_cast<uint64_t>(pixels * kh) <= kept.at.size()) {
      float* padded = m.scratch.data();
      if (kept.renew(nullptr, padded, H, W, OH, OW)) {  // (any image: it is copied)
        const float** at = kept.at.data();
        for (int64_t oy = 0; oy < OH; ++oy) {
          for (int64_t ox = 0; ox < OW; ++ox) {
            for (int64_t ky = 0; ky < kh; ++ky) *at++ = padded + ((oy * c.stride_h + ky * c.dilation_h) * PW + ox * c.stride_w) * C;
          }
        }
      }
      for (int64_t b = 0; b < sx.d[0]; ++b) {
        const float* img = x + b * H * W * C;
        for (int64_t py = 0; py < PH; ++py) {
          float* row = padded + py * PW * C;
          const int64_t iy = py - pt;
          const int64_t ix0 = std::clamp<int64_t>(pl, 0, PW), ix1 = std::clamp<int64_t>(pl + W, ix0, PW);  // columns the image fills
          if (iy < 0 || iy >= H) {
            std::fill(row, row + PW * C, 0.0f);
            continue;
          }
          std::fill(row, row + ix0 * C, 0.0f);
          std::copy(img + (iy * W + ix0 - pl) * C, img + (iy * W + ix1 - pl) * C, row + ix0 * C);
          std::fill(row + ix1 * C, row + PW * C, 0.0f);
        }
        gemm_over_table(m, kept.at.data(), pixels, kh, krow, packs[0], out + b * pixels * CO, CO, lo, hi);
      }
      return;
    }
    if (!direct && c.groups == 1 && C < 8 && c.dilation_w == 1 && int64_t{c.kernel_h} <= kF32MaxTaps &&
        (OH * edge_cols * c.kernel_h + 1) * krow <= static_cast<int64_t>(m.scratch.size())) {
      float* zeros = m.scratch.data();
      float* edges = zeros + krow;  // per output row, edge column and kernel row: krow floats
      std::fill(zeros, zeros + krow, 0.0f);
      auto edge_rows = [&](int64_t oy, int64_t ox) {
        const int64_t e = ox < ox_lo ? ox : ox_lo + (ox - ox_hi);
        return edges + (oy * edge_cols + e) * c.kernel_h * krow;
      };
      for (int64_t b = 0; b < sx.d[0]; ++b) {
        const float* img = x + b * H * W * C;
        auto copy_edge = [&](int64_t oy, int64_t ox) {
          float* rows = edge_rows(oy, ox);
          const int64_t ix0 = ox * c.stride_w - pl;
          for (uint32_t ky = 0; ky < c.kernel_h; ++ky) {
            const int64_t iy = oy * c.stride_h - pt + int64_t{ky} * c.dilation_h;
            if (iy < 0 || iy >= H) continue;  // read from the zero row
            for (uint32_t kx = 0; kx < c.kernel_w; ++kx) {
              const int64_t ix = ix0 + kx;
              float* cell = rows + ky * krow + kx * C;
              if (ix >= 0 && ix < W) {
                std::copy_n(img + (iy * W + ix) * C, C, cell);
              } else {
                std::fill(cell, cell + C, 0.0f);
              }
            }
          }
        };
        for (int64_t oy = 0; oy < OH; ++oy) {
          for (int64_t ox = 0; ox < ox_lo; ++ox) copy_edge(oy, ox);
          for (int64_t ox = ox_hi; ox < OW; ++ox) copy_edge(oy, ox);
        }
        // Output row by output row, on the method's threads: the windows inside the image's width
        // are neighbours a stride apart (f32_gemm_strided, no pointer per window), each kernel
        // row in the image or the zero row; then the edge windows, from their copies.
        const PackedF32& w0 = packs[0];
        float* dst = out + b * pixels * CO;
        for_ranges(worth_splitting(m.parallel, pixels * w0.n * w0.k), OH, 1, [&](int64_t y0, int64_t y1) {
          const float* first[kF32MaxTaps];
          int64_t steps[kF32MaxTaps];
          const int64_t kh = c.kernel_h;
          for (int64_t oy = y0; oy < y1; ++oy) {
            float* orow = dst + oy * OW * CO;
            for (int64_t ky = 0; ky < kh; ++ky) {
              const int64_t iy = oy * c.stride_h - pt + ky * c.dilation_h;
              const bool in = iy >= 0 && iy < H;
              first[ky] = in && ox_hi > ox_lo ? img + (iy * W + ox_lo * c.stride_w - pl) * C : zeros;
              steps[ky] = in ? c.stride_w * C : 0;
            }
            if (ox_hi > ox_lo) f32_gemm_strided(first, steps, kh, krow, ox_hi - ox_lo, w0, orow + ox_lo * CO, CO, lo, hi, 0, w0.panels);
          }
          // An edge column's windows over the range's rows together (a row holds one or two).
          auto edge_column = [&](int64_t ox) {
            f32_gemm_rows([&](int64_t r0, int64_t r1, const float** at) {
                  for (int64_t r = r0; r < r1; ++r) {
                    const int64_t oy = y0 + r;
                    const float* rows = edge_rows(oy, ox);
                    for (int64_t ky = 0; ky < kh; ++ky) {
                      const int64_t iy = oy * c.stride_h - pt + ky * c.dilation_h;
                      *at++ = iy < 0 || iy >= H ? zeros : rows + ky * krow;
                    }
                  }
                },
                kh, krow, y1 - y0, w0, dst + (y0 * OW + ox) * CO, OW * CO, lo, hi, 0, w0.panels);
          };
          for (int64_t ox = 0; ox < ox_lo; ++ox) edge_column(ox);
          for (int64_t ox = ox_hi; ox < OW; ++ox) edge_column(ox);
        });
      }
      return;
    }
    for (int64_t b = 0; b < sx.d[0]; ++b) {
      const float* img = x + b * H * W * C;
      float* dst = out + b * pixels * CO;
      for (uint32_t g = 0; g < c.groups; ++g) {
        if (!direct) {
          for_ranges(worth_splitting(m.parallel, pixels * kk), OH, 1, [&](int64_t y0, int64_t y1) { im2col(img, sx, so, c, g, col, 0.0f, 0, y0, y1); });
        }
        packed_f32_gemm(m, direct ? img : col, direct ? C : kk, pixels, packs[g], dst + g * og, CO, lo, hi);
      }
    }
    return;
  }
  for (int64_t b = 0; b < sx.d[0]; ++b) {
    const float* img = x + b * H * W * C;
    float* dst = out + b * pixels * CO;
    for (uint32_t g = 0; g < c.groups; ++g) {
      const float* a = img;
      if (!direct) {
        im2col(img, sx, so, c, g, col);
        a = col;
      }
      float* c_out = c.groups == 1 ? dst : tmp;
      kernels::gemm(false, true, pixels, og, kk, 1.0f, a, w + g * og * kk, 0.0f, c_out, m.gemm_workspace.data());
      if (c.groups != 1) {
        for (int64_t p = 0; p < pixels; ++p) std::memcpy(dst + p * CO + g * og, tmp + p * og, static_cast<size_t>(og) * 4);
      }
    }
    for (int64_t p = 0; p < pixels; ++p) {
      float* px = dst + p * CO;
      for (int64_t o = 0; o < CO; ++o) px[o] = clampf(px[o] + (bias ? bias[o] : 0.0f), lo, hi);
    }
  }
}

#if defined(__AVX512F__)
// One output pixel's channels [0, min(left, 16 V)) of a depthwise convolution: per register of
// 16 channels (the last masked unless Full), the bias, every listed tap's product added with a
// fused multiply-add, the clamp (as clampf: NaN kept). Several registers give the taps' chains
// of dependent additions company. (Full blocks load without masks: with them GCC 12 kept the
// sums on the stack, a store and a load in every chain's step.)
// With Broadcast (a channel multiplier), every channel of the block reads the one input value
// at x + in_at[t].
// Registers 0..V-2 are whole: 16 (V - 1) < left.
template <int V, bool Broadcast = false, bool Full = false>
void depthwise_block(const float* x, const float* w, const float* bias, const int64_t* in_at, const int64_t* w_at, int64_t taps, int64_t left,
                     float* out, __m512 vlo, __m512 vhi) {
  const int64_t last = left - 16 * (V - 1);  // channels in the last register
  const __mmask16 k = kernels::first_lanes(last);
  __m512 acc[V];
  auto load = [&](const float* p, int v) { return Full || v + 1 < V ? _mm512_loadu_ps(p) : _mm512_maskz_loadu_ps(k, p); };
  _Pragma("GCC unroll 4") for (int v = 0; v < V; ++v) acc[v] = bias ? load(bias + 16 * v, v) : _mm512_setzero_ps();
  for (int64_t t = 0; t < taps; ++t) {
    const float* xt = x + in_at[t];
    const float* wt = w + w_at[t];
    if constexpr (Broadcast) {
      const __m512 xv = _mm512_set1_ps(*xt);
      _Pragma("GCC unroll 4") for (int v = 0; v < V; ++v) acc[v] = _mm512_fmadd_ps(xv, load(wt + 16 * v, v), acc[v]);
    } else {
      _Pragma("GCC unroll 4") for (int v = 0; v < V; ++v) acc[v] = _mm512_fmadd_ps(load(xt + 16 * v, v), load(wt + 16 * v, v), acc[v]);
    }
  }
  _Pragma("GCC unroll 4") for (int v = 0; v < V; ++v) {
    const __m512 r = _mm512_maskz_min_ps(0xffff, vhi, _mm512_maskz_max_ps(0xffff, vlo, acc[v]));
    if (Full || v + 1 < V) {
      _mm512_storeu_ps(out + 16 * v, r);
    } else {
      _mm512_mask_storeu_ps(out + 16 * v, k, r);
    }
  }
}

// All CO channels of one output pixel, in the blocks of for_channel_blocks (whole ones load
// without masks).
template <bool Broadcast = false>
inline void depthwise_pixel(const float* x, const float* w, const float* bias, const int64_t* in_at, const int64_t* w_at, int64_t taps, int64_t CO,
                            float* out, __m512 vlo, __m512 vhi) {
  for_channel_blocks(CO, [&](int64_t c0, int64_t left, auto v, auto full) __attribute__((always_inline)) {
    depthwise_block<decltype(v)::value, Broadcast, decltype(full)::value>(Broadcast ? x : x + c0, w + c0, bias ? bias + c0 : nullptr, in_at, w_at,
                                                                          taps, left, out + c0, vlo, vhi);
  });
}

// P neighbouring output pixels (windows inside the image, pixel p's first element at
// x + p * step) by channels [0, min(left, 16 V)) of a depthwise convolution: as depthwise_block
// for each pixel, in the same order, each tap's filter registers loaded once for all P (a load
// and a bit per multiply-add, P x V independent sums). The last register masked unless Full.
// With Broadcast (a channel multiplier), every channel of the block reads the one input value
// at x + p * step + in_at[t].
template <int P, int V, bool Full, bool Broadcast>
[[gnu::noinline]] void depthwise_pixels(const float* x, int64_t step, const float* w, const float* bias, const int64_t* in_at, const int64_t* w_at,
                                        int64_t taps, int64_t left, float* out, int64_t out_step, __m512 vlo, __m512 vhi) {
  const __mmask16 k = kernels::first_lanes(left - 16 * (V - 1));
  auto load = [&](const float* p, int v) { return Full || v + 1 < V ? _mm512_loadu_ps(p) : _mm512_maskz_loadu_ps(k, p); };
  __m512 acc[P][V];
  _Pragma("GCC unroll 4") for (int v = 0; v < V; ++v) {
    const __m512 b = bias ? load(bias + 16 * v, v) : _mm512_setzero_ps();
    _Pragma("GCC unroll 8") for (int p = 0; p < P; ++p) acc[p][v] = b;
  }
  for (int64_t t = 0; t < taps; ++t) {
    const float* xt = x + in_at[t];
    const float* wt = w + w_at[t];
    if constexpr (Broadcast) {
      __m512 wv[V];
      _Pragma("GCC unroll 4") for (int v = 0; v < V; ++v) wv[v] = load(wt + 16 * v, v);
      _Pragma("GCC unroll 8") for (int p = 0; p < P; ++p) {
        const __m512 xv = _mm512_set1_ps(xt[p * step]);
        _Pragma("GCC unroll 4") for (int v = 0; v < V; ++v) acc[p][v] = _mm512_fmadd_ps(xv, wv[v], acc[p][v]);
      }
    } else {
      _Pragma("GCC unroll 4") for (int v = 0; v < V; ++v) {
        const __m512 wv = load(wt + 16 * v, v);
        _Pragma("GCC unroll 8") for (int p = 0; p < P; ++p) acc[p][v] = _mm512_fmadd_ps(load(xt + p * step + 16 * v, v), wv, acc[p][v]);
      }
    }
  }
  _Pragma("GCC unroll 8") for (int p = 0; p < P; ++p) {
    _Pragma("GCC unroll 4") for (int v = 0; v < V; ++v) {
      const __m512 r = _mm512_maskz_min_ps(0xffff, vhi, _mm512_maskz_max_ps(0xffff, vlo, acc[p][v]));
      if (Full || v + 1 < V) {
        _mm512_storeu_ps(out + p * out_step + 16 * v, r);
      } else {
        _mm512_mask_storeu_ps(out + p * out_step + 16 * v, k, r);
      }
    }
  }
}

// `count` output pixels sharing one list of taps (pixel i's window from x + i * step, its
// outputs at out + i * out_step) by channels [0, left <= 64), in for_pixel_blocks' blocks, so
// that the block's filter stays in the first-level cache while they pass. Broadcast as
// depthwise_pixels.
template <bool Broadcast>
void depthwise_row_block(const float* x, int64_t step, const float* w, const float* bias, const int64_t* in_at, const int64_t* w_at, int64_t taps,
                         int64_t left, int64_t count, float* out, int64_t out_step, __m512 vlo, __m512 vhi) {
  for_pixel_blocks(count, left, [&](int64_t i, auto p, auto v, auto full) __attribute__((always_inline)) {
    depthwise_pixels<decltype(p)::value, decltype(v)::value, decltype(full)::value, Broadcast>(x + i * step, step, w, bias, in_at, w_at, taps, left,
                                                                                               out + i * out_step, out_step, vlo, vhi);
  });
}

// `count` output pixels whose windows share one list of taps (pixel i's taps from
// x + i * step, its outputs at out + i * out_step): neighbours in a row, or in a column, every
// channel: in blocks of 64, or, with a channel multiplier (mult > 1), per input channel its
// `mult` outputs in blocks of 64, each tap's input value broadcast.
inline void depthwise_run(const float* x, int64_t step, const float* w, const float* bias, const int64_t* in_at, const int64_t* w_at, int64_t taps,
                          int64_t C, int64_t mult, int64_t count, float* out, int64_t out_step, __m512 vlo, __m512 vhi) {
  const int64_t CO = C * mult;
  if (mult == 1) {
    // (blocks of 64 channels: runs of few pixels, DS-CNN's rows of 3, take half the calls of
    // blocks of 32 at the same speed on long runs)
    for (int64_t c0 = 0; c0 < CO; c0 += 64) {
      depthwise_row_block<false>(x + c0, step, w + c0, bias ? bias + c0 : nullptr, in_at, w_at, taps, std::min<int64_t>(64, CO - c0), count, out + c0,
                                 out_step, vlo, vhi);
    }
    return;
  }
  for (int64_t ci = 0; ci < C; ++ci) {
    for (int64_t j = 0; j < mult; j += 64) {
      const int64_t o = ci * mult + j;
      depthwise_row_block<true>(x + ci, step, w + o, bias ? bias + o : nullptr, in_at, w_at, taps, std::min<int64_t>(64, mult - j), count, out + o,
                                out_step, vlo, vhi);
    }
  }
}

// One output pixel of a depthwise convolution with a channel multiplier: per input channel its
// `mult` outputs, each tap's input value broadcast.
inline void depthwise_pixel_multiplier(const float* x, const float* w, const float* bias, const int64_t* in_at, const int64_t* w_at, int64_t taps,
                                       int64_t C, int64_t mult, float* out, __m512 vlo, __m512 vhi) {
  for (int64_t ci = 0; ci < C; ++ci) {
    depthwise_pixel<true>(x + ci, w + ci * mult, bias ? bias + ci * mult : nullptr, in_at, w_at, taps, mult, out + ci * mult, vlo, vhi);
  }
}
#endif

void run_depthwise_conv2d(DelegateState& m, const Node& n) {
  if (m.f32_of_node[static_cast<size_t>(&n - m.graph.nodes.data())] >= 0) return run_conv2d(m, n);  // one input channel
  const xnn::ConvParams& c = n.conv;
  const float lo = n.output_min, hi = n.output_max;
  const ConvOperands ops = conv_operands(m, n);
  ETSCOPE_CONV_OPERANDS(ops);
  const int64_t mult = c.group_out;
#if defined(__AVX512F__)
  const PixelTaps taps(c, H, W, OH, OW, C, CO);
  const bool listed = taps.listed();
#else
  constexpr bool listed = false;
#endif
  if (mult == 1 || listed) {
    // Per output pixel and block of channels: the bias, then every tap's product added with a
    // fused multiply-add (in XNNPACK's order: for_each_depthwise_tap) in sums
    // that stay in registers, then the clamp. Output rows (of every image) are split over the
    // method's threads. With AVX-512, the pixels whose window lies inside the image share one
    // list of taps (offsets from the window's first pixel) and the others list theirs; a channel
    // multiplier takes this path too (depthwise_pixel_multiplier).
#if defined(__AVX512F__)
    const __m512 vlo = _mm512_set1_ps(lo), vhi = _mm512_set1_ps(hi);
#endif
    constexpr int64_t kDwBlock = 32;
    for_ranges(worth_splitting(m.parallel, sx.d[0] * OH * OW * CO * c.kernel_h * c.kernel_w), sx.d[0] * OH, 1, [&](int64_t y0, int64_t y1) {
#if defined(__AVX512F__)
      if (listed) {
        taps.walk(OH, OW, y0, y1,
                  [&](int64_t b, int64_t origin, int64_t step, const int64_t* in_at, const int64_t* w_at, int64_t n, int64_t count, int64_t first,
                      int64_t pixel_step) {
                    depthwise_run(x + b * H * W * C + origin, step, w, bias, in_at, w_at, n, C, mult, count, out + first * CO, pixel_step * CO, vlo, vhi);
                  },
                  [&](int64_t b, int64_t oy, int64_t ox) {
                    float* px = out + ((b * OH + oy) * OW + ox) * CO;
                    taps.visit(oy, ox, [&](int64_t origin, const int64_t* in_at, const int64_t* w_at, int64_t n) {
                      if (mult == 1) {
                        depthwise_pixel(x + b * H * W * C + origin, w, bias, in_at, w_at, n, CO, px, vlo, vhi);
                      } else {
                        depthwise_pixel_multiplier(x + b * H * W * C + origin, w, bias, in_at, w_at, n, C, mult, px, vlo, vhi);
                      }
                    });
                  });
        return;
      }
#endif
      for (int64_t y = y0; y < y1; ++y) {
        const int64_t b = y / OH, oy = y % OH;
        const float* xb = x + b * H * W * C;
        for (int64_t ox = 0; ox < OW; ++ox) {
          float* px = out + ((b * OH + oy) * OW + ox) * CO;
          for (int64_t c0 = 0; c0 < CO; c0 += kDwBlock) {
            float sums[kDwBlock];
            const int64_t len = std::min(kDwBlock, CO - c0);
            for (int64_t j = 0; j < len; ++j) sums[j] = bias ? bias[c0 + j] : 0.0f;
            for_each_depthwise_tap(c, H, W, oy, ox, [&](int64_t pixel, int64_t k) {
              const float* __restrict in = xb + pixel * C + c0;
              const float* __restrict wk = w + k * CO + c0;
              for (int64_t j = 0; j < len; ++j) sums[j] = std::fma(in[j], wk[j], sums[j]);
            });
            for (int64_t j = 0; j < len; ++j) px[c0 + j] = clampf(sums[j], lo, hi);
          }
        }
      }
    });
    return;
  }
  // A channel multiplier: per output row, the bias, then each filter tap's products added over
  // the row's pixels, then the clamp.
  for_ranges(worth_splitting(m.parallel, sx.d[0] * OH * OW * CO * c.kernel_h * c.kernel_w), sx.d[0] * OH, 1, [&](int64_t y0, int64_t y1) {
    for (int64_t y = y0; y < y1; ++y) {
      const int64_t b = y / OH, oy = y % OH;
      float* __restrict row = out + (b * OH + oy) * OW * CO;
      for (int64_t ox = 0; ox < OW; ++ox) {
        for (int64_t o = 0; o < CO; ++o) row[ox * CO + o] = bias ? bias[o] : 0.0f;
      }
      for_each_row_tap(c, H, W, OW, oy, [&](int64_t iy, int64_t off, int64_t ox0, int64_t ox1, int64_t k) {
        const float* __restrict wk = w + k * CO;
        for (int64_t ox = ox0; ox < ox1; ++ox) {
          const float* __restrict in = x + ((b * H + iy) * W + ox * c.stride_w + off) * C;
          float* __restrict px = row + ox * CO;
          for (int64_t ci = 0; ci < C; ++ci) {  // output o reads input channel o / mult
            const float v = in[ci];
            // (a fused multiply-add as XNNPACK's: a build without FMA instructions would not
            // contract `+= v * w` into one)
            for (int64_t j = 0; j < mult; ++j) px[ci * mult + j] = std::fma(v, wk[ci * mult + j], px[ci * mult + j]);
          }
        }
      });
      for (int64_t e = 0; e < OW * CO; ++e) row[e] = clampf(row[e], lo, hi);
    }
  });
}

// As XNNPACK computes a deconvolution (its subconvolution and IGEMM kernels): per output pixel
// and output channel, the bias, then for each filter tap that reaches an input pixel (row by row,
// column by column) the products over the group's input channels in order, each a fused
// multiply-add (a tap whose pixel lies outside the image reads zeros, as XNNPACK's do). Packed
// (plan_f32): per output row and column phase, the phase's pixels are a GEMM's rows (a pointer
// per tap), their outputs a stride of columns apart.
void run_conv_transpose2d(DelegateState& m, const Node& n) {
  const xnn::ConvParams& c = n.conv;
  const float lo = n.output_min, hi = n.output_max;
  const ConvOperands ops = conv_operands(m, n);
  ETSCOPE_CONV_OPERANDS(ops);
  const int64_t cg = c.group_in, og = c.group_out, KH = c.kernel_h, KW = c.kernel_w;
  // The input row (column) tap k of output row (column) o reads, or -1.
  auto source = [](int64_t o, int64_t pad, int64_t k, int64_t dilation, int64_t stride, int64_t extent) {
    const int64_t at = o + pad - k * dilation;
    return at >= 0 && at % stride == 0 && at / stride < extent ? at / stride : int64_t{-1};
  };
  if (const int32_t f = m.f32_of_node[static_cast<size_t>(&n - m.graph.nodes.data())]; f >= 0) {
    const std::vector<PackedF32>& packs = m.f32_layers[static_cast<size_t>(f)];
    float* zeros = m.scratch.data();  // cg floats (check_conv)
    std::fill(zeros, zeros + cg, 0.0f);
    const int64_t sh = c.stride_h, sw = c.stride_w;
    for (int64_t b = 0; b < sx.d[0]; ++b) {
      const float* xb = x + b * H * W * C;
      for_ranges(worth_splitting(m.parallel, OH * OW * CO * KH * KW * cg / std::max<int64_t>(1, sh * sw)), OH, 1, [&](int64_t y0, int64_t y1) {
        int64_t ky[kF32MaxTaps], kx[kF32MaxTaps];
        for (int64_t oy = y0; oy < y1; ++oy) {
          const int64_t ny = deconv_taps(oy % sh, c.padding[0], KH, c.dilation_h, sh, ky);
          for (int64_t px = 0; px < std::min(sw, OW); ++px) {
            const int64_t nx = deconv_taps(px, c.padding[3], KW, c.dilation_w, sw, kx);
            const int64_t count = (OW - px + sw - 1) / sw;
            for (uint32_t g = 0; g < c.groups; ++g) {
              const PackedF32& pack = packs[(g * sh + oy % sh) * sw + px];
              if (ny * nx == 0) {  // no tap reaches the phase (a stride above the window): the bias
                for (int64_t r = 0; r < count; ++r) {
                  float* o = out + ((b * OH + oy) * OW + px + r * sw) * CO + g * og;
                  for (int64_t j = 0; j < og; ++j) o[j] = clampf(pack.bias[static_cast<size_t>(j)], lo, hi);
                }
                continue;
              }
              f32_gemm_rows(
                  [&](int64_t r0, int64_t r1, const float** at) {
                    for (int64_t r = r0; r < r1; ++r) {
                      const int64_t ox = px + r * sw;
                      for (int64_t ty = 0; ty < ny; ++ty) {
                        const int64_t iy = source(oy, c.padding[0], ky[ty], c.dilation_h, sh, H);
                        for (int64_t tx = 0; tx < nx; ++tx) {
                          const int64_t ix = source(ox, c.padding[3], kx[tx], c.dilation_w, sw, W);
                          *at++ = iy < 0 || ix < 0 ? zeros : xb + (iy * W + ix) * C + g * cg;
                        }
                      }
                    }
                  },
                  ny * nx, cg, count, pack, out + ((b * OH + oy) * OW + px) * CO + g * og, sw * CO, lo, hi, 0, pack.panels);
            }
          }
        }
      });
    }
    return;
  }
  for (int64_t b = 0; b < sx.d[0]; ++b) {
    const float* xb = x + b * H * W * C;
    for (int64_t oy = 0; oy < OH; ++oy) {
      for (int64_t ox = 0; ox < OW; ++ox) {
        float* px = out + ((b * OH + oy) * OW + ox) * CO;
        for (uint32_t g = 0; g < c.groups; ++g) {
          for (int64_t o = 0; o < og; ++o) {
            float acc = bias ? bias[g * og + o] : 0.0f;
            for (int64_t ky = 0; ky < KH; ++ky) {
              const int64_t iy = source(oy, c.padding[0], ky, c.dilation_h, c.stride_h, H);
              if (iy < 0) continue;
              for (int64_t kx = 0; kx < KW; ++kx) {
                const int64_t ix = source(ox, c.padding[3], kx, c.dilation_w, c.stride_w, W);
                if (ix < 0) continue;
                const float* in = xb + (iy * W + ix) * C + g * cg;
                const float* wr = w + (((g * og + o) * KH + ky) * KW + kx) * cg;
                for (int64_t ci = 0; ci < cg; ++ci) acc = std::fma(in[ci], wr[ci], acc);
              }
            }
            px[g * og + o] = clampf(acc, lo, hi);
          }
        }
      }
    }
  }
}

void run_fully_connected(DelegateState& m, const Node& n) {
  const float lo = n.output_min, hi = n.output_max;
  float* out = m.output(n);
  const Shape& sw = m.in_shape(n, 1);
  const bool t = (n.flags & kFlagTransposeB) != 0;
  const int64_t k = t ? sw.d[0] : sw.d[1], nout = t ? sw.d[1] : sw.d[0];
  const int64_t rows = k > 0 ? m.in_shape(n, 0).numel() / k : 0;
  if (const int32_t f = m.f32_of_node[static_cast<size_t>(&n - m.graph.nodes.data())]; f >= 0) {
    packed_f32_gemm(m, m.input(n, 0), k, rows, m.f32_layers[static_cast<size_t>(f)][0], out, nout, lo, hi);
    return;
  }
  const float* bias = n.inputs[2] >= 0 ? m.input(n, 2) : nullptr;
  kernels::gemm(false, !t, rows, nout, k, 1.0f, m.input(n, 0), m.input(n, 1), 0.0f, out, m.gemm_workspace.data());
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t o = 0; o < nout; ++o) out[r * nout + o] = clampf(out[r * nout + o] + (bias ? bias[o] : 0.0f), lo, hi);
  }
}

void run_batch_matmul(DelegateState& m, const Node& n) {
  const Shape& sa = m.in_shape(n, 0);
  const Shape& sb = m.in_shape(n, 1);
  const Shape& so = m.out_shape(n);
  const float* a = m.input(n, 0);
  const float* b = m.input(n, 1);
  float* out = m.output(n);
  const bool tb = (n.flags & kFlagTransposeB) != 0;
  const int64_t rows = sa.d[sa.rank - 2], k = sa.d[sa.rank - 1], cols = so.d[so.rank - 1];
  Shape batch = so, ba = sa, bb = sb;
  batch.rank -= 2;
  ba.rank -= 2;
  bb.rank -= 2;
  const int64_t batches = batch.numel();
  float* transposed = reinterpret_cast<float*>(m.gemm_workspace.data());  // B made k x cols (sized at load)
  for (int64_t bi = 0; bi < batches; ++bi) {
    // The batch index of each input (broadcast dimensions stay at 0).
    int64_t idx[kMaxRank] = {}, rem = bi;
    for (int d = batch.rank - 1; d >= 0; --d) {
      idx[d] = rem % batch.d[d];
      rem /= batch.d[d];
    }
    int64_t ia = 0, ib = 0;
    for (int d = 0; d < batch.rank; ++d) {
      const int da = ba.rank - batch.rank + d, db = bb.rank - batch.rank + d;
      if (da >= 0) ia = ia * ba.d[da] + (ba.d[da] == 1 ? 0 : idx[d]);
      if (db >= 0) ib = ib * bb.d[db] + (bb.d[db] == 1 ? 0 : idx[d]);
    }
    // Each output summed input by input with fused multiply-adds from zero, as XNNPACK's kernels
    // do (Eigen's blocked GEMM added some in another order: an int8 attention whose float scores
    // sat on a quantization tie then took the other side). A transposed B is made k x cols first.
    const float* bm = b + ib * k * cols;
    if (tb) {
      const int64_t sizes[2] = {k, cols}, strides[2] = {1, k};
      kernels::copy_permuted<float, 2>(bm, transposed, 2, sizes, strides);
      bm = transposed;
    }
    kernels::gemm_fma(a + ia * rows * k, k, bm, cols, rows, cols, k, out + bi * rows * cols, cols);
  }
  apply_output_range(m, n);
}

// ---------------------------------------------------------------------------------------------
// [pooling]

void run_global_avg_pool(DelegateState& m, const Node& n) {
  const float lo = n.output_min, hi = n.output_max;
  const Shape& sx = m.in_shape(n, 0);
  const float* x = m.input(n, 0);
  float* out = m.output(n);
  const int64_t hw = sx.d[1] * sx.d[2], C = sx.d[3];
  // As XNNPACK's mean: each channel's rows summed in order from zero, then 0 + sum x (1 / count)
  // (a multiplication by the reciprocal, not a division).
  const float scale = hw > 0 ? 1.0f / static_cast<float>(hw) : 0.0f;
  for (int64_t b = 0; b < sx.d[0]; ++b) {
    float* o = out + b * C;
    std::fill(o, o + C, 0.0f);
    for (int64_t p = 0; p < hw; ++p) {
      const float* in = x + (b * hw + p) * C;
      for (int64_t ch = 0; ch < C; ++ch) o[ch] += in[ch];
    }
    for (int64_t ch = 0; ch < C; ++ch) o[ch] = clampf(0.0f + o[ch] * scale, lo, hi);
  }
}

// AvgPool2d as XNNPACK's average pooling adds: a window's taps column by column (those outside
// the image reading zeros), 9 at a time (the last nine filled up with zeros), each nine summed as
// ((t2 + t3) + (t4 + t5)) + (((t0 + t1) + t8) + (t6 + t7)) and added to the sum of the nines
// before (from zero), then times 1 / (the window's pixels inside the image: all of them when
// there is no padding), then the clamp.
void run_avg_pool(DelegateState& m, const Node& n) {
  const xnn::ConvParams& c = n.conv;
  const float lo = n.output_min, hi = n.output_max;
  const auto [sx, so, x, out] = operands(m, n);
  const int64_t H = sx.d[1], W = sx.d[2], C = sx.d[3], OH = so.d[1], OW = so.d[2];
  float* zeros = m.scratch.data();  // C floats (check_pool)
  std::fill(zeros, zeros + C, 0.0f);
  // Windows of more than nine taps are summed nine at a time into the output.
  const bool multipass = uint64_t{c.kernel_h} * c.kernel_w > 9;
  for (int64_t b = 0; b < sx.d[0]; ++b) {
    for (int64_t oy = 0; oy < OH; ++oy) {
      for (int64_t ox = 0; ox < OW; ++ox) {
        float* __restrict px = out + ((b * OH + oy) * OW + ox) * C;
        const float* t[9];
        int used = 0, cells = 0;
        bool first = true;
        auto add_nine = [&] {
          for (int j = used; j < 9; ++j) t[j] = zeros;
          for (int64_t ch = 0; ch < C; ++ch) {
            const float s = ((t[2][ch] + t[3][ch]) + (t[4][ch] + t[5][ch])) + (((t[0][ch] + t[1][ch]) + t[8][ch]) + (t[6][ch] + t[7][ch]));
            px[ch] = (first ? 0.0f : px[ch]) + s;
          }
          first = false;
          used = 0;
        };
        for (uint32_t kx = 0; kx < c.kernel_w; ++kx) {
          const int64_t ix = ox * c.stride_w - c.padding[3] + kx;
          for (uint32_t ky = 0; ky < c.kernel_h; ++ky) {
            const int64_t iy = oy * c.stride_h - c.padding[0] + ky;
            const bool inside = iy >= 0 && iy < H && ix >= 0 && ix < W;
            t[used++] = inside ? x + ((b * H + iy) * W + ix) * C : zeros;
            cells += inside;
            if (used == 9 && multipass) add_nine();
          }
        }
        const float scale = cells > 0 ? 1.0f / static_cast<float>(cells) : 0.0f;
#if defined(__AVX512F__)
        if (!multipass) {
          // A window of up to nine taps (3x3): the tree, the scale and the clamp in one pass, 16
          // channels at a time; the same operations as add_nine and the loop below.
          for (int j = used; j < 9; ++j) t[j] = zeros;
          const __m512 vs = _mm512_set1_ps(scale), vlo = _mm512_set1_ps(lo), vhi = _mm512_set1_ps(hi);
          for (int64_t ch = 0; ch < C; ch += 16) {
            const __mmask16 k = kernels::first_lanes(C - ch);
            __m512 v[9];
            for (int j = 0; j < 9; ++j) v[j] = _mm512_maskz_loadu_ps(k, t[j] + ch);
            const __m512 s = _mm512_add_ps(_mm512_add_ps(_mm512_add_ps(v[2], v[3]), _mm512_add_ps(v[4], v[5])),
                                           _mm512_add_ps(_mm512_add_ps(_mm512_add_ps(v[0], v[1]), v[8]), _mm512_add_ps(v[6], v[7])));
            const __m512 a = _mm512_mul_ps(_mm512_add_ps(_mm512_setzero_ps(), s), vs);
            // As clampf: max and min return their second operand when either is NaN, so NaN stays
            // (zero-masking forms: GCC 12's plain ones warn of an undefined register here).
            kernels::store_lanes(px + ch, k, _mm512_maskz_min_ps(0xffff, vhi, _mm512_maskz_max_ps(0xffff, vlo, a)));
          }
          continue;
        }
#endif
        if (used > 0 || first) add_nine();
        for (int64_t ch = 0; ch < C; ++ch) px[ch] = clampf(px[ch] * scale, lo, hi);
      }
    }
  }
}

// MaxPool2d.
void run_pool(DelegateState& m, const Node& n) {
  if (n.kind == NodeKind::kAvgPool2d) return run_avg_pool(m, n);
  const xnn::ConvParams& c = n.conv;
  const float lo = n.output_min, hi = n.output_max;
  const bool is_max = n.kind == NodeKind::kMaxPool2d;
  const uint32_t dh = is_max ? c.dilation_h : 1, dw = is_max ? c.dilation_w : 1;
  const auto [sx, so, in_data, out] = operands(m, n);
  const float* x = in_data;  // a named local: the tap lambda below reads it (clang before 16 cannot capture a binding)
  const int64_t H = sx.d[1], W = sx.d[2], C = sx.d[3], OH = so.d[1], OW = so.d[2];
  for (int64_t b = 0; b < sx.d[0]; ++b) {
    for (int64_t oy = 0; oy < OH; ++oy) {
      for (int64_t ox = 0; ox < OW; ++ox) {
        float* px = out + ((b * OH + oy) * OW + ox) * C;
        std::fill(px, px + C, is_max ? -std::numeric_limits<float>::infinity() : 0.0f);
        int64_t cells = 0;
        for_each_tap(c, dh, dw, H, W, oy, ox, [&](int64_t pixel, int64_t) {
          const float* in = x + (b * H * W + pixel) * C;
          ++cells;
          for (int64_t ch = 0; ch < C; ++ch) px[ch] = is_max ? std::max(px[ch], in[ch]) : px[ch] + in[ch];
        });
        for (int64_t ch = 0; ch < C; ++ch) {
          px[ch] = clampf(is_max ? px[ch] : (cells > 0 ? px[ch] / static_cast<float>(cells) : 0.0f), lo, hi);
        }
      }
    }
  }
}

void run_argmax_pool(DelegateState& m, const Node& n) {
  // As XNNPACK's kernels: a padded position reads the nearest input pixel (the window is
  // clamped to the image); window positions are visited column by column (index = x * window
  // height + y, XNNPACK's indirection order); the first maximum wins (a later value must be
  // greater), so a NaN counts only in the first position.
  const xnn::ConvParams& c = n.conv;
  const auto [sx, so, x, out] = operands(m, n);
  float* index = m.output(n, 1);
  const int64_t H = sx.d[1], W = sx.d[2], C = sx.d[3], OH = so.d[1], OW = so.d[2];
  const int64_t kh = c.kernel_h, kw = c.kernel_w;
  for (int64_t b = 0; b < sx.d[0]; ++b) {
    for (int64_t oy = 0; oy < OH; ++oy) {
      for (int64_t ox = 0; ox < OW; ++ox) {
        const int64_t o = ((b * OH + oy) * OW + ox) * C;
        for (int64_t kx = 0; kx < kw; ++kx) {
          const int64_t ix = std::min(std::max<int64_t>(ox * kw + kx - c.padding[3], 0), W - 1);
          for (int64_t ky = 0; ky < kh; ++ky) {
            const int64_t iy = std::min(std::max<int64_t>(oy * kh + ky - c.padding[0], 0), H - 1);
            const float* in = x + ((b * H + iy) * W + ix) * C;
            const int64_t k = kx * kh + ky;
            for (int64_t ch = 0; ch < C; ++ch) {
              if (k == 0 || in[ch] > out[o + ch]) {
                out[o + ch] = in[ch];
                index[o + ch] = static_cast<float>(k);
              }
            }
          }
        }
      }
    }
  }
}

// ---------------------------------------------------------------------------------------------
// [data movement]

void run_transpose(DelegateState& m, const Node& n) {
  const auto [sx, so, x, out] = operands(m, n);
  int64_t sti[kMaxRank], st[kMaxRank];
  strides_of(sx, sti);
  for (int d = 0; d < so.rank; ++d) st[d] = sti[n.dims_a[static_cast<size_t>(d)]];
  kernels::copy_permuted<float, kMaxRank>(x, out, so.rank, so.d, st);
  apply_output_range(m, n);
}

// Slice (offsets dims_a) and ConstantPad (dims_a before, filled with alpha).
void run_slice_or_pad(DelegateState& m, const Node& n) {
  const auto [sx, so, x, out] = operands(m, n);
  const int64_t count = so.numel();
  const bool pad = n.kind == NodeKind::kConstantPad;
  const int r = so.rank;
  // Position in the input of output position p along dimension d.
  auto from = [&](int d, int64_t p) { return pad ? p - n.dims_a[static_cast<size_t>(d)] : p + n.dims_a[static_cast<size_t>(d)]; };
  if (r == 0) {
    if (count == 1) out[0] = x[0];
    apply_output_range(m, n);
    return;
  }
  // Row by row over the last dimension: the pad value before and after the run of it inside the
  // input, the run copied.
  const int64_t inner = so.d[r - 1];
  const int64_t start = from(r - 1, 0);
  const int64_t lo = std::clamp<int64_t>(-start, 0, inner), hi = std::clamp<int64_t>(sx.d[r - 1] - start, lo, inner);
  int64_t sti[kMaxRank], idx[kMaxRank] = {};
  strides_of(sx, sti);
  for (int64_t row = 0; inner > 0 && row < count / inner; ++row) {
    int64_t off = 0;
    bool inside = true;
    for (int d = 0; d + 1 < r; ++d) {
      const int64_t pos = from(d, idx[d]);
      if (pos < 0 || pos >= sx.d[d]) inside = false;
      off += pos * sti[d];
    }
    float* o = out + row * inner;
    if (!inside) {
      std::fill(o, o + inner, n.alpha);
    } else {
      std::fill(o, o + lo, n.alpha);
      if (hi > lo) std::memcpy(o + lo, x + off + start + lo, static_cast<size_t>(hi - lo) * 4);
      std::fill(o + hi, o + inner, n.alpha);
    }
    for (int d = r - 2; d >= 0; --d) {
      if (++idx[d] < so.d[d]) break;
      idx[d] = 0;
    }
  }
  apply_output_range(m, n);
}

// Concat2 to Concat5.
void run_concat(DelegateState& m, const Node& n) {
  const Shape& so = m.out_shape(n);
  float* out = m.output(n);
  const auto [outer, inner] = concat_rows(so, n.axis);
  int64_t at = 0;
  for (size_t k = 0; k < n.inputs.size(); ++k) {
    const int64_t len = m.in_shape(n, k).d[n.axis] * inner;
    const float* src = m.input(n, k);
    const int64_t out_row = so.d[n.axis] * inner;
    if (len == 1) {  // one float per row (a rope's halves joined along a last dimension of 2)
      for (int64_t o = 0; o < outer; ++o) out[o * out_row + at] = src[o];
    } else {
      for (int64_t o = 0; o < outer; ++o) std::memmove(out + o * out_row + at, src + o * len, static_cast<size_t>(len) * 4);
    }
    at += len;
  }
  apply_output_range(m, n);
}

// As XNNPACK resizes (its indirection and ibilinear kernels): a source coordinate per output row
// and column, o x scale plus 0.5 scale - 0.5 (align_corners: o x scale, its scale (in - 1) /
// (out - 1); TensorFlow's legacy mode: no offset), clamped to the input; then each output the
// blend of its four neighbours, every product and sum rounded on its own (no fused multiply-add:
// XNNPACK's kernel has none).
#if defined(__GNUC__) && !defined(__clang__)
__attribute__((optimize("fp-contract=off")))
#endif
void run_resize_bilinear(DelegateState& m, const Node& n) {
#if defined(__clang__)
#pragma clang fp contract(off)
#endif
  const auto [sx, so, x, out] = operands(m, n);
  const int64_t H = sx.d[1], W = sx.d[2], C = sx.d[3], OH = so.d[1], OW = so.d[2];
  const bool corners = (n.flags & kFlagAlignCorners) != 0, legacy = (n.flags & kFlagLegacyResize) != 0;
  auto scale = [&](int64_t in, int64_t o) {
    const int64_t adjust = corners && o != 1 ? 1 : 0;
    return static_cast<float>(in - adjust) / static_cast<float>(o - adjust);
  };
  const float sh = scale(H, OH), sw = scale(W, OW);
  auto source = [&](int64_t o, float s, int64_t in, int64_t* i0, int64_t* i1, float* frac) {
    const float top = static_cast<float>(in - 1);
    float f = static_cast<float>(o) * s;
    if (!corners && !legacy) f = f + (0.5f * s - 0.5f);
    f = std::min(std::max(f, 0.0f), top);
    *i0 = std::min<int64_t>(static_cast<int64_t>(f), in - 1);
    *i1 = std::min<int64_t>(*i0 + 1, in - 1);
    *frac = f - static_cast<float>(*i0);
  };
  for (int64_t b = 0; b < sx.d[0]; ++b) {
    for (int64_t oy = 0; oy < OH; ++oy) {
      int64_t y0, y1;
      float fy;
      source(oy, sh, H, &y0, &y1, &fy);
      for (int64_t ox = 0; ox < OW; ++ox) {
        int64_t x0, x1;
        float fx;
        source(ox, sw, W, &x0, &x1, &fx);
        const float* p00 = x + ((b * H + y0) * W + x0) * C;
        const float* p01 = x + ((b * H + y0) * W + x1) * C;
        const float* p10 = x + ((b * H + y1) * W + x0) * C;
        const float* p11 = x + ((b * H + y1) * W + x1) * C;
        float* px = out + ((b * OH + oy) * OW + ox) * C;
        for (int64_t ch = 0; ch < C; ++ch) {
          const float top = p00[ch] + (p01[ch] - p00[ch]) * fx;
          const float bottom = p10[ch] + (p11[ch] - p10[ch]) * fx;
          px[ch] = top + (bottom - top) * fy;
        }
      }
    }
  }
  apply_output_range(m, n);
}

}  // namespace etscope::runtime::xnnpack
