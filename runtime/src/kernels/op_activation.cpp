// Activation functions: relu, sigmoid, hardtanh and clamp (Scalar and Tensor bounds),
// threshold_backward, gelu, leaky_relu, elu, glu, and the dim-wise softmax / log_softmax.
#include <cmath>
#include <limits>
#include <type_traits>

#include "kernels/register.h"
#include "kernels/util/half_via_float.h"
#include "kernels/util/elementwise_util.h"
#include "kernels/util/erff.h"
#include "kernels/util/expf.h"
#include "kernels/util/unary_util.h"

namespace etscope::runtime::kernels {
namespace {

// relu.out(self, out)
void relu_out(KernelContext& ctx, Args args) {
  if (!check_arg_count(ctx, args, 2, "relu.out")) return;
  TensorImpl* a = tensor_arg(ctx, args, 0, "relu.out");
  TensorImpl* out = tensor_arg(ctx, args, 1, "relu.out");
  if (!a || !out) return;
  unary_elementwise(ctx, *a, *out, "relu.out", [](auto x) { return x > decltype(x)(0) ? x : decltype(x)(0); });
}

// sigmoid.out(self, out): computed in the output's floating type.
void sigmoid_out(KernelContext& ctx, Args args) {
  if (!check_arg_count(ctx, args, 2, "sigmoid.out")) return;
  TensorImpl* a = tensor_arg(ctx, args, 0, "sigmoid.out");
  TensorImpl* out = tensor_arg(ctx, args, 1, "sigmoid.out");
  if (!a || !out) return;
  if (!is_floating(out->dtype())) {
    ctx.fail(ErrorCode::kNotSupported, "sigmoid.out: output must be floating point");
    return;
  }
  if (float32_array_case(ctx, *a, *out, "sigmoid.out", sigmoidf_n)) return;
  unary_elementwise(ctx, *a, *out, "sigmoid.out", [](auto x) {
    using T = std::conditional_t<std::is_same_v<decltype(x), double>, double, float>;
    return T(1) / (T(1) + std::exp(-static_cast<T>(x)));
  });
}

// Clamps to [lo, hi]; NaN stays NaN. Integral tensors clamp in their own type when the bounds are
// Ints, in double otherwise.
void clamp_impl(KernelContext& ctx, TensorImpl& a, TensorImpl& out, const EValue& lo, const EValue& hi,
                const char* name) {
  const bool has_lo = lo.tag != Tag::kNone, has_hi = hi.tag != Tag::kNone;
  const double l = has_lo ? lo.scalar_as_double() : 0.0, h = has_hi ? hi.scalar_as_double() : 0.0;
  if (a.dtype() == ScalarType::kBool) {
    ctx.fail(ErrorCode::kNotSupported, "%s: bool tensors are not supported", name);
    return;
  }
  unary_elementwise(ctx, a, out, name, [&](auto x) {
    using T = decltype(x);
    if (has_lo && x < static_cast<T>(l)) x = static_cast<T>(l);
    if (has_hi && x > static_cast<T>(h)) x = static_cast<T>(h);
    return x;
  });
}

// hardtanh.out(self, min_val, max_val, out)
void hardtanh_out(KernelContext& ctx, Args args) {
  const char* name = "hardtanh.out";
  if (!check_arg_count(ctx, args, 4, name)) return;
  TensorImpl* a = tensor_arg(ctx, args, 0, name);
  TensorImpl* out = tensor_arg(ctx, args, 3, name);
  if (!a || !out) return;
  clamp_impl(ctx, *a, *out, *args[1], *args[2], name);
}

// clamp.out(self, min?, max?, out)
void clamp_out(KernelContext& ctx, Args args) {
  const char* name = "clamp.out";
  if (!check_arg_count(ctx, args, 4, name)) return;
  TensorImpl* a = tensor_arg(ctx, args, 0, name);
  TensorImpl* out = tensor_arg(ctx, args, 3, name);
  if (!a || !out) return;
  if (args[1]->is_none() && args[2]->is_none()) {
    ctx.fail(ErrorCode::kInvalidArgument, "%s: at least one of min and max must be given", name);
    return;
  }
  clamp_impl(ctx, *a, *out, *args[1], *args[2], name);
}

// threshold_backward.grad_input(grad_output, self, threshold, grad_input):
// grad_input = self <= threshold ? 0 : grad_output.
void threshold_backward_out(KernelContext& ctx, Args args) {
  const char* name = "threshold_backward.grad_input";
  if (!check_arg_count(ctx, args, 4, name)) return;
  TensorImpl* g = tensor_arg(ctx, args, 0, name);
  TensorImpl* x = tensor_arg(ctx, args, 1, name);
  TensorImpl* out = tensor_arg(ctx, args, 3, name);
  if (!g || !x || !out) return;
  const double th = args[2]->scalar_as_double();
  binary_elementwise(ctx, *g, *x, *out, name, [th](auto gv, auto xv) {
    using T = decltype(gv);
    return xv <= static_cast<decltype(xv)>(th) ? T(0) : gv;
  });
}

// clamp.Tensor_out(self, min?, max?, out): out = min(max(self, min), max), all broadcast together;
// NaN in any operand gives NaN.
void clamp_tensor_out(KernelContext& ctx, Args args) {
  const char* op = "clamp.Tensor_out";
  if (!check_arg_count(ctx, args, 4, op)) return;
  TensorImpl* self = tensor_arg(ctx, args, 0, op);
  TensorImpl* lo = optional_tensor_arg(args, 1);
  TensorImpl* hi = optional_tensor_arg(args, 2);
  TensorImpl* out = tensor_arg(ctx, args, 3, op);
  if (!self || !out || !require_contiguous(ctx, op, {self, lo, hi, out})) return;
  if (lo == nullptr && hi == nullptr) {
    ctx.fail(ErrorCode::kInvalidArgument, "%s: at least one of min and max must be given", op);
    return;
  }
  if (self->dtype() == ScalarType::kBool || !is_supported_dtype(out->dtype()) || !is_supported_dtype(self->dtype())) {
    ctx.fail(ErrorCode::kInvalidArgument, "%s: unsupported dtypes", op);
    return;
  }
  std::array<int64_t, kMaxDims> shape{};
  int dim = 0;
  std::span<const int64_t> full = self->sizes();
  for (const TensorImpl* t : {lo, hi}) {
    if (t == nullptr) continue;
    if (!broadcast_shape(full, t->sizes(), &shape, &dim)) {
      ctx.fail(ErrorCode::kInvalidArgument, "%s: shapes do not broadcast", op);
      return;
    }
    full = {shape.data(), static_cast<size_t>(dim)};
  }
  if (!resize_or_fail(ctx, out, full, op)) return;
  // out = self broadcast to the full shape, then clamped in place by each bound.
  dispatch_real_and_bool(self->dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    BroadcastIndex bi(out->sizes(), self->sizes());
    for (int64_t i = 0; i < out->numel(); ++i, bi.advance()) {
      store_from<T>(out->dtype(), out->data(), i, self->data_as<T>()[bi.index()]);
    }
  });
  auto bound = [&](const TensorImpl* t, bool upper) {
    if (t == nullptr || ctx.failed()) return;
    binary_elementwise(ctx, *out, *t, *out, op, [upper](auto a, auto b) {
      using T = decltype(a);
      if constexpr (std::is_floating_point_v<T>) {
        if (std::isnan(a) || std::isnan(b)) return std::numeric_limits<T>::quiet_NaN();
      }
      return upper ? (b < a ? static_cast<T>(b) : a) : (a < b ? static_cast<T>(b) : a);
    });
  };
  bound(lo, false);
  bound(hi, true);
}

// The exact GELU on float32, 16 lanes at a time with the scalar loop's values (erff16 is glibc's
// erff bit for bit; the products and sum are the same single roundings in the same order), and
// std::erf where exact_erff16() says erff16 is not this process's erff.
void gelu_erf_f32(const float* x, float* y, int64_t n) {
  int64_t i = 0;
#if ETSCOPE_EXACT_EXPF16
  using namespace erff_detail;
  const int64_t lanes_end = exact_erff16() ? n : 0;
  for (; i + 16 <= lanes_end; i += 16) {
    const __m512 v = _mm512_loadu_ps(x + i);
    const __m512 e = erff16(mul(v, splat(0.70710678118654752440f)));
    _mm512_storeu_ps(y + i, mul(mul(splat(0.5f), v), add(splat(1.0f), e)));
  }
#endif
  for (; i < n; ++i) y[i] = 0.5f * x[i] * (1.0f + std::erf(x[i] * 0.70710678118654752440f));
}

// gelu.out(self, approximate, out): x * Phi(x), or the tanh approximation
// 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))).
void gelu_out(KernelContext& ctx, Args args) {
  const char* name = "gelu.out";
  if (!check_arg_count(ctx, args, 3, name)) return;
  TensorImpl* a = tensor_arg(ctx, args, 0, name);
  TensorImpl* out = tensor_arg(ctx, args, 2, name);
  if (!a || !out) return;
  bool tanh_approx = false;
  if (args[1]->tag == Tag::kString) {
    if (args[1]->str == "tanh") {
      tanh_approx = true;
    } else if (args[1]->str != "none") {
      ctx.fail(ErrorCode::kInvalidArgument, "%s: approximate must be 'none' or 'tanh'", name);
      return;
    }
  } else if (!args[1]->is_none()) {
    ctx.fail(ErrorCode::kInvalidArgument, "%s: approximate must be a string", name);
    return;
  }
  if (!is_floating(a->dtype()) || a->dtype() != out->dtype()) {
    ctx.fail(ErrorCode::kInvalidArgument, "%s: self and out must share one floating dtype", name);
    return;
  }
  if (!tanh_approx && float32_array_case(ctx, *a, *out, name, gelu_erf_f32)) return;
  unary_elementwise(ctx, *a, *out, name, [tanh_approx](auto x) {
    using T = float_of<decltype(x)>;
    const T v = static_cast<T>(x);
    if (tanh_approx) {
      const T k = static_cast<T>(0.79788456080286535588);  // sqrt(2 / pi)
      return T(0.5) * v * (T(1) + std::tanh(k * (v + T(0.044715) * v * v * v)));
    }
    return T(0.5) * v * (T(1) + std::erf(v * static_cast<T>(0.70710678118654752440)));
  });
}

// leaky_relu.out(self, negative_slope, out)
void leaky_relu_out(KernelContext& ctx, Args args) {
  TensorImpl *a, *out;
  if (!same_dtype_unary(ctx, args, 2, "leaky_relu.out", &a, &out)) return;
  if (!is_floating(a->dtype())) {
    ctx.fail(ErrorCode::kInvalidArgument, "leaky_relu.out: needs a floating tensor");
    return;
  }
  const double slope = args[1]->scalar_as_double();
  unary_elementwise(ctx, *a, *out, "leaky_relu.out", [slope](auto x) {
    using T = decltype(x);
    return x > T(0) ? x : static_cast<T>(x * static_cast<T>(slope));
  });
}

// elu.out(self, alpha, scale, input_scale, out):
// x > 0 ? scale * x : scale * alpha * (exp(x * input_scale) - 1).
void elu_out(KernelContext& ctx, Args args) {
  TensorImpl *a, *out;
  if (!same_dtype_unary(ctx, args, 4, "elu.out", &a, &out)) return;
  if (!is_floating(a->dtype())) {
    ctx.fail(ErrorCode::kInvalidArgument, "elu.out: needs a floating tensor");
    return;
  }
  const double alpha = args[1]->scalar_as_double(), scale = args[2]->scalar_as_double(),
               input_scale = args[3]->scalar_as_double();
  unary_elementwise(ctx, *a, *out, "elu.out", [=](auto x) {
    using T = float_of<decltype(x)>;
    const T v = static_cast<T>(x);
    return v > T(0) ? static_cast<T>(scale) * v
                    : static_cast<T>(scale * alpha) * std::expm1(v * static_cast<T>(input_scale));
  });
}

// glu.out(self, dim, out): the first half of dim times the sigmoid of the second half.
void glu_out(KernelContext& ctx, Args args) {
  const char* name = "glu.out";
  if (!check_arg_count(ctx, args, 3, name)) return;
  TensorImpl* a = tensor_arg(ctx, args, 0, name);
  TensorImpl* out = tensor_arg(ctx, args, 2, name);
  if (!a || !out || !require_contiguous(ctx, name, {a, out})) return;
  const int64_t d = args[1]->tag == Tag::kInt && a->dim() > 0 ? normalize_dim(args[1]->scalar.i, a->dim()) : -1;
  if (d < 0 || a->size(static_cast<int>(d)) % 2 != 0) {
    ctx.fail(ErrorCode::kInvalidArgument, "%s: dim must exist and have an even size", name);
    return;
  }
  if (a->dtype() != out->dtype() || !dispatch_float(a->dtype(), [](auto) {})) {
    ctx.fail(ErrorCode::kInvalidArgument, "%s: self and out must share a float32 or float64 dtype", name);
    return;
  }
  std::array<int64_t, kMaxDims> sizes{};
  int64_t outer = 1, inner = 1;
  for (int i = 0; i < a->dim(); ++i) {
    sizes[static_cast<size_t>(i)] = i == d ? a->size(i) / 2 : a->size(i);
    if (i < d) outer *= a->size(i);
    if (i > d) inner *= a->size(i);
  }
  if (out->dim() != a->dim() || !resize_or_fail(ctx, out, {sizes.data(), static_cast<size_t>(a->dim())}, name)) {
    if (!ctx.failed()) ctx.fail(ErrorCode::kInvalidArgument, "%s: output rank differs from self's", name);
    return;
  }
  const int64_t half = sizes[static_cast<size_t>(d)] * inner;
  dispatch_float(a->dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* x = a->data_as<T>();
    T* y = out->data_as<T>();
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t i = 0; i < half; ++i) {
        const T first = x[o * 2 * half + i], gate = x[o * 2 * half + half + i];
        y[o * half + i] = first / (T(1) + std::exp(-gate));
      }
    }
  });
}

// Splits a contiguous tensor around `dim` into outer x n x inner.
bool softmax_shape(KernelContext& ctx, Args args, const char* op, TensorImpl** in, TensorImpl** out, int64_t* outer,
                   int64_t* n, int64_t* inner) {
  if (!check_arg_count(ctx, args, 4, op)) return false;
  *in = tensor_arg(ctx, args, 0, op);
  *out = tensor_arg(ctx, args, 3, op);
  if (!*in || !*out || !require_contiguous(ctx, op, {*in, *out})) return false;
  if ((*in)->dtype() != (*out)->dtype() || !dispatch_float((*in)->dtype(), [](auto) {})) {
    ctx.fail(ErrorCode::kNotSupported, "%s: only float32 or float64 input and output of one dtype", op);
    return false;
  }
  const int64_t d = args[1]->tag == Tag::kInt ? normalize_dim(args[1]->scalar.i, (*in)->dim()) : -1;
  if (d < 0) {
    ctx.fail(ErrorCode::kInvalidArgument, "%s: dim is out of range", op);
    return false;
  }
  if (!resize_or_fail(ctx, *out, (*in)->sizes(), op)) return false;
  *outer = 1, *inner = 1, *n = 1;
  for (int i = 0; i < (*in)->dim(); ++i) {
    if (i < d) *outer *= (*in)->size(i);
    if (i == d) *n = (*in)->size(i);
    if (i > d) *inner *= (*in)->size(i);
  }
  return true;
}

// Contiguous softmax rows, with the values of the scalar loop below: per row the maximum (order
// does not matter to it; NaNs are skipped as std::max(mx, x) skips them) and e^(x - max) in 16
// lanes (expf16: glibc's expf bit for bit); their sum in order, as ExecuTorch's portable kernel
// adds them; then each divided by the sum. The sums are the serial part: 16 rows at a time, one row
// to a lane (a gather of each row's k-th value), each lane still adding its row's values in order.
void softmax_rows(const float* x, float* y, int64_t rows, int64_t n) {
#if ETSCOPE_EXACT_EXPF16
  constexpr int64_t kLanes = 16;
  alignas(64) float sums[kLanes];
  for (int64_t r0 = 0; r0 < rows; r0 += kLanes) {
    const int64_t block = std::min(kLanes, rows - r0);
    for (int64_t r = r0; r < r0 + block; ++r) {
      const float* xr = x + r * n;
      float* yr = y + r * n;
      float mx = -std::numeric_limits<float>::infinity();
      __m512 m = _mm512_set1_ps(mx);
      int64_t k = 0;
      // max_ps(v, m) returns m when v is NaN (the zero-masking form: see expf16).
      for (; k + 16 <= n; k += 16) m = _mm512_maskz_max_ps(0xffff, _mm512_loadu_ps(xr + k), m);
      alignas(64) float lanes[16];
      _mm512_store_ps(lanes, m);
      for (float v : lanes) mx = std::max(mx, v);
      for (; k < n; ++k) mx = std::max(mx, xr[k]);
      const __m512 vmx = _mm512_set1_ps(mx);
      for (k = 0; k + 16 <= n; k += 16) _mm512_storeu_ps(yr + k, expf16(_mm512_sub_ps(_mm512_loadu_ps(xr + k), vmx)));
      for (; k < n; ++k) yr[k] = std::exp(xr[k] - mx);
    }
    // Row offsets as 32-bit element indices: only when the block's span fits.
    if (block == kLanes && n < (int64_t{1} << 26)) {
      const __m512i offsets = _mm512_mullo_epi32(_mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
                                                 _mm512_set1_epi32(static_cast<int>(n)));
      __m512 acc = _mm512_setzero_ps();
      const float* base = y + r0 * n;
      for (int64_t k = 0; k < n; ++k) acc = _mm512_add_ps(acc, _mm512_mask_i32gather_ps(_mm512_setzero_ps(), 0xffff, offsets, base + k, 4));
      _mm512_store_ps(sums, acc);
    } else {
      for (int64_t r = 0; r < block; ++r) {
        float sum = 0;
        for (int64_t k = 0; k < n; ++k) sum += y[(r0 + r) * n + k];
        sums[r] = sum;
      }
    }
    for (int64_t r = 0; r < block; ++r) {
      float* yr = y + (r0 + r) * n;
      const __m512 vsum = _mm512_set1_ps(sums[r]);
      int64_t k = 0;
      for (; k + 16 <= n; k += 16) _mm512_storeu_ps(yr + k, _mm512_div_ps(_mm512_loadu_ps(yr + k), vsum));
      for (; k < n; ++k) yr[k] /= sums[r];
    }
  }
#else
  (void)x, (void)y, (void)rows, (void)n;
#endif
}

template <bool kLog>
void softmax_impl(KernelContext& ctx, Args args, const char* op) {
  TensorImpl* in = nullptr;
  TensorImpl* out = nullptr;
  int64_t outer = 0, n = 0, inner = 0;
  if (!softmax_shape(ctx, args, op, &in, &out, &outer, &n, &inner)) return;
  dispatch_float(in->dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* x = in->data_as<T>();
    T* y = out->data_as<T>();
    if constexpr (std::is_same_v<T, float> && !kLog) {
      if (inner == 1 && exact_expf16()) {
        softmax_rows(x, y, outer, n);
        return;
      }
    }
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t i = 0; i < inner; ++i) {
        const T* xs = x + o * n * inner + i;
        T* ys = y + o * n * inner + i;
        T mx = -std::numeric_limits<T>::infinity();
        for (int64_t k = 0; k < n; ++k) mx = std::max(mx, xs[k * inner]);
        T sum = 0;
        for (int64_t k = 0; k < n; ++k) sum += std::exp(xs[k * inner] - mx);
        if constexpr (kLog) {
          // (x - max) - log(sum) keeps full precision for large logits; x - (max + log(sum)) does not.
          const T log_sum = std::log(sum);
          for (int64_t k = 0; k < n; ++k) ys[k * inner] = (xs[k * inner] - mx) - log_sum;
        } else {
          for (int64_t k = 0; k < n; ++k) ys[k * inner] = std::exp(xs[k * inner] - mx) / sum;
        }
      }
    }
  });
}

// _log_softmax.out(self, dim, half_to_float, out) and _softmax.out (same arguments).
void log_softmax_out(KernelContext& ctx, Args args) { softmax_impl<true>(ctx, args, "_log_softmax.out"); }
void softmax_out(KernelContext& ctx, Args args) { softmax_impl<false>(ctx, args, "_softmax.out"); }

}  // namespace

void register_activation_kernels(KernelRegistry& r) {
  r.add("aten::relu.out", kernel(relu_out, kRealDtypes | kHalfDtypes));
  r.add("aten::sigmoid.out", kernel(sigmoid_out, kRealBoolDtypes | kHalfDtypes));
  r.add("aten::hardtanh.out", kernel(hardtanh_out, kRealDtypes | kHalfDtypes));
  r.add("aten::clamp.out", kernel(clamp_out, kRealDtypes | kHalfDtypes));
  r.add("aten::clamp.Tensor_out", half_kernel<clamp_tensor_out>(kRealDtypes));
  r.add("aten::threshold_backward.grad_input", kernel(threshold_backward_out, kRealDtypes | kHalfDtypes));
  r.add("aten::gelu.out", kernel(gelu_out, kFloatDtypes | kHalfDtypes));
  r.add("aten::leaky_relu.out", kernel(leaky_relu_out, kFloatDtypes | kHalfDtypes));
  r.add("aten::elu.out", kernel(elu_out, kFloatDtypes | kHalfDtypes));
  r.add("aten::glu.out", half_kernel<glu_out>(kFloatDtypes));
  r.add("aten::_log_softmax.out", half_kernel<log_softmax_out>(kFloatDtypes));
  r.add("aten::_softmax.out", half_kernel<softmax_out>(kFloatDtypes));
}

}  // namespace etscope::runtime::kernels
