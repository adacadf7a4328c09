// Copies of views (the *_copy operators ExecuTorch runs in place of views): view_copy,
// permute_copy, transpose_copy / t_copy, squeeze_copy, unsqueeze_copy, expand_copy, and the
// copies of strided views as_strided_copy, diagonal_copy and unfold_copy.
#include <algorithm>
#include <cstdint>
#include <cstring>

#include "kernels/register.h"
#include "kernels/util/kernel_util.h"
#include "kernels/util/shape_util.h"
#include "kernels/util/copy_util.h"
#include "kernels/util/permute_util.h"

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
// elements as unsigned integers of their width (copy_permuted). False for a width it has not.
bool permute(const TensorImpl& in, TensorImpl& out, const std::array<int64_t, kMaxDims>& sizes, const std::array<int64_t, kMaxDims>& strides) {
  const int rank = in.dim();
  switch (in.element_size()) {
    case 1: copy_permuted<uint8_t, kMaxDims>(in.data_as<uint8_t>(), out.data_as<uint8_t>(), rank, sizes.data(), strides.data()); return true;
    case 2: copy_permuted<uint16_t, kMaxDims>(in.data_as<uint16_t>(), out.data_as<uint16_t>(), rank, sizes.data(), strides.data()); return true;
    case 4: copy_permuted<uint32_t, kMaxDims>(in.data_as<uint32_t>(), out.data_as<uint32_t>(), rank, sizes.data(), strides.data()); return true;
    case 8: copy_permuted<uint64_t, kMaxDims>(in.data_as<uint64_t>(), out.data_as<uint64_t>(), rank, sizes.data(), strides.data()); return true;
    default: return false;
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
  if (!permute(*a, *out, out_sizes, in_strides)) ctx.fail(ErrorCode::kNotSupported, "%s: unsupported element size %zu", name, a->element_size());
}

// Writes out = in with dims d0 and d1 swapped (out already resized, the same dtype).
void transpose_into(const TensorImpl& in, TensorImpl& out, int64_t d0, int64_t d1) {
  std::array<int64_t, kMaxDims> perm_strides = strides_of(in), sizes{};
  for (int i = 0; i < in.dim(); ++i) sizes[static_cast<size_t>(i)] = in.size(i);
  std::swap(perm_strides[static_cast<size_t>(d0)], perm_strides[static_cast<size_t>(d1)]);
  std::swap(sizes[static_cast<size_t>(d0)], sizes[static_cast<size_t>(d1)]);
  if (permute(in, out, sizes, perm_strides)) return;
  for_each_coord(out.sizes(), out.numel(), [&](int64_t i, const std::array<int64_t, kMaxDims>& idx) {
    int64_t src = 0;
    for (int d = 0; d < out.dim(); ++d) src += idx[static_cast<size_t>(d)] * perm_strides[static_cast<size_t>(d)];
    copy_element(in, src, out, i);
  });
}

bool transpose_shape(KernelContext& ctx, const char* op, const TensorImpl& in, TensorImpl& out, int64_t d0, int64_t d1) {
  std::array<int64_t, kMaxDims> sizes{};
  for (int i = 0; i < in.dim(); ++i) sizes[static_cast<size_t>(i)] = in.size(i);
  if (in.dim() > 0) std::swap(sizes[static_cast<size_t>(d0)], sizes[static_cast<size_t>(d1)]);
  return rank_is(ctx, op, out, static_cast<size_t>(in.dim())) &&
         resize_or_fail(ctx, &out, {sizes.data(), static_cast<size_t>(in.dim())}, op);
}

// transpose_copy.int_out(self, dim0, dim1, out)
void transpose_copy_out(KernelContext& ctx, Args args) {
  const char* op = "transpose_copy.int_out";
  if (!check_arg_count(ctx, args, 4, op)) return;
  TensorImpl* in = tensor_arg(ctx, args, 0, op);
  TensorImpl* out = tensor_arg(ctx, args, 3, op);
  if (!in || !out || !same_dtype(ctx, op, *in, *out)) return;
  const int64_t d0 = args[1]->tag == Tag::kInt ? normalize_dim(args[1]->scalar.i, in->dim()) : -1;
  const int64_t d1 = args[2]->tag == Tag::kInt ? normalize_dim(args[2]->scalar.i, in->dim()) : -1;
  if (d0 < 0 || d1 < 0) {
    ctx.fail(ErrorCode::kInvalidArgument, "%s: dims are out of range for a rank-%d tensor", op, in->dim());
    return;
  }
  if (!transpose_shape(ctx, op, *in, *out, d0, d1)) return;
  if (in->dim() == 0) {
    if (in->numel() == 1) copy_element(*in, 0, *out, 0);
    return;
  }
  transpose_into(*in, *out, d0, d1);
}

// t_copy.out(self, out): transposes a 2-D tensor; 0-D and 1-D tensors are copied.
void t_copy_out(KernelContext& ctx, Args args) {
  const char* op = "t_copy.out";
  if (!check_arg_count(ctx, args, 2, op)) return;
  TensorImpl* in = tensor_arg(ctx, args, 0, op);
  TensorImpl* out = tensor_arg(ctx, args, 1, op);
  if (!in || !out || !same_dtype(ctx, op, *in, *out)) return;
  if (in->dim() > 2) {
    ctx.fail(ErrorCode::kInvalidArgument, "%s: self must have at most 2 dims, has %d", op, in->dim());
    return;
  }
  const int64_t d1 = in->dim() == 2 ? 1 : 0;
  if (!transpose_shape(ctx, op, *in, *out, 0, d1)) return;
  if (in->dim() < 2) {
    if (in->nbytes() > 0) std::memmove(out->data(), in->data(), in->nbytes());
    return;
  }
  transpose_into(*in, *out, 0, 1);
}

// squeeze_copy.dims_out(self, dims, out): drops the listed dimensions that have size 1. Also
// serves squeeze_copy.dim_out(self, dim, out): an Int reads as a one-item list.
void squeeze_copy_dims_out(KernelContext& ctx, Args args) {
  const char* op = "squeeze_copy.dims_out";
  if (!check_arg_count(ctx, args, 3, op)) return;
  TensorImpl* in = tensor_arg(ctx, args, 0, op);
  TensorImpl* out = tensor_arg(ctx, args, 2, op);
  IntList dims;
  if (!in || !out || !int_list_arg(ctx, args, 1, &dims, op) || !require_contiguous(ctx, op, {in, out})) return;
  uint32_t drop = 0;
  for (size_t k = 0; k < dims.size; ++k) {
    const int64_t d = normalize_dim(dims[k], in->dim());
    if (d < 0) {
      ctx.fail(ErrorCode::kInvalidArgument, "%s: dim %lld is out of range", op, static_cast<long long>(dims[k]));
      return;
    }
    if (in->dim() > 0 && in->size(static_cast<int>(d)) == 1) drop |= 1u << d;
  }
  std::array<int64_t, kMaxDims> sizes{};
  size_t n = 0;
  for (int d = 0; d < in->dim(); ++d) {
    if (!(drop & (1u << d))) sizes[n++] = in->size(d);
  }
  if (out->dim() != static_cast<int>(n)) {
    ctx.fail(ErrorCode::kInvalidArgument, "%s: output has rank %d, expected %zu", op, out->dim(), n);
    return;
  }
  if (!resize_or_fail(ctx, out, {sizes.data(), n}, op)) return;
  same_bytes_copy(ctx, *in, *out, op);
}

// unsqueeze_copy.out(self, dim, out): inserts a size-1 dimension at dim (in [-rank-1, rank]).
void unsqueeze_copy_out(KernelContext& ctx, Args args) {
  const char* op = "unsqueeze_copy.out";
  if (!check_arg_count(ctx, args, 3, op)) return;
  TensorImpl* in = tensor_arg(ctx, args, 0, op);
  TensorImpl* out = tensor_arg(ctx, args, 2, op);
  if (!in || !out || !require_contiguous(ctx, op, {in, out})) return;
  const int64_t d = args[1]->tag == Tag::kInt ? normalize_dim(args[1]->scalar.i, in->dim() + 1) : -1;
  if (d < 0 || in->dim() + 1 > kMaxDims || out->dim() != in->dim() + 1) {
    ctx.fail(ErrorCode::kInvalidArgument, "%s: dim is out of range or output rank is not input rank + 1", op);
    return;
  }
  std::array<int64_t, kMaxDims> sizes{};
  for (int i = 0, j = 0; i <= in->dim(); ++i) sizes[static_cast<size_t>(i)] = i == d ? 1 : in->size(j++);
  if (!resize_or_fail(ctx, out, {sizes.data(), static_cast<size_t>(in->dim() + 1)}, op)) return;
  same_bytes_copy(ctx, *in, *out, op);
}

// expand_copy.out(self, size, implicit, out): broadcasts self to size (-1 keeps a dimension).
void expand_copy_out(KernelContext& ctx, Args args) {
  const char* op = "expand_copy.out";
  if (!check_arg_count(ctx, args, 4, op)) return;
  TensorImpl* in = tensor_arg(ctx, args, 0, op);
  TensorImpl* out = tensor_arg(ctx, args, 3, op);
  IntList size;
  if (!in || !out || !int_list_arg(ctx, args, 1, &size, op) || !require_contiguous(ctx, op, {in, out})) return;
  if (size.size < static_cast<size_t>(in->dim()) || in->dtype() != out->dtype()) {
    ctx.fail(ErrorCode::kInvalidArgument, "%s: size has fewer dimensions than self, or dtypes differ", op);
    return;
  }
  const size_t lead = size.size - static_cast<size_t>(in->dim());
  for (size_t i = 0; i < size.size; ++i) {
    const int64_t have = i < lead ? -2 : in->size(static_cast<int>(i - lead));
    if (size[i] == -1 && have != -2) {
      size.values[i] = have;
    } else if (size[i] < 0 || (have != -2 && have != 1 && have != size[i])) {
      ctx.fail(ErrorCode::kInvalidArgument, "%s: cannot expand dimension %zu to %lld", op, i,
               static_cast<long long>(size[i]));
      return;
    }
  }
  if (!resize_or_fail(ctx, out, size.span(), op)) return;
  // The trailing dimensions self already has whole are copied as one block per position of the
  // broadcast leading ones (a [32,96] -> [12,32,96] expand is 12 block copies, not 36,864).
  const int r = out->dim(), ri = in->dim();
  int whole = 0;
  int64_t inner = 1;
  while (whole < ri && in->size(ri - 1 - whole) == out->size(r - 1 - whole)) inner *= in->size(ri - 1 - whole++);
  if (inner == 0 || out->numel() == 0) return;
  const size_t block = static_cast<size_t>(inner) * in->element_size();
  const auto* src = static_cast<const uint8_t*>(in->data());
  auto* dst = static_cast<uint8_t*>(out->data());
  BroadcastIndex bi(out->sizes().first(static_cast<size_t>(r - whole)), in->sizes().first(static_cast<size_t>(ri - whole)));
  const int64_t blocks = out->numel() / inner;
  for (int64_t i = 0; i < blocks; ++i, bi.advance()) {
    std::memmove(dst + static_cast<size_t>(i) * block, src + static_cast<size_t>(bi.index()) * block, block);
  }
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

// What the steps of a transpose pair folded at load (Method::Impl::fold_transposes) run: a copy of
// args[0] into the step's out argument (its last). A transpose of a transpose of the same two
// dimensions is its source again: the second step copies the first one's input, out taking its
// shape (keep_shape false). When that input is not kept until the second step, each step copies
// its args[0]'s bytes as they are and out keeps its shape: the first copies the source, the second
// the first's copy.
static void copy_into_out(KernelContext& ctx, Args args, bool keep_shape) {
  const char* name = "permute_copy.out";
  if (args.size() < 2) {
    ctx.fail(ErrorCode::kInvalidArgument, "%s: expected a source and an out argument", name);
    return;
  }
  TensorImpl* in = tensor_arg(ctx, args, 0, name);
  TensorImpl* out = tensor_arg(ctx, args, args.size() - 1, name);
  if (!in || !out || !require_contiguous(ctx, name, {in, out})) return;
  if (in->dtype() != out->dtype() || (keep_shape ? in->numel() != out->numel() : in->dim() != out->dim())) {
    ctx.fail(ErrorCode::kInvalidArgument, "%s: source and out differ in dtype or %s", name, keep_shape ? "element count" : "rank");
    return;
  }
  if (!keep_shape && !resize_or_fail(ctx, out, in->sizes(), name)) return;
  if (in->nbytes() > 0 && in->data() != out->data()) std::memmove(out->data(), in->data(), in->nbytes());
}

const Kernel* transposed_twice_kernel() {
  static const Kernel k = kernel([](KernelContext& ctx, Args args) { copy_into_out(ctx, args, false); }, kRealBoolDtypes | kHalfDtypes);
  return &k;
}

const Kernel* flat_copy_kernel() {
  static const Kernel k = kernel([](KernelContext& ctx, Args args) { copy_into_out(ctx, args, true); }, kRealBoolDtypes | kHalfDtypes);
  return &k;
}

void register_view_kernels(KernelRegistry& r) {
  const uint32_t bytes = kRealBoolDtypes | kHalfDtypes;  // pure copies move any element size
  r.add("aten::view_copy.out", kernel(view_copy_out, kRealBoolDtypes));
  r.add("aten::permute_copy.out", kernel(permute_copy_out, kRealBoolDtypes));
  r.add("aten::transpose_copy.int_out", kernel(transpose_copy_out, bytes));
  r.add("aten::t_copy.out", kernel(t_copy_out, bytes));
  r.add("aten::squeeze_copy.dims_out", kernel(squeeze_copy_dims_out, kRealBoolDtypes));
  r.add("aten::squeeze_copy.dim_out", kernel(squeeze_copy_dims_out, kRealBoolDtypes));
  r.add("aten::unsqueeze_copy.out", kernel(unsqueeze_copy_out, kRealBoolDtypes));
  r.add("aten::expand_copy.out", kernel(expand_copy_out, kRealBoolDtypes));
  r.add("aten::as_strided_copy.out", kernel(as_strided_copy_out, bytes));
  r.add("aten::diagonal_copy.out", kernel(diagonal_copy_out, bytes));
  r.add("aten::unfold_copy.out", kernel(unfold_copy_out, bytes));
}

}  // namespace etscope::runtime::kernels
