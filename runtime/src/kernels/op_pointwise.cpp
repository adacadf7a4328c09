// Broadcasting binary kernels beyond the four arithmetic ones: comparisons of two tensors,
// logical and bitwise and / or / xor, minimum / maximum, remainder / fmod / floor_divide, div
// with a rounding mode, clamp with tensor bounds, atan2 and rsub. All of them go through binary_elementwise (same-dtype fast path; mixed dtypes
// compute in int64 when every operand is integral or bool, in double otherwise).
#include <cmath>
#include <cstring>
#include <limits>
#include <optional>
#include <type_traits>

#include "kernels/register.h"
#include "kernels/util/half_via_float.h"
#include "kernels/util/elementwise_util.h"

namespace etscope::runtime::kernels {
namespace {

// The two operands of a `Tensor other` (args[1]) or `Scalar other` overload; out at args[2].
struct Operands {
  TensorImpl* a = nullptr;
  const TensorImpl* b = nullptr;
  TensorImpl* out = nullptr;
  std::optional<ScalarTensor> scalar;
};

bool operands(KernelContext& ctx, Args args, bool scalar_other, const char* op, Operands* o) {
  if (!check_arg_count(ctx, args, 3, op)) return false;
  o->a = tensor_arg(ctx, args, 0, op);
  o->out = tensor_arg(ctx, args, 2, op);
  if (!o->a || !o->out) return false;
  if (scalar_other) {
    const Tag t = args[1]->tag;
    if (t != Tag::kInt && t != Tag::kDouble && t != Tag::kBool) {
      ctx.fail(ErrorCode::kInvalidArgument, "%s: other must be a scalar", op);
      return false;
    }
    o->scalar.emplace(*args[1], o->a->dtype());
    o->b = &o->scalar->impl();
    return true;
  }
  o->b = tensor_arg(ctx, args, 1, op);
  return o->b != nullptr;
}

bool any_floating(const Operands& o) { return is_floating(o.a->dtype()) || is_floating(o.b->dtype()); }

// Comparisons: out (any real or bool dtype) = a <cmp> b.
template <typename Cmp>
void compare_tensor(KernelContext& ctx, Args args, const char* op, Cmp cmp) {
  Operands o;
  if (!operands(ctx, args, false, op, &o)) return;
  binary_elementwise(ctx, *o.a, *o.b, *o.out, op, cmp);
}
void eq_tensor_out(KernelContext& ctx, Args args) {
  compare_tensor(ctx, args, "eq.Tensor_out", [](auto a, auto b) { return a == b; });
}
void ne_tensor_out(KernelContext& ctx, Args args) {
  compare_tensor(ctx, args, "ne.Tensor_out", [](auto a, auto b) { return a != b; });
}
void lt_tensor_out(KernelContext& ctx, Args args) {
  compare_tensor(ctx, args, "lt.Tensor_out", [](auto a, auto b) { return a < b; });
}
void le_tensor_out(KernelContext& ctx, Args args) {
  compare_tensor(ctx, args, "le.Tensor_out", [](auto a, auto b) { return a <= b; });
}
void gt_tensor_out(KernelContext& ctx, Args args) {
  compare_tensor(ctx, args, "gt.Tensor_out", [](auto a, auto b) { return a > b; });
}
void ge_tensor_out(KernelContext& ctx, Args args) {
  compare_tensor(ctx, args, "ge.Tensor_out", [](auto a, auto b) { return a >= b; });
}

// logical_and / or / xor.out: out = (a != 0) <op> (b != 0), in any output dtype.
template <typename Op>
void logical(KernelContext& ctx, Args args, const char* op, Op f) {
  Operands o;
  if (!operands(ctx, args, false, op, &o)) return;
  binary_elementwise(ctx, *o.a, *o.b, *o.out, op, [f](auto a, auto b) {
    return f(a != decltype(a)(0), b != decltype(b)(0));
  });
}
void logical_and_out(KernelContext& ctx, Args args) {
  logical(ctx, args, "logical_and.out", [](bool a, bool b) { return a && b; });
}
void logical_or_out(KernelContext& ctx, Args args) {
  logical(ctx, args, "logical_or.out", [](bool a, bool b) { return a || b; });
}
void logical_xor_out(KernelContext& ctx, Args args) {
  logical(ctx, args, "logical_xor.out", [](bool a, bool b) { return a != b; });
}

// bitwise_and / or / xor (.Tensor_out and .Scalar_out): integral or bool operands only.
template <typename Op>
void bitwise(KernelContext& ctx, Args args, bool scalar_other, const char* op, Op f) {
  Operands o;
  if (!operands(ctx, args, scalar_other, op, &o)) return;
  if (any_floating(o) || is_floating(o.out->dtype())) {
    ctx.fail(ErrorCode::kInvalidArgument, "%s: operands and output must be integral or bool", op);
    return;
  }
  binary_elementwise(ctx, *o.a, *o.b, *o.out, op, [f](auto a, auto b) {
    using T = decltype(a);
    if constexpr (std::is_integral_v<T> && std::is_integral_v<decltype(b)>) {
      return static_cast<T>(f(a, static_cast<T>(b)));
    } else {
      return a;  // not reached: floating operands are refused above
    }
  });
}
#define ETSCOPE_BITWISE(fn, name, expr, scalar)                                                   \
  void fn(KernelContext& ctx, Args args) {                                                       \
    bitwise(ctx, args, scalar, name, [](auto a, auto b) { return expr; });                        \
  }
ETSCOPE_BITWISE(bitwise_and_tensor_out, "bitwise_and.Tensor_out", a & b, false)
ETSCOPE_BITWISE(bitwise_or_tensor_out, "bitwise_or.Tensor_out", a | b, false)
ETSCOPE_BITWISE(bitwise_xor_tensor_out, "bitwise_xor.Tensor_out", a ^ b, false)
ETSCOPE_BITWISE(bitwise_and_scalar_out, "bitwise_and.Scalar_out", a & b, true)
ETSCOPE_BITWISE(bitwise_or_scalar_out, "bitwise_or.Scalar_out", a | b, true)
ETSCOPE_BITWISE(bitwise_xor_scalar_out, "bitwise_xor.Scalar_out", a ^ b, true)

// bitwise_left_shift / bitwise_right_shift (.Tensor_out, .Tensor_Scalar_out): a shift by a
// negative amount or by the type's width or more gives what shifting one bit at a time would (0,
// or -1 for a negative value shifted right), as PyTorch does; C++ would leave it undefined.
template <bool Left, typename T>
T shift(T a, T b) {
  if constexpr (std::is_same_v<T, bool>) {
    // As 0/1 bytes stored back as bool: 1 << 0 or 1 is non-zero, 1 >> 1 is 0.
    return Left ? a : (a && !b);
  } else {
    using U = std::make_unsigned_t<T>;
    constexpr int kBits = static_cast<int>(sizeof(T) * 8);
    const bool in_range = !(b < T(0)) && static_cast<U>(b) < static_cast<U>(kBits);
    if (Left) return in_range ? static_cast<T>(static_cast<U>(a) << static_cast<int>(b)) : T(0);
    if (in_range) return static_cast<T>(a >> static_cast<int>(b));
    return a < T(0) ? static_cast<T>(-1) : T(0);
  }
}
ETSCOPE_BITWISE(left_shift_tensor_out, "bitwise_left_shift.Tensor_out", shift<true>(a, static_cast<decltype(a)>(b)), false)
ETSCOPE_BITWISE(left_shift_scalar_out, "bitwise_left_shift.Tensor_Scalar_out", shift<true>(a, static_cast<decltype(a)>(b)), true)
ETSCOPE_BITWISE(right_shift_tensor_out, "bitwise_right_shift.Tensor_out", shift<false>(a, static_cast<decltype(a)>(b)), false)
ETSCOPE_BITWISE(right_shift_scalar_out, "bitwise_right_shift.Tensor_Scalar_out", shift<false>(a, static_cast<decltype(a)>(b)), true)
#undef ETSCOPE_BITWISE

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

}  // namespace

void register_pointwise_kernels(KernelRegistry& r) {
  const uint32_t all = kRealBoolDtypes, ints = kIntDtypes | kBoolDtype;
  r.add("aten::eq.Tensor_out", kernel(eq_tensor_out, all | kHalfDtypes));
  r.add("aten::ne.Tensor_out", kernel(ne_tensor_out, all | kHalfDtypes));
  r.add("aten::lt.Tensor_out", kernel(lt_tensor_out, all | kHalfDtypes));
  r.add("aten::le.Tensor_out", kernel(le_tensor_out, all | kHalfDtypes));
  r.add("aten::gt.Tensor_out", kernel(gt_tensor_out, all | kHalfDtypes));
  r.add("aten::ge.Tensor_out", kernel(ge_tensor_out, all | kHalfDtypes));
  r.add("aten::logical_and.out", kernel(logical_and_out, all | kHalfDtypes));
  r.add("aten::logical_or.out", kernel(logical_or_out, all | kHalfDtypes));
  r.add("aten::logical_xor.out", kernel(logical_xor_out, all | kHalfDtypes));
  r.add("aten::bitwise_and.Tensor_out", kernel(bitwise_and_tensor_out, ints));
  r.add("aten::bitwise_or.Tensor_out", kernel(bitwise_or_tensor_out, ints));
  r.add("aten::bitwise_xor.Tensor_out", kernel(bitwise_xor_tensor_out, ints));
  r.add("aten::bitwise_and.Scalar_out", kernel(bitwise_and_scalar_out, ints));
  r.add("aten::bitwise_or.Scalar_out", kernel(bitwise_or_scalar_out, ints));
  r.add("aten::bitwise_xor.Scalar_out", kernel(bitwise_xor_scalar_out, ints));
  r.add("aten::bitwise_left_shift.Tensor_out", kernel(left_shift_tensor_out, ints));
  r.add("aten::bitwise_left_shift.Tensor_Scalar_out", kernel(left_shift_scalar_out, ints));
  r.add("aten::bitwise_right_shift.Tensor_out", kernel(right_shift_tensor_out, ints));
  r.add("aten::bitwise_right_shift.Tensor_Scalar_out", kernel(right_shift_scalar_out, ints));
  r.add("aten::minimum.out", kernel(min_max<false>, all | kHalfDtypes));
  r.add("aten::maximum.out", kernel(min_max<true>, all | kHalfDtypes));
  r.add("aten::remainder.Tensor_out", kernel(remainder_tensor_out, kRealDtypes | kHalfDtypes));
  r.add("aten::remainder.Scalar_out", kernel(remainder_scalar_out, kRealDtypes | kHalfDtypes));
  r.add("aten::fmod.Tensor_out", kernel(fmod_tensor_out, kRealDtypes | kHalfDtypes));
  r.add("aten::fmod.Scalar_out", kernel(fmod_scalar_out, kRealDtypes | kHalfDtypes));
  r.add("aten::floor_divide.out", kernel(floor_divide_out, kRealDtypes | kHalfDtypes));
  r.add("aten::atan2.out", kernel(atan2_out, all | kHalfDtypes));
  r.add("aten::div.out_mode", kernel(div_out_mode, kRealBoolDtypes | kHalfDtypes));
  r.add("aten::div.Scalar_mode_out", kernel(div_scalar_mode_out, kRealBoolDtypes | kHalfDtypes));
  r.add("aten::clamp.Tensor_out", half_kernel<clamp_tensor_out>(kRealDtypes));
  r.add("aten::rsub.Scalar_out", kernel(rsub_scalar_out, kRealDtypes | kHalfDtypes));
}

}  // namespace etscope::runtime::kernels
