// Boolean masks: masked_fill, masked_select, masked_scatter, and nonzero (the coordinates of the
// non-zero elements).
#include <algorithm>

#include "kernels/register.h"
#include "kernels/util/half_via_float.h"
#include "kernels/util/elementwise_util.h"
#include "kernels/util/shape_util.h"
#include "kernels/util/copy_util.h"

namespace etscope::runtime::kernels {
namespace {

// masked_fill.Scalar_out(self, mask, value, out): mask (bool) broadcasts to self's shape.
void masked_fill_out(KernelContext& ctx, Args args) {
  const char* op = "masked_fill.Scalar_out";
  if (!check_arg_count(ctx, args, 4, op)) return;
  TensorImpl* in = tensor_arg(ctx, args, 0, op);
  TensorImpl* mask = tensor_arg(ctx, args, 1, op);
  TensorImpl* out = tensor_arg(ctx, args, 3, op);
  if (!in || !mask || !out || !same_dtype(ctx, op, *in, *out) || !require_contiguous(ctx, op, {mask})) return;
  if (mask->dtype() != ScalarType::kBool) {
    ctx.fail(ErrorCode::kInvalidArgument, "%s: mask must be bool", op);
    return;
  }
  std::array<int64_t, kMaxDims> shape{};
  int dim = 0;
  if (!broadcast_shape(in->sizes(), mask->sizes(), &shape, &dim) || dim != in->dim() ||
      !std::equal(in->sizes().begin(), in->sizes().end(), shape.begin())) {
    ctx.fail(ErrorCode::kInvalidArgument, "%s: mask does not broadcast to self's shape", op);
    return;
  }
  if (!resize_or_fail(ctx, out, in->sizes(), op)) return;
  const EValue& value = *args[2];
  const bool* m = mask->data_as<bool>();
  const bool ok = dispatch_real_and_bool(in->dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T fill = value.tag == Tag::kInt ? convert<T>(value.scalar.i) : convert<T>(value.scalar_as_double());
    const T* x = in->data_as<T>();
    T* y = out->data_as<T>();
    BroadcastIndex im(in->sizes(), mask->sizes());
    for (int64_t i = 0; i < in->numel(); ++i, im.advance()) y[i] = m[im.index()] ? fill : x[i];
  });
  if (!ok) ctx.fail(ErrorCode::kNotSupported, "%s: unsupported dtype %s", op, scalar_type_name(in->dtype()).c_str());
}

// nonzero.out(self, out): the coordinates of self's non-zero elements, one int64 row each, in
// row-major order; out is resized to [count, rank] (within its planned bound). The exporter plans
// out column-major (dim order [1, 0], as eager PyTorch returns it), so it is written through its
// strides.
void nonzero_out(KernelContext& ctx, Args args) {
  const char* op = "nonzero.out";
  if (!check_arg_count(ctx, args, 2, op)) return;
  TensorImpl* self = tensor_arg(ctx, args, 0, op);
  TensorImpl* out = tensor_arg(ctx, args, 1, op);
  if (!self || !out || !require_contiguous(ctx, op, {self})) return;
  if (out->dim() != 2) {
    ctx.fail(ErrorCode::kInvalidArgument, "%s: out must have rank 2, has %d", op, out->dim());
    return;
  }
  if (out->dtype() != ScalarType::kLong) {
    ctx.fail(ErrorCode::kInvalidArgument, "%s: out must be int64", op);
    return;
  }
  const int rank = self->dim();
  bool ok = true;
  int64_t count = 0;
  ok = dispatch_real_and_bool(self->dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* x = self->data_as<T>();
    for (int64_t i = 0; i < self->numel(); ++i) count += x[i] != T(0);
    const int64_t sizes[2] = {count, rank};
    if (!resize_or_fail(ctx, out, sizes, op)) return;
    int64_t* y = out->data_as<int64_t>();
    const int64_t row_stride = out->strides()[0], col_stride = out->strides()[1];
    std::array<int64_t, kMaxDims> coord{};
    int64_t row = 0;
    for (int64_t i = 0; i < self->numel(); ++i) {
      if (x[i] != T(0)) {
        for (int d = 0; d < rank; ++d) y[row * row_stride + d * col_stride] = coord[static_cast<size_t>(d)];
        ++row;
      }
      for (int d = rank - 1; d >= 0; --d) {
        if (++coord[static_cast<size_t>(d)] < self->size(d)) break;
        coord[static_cast<size_t>(d)] = 0;
      }
    }
  });
  if (!ok) {
    ctx.fail(ErrorCode::kNotSupported, "%s: dtype %s is not supported", op, scalar_type_name(self->dtype()).c_str());
  }
}

// masked_select.out(self, mask, out): the elements of self where the bool mask (broadcast
// together with self) is true, as a 1-D tensor.
void masked_select_out(KernelContext& ctx, Args args) {
  const char* op = "masked_select.out";
  if (!check_arg_count(ctx, args, 3, op)) return;
  TensorImpl* self = tensor_arg(ctx, args, 0, op);
  TensorImpl* mask = tensor_arg(ctx, args, 1, op);
  TensorImpl* out = tensor_arg(ctx, args, 2, op);
  if (!self || !mask || !out || !require_contiguous(ctx, op, {self, mask, out})) return;
  if (mask->dtype() != ScalarType::kBool || out->dtype() != self->dtype()) {
    ctx.fail(ErrorCode::kInvalidArgument, "%s: mask must be bool and out must have self's dtype", op);
    return;
  }
  std::array<int64_t, kMaxDims> shape{};
  int rank = 0;
  if (!broadcast_shape(self->sizes(), mask->sizes(), &shape, &rank)) {
    ctx.fail(ErrorCode::kInvalidArgument, "%s: self and mask cannot be broadcast together", op);
    return;
  }
  int64_t total = 1;
  for (int d = 0; d < rank; ++d) total *= shape[static_cast<size_t>(d)];
  const std::span<const int64_t> bshape{shape.data(), static_cast<size_t>(rank)};
  const auto* m = static_cast<const uint8_t*>(mask->data());
  int64_t count = 0;
  {
    BroadcastIndex mi(bshape, mask->sizes());
    for (int64_t i = 0; i < total; ++i, mi.advance()) count += m[mi.index()] != 0;
  }
  const int64_t sizes[1] = {count};
  if (!resize_or_fail(ctx, out, sizes, op)) return;
  const size_t es = self->element_size();
  const auto* x = static_cast<const uint8_t*>(self->data());
  auto* y = static_cast<uint8_t*>(out->data());
  BroadcastIndex mi(bshape, mask->sizes());
  BroadcastIndex si(bshape, self->sizes());
  for (int64_t i = 0; i < total; ++i, mi.advance(), si.advance()) {
    if (m[mi.index()] != 0) {
      std::memmove(y, x + static_cast<size_t>(si.index()) * es, es);
      y += es;
    }
  }
}

// masked_scatter.out(self, mask, source, out): out = self, then the positions where the bool
// mask (broadcast to self's shape) is true take source's elements in order (row-major);
// source must have at least as many elements as the mask has true positions.
void masked_scatter_out(KernelContext& ctx, Args args) {
  const char* op = "masked_scatter.out";
  if (!check_arg_count(ctx, args, 4, op)) return;
  TensorImpl* self = tensor_arg(ctx, args, 0, op);
  TensorImpl* mask = tensor_arg(ctx, args, 1, op);
  TensorImpl* source = tensor_arg(ctx, args, 2, op);
  TensorImpl* out = tensor_arg(ctx, args, 3, op);
  if (!self || !mask || !source || !out || !require_contiguous(ctx, op, {self, mask, source, out})) return;
  if (mask->dtype() != ScalarType::kBool || source->dtype() != self->dtype() || out->dtype() != self->dtype()) {
    ctx.fail(ErrorCode::kInvalidArgument, "%s: mask must be bool, source and out must have self's dtype", op);
    return;
  }
  std::array<int64_t, kMaxDims> shape{};
  int rank = 0;
  bool same = broadcast_shape(self->sizes(), mask->sizes(), &shape, &rank) && rank == self->dim();
  for (int d = 0; same && d < rank; ++d) same = shape[static_cast<size_t>(d)] == self->size(d);
  if (!same) {
    ctx.fail(ErrorCode::kInvalidArgument, "%s: mask must broadcast to self's shape", op);
    return;
  }
  const auto* m = static_cast<const uint8_t*>(mask->data());
  int64_t count = 0;
  {
    BroadcastIndex mi(self->sizes(), mask->sizes());
    for (int64_t i = 0; i < self->numel(); ++i, mi.advance()) count += m[mi.index()] != 0;
  }
  if (count > source->numel()) {
    ctx.fail(ErrorCode::kInvalidArgument, "%s: the mask selects %lld elements, source has %lld", op,
             static_cast<long long>(count), static_cast<long long>(source->numel()));
    return;
  }
  if (!copy_self(ctx, *self, *out, op)) return;
  const size_t es = self->element_size();
  auto* y = static_cast<uint8_t*>(out->data());
  const auto* src = static_cast<const uint8_t*>(source->data());
  BroadcastIndex mi(self->sizes(), mask->sizes());
  for (int64_t i = 0; i < self->numel(); ++i, mi.advance()) {
    if (m[mi.index()] != 0) {
      std::memmove(y + static_cast<size_t>(i) * es, src, es);
      src += es;
    }
  }
}

}  // namespace

void register_mask_kernels(KernelRegistry& r) {
  r.add("aten::masked_fill.Scalar_out", half_kernel<masked_fill_out>(kRealBoolDtypes));
  r.add("aten::masked_select.out", kernel(masked_select_out, kRealBoolDtypes | kHalfDtypes));
  r.add("aten::masked_scatter.out", kernel(masked_scatter_out, kRealBoolDtypes | kHalfDtypes));
  r.add("aten::nonzero.out", half_kernel<nonzero_out>(kRealBoolDtypes));
}

}  // namespace etscope::runtime::kernels
