// view_copy, permute_copy, and the copies of strided views: as_strided_copy, diagonal_copy,
// unfold_copy.
#include <algorithm>
#include <cstdint>
#include <cstring>

#include "kernels/register.h"
#include "kernels/util/kernel_util.h"

namespace etscope::runtime::kernels {
namespace {

// view_copy.out(self, size, out): same bytes, new shape; one size may be -1.
void view_copy_out(KernelContext& ctx, Args args) {
  const char* name = "view_copy.out";
  if (!check_arg_count(ctx, args, 3, name)) return;
  TensorImpl* a = tensor_arg(ctx, args, 0, name);
  TensorImpl* out = tensor_arg(ctx, args, 2, name);
  IntList size;
  if (!a || !out || !int_list_arg(ctx, args, 1, &size, name) || !require_contiguous(ctx, name, {a, out})) return;
  int64_t known = 1;
  int infer = -1;
  for (size_t i = 0; i < size.size; ++i) {
    if (size[i] == -1) {
      if (infer >= 0) {
        ctx.fail(ErrorCode::kInvalidArgument, "%s: more than one -1 in size", name);
        return;
      }
      infer = static_cast<int>(i);
    } else if (size[i] < 0 || __builtin_mul_overflow(known, size[i], &known)) {
      ctx.fail(ErrorCode::kInvalidArgument, "%s: size %lld is negative or the sizes' product overflows", name,
               static_cast<long long>(size[i]));
      return;
    }
  }
  if (infer >= 0) size.values[static_cast<size_t>(infer)] = known == 0 ? 0 : a->numel() / known;
  if (!resize_or_fail(ctx, out, size.span(), name)) return;
  if (out->numel() != a->numel() || out->dtype() != a->dtype()) {
    ctx.fail(ErrorCode::kInvalidArgument, "%s: view changes the element count or dtype", name);
    return;
  }
  if (out->data() != a->data()) std::memmove(out->data(), a->data(), a->nbytes());
}

// Copies the permuted view (sizes `sizes`, input strides `strides`) into dense `out`, moving
// elements as unsigned integers of their width. The two innermost output dimensions are copied
// in 8x8 tiles: a 2-D transpose then reuses each cache line it touches, and with power-of-two
// strides the 8 lines of a tile still fit one 8-way L1 set.
template <typename E>
void permute(const TensorImpl& in, TensorImpl& out, const std::array<int64_t, kMaxDims>& sizes,
             const std::array<int64_t, kMaxDims>& strides) {
  const int rank = in.dim();
  const E* src = in.data_as<E>();
  E* dst = out.data_as<E>();
  if (out.numel() == 0) return;
  if (rank <= 1) {
    const int64_t n = out.numel(), s = rank == 0 ? 1 : strides[0];
    for (int64_t i = 0; i < n; ++i) dst[i] = src[i * s];
    return;
  }
  const size_t ra = static_cast<size_t>(rank - 2), rb = static_cast<size_t>(rank - 1);
  const int64_t rows = sizes[ra], cols = sizes[rb], sa = strides[ra], sb = strides[rb];
  const int64_t outer = out.numel() / (rows * cols);
  constexpr int64_t kTile = 8;
  std::array<int64_t, kMaxDims> counter{};
  int64_t base = 0;
  for (int64_t o = 0; o < outer; ++o) {
    E* d = dst + o * rows * cols;
    if (sb == 1) {
      for (int64_t i = 0; i < rows; ++i) std::memmove(d + i * cols, src + base + i * sa, static_cast<size_t>(cols) * sizeof(E));
    } else {
      for (int64_t i0 = 0; i0 < rows; i0 += kTile) {
        const int64_t i1 = std::min(rows, i0 + kTile);
        for (int64_t j0 = 0; j0 < cols; j0 += kTile) {
          const int64_t j1 = std::min(cols, j0 + kTile);
          for (int64_t i = i0; i < i1; ++i) {
            const E* s = src + base + i * sa;
            for (int64_t j = j0; j < j1; ++j) d[i * cols + j] = s[j * sb];
          }
        }
      }
    }
    for (int d2 = rank - 3; d2 >= 0; --d2) {
      const size_t k = static_cast<size_t>(d2);
      base += strides[k];
      if (++counter[k] < sizes[k]) break;
      base -= strides[k] * counter[k];
      counter[k] = 0;
    }
  }
}

// permute_copy.out(self, dims, out)
void permute_copy_out(KernelContext& ctx, Args args) {
  const char* name = "permute_copy.out";
  if (!check_arg_count(ctx, args, 3, name)) return;
  TensorImpl* a = tensor_arg(ctx, args, 0, name);
  TensorImpl* out = tensor_arg(ctx, args, 2, name);
  IntList dims;
  if (!a || !out || !int_list_arg(ctx, args, 1, &dims, name) || !require_contiguous(ctx, name, {a, out})) return;
  const int rank = a->dim();
  if (static_cast<int>(dims.size) != rank || out->dtype() != a->dtype()) {
    ctx.fail(ErrorCode::kInvalidArgument, "%s: dims must list every dimension once", name);
    return;
  }
  std::array<int64_t, kMaxDims> out_sizes{}, in_strides{};
  uint32_t seen = 0;
  for (int i = 0; i < rank; ++i) {
    const int64_t d = normalize_dim(dims[static_cast<size_t>(i)], rank);
    if (d < 0 || (seen & (1u << d))) {
      ctx.fail(ErrorCode::kInvalidArgument, "%s: dims must list every dimension once", name);
      return;
    }
    seen |= 1u << d;
    out_sizes[static_cast<size_t>(i)] = a->size(static_cast<int>(d));
    in_strides[static_cast<size_t>(i)] = a->stride(static_cast<int>(d));
  }
  if (!resize_or_fail(ctx, out, {out_sizes.data(), static_cast<size_t>(rank)}, name)) return;
  bool ok = true;
  switch (a->element_size()) {
    case 1: permute<uint8_t>(*a, *out, out_sizes, in_strides); break;
    case 2: permute<uint16_t>(*a, *out, out_sizes, in_strides); break;
    case 4: permute<uint32_t>(*a, *out, out_sizes, in_strides); break;
    case 8: permute<uint64_t>(*a, *out, out_sizes, in_strides); break;
    default: ok = false;
  }
  if (!ok) ctx.fail(ErrorCode::kNotSupported, "%s: unsupported element size %zu", name, a->element_size());
}

// Copies the elements of the strided view (sizes, strides in elements, offset) of `self`'s
// contiguous data into `out` (already sized to `sizes`), as bytes. Callers have checked that the
// view stays inside self.
void copy_strided_view(const TensorImpl& self, TensorImpl& out, std::span<const int64_t> sizes,
                       std::span<const int64_t> strides, int64_t offset) {
  const size_t es = self.element_size();
  const auto* src = static_cast<const uint8_t*>(self.data());
  auto* dst = static_cast<uint8_t*>(out.data());
  const int rank = static_cast<int>(sizes.size());
  const int64_t total = out.numel();
  std::array<int64_t, kMaxDims> coord{};
  int64_t off = offset;
  for (int64_t pos = 0; pos < total; ++pos) {
    std::memmove(dst + static_cast<size_t>(pos) * es, src + static_cast<size_t>(off) * es, es);
    for (int d = rank - 1; d >= 0; --d) {
      const size_t k = static_cast<size_t>(d);
      off += strides[k];
      if (++coord[k] < sizes[k]) break;
      off -= strides[k] * coord[k];
      coord[k] = 0;
    }
  }
}

// as_strided_copy.out(self, size, stride, storage_offset, out): the view of self's elements
// with these sizes and (non-negative) strides; every element it reaches must lie within self.
void as_strided_copy_out(KernelContext& ctx, Args args) {
  const char* op = "as_strided_copy.out";
  if (!check_arg_count(ctx, args, 5, op)) return;
  TensorImpl* self = tensor_arg(ctx, args, 0, op);
  TensorImpl* out = tensor_arg(ctx, args, 4, op);
  IntList size, stride;
  if (!self || !out || !int_list_arg(ctx, args, 1, &size, op) || !int_list_arg(ctx, args, 2, &stride, op) ||
      !require_contiguous(ctx, op, {self, out})) {
    return;
  }
  const int64_t offset = args[3]->tag == Tag::kInt ? args[3]->scalar.i : 0;
  if (size.size != stride.size || offset < 0 || out->dtype() != self->dtype()) {
    ctx.fail(ErrorCode::kInvalidArgument, "%s: size and stride must have one length, storage_offset must be >= 0 and out "
             "must have self's dtype", op);
    return;
  }
  __int128 last = offset;  // the largest element offset the view reaches
  bool empty = false;
  for (size_t i = 0; i < size.size; ++i) {
    if (size[i] < 0 || stride[i] < 0) {
      ctx.fail(ErrorCode::kInvalidArgument, "%s: sizes and strides must not be negative", op);
      return;
    }
    empty |= size[i] == 0;
    if (size[i] > 0) last += static_cast<__int128>(size[i] - 1) * stride[i];
  }
  if (!empty && last >= self->numel()) {
    ctx.fail(ErrorCode::kInvalidArgument, "%s: the view reaches element %lld of a tensor of %lld elements", op,
             static_cast<long long>(last > INT64_MAX ? INT64_MAX : static_cast<int64_t>(last)),
             static_cast<long long>(self->numel()));
    return;
  }
  if (!resize_or_fail(ctx, out, size.span(), op)) return;
  if (!empty) copy_strided_view(*self, *out, size.span(), stride.span(), offset);
}

// diagonal_copy.out(self, offset, dim1, dim2, out): the diagonal of the (dim1, dim2) planes as
// the last dimension; offset > 0 is above the main diagonal.
void diagonal_copy_out(KernelContext& ctx, Args args) {
  const char* op = "diagonal_copy.out";
  if (!check_arg_count(ctx, args, 5, op)) return;
  TensorImpl* self = tensor_arg(ctx, args, 0, op);
  TensorImpl* out = tensor_arg(ctx, args, 4, op);
  if (!self || !out || !require_contiguous(ctx, op, {self, out})) return;
  if (args[1]->tag != Tag::kInt || args[2]->tag != Tag::kInt || args[3]->tag != Tag::kInt || self->dim() < 2 ||
      out->dtype() != self->dtype()) {
    ctx.fail(ErrorCode::kInvalidArgument, "%s: needs int offset and dims, self of rank >= 2 and out of self's dtype", op);
    return;
  }
  const int64_t d1 = normalize_dim(args[2]->scalar.i, self->dim()), d2 = normalize_dim(args[3]->scalar.i, self->dim());
  if (d1 < 0 || d2 < 0 || d1 == d2) {
    ctx.fail(ErrorCode::kInvalidArgument, "%s: dim1 and dim2 must be two different dimensions of self", op);
    return;
  }
  const int64_t offset = args[1]->scalar.i;
  const int64_t s1 = self->size(static_cast<int>(d1)), s2 = self->size(static_cast<int>(d2));
  int64_t length = 0, start = 0;
  if (offset >= 0) {
    length = offset >= s2 ? 0 : std::min(s1, s2 - offset);
    start = length > 0 ? offset * self->strides()[static_cast<size_t>(d2)] : 0;
  } else {
    length = -offset >= s1 ? 0 : std::min(s1 + offset, s2);
    start = length > 0 ? -offset * self->strides()[static_cast<size_t>(d1)] : 0;
  }
  std::array<int64_t, kMaxDims> sizes{}, strides{};
  int r = 0;
  for (int d = 0; d < self->dim(); ++d) {
    if (d == d1 || d == d2) continue;
    sizes[static_cast<size_t>(r)] = self->size(d);
    strides[static_cast<size_t>(r++)] = self->strides()[static_cast<size_t>(d)];
  }
  sizes[static_cast<size_t>(r)] = length;
  strides[static_cast<size_t>(r++)] = self->strides()[static_cast<size_t>(d1)] + self->strides()[static_cast<size_t>(d2)];
  if (!resize_or_fail(ctx, out, {sizes.data(), static_cast<size_t>(r)}, op)) return;
  if (out->numel() > 0) copy_strided_view(*self, *out, {sizes.data(), static_cast<size_t>(r)}, {strides.data(), static_cast<size_t>(r)}, start);
}

// unfold_copy.out(self, dimension, size, step, out): the windows of `size` elements every `step`
// along `dimension`, which becomes the window count; the window is a new last dimension.
void unfold_copy_out(KernelContext& ctx, Args args) {
  const char* op = "unfold_copy.out";
  if (!check_arg_count(ctx, args, 5, op)) return;
  TensorImpl* self = tensor_arg(ctx, args, 0, op);
  TensorImpl* out = tensor_arg(ctx, args, 4, op);
  if (!self || !out || !require_contiguous(ctx, op, {self, out})) return;
  if (args[1]->tag != Tag::kInt || args[2]->tag != Tag::kInt || args[3]->tag != Tag::kInt || self->dim() < 1 ||
      self->dim() >= kMaxDims || out->dtype() != self->dtype()) {
    ctx.fail(ErrorCode::kInvalidArgument, "%s: needs int dimension, size and step, self of rank 1 to %d and out of "
             "self's dtype", op, kMaxDims - 1);
    return;
  }
  const int64_t d = normalize_dim(args[1]->scalar.i, self->dim());
  const int64_t size = args[2]->scalar.i, step = args[3]->scalar.i;
  if (d < 0 || size < 0 || step <= 0 || size > self->size(static_cast<int>(d))) {
    ctx.fail(ErrorCode::kInvalidArgument, "%s: dimension out of range, size %lld larger than the dimension, or step "
             "%lld not positive", op, static_cast<long long>(size), static_cast<long long>(step));
    return;
  }
  std::array<int64_t, kMaxDims> sizes{}, strides{};
  for (int k = 0; k < self->dim(); ++k) {
    sizes[static_cast<size_t>(k)] = self->size(k);
    strides[static_cast<size_t>(k)] = self->strides()[static_cast<size_t>(k)];
  }
  const size_t dd = static_cast<size_t>(d);
  sizes[dd] = (self->size(static_cast<int>(d)) - size) / step + 1;
  strides[dd] = self->strides()[dd] * step;
  const size_t rank = static_cast<size_t>(self->dim()) + 1;
  sizes[rank - 1] = size;
  strides[rank - 1] = self->strides()[dd];
  if (!resize_or_fail(ctx, out, {sizes.data(), rank}, op)) return;
  if (out->numel() > 0) copy_strided_view(*self, *out, {sizes.data(), rank}, {strides.data(), rank}, 0);
}

}  // namespace

void register_view_kernels(KernelRegistry& r) {
  r.add("aten::view_copy.out", kernel(view_copy_out, kRealBoolDtypes));
  r.add("aten::permute_copy.out", kernel(permute_copy_out, kRealBoolDtypes));
  const uint32_t bytes = kRealBoolDtypes | kHalfDtypes;  // element copies move any element size
  r.add("aten::as_strided_copy.out", kernel(as_strided_copy_out, bytes));
  r.add("aten::diagonal_copy.out", kernel(diagonal_copy_out, bytes));
  r.add("aten::unfold_copy.out", kernel(unfold_copy_out, bytes));
}

}  // namespace etscope::runtime::kernels
