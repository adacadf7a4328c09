// Shape and index kernels: stack, transpose_copy / t_copy, constant_pad_nd, repeat, flip, roll,
// pixel_shuffle / pixel_unshuffle,
// index_select, masked_fill, tril, arange, zeros / ones, cumsum, and the dim reductions
// amax / amin / argmin / max.dim / min.dim.
//
// Copies move whole elements by bytes (any dtype of the registered sizes); kernels that look at
// values dispatch on the real and bool dtypes.
#include <cmath>
#include <cstring>
#include <limits>

#include "kernels/register.h"
#include "kernels/util/half_via_float.h"
#include "kernels/util/elementwise_util.h"

namespace etscope::runtime::kernels {
namespace {

bool same_dtype(KernelContext& ctx, const char* op, const TensorImpl& in, const TensorImpl& out) {
  if (in.dtype() != out.dtype()) {
    ctx.fail(ErrorCode::kInvalidArgument, "%s: out dtype %s differs from self's %s", op,
             scalar_type_name(out.dtype()).c_str(), scalar_type_name(in.dtype()).c_str());
    return false;
  }
  return require_contiguous(ctx, op, {&in, &out});
}

bool rank_is(KernelContext& ctx, const char* op, const TensorImpl& out, size_t rank) {
  if (out.dim() != static_cast<int>(rank)) {
    ctx.fail(ErrorCode::kInvalidArgument, "%s: output must have rank %zu, has %d", op, rank, out.dim());
    return false;
  }
  return true;
}

// Visits every element of a contiguous tensor of `sizes` in order, keeping its coordinates, and
// calls f(linear_index, coords).
template <typename F>
void for_each_coord(std::span<const int64_t> sizes, int64_t numel, F f) {
  std::array<int64_t, kMaxDims> idx{};
  const int rank = static_cast<int>(sizes.size());
  for (int64_t i = 0; i < numel; ++i) {
    f(i, idx);
    for (int d = rank - 1; d >= 0; --d) {
      if (++idx[static_cast<size_t>(d)] < sizes[static_cast<size_t>(d)]) break;
      idx[static_cast<size_t>(d)] = 0;
    }
  }
}

// Contiguous strides of `t` in elements.
std::array<int64_t, kMaxDims> strides_of(const TensorImpl& t) {
  std::array<int64_t, kMaxDims> s{};
  int64_t acc = 1;
  for (int d = t.dim() - 1; d >= 0; --d) {
    s[static_cast<size_t>(d)] = acc;
    acc *= t.size(d);
  }
  return s;
}

void copy_element(const TensorImpl& in, int64_t src, TensorImpl& out, int64_t dst) {
  const size_t es = in.element_size();
  std::memmove(static_cast<uint8_t*>(out.data()) + static_cast<size_t>(dst) * es,
              static_cast<const uint8_t*>(in.data()) + static_cast<size_t>(src) * es, es);
}

// stack.out(tensors, dim, out): inserts a new dimension `dim` (in [-rank-1, rank]).
void stack_out(KernelContext& ctx, Args args) {
  const char* op = "stack.out";
  if (!check_arg_count(ctx, args, 3, op)) return;
  TensorImpl* out = tensor_arg(ctx, args, 2, op);
  if (!out) return;
  if (args[0]->tag != Tag::kTensorList || args[0]->tensor_list.empty() || args[1]->tag != Tag::kInt) {
    ctx.fail(ErrorCode::kInvalidArgument, "%s: expected a non-empty tensor list and an int dim", op);
    return;
  }
  const auto list = args[0]->tensor_list;
  const TensorImpl* first = list[0];
  if (first == nullptr || first->dim() + 1 > kMaxDims) {
    ctx.fail(ErrorCode::kInvalidArgument, "%s: invalid first tensor", op);
    return;
  }
  const int rank = first->dim();
  const int64_t d = normalize_dim(args[1]->scalar.i, rank + 1);
  if (d < 0) {
    ctx.fail(ErrorCode::kInvalidArgument, "%s: dim %lld is out of range", op, static_cast<long long>(args[1]->scalar.i));
    return;
  }
  for (const TensorImpl* t : list) {
    if (t == nullptr || t->dim() != rank || !std::equal(t->sizes().begin(), t->sizes().end(), first->sizes().begin()) ||
        !same_dtype(ctx, op, *t, *out)) {
      if (!ctx.failed()) ctx.fail(ErrorCode::kInvalidArgument, "%s: every tensor must have the same shape", op);
      return;
    }
  }
  std::array<int64_t, kMaxDims> sizes{};
  int64_t outer = 1, inner = 1;
  for (int i = 0, k = 0; i <= rank; ++i) {
    if (i == d) {
      sizes[static_cast<size_t>(i)] = static_cast<int64_t>(list.size());
      continue;
    }
    sizes[static_cast<size_t>(i)] = first->size(k);
    (i < d ? outer : inner) *= first->size(k++);
  }
  if (!rank_is(ctx, op, *out, static_cast<size_t>(rank + 1)) ||
      !resize_or_fail(ctx, out, {sizes.data(), static_cast<size_t>(rank + 1)}, op)) {
    return;
  }
  const size_t row = static_cast<size_t>(inner) * out->element_size();
  if (row == 0) return;
  auto* dst = static_cast<uint8_t*>(out->data());
  for (int64_t o = 0; o < outer; ++o) {
    for (size_t k = 0; k < list.size(); ++k) {
      std::memmove(dst + (static_cast<size_t>(o) * list.size() + k) * row,
                  static_cast<const uint8_t*>(list[k]->data()) + static_cast<size_t>(o) * row, row);
    }
  }
}

// Writes out = in with dims d0 and d1 swapped (out already resized).
void transpose_into(const TensorImpl& in, TensorImpl& out, int64_t d0, int64_t d1) {
  const auto in_strides = strides_of(in);
  std::array<int64_t, kMaxDims> perm_strides = in_strides;
  std::swap(perm_strides[static_cast<size_t>(d0)], perm_strides[static_cast<size_t>(d1)]);
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

// constant_pad_nd.out(self, pad, value, out): pad holds (before, after) pairs starting from the
// last dimension; negative amounts crop.
void constant_pad_nd_out(KernelContext& ctx, Args args) {
  const char* op = "constant_pad_nd.out";
  if (!check_arg_count(ctx, args, 4, op)) return;
  TensorImpl* in = tensor_arg(ctx, args, 0, op);
  TensorImpl* out = tensor_arg(ctx, args, 3, op);
  IntList pad;
  if (!in || !out || !int_list_arg(ctx, args, 1, &pad, op) || !same_dtype(ctx, op, *in, *out)) return;
  const int rank = in->dim();
  if (pad.size % 2 != 0 || pad.size / 2 > static_cast<size_t>(rank)) {
    ctx.fail(ErrorCode::kInvalidArgument, "%s: pad must hold (before, after) pairs for at most %d dims", op, rank);
    return;
  }
  std::array<int64_t, kMaxDims> before{}, sizes{};
  for (int d = 0; d < rank; ++d) {
    const size_t from_end = static_cast<size_t>(rank - 1 - d);
    int64_t lo = 0, hi = 0;
    if (from_end < pad.size / 2) lo = pad[2 * from_end], hi = pad[2 * from_end + 1];
    before[static_cast<size_t>(d)] = lo;
    sizes[static_cast<size_t>(d)] = in->size(d) + lo + hi;
    if (sizes[static_cast<size_t>(d)] < 0) {
      ctx.fail(ErrorCode::kInvalidArgument, "%s: padding makes dim %d negative", op, d);
      return;
    }
  }
  if (!rank_is(ctx, op, *out, static_cast<size_t>(rank)) ||
      !resize_or_fail(ctx, out, {sizes.data(), static_cast<size_t>(rank)}, op)) {
    return;
  }
  const EValue& value = *args[2];
  const bool ok = dispatch_real_and_bool(out->dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T fill = value.tag == Tag::kInt ? convert<T>(value.scalar.i) : convert<T>(value.scalar_as_double());
    const T* x = in->data_as<T>();
    T* y = out->data_as<T>();
    const auto in_strides = strides_of(*in);
    for_each_coord(out->sizes(), out->numel(), [&](int64_t i, const std::array<int64_t, kMaxDims>& idx) {
      int64_t src = 0;
      for (int d = 0; d < rank; ++d) {
        const int64_t s = idx[static_cast<size_t>(d)] - before[static_cast<size_t>(d)];
        if (s < 0 || s >= in->size(d)) {
          y[i] = fill;
          return;
        }
        src += s * in_strides[static_cast<size_t>(d)];
      }
      y[i] = x[src];
    });
  });
  if (!ok) ctx.fail(ErrorCode::kNotSupported, "%s: unsupported dtype %s", op, scalar_type_name(out->dtype()).c_str());
}

// repeat.out(self, repeats, out): len(repeats) >= rank; self is treated as having leading 1s.
void repeat_out(KernelContext& ctx, Args args) {
  const char* op = "repeat.out";
  if (!check_arg_count(ctx, args, 3, op)) return;
  TensorImpl* in = tensor_arg(ctx, args, 0, op);
  TensorImpl* out = tensor_arg(ctx, args, 2, op);
  IntList reps;
  if (!in || !out || !int_list_arg(ctx, args, 1, &reps, op) || !same_dtype(ctx, op, *in, *out)) return;
  if (reps.size < static_cast<size_t>(in->dim())) {
    ctx.fail(ErrorCode::kInvalidArgument, "%s: repeats needs at least %d items", op, in->dim());
    return;
  }
  const size_t rank = reps.size, offset = rank - static_cast<size_t>(in->dim());
  std::array<int64_t, kMaxDims> in_sizes{}, sizes{};
  for (size_t d = 0; d < rank; ++d) {
    in_sizes[d] = d < offset ? 1 : in->size(static_cast<int>(d - offset));
    if (reps[d] < 0) {
      ctx.fail(ErrorCode::kInvalidArgument, "%s: repeats must be non-negative", op);
      return;
    }
    sizes[d] = in_sizes[d] * reps[d];
  }
  if (!rank_is(ctx, op, *out, rank) || !resize_or_fail(ctx, out, {sizes.data(), rank}, op)) return;
  std::array<int64_t, kMaxDims> in_strides{};
  int64_t acc = 1;
  for (size_t d = rank; d-- > 0;) {
    in_strides[d] = acc;
    acc *= in_sizes[d];
  }
  for_each_coord(out->sizes(), out->numel(), [&](int64_t i, const std::array<int64_t, kMaxDims>& idx) {
    int64_t src = 0;
    for (size_t d = 0; d < rank; ++d) src += (idx[d] % in_sizes[d]) * in_strides[d];
    copy_element(*in, src, *out, i);
  });
}

// flip.out(self, dims, out)
void flip_out(KernelContext& ctx, Args args) {
  const char* op = "flip.out";
  if (!check_arg_count(ctx, args, 3, op)) return;
  TensorImpl* in = tensor_arg(ctx, args, 0, op);
  TensorImpl* out = tensor_arg(ctx, args, 2, op);
  IntList dims;
  if (!in || !out || !int_list_arg(ctx, args, 1, &dims, op) || !same_dtype(ctx, op, *in, *out)) return;
  uint32_t mask = 0;
  for (size_t k = 0; k < dims.size; ++k) {
    const int64_t d = normalize_dim(dims[k], in->dim());
    if (d < 0 || in->dim() == 0 || (mask & (1u << d))) {
      ctx.fail(ErrorCode::kInvalidArgument, "%s: dim %lld is out of range or repeated", op, static_cast<long long>(dims[k]));
      return;
    }
    mask |= 1u << d;
  }
  if (!rank_is(ctx, op, *out, static_cast<size_t>(in->dim())) || !resize_or_fail(ctx, out, in->sizes(), op)) return;
  const auto strides = strides_of(*in);
  for_each_coord(out->sizes(), out->numel(), [&](int64_t i, const std::array<int64_t, kMaxDims>& idx) {
    int64_t src = 0;
    for (int d = 0; d < in->dim(); ++d) {
      const int64_t c = (mask & (1u << d)) ? in->size(d) - 1 - idx[static_cast<size_t>(d)] : idx[static_cast<size_t>(d)];
      src += c * strides[static_cast<size_t>(d)];
    }
    copy_element(*in, src, *out, i);
  });
}

// roll.out(self, shifts, dims, out): element i of each rolled dim moves to (i + shift) mod size;
// with no dims the flattened tensor rolls by the single shift.
void roll_out(KernelContext& ctx, Args args) {
  const char* op = "roll.out";
  if (!check_arg_count(ctx, args, 4, op)) return;
  TensorImpl* in = tensor_arg(ctx, args, 0, op);
  TensorImpl* out = tensor_arg(ctx, args, 3, op);
  IntList shifts, dims;
  if (!in || !out || !int_list_arg(ctx, args, 1, &shifts, op) || !int_list_arg(ctx, args, 2, &dims, op) ||
      !same_dtype(ctx, op, *in, *out)) {
    return;
  }
  const bool flat = dims.size == 0;
  if ((flat && shifts.size != 1) || (!flat && shifts.size != dims.size)) {
    ctx.fail(ErrorCode::kInvalidArgument, "%s: shifts and dims must have the same length (one shift without dims)", op);
    return;
  }
  if (!rank_is(ctx, op, *out, static_cast<size_t>(in->dim())) || !resize_or_fail(ctx, out, in->sizes(), op)) return;
  const int64_t n = in->numel();
  if (n == 0) return;
  if (flat) {
    const int64_t s = ((shifts[0] % n) + n) % n;
    for (int64_t i = 0; i < n; ++i) copy_element(*in, i, *out, (i + s) % n);
    return;
  }
  std::array<int64_t, kMaxDims> shift{};
  for (size_t k = 0; k < dims.size; ++k) {
    const int64_t d = in->dim() == 0 ? -1 : normalize_dim(dims[k], in->dim());
    if (d < 0) {
      ctx.fail(ErrorCode::kInvalidArgument, "%s: dim %lld is out of range", op, static_cast<long long>(dims[k]));
      return;
    }
    const int64_t size = in->size(static_cast<int>(d));
    shift[static_cast<size_t>(d)] = (shift[static_cast<size_t>(d)] + ((shifts[k] % size) + size) % size) % size;
  }
  const auto strides = strides_of(*in);
  for_each_coord(in->sizes(), n, [&](int64_t i, const std::array<int64_t, kMaxDims>& idx) {
    int64_t dst = 0;
    for (int d = 0; d < in->dim(); ++d) {
      dst += ((idx[static_cast<size_t>(d)] + shift[static_cast<size_t>(d)]) % in->size(d)) * strides[static_cast<size_t>(d)];
    }
    copy_element(*in, i, *out, dst);
  });
}

// pixel_shuffle.out(self, r, out): [*, C r^2, H, W] -> [*, C, H r, W r]; pixel_unshuffle.out is
// the inverse. out[c][h r + i][w r + j] = in[c r^2 + i r + j][h][w].
template <bool Shuffle>
void pixel_shuffle_out(KernelContext& ctx, Args args) {
  const char* op = Shuffle ? "pixel_shuffle.out" : "pixel_unshuffle.out";
  if (!check_arg_count(ctx, args, 3, op)) return;
  TensorImpl* in = tensor_arg(ctx, args, 0, op);
  TensorImpl* out = tensor_arg(ctx, args, 2, op);
  if (!in || !out || !same_dtype(ctx, op, *in, *out)) return;
  const int64_t r = args[1]->tag == Tag::kInt ? args[1]->scalar.i : 0;
  const int rank = in->dim();
  if (rank < 3 || r <= 0 || r > 65536) {
    ctx.fail(ErrorCode::kInvalidArgument, "%s: needs a tensor of rank >= 3 and a positive factor", op);
    return;
  }
  const int64_t c = in->size(rank - 3), h = in->size(rank - 2), w = in->size(rank - 1);
  if (Shuffle ? c % (r * r) != 0 : (h % r != 0 || w % r != 0)) {
    ctx.fail(ErrorCode::kInvalidArgument, "%s: sizes are not divisible by the factor", op);
    return;
  }
  // Shapes of the shuffled (big) side: channels cs, height hs, width ws.
  const int64_t cs = Shuffle ? c / (r * r) : c, hs = Shuffle ? h * r : h, ws = Shuffle ? w * r : w;
  std::array<int64_t, kMaxDims> sizes{};
  for (int i = 0; i < rank - 3; ++i) sizes[static_cast<size_t>(i)] = in->size(i);
  sizes[static_cast<size_t>(rank - 3)] = Shuffle ? cs : c * r * r;
  sizes[static_cast<size_t>(rank - 2)] = Shuffle ? hs : h / r;
  sizes[static_cast<size_t>(rank - 1)] = Shuffle ? ws : w / r;
  if (!rank_is(ctx, op, *out, static_cast<size_t>(rank)) ||
      !resize_or_fail(ctx, out, {sizes.data(), static_cast<size_t>(rank)}, op)) {
    return;
  }
  const int64_t batch = cs * hs * ws == 0 ? 0 : in->numel() / (cs * hs * ws);
  const int64_t hl = hs / r, wl = ws / r;  // the packed (small) side
  for (int64_t b = 0; b < batch; ++b) {
    const int64_t base = b * cs * hs * ws;
    for (int64_t ch = 0; ch < cs; ++ch) {
      for (int64_t y = 0; y < hs; ++y) {
        for (int64_t x = 0; x < ws; ++x) {
          const int64_t big = base + (ch * hs + y) * ws + x;
          const int64_t small = base + ((ch * r * r + (y % r) * r + x % r) * hl + y / r) * wl + x / r;
          if (Shuffle) {
            copy_element(*in, small, *out, big);
          } else {
            copy_element(*in, big, *out, small);
          }
        }
      }
    }
  }
}

// Reads the index tensor's element i (int64 or int32).
int64_t index_at(const TensorImpl& t, int64_t i) {
  return t.dtype() == ScalarType::kLong ? t.data_as<int64_t>()[i] : t.data_as<int32_t>()[i];
}

// index_select.out(self, dim, index, out): out takes self's slices at `index` (1-D or 0-D) along dim.
void index_select_out(KernelContext& ctx, Args args) {
  const char* op = "index_select.out";
  if (!check_arg_count(ctx, args, 4, op)) return;
  TensorImpl* in = tensor_arg(ctx, args, 0, op);
  TensorImpl* index = tensor_arg(ctx, args, 2, op);
  TensorImpl* out = tensor_arg(ctx, args, 3, op);
  if (!in || !index || !out || !same_dtype(ctx, op, *in, *out) || !require_contiguous(ctx, op, {index})) return;
  if ((index->dtype() != ScalarType::kLong && index->dtype() != ScalarType::kInt) || index->dim() > 1) {
    ctx.fail(ErrorCode::kInvalidArgument, "%s: index must be a 0-D or 1-D int64 or int32 tensor", op);
    return;
  }
  const int rank = in->dim();
  const int64_t d = args[1]->tag == Tag::kInt ? normalize_dim(args[1]->scalar.i, rank) : -1;
  if (d < 0) {
    ctx.fail(ErrorCode::kInvalidArgument, "%s: dim is out of range", op);
    return;
  }
  const int64_t size = rank == 0 ? 1 : in->size(static_cast<int>(d));
  for (int64_t i = 0; i < index->numel(); ++i) {
    const int64_t v = index_at(*index, i);
    if (v < -size || v >= size) {
      ctx.fail(ErrorCode::kInvalidArgument, "%s: index %lld is out of range for size %lld", op,
               static_cast<long long>(v), static_cast<long long>(size));
      return;
    }
  }
  std::array<int64_t, kMaxDims> sizes{};
  int64_t outer = 1, inner = 1;
  for (int i = 0; i < rank; ++i) {
    sizes[static_cast<size_t>(i)] = i == d ? index->numel() : in->size(i);
    if (i < d) outer *= in->size(i);
    if (i > d) inner *= in->size(i);
  }
  if (!rank_is(ctx, op, *out, static_cast<size_t>(rank)) ||
      !resize_or_fail(ctx, out, {sizes.data(), static_cast<size_t>(rank)}, op)) {
    return;
  }
  const size_t row = static_cast<size_t>(inner) * in->element_size();
  if (row == 0) return;
  const int64_t n = index->numel();
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t j = 0; j < n; ++j) {
      int64_t v = index_at(*index, j);
      if (v < 0) v += size;
      std::memmove(static_cast<uint8_t*>(out->data()) + static_cast<size_t>(o * n + j) * row,
                  static_cast<const uint8_t*>(in->data()) + static_cast<size_t>(o * size + v) * row, row);
    }
  }
}

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

// tril.out(self, diagonal, out): keeps elements with col - row <= diagonal in the last two dims.
void tril_out(KernelContext& ctx, Args args) {
  const char* op = "tril.out";
  if (!check_arg_count(ctx, args, 3, op)) return;
  TensorImpl* in = tensor_arg(ctx, args, 0, op);
  TensorImpl* out = tensor_arg(ctx, args, 2, op);
  if (!in || !out || !same_dtype(ctx, op, *in, *out)) return;
  if (in->dim() < 2) {
    ctx.fail(ErrorCode::kInvalidArgument, "%s: self must have at least 2 dims", op);
    return;
  }
  const int64_t diag = args[1]->tag == Tag::kInt ? args[1]->scalar.i : 0;
  if (!resize_or_fail(ctx, out, in->sizes(), op)) return;
  const int64_t rows = in->size(in->dim() - 2), cols = in->size(in->dim() - 1);
  const int64_t mats = rows * cols == 0 ? 0 : in->numel() / (rows * cols);
  const size_t es = in->element_size();
  for (int64_t m = 0; m < mats; ++m) {
    for (int64_t r = 0; r < rows; ++r) {
      const size_t base = static_cast<size_t>((m * rows + r) * cols) * es;
      // Keep columns [0, keep), zero the rest.
      const int64_t keep = std::clamp<int64_t>(diag >= std::numeric_limits<int64_t>::max() - r ? cols : r + diag + 1, 0, cols);
      auto* y = static_cast<uint8_t*>(out->data()) + base;
      if (keep > 0 && out->data() != in->data()) std::memmove(y, static_cast<const uint8_t*>(in->data()) + base, static_cast<size_t>(keep) * es);
      std::memset(y + static_cast<size_t>(keep) * es, 0, static_cast<size_t>(cols - keep) * es);
    }
  }
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

// Splits a contiguous tensor around a dim argument into outer x n x inner.
struct Around {
  int64_t outer = 1, n = 1, inner = 1;
};
bool around_dim(KernelContext& ctx, const TensorImpl& in, const EValue& dim, Around* a, int64_t* d, const char* op) {
  *d = dim.tag == Tag::kInt ? normalize_dim(dim.scalar.i, in.dim()) : -1;
  if (*d < 0) {
    ctx.fail(ErrorCode::kInvalidArgument, "%s: dim is out of range for a rank-%d tensor", op, in.dim());
    return false;
  }
  for (int i = 0; i < in.dim(); ++i) {
    if (i < *d) a->outer *= in.size(i);
    if (i == *d) a->n = in.size(i);
    if (i > *d) a->inner *= in.size(i);
  }
  return true;
}

// cumsum.out(self, dim, dtype?, out): running sums along dim, accumulated in the output's type
// (int64 for integral outputs, double for floating ones).
void cumsum_out(KernelContext& ctx, Args args) {
  const char* op = "cumsum.out";
  if (!check_arg_count(ctx, args, 4, op)) return;
  TensorImpl* in = tensor_arg(ctx, args, 0, op);
  TensorImpl* out = tensor_arg(ctx, args, 3, op);
  if (!in || !out || !require_contiguous(ctx, op, {in, out})) return;
  if (!is_supported_dtype(in->dtype()) || !is_supported_dtype(out->dtype()) || out->dtype() == ScalarType::kBool ||
      (args[2]->tag == Tag::kInt && static_cast<ScalarType>(args[2]->scalar.i) != out->dtype())) {
    ctx.fail(ErrorCode::kInvalidArgument, "%s: unsupported dtypes or dtype argument not the output's", op);
    return;
  }
  Around a;
  int64_t d = 0;
  if (!around_dim(ctx, *in, *args[1], &a, &d, op) || !resize_or_fail(ctx, out, in->sizes(), op)) return;
  auto run = [&](auto acc_tag) {
    using A = typename decltype(acc_tag)::type;
    for (int64_t o = 0; o < a.outer; ++o) {
      for (int64_t i = 0; i < a.inner; ++i) {
        A acc = 0;
        for (int64_t k = 0; k < a.n; ++k) {
          const int64_t at = (o * a.n + k) * a.inner + i;
          acc += load_as<A>(in->dtype(), in->data(), at);
          store_from<A>(out->dtype(), out->data(), at, acc);
        }
      }
    }
  };
  if (is_floating(out->dtype())) {
    run(TypeTag<double>{});
  } else {
    run(TypeTag<int64_t>{});
  }
}

// Extremum along one dim: Mode 0 amax/amin value only, 1 value + index (max.dim / min.dim),
// 2 index only (argmin). NaN wins, as in ATen; ties keep the first index.
template <bool Max>
bool better(auto v, auto best) {
  if constexpr (std::is_floating_point_v<decltype(v)>) {
    if (std::isnan(best)) return false;
    if (std::isnan(v)) return true;
  }
  return Max ? v > best : v < best;
}

// amax.out / amin.out(self, dim[], keepdim, out): reduces several dims at once.
template <bool Max>
void amax_amin_out(KernelContext& ctx, Args args) {
  const char* op = Max ? "amax.out" : "amin.out";
  if (!check_arg_count(ctx, args, 4, op)) return;
  TensorImpl* in = tensor_arg(ctx, args, 0, op);
  TensorImpl* out = tensor_arg(ctx, args, 3, op);
  IntList dims;
  if (!in || !out || !int_list_arg(ctx, args, 1, &dims, op) || !same_dtype(ctx, op, *in, *out)) return;
  const int rank = in->dim();
  uint32_t mask = 0;
  for (size_t k = 0; k < dims.size; ++k) {
    const int64_t d = normalize_dim(dims[k], rank);
    if (d < 0 || (rank > 0 && (mask & (1u << d)))) {
      ctx.fail(ErrorCode::kInvalidArgument, "%s: dim %lld is out of range or repeated", op, static_cast<long long>(dims[k]));
      return;
    }
    if (rank > 0) mask |= 1u << d;
  }
  if (dims.size == 0) mask = rank == 0 ? 0 : (1u << rank) - 1;
  const bool keepdim = args[2]->tag == Tag::kBool && args[2]->scalar.b;
  std::array<int64_t, kMaxDims> sizes{};
  size_t n = 0;
  for (int d = 0; d < rank; ++d) {
    if (mask & (1u << d)) {
      if (in->size(d) == 0) {
        ctx.fail(ErrorCode::kInvalidArgument, "%s: cannot reduce an empty dimension", op);
        return;
      }
      if (keepdim) sizes[n++] = 1;
    } else {
      sizes[n++] = in->size(d);
    }
  }
  if (!rank_is(ctx, op, *out, n) || !resize_or_fail(ctx, out, {sizes.data(), n}, op)) return;
  const bool ok = dispatch_real_and_bool(in->dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* x = in->data_as<T>();
    T* y = out->data_as<T>();
    // Contiguous strides of the output over the kept dims (reduced dims contribute nothing).
    std::array<int64_t, kMaxDims> out_strides{};
    int64_t acc = 1;
    for (int d = rank - 1; d >= 0; --d) {
      if (mask & (1u << d)) continue;
      out_strides[static_cast<size_t>(d)] = acc;
      acc *= in->size(d);
    }
    // Each output starts from the first element of its group (all reduced coordinates 0).
    for_each_coord(in->sizes(), in->numel(), [&](int64_t i, const std::array<int64_t, kMaxDims>& idx) {
      int64_t o = 0;
      bool first = true;
      for (int d = 0; d < rank; ++d) {
        if (mask & (1u << d)) {
          first = first && idx[static_cast<size_t>(d)] == 0;
        } else {
          o += idx[static_cast<size_t>(d)] * out_strides[static_cast<size_t>(d)];
        }
      }
      if (first || better<Max>(x[i], y[o])) y[o] = x[i];
    });
  });
  if (!ok) ctx.fail(ErrorCode::kNotSupported, "%s: unsupported dtype %s", op, scalar_type_name(in->dtype()).c_str());
}

// max.dim_max / min.dim_min(self, dim, keepdim, values, indices) and argmin.out(self, dim?,
// keepdim, out).
template <bool Max, bool WithValues>
void extremum_dim(KernelContext& ctx, Args args) {
  const char* op = WithValues ? (Max ? "max.dim_max" : "min.dim_min") : "argmin.out";
  const size_t n_args = WithValues ? 5 : 4;
  if (!check_arg_count(ctx, args, n_args, op)) return;
  TensorImpl* in = tensor_arg(ctx, args, 0, op);
  TensorImpl* values = WithValues ? tensor_arg(ctx, args, 3, op) : nullptr;
  TensorImpl* indices = tensor_arg(ctx, args, WithValues ? 4 : 3, op);
  if (!in || !indices || (WithValues && !values) || !require_contiguous(ctx, op, {in, values, indices})) return;
  if (indices->dtype() != ScalarType::kLong || !is_supported_dtype(in->dtype()) ||
      (values != nullptr && values->dtype() != in->dtype())) {
    ctx.fail(ErrorCode::kInvalidArgument, "%s: needs int64 indices and values of self's dtype", op);
    return;
  }
  if (in->numel() == 0) {
    ctx.fail(ErrorCode::kInvalidArgument, "%s: cannot reduce an empty tensor", op);
    return;
  }
  const bool keepdim = args[2]->tag == Tag::kBool && args[2]->scalar.b;
  Around a;
  std::array<int64_t, kMaxDims> sizes{};
  size_t n = 0;
  if (!WithValues && args[1]->is_none()) {
    // argmin over the flattened tensor.
    a.n = in->numel();
    if (keepdim) {
      for (int d = 0; d < in->dim(); ++d) sizes[n++] = 1;
    }
  } else {
    int64_t d = 0;
    if (!around_dim(ctx, *in, *args[1], &a, &d, op)) return;
    for (int i = 0; i < in->dim(); ++i) {
      if (i != d) {
        sizes[n++] = in->size(i);
      } else if (keepdim) {
        sizes[n++] = 1;
      }
    }
  }
  if (!rank_is(ctx, op, *indices, n) || !resize_or_fail(ctx, indices, {sizes.data(), n}, op)) return;
  if (values != nullptr && (!rank_is(ctx, op, *values, n) || !resize_or_fail(ctx, values, {sizes.data(), n}, op))) return;
  dispatch_real_and_bool(in->dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* x = in->data_as<T>();
    int64_t* yi = indices->data_as<int64_t>();
    for (int64_t o = 0; o < a.outer; ++o) {
      for (int64_t i = 0; i < a.inner; ++i) {
        const T* base = x + o * a.n * a.inner + i;
        T best = base[0];
        int64_t best_k = 0;
        for (int64_t k = 1; k < a.n; ++k) {
          if (better<Max>(base[k * a.inner], best)) best = base[k * a.inner], best_k = k;
        }
        yi[o * a.inner + i] = best_k;
        if (values != nullptr) values->data_as<T>()[o * a.inner + i] = best;
      }
    }
  });
}

}  // namespace

void register_shape_kernels(KernelRegistry& r) {
  const uint32_t bytes = kRealBoolDtypes | kHalfDtypes;  // pure copies move any element size
  r.add("aten::stack.out", kernel(stack_out, bytes));
  r.add("aten::transpose_copy.int_out", kernel(transpose_copy_out, bytes));
  r.add("aten::t_copy.out", kernel(t_copy_out, bytes));
  r.add("aten::repeat.out", kernel(repeat_out, bytes));
  r.add("aten::flip.out", kernel(flip_out, bytes));
  r.add("aten::index_select.out", kernel(index_select_out, bytes));
  r.add("aten::roll.out", kernel(roll_out, bytes));
  r.add("aten::pixel_shuffle.out", kernel(pixel_shuffle_out<true>, bytes));
  r.add("aten::pixel_unshuffle.out", kernel(pixel_shuffle_out<false>, bytes));
  r.add("aten::tril.out", kernel(tril_out, bytes));
  r.add("aten::constant_pad_nd.out", half_kernel<constant_pad_nd_out>(kRealBoolDtypes));
  r.add("aten::masked_fill.Scalar_out", half_kernel<masked_fill_out>(kRealBoolDtypes));
  r.add("aten::arange.out", half_kernel<arange_out>(kRealDtypes));
  r.add("aten::arange.start_out", half_kernel<arange_start_out>(kRealDtypes));
  r.add("aten::zeros.out", half_kernel<constant_out<0>>(kRealBoolDtypes));
  r.add("aten::ones.out", half_kernel<constant_out<1>>(kRealBoolDtypes));
  r.add("aten::cumsum.out", half_kernel<cumsum_out>(kRealBoolDtypes));
  r.add("aten::amax.out", half_kernel<amax_amin_out<true>>(kRealBoolDtypes));
  r.add("aten::amin.out", half_kernel<amax_amin_out<false>>(kRealBoolDtypes));
  r.add("aten::max.dim_max", half_kernel<extremum_dim<true, true>>(kRealBoolDtypes));
  r.add("aten::min.dim_min", half_kernel<extremum_dim<false, true>>(kRealBoolDtypes));
  r.add("aten::argmin.out", half_kernel<extremum_dim<false, false>>(kRealBoolDtypes));
}

}  // namespace etscope::runtime::kernels
