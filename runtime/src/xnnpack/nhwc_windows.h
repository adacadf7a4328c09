// Window walks over NHWC images, shared by float and integer convolutions and by pooling.
//
// etscope's ATen kernels (kernels/op_convolution.cpp, op_pool.cpp) walk NCHW planes and build
// their im2col matrix column-major per channel. XNNPACK's values are NHWC, and its results are
// reproduced bit for bit only when products are summed in its order (channels innermost, a GEMM
// row per output pixel), so these walks are XNNPACK's own rather than the kernels'.
#pragma once

#include <algorithm>
#include <cstdint>
#include <type_traits>
#if defined(__AVX512F__)
#include <immintrin.h>
#endif

#include "xnnpack/delegate_state.h"

namespace etscope::runtime::xnnpack {

/// Copies n elements of a window (a few channels of a few pixels) to a place that does not
/// overlap them: up to 64 bytes with one masked load and store instead of a call to memmove (a
/// 3-channel stem convolution copies 9 or 27 bytes per kernel row), up to 1 KiB in 64-byte
/// vectors, the last one ending where the run ends (a pixel's channels into a concatenation:
/// Inception's copies 96 to 384 bytes per pixel, a call each).
template <typename T>
inline void copy_window_run(const T* from, int64_t n, T* to) {
#if defined(__AVX512F__) && defined(__AVX512BW__)
  const int64_t bytes = n * static_cast<int64_t>(sizeof(T));
  if (bytes <= 64) {
    const __mmask64 m = bytes == 64 ? ~__mmask64{0} : (__mmask64{1} << bytes) - 1;
    _mm512_mask_storeu_epi8(to, m, _mm512_maskz_loadu_epi8(m, from));
    return;
  }
  if (bytes <= 1024) {
    const char* src = reinterpret_cast<const char*>(from);
    char* dst = reinterpret_cast<char*>(to);
    for (int64_t b = 0; b + 64 < bytes; b += 64) _mm512_storeu_si512(dst + b, _mm512_loadu_si512(src + b));
    _mm512_storeu_si512(dst + bytes - 64, _mm512_loadu_si512(src + bytes - 64));
    return;
  }
#endif
  std::copy_n(from, n, to);
}

/// One group's im2col matrix of an NHWC convolution over one image: a row per output pixel
/// (oy, ox), a column per (ky, kx, channel of the group); taps in the padding are `pad` (zero,
/// or the integer GEMM's byte of a zero point). Rows are `stride` elements apart (0: the row's
/// length); the elements past a row's length are left as they are. Only the rows of output rows
/// [oy0, oy1) are written (oy1 < 0: to the last).
template <typename T>
void im2col(const T* img, const Shape& sx, const Shape& so, const xnn::ConvParams& c, uint32_t g, T* col, T pad = T{0},
            int64_t stride = 0, int64_t oy0 = 0, int64_t oy1 = -1) {
  // The parameters in locals: byte stores (int8 matrices) may alias anything, so fields read
  // through `c` would be loaded again after every copy.
  const int64_t H = sx.d[1], W = sx.d[2], C = sx.d[3], OH = so.d[1], OW = so.d[2];
  const int64_t kh = c.kernel_h, kw = c.kernel_w, sh = c.stride_h, sw = c.stride_w, dh = c.dilation_h, dw = c.dilation_w;
  const int64_t pt = c.padding[0], pl = c.padding[3];
  const int64_t cg = c.group_in, kk = kh * kw * cg, g0 = int64_t{g} * cg;
  if (stride == 0) stride = kk;
  if (oy1 < 0) oy1 = OH;
  for (int64_t oy = oy0; oy < oy1; ++oy) {
    for (int64_t ox = 0; ox < OW; ++ox) {
      T* row = col + (oy * OW + ox) * stride;
      const int64_t ix0 = ox * sw - pl;
      // One group with no horizontal dilation and the window's columns inside the image: a kernel
      // row's taps are contiguous in the image, one copy per kernel row.
      const bool whole_rows = cg == C && dw == 1 && ix0 >= 0 && ix0 + kw <= W;
      for (int64_t ky = 0; ky < kh; ++ky) {
        const int64_t iy = oy * sh - pt + ky * dh;
        if (whole_rows && iy >= 0 && iy < H) {
          copy_window_run(img + (iy * W + ix0) * C, kw * C, row + ky * kw * cg);
          continue;
        }
        for (int64_t kx = 0; kx < kw; ++kx) {
          const int64_t ix = ix0 + kx * dw;
          T* cell = row + (ky * kw + kx) * cg;
          if (iy < 0 || iy >= H || ix < 0 || ix >= W) {
            std::fill(cell, cell + cg, pad);  // XNNPACK pads quantized inputs with their zero point
          } else {
            copy_window_run(img + (iy * W + ix) * C + g0, cg, cell);
          }
        }
      }
    }
  }
}

/// Calls tap(pixel, k) for each window position of output pixel (oy, ox) inside the H x W image,
/// row by row: `pixel` is the input pixel's index (iy * W + ix), `k` the filter tap's
/// (ky * kernel_w + kx). Dilations are given apart because average pooling has none.
template <typename Tap>
void for_each_tap(const xnn::ConvParams& c, uint32_t dilation_h, uint32_t dilation_w, int64_t H, int64_t W, int64_t oy,
                  int64_t ox, Tap tap) {
  for (uint32_t ky = 0; ky < c.kernel_h; ++ky) {
    const int64_t iy = oy * c.stride_h - c.padding[0] + int64_t{ky} * dilation_h;
    if (iy < 0 || iy >= H) continue;
    for (uint32_t kx = 0; kx < c.kernel_w; ++kx) {
      const int64_t ix = ox * c.stride_w - c.padding[3] + int64_t{kx} * dilation_w;
      if (ix < 0 || ix >= W) continue;
      tap(iy * W + ix, int64_t{ky} * c.kernel_w + kx);
    }
  }
}

template <typename Tap>
void for_each_tap(const xnn::ConvParams& c, int64_t H, int64_t W, int64_t oy, int64_t ox, Tap tap) {
  for_each_tap(c, c.dilation_h, c.dilation_w, H, W, oy, ox, tap);
}

/// True when XNNPACK runs depthwise convolution c with its depthwise kernels, which add a
/// window's taps to the bias column by column (its indirection buffer lists the window's pixels
/// kernel column by kernel column): one output channel per input channel and a window of at most
/// 25 taps (its x86 kernels' largest tile). Other depthwise convolutions (a channel multiplier,
/// a larger window) run as grouped GEMMs, whose sums go row by row.
inline bool depthwise_by_column(const xnn::ConvParams& c) { return c.group_out == 1 && int64_t{c.kernel_h} * c.kernel_w <= 25; }

/// As for_each_tap, in the order XNNPACK adds depthwise convolution c's taps: column by column
/// where depthwise_by_column, else row by row.
template <typename Tap>
void for_each_depthwise_tap(const xnn::ConvParams& c, int64_t H, int64_t W, int64_t oy, int64_t ox, Tap tap) {
  if (!depthwise_by_column(c)) return for_each_tap(c, H, W, oy, ox, tap);
  for (uint32_t kx = 0; kx < c.kernel_w; ++kx) {
    const int64_t ix = ox * c.stride_w - c.padding[3] + int64_t{kx} * c.dilation_w;
    if (ix < 0 || ix >= W) continue;
    for (uint32_t ky = 0; ky < c.kernel_h; ++ky) {
      const int64_t iy = oy * c.stride_h - c.padding[0] + int64_t{ky} * c.dilation_h;
      if (iy < 0 || iy >= H) continue;
      tap(iy * W + ix, int64_t{ky} * c.kernel_w + kx);
    }
  }
}

/// The blocks a depthwise kernel takes a run of `count` pixels sharing their taps in, by `left`
/// (at most 64) channels in V registers of 16 (the last one whole when Full): P = 8 pixels at a
/// time for up to 32 channels, 4 for more, then 4, 2 and 1. Calls block(i, P, V, Full) (integral
/// constants) for the pixels from i on.
template <typename Block>
[[gnu::always_inline]] inline void for_pixel_blocks(int64_t count, int64_t left, Block block) {
  auto run = [&](auto v, auto full) __attribute__((always_inline)) {
    int64_t i = 0;
    if constexpr (decltype(v)::value <= 2) {
      for (; i + 8 <= count; i += 8) block(i, std::integral_constant<int, 8>{}, v, full);
    }
    for (; i + 4 <= count; i += 4) block(i, std::integral_constant<int, 4>{}, v, full);
    if (i + 2 <= count) {
      block(i, std::integral_constant<int, 2>{}, v, full);
      i += 2;
    }
    if (i < count) block(i, std::integral_constant<int, 1>{}, v, full);
  };
  const bool full = left % 16 == 0;
  switch ((left + 15) / 16) {
    case 1:
      return full ? run(std::integral_constant<int, 1>{}, std::true_type{}) : run(std::integral_constant<int, 1>{}, std::false_type{});
    case 2:
      return full ? run(std::integral_constant<int, 2>{}, std::true_type{}) : run(std::integral_constant<int, 2>{}, std::false_type{});
    case 3:
      return full ? run(std::integral_constant<int, 3>{}, std::true_type{}) : run(std::integral_constant<int, 3>{}, std::false_type{});
    default:
      return full ? run(std::integral_constant<int, 4>{}, std::true_type{}) : run(std::integral_constant<int, 4>{}, std::false_type{});
  }
}

/// The channel blocks a depthwise kernel takes an output pixel's CO channels in, registers of 16:
/// blocks of 64 (full: true), then one of the 1 to 4 registers left, 16 (V - 1) < left <= 16 V
/// (full: false). Calls block(c0, left, std::integral_constant<int, V>, std::bool_constant<full>).
template <typename Block>
[[gnu::always_inline]] inline void for_channel_blocks(int64_t CO, Block block) {
  int64_t c0 = 0;
  for (; CO - c0 >= 64; c0 += 64) block(c0, int64_t{64}, std::integral_constant<int, 4>{}, std::true_type{});
  const int64_t left = CO - c0;
  if (left > 48) {
    block(c0, left, std::integral_constant<int, 4>{}, std::false_type{});
  } else if (left > 32) {
    block(c0, left, std::integral_constant<int, 3>{}, std::false_type{});
  } else if (left > 16) {
    block(c0, left, std::integral_constant<int, 2>{}, std::false_type{});
  } else if (left > 0) {
    block(c0, left, std::integral_constant<int, 1>{}, std::false_type{});
  }
}

/// A deconvolution's output pixels fall into stride_h x stride_w phases (an output row's
/// index modulo the vertical stride, a column's modulo the horizontal one); the pixels of one
/// phase are reached by the same filter taps. Deconvolutions of at most this many phases are
/// packed per phase (plan_f32).
constexpr uint64_t kMaxDeconvPhases = 64;

/// The filter taps (rows, or columns) k = 0..kernel - 1 that reach output phase `phase` of a
/// deconvolution ((phase + pad - k dilation) a multiple of stride), ascending, into k[]; returns
/// how many.
inline int64_t deconv_taps(int64_t phase, int64_t pad, int64_t kernel, int64_t dilation, int64_t stride, int64_t* k) {
  int64_t n = 0;
  for (int64_t t = 0; t < kernel; ++t) {
    const int64_t at = phase + pad - t * dilation;
    if (((at % stride) + stride) % stride == 0) k[n++] = t;
  }
  return n;
}

/// Filters of at most this many taps have their taps listed per output pixel (list_taps).
constexpr int64_t kMaxListedTaps = 64;

/// Lists the taps for_each_depthwise_tap visits for output pixel (oy, ox), in its order: the
/// input pixel's index in pixel[] and the filter tap's in tap[] (kMaxListedTaps each, at least);
/// returns how many. For filters of at most kMaxListedTaps taps.
inline int64_t list_taps(const xnn::ConvParams& c, int64_t H, int64_t W, int64_t oy, int64_t ox, int64_t* pixel, int64_t* tap) {
  int64_t count = 0;
  for_each_depthwise_tap(c, H, W, oy, ox, [&](int64_t p, int64_t k) {
    pixel[count] = p;
    tap[count++] = k;
  });
  return count;
}

/// The taps of a depthwise convolution's output pixels as element offsets into its NHWC image (C
/// channels) and its [taps][CO] filter, for filters of at most kMaxListedTaps taps (listed()).
/// The pixels whose window lies wholly inside the image, which most are, share one list: offsets
/// from the window's first pixel, in for_each_depthwise_tap's order; the others list theirs
/// (list_taps).
class PixelTaps {
 public:
  PixelTaps(const xnn::ConvParams& c, int64_t H, int64_t W, int64_t OH, int64_t OW, int64_t C, int64_t CO) : c_(c), H_(H), W_(W), C_(C), CO_(CO) {
    listed_ = int64_t{c.kernel_h} * c.kernel_w <= kMaxListedTaps;
    if (!listed_) return;
    const bool by_column = depthwise_by_column(c);
    for (uint32_t a = 0; a < (by_column ? c.kernel_w : c.kernel_h); ++a) {
      for (uint32_t b = 0; b < (by_column ? c.kernel_h : c.kernel_w); ++b) {
        const int64_t ky = by_column ? b : a, kx = by_column ? a : b;
        ky_[count_] = ky;
        kx_[count_] = kx;
        in_at_[count_] = (ky * c.dilation_h * W + kx * c.dilation_w) * C;
        w_at_[count_++] = (ky * c.kernel_w + kx) * CO;
      }
    }
    // ox * stride_w - padding_left >= 0 and ox * stride_w - padding_left + span <= W - 1.
    const int64_t sw = c.stride_w, pl = c.padding[3], span = int64_t{c.kernel_w - 1} * c.dilation_w;
    ox_begin_ = std::min<int64_t>(OW, (pl + sw - 1) / sw);
    ox_end_ = W - 1 - span + pl >= 0 ? std::min<int64_t>(OW, (W - 1 - span + pl) / sw + 1) : 0;
    ox_end_ = std::max(ox_end_, ox_begin_);
    const int64_t sh = c.stride_h, pt = c.padding[0], span_h = int64_t{c.kernel_h - 1} * c.dilation_h;
    oy_begin_ = std::min<int64_t>(OH, (pt + sh - 1) / sh);
    oy_end_ = H - 1 - span_h + pt >= 0 ? std::min<int64_t>(OH, (H - 1 - span_h + pt) / sh + 1) : 0;
    oy_end_ = std::max(oy_end_, oy_begin_);
  }

  /// True when the filter has at most kMaxListedTaps taps (visit may be called).
  bool listed() const { return listed_; }

  /// True when output pixel (oy, ox)'s window lies inside the image (a listed filter): its taps
  /// are the shared list, from image element origin(oy, ox).
  bool interior(int64_t oy, int64_t ox) const {
    const int64_t iy = oy * c_.stride_h - c_.padding[0];
    return ox >= ox_begin_ && ox < ox_end_ && iy >= 0 && iy + int64_t{c_.kernel_h - 1} * c_.dilation_h < H_;
  }
  /// The output columns whose windows lie inside the image's width: [columns_begin(),
  /// columns_end()).
  int64_t columns_begin() const { return ox_begin_; }
  int64_t columns_end() const { return ox_end_; }

  /// The output rows whose windows lie inside the image's height: [rows_begin(), rows_end()).
  int64_t rows_begin() const { return oy_begin_; }
  int64_t rows_end() const { return oy_end_; }

  /// Output pixel (oy, ox)'s taps inside the image, in for_each_depthwise_tap's order, as
  /// offsets from clipped_origin(oy, ox) (in_at, elements of the image) and filter offsets
  /// (w_at); returns how many (kMaxListedTaps at most). The pixels of a row between
  /// columns_begin() and columns_end() share them, and so do those of a column between
  /// rows_begin() and rows_end().
  int64_t clipped_taps(int64_t oy, int64_t ox, int64_t* in_at, int64_t* w_at) const {
    const int64_t top = oy * c_.stride_h - c_.padding[0], left = ox * c_.stride_w - c_.padding[3];
    const int64_t shift = ((first_inside(top, c_.kernel_h, c_.dilation_h, H_) - top) * W_ + first_inside(left, c_.kernel_w, c_.dilation_w, W_) - left) * C_;
    int64_t n = 0;
    for (int64_t t = 0; t < count_; ++t) {
      const int64_t iy = top + ky_[t] * c_.dilation_h, ix = left + kx_[t] * c_.dilation_w;
      if (iy < 0 || iy >= H_ || ix < 0 || ix >= W_) continue;
      in_at[n] = in_at_[t] - shift;
      w_at[n++] = w_at_[t];
    }
    return n;
  }
  /// The image element clipped_taps' offsets start from for output pixel (oy, ox): its window's
  /// first row and column inside the image (0 when its window misses the image).
  int64_t clipped_origin(int64_t oy, int64_t ox) const {
    const int64_t top = oy * c_.stride_h - c_.padding[0], left = ox * c_.stride_w - c_.padding[3];
    const int64_t iy = first_inside(top, c_.kernel_h, c_.dilation_h, H_), ix = first_inside(left, c_.kernel_w, c_.dilation_w, W_);
    return iy < H_ && ix < W_ ? (iy * W_ + ix) * C_ : 0;
  }
  int64_t origin(int64_t oy, int64_t ox) const { return ((oy * c_.stride_h - c_.padding[0]) * W_ + ox * c_.stride_w - c_.padding[3]) * C_; }

  /// Walks output rows [y0, y1) (row y of image y / OH) of a listed filter in runs of pixels that
  /// share one list of taps: each row's pixels between columns_begin() and columns_end(), then,
  /// in the rows between rows_begin() and rows_end(), the columns left and right of them; calls
  /// run(b, origin, step, in_at, w_at, taps, count, first, pixel_step) for each run (its first
  /// pixel's taps from image element origin of image b, the next pixels' `step` elements on; its
  /// output pixels first, first + pixel_step, ... counted over the whole output) and pixel(b, oy,
  /// ox) for every other pixel (visit takes it).
  template <typename Run, typename Pixel>
  void walk(int64_t OH, int64_t OW, int64_t y0, int64_t y1, Run run, Pixel pixel) const {
    int64_t in_at[kMaxListedTaps], w_at[kMaxListedTaps];
    for (int64_t y = y0; y < y1; ++y) {
      const int64_t b = y / OH, oy = y % OH;
      if (ox_end_ > ox_begin_) {
        const int64_t n = clipped_taps(oy, ox_begin_, in_at, w_at);
        run(b, clipped_origin(oy, ox_begin_), c_.stride_w * C_, in_at, w_at, n, ox_end_ - ox_begin_, y * OW + ox_begin_, int64_t{1});
      }
      if (oy >= oy_begin_ && oy < oy_end_) continue;  // its other pixels are in their columns' runs
      for (int64_t ox = 0; ox < ox_begin_; ++ox) pixel(b, oy, ox);
      for (int64_t ox = ox_end_; ox < OW; ++ox) pixel(b, oy, ox);
    }
    for (int64_t b = y0 / OH; b * OH < y1; ++b) {
      const int64_t r0 = std::max(y0, b * OH + oy_begin_), r1 = std::min(y1, b * OH + oy_end_);
      if (r1 <= r0) continue;
      auto column = [&](int64_t ox) {
        const int64_t n = clipped_taps(r0 - b * OH, ox, in_at, w_at);
        run(b, clipped_origin(r0 - b * OH, ox), c_.stride_h * W_ * C_, in_at, w_at, n, r1 - r0, r0 * OW + ox, OW);
      };
      for (int64_t ox = 0; ox < ox_begin_; ++ox) column(ox);
      for (int64_t ox = ox_end_; ox < OW; ++ox) column(ox);
    }
  }

  /// Calls f(origin, in_at, w_at, taps) for output pixel (oy, ox) of a listed filter: tap t reads
  /// image element origin + in_at[t] (and the next ones of its channels) and filter element
  /// w_at[t].
  template <typename F>
  void visit(int64_t oy, int64_t ox, F f) const {
    if (interior(oy, ox)) {
      f(origin(oy, ox), in_at_, w_at_, count_);
      return;
    }
    int64_t in_at[kMaxListedTaps], w_at[kMaxListedTaps];
    const int64_t taps = list_taps(c_, H_, W_, oy, ox, in_at, w_at);
    for (int64_t t = 0; t < taps; ++t) in_at[t] *= C_, w_at[t] *= CO_;
    f(int64_t{0}, in_at, w_at, taps);
  }

 private:
  // The first of a window's positions from `start` (taps `dilation` apart) inside [0, extent),
  // or extent when none is.
  static int64_t first_inside(int64_t start, int64_t taps, int64_t dilation, int64_t extent) {
    for (int64_t k = 0; k < taps; ++k) {
      const int64_t i = start + k * dilation;
      if (i >= 0 && i < extent) return i;
    }
    return extent;
  }
  const xnn::ConvParams& c_;
  int64_t H_, W_, C_, CO_;
  bool listed_ = false;
  int64_t count_ = 0;
  int64_t in_at_[kMaxListedTaps], w_at_[kMaxListedTaps], ky_[kMaxListedTaps], kx_[kMaxListedTaps];
  int64_t ox_begin_ = 0, ox_end_ = 0;  // output columns whose window lies inside the image's width
  int64_t oy_begin_ = 0, oy_end_ = 0;  // output rows whose window lies inside the image's height
};

/// For output row oy of a convolution over an H x W image with OW output columns: calls
/// tap(iy, off, ox0, ox1, k) for each filter tap k = ky * kernel_w + kx whose input row iy is
/// inside the image, row by row, with the output columns [ox0, ox1) whose input column
/// ox * stride_w + off lies inside it.
template <typename Tap>
void for_each_row_tap(const xnn::ConvParams& c, int64_t H, int64_t W, int64_t OW, int64_t oy, Tap tap) {
  const int64_t sw = c.stride_w;
  for (uint32_t ky = 0; ky < c.kernel_h; ++ky) {
    const int64_t iy = oy * c.stride_h - c.padding[0] + int64_t{ky} * c.dilation_h;
    if (iy < 0 || iy >= H) continue;
    for (uint32_t kx = 0; kx < c.kernel_w; ++kx) {
      const int64_t off = int64_t{kx} * c.dilation_w - c.padding[3];
      const int64_t ox0 = off >= 0 ? 0 : (-off + sw - 1) / sw;
      const int64_t ox1 = std::min(OW, W - off > 0 ? (W - off + sw - 1) / sw : 0);
      tap(iy, off, ox0, ox1, int64_t{ky} * c.kernel_w + kx);
    }
  }
}

/// Elements from a window's first pixel to each of its taps (tap ky * kernel_w + kx) in an NHWC
/// image of `width` pixels a row and C channels: offset[] holds kernel_h x kernel_w of them.
inline void window_tap_offsets(const xnn::ConvParams& c, int64_t width, int64_t C, int64_t* offset) {
  for (uint32_t ky = 0; ky < c.kernel_h; ++ky) {
    for (uint32_t kx = 0; kx < c.kernel_w; ++kx) offset[ky * c.kernel_w + kx] = (int64_t{ky} * c.dilation_h * width + int64_t{kx} * c.dilation_w) * C;
  }
}

/// The rows (or columns) of the padded input that a convolution's `out` windows touch, `stride`
/// apart and each (kernel - 1) x dilation + 1 long; at most the padded input's, as validated.
inline int64_t padded_extent(int64_t out, int64_t kernel, int64_t stride, int64_t dilation) {
  return (out - 1) * stride + (kernel - 1) * dilation + 1;
}

/// A 1x1 convolution with stride 1, no padding and one group: its input already is the im2col
/// matrix (and XNNPACK runs it as a fully connected GEMM).
inline bool pointwise_conv(const xnn::ConvParams& c) {
  return c.kernel_h == 1 && c.kernel_w == 1 && c.stride_h == 1 && c.stride_w == 1 && c.padding == std::array<uint32_t, 4>{} &&
         c.groups == 1;
}

/// The channels per pixel of a group an integer convolution's packed filter and rows hold: a
/// stem's 1 to 3 padded to 4 (zero filter integers on the padding), so that each window tap is a
/// whole group of 4 inputs and the windows are read in place (XNNPACK's kernels pad each tap's
/// channels too); otherwise the group's inputs.
inline int64_t int8_conv_channels(const xnn::ConvParams& c) {
  return c.groups == 1 && c.group_in < 4 && !pointwise_conv(c) ? 4 : int64_t{c.group_in};
}

}  // namespace etscope::runtime::xnnpack
