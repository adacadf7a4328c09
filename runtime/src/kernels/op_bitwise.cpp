// Bitwise operators on integral and bool tensors: bitwise_and / or / xor (Tensor and Scalar
// overloads), bitwise_not, and bitwise_left_shift / bitwise_right_shift.
#include <type_traits>

#include "kernels/register.h"
#include "kernels/util/elementwise_util.h"
#include "kernels/util/operands_util.h"
#include "kernels/util/unary_util.h"

namespace etscope::runtime::kernels {
namespace {

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

}  // namespace

void register_bitwise_kernels(KernelRegistry& r) {
  const uint32_t ints = kIntDtypes | kBoolDtype;
  r.add("aten::bitwise_and.Tensor_out", kernel(bitwise_and_tensor_out, ints));
  r.add("aten::bitwise_or.Tensor_out", kernel(bitwise_or_tensor_out, ints));
  r.add("aten::bitwise_xor.Tensor_out", kernel(bitwise_xor_tensor_out, ints));
  r.add("aten::bitwise_and.Scalar_out", kernel(bitwise_and_scalar_out, ints));
  r.add("aten::bitwise_or.Scalar_out", kernel(bitwise_or_scalar_out, ints));
  r.add("aten::bitwise_xor.Scalar_out", kernel(bitwise_xor_scalar_out, ints));
  r.add("aten::bitwise_not.out", kernel(bitwise_not_out, kIntDtypes | kBoolDtype));
  r.add("aten::bitwise_left_shift.Tensor_out", kernel(left_shift_tensor_out, ints));
  r.add("aten::bitwise_left_shift.Tensor_Scalar_out", kernel(left_shift_scalar_out, ints));
  r.add("aten::bitwise_right_shift.Tensor_out", kernel(right_shift_tensor_out, ints));
  r.add("aten::bitwise_right_shift.Tensor_Scalar_out", kernel(right_shift_scalar_out, ints));
}

}  // namespace etscope::runtime::kernels
