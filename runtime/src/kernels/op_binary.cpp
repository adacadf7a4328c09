// add, sub, mul, div (Tensor and Scalar overloads, with alpha where the schema has it).
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "kernels/register.h"
#include "kernels/util/elementwise_util.h"

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

}  // namespace

void register_binary_kernels(KernelRegistry& r) {
  r.add("aten::add.out", kernel(add_out, kRealBoolDtypes | kHalfDtypes));
  r.add("aten::add.Scalar_out", kernel(add_scalar_out, kRealBoolDtypes | kHalfDtypes));
  r.add("aten::sub.out", kernel(sub_out, kRealDtypes | kHalfDtypes));
  r.add("aten::sub.Scalar_out", kernel(sub_scalar_out, kRealDtypes | kHalfDtypes));
  r.add("aten::mul.out", kernel(mul_out, kRealBoolDtypes | kHalfDtypes));
  r.add("aten::mul.Scalar_out", kernel(mul_scalar_out, kRealBoolDtypes | kHalfDtypes));
  r.add("aten::div.out", kernel(div_out, kRealBoolDtypes | kHalfDtypes));
  r.add("aten::div.Scalar_out", kernel(div_scalar_out, kRealBoolDtypes | kHalfDtypes));
}

}  // namespace etscope::runtime::kernels
