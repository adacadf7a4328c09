// Helpers of the one-tensor elementwise kernels (op_unary.cpp, op_activation.cpp, op_bitwise.cpp).
#pragma once

#include <type_traits>

#include "kernels/util/elementwise_util.h"

namespace etscope::runtime::kernels {

// float for float / integral / bool elements, double for double.
template <typename X>
using float_of = std::conditional_t<std::is_same_v<X, double>, double, float>;

// The output must have self's dtype (abs, sign, rounding, bitwise_not, leaky_relu, elu).
inline bool same_dtype_unary(KernelContext& ctx, Args args, size_t out_index, const char* name, TensorImpl** a,
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

// The float32 -> float32 case of a one-tensor kernel with both tensors contiguous, through a
// whole-array function fn(x, y, n) (exp, sigmoid and GELU 16 lanes at a time). False, with nothing
// done, for any other case (the caller's elementwise loop takes it); true once handled, ctx failed
// if the output could not take self's shape.
template <typename Fn>
bool float32_array_case(KernelContext& ctx, const TensorImpl& a, TensorImpl& out, const char* name, Fn fn) {
  if (a.dtype() != ScalarType::kFloat || out.dtype() != ScalarType::kFloat || !a.contiguous() || !out.contiguous()) {
    return false;
  }
  if (resize_or_fail(ctx, &out, a.sizes(), name)) fn(a.data_as<float>(), out.data_as<float>(), out.numel());
  return true;
}

}  // namespace etscope::runtime::kernels
