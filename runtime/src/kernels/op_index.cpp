// gather, scatter (value and src overloads) and scatter_add along one dimension with an int64
// index tensor.
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

// Visits every element of `index` (contiguous), passing its linear position, the offset in a
// tensor with `strides` of the same position with the `dim` coordinate replaced by the index
// value, and the offset of the same position in a tensor with `src_strides` (0 when that span is
// empty). Returns false on an out-of-range index value.
template <typename F>
bool walk_index(const TensorImpl& index, std::span<const int64_t> strides, int64_t dim, int64_t limit, F f,
                std::span<const int64_t> src_strides = {}) {
  const int rank = index.dim();
  const int64_t* idx = index.data_as<int64_t>();
  const int64_t dstride = rank == 0 ? 1 : strides[static_cast<size_t>(dim)];
  const bool has_src = !src_strides.empty();
  std::array<int64_t, kMaxDims> counter{};
  int64_t base = 0;  // offset of the position with the dim coordinate set to 0
  int64_t src = 0;
  for (int64_t i = 0; i < index.numel(); ++i) {
    const int64_t v = idx[i];  // ATen rejects negative values here
    if (v < 0 || v >= limit) return false;
    f(i, base + v * dstride, src);
    for (int d = rank - 1; d >= 0; --d) {
      const size_t k = static_cast<size_t>(d);
      if (d != dim) base += strides[k];
      if (has_src) src += src_strides[k];
      if (++counter[k] < index.size(d)) break;
      if (d != dim) base -= strides[k] * counter[k];
      if (has_src) src -= src_strides[k] * counter[k];
      counter[k] = 0;
    }
  }
  return true;
}

// The scatters start from out = self.
bool copy_self(KernelContext& ctx, const TensorImpl& self, TensorImpl& out, const char* op) {
  if (!resize_or_fail(ctx, &out, self.sizes(), op)) return false;
  if (out.data() != self.data()) std::memmove(out.data(), self.data(), self.nbytes());
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
  if (!walk_index(*index, self->strides(), dim, limit, [&](int64_t i, int64_t off, int64_t) {
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
  if (!copy_self(ctx, *self, *out, op)) return;
  const int64_t limit = self->dim() == 0 ? 1 : self->size(static_cast<int>(dim));
  bool ok = true;
  dispatch_real_and_bool(out->dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T value = v.tag == Tag::kInt    ? convert<T>(v.scalar.i)
                    : v.tag == Tag::kBool ? convert<T>(v.scalar.b)
                                          : convert<T>(v.scalar.d);
    T* y = out->data_as<T>();
    ok = walk_index(*index, out->strides(), dim, limit, [&](int64_t, int64_t off, int64_t) { y[off] = value; });
  });
  if (!ok) {
    ctx.fail(ErrorCode::kInvalidArgument, "%s: index value out of range for dimension of size %lld", op,
             static_cast<long long>(limit));
  }
}

// scatter.src_out(self, dim, index, src, out) and scatter_add.out (same arguments): out = self,
// then out[i][index[i][j]] = src[i][j] (dim = 1), or += for scatter_add. src has self's rank and
// is at least as large as index in every dimension.
template <bool Add>
void scatter_src(KernelContext& ctx, Args args) {
  const char* op = Add ? "scatter_add.out" : "scatter.src_out";
  if (!check_arg_count(ctx, args, 5, op)) return;
  TensorImpl* self = tensor_arg(ctx, args, 0, op);
  TensorImpl* index = tensor_arg(ctx, args, 2, op);
  TensorImpl* src = tensor_arg(ctx, args, 3, op);
  TensorImpl* out = tensor_arg(ctx, args, 4, op);
  int64_t dim = 0;
  if (!self || !index || !src || !out || !require_contiguous(ctx, op, {self, index, src, out}) ||
      !check_index(ctx, *self, *index, &dim, *args[1], op)) {
    return;
  }
  if (out->dtype() != self->dtype() || src->dtype() != self->dtype() || !is_supported_dtype(out->dtype())) {
    ctx.fail(ErrorCode::kInvalidArgument, "%s: self, src and out must share one real or bool dtype", op);
    return;
  }
  bool fits = std::max(src->dim(), 1) == std::max(index->dim(), 1);
  for (int i = 0; fits && i < index->dim(); ++i) fits = index->size(i) <= src->size(i);
  if (!fits) {
    ctx.fail(ErrorCode::kInvalidArgument, "%s: src must have self's rank and cover index", op);
    return;
  }
  if (!copy_self(ctx, *self, *out, op)) return;
  const int64_t limit = self->dim() == 0 ? 1 : self->size(static_cast<int>(dim));
  bool ok = true;
  dispatch_real_and_bool(out->dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* x = src->data_as<T>();
    T* y = out->data_as<T>();
    ok = walk_index(
        *index, out->strides(), dim, limit,
        [&](int64_t, int64_t off, int64_t s) {
          if constexpr (Add) {
            if constexpr (std::is_same_v<T, bool>) {
              y[off] = y[off] || x[s];
            } else if constexpr (std::is_integral_v<T>) {
              using U = std::make_unsigned_t<T>;  // wraps instead of overflowing
              y[off] = static_cast<T>(static_cast<U>(static_cast<U>(y[off]) + static_cast<U>(x[s])));
            } else {
              y[off] = y[off] + x[s];
            }
          } else {
            y[off] = x[s];
          }
        },
        src->dim() == 0 ? std::span<const int64_t>{} : src->strides());
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
  r.add("aten::scatter.src_out", kernel(scatter_src<false>, kRealBoolDtypes));
  r.add("aten::scatter_add.out", kernel(scatter_src<true>, kRealBoolDtypes));
}

}  // namespace etscope::rt::kernels
