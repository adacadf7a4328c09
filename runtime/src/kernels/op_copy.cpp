// Copies that keep the shape: alias_copy, detach_copy / lift_fresh_copy, clone, _to_copy, copy
// and copy_, dim_order_ops::_to_dim_order_copy / _clone_dim_order (dtype conversion and dim-order
// change).
#include "kernels/register.h"
#include "kernels/util/half_via_float.h"
#include "kernels/util/elementwise_util.h"
#include "kernels/util/copy_util.h"

namespace etscope::runtime::kernels {
namespace {

// alias_copy.out(self, out), detach_copy.out and lift_fresh_copy.out (same arguments): plain
// copies (the last two are autograd-only distinctions ExecuTorch keeps in the graph).
template <int Which>
void plain_copy_out(KernelContext& ctx, Args args) {
  static constexpr const char* names[] = {"alias_copy.out", "detach_copy.out", "lift_fresh_copy.out"};
  const char* op = names[Which];
  if (!check_arg_count(ctx, args, 2, op)) return;
  TensorImpl* in = tensor_arg(ctx, args, 0, op);
  TensorImpl* out = tensor_arg(ctx, args, 1, op);
  if (!in || !out || !require_contiguous(ctx, op, {in, out}) || !resize_or_fail(ctx, out, in->sizes(), op)) return;
  same_bytes_copy(ctx, *in, *out, op);
}

// _to_copy.out(self, non_blocking, memory_format?, out): converts to out's dtype.
void to_copy_out(KernelContext& ctx, Args args) {
  const char* op = "_to_copy.out";
  if (!check_arg_count(ctx, args, 4, op)) return;
  TensorImpl* in = tensor_arg(ctx, args, 0, op);
  TensorImpl* out = tensor_arg(ctx, args, 3, op);
  if (!in || !out || !supported(ctx, op, {in, out})) return;
  if (out->dim() != in->dim() || !resize_or_fail(ctx, out, in->sizes(), op)) {
    if (!ctx.failed()) ctx.fail(ErrorCode::kInvalidArgument, "%s: output rank must match the input's", op);
    return;
  }
  copy_strided(*in, *out);
}

// copy.out(self, src, non_blocking, out): out (self's shape and dtype) = src broadcast to that
// shape and converted.
void copy_out(KernelContext& ctx, Args args) {
  const char* op = "copy.out";
  if (!check_arg_count(ctx, args, 4, op)) return;
  TensorImpl* self = tensor_arg(ctx, args, 0, op);
  TensorImpl* src = tensor_arg(ctx, args, 1, op);
  TensorImpl* out = tensor_arg(ctx, args, 3, op);
  if (!self || !src || !out || !supported(ctx, op, {self, src, out}) || !require_contiguous(ctx, op, {self, src, out})) return;
  std::array<int64_t, kMaxDims> shape{};
  int dim = 0;
  if (out->dtype() != self->dtype() || !broadcast_shape(self->sizes(), src->sizes(), &shape, &dim) ||
      dim != self->dim() || !std::equal(self->sizes().begin(), self->sizes().end(), shape.begin())) {
    ctx.fail(ErrorCode::kInvalidArgument, "%s: src must broadcast to self's shape and out have self's dtype", op);
    return;
  }
  if (!resize_or_fail(ctx, out, self->sizes(), op)) return;
  if (!is_supported_dtype(src->dtype()) || !is_supported_dtype(out->dtype())) {
    BroadcastIndex bi(out->sizes(), src->sizes());
    for (int64_t i = 0; i < out->numel(); ++i, bi.advance()) {
      store_from<double>(out->dtype(), out->data(), i, load_as<double>(src->dtype(), src->data(), bi.index()));
    }
    return;
  }
  dispatch_real_and_bool(src->dtype(), [&](auto in_tag) {
    using I = typename decltype(in_tag)::type;
    dispatch_real_and_bool(out->dtype(), [&](auto out_tag) {
      using O = typename decltype(out_tag)::type;
      const I* x = src->data_as<I>();
      O* y = out->data_as<O>();
      BroadcastIndex bi(out->sizes(), src->sizes());
      for (int64_t i = 0; i < out->numel(); ++i, bi.advance()) y[i] = convert<O>(x[bi.index()]);
    });
  });
}

// clone.out(self, memory_format?, out): copies into out's own dim order.
void clone_out(KernelContext& ctx, Args args) {
  const char* op = "clone.out";
  if (!check_arg_count(ctx, args, 3, op)) return;
  TensorImpl* in = tensor_arg(ctx, args, 0, op);
  TensorImpl* out = tensor_arg(ctx, args, 2, op);
  if (!in || !out || !supported(ctx, op, {in, out})) return;
  if (in->dtype() != out->dtype()) {
    ctx.fail(ErrorCode::kInvalidArgument, "%s: output dtype must match the input's", op);
    return;
  }
  if (out->dim() != in->dim() || !resize_or_fail(ctx, out, in->sizes(), op)) {
    if (!ctx.failed()) ctx.fail(ErrorCode::kInvalidArgument, "%s: output rank must match the input's", op);
    return;
  }
  copy_strided(*in, *out);
}

// dim_order_ops::_to_dim_order_copy.out(self, non_blocking, dim_order?, out) and
// _clone_dim_order.out (same arguments): converts dtype and lays the data out in out's dim order,
// which must equal dim_order when that is given.
void dim_order_copy(KernelContext& ctx, Args args, const char* op) {
  if (!check_arg_count(ctx, args, 4, op)) return;
  TensorImpl* in = tensor_arg(ctx, args, 0, op);
  TensorImpl* out = tensor_arg(ctx, args, 3, op);
  if (!in || !out || !supported(ctx, op, {in, out})) return;
  if (out->dim() != in->dim()) {
    ctx.fail(ErrorCode::kInvalidArgument, "%s: output rank %d differs from the input's %d", op, out->dim(), in->dim());
    return;
  }
  if (!args[2]->is_none()) {
    IntList order;
    if (!int_list_arg(ctx, args, 2, &order, op)) return;
    bool match = order.size == static_cast<size_t>(out->dim());
    for (size_t i = 0; match && i < order.size; ++i) match = order[i] == out->dim_order()[i];
    if (!match) {
      ctx.fail(ErrorCode::kInvalidArgument, "%s: dim_order does not match the output tensor's dim order", op);
      return;
    }
  }
  if (!resize_or_fail(ctx, out, in->sizes(), op)) return;
  copy_strided(*in, *out);
}
void to_dim_order_copy_out(KernelContext& ctx, Args args) { dim_order_copy(ctx, args, "_to_dim_order_copy.out"); }
void clone_dim_order_out(KernelContext& ctx, Args args) { dim_order_copy(ctx, args, "_clone_dim_order.out"); }

}  // namespace

void register_copy_kernels(KernelRegistry& r) {
  r.add("aten::alias_copy.out", kernel(plain_copy_out<0>, kRealBoolDtypes | kHalfDtypes));
  r.add("aten::detach_copy.out", kernel(plain_copy_out<1>, kRealBoolDtypes | kHalfDtypes));
  r.add("aten::lift_fresh_copy.out", kernel(plain_copy_out<2>, kRealBoolDtypes | kHalfDtypes));
  r.add("aten::_to_copy.out", kernel(to_copy_out, kRealBoolDtypes | kHalfDtypes));
  r.add("aten::copy.out", kernel(copy_out, kRealBoolDtypes | kHalfDtypes));
  // copy_(self, src, non_blocking) -> self: the return value is the out argument, written in place.
  r.add("aten::copy_", kernel(copy_out, kRealBoolDtypes | kHalfDtypes));
  r.add("aten::clone.out", kernel(clone_out, kRealBoolDtypes | kHalfDtypes));
  r.add("dim_order_ops::_to_dim_order_copy.out", kernel(to_dim_order_copy_out, kRealBoolDtypes | kHalfDtypes));
  r.add("dim_order_ops::_clone_dim_order.out", kernel(clone_dim_order_out, kRealBoolDtypes | kHalfDtypes));
}

}  // namespace etscope::runtime::kernels
