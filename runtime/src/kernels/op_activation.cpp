// relu, sigmoid, hardtanh, clamp, threshold_backward, exp, neg.
#include <cmath>

#include "kernels/register.h"
#include "kernels/util/elementwise_util.h"

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

}  // namespace

void register_activation_kernels(KernelRegistry& r) {
  r.add("aten::relu.out", kernel(relu_out, kRealDtypes | kHalfDtypes));
  r.add("aten::sigmoid.out", kernel(sigmoid_out, kRealBoolDtypes | kHalfDtypes));
  r.add("aten::hardtanh.out", kernel(hardtanh_out, kRealDtypes | kHalfDtypes));
  r.add("aten::clamp.out", kernel(clamp_out, kRealDtypes | kHalfDtypes));
  r.add("aten::threshold_backward.grad_input", kernel(threshold_backward_out, kRealDtypes | kHalfDtypes));
  r.add("aten::exp.out", kernel(exp_out, kRealBoolDtypes | kHalfDtypes));
  r.add("aten::neg.out", kernel(neg_out, kRealDtypes | kHalfDtypes));
}

}  // namespace etscope::runtime::kernels
