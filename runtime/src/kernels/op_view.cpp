// view_copy, permute_copy.
#include <algorithm>

#include "kernels/register.h"
#include "kernels/util/kernel_util.h"

namespace etscope::rt::kernels {
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
    } else {
      known *= size[i];
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
      for (int64_t i = 0; i < rows; ++i) std::memcpy(d + i * cols, src + base + i * sa, static_cast<size_t>(cols) * sizeof(E));
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

}  // namespace

void register_view_kernels(KernelRegistry& r) {
  r.add("aten::view_copy.out", kernel(view_copy_out, kRealBoolDtypes));
  r.add("aten::permute_copy.out", kernel(permute_copy_out, kRealBoolDtypes));
}

}  // namespace etscope::rt::kernels
