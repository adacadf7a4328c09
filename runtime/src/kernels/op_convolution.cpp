// convolution, convolution_backward: 1-D (NCL, run as 2-D with a height of 1) and 2-D (NCHW), groups (depthwise included), stride, padding,
// dilation; float32 and float64. Transposed convolution is not supported.
//
// The general path lowers each (batch, group) to one GEMM over an im2col buffer; 1x1 stride-1
// unpadded convolutions skip im2col (the input already is the column matrix). Depthwise
// convolutions (one input channel per group) copy each input plane into a zero-padded buffer and
// run direct loops over output rows, 16 outputs to a vector, summing the taps as ExecuTorch's
// portable kernel does (so their values are ExecuTorch's bit for bit). All buffers, including the GEMM's packing
// panels, come from the kernel's scratch, sized at load time: nothing is allocated while running.
//
// Sections: parameters (ConvParams, parse_conv) - im2col / col2im - depthwise forward and
// backward - scratch layout - convolution.out - convolution_backward.out - registration.
#include <algorithm>
#include <type_traits>
#if defined(__AVX512F__)
#include <immintrin.h>
#endif

#include "kernels/register.h"
#include "kernels/util/half_via_float.h"
#include "kernels/util/gemm.h"
#include "kernels/util/kernel_util.h"
#include "kernels/util/lanes.h"

namespace etscope::runtime::kernels {
namespace {

struct ConvParams {
  int64_t n = 0, c = 0, h = 0, w = 0;  // input
  int64_t oc = 0, kh = 0, kw = 0;      // weight [oc, c / groups, kh, kw]
  int64_t sh = 1, sw = 1, ph = 0, pw = 0, dh = 1, dw = 1;
  int64_t groups = 1;
  int64_t oh = 0, ow = 0;
  int spatial = 2;  // 1 for NCL inputs: h, kh, sh, dh are 1 and ph 0

  // The output's shape: [n, oc, oh, ow] or, for 1-D, [n, oc, ow].
  int rank() const { return spatial + 2; }
  void output_sizes(int64_t* sizes) const {
    sizes[0] = n, sizes[1] = oc;
    if (spatial == 1) {
      sizes[2] = ow;
    } else {
      sizes[2] = oh, sizes[3] = ow;
    }
  }

  int64_t cg() const { return c / groups; }
  int64_t ocg() const { return oc / groups; }
  int64_t k() const { return cg() * kh * kw; }
  int64_t ohw() const { return oh * ow; }
  // The input plane already is the im2col matrix.
  bool pointwise() const { return kh == 1 && kw == 1 && sh == 1 && sw == 1 && ph == 0 && pw == 0; }
  bool depthwise() const { return groups > 1 && cg() == 1; }
};

// Reads a one- or two-element int list (or an Int) without a context; false on other kinds.
bool read_pair(const EValue& v, int64_t* a, int64_t* b) {
  if (v.tag == Tag::kInt) {
    *a = *b = v.scalar.i;
    return true;
  }
  if (v.tag != Tag::kIntList || v.int_list.empty() || v.int_list.size() > 2) return false;
  *a = v.int_list[0]->scalar.i;
  *b = v.int_list[v.int_list.size() - 1]->scalar.i;
  return true;
}

// Checks the sizes `p` describes (input plane, kernel, stride, padding, dilation, groups) and
// computes its output plane. Hostile shapes and attributes can make the window and scratch
// arithmetic overflow 64 bits: every size derived from them (padded planes, window extents, the
// im2col matrix and its bytes) is computed exactly first and must stay well inside int64.
const char* finish_conv(ConvParams* p) {
  if (p->kh <= 0 || p->kw <= 0) return "the weight's kernel sizes must be positive";
  if (p->sh <= 0 || p->sw <= 0 || p->dh <= 0 || p->dw <= 0 || p->ph < 0 || p->pw < 0) {
    return "stride and dilation must be positive and padding non-negative";
  }
  if (p->groups <= 0 || p->c % p->groups != 0 || p->oc % p->groups != 0) {
    return "input channels, weight shape and groups disagree";
  }
  using Wide = __int128;
  constexpr Wide kLimit = Wide{1} << 58;
  const Wide padded_h = Wide{p->h} + 2 * Wide{p->ph}, padded_w = Wide{p->w} + 2 * Wide{p->pw};
  const Wide ext_h = Wide{p->dh} * (p->kh - 1) + 1, ext_w = Wide{p->dw} * (p->kw - 1) + 1;
  if (padded_h > kLimit || padded_w > kLimit || ext_h > kLimit || ext_w > kLimit || p->sh > kLimit ||
      p->sw > kLimit || padded_h * padded_w > kLimit) {
    return "sizes, padding or dilation out of range";
  }
  if (padded_h < ext_h || padded_w < ext_w) return "kernel is larger than the padded input";
  const Wide out_h = (padded_h - ext_h) / p->sh + 1, out_w = (padded_w - ext_w) / p->sw + 1;
  const Wide taps = Wide{p->c / p->groups} * p->kh * p->kw;
  if (taps > kLimit || out_h * out_w > kLimit || taps * out_h * out_w > kLimit) {
    return "the im2col matrix of this convolution is out of range";
  }
  p->oh = static_cast<int64_t>(out_h);
  p->ow = static_cast<int64_t>(out_w);
  return nullptr;
}

// Fills `p` from the input and weight tensors and the five arguments starting at args[first]
// (stride, padding, dilation, transposed, output_padding) plus groups at args[first + 5].
// Returns nullptr on success or a description of the problem.
//
// A transposed convolution is the adjoint of the ordinary one (the input gradient of a forward
// convolution): with input [N, Cin, H, W] and weight [Cin, Cout / groups, kh, kw] it produces
// [N, Cout, OH, OW], OH = (H - 1) * sh - 2 * ph + dh * (kh - 1) + output_padding + 1. `p` then
// describes that forward convolution, from the output plane (c = Cout, h = OH) to the input
// plane (oc = Cin, oh = H), and `*transposed` is set.
const char* parse_conv(const TensorImpl& in, const TensorImpl& weight, Args args, size_t first, ConvParams* p,
                       bool* transposed = nullptr) {
  if (args.size() < first + 6) return "too few arguments";
  if (in.dim() != weight.dim() || (in.dim() != 3 && in.dim() != 4)) {
    return "input and weight must both be 3-D (NCL) or 4-D (NCHW)";
  }
  const bool t = args[first + 3]->tag == Tag::kBool && args[first + 3]->scalar.b;
  if (t && transposed == nullptr) return "transposed convolution has no backward kernel here";
  if (transposed != nullptr) *transposed = t;
  if (!read_pair(*args[first], &p->sh, &p->sw) || !read_pair(*args[first + 1], &p->ph, &p->pw) ||
      !read_pair(*args[first + 2], &p->dh, &p->dw)) {
    return "stride, padding and dilation must be int lists of 1 or 2 items";
  }
  int64_t oph = 0, opw = 0;
  if (t && !read_pair(*args[first + 4], &oph, &opw)) return "output_padding must be an int list of 1 or 2 items";
  if (args[first + 5]->tag != Tag::kInt) return "groups must be an int";
  p->groups = args[first + 5]->scalar.i;
  const bool one_d = in.dim() == 3;
  const int64_t in_h = one_d ? 1 : in.size(2), in_w = in.size(in.dim() - 1);
  p->n = in.size(0);
  p->kh = one_d ? 1 : weight.size(2);
  p->kw = weight.size(weight.dim() - 1);
  if (one_d) {
    // A 1-D convolution is a 2-D one over a plane of height 1.
    p->spatial = 1;
    p->sh = 1, p->ph = 0, p->dh = 1, oph = 0;
  }
  if (!t) {
    p->c = in.size(1), p->oc = weight.size(0), p->h = in_h, p->w = in_w;
    if (p->groups > 0 && (p->c % p->groups != 0 || weight.size(1) != p->c / p->groups)) {
      return "input channels, weight shape and groups disagree";
    }
    return finish_conv(p);
  }
  // Transposed: the output plane from the input plane, then the forward convolution it is the
  // adjoint of. ATen requires output_padding below the stride or the dilation.
  if (p->groups <= 0 || weight.size(0) != in.size(1)) return "input channels, weight shape and groups disagree";
  if (oph < 0 || opw < 0 || (oph >= p->sh && oph >= p->dh) || (opw >= p->sw && opw >= p->dw)) {
    return "output_padding must be non-negative and smaller than either stride or dilation";
  }
  if (p->sh <= 0 || p->sw <= 0 || p->dh <= 0 || p->dw <= 0 || p->ph < 0 || p->pw < 0 || p->kh <= 0 || p->kw <= 0) {
    return "stride and dilation must be positive and padding non-negative";
  }
  using Wide = __int128;
  constexpr Wide kLimit = Wide{1} << 58;
  if (p->sh > kLimit || p->sw > kLimit || p->dh > kLimit || p->dw > kLimit || p->kh > kLimit || p->kw > kLimit ||
      p->ph > kLimit || p->pw > kLimit) {
    return "sizes, padding or dilation out of range";
  }
  const Wide out_h = (Wide{in_h} - 1) * p->sh - 2 * Wide{p->ph} + Wide{p->dh} * (p->kh - 1) + oph + 1;
  const Wide out_w = (Wide{in_w} - 1) * p->sw - 2 * Wide{p->pw} + Wide{p->dw} * (p->kw - 1) + opw + 1;
  if (out_h <= 0 || out_w <= 0 || out_h > kLimit || out_w > kLimit) return "output size is out of range";
  if (Wide{weight.size(1)} * p->groups > kLimit) return "input channels, weight shape and groups disagree";
  p->c = weight.size(1) * p->groups, p->oc = in.size(1);
  p->h = static_cast<int64_t>(out_h), p->w = static_cast<int64_t>(out_w);
  if (const char* err = finish_conv(p)) return err;
  // output_padding only adds rows the forward convolution never reaches.
  if (p->oh != in_h || p->ow != in_w) return "output_padding does not fit the stride";
  return nullptr;
}

// Output columns [lo, hi) whose input column ox * s + off lies inside [0, w).
inline void valid_range(int64_t off, int64_t s, int64_t w, int64_t ow, int64_t* lo, int64_t* hi) {
  *lo = off >= 0 ? 0 : (-off + s - 1) / s;
  *hi = w - off <= 0 ? 0 : std::min(ow, (w - off + s - 1) / s);
  if (*lo > *hi) *lo = *hi;
}

// col[(ci * kh + ki) * kw + kj][oy * ow + ox] = in[ci][oy * sh - ph + ki * dh][ox * sw - pw + kj * dw]
template <typename T>
void im2col(const ConvParams& p, const T* in, T* col) {
  const int64_t ohw = p.ohw();
  for (int64_t ci = 0; ci < p.cg(); ++ci) {
    const T* plane = in + ci * p.h * p.w;
    for (int64_t ki = 0; ki < p.kh; ++ki) {
      for (int64_t kj = 0; kj < p.kw; ++kj) {
        T* dst = col + ((ci * p.kh + ki) * p.kw + kj) * ohw;
        const int64_t off = kj * p.dw - p.pw;
        int64_t lo, hi;
        valid_range(off, p.sw, p.w, p.ow, &lo, &hi);
        for (int64_t oy = 0; oy < p.oh; ++oy) {
          T* d = dst + oy * p.ow;
          const int64_t iy = oy * p.sh - p.ph + ki * p.dh;
          if (iy < 0 || iy >= p.h) {
            std::fill(d, d + p.ow, T(0));
            continue;
          }
          const T* row = plane + iy * p.w + off;
          std::fill(d, d + lo, T(0));
          if (p.sw == 1) {
            std::copy(row + lo, row + hi, d + lo);
          } else {
            for (int64_t ox = lo; ox < hi; ++ox) d[ox] = row[ox * p.sw];
          }
          std::fill(d + hi, d + p.ow, T(0));
        }
      }
    }
  }
}

// The adjoint of im2col: in[...] += col[...]; `in` must be zeroed first.
template <typename T>
void col2im(const ConvParams& p, const T* col, T* in) {
  const int64_t ohw = p.ohw();
  for (int64_t ci = 0; ci < p.cg(); ++ci) {
    T* plane = in + ci * p.h * p.w;
    for (int64_t ki = 0; ki < p.kh; ++ki) {
      for (int64_t kj = 0; kj < p.kw; ++kj) {
        const T* src = col + ((ci * p.kh + ki) * p.kw + kj) * ohw;
        const int64_t off = kj * p.dw - p.pw;
        int64_t lo, hi;
        valid_range(off, p.sw, p.w, p.ow, &lo, &hi);
        for (int64_t oy = 0; oy < p.oh; ++oy) {
          const int64_t iy = oy * p.sh - p.ph + ki * p.dh;
          if (iy < 0 || iy >= p.h) continue;
          T* row = plane + iy * p.w + off;
          const T* s = src + oy * p.ow;
          if (p.sw == 1) {
            for (int64_t ox = lo; ox < hi; ++ox) row[ox] += s[ox];
          } else {
            for (int64_t ox = lo; ox < hi; ++ox) row[ox * p.sw] += s[ox];
          }
        }
      }
    }
  }
}

// One output row of a depthwise convolution read from a zero-padded input plane (so no bounds
// checks remain): y[i] = (sum over taps (ki, kj) in order, from zero, of w[ki][kj] * x) + bias, each
// product and sum rounded (this file is compiled without fused multiply-adds): ExecuTorch's
// portable kernel's arithmetic. A padding tap adds a zero product, which leaves the sum as it was
// (the sum is never -0), just as ExecuTorch skipping the tap does. The input of output i and tap
// (ki, kj) is r[ki * row_step + i * s + kj * d].
template <typename T>
void depthwise_row(T* __restrict y, const T* r, int64_t row_step, const T* __restrict w, T bias, int64_t n, int64_t kh,
                   int64_t kw, int64_t s, int64_t d) {
  int64_t i = 0;
#if defined(__AVX512F__)
  if constexpr (std::is_same_v<T, float>) {
    if (s == 1 || s == 2) {
      const __m512i even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
      for (; i < n; i += 16) {
        const int64_t lanes = std::min<int64_t>(16, n - i);
        const __mmask16 m = first_lanes(lanes);
        // Stride 2 reads 2 * lanes - 1 elements from two vectors (masked: nothing past the row).
        const int64_t span = 2 * lanes - 1;
        const __mmask16 m0 = first_lanes(span);
        const __mmask16 m1 = first_lanes(span - 16);
        __m512 acc = _mm512_setzero_ps();
        for (int64_t ki = 0; ki < kh; ++ki) {
          for (int64_t kj = 0; kj < kw; ++kj) {
            const float* x = r + ki * row_step + i * s + kj * d;
            __m512 v;
            if (s == 1) {
              v = _mm512_maskz_loadu_ps(m, x);
            } else {
              v = _mm512_permutex2var_ps(_mm512_maskz_loadu_ps(m0, x), even, _mm512_maskz_loadu_ps(m1, x + 16));
            }
            acc = _mm512_add_ps(acc, _mm512_mul_ps(_mm512_set1_ps(w[ki * kw + kj]), v));
          }
        }
        _mm512_mask_storeu_ps(y + i, m, _mm512_add_ps(acc, _mm512_set1_ps(bias)));
      }
      return;
    }
  }
#endif
  for (; i < n; ++i) {
    T acc = T(0);
    for (int64_t ki = 0; ki < kh; ++ki) {
      for (int64_t kj = 0; kj < kw; ++kj) acc += w[ki * kw + kj] * r[ki * row_step + i * s + kj * d];
    }
    y[i] = acc + bias;
  }
}

template <typename T>
void axpy_row(T* __restrict y, const T* __restrict x, T a, int64_t n, int64_t s) {
  if (s == 1) {
    for (int64_t i = 0; i < n; ++i) y[i] += a * x[i];
  } else {
    for (int64_t i = 0; i < n; ++i) y[i] += a * x[i * s];
  }
}

// Bytes of the zero-padded input plane the depthwise path keeps in scratch.
size_t depthwise_scratch_bytes(const ConvParams& p, size_t elem) {
  return static_cast<size_t>((p.h + 2 * p.ph) * (p.w + 2 * p.pw)) * elem;
}

// Depthwise (one input channel per group): out channel o reads input channel o / multiplier.
template <typename T>
void depthwise_forward(const ConvParams& p, const T* in, const T* weight, const T* bias, T* out, T* padded) {
  const int64_t mult = p.ocg();
  const int64_t pw_ = p.w + 2 * p.pw, ph_ = p.h + 2 * p.ph;
  std::fill(padded, padded + ph_ * pw_, T(0));
  for (int64_t b = 0; b < p.n; ++b) {
    for (int64_t ci = 0; ci < p.c; ++ci) {
      const T* plane = in + (b * p.c + ci) * p.h * p.w;
      for (int64_t y = 0; y < p.h; ++y)
        std::copy(plane + y * p.w, plane + (y + 1) * p.w, padded + (y + p.ph) * pw_ + p.pw);
      for (int64_t m = 0; m < mult; ++m) {
        const int64_t o = ci * mult + m;
        const T* wk = weight + o * p.kh * p.kw;
        const T bv = bias != nullptr ? bias[o] : T(0);
        T* op = out + (b * p.oc + o) * p.ohw();
        for (int64_t oy = 0; oy < p.oh; ++oy) {
          depthwise_row(op + oy * p.ow, padded + oy * p.sh * pw_, p.dh * pw_, wk, bv, p.ow, p.kh, p.kw, p.sw, p.dw);
        }
      }
    }
  }
}

// sum of a[i] * b[i * s], in 8 independent partial sums so the loop vectorises without
// reassociation flags.
template <typename T>
T dot(const T* __restrict a, const T* __restrict b, int64_t n, int64_t s) {
  T part[8] = {};
  int64_t i = 0;
  if (s == 1) {
    for (; i + 8 <= n; i += 8) {
      for (int l = 0; l < 8; ++l) part[l] += a[i + l] * b[i + l];
    }
  } else {
    for (; i + 8 <= n; i += 8) {
      for (int l = 0; l < 8; ++l) part[l] += a[i + l] * b[(i + l) * s];
    }
  }
  T sum = ((part[0] + part[1]) + (part[2] + part[3])) + ((part[4] + part[5]) + (part[6] + part[7]));
  for (; i < n; ++i) sum += a[i] * b[i * s];
  return sum;
}

// Depthwise backward on zero-padded planes held in scratch (`xpad` and `gpad`, one padded plane
// each): grad_weight taps are dot products of output-gradient rows with shifted input rows, and
// grad_input accumulates the output gradient scattered back through each tap.
template <typename T>
void depthwise_backward(const ConvParams& p, const T* dy, const T* x, const T* weight, T* dw, T* dx, T* xpad, T* gpad) {
  const int64_t mult = p.ocg();
  const int64_t pw_ = p.w + 2 * p.pw, ph_ = p.h + 2 * p.ph;
  if (dw != nullptr) {
    std::fill(dw, dw + p.oc * p.kh * p.kw, T(0));
    std::fill(xpad, xpad + ph_ * pw_, T(0));
  }
  for (int64_t b = 0; b < p.n; ++b) {
    for (int64_t ci = 0; ci < p.c; ++ci) {
      if (dw != nullptr) {
        const T* plane = x + (b * p.c + ci) * p.h * p.w;
        for (int64_t y = 0; y < p.h; ++y)
          std::copy(plane + y * p.w, plane + (y + 1) * p.w, xpad + (y + p.ph) * pw_ + p.pw);
      }
      if (dx != nullptr) std::fill(gpad, gpad + ph_ * pw_, T(0));
      for (int64_t m = 0; m < mult; ++m) {
        const int64_t o = ci * mult + m;
        const T* g = dy + (b * p.oc + o) * p.ohw();
        for (int64_t ki = 0; ki < p.kh; ++ki) {
          for (int64_t kj = 0; kj < p.kw; ++kj) {
            const int64_t tap = ki * p.kw + kj;
            const int64_t shift = ki * p.dh * pw_ + kj * p.dw;
            if (dw != nullptr) {
              T acc = 0;
              for (int64_t oy = 0; oy < p.oh; ++oy)
                acc += dot(g + oy * p.ow, xpad + oy * p.sh * pw_ + shift, p.ow, p.sw);
              dw[o * p.kh * p.kw + tap] += acc;
            }
            if (dx != nullptr) {
              const T wv = weight[o * p.kh * p.kw + tap];
              for (int64_t oy = 0; oy < p.oh; ++oy) {
                T* grow = gpad + oy * p.sh * pw_ + shift;
                const T* src = g + oy * p.ow;
                if (p.sw == 1) {
                  axpy_row(grow, src, wv, p.ow, 1);
                } else {
                  for (int64_t ox = 0; ox < p.ow; ++ox) grow[ox * p.sw] += wv * src[ox];
                }
              }
            }
          }
        }
      }
      if (dx != nullptr) {
        T* plane = dx + (b * p.c + ci) * p.h * p.w;
        for (int64_t y = 0; y < p.h; ++y) {
          const T* row = gpad + (y + p.ph) * pw_ + p.pw;
          std::copy(row, row + p.w, plane + y * p.w);
        }
      }
    }
  }
}

// Scratch layout of the GEMM paths: [im2col buffer (none when pointwise) | GEMM workspace].
size_t col_bytes(const ConvParams& p, size_t elem) {
  return p.pointwise() ? 0 : align64(static_cast<size_t>(p.k() * p.ohw()) * elem);
}
size_t forward_scratch_bytes(const ConvParams& p, size_t elem) {
  if (p.depthwise()) return depthwise_scratch_bytes(p, elem);
  return col_bytes(p, elem) + gemm_workspace_bytes(p.ocg(), p.ohw(), p.k(), elem);
}
size_t backward_scratch_bytes(const ConvParams& p, size_t elem) {
  if (p.depthwise()) return 2 * depthwise_scratch_bytes(p, elem);
  return col_bytes(p, elem) + std::max(gemm_workspace_bytes(p.ocg(), p.k(), p.ohw(), elem),
                                       gemm_workspace_bytes(p.k(), p.ohw(), p.ocg(), elem));
}

bool same_float_dtype(KernelContext& ctx, const char* name, std::initializer_list<const TensorImpl*> ts) {
  const ScalarType t0 = (*ts.begin())->dtype();
  for (const TensorImpl* t : ts) {
    if (t != nullptr && (t->dtype() != t0 || (t0 != ScalarType::kFloat && t0 != ScalarType::kDouble))) {
      ctx.fail(ErrorCode::kNotSupported, "%s: only float32 or float64 tensors of one dtype are supported", name);
      return false;
    }
  }
  return true;
}

bool scratch_ok(KernelContext& ctx, const char* name, size_t need) {
  if (ctx.scratch().size() < need) {
    ctx.fail(ErrorCode::kInvalidArgument, "%s: needs %zu bytes of scratch, has %zu (shapes grew past the plan?)", name,
             need, ctx.scratch().size());
    return false;
  }
  return true;
}

// convolution.out(input, weight, bias?, stride, padding, dilation, transposed, output_padding,
// groups, out)
// A transposed convolution keeps the column matrix W^T x [k, H * W] of its forward twin (none
// when pointwise: the product is the output) and the GEMM's workspace.
size_t transposed_scratch_bytes(const ConvParams& p, size_t elem) {
  return col_bytes(p, elem) + gemm_workspace_bytes(p.k(), p.ohw(), p.ocg(), elem);
}

size_t convolution_scratch(Args args) {
  if (args.size() < 10 || !args[0]->is_tensor() || !args[1]->is_tensor() || !args[0]->tensor || !args[1]->tensor)
    return 0;
  ConvParams p;
  bool transposed = false;
  if (parse_conv(*args[0]->tensor, *args[1]->tensor, args, 3, &p, &transposed) != nullptr) return 0;
  const size_t elem = args[0]->tensor->element_size();
  return transposed ? transposed_scratch_bytes(p, elem) : forward_scratch_bytes(p, elem);
}

// The transposed convolution: per batch and group, col [k, H*W] = W_g^T [k, Cin/g] * x_g, then
// the output plane is the col2im of col (the adjoint of the forward convolution's im2col), plus
// the bias per output channel.
template <typename T>
void transposed_forward(const ConvParams& p, const T* x, const T* wt, const T* bs, T* y, T* col, void* workspace) {
  const int64_t ohw = p.ohw(), k = p.k(), cg = p.cg(), ocg = p.ocg(), plane = p.h * p.w;
  for (int64_t b = 0; b < p.n; ++b) {
    for (int64_t g = 0; g < p.groups; ++g) {
      const T* xg = x + (b * p.oc + g * ocg) * ohw;
      T* yg = y + (b * p.c + g * cg) * plane;
      if (p.pointwise()) {
        gemm(true, false, k, ohw, ocg, T(1), wt + g * ocg * k, xg, T(0), yg, workspace);
      } else {
        gemm(true, false, k, ohw, ocg, T(1), wt + g * ocg * k, xg, T(0), col, workspace);
        std::fill(yg, yg + cg * plane, T(0));
        col2im(p, col, yg);
      }
      if (bs != nullptr) {
        for (int64_t c = 0; c < cg; ++c) {
          const T v = bs[g * cg + c];
          for (T* q = yg + c * plane; q != yg + (c + 1) * plane; ++q) *q += v;
        }
      }
    }
  }
}

void convolution_out(KernelContext& ctx, Args args) {
  const char* name = "convolution.out";
  if (!check_arg_count(ctx, args, 10, name)) return;
  TensorImpl* in = tensor_arg(ctx, args, 0, name);
  TensorImpl* weight = tensor_arg(ctx, args, 1, name);
  TensorImpl* bias = optional_tensor_arg(args, 2);
  TensorImpl* out = tensor_arg(ctx, args, 9, name);
  if (!in || !weight || !out || !require_contiguous(ctx, name, {in, weight, bias, out}) ||
      !same_float_dtype(ctx, name, {in, weight, bias, out})) {
    return;
  }
  ConvParams p;
  bool transposed = false;
  if (const char* err = parse_conv(*in, *weight, args, 3, &p, &transposed)) {
    ctx.fail(ErrorCode::kInvalidArgument, "%s: %s", name, err);
    return;
  }
  const int64_t out_channels = transposed ? p.c : p.oc;
  if (bias != nullptr && (bias->dim() != 1 || bias->size(0) != out_channels)) {
    ctx.fail(ErrorCode::kInvalidArgument, "%s: bias must have shape [%lld]", name, static_cast<long long>(out_channels));
    return;
  }
  int64_t sizes[4];
  p.output_sizes(sizes);
  if (transposed) {
    // The output is the forward twin's input plane.
    sizes[1] = p.c;
    if (p.spatial == 1) {
      sizes[2] = p.w;
    } else {
      sizes[2] = p.h, sizes[3] = p.w;
    }
  }
  if (out->dim() != p.rank()) {
    ctx.fail(ErrorCode::kInvalidArgument, "%s: output must have rank %d", name, p.rank());
    return;
  }
  if (!resize_or_fail(ctx, out, {sizes, static_cast<size_t>(p.rank())}, name)) return;
  if (transposed) {
    if (!scratch_ok(ctx, name, transposed_scratch_bytes(p, in->element_size()))) return;
    dispatch_float(in->dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      transposed_forward(p, in->data_as<T>(), weight->data_as<T>(), bias != nullptr ? bias->data_as<T>() : nullptr,
                         out->data_as<T>(), reinterpret_cast<T*>(ctx.scratch().data()),
                         ctx.scratch().data() + col_bytes(p, in->element_size()));
    });
    return;
  }
  const bool im2col_path = !p.pointwise() && !p.depthwise();
  if (!scratch_ok(ctx, name, forward_scratch_bytes(p, in->element_size()))) return;
  uint8_t* workspace = ctx.scratch().data() + col_bytes(p, in->element_size());
  dispatch_float(in->dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* x = in->data_as<T>();
    const T* wt = weight->data_as<T>();
    const T* bs = bias != nullptr ? bias->data_as<T>() : nullptr;
    T* y = out->data_as<T>();
    if (p.depthwise()) {
      depthwise_forward(p, x, wt, bs, y, reinterpret_cast<T*>(ctx.scratch().data()));
      return;
    }
    T* col = reinterpret_cast<T*>(ctx.scratch().data());
    const int64_t ohw = p.ohw(), k = p.k(), cg = p.cg(), ocg = p.ocg();
    for (int64_t b = 0; b < p.n; ++b) {
      for (int64_t g = 0; g < p.groups; ++g) {
        const T* xg = x + (b * p.c + g * cg) * p.h * p.w;
        T* yg = y + (b * p.oc + g * ocg) * ohw;
        const T* cm = xg;
        if (im2col_path) {
          im2col(p, xg, col);
          cm = col;
        }
        if constexpr (std::is_same_v<T, float>) {
          // The filter's rows times the pixels' columns with nothing packed (gemm_fma: 1.1-1.5x
          // Eigen's GEMM on resnet18's convolutions, which packs both operands every call), then
          // the bias added, as the blocked GEMM adds it.
          gemm_fma(wt + g * ocg * k, k, cm, ohw, ocg, ohw, k, yg, ohw);
          if (bs != nullptr) {
            for (int64_t o = 0; o < ocg; ++o) {
              const float v = bs[g * ocg + o];
              for (int64_t j = 0; j < ohw; ++j) yg[o * ohw + j] += v;
            }
          }
          continue;
        }
        if (bs != nullptr) {
          for (int64_t o = 0; o < ocg; ++o) std::fill(yg + o * ohw, yg + (o + 1) * ohw, bs[g * ocg + o]);
        }
        gemm(false, false, ocg, ohw, k, T(1), wt + g * ocg * k, cm, bs != nullptr ? T(1) : T(0), yg, workspace);
      }
    }
  });
}

// convolution_backward.out(grad_output, input, weight, bias_sizes?, stride, padding, dilation,
// transposed, output_padding, groups, output_mask, out0, out1, out2): grads of input, weight and
// bias; an out whose mask bit is false is left untouched (it may be None).
size_t convolution_backward_scratch(Args args) {
  if (args.size() < 14 || !args[1]->is_tensor() || !args[2]->is_tensor() || !args[1]->tensor || !args[2]->tensor)
    return 0;
  ConvParams p;
  if (parse_conv(*args[1]->tensor, *args[2]->tensor, args, 4, &p) != nullptr) return 0;
  return backward_scratch_bytes(p, args[1]->tensor->element_size());
}

void convolution_backward_out(KernelContext& ctx, Args args) {
  const char* name = "convolution_backward.out";
  if (!check_arg_count(ctx, args, 14, name)) return;
  TensorImpl* go = tensor_arg(ctx, args, 0, name);
  TensorImpl* in = tensor_arg(ctx, args, 1, name);
  TensorImpl* weight = tensor_arg(ctx, args, 2, name);
  if (!go || !in || !weight) return;
  bool mask[3] = {true, true, true};
  if (args[10]->tag == Tag::kBoolList) {
    if (args[10]->bool_list.size() != 3) {
      ctx.fail(ErrorCode::kInvalidArgument, "%s: output_mask must have 3 items", name);
      return;
    }
    for (size_t i = 0; i < 3; ++i) mask[i] = args[10]->bool_list[i] != 0;
  }
  TensorImpl* gi = nullptr;
  TensorImpl* gw = nullptr;
  TensorImpl* gb = nullptr;
  if (mask[0] && !(gi = tensor_arg(ctx, args, 11, name))) return;
  if (mask[1] && !(gw = tensor_arg(ctx, args, 12, name))) return;
  if (mask[2] && !(gb = tensor_arg(ctx, args, 13, name))) return;
  if (!require_contiguous(ctx, name, {go, in, weight, gi, gw, gb}) ||
      !same_float_dtype(ctx, name, {go, in, weight, gi, gw, gb})) {
    return;
  }
  ConvParams p;
  if (const char* err = parse_conv(*in, *weight, args, 4, &p)) {
    ctx.fail(ErrorCode::kNotSupported, "%s: %s", name, err);
    return;
  }
  int64_t go_sizes[4];
  p.output_sizes(go_sizes);
  if (go->dim() != p.rank() || !std::equal(go_sizes, go_sizes + p.rank(), go->sizes().begin())) {
    ctx.fail(ErrorCode::kInvalidArgument, "%s: grad_output must have the convolution's output shape", name);
    return;
  }
  if (gi != nullptr && !resize_or_fail(ctx, gi, in->sizes(), name)) return;
  if (gw != nullptr && !resize_or_fail(ctx, gw, weight->sizes(), name)) return;
  const int64_t oc_size[1] = {p.oc};
  if (gb != nullptr && !resize_or_fail(ctx, gb, oc_size, name)) return;
  if ((gi != nullptr || gw != nullptr) && !scratch_ok(ctx, name, backward_scratch_bytes(p, in->element_size()))) return;
  const size_t plane_bytes = depthwise_scratch_bytes(p, in->element_size());
  uint8_t* workspace = ctx.scratch().data() + col_bytes(p, in->element_size());

  dispatch_float(in->dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* dy = go->data_as<T>();
    const T* x = in->data_as<T>();
    const T* wt = weight->data_as<T>();
    T* col = reinterpret_cast<T*>(ctx.scratch().data());
    const int64_t ohw = p.ohw(), k = p.k(), cg = p.cg(), ocg = p.ocg();
    if (gb != nullptr) {
      T* db = gb->data_as<T>();
      for (int64_t o = 0; o < p.oc; ++o) {
        double acc = 0;
        for (int64_t b = 0; b < p.n; ++b) {
          const T* row = dy + (b * p.oc + o) * ohw;
          // The plane in 16 interleaved partial sums (a vector's lanes), then the lanes in pairs:
          // a serial sum waits for each add (3 ms of cifar10's batch-32 training step).
          T lanes[16] = {};
          int64_t i = 0;
          for (; i + 16 <= ohw; i += 16) {
            for (int j = 0; j < 16; ++j) lanes[j] += row[i + j];
          }
          for (; i < ohw; ++i) lanes[i % 16] += row[i];
          for (int width = 8; width >= 1; width /= 2) {
            for (int j = 0; j < width; ++j) lanes[j] += lanes[j + width];
          }
          acc += static_cast<double>(lanes[0]);
        }
        db[o] = static_cast<T>(acc);
      }
    }
    if (p.depthwise()) {
      if (gw != nullptr || gi != nullptr) {
        depthwise_backward(p, dy, x, wt, gw != nullptr ? gw->data_as<T>() : nullptr,
                           gi != nullptr ? gi->data_as<T>() : nullptr, col,
                           reinterpret_cast<T*>(ctx.scratch().data() + plane_bytes));
      }
      return;
    }
    if (gw != nullptr) {
      T* dw = gw->data_as<T>();
      if (p.n == 0) std::fill(dw, dw + gw->numel(), T(0));
      for (int64_t b = 0; b < p.n; ++b) {
        for (int64_t g = 0; g < p.groups; ++g) {
          const T* xg = x + (b * p.c + g * cg) * p.h * p.w;
          const T* cm = xg;
          if (!p.pointwise()) {
            im2col(p, xg, col);
            cm = col;
          }
          // dW_g [ocg, k] (+)= dY_g [ocg, ohw] * col^T [ohw, k]
          gemm(false, true, ocg, k, ohw, T(1), dy + (b * p.oc + g * ocg) * ohw, cm, b == 0 ? T(0) : T(1),
               dw + g * ocg * k, workspace);
        }
      }
    }
    if (gi != nullptr) {
      T* dx = gi->data_as<T>();
      for (int64_t b = 0; b < p.n; ++b) {
        for (int64_t g = 0; g < p.groups; ++g) {
          T* dxg = dx + (b * p.c + g * cg) * p.h * p.w;
          const T* dyg = dy + (b * p.oc + g * ocg) * ohw;
          // dcol [k, ohw] = W_g^T [k, ocg] * dY_g [ocg, ohw]
          if (p.pointwise()) {
            gemm(true, false, k, ohw, ocg, T(1), wt + g * ocg * k, dyg, T(0), dxg, workspace);
          } else {
            gemm(true, false, k, ohw, ocg, T(1), wt + g * ocg * k, dyg, T(0), col, workspace);
            std::fill(dxg, dxg + cg * p.h * p.w, T(0));
            col2im(p, col, dxg);
          }
        }
      }
    }
  });
}

}  // namespace

void register_convolution_kernels(KernelRegistry& r) {
  r.add("aten::convolution.out", half_kernel<convolution_out, convolution_scratch>(kFloatDtypes));
  r.add("aten::convolution_backward.out", half_kernel<convolution_backward_out, convolution_backward_scratch>(kFloatDtypes));
}

}  // namespace etscope::runtime::kernels
