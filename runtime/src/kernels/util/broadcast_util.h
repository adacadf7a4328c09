// Broadcasting (NumPy rules, as ATen applies them) for elementwise kernels.
#pragma once

#include <array>
#include <cstdint>
#include <span>

#include "etscope/core/tensor.h"

namespace etscope::runtime::kernels {

/// The broadcast shape of `a` and `b`; false when they are incompatible.
inline bool broadcast_shape(std::span<const int64_t> a, std::span<const int64_t> b,
                            std::array<int64_t, kMaxDims>* out, int* out_dim) {
  const size_t n = std::max(a.size(), b.size());
  if (n > static_cast<size_t>(kMaxDims)) return false;
  for (size_t i = 0; i < n; ++i) {
    const int64_t da = i < n - a.size() ? 1 : a[i - (n - a.size())];
    const int64_t db = i < n - b.size() ? 1 : b[i - (n - b.size())];
    if (da != db && da != 1 && db != 1) return false;
    (*out)[i] = da == 1 ? db : da;
  }
  *out_dim = static_cast<int>(n);
  return true;
}

/// Walks a contiguous output of shape `out_sizes` and yields, for each linear output index, the
/// linear index into an input of shape `in_sizes` (contiguous) that broadcasts to it.
class BroadcastIndex {
 public:
  BroadcastIndex(std::span<const int64_t> out_sizes, std::span<const int64_t> in_sizes) : dim_(static_cast<int>(out_sizes.size())) {
    const size_t offset = out_sizes.size() - in_sizes.size();
    int64_t stride = 1;
    for (int d = dim_ - 1; d >= 0; --d) {
      sizes_[d] = out_sizes[static_cast<size_t>(d)];
      const size_t id = static_cast<size_t>(d);
      const int64_t in_size = id < offset ? 1 : in_sizes[id - offset];
      strides_[d] = in_size == 1 ? 0 : stride;
      stride *= in_size;
    }
  }
  /// Input index for the current position; then advance() moves to the next output element.
  int64_t index() const { return index_; }
  void advance() {
    for (int d = dim_ - 1; d >= 0; --d) {
      index_ += strides_[d];
      if (++counter_[d] < sizes_[d]) return;
      index_ -= strides_[d] * counter_[d];
      counter_[d] = 0;
    }
  }

 private:
  int dim_;
  int64_t index_ = 0;
  std::array<int64_t, kMaxDims> sizes_{};
  std::array<int64_t, kMaxDims> strides_{};
  std::array<int64_t, kMaxDims> counter_{};
};

}  // namespace etscope::runtime::kernels
