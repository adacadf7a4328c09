// Unary math: exp, neg, the floating functions (tanh, sqrt, log, trigonometry, erf, reciprocal,
// ...), the rounding family (floor, ceil, round, trunc), abs, sign, isnan / isinf and logit.
//
// Floating functions accept any real or bool input and need a floating output; they compute in
// the output's precision (float for float32 outputs, double otherwise). Functions that keep the
// dtype (abs, sign, rounding) need out.dtype == self.dtype.
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>

#include "kernels/register.h"
#include "kernels/util/half_via_float.h"
#include "kernels/util/elementwise_util.h"
#include "kernels/util/expf.h"
#include "kernels/util/unary_util.h"

namespace etscope::runtime::kernels {
namespace {

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

// exp.out(self, out): computed in the output's floating type.
void exp_out(KernelContext& ctx, Args args) {
  if (!check_arg_count(ctx, args, 2, "exp.out")) return;
  TensorImpl* a = tensor_arg(ctx, args, 0, "exp.out");
  TensorImpl* out = tensor_arg(ctx, args, 1, "exp.out");
  if (!a || !out) return;
  if (!is_floating(out->dtype())) {
    ctx.fail(ErrorCode::kNotSupported, "exp.out: output must be floating point");
    return;
  }
  if (float32_array_case(ctx, *a, *out, "exp.out", expf_n)) return;
  unary_elementwise(ctx, *a, *out, "exp.out", [](auto x) {
    using T = std::conditional_t<std::is_same_v<decltype(x), double>, double, float>;
    return std::exp(static_cast<T>(x));
  });
}

// neg.out(self, out)
void neg_out(KernelContext& ctx, Args args) {
  if (!check_arg_count(ctx, args, 2, "neg.out")) return;
  TensorImpl* a = tensor_arg(ctx, args, 0, "neg.out");
  TensorImpl* out = tensor_arg(ctx, args, 1, "neg.out");
  if (!a || !out) return;
  if (a->dtype() == ScalarType::kBool) {
    ctx.fail(ErrorCode::kNotSupported, "neg.out: bool tensors cannot be negated");
    return;
  }
  unary_elementwise(ctx, *a, *out, "neg.out", [](auto x) { return -x; });
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

}  // namespace

void register_unary_kernels(KernelRegistry& r) {
  const uint32_t fl = kRealBoolDtypes | kHalfDtypes;  // half / bfloat16 compute through float
  r.add("aten::exp.out", kernel(exp_out, kRealBoolDtypes | kHalfDtypes));
  r.add("aten::neg.out", kernel(neg_out, kRealDtypes | kHalfDtypes));
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
  r.add("aten::abs.out", kernel(abs_out, kRealDtypes | kHalfDtypes));
  r.add("aten::sign.out", kernel(sign_out, kRealBoolDtypes | kHalfDtypes));
  r.add("aten::floor.out", kernel(rounding_out<0>, kRealDtypes | kHalfDtypes));
  r.add("aten::ceil.out", kernel(rounding_out<1>, kRealDtypes | kHalfDtypes));
  r.add("aten::round.out", kernel(rounding_out<2>, kRealDtypes | kHalfDtypes));
  r.add("aten::trunc.out", kernel(rounding_out<3>, kRealDtypes | kHalfDtypes));
  r.add("aten::isnan.out", kernel(isnan_isinf_out<false>, kRealBoolDtypes | kHalfDtypes));
  r.add("aten::isinf.out", kernel(isnan_isinf_out<true>, kRealBoolDtypes | kHalfDtypes));
  r.add("aten::logit.out", kernel(logit_out, kRealBoolDtypes | kHalfDtypes));
}

}  // namespace etscope::runtime::kernels
