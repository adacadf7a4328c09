// Copies of strided parts of one dimension: slice_copy, select_copy, narrow_copy, split_copy,
// split_with_sizes_copy, unbind_copy; and their inverses slice_scatter and select_scatter.
//
// A contiguous tensor seen along dimension d is [outer, size(d), inner]; each of these kernels
// copies, for every outer index, a set of rows of `inner` elements.
#include <cstring>

#include "kernels/register.h"
#include "kernels/util/kernel_util.h"
#include "kernels/util/shape_util.h"

namespace etscope::runtime::kernels {
namespace {

struct DimView {
  int64_t outer = 1, size = 1, inner = 1;
};

DimView view_along(const TensorImpl& t, int64_t d) {
  DimView v;
  for (int i = 0; i < t.dim(); ++i) {
    if (i < d) v.outer *= t.size(i);
    if (i == d) v.size = t.size(i);
    if (i > d) v.inner *= t.size(i);
  }
  return v;
}

// out[o, j, :] = in[o, start + j * step, :] for j < len (dtypes equal, both contiguous), where
// `v` views `in`. With Scatter, the other way round: v views `out` and
// out[o, start + j * step, :] = in[o, j, :]. W is the bytes of a row (`row`) when it is one of the
// common element widths, known at compile time: a slice of the last dimension of a rope's
// [.., 32, 2] view moves one 4-byte element per row, and a memmove call per row (or a switch on
// its width) was most of its time; 0 for any other width.
template <bool Scatter, size_t W>
void copy_rows_of(const uint8_t* src, uint8_t* dst, size_t row, const DimView& v, int64_t start, int64_t step, int64_t len) {
  for (int64_t o = 0; o < v.outer; ++o) {
    const size_t strided = static_cast<size_t>(o * v.size + start) * row, packed = static_cast<size_t>(o * len) * row;
    const uint8_t* s = src + (Scatter ? packed : strided);
    uint8_t* d = dst + (Scatter ? strided : packed);
    const size_t s_step = Scatter ? row : static_cast<size_t>(step) * row;
    const size_t d_step = Scatter ? static_cast<size_t>(step) * row : row;
    if constexpr (W != 0) {
      for (int64_t j = 0; j < len; ++j) std::memcpy(d + static_cast<size_t>(j) * d_step, s + static_cast<size_t>(j) * s_step, W);
    } else if (step == 1) {
      std::memmove(d, s, static_cast<size_t>(len) * row);
    } else {
      for (int64_t j = 0; j < len; ++j) std::memmove(d + static_cast<size_t>(j) * d_step, s + static_cast<size_t>(j) * s_step, row);
    }
  }
}

template <bool Scatter = false>
void copy_rows(const TensorImpl& in, TensorImpl& out, const DimView& v, int64_t start, int64_t step, int64_t len) {
  const size_t row = static_cast<size_t>(v.inner) * in.element_size();
  const auto* src = static_cast<const uint8_t*>(in.data());
  auto* dst = static_cast<uint8_t*>(out.data());
  if (row == 0 || len == 0) return;
  switch (row) {
    case 1: copy_rows_of<Scatter, 1>(src, dst, row, v, start, step, len); break;
    case 2: copy_rows_of<Scatter, 2>(src, dst, row, v, start, step, len); break;
    case 4: copy_rows_of<Scatter, 4>(src, dst, row, v, start, step, len); break;
    case 8: copy_rows_of<Scatter, 8>(src, dst, row, v, start, step, len); break;
    default: copy_rows_of<Scatter, 0>(src, dst, row, v, start, step, len); break;
  }
}

// The dim argument at args[i], normalised against `rank` (a 0-dim tensor has no dimension to cut).
bool dim_arg(KernelContext& ctx, Args args, size_t i, int rank, int64_t* d, const char* op) {
  if (args[i]->tag != Tag::kInt) {
    ctx.fail(ErrorCode::kInvalidArgument, "%s: dim must be an int", op);
    return false;
  }
  *d = rank == 0 ? -1 : normalize_dim(args[i]->scalar.i, rank);
  if (*d < 0) {
    ctx.fail(ErrorCode::kInvalidArgument, "%s: dim %lld is out of range for a rank-%d tensor", op,
             static_cast<long long>(args[i]->scalar.i), rank);
    return false;
  }
  return true;
}

// Python slice bounds: None = the end, negative counts from the end, then clamp to [0, size].
// Gives the first index and the number of elements taken with `step` (> 0).
void slice_range(const EValue& start_arg, const EValue& end_arg, int64_t step, int64_t size, int64_t* start,
                 int64_t* len) {
  auto bound = [size](const EValue& e, int64_t dflt) {
    if (e.tag != Tag::kInt) return dflt;
    int64_t x = e.scalar.i;
    if (x < 0) x = x < -size ? 0 : x + size;
    return x > size ? size : x;
  };
  *start = bound(start_arg, 0);
  const int64_t end = bound(end_arg, size);
  *len = end > *start ? (end - *start - 1) / step + 1 : 0;
}

// slice_copy.Tensor_out(self, dim, start?, end?, step, out). Bounds follow Python slicing:
// negative values count from the end, then clamp to [0, size].
void slice_copy_out(KernelContext& ctx, Args args) {
  const char* op = "slice_copy.Tensor_out";
  if (!check_arg_count(ctx, args, 6, op)) return;
  TensorImpl* in = tensor_arg(ctx, args, 0, op);
  TensorImpl* out = tensor_arg(ctx, args, 5, op);
  int64_t d = 0;
  if (!in || !out || !same_dtype(ctx, op, *in, *out) || !dim_arg(ctx, args, 1, in->dim(), &d, op)) return;
  const int64_t step = args[4]->tag == Tag::kInt ? args[4]->scalar.i : 1;
  if (step <= 0) {
    ctx.fail(ErrorCode::kInvalidArgument, "%s: step must be positive, got %lld", op, static_cast<long long>(step));
    return;
  }
  const DimView v = view_along(*in, d);
  int64_t start = 0, len = 0;
  slice_range(*args[2], *args[3], step, v.size, &start, &len);
  std::array<int64_t, kMaxDims> sizes{};
  for (int i = 0; i < in->dim(); ++i) sizes[static_cast<size_t>(i)] = i == d ? len : in->size(i);
  if (out->dim() != in->dim() ||
      !resize_or_fail(ctx, out, {sizes.data(), static_cast<size_t>(in->dim())}, op)) {
    if (!ctx.failed()) ctx.fail(ErrorCode::kInvalidArgument, "%s: output rank differs from self's", op);
    return;
  }
  copy_rows(*in, *out, v, start, step, len);
}

// The index argument of a select (negative counts from the end), checked against v.size; and
// the sizes of `t` without dimension d.
bool select_index(KernelContext& ctx, const EValue& arg, const DimView& v, int64_t* index, const char* op) {
  *index = arg.tag == Tag::kInt ? arg.scalar.i : v.size;
  if (*index < -v.size || *index >= v.size) {
    ctx.fail(ErrorCode::kInvalidArgument, "%s: index %lld is out of range for size %lld", op,
             static_cast<long long>(*index), static_cast<long long>(v.size));
    return false;
  }
  if (*index < 0) *index += v.size;
  return true;
}
size_t sizes_without(const TensorImpl& t, int64_t d, std::array<int64_t, kMaxDims>* sizes) {
  size_t n = 0;
  for (int i = 0; i < t.dim(); ++i) {
    if (i != d) (*sizes)[n++] = t.size(i);
  }
  return n;
}

// select_copy.int_out(self, dim, index, out): the slice at `index` with dimension dim removed.
void select_copy_out(KernelContext& ctx, Args args) {
  const char* op = "select_copy.int_out";
  if (!check_arg_count(ctx, args, 4, op)) return;
  TensorImpl* in = tensor_arg(ctx, args, 0, op);
  TensorImpl* out = tensor_arg(ctx, args, 3, op);
  int64_t d = 0;
  if (!in || !out || !same_dtype(ctx, op, *in, *out) || !dim_arg(ctx, args, 1, in->dim(), &d, op)) return;
  const DimView v = view_along(*in, d);
  int64_t index = 0;
  if (!select_index(ctx, *args[2], v, &index, op)) return;
  std::array<int64_t, kMaxDims> sizes{};
  const size_t n = sizes_without(*in, d, &sizes);
  if (out->dim() != static_cast<int>(n)) {
    ctx.fail(ErrorCode::kInvalidArgument, "%s: output must have rank %zu", op, n);
    return;
  }
  if (!resize_or_fail(ctx, out, {sizes.data(), n}, op)) return;
  copy_rows(*in, *out, v, index, 1, 1);
}

// Shared by both splits: `lengths` (summing to size(dim)) become the outputs in `list`.
void split_into(KernelContext& ctx, const TensorImpl& in, int64_t d, const EValue& list,
                std::span<const int64_t> lengths, const char* op) {
  const DimView v = view_along(in, d);
  int64_t start = 0;
  for (size_t k = 0; k < lengths.size(); ++k) {
    TensorImpl* out = list.tensor_list[k];
    if (out == nullptr || !same_dtype(ctx, op, in, *out)) {
      if (!ctx.failed()) ctx.fail(ErrorCode::kInvalidArgument, "%s: output %zu is missing", op, k);
      return;
    }
    std::array<int64_t, kMaxDims> sizes{};
    for (int i = 0; i < in.dim(); ++i) sizes[static_cast<size_t>(i)] = i == d ? lengths[k] : in.size(i);
    if (out->dim() != in.dim()) {
      ctx.fail(ErrorCode::kInvalidArgument, "%s: output %zu has rank %d, self has %d", op, k, out->dim(), in.dim());
      return;
    }
    if (!resize_or_fail(ctx, out, {sizes.data(), static_cast<size_t>(in.dim())}, op)) return;
    copy_rows(in, *out, v, start, 1, lengths[k]);
    start += lengths[k];
  }
}

bool tensor_list_arg(KernelContext& ctx, Args args, size_t i, const char* op) {
  if (args[i]->tag != Tag::kTensorList) {
    ctx.fail(ErrorCode::kInvalidArgument, "%s: out must be a tensor list", op);
    return false;
  }
  return true;
}

// split_copy.Tensor_out(self, split_size, dim, out[]): chunks of split_size, the last one
// shorter; ceil(size / split_size) outputs (one when size is 0).
void split_copy_out(KernelContext& ctx, Args args) {
  const char* op = "split_copy.Tensor_out";
  if (!check_arg_count(ctx, args, 4, op)) return;
  TensorImpl* in = tensor_arg(ctx, args, 0, op);
  int64_t d = 0;
  if (!in || !tensor_list_arg(ctx, args, 3, op) || !dim_arg(ctx, args, 2, in->dim(), &d, op)) return;
  const int64_t split = args[1]->tag == Tag::kInt ? args[1]->scalar.i : -1;
  const int64_t size = in->size(static_cast<int>(d));
  if (split < 0 || (split == 0 && size != 0)) {
    ctx.fail(ErrorCode::kInvalidArgument, "%s: split_size must be positive, got %lld", op, static_cast<long long>(split));
    return;
  }
  const int64_t chunks = split == 0 ? 1 : std::max<int64_t>(1, (size + split - 1) / split);
  const size_t n = args[3]->tensor_list.size();
  if (static_cast<int64_t>(n) != chunks || n > 4096) {
    ctx.fail(ErrorCode::kInvalidArgument, "%s: expected %lld outputs, got %zu", op, static_cast<long long>(chunks), n);
    return;
  }
  int64_t lengths[4096];
  for (size_t k = 0; k < n; ++k) lengths[k] = std::min(split, size - static_cast<int64_t>(k) * split);
  split_into(ctx, *in, d, *args[3], {lengths, n}, op);
}

// split_with_sizes_copy.out(self, split_sizes, dim, out[])
void split_with_sizes_copy_out(KernelContext& ctx, Args args) {
  const char* op = "split_with_sizes_copy.out";
  if (!check_arg_count(ctx, args, 4, op)) return;
  TensorImpl* in = tensor_arg(ctx, args, 0, op);
  int64_t d = 0;
  if (!in || !tensor_list_arg(ctx, args, 3, op) || !dim_arg(ctx, args, 2, in->dim(), &d, op)) return;
  const EValue& sizes = *args[1];
  if (sizes.tag != Tag::kIntList || sizes.int_list.size() != args[3]->tensor_list.size() || sizes.int_list.size() > 4096) {
    ctx.fail(ErrorCode::kInvalidArgument, "%s: split_sizes must be an int list with one item per output", op);
    return;
  }
  int64_t lengths[4096];
  int64_t total = 0;
  for (size_t k = 0; k < sizes.int_list.size(); ++k) {
    lengths[k] = sizes.int_list[k]->scalar.i;
    if (lengths[k] < 0 || lengths[k] > in->size(static_cast<int>(d))) {
      ctx.fail(ErrorCode::kInvalidArgument, "%s: split size %lld is out of range", op, static_cast<long long>(lengths[k]));
      return;
    }
    total += lengths[k];
  }
  if (total != in->size(static_cast<int>(d))) {
    ctx.fail(ErrorCode::kInvalidArgument, "%s: split sizes sum to %lld, dimension has %lld", op,
             static_cast<long long>(total), static_cast<long long>(in->size(static_cast<int>(d))));
    return;
  }
  split_into(ctx, *in, d, *args[3], {lengths, sizes.int_list.size()}, op);
}

// narrow_copy.out(self, dim, start, length, out): self[..., start:start + length, ...]; start may
// be negative (from the end) but the range must lie inside the dimension.
void narrow_copy_out(KernelContext& ctx, Args args) {
  const char* op = "narrow_copy.out";
  if (!check_arg_count(ctx, args, 5, op)) return;
  TensorImpl* in = tensor_arg(ctx, args, 0, op);
  TensorImpl* out = tensor_arg(ctx, args, 4, op);
  int64_t d = 0;
  if (!in || !out || !same_dtype(ctx, op, *in, *out) || !dim_arg(ctx, args, 1, in->dim(), &d, op)) return;
  const DimView v = view_along(*in, d);
  int64_t start = args[2]->tag == Tag::kInt ? args[2]->scalar.i : 0;
  const int64_t length = args[3]->tag == Tag::kInt ? args[3]->scalar.i : -1;
  if (start < 0 && start >= -v.size) start += v.size;
  if (start < 0 || start > v.size || length < 0 || length > v.size - start) {
    ctx.fail(ErrorCode::kInvalidArgument, "%s: start %lld and length %lld do not fit size %lld", op,
             static_cast<long long>(start), static_cast<long long>(length), static_cast<long long>(v.size));
    return;
  }
  std::array<int64_t, kMaxDims> sizes{};
  for (int i = 0; i < in->dim(); ++i) sizes[static_cast<size_t>(i)] = i == d ? length : in->size(i);
  if (out->dim() != in->dim()) {
    ctx.fail(ErrorCode::kInvalidArgument, "%s: output rank differs from self's", op);
    return;
  }
  if (!resize_or_fail(ctx, out, {sizes.data(), static_cast<size_t>(in->dim())}, op)) return;
  copy_rows(*in, *out, v, start, 1, length);
}

// unbind_copy.int_out(self, dim, out[]): one output per index along dim, that dim removed.
void unbind_copy_out(KernelContext& ctx, Args args) {
  const char* op = "unbind_copy.int_out";
  if (!check_arg_count(ctx, args, 3, op)) return;
  TensorImpl* in = tensor_arg(ctx, args, 0, op);
  int64_t d = 0;
  if (!in || !tensor_list_arg(ctx, args, 2, op) || !dim_arg(ctx, args, 1, in->dim(), &d, op)) return;
  const DimView v = view_along(*in, d);
  const auto list = args[2]->tensor_list;
  if (static_cast<int64_t>(list.size()) != v.size) {
    ctx.fail(ErrorCode::kInvalidArgument, "%s: expected %lld outputs, got %zu", op, static_cast<long long>(v.size), list.size());
    return;
  }
  std::array<int64_t, kMaxDims> sizes{};
  const size_t n = sizes_without(*in, d, &sizes);
  for (size_t k = 0; k < list.size(); ++k) {
    TensorImpl* out = list[k];
    if (out == nullptr || !same_dtype(ctx, op, *in, *out) || out->dim() != static_cast<int>(n)) {
      if (!ctx.failed()) ctx.fail(ErrorCode::kInvalidArgument, "%s: output %zu must have rank %zu", op, k, n);
      return;
    }
    if (!resize_or_fail(ctx, out, {sizes.data(), n}, op)) return;
    copy_rows(*in, *out, v, static_cast<int64_t>(k), 1, 1);
  }
}

// Shared by the scatters: out = self, with src's shape checked against `expected`.
bool scatter_base(KernelContext& ctx, const TensorImpl& self, const TensorImpl& src, TensorImpl& out,
                  std::span<const int64_t> expected, const char* op) {
  if (!same_dtype(ctx, op, self, out) || !same_dtype(ctx, op, self, src)) return false;
  if (src.dim() != static_cast<int>(expected.size()) || !std::equal(expected.begin(), expected.end(), src.sizes().begin())) {
    ctx.fail(ErrorCode::kInvalidArgument, "%s: src does not have the shape of the embedded slice", op);
    return false;
  }
  if (out.dim() != self.dim() || !resize_or_fail(ctx, &out, self.sizes(), op)) {
    if (!ctx.failed()) ctx.fail(ErrorCode::kInvalidArgument, "%s: output rank differs from self's", op);
    return false;
  }
  if (out.data() != self.data() && self.nbytes() > 0) std::memmove(out.data(), self.data(), self.nbytes());
  return true;
}

// slice_scatter.out(self, src, dim, start?, end?, step, out): out = self with the slice replaced by src.
void slice_scatter_out(KernelContext& ctx, Args args) {
  const char* op = "slice_scatter.out";
  if (!check_arg_count(ctx, args, 7, op)) return;
  TensorImpl* self = tensor_arg(ctx, args, 0, op);
  TensorImpl* src = tensor_arg(ctx, args, 1, op);
  TensorImpl* out = tensor_arg(ctx, args, 6, op);
  int64_t d = 0;
  if (!self || !src || !out || !dim_arg(ctx, args, 2, self->dim(), &d, op)) return;
  const int64_t step = args[5]->tag == Tag::kInt ? args[5]->scalar.i : 1;
  if (step <= 0) {
    ctx.fail(ErrorCode::kInvalidArgument, "%s: step must be positive", op);
    return;
  }
  const DimView v = view_along(*self, d);
  int64_t start = 0, len = 0;
  slice_range(*args[3], *args[4], step, v.size, &start, &len);
  std::array<int64_t, kMaxDims> sizes{};
  for (int i = 0; i < self->dim(); ++i) sizes[static_cast<size_t>(i)] = i == d ? len : self->size(i);
  if (!scatter_base(ctx, *self, *src, *out, {sizes.data(), static_cast<size_t>(self->dim())}, op)) return;
  copy_rows<true>(*src, *out, v, start, step, len);
}

// select_scatter.out(self, src, dim, index, out): out = self with self.select(dim, index) = src.
void select_scatter_out(KernelContext& ctx, Args args) {
  const char* op = "select_scatter.out";
  if (!check_arg_count(ctx, args, 5, op)) return;
  TensorImpl* self = tensor_arg(ctx, args, 0, op);
  TensorImpl* src = tensor_arg(ctx, args, 1, op);
  TensorImpl* out = tensor_arg(ctx, args, 4, op);
  int64_t d = 0;
  if (!self || !src || !out || !dim_arg(ctx, args, 2, self->dim(), &d, op)) return;
  const DimView v = view_along(*self, d);
  int64_t index = 0;
  if (!select_index(ctx, *args[3], v, &index, op)) return;
  std::array<int64_t, kMaxDims> sizes{};
  const size_t n = sizes_without(*self, d, &sizes);
  if (!scatter_base(ctx, *self, *src, *out, {sizes.data(), n}, op)) return;
  copy_rows<true>(*src, *out, v, index, 1, 1);
}

}  // namespace

void register_slice_kernels(KernelRegistry& r) {
  const uint32_t all = kRealBoolDtypes | kHalfDtypes;  // byte copies: any dtype
  r.add("aten::slice_copy.Tensor_out", kernel(slice_copy_out, all));
  r.add("aten::select_copy.int_out", kernel(select_copy_out, all));
  r.add("aten::split_copy.Tensor_out", kernel(split_copy_out, all));
  r.add("aten::split_with_sizes_copy.out", kernel(split_with_sizes_copy_out, all));
  r.add("aten::narrow_copy.out", kernel(narrow_copy_out, all));
  r.add("aten::unbind_copy.int_out", kernel(unbind_copy_out, all));
  r.add("aten::slice_scatter.out", kernel(slice_scatter_out, all));
  r.add("aten::select_scatter.out", kernel(select_scatter_out, all));
}

}  // namespace etscope::runtime::kernels
