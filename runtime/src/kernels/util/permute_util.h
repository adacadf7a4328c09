// A dense copy of a permuted view: the one transpose under the portable permute and transpose
// kernels and the XNNPACK delegate's Transpose node.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>

namespace etscope::runtime::kernels {

/// dst (dense, row-major, sizes[0..rank)) = the view of src whose element (i_0, ..., i_rank-1)
/// is src[sum_d i_d * strides[d]]: a permutation when the strides are a dense tensor's, reordered.
/// Elements are moved as E (an unsigned integer of their width, or float). rank <= kMaxRank.
///
/// When the output's innermost dimension is not the input's, a plain walk reads each element from
/// another cache line. The copy instead goes in tiles of the output's innermost dimension and the
/// dimension the input holds most closely: a tile reads whole lines of the input (64 bytes along
/// that dimension) from 8 places, so every line it brings in is used in full, and 8 lines stay in
/// one 8-way L1 set even when the stride is a multiple of 4 KiB.
template <typename E, int kMaxRank>
void copy_permuted(const E* __restrict src, E* __restrict dst, int rank, const int64_t* sizes, const int64_t* strides) {
  int64_t count = 1;
  for (int d = 0; d < rank; ++d) count *= sizes[d];
  if (count == 0) return;
  if (rank == 0) {
    dst[0] = src[0];
    return;
  }
  const int b = rank - 1;  // output innermost
  // The tile's other dimension: the one (not b, more than one element) with the smallest stride.
  int a = -1;
  for (int d = 0; d < b; ++d) {
    if (sizes[d] > 1 && (a < 0 || strides[d] < strides[a])) a = d;
  }
  const bool runs = strides[b] == 1 || sizes[b] == 1 || a < 0 || strides[a] > strides[b];
  int64_t ostride[kMaxRank];
  {
    int64_t acc = 1;
    for (int d = rank - 1; d >= 0; --d) {
      ostride[d] = acc;
      acc *= sizes[d];
    }
  }
  // Odometer over the dimensions left outside the copy's inner block: b alone for runs, a and b
  // for tiles.
  int64_t counter[kMaxRank] = {};
  int64_t in_base = 0, out_base = 0;
  auto next = [&]() {
    for (int d = b - 1; d >= 0; --d) {
      if (!runs && d == a) continue;
      in_base += strides[d];
      out_base += ostride[d];
      if (++counter[d] < sizes[d]) return true;
      in_base -= strides[d] * sizes[d];
      out_base -= ostride[d] * sizes[d];
      counter[d] = 0;
    }
    return false;
  };
  const int64_t nj = sizes[b], sj = strides[b];
  if (runs) {
    do {
      if (sj == 1) {
        std::memcpy(dst + out_base, src + in_base, static_cast<size_t>(nj) * sizeof(E));
      } else {
        for (int64_t j = 0; j < nj; ++j) dst[out_base + j] = src[in_base + j * sj];
      }
    } while (next());
    return;
  }
  constexpr int64_t kLine = std::max<int64_t>(1, 64 / static_cast<int64_t>(sizeof(E)));
  constexpr int64_t kLines = 8;
  const int64_t ni = sizes[a], si = strides[a], oi = ostride[a];
  do {
    const E* s = src + in_base;
    E* o = dst + out_base;
    for (int64_t j0 = 0; j0 < nj; j0 += kLines) {
      const int64_t j1 = std::min(nj, j0 + kLines);
      for (int64_t i0 = 0; i0 < ni; i0 += kLine) {
        const int64_t i1 = std::min(ni, i0 + kLine);
        for (int64_t j = j0; j < j1; ++j) {
          for (int64_t i = i0; i < i1; ++i) o[i * oi + j] = s[i * si + j * sj];
        }
      }
    }
  } while (next());
}

}  // namespace etscope::runtime::kernels
