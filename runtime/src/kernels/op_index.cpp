// gather and scatter (value overload) along one dimension with an int64 index tensor.
#include "kernels/register.h"
#include "kernels/util/elementwise_util.h"

namespace etscope::rt::kernels {
namespace {

// Checks ATen's shape rule for gather/scatter: index has self's rank (a 0-dim tensor counts as
// rank 1) and no larger extent than self outside `dim`.
bool check_index(KernelContext& ctx, const TensorImpl& self, const TensorImpl& index, int64_t* dim,
                 const EValue& dim_arg, const char* op) {
  if (index.dtype() != ScalarType::kLong) {
    ctx.fail(ErrorCode::kNotSupported, "%s: index must be int64", op);
    return false;
  }
  const int64_t d = dim_arg.tag == Tag::kInt ? normalize_dim(dim_arg.scalar.i, self.dim()) : -1;
  if (d < 0) {
    ctx.fail(ErrorCode::kInvalidArgument, "%s: dim is out of range", op);
    return false;
  }
  if (std::max(index.dim(), 1) != std::max(self.dim(), 1)) {
    ctx.fail(ErrorCode::kInvalidArgument, "%s: index must have self's rank", op);
    return false;
  }
  for (int i = 0; i < index.dim() && self.dim() > 0; ++i) {
    if (i != d && index.size(i) > self.size(i)) {
      ctx.fail(ErrorCode::kInvalidArgument, "%s: index is larger than self in dimension %d", op, i);
      return false;
    }
  }
  *dim = d;
  return true;
}

// Visits every element of `index` (contiguous), passing its linear position and the offset in
// a tensor with `strides` of the same position with the `dim` coordinate replaced by the index
// value. Returns false on an out-of-range index value.
template <typename F>
bool walk_index(const TensorImpl& index, std::span<const int64_t> strides, int64_t dim, int64_t limit, F f) {
  const int rank = index.dim();
  const int64_t* idx = index.data_as<int64_t>();
  const int64_t dstride = rank == 0 ? 1 : strides[static_cast<size_t>(dim)];
  std::array<int64_t, kMaxDims> counter{};
  int64_t base = 0;  // offset of the position with the dim coordinate set to 0
  for (int64_t i = 0; i < index.numel(); ++i) {
    const int64_t v = idx[i];  // ATen rejects negative values here
    if (v < 0 || v >= limit) return false;
    f(i, base + v * dstride);
    for (int d = rank - 1; d >= 0; --d) {
      const size_t k = static_cast<size_t>(d);
      if (d != dim) base += strides[k];
      if (++counter[k] < index.size(d)) break;
      if (d != dim) base -= strides[k] * counter[k];
      counter[k] = 0;
    }
  }
  return true;
}

// gather.out(self, dim, index, sparse_grad, out): out[i][j] = self[i][index[i][j]] (dim = 1).
void gather_out(KernelContext& ctx, Args args) {
  const char* op = "gather.out";
  if (!check_arg_count(ctx, args, 5, op)) return;
  TensorImpl* self = tensor_arg(ctx, args, 0, op);
  TensorImpl* index = tensor_arg(ctx, args, 2, op);
  TensorImpl* out = tensor_arg(ctx, args, 4, op);
  int64_t dim = 0;
  if (!self || !index || !out || !require_contiguous(ctx, op, {self, index, out}) ||
      !check_index(ctx, *self, *index, &dim, *args[1], op)) {
    return;
  }
  if (out->dtype() != self->dtype()) {
    ctx.fail(ErrorCode::kInvalidArgument, "%s: output dtype must match self's", op);
    return;
  }
  if (!resize_or_fail(ctx, out, index->sizes(), op)) return;
  const size_t es = self->element_size();
  const auto* src = static_cast<const uint8_t*>(self->data());
  auto* dst = static_cast<uint8_t*>(out->data());
  const int64_t limit = self->dim() == 0 ? 1 : self->size(static_cast<int>(dim));
  if (!walk_index(*index, self->strides(), dim, limit, [&](int64_t i, int64_t off) {
        std::memcpy(dst + static_cast<size_t>(i) * es, src + static_cast<size_t>(off) * es, es);
      })) {
    ctx.fail(ErrorCode::kInvalidArgument, "%s: index value out of range for dimension of size %lld", op,
             static_cast<long long>(limit));
  }
}

// scatter.value_out(self, dim, index, value, out): out = self, then out[i][index[i][j]] = value.
void scatter_value_out(KernelContext& ctx, Args args) {
  const char* op = "scatter.value_out";
  if (!check_arg_count(ctx, args, 5, op)) return;
  TensorImpl* self = tensor_arg(ctx, args, 0, op);
  TensorImpl* index = tensor_arg(ctx, args, 2, op);
  TensorImpl* out = tensor_arg(ctx, args, 4, op);
  int64_t dim = 0;
  if (!self || !index || !out || !require_contiguous(ctx, op, {self, index, out}) ||
      !check_index(ctx, *self, *index, &dim, *args[1], op)) {
    return;
  }
  const EValue& v = *args[3];
  if (out->dtype() != self->dtype() || !is_supported_dtype(out->dtype()) ||
      (v.tag != Tag::kInt && v.tag != Tag::kDouble && v.tag != Tag::kBool)) {
    ctx.fail(ErrorCode::kInvalidArgument, "%s: needs a scalar value and an output of self's (real) dtype", op);
    return;
  }
  if (!resize_or_fail(ctx, out, self->sizes(), op)) return;
  if (out->data() != self->data()) std::memmove(out->data(), self->data(), self->nbytes());
  const int64_t limit = self->dim() == 0 ? 1 : self->size(static_cast<int>(dim));
  bool ok = true;
  dispatch_real_and_bool(out->dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T value = v.tag == Tag::kInt    ? convert<T>(v.scalar.i)
                    : v.tag == Tag::kBool ? convert<T>(v.scalar.b)
                                          : convert<T>(v.scalar.d);
    T* y = out->data_as<T>();
    ok = walk_index(*index, out->strides(), dim, limit, [&](int64_t, int64_t off) { y[off] = value; });
  });
  if (!ok) {
    ctx.fail(ErrorCode::kInvalidArgument, "%s: index value out of range for dimension of size %lld", op,
             static_cast<long long>(limit));
  }
}

}  // namespace

void register_index_kernels(KernelRegistry& r) {
  r.add("aten::gather.out", kernel(gather_out, kRealBoolDtypes));
  r.add("aten::scatter.value_out", kernel(scatter_value_out, kRealBoolDtypes));
}

}  // namespace etscope::rt::kernels
