// max_pool2d_with_indices (+ backward), avg_pool2d, _adaptive_avg_pool2d over [N,]C,H,W
// contiguous tensors, float32 and float64. Indices are int64 offsets into each input plane
// (y * W + x), as ATen stores them.
#include <array>
#include <cmath>
#include <limits>
#include <type_traits>
#if defined(__AVX512F__)
#include <immintrin.h>
#endif

#include "kernels/register.h"
#include "kernels/util/half_via_float.h"
#include "kernels/util/kernel_util.h"
#include "kernels/util/lanes.h"

namespace etscope::runtime::kernels {
namespace {

struct PoolParams {
  int64_t planes = 0, h = 0, w = 0, oh = 0, ow = 0;
  int64_t kh = 1, kw = 1, sh = 1, sw = 1, ph = 0, pw = 0, dh = 1, dw = 1;
  bool ceil_mode = false;
};

// ATen's pooling_output_shape: floor or ceil division, and with ceil_mode the last window must
// start inside the input or its left padding.
int64_t pool_out_size(int64_t in, int64_t k, int64_t pad, int64_t stride, int64_t dil, bool ceil_mode) {
  const int64_t span = in + 2 * pad - dil * (k - 1) - 1 + (ceil_mode ? stride - 1 : 0);
  int64_t out = (span >= 0 ? span / stride : -((-span + stride - 1) / stride)) + 1;
  if (ceil_mode && (out - 1) * stride >= in + pad) --out;
  return out;
}

bool read_pool_list(KernelContext& ctx, Args args, size_t i, int64_t* a, int64_t* b, bool allow_empty, const char* op) {
  IntList l;
  if (!int_list_arg(ctx, args, i, &l, op)) return false;
  if (l.size == 0 && allow_empty) return true;  // stride [] means stride = kernel_size
  if (l.size != 1 && l.size != 2) {
    ctx.fail(ErrorCode::kInvalidArgument, "%s: argument %zu must have 1 or 2 items", op, i);
    return false;
  }
  *a = l[0];
  *b = l[l.size - 1];
  return true;
}

// Reads kernel_size, stride, padding (and dilation when dil_index >= 0) and checks them against
// the input's shape.
bool parse_pool(KernelContext& ctx, Args args, const TensorImpl& in, size_t first, int dil_index, bool ceil_mode,
                PoolParams* p, const char* op) {
  if (in.dim() != 3 && in.dim() != 4) {
    ctx.fail(ErrorCode::kInvalidArgument, "%s: expected a 3-D or 4-D input, got %d-D", op, in.dim());
    return false;
  }
  if (!read_pool_list(ctx, args, first, &p->kh, &p->kw, false, op)) return false;
  p->sh = p->kh, p->sw = p->kw;
  if (!read_pool_list(ctx, args, first + 1, &p->sh, &p->sw, true, op)) return false;
  if (!read_pool_list(ctx, args, first + 2, &p->ph, &p->pw, false, op)) return false;
  if (dil_index >= 0 && !read_pool_list(ctx, args, static_cast<size_t>(dil_index), &p->dh, &p->dw, false, op))
    return false;
  p->ceil_mode = ceil_mode;
  if (p->kh <= 0 || p->kw <= 0 || p->sh <= 0 || p->sw <= 0 || p->dh <= 0 || p->dw <= 0 || p->ph < 0 || p->pw < 0 ||
      p->ph > p->kh / 2 || p->pw > p->kw / 2) {  // padding at most half the kernel; no 2 * pad overflow
    ctx.fail(ErrorCode::kInvalidArgument, "%s: invalid kernel_size, stride, padding or dilation", op);
    return false;
  }
  const int r = in.dim();
  p->h = in.size(r - 2), p->w = in.size(r - 1);
  p->planes = in.size(r - 3) * (r == 4 ? in.size(0) : 1);
  // Hostile attributes (a kernel of 2^30 with dilation 2^40) must not overflow the window
  // arithmetic: the padded input, the window's extent, the stride and the window's area are
  // computed exactly first and must stay well inside int64.
  using Wide = __int128;
  constexpr Wide kLimit = Wide{1} << 58;
  for (auto [in_size, k, s, pad, dil] : {std::array<int64_t, 5>{p->h, p->kh, p->sh, p->ph, p->dh},
                                         std::array<int64_t, 5>{p->w, p->kw, p->sw, p->pw, p->dw}}) {
    if (Wide{in_size} + 2 * Wide{pad} + s + Wide{dil} * (k - 1) > kLimit) {
      ctx.fail(ErrorCode::kInvalidArgument, "%s: kernel_size, stride, padding or dilation out of range", op);
      return false;
    }
  }
  if (Wide{p->kh} * p->kw > kLimit) {
    ctx.fail(ErrorCode::kInvalidArgument, "%s: kernel_size out of range", op);
    return false;
  }
  p->oh = pool_out_size(p->h, p->kh, p->ph, p->sh, p->dh, ceil_mode);
  p->ow = pool_out_size(p->w, p->kw, p->pw, p->sw, p->dw, ceil_mode);
  if (p->oh <= 0 || p->ow <= 0) {
    ctx.fail(ErrorCode::kInvalidArgument, "%s: output size is too small", op);
    return false;
  }
  return true;
}

void out_shape(const TensorImpl& in, int64_t oh, int64_t ow, std::array<int64_t, 4>* s) {
  const int r = in.dim();
  for (int d = 0; d < r - 2; ++d) (*s)[static_cast<size_t>(d)] = in.size(d);
  (*s)[static_cast<size_t>(r - 2)] = oh;
  (*s)[static_cast<size_t>(r - 1)] = ow;
}

bool check_float(KernelContext& ctx, const char* op, std::initializer_list<const TensorImpl*> ts) {
  const ScalarType t0 = (*ts.begin())->dtype();
  for (const TensorImpl* t : ts) {
    if (t->dtype() != t0 || (t0 != ScalarType::kFloat && t0 != ScalarType::kDouble)) {
      ctx.fail(ErrorCode::kNotSupported, "%s: only float32 or float64 tensors of one dtype are supported", op);
      return false;
    }
  }
  return true;
}

// One output row of the 2x2/2 window, 16 outputs at a time, with the scalar loop's choices: the
// candidates in order (row 0 left, right, row 1 left, right), a later one taken when greater or
// NaN, none after a NaN; the index is the plane offset of the one taken. `base` is the offset of
// r0[0]. Returns how many outputs it wrote (all of them, or none without AVX-512: the rest take
// the scalar loop).
int64_t max_pool_2x2_row(const float* r0, const float* r1, int64_t w, int64_t base, int64_t ow, float* y,
                         int64_t* ind) {
#if defined(__AVX512F__)
  const __m512i even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
  const __m512i odd = _mm512_setr_epi32(1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31);
  const __m512i lane2 = _mm512_setr_epi64(0, 2, 4, 6, 8, 10, 12, 14);
  // n (1..16) outputs from ox: masked loads and stores past the row's end (a row of 4 or 8
  // outputs is one masked step instead of the branchy scalar loop).
  auto step = [&](int64_t ox, int64_t n) __attribute__((always_inline)) {
    const __mmask16 lo = first_lanes(2 * n), hi = first_lanes(2 * n - 16);
    const __m512 a0 = _mm512_maskz_loadu_ps(lo, r0 + 2 * ox), a1 = _mm512_maskz_loadu_ps(hi, r0 + 2 * ox + 16);
    const __m512 b0 = _mm512_maskz_loadu_ps(lo, r1 + 2 * ox), b1 = _mm512_maskz_loadu_ps(hi, r1 + 2 * ox + 16);
    const __m512 cand[4] = {_mm512_permutex2var_ps(a0, even, a1), _mm512_permutex2var_ps(a0, odd, a1),
                            _mm512_permutex2var_ps(b0, even, b1), _mm512_permutex2var_ps(b0, odd, b1)};
    __m512 best = _mm512_set1_ps(-std::numeric_limits<float>::infinity());
    __mmask16 right = 0, lower = 0, done = 0;  // which candidate: column bit, row bit; NaN taken
    for (int k = 0; k < 4; ++k) {
      const __mmask16 take = static_cast<__mmask16>(
          (_mm512_cmp_ps_mask(cand[k], best, _CMP_GT_OQ) | _mm512_cmp_ps_mask(cand[k], cand[k], _CMP_UNORD_Q)) & ~done);
      best = _mm512_mask_mov_ps(best, take, cand[k]);
      right = static_cast<__mmask16>((right & ~take) | ((k & 1) ? take : 0));
      lower = static_cast<__mmask16>((lower & ~take) | ((k & 2) ? take : 0));
      done = static_cast<__mmask16>(done | (take & _mm512_cmp_ps_mask(cand[k], cand[k], _CMP_UNORD_Q)));
    }
    const __mmask16 out = first_lanes(n);
    _mm512_mask_storeu_ps(y + ox, out, best);
    for (int half = 0; half < 2; ++half) {
      const __mmask8 r = static_cast<__mmask8>(right >> (8 * half)), l = static_cast<__mmask8>(lower >> (8 * half));
      __m512i idx = _mm512_add_epi64(_mm512_set1_epi64(base + 2 * (ox + 8 * half)), lane2);
      idx = _mm512_mask_add_epi64(idx, r, idx, _mm512_set1_epi64(1));
      idx = _mm512_mask_add_epi64(idx, l, idx, _mm512_set1_epi64(w));
      _mm512_mask_storeu_epi64(ind + ox + 8 * half, static_cast<__mmask8>(out >> (8 * half)), idx);
    }
  };
  int64_t ox = 0;
  for (; ox + 16 <= ow; ox += 16) step(ox, 16);
  if (ox < ow) step(ox, ow - ox);
  return ow;
#else
  (void)r0, (void)r1, (void)w, (void)base, (void)ow, (void)y, (void)ind;
  return 0;
#endif
}

// Output columns [ox0, ox1) of one output row whose windows lie inside the plane's width (every
// column tap inside), rows y0, y0 + dh, ... below y1 (inside the height), 16 outputs at a time,
// with the scalar loop's choices: taps row by row, column by column, a later one taken when
// greater or NaN, none after a NaN; the index the plane offset of the one taken (the first tap's
// when none is: a window of -inf or of no rows). Offsets in 32 bits: planes below 2^31 elements.
// Returns the first column it left (ox0 without AVX-512).
int64_t max_pool_interior_row(const float* xp, const PoolParams& p, int64_t y0, int64_t y1, int64_t ox0, int64_t ox1, float* y, int64_t* ind) {
#if defined(__AVX512F__)
  const __m512i lanes = _mm512_mullo_epi32(_mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
                                           _mm512_set1_epi32(static_cast<int32_t>(p.sw)));
  for (int64_t ox = ox0; ox < ox1; ox += 16) {
    const __mmask16 out = first_lanes(ox1 - ox);
    const int64_t x0 = ox * p.sw - p.pw;
    __m512 best = _mm512_set1_ps(-std::numeric_limits<float>::infinity());
    __m512i at = _mm512_add_epi32(lanes, _mm512_set1_epi32(static_cast<int32_t>(y0 * p.w + x0)));
    __mmask16 done = 0;
    for (int64_t yy = y0; yy < y1; yy += p.dh) {
      for (int64_t kx = 0; kx < p.kw; ++kx) {
        const int64_t first = yy * p.w + x0 + kx * p.dw;
        const __m512 v = _mm512_mask_i32gather_ps(_mm512_setzero_ps(), out, lanes, xp + first, 4);
        const __mmask16 nan = _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q);
        const __mmask16 take = static_cast<__mmask16>((_mm512_cmp_ps_mask(v, best, _CMP_GT_OQ) | nan) & ~done & out);
        best = _mm512_mask_mov_ps(best, take, v);
        at = _mm512_mask_add_epi32(at, take, lanes, _mm512_set1_epi32(static_cast<int32_t>(first)));
        done = static_cast<__mmask16>(done | (take & nan));
      }
    }
    _mm512_mask_storeu_ps(y + ox, out, best);
    _mm512_mask_storeu_epi64(ind + ox, static_cast<__mmask8>(out), _mm512_maskz_cvtepi32_epi64(0xff, _mm512_maskz_extracti64x4_epi64(0xff, at, 0)));
    _mm512_mask_storeu_epi64(ind + ox + 8, static_cast<__mmask8>(out >> 8), _mm512_maskz_cvtepi32_epi64(0xff, _mm512_maskz_extracti64x4_epi64(0xff, at, 1)));
  }
  return ox1;
#else
  (void)xp, (void)p, (void)y0, (void)y1, (void)ox1, (void)y, (void)ind;
  return ox0;
#endif
}

// max_pool2d_with_indices.out(self, kernel_size, stride, padding, dilation, ceil_mode, out, indices)
void max_pool2d_with_indices_out(KernelContext& ctx, Args args) {
  const char* op = "max_pool2d_with_indices.out";
  if (!check_arg_count(ctx, args, 8, op)) return;
  TensorImpl* in = tensor_arg(ctx, args, 0, op);
  TensorImpl* out = tensor_arg(ctx, args, 6, op);
  TensorImpl* idx = tensor_arg(ctx, args, 7, op);
  if (!in || !out || !idx || !require_contiguous(ctx, op, {in, out, idx}) || !check_float(ctx, op, {in, out})) return;
  if (idx->dtype() != ScalarType::kLong) {
    ctx.fail(ErrorCode::kNotSupported, "%s: indices must be int64", op);
    return;
  }
  PoolParams p;
  if (!parse_pool(ctx, args, *in, 1, 4, args[5]->tag == Tag::kBool && args[5]->scalar.b, &p, op)) return;
  std::array<int64_t, 4> s{};
  out_shape(*in, p.oh, p.ow, &s);
  const std::span<const int64_t> shape{s.data(), static_cast<size_t>(in->dim())};
  if (!resize_or_fail(ctx, out, shape, op) || !resize_or_fail(ctx, idx, shape, op)) return;
  dispatch_float(in->dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* x = in->data_as<T>();
    T* y = out->data_as<T>();
    int64_t* ind = idx->data_as<int64_t>();
    const bool simple = p.kh == 2 && p.kw == 2 && p.sh == 2 && p.sw == 2 && p.ph == 0 && p.pw == 0 && p.dh == 1 &&
                        p.dw == 1 && p.oh * 2 <= p.h && p.ow * 2 <= p.w;
    for (int64_t pl = 0; pl < p.planes; ++pl) {
      const T* xp = x + pl * p.h * p.w;
      T* yp = y + pl * p.oh * p.ow;
      int64_t* ip = ind + pl * p.oh * p.ow;
      if (simple) {
        // The common 2x2/2 window: no padding, every window inside the plane.
        for (int64_t oy = 0; oy < p.oh; ++oy) {
          const T* r0 = xp + 2 * oy * p.w;
          const T* r1 = r0 + p.w;
          int64_t ox = 0;
          if constexpr (std::is_same_v<T, float>) {
            ox = max_pool_2x2_row(r0, r1, p.w, 2 * oy * p.w, p.ow, yp + oy * p.ow, ip + oy * p.ow);
          }
          for (; ox < p.ow; ++ox) {
            const int64_t base = 2 * oy * p.w + 2 * ox;
            const T cand[4] = {r0[2 * ox], r0[2 * ox + 1], r1[2 * ox], r1[2 * ox + 1]};
            const int64_t offs[4] = {0, 1, p.w, p.w + 1};
            T best = -std::numeric_limits<T>::infinity();
            int64_t bi = base;
            for (int k = 0; k < 4; ++k) {
              if (cand[k] > best || std::isnan(cand[k])) {
                best = cand[k];
                bi = base + offs[k];
                if (std::isnan(best)) break;
              }
            }
            yp[oy * p.ow + ox] = best;
            ip[oy * p.ow + ox] = bi;
          }
        }
        continue;
      }
      // Output columns whose windows lie inside the width (vectorised for float planes below 2^31
      // elements; every other column, and the rest without AVX-512, one at a time).
      int64_t ox_lo = 0, ox_hi = 0;
      if constexpr (std::is_same_v<T, float>) {
        if (p.h * p.w < (int64_t{1} << 31)) {
          ox_lo = std::min(p.ow, (p.pw + p.sw - 1) / p.sw);
          ox_hi = std::max(ox_lo, std::min(p.ow, (p.w - 1 - (p.kw - 1) * p.dw + p.pw) / p.sw + 1));
        }
      }
      for (int64_t oy = 0; oy < p.oh; ++oy) {
        int64_t y0 = oy * p.sh - p.ph;
        const int64_t y1 = std::min(y0 + (p.kh - 1) * p.dh + 1, p.h);
        if (y0 < 0) y0 += (-y0 + p.dh - 1) / p.dh * p.dh;  // first tap inside the plane
        int64_t done_to = ox_lo;  // columns [ox_lo, done_to) vectorised
        if constexpr (std::is_same_v<T, float>) {
          if (ox_hi > ox_lo) done_to = max_pool_interior_row(xp, p, y0, y1, ox_lo, ox_hi, yp + oy * p.ow, ip + oy * p.ow);
        }
        for (int64_t ox = 0; ox < p.ow; ++ox) {
          if (ox == ox_lo && done_to > ox_lo) ox = done_to;
          if (ox >= p.ow) break;
          int64_t x0 = ox * p.sw - p.pw;
          const int64_t x1 = std::min(x0 + (p.kw - 1) * p.dw + 1, p.w);
          if (x0 < 0) x0 += (-x0 + p.dw - 1) / p.dw * p.dw;
          T best = -std::numeric_limits<T>::infinity();
          // A window wholly in the padding keeps ATen's first-tap index (when it is representable).
          int64_t bi = 0;
          if (__builtin_mul_overflow(y0, p.w, &bi) || __builtin_add_overflow(bi, x0, &bi)) bi = -1;
          for (int64_t yy = y0; yy < y1; yy += p.dh) {
            for (int64_t xx = x0; xx < x1; xx += p.dw) {
              const T v = xp[yy * p.w + xx];
              if (v > best || std::isnan(v)) {
                best = v;
                bi = yy * p.w + xx;
                if (std::isnan(v)) goto done;
              }
            }
          }
        done:
          yp[oy * p.ow + ox] = best;
          ip[oy * p.ow + ox] = bi;
        }
      }
    }
  });
}

// max_pool2d_with_indices_backward.grad_input(grad_output, self, kernel_size, stride, padding,
// dilation, ceil_mode, indices, grad_input): scatters each output gradient to its argmax.
void max_pool2d_with_indices_backward_out(KernelContext& ctx, Args args) {
  const char* op = "max_pool2d_with_indices_backward.grad_input";
  if (!check_arg_count(ctx, args, 9, op)) return;
  TensorImpl* go = tensor_arg(ctx, args, 0, op);
  TensorImpl* in = tensor_arg(ctx, args, 1, op);
  TensorImpl* idx = tensor_arg(ctx, args, 7, op);
  TensorImpl* gi = tensor_arg(ctx, args, 8, op);
  if (!go || !in || !idx || !gi || !require_contiguous(ctx, op, {go, in, idx, gi}) ||
      !check_float(ctx, op, {go, in, gi})) {
    return;
  }
  if (idx->dtype() != ScalarType::kLong) {
    ctx.fail(ErrorCode::kNotSupported, "%s: indices must be int64", op);
    return;
  }
  PoolParams p;
  if (!parse_pool(ctx, args, *in, 2, 5, args[6]->tag == Tag::kBool && args[6]->scalar.b, &p, op)) return;
  std::array<int64_t, 4> s{};
  out_shape(*in, p.oh, p.ow, &s);
  const std::span<const int64_t> shape{s.data(), static_cast<size_t>(in->dim())};
  if (go->dim() != in->dim() || idx->dim() != in->dim() ||
      !std::equal(shape.begin(), shape.end(), go->sizes().begin()) ||
      !std::equal(shape.begin(), shape.end(), idx->sizes().begin())) {
    ctx.fail(ErrorCode::kInvalidArgument, "%s: grad_output and indices must have the pooled shape", op);
    return;
  }
  if (!resize_or_fail(ctx, gi, in->sizes(), op)) return;
  dispatch_float(in->dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* dy = go->data_as<T>();
    const int64_t* ind = idx->data_as<int64_t>();
    T* dx = gi->data_as<T>();
    std::fill(dx, dx + gi->numel(), T(0));
    const int64_t plane = p.h * p.w, oplane = p.oh * p.ow;
    for (int64_t pl = 0; pl < p.planes; ++pl) {
      T* dxp = dx + pl * plane;
      const T* dyp = dy + pl * oplane;
      const int64_t* ip = ind + pl * oplane;
      for (int64_t i = 0; i < oplane; ++i) {
        const int64_t j = ip[i];
        if (j >= 0 && j < plane) dxp[j] += dyp[i];
      }
    }
  });
}

// avg_pool2d.out(self, kernel_size, stride, padding, ceil_mode, count_include_pad,
// divisor_override?, out)
void avg_pool2d_out(KernelContext& ctx, Args args) {
  const char* op = "avg_pool2d.out";
  if (!check_arg_count(ctx, args, 8, op)) return;
  TensorImpl* in = tensor_arg(ctx, args, 0, op);
  TensorImpl* out = tensor_arg(ctx, args, 7, op);
  if (!in || !out || !require_contiguous(ctx, op, {in, out}) || !check_float(ctx, op, {in, out})) return;
  PoolParams p;
  if (!parse_pool(ctx, args, *in, 1, -1, args[4]->tag == Tag::kBool && args[4]->scalar.b, &p, op)) return;
  const bool include_pad = args[5]->tag == Tag::kBool ? args[5]->scalar.b : true;
  const int64_t divisor = args[6]->tag == Tag::kInt ? args[6]->scalar.i : 0;
  if (args[6]->tag == Tag::kInt && divisor == 0) {
    ctx.fail(ErrorCode::kInvalidArgument, "%s: divisor_override must be non-zero", op);
    return;
  }
  std::array<int64_t, 4> s{};
  out_shape(*in, p.oh, p.ow, &s);
  if (!resize_or_fail(ctx, out, {s.data(), static_cast<size_t>(in->dim())}, op)) return;
  dispatch_float(in->dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* x = in->data_as<T>();
    T* y = out->data_as<T>();
    for (int64_t pl = 0; pl < p.planes; ++pl) {
      const T* xp = x + pl * p.h * p.w;
      T* yp = y + pl * p.oh * p.ow;
      for (int64_t oy = 0; oy < p.oh; ++oy) {
        for (int64_t ox = 0; ox < p.ow; ++ox) {
          int64_t y0 = oy * p.sh - p.ph, x0 = ox * p.sw - p.pw;
          int64_t y1 = std::min(y0 + p.kh, p.h + p.ph), x1 = std::min(x0 + p.kw, p.w + p.pw);
          const int64_t pool_size = (y1 - y0) * (x1 - x0);
          y0 = std::max<int64_t>(y0, 0), x0 = std::max<int64_t>(x0, 0);
          y1 = std::min(y1, p.h), x1 = std::min(x1, p.w);
          if (y0 >= y1 || x0 >= x1) {
            yp[oy * p.ow + ox] = T(0);
            continue;
          }
          T sum = 0;
          for (int64_t yy = y0; yy < y1; ++yy) {
            for (int64_t xx = x0; xx < x1; ++xx) sum += xp[yy * p.w + xx];
          }
          const int64_t div = divisor != 0 ? divisor : include_pad ? pool_size : (y1 - y0) * (x1 - x0);
          yp[oy * p.ow + ox] = sum / static_cast<T>(div);
        }
      }
    }
  });
}

// _adaptive_avg_pool2d.out(self, output_size, out): window [floor(o*in/out), ceil((o+1)*in/out)).
void adaptive_avg_pool2d_out(KernelContext& ctx, Args args) {
  const char* op = "_adaptive_avg_pool2d.out";
  if (!check_arg_count(ctx, args, 3, op)) return;
  TensorImpl* in = tensor_arg(ctx, args, 0, op);
  TensorImpl* out = tensor_arg(ctx, args, 2, op);
  if (!in || !out || !require_contiguous(ctx, op, {in, out}) || !check_float(ctx, op, {in, out})) return;
  int64_t oh = 0, ow = 0;
  if (!read_pool_list(ctx, args, 1, &oh, &ow, false, op)) return;
  if ((in->dim() != 3 && in->dim() != 4) || oh <= 0 || ow <= 0) {
    ctx.fail(ErrorCode::kInvalidArgument, "%s: expected a 3-D or 4-D input and a positive output_size", op);
    return;
  }
  const int r = in->dim();
  const int64_t h = in->size(r - 2), w = in->size(r - 1);
  if (h == 0 || w == 0) {
    ctx.fail(ErrorCode::kInvalidArgument, "%s: input plane is empty", op);
    return;
  }
  std::array<int64_t, 4> s{};
  out_shape(*in, oh, ow, &s);
  if (!resize_or_fail(ctx, out, {s.data(), static_cast<size_t>(r)}, op)) return;
  const int64_t planes = in->numel() / (h * w);
  dispatch_float(in->dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* x = in->data_as<T>();
    T* y = out->data_as<T>();
    for (int64_t pl = 0; pl < planes; ++pl) {
      const T* xp = x + pl * h * w;
      for (int64_t oy = 0; oy < oh; ++oy) {
        const int64_t y0 = oy * h / oh, y1 = ((oy + 1) * h + oh - 1) / oh;
        for (int64_t ox = 0; ox < ow; ++ox) {
          const int64_t x0 = ox * w / ow, x1 = ((ox + 1) * w + ow - 1) / ow;
          T sum = 0;
          for (int64_t yy = y0; yy < y1; ++yy) {
            for (int64_t xx = x0; xx < x1; ++xx) sum += xp[yy * w + xx];
          }
          y[(pl * oh + oy) * ow + ox] = sum / static_cast<T>((y1 - y0) * (x1 - x0));
        }
      }
    }
  });
}

}  // namespace

void register_pool_kernels(KernelRegistry& r) {
  r.add("aten::max_pool2d_with_indices.out", half_kernel<max_pool2d_with_indices_out>(kFloatDtypes));
  r.add("aten::max_pool2d_with_indices_backward.grad_input", half_kernel<max_pool2d_with_indices_backward_out>(kFloatDtypes));
  r.add("aten::avg_pool2d.out", half_kernel<avg_pool2d_out>(kFloatDtypes));
  r.add("aten::_adaptive_avg_pool2d.out", half_kernel<adaptive_avg_pool2d_out>(kFloatDtypes));
}

}  // namespace etscope::runtime::kernels
