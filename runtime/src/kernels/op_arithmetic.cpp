// Arithmetic of two broadcast tensors (or a tensor and a scalar): add, sub, rsub, mul, div (with
// and without a rounding mode), floor_divide, remainder, fmod, pow, atan2, minimum and maximum.
// All of them go through binary_elementwise (same-dtype fast path; mixed dtypes compute in int64
// when every operand is integral or bool, in double otherwise).
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "kernels/register.h"
#include "kernels/util/elementwise_util.h"
#include "kernels/util/operands_util.h"

namespace etscope::runtime::kernels {
namespace {

// Scalar operands do not promote a tensor's dtype (ATen's "wrapped number" rule): compute with
// the tensor's dtype unless the scalar is a float and the tensor is integral.
template <typename Op>
void binary(KernelContext& ctx, Args args, bool scalar_other, bool has_alpha, const char* name, Op op) {
  const size_t n_in = 2 + (has_alpha ? 1 : 0);
  if (!check_arg_count(ctx, args, n_in + 1, name)) return;
  TensorImpl* a = tensor_arg(ctx, args, 0, name);
  TensorImpl* out = tensor_arg(ctx, args, n_in, name);
  if (a == nullptr || out == nullptr) return;
  const double alpha = has_alpha ? args[2]->scalar_as_double() : 1.0;
  // As ExecuTorch's portable kernels: with integer operands, alpha must be an integer that the
  // output's dtype holds (a uint8 add with alpha 2949121 is refused, not computed in UB).
  if (alpha != 1.0 && !is_floating(out->dtype()) && out->dtype() != ScalarType::kBool) {
    double lo = 0, hi = 0;
    dispatch_real_and_bool(out->dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      lo = static_cast<double>(std::numeric_limits<T>::lowest());
      hi = static_cast<double>(std::numeric_limits<T>::max());
    });
    if (!(alpha == std::floor(alpha)) || alpha < lo || alpha > hi) {
      ctx.fail(ErrorCode::kInvalidArgument, "%s: alpha %g does not fit the output's dtype %s", name, alpha,
               scalar_type_name(out->dtype()).c_str());
      return;
    }
  }
  if (scalar_other) {
    const EValue& sv = *args[1];
    if (alpha == 1.0) {
      ScalarTensor scalar(sv, a->dtype());
      binary_elementwise(ctx, *a, scalar.impl(), *out, name, op);
      return;
    }
    // The scalar takes the tensor's dtype when that keeps it exact (so the same-dtype fast path
    // applies); a float scalar with an integral tensor computes in double.
    const ScalarType st = is_supported_dtype(a->dtype()) && (is_floating(a->dtype()) || sv.tag != Tag::kDouble)
                              ? a->dtype()
                              : ScalarType::kDouble;
    ScalarTensor scalar(st, sv.scalar_as_double() * alpha);
    binary_elementwise(ctx, *a, scalar.impl(), *out, name, op);
    return;
  }
  TensorImpl* b = tensor_arg(ctx, args, 1, name);
  if (b == nullptr) return;
  if (alpha == 1.0) {
    binary_elementwise(ctx, *a, *b, *out, name, op);
  } else {
    binary_elementwise(ctx, *a, *b, *out, name, [&](auto x, auto y) {
      using Y = decltype(y);
      if constexpr (std::is_integral_v<Y> && !std::is_same_v<Y, bool>) {
        // Integer arithmetic wraps as ATen's does; done in uint64 so no step overflows.
        const uint64_t product = static_cast<uint64_t>(y) * static_cast<uint64_t>(static_cast<int64_t>(convert<Y>(alpha)));
        return op(x, static_cast<Y>(product));
      } else {
        return op(x, static_cast<Y>(y * alpha));
      }
    });
  }
}

void add_out(KernelContext& ctx, Args args) { binary(ctx, args, false, true, "add.out", [](auto a, auto b) { return a + b; }); }
void add_scalar_out(KernelContext& ctx, Args args) { binary(ctx, args, true, true, "add.Scalar_out", [](auto a, auto b) { return a + b; }); }
void sub_out(KernelContext& ctx, Args args) { binary(ctx, args, false, true, "sub.out", [](auto a, auto b) { return a - b; }); }
void sub_scalar_out(KernelContext& ctx, Args args) { binary(ctx, args, true, true, "sub.Scalar_out", [](auto a, auto b) { return a - b; }); }
void mul_out(KernelContext& ctx, Args args) { binary(ctx, args, false, false, "mul.out", [](auto a, auto b) { return a * b; }); }
void mul_scalar_out(KernelContext& ctx, Args args) { binary(ctx, args, true, false, "mul.Scalar_out", [](auto a, auto b) { return a * b; }); }

// div.out is true division: integer inputs divide as floating point into a floating out.
void div_out(KernelContext& ctx, Args args) {
  binary(ctx, args, false, false, "div.out", [](auto a, auto b) {
    using T = decltype(a);
    if constexpr (std::is_integral_v<T>) {
      return static_cast<double>(a) / static_cast<double>(b);
    } else {
      return a / b;
    }
  });
}
void div_scalar_out(KernelContext& ctx, Args args) {
  binary(ctx, args, true, false, "div.Scalar_out", [](auto a, auto b) {
    using T = decltype(a);
    if constexpr (std::is_integral_v<T>) {
      return static_cast<double>(a) / static_cast<double>(b);
    } else {
      return a / b;
    }
  });
}

// minimum / maximum.out: NaN in either operand gives NaN.
template <bool Max>
void min_max(KernelContext& ctx, Args args) {
  const char* op = Max ? "maximum.out" : "minimum.out";
  Operands o;
  if (!operands(ctx, args, false, op, &o)) return;
  binary_elementwise(ctx, *o.a, *o.b, *o.out, op, [](auto a, auto b) {
    using T = decltype(a);
    if constexpr (std::is_floating_point_v<T>) {
      if (std::isnan(a) || std::isnan(b)) return std::numeric_limits<T>::quiet_NaN();
    }
    return Max ? (a < b ? b : a) : (b < a ? b : a);
  });
}

// Fails the call when an integral division has a zero divisor anywhere in `b`.
bool check_integral_divisor(KernelContext& ctx, const Operands& o, const char* op) {
  if (any_floating(o)) return true;
  bool zero = false;
  dispatch_real_and_bool(o.b->dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* p = o.b->template data_as<T>();
    for (int64_t i = 0; i < o.b->numel() && !zero; ++i) zero = p[i] == T(0);
  });
  if (zero) ctx.fail(ErrorCode::kInvalidArgument, "%s: integer division by zero", op);
  return !zero;
}

// Integral quotient rounded toward negative infinity, wrapping for INT_MIN / -1.
template <typename T>
T floor_div_int(T a, T b) {
  if constexpr (std::is_signed_v<T>) {
    if (b == T(-1)) {
      using U = std::make_unsigned_t<T>;
      const U u = static_cast<U>(U(0) - static_cast<U>(a));
      T r;
      std::memcpy(&r, &u, sizeof(r));
      return r;
    }
    const T q = static_cast<T>(a / b);
    return (a % b != 0 && ((a < 0) != (b < 0))) ? static_cast<T>(q - 1) : q;
  } else {
    return static_cast<T>(a / b);
  }
}

// Mode 0: remainder (Python's %, sign of the divisor); 1: fmod (C's, sign of the dividend);
// 2: floor_divide.
template <int Mode>
void division(KernelContext& ctx, Args args, bool scalar_other) {
  static constexpr const char* tensor_names[] = {"remainder.Tensor_out", "fmod.Tensor_out", "floor_divide.out"};
  static constexpr const char* scalar_names[] = {"remainder.Scalar_out", "fmod.Scalar_out", "floor_divide.out"};
  const char* op = scalar_other ? scalar_names[Mode] : tensor_names[Mode];
  Operands o;
  if (!operands(ctx, args, scalar_other, op, &o)) return;
  if (o.a->dtype() == ScalarType::kBool && o.b->dtype() == ScalarType::kBool) {
    ctx.fail(ErrorCode::kInvalidArgument, "%s: bool operands are not supported", op);
    return;
  }
  if (any_floating(o) && !is_floating(o.out->dtype())) {
    ctx.fail(ErrorCode::kInvalidArgument, "%s: a floating result cannot be stored in a %s output", op,
             scalar_type_name(o.out->dtype()).c_str());
    return;
  }
  if (!check_integral_divisor(ctx, o, op)) return;
  binary_elementwise(ctx, *o.a, *o.b, *o.out, op, [](auto a, auto b) {
    using T = decltype(a);
    if constexpr (std::is_floating_point_v<T>) {
      if constexpr (Mode == 0) {
        T r = std::fmod(a, b);
        if (r != T(0) && ((r < T(0)) != (b < T(0)))) r += b;
        return r;
      } else if constexpr (Mode == 1) {
        return std::fmod(a, b);
      } else {
        return std::floor(a / b);
      }
    } else if constexpr (std::is_same_v<T, bool>) {
      return a;  // not reached: bool pairs are refused above
    } else {
      if constexpr (Mode == 2) return floor_div_int(a, b);
      if (std::is_signed_v<T> && b == T(-1)) return T(0);
      const T r = static_cast<T>(a % b);
      if constexpr (Mode == 0) {
        if (r != 0 && ((r < 0) != (b < 0))) return static_cast<T>(r + b);
      }
      return r;
    }
  });
}
void remainder_tensor_out(KernelContext& ctx, Args args) { division<0>(ctx, args, false); }
void remainder_scalar_out(KernelContext& ctx, Args args) { division<0>(ctx, args, true); }
void fmod_tensor_out(KernelContext& ctx, Args args) { division<1>(ctx, args, false); }
void fmod_scalar_out(KernelContext& ctx, Args args) { division<1>(ctx, args, true); }
void floor_divide_out(KernelContext& ctx, Args args) { division<2>(ctx, args, false); }

// atan2.out(self, other, out): floating output.
void atan2_out(KernelContext& ctx, Args args) {
  const char* op = "atan2.out";
  Operands o;
  if (!operands(ctx, args, false, op, &o)) return;
  if (!is_floating(o.out->dtype())) {
    ctx.fail(ErrorCode::kInvalidArgument, "%s: output must be floating point", op);
    return;
  }
  binary_elementwise(ctx, *o.a, *o.b, *o.out, op, [](auto a, auto b) {
    using T = std::conditional_t<std::is_same_v<decltype(a), float> && std::is_same_v<decltype(b), float>, float, double>;
    return std::atan2(static_cast<T>(a), static_cast<T>(b));
  });
}

// rsub.Scalar_out(self, other, alpha, out): out = other - alpha * self.
void rsub_scalar_out(KernelContext& ctx, Args args) {
  const char* op = "rsub.Scalar_out";
  if (!check_arg_count(ctx, args, 4, op)) return;
  TensorImpl* a = tensor_arg(ctx, args, 0, op);
  TensorImpl* out = tensor_arg(ctx, args, 3, op);
  if (!a || !out) return;
  if (a->dtype() == ScalarType::kBool) {
    ctx.fail(ErrorCode::kInvalidArgument, "%s: bool tensors are not supported", op);
    return;
  }
  ScalarTensor other(*args[1], a->dtype());
  if (args[2]->tag == Tag::kInt && args[2]->scalar.i == 1) {
    binary_elementwise(ctx, other.impl(), *a, *out, op, [](auto s, auto x) { return s - x; });
    return;
  }
  const double alpha = args[2]->scalar_as_double();
  binary_elementwise(ctx, other.impl(), *a, *out, op, [alpha](auto s, auto x) {
    return s - static_cast<decltype(x)>(x * alpha);
  });
}

// div.out_mode(self, other, rounding_mode?, out) and div.Scalar_mode_out: rounding_mode None is
// true division, "trunc" rounds toward zero, "floor" toward negative infinity. Integral operands
// with a rounding mode divide exactly in integers (a zero divisor fails the call).
void div_mode(KernelContext& ctx, Args args, bool scalar_other) {
  const char* op = scalar_other ? "div.Scalar_mode_out" : "div.out_mode";
  if (!check_arg_count(ctx, args, 4, op)) return;
  int mode = 0;  // 0 true, 1 trunc, 2 floor
  if (args[2]->tag == Tag::kString) {
    if (args[2]->str == "trunc") {
      mode = 1;
    } else if (args[2]->str == "floor") {
      mode = 2;
    } else {
      ctx.fail(ErrorCode::kInvalidArgument, "%s: rounding_mode must be 'trunc', 'floor' or None", op);
      return;
    }
  }
  EValue* shifted[3] = {args[0], args[1], args[3]};
  Operands o;
  if (!operands(ctx, Args{shifted, 3}, scalar_other, op, &o)) return;
  const bool floating = any_floating(o);
  if ((floating || mode == 0) && !is_floating(o.out->dtype())) {
    ctx.fail(ErrorCode::kInvalidArgument, "%s: a floating result cannot be stored in a %s output", op,
             scalar_type_name(o.out->dtype()).c_str());
    return;
  }
  if (mode != 0 && !check_integral_divisor(ctx, o, op)) return;
  binary_elementwise(ctx, *o.a, *o.b, *o.out, op, [mode](auto a, auto b) {
    using T = decltype(a);
    if constexpr (std::is_floating_point_v<T>) {
      const T q = a / b;
      return mode == 1 ? std::trunc(q) : mode == 2 ? std::floor(q) : q;
    } else if constexpr (std::is_same_v<T, bool>) {
      return static_cast<double>(a) / static_cast<double>(b);
    } else {
      if (mode == 0) return static_cast<double>(a) / static_cast<double>(b);
      if (mode == 2) return static_cast<double>(floor_div_int(a, b));
      if (std::is_signed_v<T> && b == T(-1)) return static_cast<double>(floor_div_int(a, b));
      return static_cast<double>(static_cast<T>(a / b));
    }
  });
}
void div_out_mode(KernelContext& ctx, Args args) { div_mode(ctx, args, false); }
void div_scalar_mode_out(KernelContext& ctx, Args args) { div_mode(ctx, args, true); }

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

void register_arithmetic_kernels(KernelRegistry& r) {
  const uint32_t all = kRealBoolDtypes;
  r.add("aten::add.out", kernel(add_out, kRealBoolDtypes | kHalfDtypes));
  r.add("aten::add.Scalar_out", kernel(add_scalar_out, kRealBoolDtypes | kHalfDtypes));
  r.add("aten::sub.out", kernel(sub_out, kRealDtypes | kHalfDtypes));
  r.add("aten::sub.Scalar_out", kernel(sub_scalar_out, kRealDtypes | kHalfDtypes));
  r.add("aten::mul.out", kernel(mul_out, kRealBoolDtypes | kHalfDtypes));
  r.add("aten::mul.Scalar_out", kernel(mul_scalar_out, kRealBoolDtypes | kHalfDtypes));
  r.add("aten::div.out", kernel(div_out, kRealBoolDtypes | kHalfDtypes));
  r.add("aten::div.Scalar_out", kernel(div_scalar_out, kRealBoolDtypes | kHalfDtypes));
  r.add("aten::div.out_mode", kernel(div_out_mode, kRealBoolDtypes | kHalfDtypes));
  r.add("aten::div.Scalar_mode_out", kernel(div_scalar_mode_out, kRealBoolDtypes | kHalfDtypes));
  r.add("aten::rsub.Scalar_out", kernel(rsub_scalar_out, kRealDtypes | kHalfDtypes));
  r.add("aten::floor_divide.out", kernel(floor_divide_out, kRealDtypes | kHalfDtypes));
  r.add("aten::remainder.Tensor_out", kernel(remainder_tensor_out, kRealDtypes | kHalfDtypes));
  r.add("aten::remainder.Scalar_out", kernel(remainder_scalar_out, kRealDtypes | kHalfDtypes));
  r.add("aten::fmod.Tensor_out", kernel(fmod_tensor_out, kRealDtypes | kHalfDtypes));
  r.add("aten::fmod.Scalar_out", kernel(fmod_scalar_out, kRealDtypes | kHalfDtypes));
  r.add("aten::atan2.out", kernel(atan2_out, all | kHalfDtypes));
  r.add("aten::minimum.out", kernel(min_max<false>, all | kHalfDtypes));
  r.add("aten::maximum.out", kernel(min_max<true>, all | kHalfDtypes));
  r.add("aten::pow.Tensor_Tensor_out", kernel(pow_tensor_tensor_out, kRealBoolDtypes | kHalfDtypes));
  r.add("aten::pow.Tensor_Scalar_out", kernel(pow_tensor_scalar_out, kRealBoolDtypes | kHalfDtypes));
  r.add("aten::pow.Scalar_out", kernel(pow_scalar_out, kRealBoolDtypes | kHalfDtypes));
}

}  // namespace etscope::runtime::kernels
