// Tensor factories and fills: empty / dim_order_ops::_empty_dim_order, zeros, ones, full,
// full_like, fill (Scalar and Tensor value), scalar_tensor, arange, and the random fills rand and
// randn.
#include <cmath>
#include <limits>

#include "kernels/register.h"
#include "kernels/util/half_via_float.h"
#include "kernels/util/elementwise_util.h"
#include "kernels/util/copy_util.h"
#include "kernels/util/random.h"
#include "kernels/util/shape_util.h"

namespace etscope::runtime::kernels {
namespace {

// Fills every element of out with a Scalar EValue, converted to out's dtype.
bool fill(KernelContext& ctx, TensorImpl& out, const EValue& v, const char* op) {
  if (v.tag != Tag::kInt && v.tag != Tag::kDouble && v.tag != Tag::kBool) {
    ctx.fail(ErrorCode::kInvalidArgument, "%s: fill value must be a scalar", op);
    return false;
  }
  const bool ok = dispatch_real_and_bool(out.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T value = v.tag == Tag::kInt    ? convert<T>(v.scalar.i)
                    : v.tag == Tag::kBool ? convert<T>(v.scalar.b)
                                          : convert<T>(v.scalar.d);
    T* y = out.data_as<T>();
    std::fill(y, y + out.numel(), value);
  });
  if (!ok) ctx.fail(ErrorCode::kNotSupported, "%s: unsupported dtype %s", op, scalar_type_name(out.dtype()).c_str());
  return ok;
}

// full_like.out(self, fill_value, memory_format?, out)
void full_like_out(KernelContext& ctx, Args args) {
  const char* op = "full_like.out";
  if (!check_arg_count(ctx, args, 4, op)) return;
  TensorImpl* in = tensor_arg(ctx, args, 0, op);
  TensorImpl* out = tensor_arg(ctx, args, 3, op);
  if (!in || !out) return;
  if (out->dim() != in->dim()) {
    ctx.fail(ErrorCode::kInvalidArgument, "%s: output rank differs from self's", op);
    return;
  }
  if (!resize_or_fail(ctx, out, in->sizes(), op)) return;
  fill(ctx, *out, *args[1], op);
}

// scalar_tensor.out(s, out): a 0-dim tensor holding s.
void scalar_tensor_out(KernelContext& ctx, Args args) {
  const char* op = "scalar_tensor.out";
  if (!check_arg_count(ctx, args, 2, op)) return;
  TensorImpl* out = tensor_arg(ctx, args, 1, op);
  if (!out) return;
  if (out->numel() != 1) {
    ctx.fail(ErrorCode::kInvalidArgument, "%s: output must hold one element", op);
    return;
  }
  fill(ctx, *out, *args[0], op);
}

// The creation ops' common start: args[0] is the int list `size`, args[out_index] the output,
// which must have as many dimensions and is resized to it. Returns the output or nullptr (failed).
TensorImpl* sized_output(KernelContext& ctx, Args args, size_t out_index, const char* op) {
  if (!check_arg_count(ctx, args, out_index + 1, op)) return nullptr;
  TensorImpl* out = tensor_arg(ctx, args, out_index, op);
  IntList size;
  if (!out || !int_list_arg(ctx, args, 0, &size, op)) return nullptr;
  if (out->dim() != static_cast<int>(size.size)) {
    ctx.fail(ErrorCode::kInvalidArgument, "%s: output has rank %d, size has %zu items", op, out->dim(), size.size);
    return nullptr;
  }
  return resize_or_fail(ctx, out, size.span(), op) ? out : nullptr;
}

// full.out(size, fill_value, out): out resized to `size`, every element fill_value.
void full_out(KernelContext& ctx, Args args) {
  const char* op = "full.out";
  TensorImpl* out = sized_output(ctx, args, 2, op);
  if (out != nullptr) fill(ctx, *out, *args[1], op);
}

// rand.out(size, out) / randn.out(size, out): out resized to `size`, filled from the runtime's
// random stream with uniform numbers in [0, 1) or standard normal ones (float types only).
template <bool Normal>
void random_out(KernelContext& ctx, Args args) {
  const char* op = Normal ? "randn.out" : "rand.out";
  TensorImpl* out = sized_output(ctx, args, 1, op);
  if (out == nullptr) return;
  if (!is_floating(out->dtype())) {
    ctx.fail(ErrorCode::kInvalidArgument, "%s: out must have a floating dtype, got %s", op,
             scalar_type_name(out->dtype()).c_str());
    return;
  }
  const auto n = static_cast<uint64_t>(out->numel());
  const RandomDraws draws(Normal ? 2 * n : n);
  for (uint64_t i = 0; i < n; ++i) {
    store_from<double>(out->dtype(), out->data(), static_cast<int64_t>(i), Normal ? draws.normal(i) : draws.uniform(i));
  }
}

// fill.Scalar_out(self, value, out) / fill.Tensor_out(self, value (0-dim), out): self's shape,
// every element value.
void fill_scalar_out(KernelContext& ctx, Args args) {
  const char* op = "fill.Scalar_out";
  if (!check_arg_count(ctx, args, 3, op)) return;
  TensorImpl* in = tensor_arg(ctx, args, 0, op);
  TensorImpl* out = tensor_arg(ctx, args, 2, op);
  if (!in || !out) return;
  if (out->dim() != in->dim() || out->dtype() != in->dtype() || !resize_or_fail(ctx, out, in->sizes(), op)) {
    if (!ctx.failed()) ctx.fail(ErrorCode::kInvalidArgument, "%s: output must have self's rank and dtype", op);
    return;
  }
  fill(ctx, *out, *args[1], op);
}
void fill_tensor_out(KernelContext& ctx, Args args) {
  const char* op = "fill.Tensor_out";
  if (!check_arg_count(ctx, args, 3, op)) return;
  TensorImpl* in = tensor_arg(ctx, args, 0, op);
  TensorImpl* value = tensor_arg(ctx, args, 1, op);
  TensorImpl* out = tensor_arg(ctx, args, 2, op);
  if (!in || !value || !out || !supported(ctx, op, {value})) return;
  if (value->dim() != 0) {
    ctx.fail(ErrorCode::kInvalidArgument, "%s: value must be a 0-dim tensor", op);
    return;
  }
  if (out->dim() != in->dim() || out->dtype() != in->dtype() || !resize_or_fail(ctx, out, in->sizes(), op)) {
    if (!ctx.failed()) ctx.fail(ErrorCode::kInvalidArgument, "%s: output must have self's rank and dtype", op);
    return;
  }
  EValue v;
  if (is_floating(value->dtype())) {
    v.tag = Tag::kDouble;
    v.scalar.d = load_as<double>(value->dtype(), value->data(), 0);
  } else {
    v.tag = Tag::kInt;
    v.scalar.i = load_as<int64_t>(value->dtype(), value->data(), 0);
  }
  fill(ctx, *out, v, op);
}

// empty.out(size, memory_format?, out): only the shape; contents are unspecified.
// dim_order_ops::_empty_dim_order.out(size, dim_order?, out) is the same, with a dim order that,
// when given, must be out's.
template <bool DimOrder>
void empty_out(KernelContext& ctx, Args args) {
  const char* op = DimOrder ? "_empty_dim_order.out" : "empty.out";
  if (!check_arg_count(ctx, args, 3, op)) return;
  TensorImpl* out = tensor_arg(ctx, args, 2, op);
  IntList size;
  if (!out || !int_list_arg(ctx, args, 0, &size, op)) return;
  if (out->dim() != static_cast<int>(size.size)) {
    ctx.fail(ErrorCode::kInvalidArgument, "%s: output has rank %d, size has %zu items", op, out->dim(), size.size);
    return;
  }
  if (DimOrder && !args[1]->is_none()) {
    IntList order;
    if (!int_list_arg(ctx, args, 1, &order, op)) return;
    bool same = order.size == static_cast<size_t>(out->dim());
    for (size_t i = 0; same && i < order.size; ++i) same = order[i] == out->dim_order()[i];
    if (!same) {
      ctx.fail(ErrorCode::kInvalidArgument, "%s: dim_order differs from the output's", op);
      return;
    }
  }
  resize_or_fail(ctx, out, size.span(), op);
}

// arange.out(end, out) and arange.start_out(start, end, step, out): ceil((end - start) / step)
// values start + i * step.
void arange_impl(KernelContext& ctx, const EValue& start, const EValue& end, const EValue& step, TensorImpl* out,
                 const char* op) {
  const double s = start.scalar_as_double(), e = end.scalar_as_double(), st = step.scalar_as_double();
  if (st == 0 || !std::isfinite(s) || !std::isfinite(e) || !std::isfinite(st) || (st > 0 && e < s) || (st < 0 && e > s)) {
    ctx.fail(ErrorCode::kInvalidArgument, "%s: invalid range [%g, %g) with step %g", op, s, e, st);
    return;
  }
  const double count = std::ceil((e - s) / st);
  if (count > 1e15) {
    ctx.fail(ErrorCode::kInvalidArgument, "%s: range is too large", op);
    return;
  }
  const int64_t n[1] = {static_cast<int64_t>(count)};
  if (!rank_is(ctx, op, *out, 1) || !resize_or_fail(ctx, out, n, op)) return;
  const bool integral = start.tag != Tag::kDouble && end.tag != Tag::kDouble && step.tag != Tag::kDouble;
  const bool ok = dispatch_real_and_bool(out->dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* y = out->data_as<T>();
    for (int64_t i = 0; i < n[0]; ++i) {
      y[i] = integral ? convert<T>(start.scalar.i + i * step.scalar.i) : convert<T>(s + static_cast<double>(i) * st);
    }
  });
  if (!ok || out->dtype() == ScalarType::kBool) {
    ctx.fail(ErrorCode::kNotSupported, "%s: unsupported dtype %s", op, scalar_type_name(out->dtype()).c_str());
  }
}
void arange_out(KernelContext& ctx, Args args) {
  if (!check_arg_count(ctx, args, 2, "arange.out")) return;
  TensorImpl* out = tensor_arg(ctx, args, 1, "arange.out");
  EValue zero, one;
  zero.tag = one.tag = Tag::kInt;
  one.scalar.i = 1;
  if (out) arange_impl(ctx, zero, *args[0], one, out, "arange.out");
}
void arange_start_out(KernelContext& ctx, Args args) {
  if (!check_arg_count(ctx, args, 4, "arange.start_out")) return;
  TensorImpl* out = tensor_arg(ctx, args, 3, "arange.start_out");
  if (out) arange_impl(ctx, *args[0], *args[1], *args[2], out, "arange.start_out");
}

// zeros.out(size, out) / ones.out(size, out)
template <int Value>
void constant_out(KernelContext& ctx, Args args) {
  const char* op = Value == 0 ? "zeros.out" : "ones.out";
  if (!check_arg_count(ctx, args, 2, op)) return;
  TensorImpl* out = tensor_arg(ctx, args, 1, op);
  IntList size;
  if (!out || !int_list_arg(ctx, args, 0, &size, op) || !rank_is(ctx, op, *out, size.size) ||
      !resize_or_fail(ctx, out, size.span(), op)) {
    return;
  }
  const bool ok = dispatch_real_and_bool(out->dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    std::fill(out->data_as<T>(), out->data_as<T>() + out->numel(), convert<T>(Value));
  });
  if (!ok) ctx.fail(ErrorCode::kNotSupported, "%s: unsupported dtype %s", op, scalar_type_name(out->dtype()).c_str());
}

}  // namespace

void register_factory_kernels(KernelRegistry& r) {
  r.add("aten::empty.out", kernel(empty_out<false>, kRealBoolDtypes | kHalfDtypes));
  r.add("dim_order_ops::_empty_dim_order.out", kernel(empty_out<true>, kRealBoolDtypes | kHalfDtypes));
  r.add("aten::zeros.out", half_kernel<constant_out<0>>(kRealBoolDtypes));
  r.add("aten::ones.out", half_kernel<constant_out<1>>(kRealBoolDtypes));
  r.add("aten::full.out", half_kernel<full_out>(kRealBoolDtypes));
  r.add("aten::full_like.out", half_kernel<full_like_out>(kRealBoolDtypes));
  r.add("aten::fill.Scalar_out", half_kernel<fill_scalar_out>(kRealBoolDtypes));
  r.add("aten::fill.Tensor_out", half_kernel<fill_tensor_out>(kRealBoolDtypes));
  r.add("aten::scalar_tensor.out", half_kernel<scalar_tensor_out>(kRealBoolDtypes));
  r.add("aten::arange.out", half_kernel<arange_out>(kRealDtypes));
  r.add("aten::arange.start_out", half_kernel<arange_start_out>(kRealDtypes));
  r.add("aten::rand.out", kernel(random_out<false>, kFloatDtypes | kHalfDtypes));
  r.add("aten::randn.out", kernel(random_out<true>, kFloatDtypes | kHalfDtypes));
}

}  // namespace etscope::runtime::kernels
