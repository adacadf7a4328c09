// Logical operators: logical_and / logical_or / logical_xor of two broadcast tensors and
// logical_not, in any real or bool dtype (non-zero is true).
#include "kernels/register.h"
#include "kernels/util/elementwise_util.h"
#include "kernels/util/operands_util.h"

namespace etscope::runtime::kernels {
namespace {

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

// logical_not.out(self, out): out = (self == 0), in any real or bool output dtype.
void logical_not_out(KernelContext& ctx, Args args) {
  if (!check_arg_count(ctx, args, 2, "logical_not.out")) return;
  TensorImpl* a = tensor_arg(ctx, args, 0, "logical_not.out");
  TensorImpl* out = tensor_arg(ctx, args, 1, "logical_not.out");
  if (!a || !out) return;
  unary_elementwise(ctx, *a, *out, "logical_not.out", [](auto x) { return x == decltype(x)(0); });
}

}  // namespace

void register_logical_kernels(KernelRegistry& r) {
  const uint32_t all = kRealBoolDtypes;
  r.add("aten::logical_and.out", kernel(logical_and_out, all | kHalfDtypes));
  r.add("aten::logical_or.out", kernel(logical_or_out, all | kHalfDtypes));
  r.add("aten::logical_xor.out", kernel(logical_xor_out, all | kHalfDtypes));
  r.add("aten::logical_not.out", kernel(logical_not_out, kRealBoolDtypes | kHalfDtypes));
}

}  // namespace etscope::runtime::kernels
