// gather, scatter (value and src overloads) and scatter_add along one dimension with an int64
// index tensor; advanced indexing (index.Tensor_out, index_put.out) with a list of optional
// integer index tensors and boolean masks, broadcast together as in NumPy.
#include <algorithm>
#include <optional>

#include "etscope/core/checked.h"
#include "kernels/register.h"
#include "kernels/util/half_via_float.h"
#include "kernels/util/elementwise_util.h"

namespace etscope::runtime::kernels {
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
        std::memmove(dst + static_cast<size_t>(i) * es, src + static_cast<size_t>(off) * es, es);
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

// ---------------------------------------------------------------- advanced indexing
//
// index.Tensor(self, indices) takes one optional tensor per leading dimension of self (None keeps
// the dimension whole). Integer tensors (int64 or int32) select along their dimension; a bool or
// uint8 mask of rank k stands for the k index tensors of its true positions. The index tensors
// broadcast to one shape B. The result has self's kept dimensions with B in place of the indexed
// ones when those are adjacent, else B first (NumPy's rule).
//
// Each index source contributes an element offset into self for each position of B: an integer
// tensor its value (wrapped when negative) times its dimension's stride, a mask the offset of
// its n-th true position (precomputed into scratch, which load sized from the masks' extents).

struct IndexSource {
  const void* data = nullptr;     // index values (int64/int32), or the mask's offsets (int64)
  ScalarType dtype = ScalarType::kLong;
  bool mask = false;
  int64_t dim_size = 0, dim_stride = 0;  // integer sources: the dimension they index
  std::array<int64_t, kMaxDims> bstrides{};  // strides over B's coordinates (0: broadcast)
};

struct AdvancedIndex {
  std::array<IndexSource, kMaxDims> sources{};
  int num_sources = 0;
  std::array<int64_t, kMaxDims> bsizes{};  // B
  int brank = 0;
  std::array<int, kMaxDims> kept{};  // self's dimensions that are not indexed, in order
  int num_kept = 0;
  int b_at = 0;  // where B goes among the result's dimensions
  std::array<int64_t, kMaxDims> out_sizes{};
  int out_rank = 0;
};

bool is_mask_dtype(ScalarType t) { return t == ScalarType::kBool || t == ScalarType::kByte; }

// Bytes of scratch the masks among `indices` need: one int64 per mask element.
size_t index_scratch(const EValue& indices) {
  if (indices.tag != Tag::kOptionalTensorList && indices.tag != Tag::kTensorList) return 0;
  size_t bytes = 0;
  for (const TensorImpl* t : indices.tensor_list) {
    if (t != nullptr && is_mask_dtype(t->dtype())) bytes += static_cast<size_t>(t->numel()) * sizeof(int64_t);
  }
  return bytes;
}

size_t index_tensor_scratch(Args args) { return args.size() < 2 ? 0 : index_scratch(*args[1]); }

// Validates self and indices and lays out the result. Fails the call and returns false on a
// rank, dtype, broadcast or mask-shape problem, or a mask larger than the scratch.
bool plan_advanced_index(KernelContext& ctx, const TensorImpl& self, const EValue& indices, AdvancedIndex* ix,
                         const char* op) {
  if (indices.tag != Tag::kOptionalTensorList && indices.tag != Tag::kTensorList) {
    ctx.fail(ErrorCode::kCorrupt, "%s: indices is not a list of tensors", op);
    return false;
  }
  std::span<uint8_t> scratch = ctx.scratch();
  size_t scratch_used = 0;
  int dim = 0;  // next dimension of self to index
  int first = -1, last = -1;
  bool adjacent = true;
  std::array<const TensorImpl*, kMaxDims> shapes{};  // the tensor whose shape each source has (masks: none)
  std::array<int64_t, kMaxDims> mask_count{};
  std::array<bool, kMaxDims> indexed{};
  for (const TensorImpl* t : indices.tensor_list) {
    if (t == nullptr) {
      ++dim;
      continue;
    }
    const bool mask = is_mask_dtype(t->dtype());
    if (!mask && t->dtype() != ScalarType::kLong && t->dtype() != ScalarType::kInt) {
      ctx.fail(ErrorCode::kInvalidArgument, "%s: indices must be int64, int32, bool or uint8 tensors, not %s", op,
               scalar_type_name(t->dtype()).c_str());
      return false;
    }
    if (!t->contiguous()) {
      ctx.fail(ErrorCode::kNotSupported, "%s: only contiguous index tensors are supported", op);
      return false;
    }
    const int covers = mask ? t->dim() : 1;
    if (dim + covers > self.dim() || ix->num_sources == kMaxDims) {
      ctx.fail(ErrorCode::kInvalidArgument, "%s: too many indices for a tensor of rank %d", op, self.dim());
      return false;
    }
    IndexSource& src = ix->sources[static_cast<size_t>(ix->num_sources)];
    src.mask = mask;
    if (mask) {
      for (int k = 0; k < t->dim(); ++k) {
        if (t->size(k) != self.size(dim + k)) {
          ctx.fail(ErrorCode::kInvalidArgument, "%s: mask dimension %d has size %lld, self's dimension %d has %lld", op, k,
                   static_cast<long long>(t->size(k)), dim + k, static_cast<long long>(self.size(dim + k)));
          return false;
        }
      }
      const size_t need = static_cast<size_t>(t->numel()) * sizeof(int64_t);
      if (scratch.size() - scratch_used < need) {
        ctx.fail(ErrorCode::kOutOfResources, "%s: mask larger than the extent sized at load", op);
        return false;
      }
      auto* offsets = reinterpret_cast<int64_t*>(scratch.data() + scratch_used);
      scratch_used += need;
      // Offsets of the true positions, in row-major order of the mask.
      const auto* m = static_cast<const uint8_t*>(t->data());
      int64_t n = 0;
      std::array<int64_t, kMaxDims> coord{};
      for (int64_t i = 0; i < t->numel(); ++i) {
        if (m[i] != 0) {
          int64_t off = 0;
          for (int k = 0; k < t->dim(); ++k) off += coord[static_cast<size_t>(k)] * self.strides()[static_cast<size_t>(dim + k)];
          offsets[n++] = off;
        }
        for (int k = t->dim() - 1; k >= 0; --k) {
          if (++coord[static_cast<size_t>(k)] < t->size(k)) break;
          coord[static_cast<size_t>(k)] = 0;
        }
      }
      src.data = offsets;
      mask_count[static_cast<size_t>(ix->num_sources)] = n;
    } else {
      src.data = t->data();
      src.dtype = t->dtype();
      src.dim_size = self.size(dim);
      src.dim_stride = self.strides()[static_cast<size_t>(dim)];
      shapes[static_cast<size_t>(ix->num_sources)] = t;
    }
    for (int k = 0; k < covers; ++k) indexed[static_cast<size_t>(dim + k)] = true;
    if (first < 0) first = dim;
    // Adjacent means no None between two index tensors.
    if (last >= 0 && last != dim) adjacent = false;
    dim += covers;
    last = dim;
    ++ix->num_sources;
  }
  if (ix->num_sources == 0) {
    ctx.fail(ErrorCode::kInvalidArgument, "%s: at least one index must be a tensor", op);
    return false;
  }
  // B: broadcast of every source's shape (a mask's is [count]).
  int brank = 0;
  for (int s = 0; s < ix->num_sources; ++s) {
    const int r = ix->sources[static_cast<size_t>(s)].mask ? 1 : shapes[static_cast<size_t>(s)]->dim();
    brank = std::max(brank, r);
  }
  ix->brank = brank;
  for (int b = 0; b < brank; ++b) ix->bsizes[static_cast<size_t>(b)] = 1;
  for (int s = 0; s < ix->num_sources; ++s) {
    IndexSource& src = ix->sources[static_cast<size_t>(s)];
    const int r = src.mask ? 1 : shapes[static_cast<size_t>(s)]->dim();
    for (int k = 0; k < r; ++k) {
      const int64_t size = src.mask ? mask_count[static_cast<size_t>(s)] : shapes[static_cast<size_t>(s)]->size(k);
      const int64_t stride = src.mask ? 1 : shapes[static_cast<size_t>(s)]->strides()[static_cast<size_t>(k)];
      const size_t b = static_cast<size_t>(brank - r + k);
      if (size != 1) {
        if (ix->bsizes[b] != 1 && ix->bsizes[b] != size) {
          ctx.fail(ErrorCode::kInvalidArgument, "%s: index shapes cannot be broadcast together", op);
          return false;
        }
        ix->bsizes[b] = size;
        src.bstrides[b] = stride;
      }
    }
  }
  // A source whose size is 1 where B is larger keeps stride 0 (broadcast); one that matched
  // before B grew must be re-checked.
  for (int s = 0; s < ix->num_sources; ++s) {
    const IndexSource& src = ix->sources[static_cast<size_t>(s)];
    const int r = src.mask ? 1 : shapes[static_cast<size_t>(s)]->dim();
    for (int k = 0; k < r; ++k) {
      const int64_t size = src.mask ? mask_count[static_cast<size_t>(s)] : shapes[static_cast<size_t>(s)]->size(k);
      if (size != 1 && size != ix->bsizes[static_cast<size_t>(brank - r + k)]) {
        ctx.fail(ErrorCode::kInvalidArgument, "%s: index shapes cannot be broadcast together", op);
        return false;
      }
    }
  }
  for (int d = 0; d < self.dim(); ++d) {
    if (!indexed[static_cast<size_t>(d)]) ix->kept[static_cast<size_t>(ix->num_kept++)] = d;
  }
  ix->b_at = 0;
  if (adjacent) {
    for (int k = 0; k < ix->num_kept; ++k) ix->b_at += ix->kept[static_cast<size_t>(k)] < first;
  }
  if (ix->num_kept + brank > kMaxDims) {
    ctx.fail(ErrorCode::kNotSupported, "%s: result would have more than %d dimensions", op, kMaxDims);
    return false;
  }
  int r = 0;
  for (int k = 0; k < ix->b_at; ++k) ix->out_sizes[static_cast<size_t>(r++)] = self.size(ix->kept[static_cast<size_t>(k)]);
  for (int b = 0; b < brank; ++b) ix->out_sizes[static_cast<size_t>(r++)] = ix->bsizes[static_cast<size_t>(b)];
  for (int k = ix->b_at; k < ix->num_kept; ++k) ix->out_sizes[static_cast<size_t>(r++)] = self.size(ix->kept[static_cast<size_t>(k)]);
  ix->out_rank = r;
  return true;
}

// Calls f(result_position, self_offset) for every element of the indexed result, in row-major
// order. Returns false (having stopped) on an index value out of range.
template <typename F>
bool walk_advanced_index(const TensorImpl& self, const AdvancedIndex& ix, F f, int64_t* bad_value) {
  int64_t total = 1;
  for (int d = 0; d < ix.out_rank; ++d) total *= ix.out_sizes[static_cast<size_t>(d)];
  std::array<int64_t, kMaxDims> coord{};
  for (int64_t pos = 0; pos < total; ++pos) {
    int64_t off = 0;
    // Kept dimensions.
    for (int k = 0; k < ix.num_kept; ++k) {
      const int od = k < ix.b_at ? k : k + ix.brank;
      off += coord[static_cast<size_t>(od)] * self.strides()[static_cast<size_t>(ix.kept[static_cast<size_t>(k)])];
    }
    // Index sources at B's coordinates.
    for (int s = 0; s < ix.num_sources; ++s) {
      const IndexSource& src = ix.sources[static_cast<size_t>(s)];
      int64_t at = 0;
      for (int b = 0; b < ix.brank; ++b) {
        at += coord[static_cast<size_t>(ix.b_at + b)] * src.bstrides[static_cast<size_t>(b)];
      }
      if (src.mask) {
        off += static_cast<const int64_t*>(src.data)[at];
        continue;
      }
      int64_t v = src.dtype == ScalarType::kLong ? static_cast<const int64_t*>(src.data)[at]
                                                  : static_cast<const int32_t*>(src.data)[at];
      if (v < -src.dim_size || v >= src.dim_size) {
        *bad_value = v;
        return false;
      }
      if (v < 0) v += src.dim_size;
      off += v * src.dim_stride;
    }
    f(pos, off);
    for (int d = ix.out_rank - 1; d >= 0; --d) {
      if (++coord[static_cast<size_t>(d)] < ix.out_sizes[static_cast<size_t>(d)]) break;
      coord[static_cast<size_t>(d)] = 0;
    }
  }
  return true;
}

// index.Tensor_out(self, indices, out).
void index_tensor_out(KernelContext& ctx, Args args) {
  const char* op = "index.Tensor_out";
  if (!check_arg_count(ctx, args, 3, op)) return;
  TensorImpl* self = tensor_arg(ctx, args, 0, op);
  TensorImpl* out = tensor_arg(ctx, args, 2, op);
  if (!self || !out || !require_contiguous(ctx, op, {self, out})) return;
  if (out->dtype() != self->dtype()) {
    ctx.fail(ErrorCode::kInvalidArgument, "%s: output dtype %s differs from self's %s", op,
             scalar_type_name(out->dtype()).c_str(), scalar_type_name(self->dtype()).c_str());
    return;
  }
  AdvancedIndex ix;
  if (!plan_advanced_index(ctx, *self, *args[1], &ix, op)) return;
  if (!resize_or_fail(ctx, out, {ix.out_sizes.data(), static_cast<size_t>(ix.out_rank)}, op)) return;
  const size_t es = self->element_size();
  const auto* src = static_cast<const uint8_t*>(self->data());
  auto* dst = static_cast<uint8_t*>(out->data());
  int64_t bad = 0;
  if (!walk_advanced_index(*self, ix, [&](int64_t pos, int64_t off) {
        std::memmove(dst + static_cast<size_t>(pos) * es, src + static_cast<size_t>(off) * es, es);
      }, &bad)) {
    ctx.fail(ErrorCode::kInvalidArgument, "%s: index %lld is out of range", op, static_cast<long long>(bad));
  }
}

size_t index_put_scratch(Args args) { return args.size() < 2 ? 0 : index_scratch(*args[1]); }

// index_put.out(self, indices, values, accumulate, out): out = self, then the elements
// self[indices] selects are set to values (broadcast to the indexed shape), or incremented.
void index_put_out(KernelContext& ctx, Args args) {
  const char* op = "index_put.out";
  if (!check_arg_count(ctx, args, 5, op)) return;
  TensorImpl* self = tensor_arg(ctx, args, 0, op);
  TensorImpl* values = tensor_arg(ctx, args, 2, op);
  TensorImpl* out = tensor_arg(ctx, args, 4, op);
  if (!self || !values || !out || !require_contiguous(ctx, op, {self, values, out})) return;
  if (args[3]->tag != Tag::kBool) {
    ctx.fail(ErrorCode::kCorrupt, "%s: accumulate is not a bool", op);
    return;
  }
  const bool accumulate = args[3]->scalar.b;
  if (out->dtype() != self->dtype() || values->dtype() != self->dtype()) {
    ctx.fail(ErrorCode::kInvalidArgument, "%s: self, values and out must share one dtype", op);
    return;
  }
  if (accumulate && !is_supported_dtype(self->dtype())) {
    ctx.fail(ErrorCode::kNotSupported, "%s: accumulate is not supported for %s", op,
             scalar_type_name(self->dtype()).c_str());
    return;
  }
  AdvancedIndex ix;
  if (!plan_advanced_index(ctx, *self, *args[1], &ix, op)) return;
  // Work cap: index tensors that broadcast against each other ([N, 1] with [1, N]) make an indexed
  // shape far larger than any tensor of the call; a program may not make the kernel loop over more
  // positions than self, values or the indices themselves hold.
  uint64_t limit = static_cast<uint64_t>(std::max(self->numel(), values->numel()));
  if (args[1]->tag == Tag::kTensorList || args[1]->tag == Tag::kOptionalTensorList) {
    for (const TensorImpl* t : args[1]->tensor_list) limit += t != nullptr ? static_cast<uint64_t>(t->numel()) : 0;
  }
  std::optional<uint64_t> positions = 1;
  for (int d = 0; d < ix.out_rank && positions; ++d) {
    positions = checked::mul(*positions, static_cast<uint64_t>(ix.out_sizes[static_cast<size_t>(d)]));
  }
  if (!positions || *positions > limit) {
    ctx.fail(ErrorCode::kInvalidArgument, "%s: the indices select more positions than self, values and indices hold "
             "(broadcast index shapes multiply)", op);
    return;
  }
  // values broadcast to the indexed shape.
  if (values->dim() > ix.out_rank) {
    ctx.fail(ErrorCode::kInvalidArgument, "%s: values has more dimensions than the indexed result", op);
    return;
  }
  std::array<int64_t, kMaxDims> vstrides{};
  for (int k = 0; k < values->dim(); ++k) {
    const int od = ix.out_rank - values->dim() + k;
    const int64_t vs = values->size(k);
    if (vs != 1 && vs != ix.out_sizes[static_cast<size_t>(od)]) {
      ctx.fail(ErrorCode::kInvalidArgument, "%s: values dimension %d of size %lld cannot be broadcast to the indexed shape",
               op, k, static_cast<long long>(vs));
      return;
    }
    if (vs != 1) vstrides[static_cast<size_t>(od)] = values->strides()[static_cast<size_t>(k)];
  }
  std::array<int64_t, kMaxDims> out_coord_strides{};  // row-major strides of the indexed result
  int64_t acc = 1;
  for (int d = ix.out_rank - 1; d >= 0; --d) {
    out_coord_strides[static_cast<size_t>(d)] = acc;
    acc *= ix.out_sizes[static_cast<size_t>(d)];
  }
  if (!copy_self(ctx, *self, *out, op)) return;
  // The value offset of a result position, from its row-major coordinates.
  auto value_offset = [&](int64_t pos) {
    int64_t v = 0;
    for (int d = 0; d < ix.out_rank; ++d) {
      const int64_t c = (pos / out_coord_strides[static_cast<size_t>(d)]) % ix.out_sizes[static_cast<size_t>(d)];
      v += c * vstrides[static_cast<size_t>(d)];
    }
    return v;
  };
  const size_t es = self->element_size();
  auto* dst = static_cast<uint8_t*>(out->data());
  const auto* vals = static_cast<const uint8_t*>(values->data());
  int64_t bad = 0;
  bool ok = true;
  if (!accumulate) {
    ok = walk_advanced_index(*out, ix, [&](int64_t pos, int64_t off) {
      std::memmove(dst + static_cast<size_t>(off) * es, vals + static_cast<size_t>(value_offset(pos)) * es, es);
    }, &bad);
  } else {
    dispatch_real_and_bool(out->dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      T* y = out->data_as<T>();
      const T* x = values->data_as<T>();
      ok = walk_advanced_index(*out, ix, [&](int64_t pos, int64_t off) {
        const T v = x[value_offset(pos)];
        if constexpr (std::is_same_v<T, bool>) {
          y[off] = y[off] || v;
        } else if constexpr (std::is_integral_v<T>) {
          using U = std::make_unsigned_t<T>;
          y[off] = static_cast<T>(static_cast<U>(static_cast<U>(y[off]) + static_cast<U>(v)));
        } else {
          y[off] = y[off] + v;
        }
      }, &bad);
    });
  }
  if (!ok) ctx.fail(ErrorCode::kInvalidArgument, "%s: index %lld is out of range", op, static_cast<long long>(bad));
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

// repeat_interleave.Tensor_out(repeats, output_size?, out): the 1-D index list in which each
// position i of repeats appears repeats[i] times (repeats: 1-D int64 or int32, non-negative);
// out has repeats' dtype and, when output_size is given, that many elements.
void repeat_interleave_tensor_out(KernelContext& ctx, Args args) {
  const char* op = "repeat_interleave.Tensor_out";
  if (!check_arg_count(ctx, args, 3, op)) return;
  TensorImpl* repeats = tensor_arg(ctx, args, 0, op);
  TensorImpl* out = tensor_arg(ctx, args, 2, op);
  if (!repeats || !out || !require_contiguous(ctx, op, {repeats, out})) return;
  if (repeats->dim() != 1 || (repeats->dtype() != ScalarType::kLong && repeats->dtype() != ScalarType::kInt) ||
      out->dtype() != repeats->dtype()) {
    ctx.fail(ErrorCode::kInvalidArgument, "%s: repeats must be a 1-D int64 or int32 tensor and out of its dtype", op);
    return;
  }
  auto value = [&](int64_t i) {
    return repeats->dtype() == ScalarType::kLong ? repeats->data_as<int64_t>()[i]
                                                 : static_cast<int64_t>(repeats->data_as<int32_t>()[i]);
  };
  int64_t total = 0;
  for (int64_t i = 0; i < repeats->numel(); ++i) {
    const int64_t r = value(i);
    if (r < 0 || r > (int64_t{1} << 40) || total > (int64_t{1} << 40)) {
      ctx.fail(ErrorCode::kInvalidArgument, "%s: repeats[%lld] = %lld is negative or too large", op,
               static_cast<long long>(i), static_cast<long long>(r));
      return;
    }
    total += r;
  }
  if (args[1]->tag == Tag::kInt && args[1]->scalar.i != total) {
    ctx.fail(ErrorCode::kInvalidArgument, "%s: output_size %lld differs from the repeats' sum %lld", op,
             static_cast<long long>(args[1]->scalar.i), static_cast<long long>(total));
    return;
  }
  const int64_t sizes[1] = {total};
  if (!resize_or_fail(ctx, out, sizes, op)) return;
  int64_t at = 0;
  for (int64_t i = 0; i < repeats->numel(); ++i) {
    for (int64_t k = value(i); k > 0; --k, ++at) {
      if (out->dtype() == ScalarType::kLong) {
        out->data_as<int64_t>()[at] = i;
      } else {
        out->data_as<int32_t>()[at] = static_cast<int32_t>(i);
      }
    }
  }
}

}  // namespace

void register_index_kernels(KernelRegistry& r) {
  r.add("aten::gather.out", kernel(gather_out, kRealBoolDtypes));
  r.add("aten::scatter.value_out", kernel(scatter_value_out, kRealBoolDtypes));
  r.add("aten::scatter.src_out", kernel(scatter_src<false>, kRealBoolDtypes));
  r.add("aten::scatter_add.out", half_kernel<scatter_src<true>>(kRealBoolDtypes));
  r.add("aten::index.Tensor_out", kernel(index_tensor_out, kRealBoolDtypes | kHalfDtypes, index_tensor_scratch));
  r.add("aten::repeat_interleave.Tensor_out", kernel(repeat_interleave_tensor_out, kIntDtypes));
  r.add("aten::masked_scatter.out", kernel(masked_scatter_out, kRealBoolDtypes | kHalfDtypes));
  r.add("aten::nonzero.out", half_kernel<nonzero_out>(kRealBoolDtypes));
  r.add("aten::masked_select.out", kernel(masked_select_out, kRealBoolDtypes | kHalfDtypes));
  r.add("aten::index_put.out", kernel(index_put_out, kRealBoolDtypes | kHalfDtypes, index_put_scratch));
  // index_put_(self, indices, values, accumulate) -> self: the return value is the out argument
  // (the loader checked it is writable); copy_self skips the copy when it is self's memory.
  r.add("aten::index_put_", kernel(index_put_out, kRealBoolDtypes | kHalfDtypes, index_put_scratch));
}

}  // namespace etscope::runtime::kernels
