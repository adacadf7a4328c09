// Unary math: the floating functions (tanh, gelu, sqrt, log, trigonometry, erf, ...), the
// rounding family (floor, ceil, round, trunc), abs / sign / reciprocal, logical_not, bitwise_not,
// isnan / isinf, leaky_relu, elu, logit, glu; and pow with its three overloads.
//
// Floating functions accept any real or bool input and need a floating output; they compute in
// the output's precision (float for float32 outputs, double otherwise). Functions that keep the
// dtype (abs, sign, rounding, bitwise_not) need out.dtype == self.dtype.
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>

#include "kernels/register.h"
#include "kernels/util/half_via_float.h"
#include "kernels/util/elementwise_util.h"

namespace etscope::runtime::kernels {
namespace {

// float for float / integral / bool elements, double for double.
template <typename X>
using float_of = std::conditional_t<std::is_same_v<X, double>, double, float>;

// A floating function: self (real or bool) -> out (floating). F::apply is called at float or
// double; F::name names the kernel in messages.
template <typename F>
void float_unary(KernelContext& ctx, Args args) {
  if (!check_arg_count(ctx, args, 2, F::name)) return;
  TensorImpl* a = tensor_arg(ctx, args, 0, F::name);
  TensorImpl* out = tensor_arg(ctx, args, 1, F::name);
  if (!a || !out) return;
  if (!is_floating(out->dtype())) {
    ctx.fail(ErrorCode::kInvalidArgument, "%s: output must be floating point, got %s", F::name,
             scalar_type_name(out->dtype()).c_str());
    return;
  }
  unary_elementwise(ctx, *a, *out, F::name, [](auto x) {
    using T = float_of<decltype(x)>;
    return F::apply(static_cast<T>(x));
  });
}

#define ETSCOPE_FLOAT_FN(Struct, op_name, expr)                  \
  struct Struct {                                                \
    static constexpr const char* name = op_name;                 \
    template <typename T>                                        \
    static T apply(T x) {                                        \
      return expr;                                               \
    }                                                            \
  };
ETSCOPE_FLOAT_FN(Tanh, "tanh.out", std::tanh(x))
ETSCOPE_FLOAT_FN(Sqrt, "sqrt.out", std::sqrt(x))
ETSCOPE_FLOAT_FN(Rsqrt, "rsqrt.out", T(1) / std::sqrt(x))
ETSCOPE_FLOAT_FN(Log, "log.out", std::log(x))
ETSCOPE_FLOAT_FN(Log2, "log2.out", std::log2(x))
ETSCOPE_FLOAT_FN(Log10, "log10.out", std::log10(x))
ETSCOPE_FLOAT_FN(Log1p, "log1p.out", std::log1p(x))
ETSCOPE_FLOAT_FN(Expm1, "expm1.out", std::expm1(x))
ETSCOPE_FLOAT_FN(Sin, "sin.out", std::sin(x))
ETSCOPE_FLOAT_FN(Cos, "cos.out", std::cos(x))
ETSCOPE_FLOAT_FN(Tan, "tan.out", std::tan(x))
ETSCOPE_FLOAT_FN(Asin, "asin.out", std::asin(x))
ETSCOPE_FLOAT_FN(Acos, "acos.out", std::acos(x))
ETSCOPE_FLOAT_FN(Atan, "atan.out", std::atan(x))
ETSCOPE_FLOAT_FN(Sinh, "sinh.out", std::sinh(x))
ETSCOPE_FLOAT_FN(Cosh, "cosh.out", std::cosh(x))
ETSCOPE_FLOAT_FN(Asinh, "asinh.out", std::asinh(x))
ETSCOPE_FLOAT_FN(Acosh, "acosh.out", std::acosh(x))
ETSCOPE_FLOAT_FN(Atanh, "atanh.out", std::atanh(x))
ETSCOPE_FLOAT_FN(Erf, "erf.out", std::erf(x))
ETSCOPE_FLOAT_FN(Reciprocal, "reciprocal.out", T(1) / x)
#undef ETSCOPE_FLOAT_FN

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

// The output must have self's dtype (abs, sign, rounding, bitwise_not, leaky_relu, elu).
bool same_dtype_unary(KernelContext& ctx, Args args, size_t out_index, const char* name, TensorImpl** a,
                      TensorImpl** out) {
  if (!check_arg_count(ctx, args, out_index + 1, name)) return false;
  *a = tensor_arg(ctx, args, 0, name);
  *out = tensor_arg(ctx, args, out_index, name);
  if (!*a || !*out) return false;
  if ((*a)->dtype() != (*out)->dtype()) {
    ctx.fail(ErrorCode::kInvalidArgument, "%s: out dtype %s differs from self's %s", name,
             scalar_type_name((*out)->dtype()).c_str(), scalar_type_name((*a)->dtype()).c_str());
    return false;
  }
  return true;
}

// Negation without signed overflow (abs of the most negative integer wraps, as in ATen).
template <typename T>
T wrapping_neg(T x) {
  if constexpr (std::is_integral_v<T> && std::is_signed_v<T>) {
    using U = std::make_unsigned_t<T>;
    const U u = static_cast<U>(U(0) - static_cast<U>(x));
    T r;
    std::memcpy(&r, &u, sizeof(r));
    return r;
  } else {
    return -x;
  }
}

void abs_out(KernelContext& ctx, Args args) {
  TensorImpl *a, *out;
  if (!same_dtype_unary(ctx, args, 1, "abs.out", &a, &out)) return;
  if (a->dtype() == ScalarType::kBool) {
    ctx.fail(ErrorCode::kInvalidArgument, "abs.out: bool tensors are not supported");
    return;
  }
  unary_elementwise(ctx, *a, *out, "abs.out", [](auto x) {
    using T = decltype(x);
    if constexpr (std::is_floating_point_v<T>) {
      return std::fabs(x);
    } else {
      return x < T(0) ? wrapping_neg(x) : x;
    }
  });
}

void sign_out(KernelContext& ctx, Args args) {
  TensorImpl *a, *out;
  if (!same_dtype_unary(ctx, args, 1, "sign.out", &a, &out)) return;
  unary_elementwise(ctx, *a, *out, "sign.out", [](auto x) {
    using T = decltype(x);
    if constexpr (std::is_same_v<T, bool>) {
      return x;
    } else if constexpr (std::is_floating_point_v<T>) {
      return std::isnan(x) ? x : static_cast<T>((x > T(0)) - (x < T(0)));
    } else {
      return static_cast<T>((x > T(0)) - (x < T(0)));
    }
  });
}

// Rounding: identity on integers; round() is half-to-even, as ATen's.
template <int Mode>
void rounding_out(KernelContext& ctx, Args args) {
  static constexpr const char* names[] = {"floor.out", "ceil.out", "round.out", "trunc.out"};
  const char* name = names[Mode];
  TensorImpl *a, *out;
  if (!same_dtype_unary(ctx, args, 1, name, &a, &out)) return;
  if (a->dtype() == ScalarType::kBool) {
    ctx.fail(ErrorCode::kInvalidArgument, "%s: bool tensors are not supported", name);
    return;
  }
  unary_elementwise(ctx, *a, *out, name, [](auto x) {
    using T = decltype(x);
    if constexpr (std::is_floating_point_v<T>) {
      if constexpr (Mode == 0) return std::floor(x);
      if constexpr (Mode == 1) return std::ceil(x);
      if constexpr (Mode == 2) return std::nearbyint(x);
      if constexpr (Mode == 3) return std::trunc(x);
    } else {
      return x;
    }
  });
}

void bitwise_not_out(KernelContext& ctx, Args args) {
  TensorImpl *a, *out;
  if (!same_dtype_unary(ctx, args, 1, "bitwise_not.out", &a, &out)) return;
  if (is_floating(a->dtype())) {
    ctx.fail(ErrorCode::kInvalidArgument, "bitwise_not.out: needs an integral or bool tensor");
    return;
  }
  unary_elementwise(ctx, *a, *out, "bitwise_not.out", [](auto x) {
    using T = decltype(x);
    if constexpr (std::is_same_v<T, bool>) {
      return !x;
    } else if constexpr (std::is_integral_v<T>) {
      return static_cast<T>(~x);
    } else {
      return x;  // not reached: floating dtypes are refused above
    }
  });
}

// logical_not.out(self, out): out = (self == 0), in any real or bool output dtype.
void logical_not_out(KernelContext& ctx, Args args) {
  if (!check_arg_count(ctx, args, 2, "logical_not.out")) return;
  TensorImpl* a = tensor_arg(ctx, args, 0, "logical_not.out");
  TensorImpl* out = tensor_arg(ctx, args, 1, "logical_not.out");
  if (!a || !out) return;
  unary_elementwise(ctx, *a, *out, "logical_not.out", [](auto x) { return x == decltype(x)(0); });
}

// isnan.out / isinf.out: bool output.
template <bool Inf>
void isnan_isinf_out(KernelContext& ctx, Args args) {
  const char* name = Inf ? "isinf.out" : "isnan.out";
  if (!check_arg_count(ctx, args, 2, name)) return;
  TensorImpl* a = tensor_arg(ctx, args, 0, name);
  TensorImpl* out = tensor_arg(ctx, args, 1, name);
  if (!a || !out) return;
  if (out->dtype() != ScalarType::kBool) {
    ctx.fail(ErrorCode::kInvalidArgument, "%s: output must be bool", name);
    return;
  }
  unary_elementwise(ctx, *a, *out, name, [](auto x) {
    if constexpr (std::is_floating_point_v<decltype(x)>) {
      return Inf ? std::isinf(x) : std::isnan(x);
    } else {
      return false;
    }
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

// logit.out(self, eps?, out): log(x / (1 - x)), x first clamped to [eps, 1 - eps] when eps is given.
void logit_out(KernelContext& ctx, Args args) {
  const char* name = "logit.out";
  if (!check_arg_count(ctx, args, 3, name)) return;
  TensorImpl* a = tensor_arg(ctx, args, 0, name);
  TensorImpl* out = tensor_arg(ctx, args, 2, name);
  if (!a || !out) return;
  if (!is_floating(out->dtype())) {
    ctx.fail(ErrorCode::kInvalidArgument, "%s: output must be floating point", name);
    return;
  }
  const bool has_eps = !args[1]->is_none();
  const double eps = has_eps ? args[1]->scalar_as_double() : 0.0;
  unary_elementwise(ctx, *a, *out, name, [has_eps, eps](auto x) {
    using T = float_of<decltype(x)>;
    T v = static_cast<T>(x);
    if (has_eps) v = v < static_cast<T>(eps) ? static_cast<T>(eps) : v > static_cast<T>(1 - eps) ? static_cast<T>(1 - eps) : v;
    return std::log(v / (T(1) - v));
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

// Integer power by squaring in wrapping (unsigned) arithmetic; a negative exponent gives what
// truncating the real result gives: 1 for base 1, +-1 for base -1, 0 otherwise.
template <typename T>
T int_pow(T base, T exponent) {
  if constexpr (std::is_same_v<T, bool>) {
    return base || !exponent;
  } else {
    if constexpr (std::is_signed_v<T>) {
      if (exponent < 0) {
        if (base == 1) return 1;
        if (base == -1) return (exponent % 2 == 0) ? T(1) : T(-1);
        return 0;
      }
    }
    using U = std::make_unsigned_t<std::conditional_t<(sizeof(T) < sizeof(int)), int, T>>;
    U result = 1, b = static_cast<U>(base);
    for (auto e = static_cast<U>(exponent); e != 0; e >>= 1) {
      if (e & 1) result = static_cast<U>(result * b);
      b = static_cast<U>(b * b);
    }
    return static_cast<T>(result);
  }
}

struct PowOp {
  template <typename A, typename B>
  auto operator()(A a, B b) const {
    if constexpr (std::is_integral_v<A> && std::is_same_v<A, B>) {
      return int_pow(a, b);
    } else {
      using T = std::conditional_t<std::is_same_v<A, float> && std::is_same_v<B, float>, float, double>;
      return std::pow(static_cast<T>(a), static_cast<T>(b));
    }
  }
};

// The promoted result of pow must fit out: a floating result cannot go to an integral out.
bool pow_out_ok(KernelContext& ctx, const char* name, bool floating_result, const TensorImpl& out) {
  if (floating_result && !is_floating(out.dtype())) {
    ctx.fail(ErrorCode::kInvalidArgument, "%s: a floating result cannot be stored in a %s output", name,
             scalar_type_name(out.dtype()).c_str());
    return false;
  }
  if (out.dtype() == ScalarType::kBool) {
    ctx.fail(ErrorCode::kInvalidArgument, "%s: output must not be bool", name);
    return false;
  }
  return true;
}

// pow.Tensor_Tensor_out(self, exponent, out)
void pow_tensor_tensor_out(KernelContext& ctx, Args args) {
  const char* name = "pow.Tensor_Tensor_out";
  if (!check_arg_count(ctx, args, 3, name)) return;
  TensorImpl* a = tensor_arg(ctx, args, 0, name);
  TensorImpl* b = tensor_arg(ctx, args, 1, name);
  TensorImpl* out = tensor_arg(ctx, args, 2, name);
  if (!a || !b || !out || !pow_out_ok(ctx, name, is_floating(a->dtype()) || is_floating(b->dtype()), *out)) return;
  binary_elementwise(ctx, *a, *b, *out, name, PowOp{});
}

// pow.Tensor_Scalar_out(self, exponent, out)
void pow_tensor_scalar_out(KernelContext& ctx, Args args) {
  const char* name = "pow.Tensor_Scalar_out";
  if (!check_arg_count(ctx, args, 3, name)) return;
  TensorImpl* a = tensor_arg(ctx, args, 0, name);
  TensorImpl* out = tensor_arg(ctx, args, 2, name);
  if (!a || !out) return;
  ScalarTensor e(*args[1], a->dtype());
  if (!pow_out_ok(ctx, name, is_floating(a->dtype()) || args[1]->tag == Tag::kDouble, *out)) return;
  binary_elementwise(ctx, *a, e.impl(), *out, name, PowOp{});
}

// pow.Scalar_out(self: Scalar, exponent: Tensor, out)
void pow_scalar_out(KernelContext& ctx, Args args) {
  const char* name = "pow.Scalar_out";
  if (!check_arg_count(ctx, args, 3, name)) return;
  TensorImpl* b = tensor_arg(ctx, args, 1, name);
  TensorImpl* out = tensor_arg(ctx, args, 2, name);
  if (!b || !out) return;
  ScalarTensor s(*args[0], b->dtype());
  if (!pow_out_ok(ctx, name, is_floating(b->dtype()) || args[0]->tag == Tag::kDouble, *out)) return;
  binary_elementwise(ctx, s.impl(), *b, *out, name, PowOp{});
}

}  // namespace

void register_unary_kernels(KernelRegistry& r) {
  const uint32_t fl = kRealBoolDtypes | kHalfDtypes;  // half / bfloat16 compute through float
  r.add("aten::tanh.out", kernel(float_unary<Tanh>, fl));
  r.add("aten::sqrt.out", kernel(float_unary<Sqrt>, fl));
  r.add("aten::rsqrt.out", kernel(float_unary<Rsqrt>, fl));
  r.add("aten::log.out", kernel(float_unary<Log>, fl));
  r.add("aten::log2.out", kernel(float_unary<Log2>, fl));
  r.add("aten::log10.out", kernel(float_unary<Log10>, fl));
  r.add("aten::log1p.out", kernel(float_unary<Log1p>, fl));
  r.add("aten::expm1.out", kernel(float_unary<Expm1>, fl));
  r.add("aten::sin.out", kernel(float_unary<Sin>, fl));
  r.add("aten::cos.out", kernel(float_unary<Cos>, fl));
  r.add("aten::tan.out", kernel(float_unary<Tan>, fl));
  r.add("aten::asin.out", kernel(float_unary<Asin>, fl));
  r.add("aten::acos.out", kernel(float_unary<Acos>, fl));
  r.add("aten::atan.out", kernel(float_unary<Atan>, fl));
  r.add("aten::sinh.out", kernel(float_unary<Sinh>, fl));
  r.add("aten::cosh.out", kernel(float_unary<Cosh>, fl));
  r.add("aten::asinh.out", kernel(float_unary<Asinh>, fl));
  r.add("aten::acosh.out", kernel(float_unary<Acosh>, fl));
  r.add("aten::atanh.out", kernel(float_unary<Atanh>, fl));
  r.add("aten::erf.out", kernel(float_unary<Erf>, fl));
  r.add("aten::reciprocal.out", kernel(float_unary<Reciprocal>, fl));
  r.add("aten::gelu.out", kernel(gelu_out, kFloatDtypes | kHalfDtypes));
  r.add("aten::abs.out", kernel(abs_out, kRealDtypes | kHalfDtypes));
  r.add("aten::sign.out", kernel(sign_out, kRealBoolDtypes | kHalfDtypes));
  r.add("aten::floor.out", kernel(rounding_out<0>, kRealDtypes | kHalfDtypes));
  r.add("aten::ceil.out", kernel(rounding_out<1>, kRealDtypes | kHalfDtypes));
  r.add("aten::round.out", kernel(rounding_out<2>, kRealDtypes | kHalfDtypes));
  r.add("aten::trunc.out", kernel(rounding_out<3>, kRealDtypes | kHalfDtypes));
  r.add("aten::bitwise_not.out", kernel(bitwise_not_out, kIntDtypes | kBoolDtype));
  r.add("aten::logical_not.out", kernel(logical_not_out, kRealBoolDtypes | kHalfDtypes));
  r.add("aten::isnan.out", kernel(isnan_isinf_out<false>, kRealBoolDtypes | kHalfDtypes));
  r.add("aten::isinf.out", kernel(isnan_isinf_out<true>, kRealBoolDtypes | kHalfDtypes));
  r.add("aten::leaky_relu.out", kernel(leaky_relu_out, kFloatDtypes | kHalfDtypes));
  r.add("aten::elu.out", kernel(elu_out, kFloatDtypes | kHalfDtypes));
  r.add("aten::logit.out", kernel(logit_out, kRealBoolDtypes | kHalfDtypes));
  r.add("aten::glu.out", half_kernel<glu_out>(kFloatDtypes));
  r.add("aten::pow.Tensor_Tensor_out", kernel(pow_tensor_tensor_out, kRealBoolDtypes | kHalfDtypes));
  r.add("aten::pow.Tensor_Scalar_out", kernel(pow_tensor_scalar_out, kRealBoolDtypes | kHalfDtypes));
  r.add("aten::pow.Scalar_out", kernel(pow_scalar_out, kRealBoolDtypes | kHalfDtypes));
}

}  // namespace etscope::runtime::kernels
