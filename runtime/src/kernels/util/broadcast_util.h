// Broadcasting (NumPy rules, as ATen applies them) for elementwise kernels.
#pragma once

#include <algorithm>
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

/// Per output dimension, the element stride of a contiguous input of shape `in_sizes` broadcast to
/// `out_sizes`: 0 along the dimensions it is repeated over.
inline void broadcast_strides(std::span<const int64_t> out_sizes, std::span<const int64_t> in_sizes, int64_t* strides) {
  const size_t offset = out_sizes.size() - in_sizes.size();
  int64_t stride = 1;
  for (size_t d = out_sizes.size(); d-- > 0;) {
    const int64_t in_size = d < offset ? 1 : in_sizes[d - offset];
    strides[d] = in_size == 1 ? 0 : stride;
    stride *= in_size;
  }
}

/// Walks a contiguous output of shape `out_sizes` and yields, for each linear output index, the
/// linear index into an input of shape `in_sizes` (contiguous) that broadcasts to it.
class BroadcastIndex {
 public:
  BroadcastIndex(std::span<const int64_t> out_sizes, std::span<const int64_t> in_sizes) : dim_(static_cast<int>(out_sizes.size())) {
    std::copy(out_sizes.begin(), out_sizes.end(), sizes_.begin());
    broadcast_strides(out_sizes, in_sizes, strides_.data());
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

/// Walks a contiguous output of shape `out_sizes` in runs: stretches of output elements along
/// which each of the N inputs (contiguous, broadcasting to the output) either steps by one
/// element or stays on one. Trailing dimensions merge while every input keeps its manner, so an
/// input broadcast over H and W of an N x C x H x W output gives runs of H * W.
/// fn(out_offset, length, in_offsets, in_steps): in_steps[k] is 1 or 0.
template <size_t N, typename Fn>
void for_each_broadcast_run(std::span<const int64_t> out_sizes, const std::array<std::span<const int64_t>, N>& in_sizes,
                            Fn&& fn) {
  const int dim = static_cast<int>(out_sizes.size());
  int64_t count = 1;
  for (int64_t s : out_sizes) count *= s;
  std::array<int64_t, N> off{}, step{};
  if (count == 0) return;
  if (dim == 0) {
    fn(int64_t{0}, int64_t{1}, off, step);
    return;
  }
  std::array<std::array<int64_t, kMaxDims>, N> strides{};
  for (size_t k = 0; k < N; ++k) broadcast_strides(out_sizes, in_sizes[k], strides[k].data());
  // The run: the innermost dimension, then outer ones while each input continues as it started.
  int inner = dim - 1;
  int64_t run = out_sizes[static_cast<size_t>(inner)];
  for (size_t k = 0; k < N; ++k) step[k] = strides[k][static_cast<size_t>(inner)] != 0 || out_sizes.back() == 1 ? 1 : 0;
  while (inner > 0) {
    const size_t d = static_cast<size_t>(inner - 1);
    bool merges = true;
    for (size_t k = 0; k < N; ++k) merges = merges && strides[k][d] == (step[k] ? run : 0);
    if (!merges) break;
    run *= out_sizes[d];
    --inner;
  }
  std::array<int64_t, kMaxDims> counter{};
  int64_t out_off = 0;
  for (;;) {
    fn(out_off, run, off, step);
    out_off += run;
    int d = inner - 1;
    for (; d >= 0; --d) {
      const size_t id = static_cast<size_t>(d);
      for (size_t k = 0; k < N; ++k) off[k] += strides[k][id];
      if (++counter[id] < out_sizes[id]) break;
      for (size_t k = 0; k < N; ++k) off[k] -= strides[k][id] * counter[id];
      counter[id] = 0;
    }
    if (d < 0) return;
  }
}

}  // namespace etscope::runtime::kernels
