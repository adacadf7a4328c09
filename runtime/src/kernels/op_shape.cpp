// Kernels that build a new arrangement of the elements: cat, stack, repeat, repeat_interleave,
// flip, roll, pixel_shuffle / pixel_unshuffle and tril.
//
// Copies move whole elements by bytes (any dtype of the registered sizes); kernels that look at
// values dispatch on the real and bool dtypes.
#include <cmath>
#include <cstring>
#include <limits>

#include "kernels/register.h"
#include "kernels/util/half_via_float.h"
#include "kernels/util/elementwise_util.h"
#include "kernels/util/shape_util.h"
#include "kernels/util/copy_util.h"

namespace etscope::runtime::kernels {
namespace {

// cat.out(tensors, dim, out): 1-D empty tensors are skipped, as in ATen.
void cat_out(KernelContext& ctx, Args args) {
  const char* op = "cat.out";
  if (!check_arg_count(ctx, args, 3, op)) return;
  TensorImpl* out = tensor_arg(ctx, args, 2, op);
  if (!out) return;
  if (args[0]->tag != Tag::kTensorList || args[1]->tag != Tag::kInt) {
    ctx.fail(ErrorCode::kInvalidArgument, "%s: expected a tensor list and an int dim", op);
    return;
  }
  const int rank = out->dim();
  const int64_t d = normalize_dim(args[1]->scalar.i, rank);
  if (d < 0 || rank == 0) {
    ctx.fail(ErrorCode::kInvalidArgument, "%s: dim is out of range", op);
    return;
  }
  std::array<int64_t, kMaxDims> sizes{};
  bool first = true;
  for (const TensorImpl* t : args[0]->tensor_list) {
    if (t == nullptr || (t->dim() == 1 && t->numel() == 0)) continue;
    if (t->dim() != rank || !t->contiguous() || !is_elementwise_dtype(t->dtype())) {
      ctx.fail(ErrorCode::kInvalidArgument, "%s: inputs must be contiguous with the output's rank", op);
      return;
    }
    for (int i = 0; i < rank; ++i) {
      if (i == d) continue;
      if (!first && sizes[static_cast<size_t>(i)] != t->size(i)) {
        ctx.fail(ErrorCode::kInvalidArgument, "%s: sizes differ outside dimension %lld", op, static_cast<long long>(d));
        return;
      }
      sizes[static_cast<size_t>(i)] = t->size(i);
    }
    sizes[static_cast<size_t>(d)] = (first ? 0 : sizes[static_cast<size_t>(d)]) + t->size(static_cast<int>(d));
    first = false;
  }
  if (first) {
    for (int i = 0; i < rank; ++i) sizes[static_cast<size_t>(i)] = out->size(i);
    sizes[static_cast<size_t>(d)] = 0;
  }
  if (!require_contiguous(ctx, op, {out}) || !supported(ctx, op, {out}) ||
      !resize_or_fail(ctx, out, {sizes.data(), static_cast<size_t>(rank)}, op)) {
    return;
  }
  int64_t outer = 1, inner = 1;
  for (int i = 0; i < rank; ++i) {
    if (i < d) outer *= sizes[static_cast<size_t>(i)];
    if (i > d) inner *= sizes[static_cast<size_t>(i)];
  }
  const int64_t out_row = sizes[static_cast<size_t>(d)] * inner;
  int64_t col = 0;
  for (const TensorImpl* t : args[0]->tensor_list) {
    if (t == nullptr || (t->dim() == 1 && t->numel() == 0)) continue;
    const int64_t row = t->size(static_cast<int>(d)) * inner;
    for (int64_t o = 0; o < outer; ++o) {
      if (t->dtype() == out->dtype()) {
        const size_t es = out->element_size();
        std::memmove(static_cast<uint8_t*>(out->data()) + static_cast<size_t>(o * out_row + col) * es,
                    static_cast<const uint8_t*>(t->data()) + static_cast<size_t>(o * row) * es,
                    static_cast<size_t>(row) * es);
      } else {
        for (int64_t i = 0; i < row; ++i) {
          store_from<double>(out->dtype(), out->data(), o * out_row + col + i,
                             load_as<double>(t->dtype(), t->data(), o * row + i));
        }
      }
    }
    col += row;
  }
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

}  // namespace

void register_shape_kernels(KernelRegistry& r) {
  const uint32_t bytes = kRealBoolDtypes | kHalfDtypes;  // pure copies move any element size
  r.add("aten::cat.out", kernel(cat_out, kRealBoolDtypes | kHalfDtypes));
  r.add("aten::stack.out", kernel(stack_out, bytes));
  r.add("aten::repeat.out", kernel(repeat_out, bytes));
  r.add("aten::repeat_interleave.Tensor_out", kernel(repeat_interleave_tensor_out, kIntDtypes));
  r.add("aten::flip.out", kernel(flip_out, bytes));
  r.add("aten::roll.out", kernel(roll_out, bytes));
  r.add("aten::pixel_shuffle.out", kernel(pixel_shuffle_out<true>, bytes));
  r.add("aten::pixel_unshuffle.out", kernel(pixel_shuffle_out<false>, bytes));
  r.add("aten::tril.out", kernel(tril_out, bytes));
}

}  // namespace etscope::runtime::kernels
