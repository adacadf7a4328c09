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

}  // namespace etscope::runtime::kernels
