// The operands of a binary kernel with a `Tensor other` or `Scalar other` overload
// (op_arithmetic.cpp, op_compare.cpp, op_logical.cpp, op_bitwise.cpp).
#pragma once

#include <optional>

#include "kernels/util/elementwise_util.h"

namespace etscope::runtime::kernels {

// The two operands of a `Tensor other` (args[1]) or `Scalar other` overload; out at args[2].
struct Operands {
  TensorImpl* a = nullptr;
  const TensorImpl* b = nullptr;
  TensorImpl* out = nullptr;
  std::optional<ScalarTensor> scalar;
};

inline bool operands(KernelContext& ctx, Args args, bool scalar_other, const char* op, Operands* o) {
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

inline bool any_floating(const Operands& o) { return is_floating(o.a->dtype()) || is_floating(o.b->dtype()); }

}  // namespace etscope::runtime::kernels
