// Shape checks and coordinate walks shared by kernels that rearrange, pad, slice or reduce whole
// tensors.
#pragma once

#include <array>
#include <span>

#include "kernels/util/elementwise_util.h"

namespace etscope::runtime::kernels {

inline bool same_dtype(KernelContext& ctx, const char* op, const TensorImpl& in, const TensorImpl& out) {
  if (in.dtype() != out.dtype()) {
    ctx.fail(ErrorCode::kInvalidArgument, "%s: out dtype %s differs from self's %s", op,
             scalar_type_name(out.dtype()).c_str(), scalar_type_name(in.dtype()).c_str());
    return false;
  }
  return require_contiguous(ctx, op, {&in, &out});
}

inline bool rank_is(KernelContext& ctx, const char* op, const TensorImpl& out, size_t rank) {
  if (out.dim() != static_cast<int>(rank)) {
    ctx.fail(ErrorCode::kInvalidArgument, "%s: output must have rank %zu, has %d", op, rank, out.dim());
    return false;
  }
  return true;
}

// Visits every element of a contiguous tensor of `sizes` in order, keeping its coordinates, and
// calls f(linear_index, coords).
template <typename F>
inline void for_each_coord(std::span<const int64_t> sizes, int64_t numel, F f) {
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
inline std::array<int64_t, kMaxDims> strides_of(const TensorImpl& t) {
  std::array<int64_t, kMaxDims> s{};
  int64_t acc = 1;
  for (int d = t.dim() - 1; d >= 0; --d) {
    s[static_cast<size_t>(d)] = acc;
    acc *= t.size(d);
  }
  return s;
}

}  // namespace etscope::runtime::kernels
