// A dense copy of a permuted view: the one transpose under the portable permute and transpose
// kernels and the XNNPACK delegate's Transpose node.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <type_traits>
#if defined(__AVX512F__) || defined(__SSE2__)
#include <immintrin.h>
#endif

namespace etscope::runtime::kernels {

#if defined(__AVX512F__)
namespace permute_detail {

/// A 16 x 16 block of 4-byte elements transposed in registers: rows of `s` (16 contiguous
/// elements each, `ss` apart) become columns of `d` (rows `ds` apart). Every load and store is one
/// whole 64-byte line, whatever the strides.
inline void transpose16x16(const void* s, int64_t ss, void* d, int64_t ds) {
  const float* src = static_cast<const float*>(s);
  float* dst = static_cast<float*>(d);
  // Zero-masking forms with every lane selected: GCC 12's plain forms start from an "undefined"
  // register that -Wmaybe-uninitialized rejects.
  constexpr __mmask16 kAll16 = 0xffff;
  constexpr __mmask8 kAll8 = 0xff;
  __m512 r[16], t[16];
  for (int i = 0; i < 16; ++i) r[i] = _mm512_loadu_ps(src + i * ss);
  // Pairs of rows interleaved by element, then by pairs of elements: r[4q + k] holds element k
  // of rows 4q..4q+3 in each 128-bit lane.
  for (int i = 0; i < 16; i += 2) {
    t[i] = _mm512_maskz_unpacklo_ps(kAll16, r[i], r[i + 1]);
    t[i + 1] = _mm512_maskz_unpackhi_ps(kAll16, r[i], r[i + 1]);
  }
  for (int i = 0; i < 16; i += 4) {
    const __m512d a = _mm512_castps_pd(t[i]), b = _mm512_castps_pd(t[i + 1]);
    const __m512d c = _mm512_castps_pd(t[i + 2]), e = _mm512_castps_pd(t[i + 3]);
    r[i] = _mm512_castpd_ps(_mm512_maskz_unpacklo_pd(kAll8, a, c));
    r[i + 1] = _mm512_castpd_ps(_mm512_maskz_unpackhi_pd(kAll8, a, c));
    r[i + 2] = _mm512_castpd_ps(_mm512_maskz_unpacklo_pd(kAll8, b, e));
    r[i + 3] = _mm512_castpd_ps(_mm512_maskz_unpackhi_pd(kAll8, b, e));
  }
  // Then 128-bit lanes across groups of rows.
  for (int q = 0; q < 16; q += 8) {
    for (int k = 0; k < 4; ++k) {
      t[q + k] = _mm512_maskz_shuffle_f32x4(kAll16, r[q + k], r[q + 4 + k], 0x88);
      t[q + 4 + k] = _mm512_maskz_shuffle_f32x4(kAll16, r[q + k], r[q + 4 + k], 0xdd);
    }
  }
  for (int k = 0; k < 8; ++k) {
    _mm512_storeu_ps(dst + k * ds, _mm512_maskz_shuffle_f32x4(kAll16, t[k], t[8 + k], 0x88));
    _mm512_storeu_ps(dst + (8 + k) * ds, _mm512_maskz_shuffle_f32x4(kAll16, t[k], t[8 + k], 0xdd));
  }
}

// The lanes of three vectors interleaved into 48 consecutive elements (element 3 i + j is lane i
// of vector j), and back: an image's three channels into its pixels and the reverse. Lane l of
// output vector v takes lane kPick[v][l] of the vector kFrom[v][l] (constants built once).
struct Interleave3 {
  __m512i pick[3];
  __mmask16 from[3][3];  // [v][j]: the lanes of output vector v that vector j fills
  Interleave3() {
    for (int v = 0; v < 3; ++v) {
      alignas(64) int32_t idx[16];
      for (int j = 0; j < 3; ++j) from[v][j] = 0;
      for (int l = 0; l < 16; ++l) {
        const int p = 16 * v + l;
        idx[l] = p / 3;
        from[v][p % 3] = static_cast<__mmask16>(from[v][p % 3] | (1u << l));
      }
      pick[v] = _mm512_load_si512(idx);
    }
  }
};

inline const Interleave3& interleave3() {
  static const Interleave3 k;
  return k;
}

/// d[3 i + j] = row j's element i for 16 elements of 3 rows (`ss` apart) of 4-byte elements.
inline void interleave3x16(const void* s, int64_t ss, void* d) {
  const float* src = static_cast<const float*>(s);
  float* dst = static_cast<float*>(d);
  const Interleave3& k = interleave3();
  const __m512 x0 = _mm512_loadu_ps(src), x1 = _mm512_loadu_ps(src + ss), x2 = _mm512_loadu_ps(src + 2 * ss);
  for (int v = 0; v < 3; ++v) {
    __m512 o = _mm512_maskz_permutexvar_ps(k.from[v][0], k.pick[v], x0);
    o = _mm512_mask_permutexvar_ps(o, k.from[v][1], k.pick[v], x1);
    o = _mm512_mask_permutexvar_ps(o, k.from[v][2], k.pick[v], x2);
    _mm512_storeu_ps(dst + 16 * v, o);
  }
}

/// d[2 i + j] = row j's element i for 16 elements of 2 rows (`ss` apart) of 4-byte elements (a
/// pixel shuffle's interleave).
inline void interleave2x16(const void* s, int64_t ss, void* d) {
  const float* src = static_cast<const float*>(s);
  float* dst = static_cast<float*>(d);
  const __m512 x0 = _mm512_loadu_ps(src), x1 = _mm512_loadu_ps(src + ss);
  const __m512i lo = _mm512_set_epi32(23, 7, 22, 6, 21, 5, 20, 4, 19, 3, 18, 2, 17, 1, 16, 0);
  const __m512i hi = _mm512_set_epi32(31, 15, 30, 14, 29, 13, 28, 12, 27, 11, 26, 10, 25, 9, 24, 8);
  _mm512_storeu_ps(dst, _mm512_permutex2var_ps(x0, lo, x1));
  _mm512_storeu_ps(dst + 16, _mm512_permutex2var_ps(x0, hi, x1));
}

/// d[4 i + j] = row j's element i for 16 elements of 4 rows (`ss` apart) of 4-byte elements:
/// rows 0 and 1 and rows 2 and 3 interleaved, then their pairs.
inline void interleave4x16(const void* s, int64_t ss, void* d) {
  const float* src = static_cast<const float*>(s);
  float* dst = static_cast<float*>(d);
  const __m512 x0 = _mm512_loadu_ps(src), x1 = _mm512_loadu_ps(src + ss), x2 = _mm512_loadu_ps(src + 2 * ss), x3 = _mm512_loadu_ps(src + 3 * ss);
  const __m512i lo = _mm512_set_epi32(23, 7, 22, 6, 21, 5, 20, 4, 19, 3, 18, 2, 17, 1, 16, 0);
  const __m512i hi = _mm512_set_epi32(31, 15, 30, 14, 29, 13, 28, 12, 27, 11, 26, 10, 25, 9, 24, 8);
  const __m512d p01[2] = {_mm512_castps_pd(_mm512_permutex2var_ps(x0, lo, x1)), _mm512_castps_pd(_mm512_permutex2var_ps(x0, hi, x1))};
  const __m512d p23[2] = {_mm512_castps_pd(_mm512_permutex2var_ps(x2, lo, x3)), _mm512_castps_pd(_mm512_permutex2var_ps(x2, hi, x3))};
  const __m512i plo = _mm512_set_epi64(11, 3, 10, 2, 9, 1, 8, 0), phi = _mm512_set_epi64(15, 7, 14, 6, 13, 5, 12, 4);
  for (int h = 0; h < 2; ++h) {
    _mm512_storeu_ps(dst + 32 * h, _mm512_castpd_ps(_mm512_permutex2var_pd(p01[h], plo, p23[h])));
    _mm512_storeu_ps(dst + 32 * h + 16, _mm512_castpd_ps(_mm512_permutex2var_pd(p01[h], phi, p23[h])));
  }
}

/// Row j's element i = s[3 i + j] for 16 elements of 3 rows (`ds` apart) of 4-byte elements.
inline void deinterleave3x16(const void* s, void* d, int64_t ds) {
  const float* src = static_cast<const float*>(s);
  float* dst = static_cast<float*>(d);
  const __m512 y0 = _mm512_loadu_ps(src), y1 = _mm512_loadu_ps(src + 16), y2 = _mm512_loadu_ps(src + 32);
  for (int j = 0; j < 3; ++j) {
    // Lane i reads element 3 i + j: from y0 and y1 below 32, from y2 from 32 on.
    alignas(64) int32_t idx[16];
    __mmask16 high = 0;
    for (int i = 0; i < 16; ++i) {
      idx[i] = (3 * i + j) & 31;
      if (3 * i + j >= 32) high = static_cast<__mmask16>(high | (1u << i));
    }
    const __m512i at = _mm512_load_si512(idx);
    const __m512 r = _mm512_maskz_permutex2var_ps(static_cast<__mmask16>(~high), y0, at, y1);
    _mm512_storeu_ps(dst + j * ds, _mm512_mask_permutexvar_ps(r, high, at, y2));
  }
}

}  // namespace permute_detail
#endif

#if defined(__SSE2__)
namespace permute_detail {

/// A 16 x 16 block of bytes transposed in registers: rows of `s` (16 contiguous bytes each, `ss`
/// apart) become columns of `d` (rows `ds` apart). Four rounds of interleaving row i with row
/// i + 8 (each round a perfect shuffle of the block's 256 bytes) leave row i holding column i.
inline void transpose16x16_bytes(const void* s, int64_t ss, void* d, int64_t ds) {
  const char* src = static_cast<const char*>(s);
  char* dst = static_cast<char*>(d);
  __m128i r[16], t[16];
  for (int i = 0; i < 16; ++i) r[i] = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i * ss));
  for (int round = 0; round < 4; ++round) {
    for (int i = 0; i < 8; ++i) {
      t[2 * i] = _mm_unpacklo_epi8(r[i], r[i + 8]);
      t[2 * i + 1] = _mm_unpackhi_epi8(r[i], r[i + 8]);
    }
    for (int i = 0; i < 16; ++i) r[i] = t[i];
  }
  for (int i = 0; i < 16; ++i) _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + i * ds), r[i]);
}

}  // namespace permute_detail
#endif

/// dst (dense, row-major, in_sizes[0..rank)) = the view of src whose element (i_0, ..., i_rank-1)
/// is src[sum_d i_d * in_strides[d]]: a permutation when the strides are a dense tensor's, reordered.
/// Elements are moved as E (an unsigned integer of their width, or float). rank <= kMaxRank.
///
/// When the output's innermost dimension is not the input's, a plain walk reads each element from
/// another cache line. The copy instead goes in tiles of the output's innermost dimension and the
/// dimension the input holds most closely: a tile reads whole lines of the input (64 bytes along
/// that dimension) from 8 places, so every line it brings in is used in full, and 8 lines stay in
/// one 8-way L1 set even when the stride is a multiple of 4 KiB.
template <typename E, int kMaxRank>
void copy_permuted(const E* __restrict src, E* __restrict dst, int rank, const int64_t* in_sizes, const int64_t* in_strides) {
  int64_t count = 1;
  for (int d = 0; d < rank; ++d) count *= in_sizes[d];
  if (count == 0) return;
  // The same copy over fewer, longer dimensions: dimensions of one element dropped, and two
  // neighbours of the output merged when they are neighbours in the input too (a squeeze-excite
  // block's [1, 1, 1, C] -> [1, C, 1, 1] is one run of C elements).
  int64_t sizes[kMaxRank], strides[kMaxRank];
  {
    int r = 0;
    for (int d = 0; d < rank; ++d) {
      if (in_sizes[d] == 1) continue;
      if (r > 0 && strides[r - 1] == in_strides[d] * in_sizes[d]) {
        sizes[r - 1] *= in_sizes[d];
        strides[r - 1] = in_strides[d];
      } else {
        sizes[r] = in_sizes[d];
        strides[r++] = in_strides[d];
      }
    }
    rank = r;
  }
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
  // Input contiguous along a, output along b: whole 16 x 16 blocks in registers (4-byte elements
  // with AVX-512, bytes with SSE2), the ragged edges element by element.
  auto blocks16 = [&](auto transpose16x16) {
    const int64_t ni16 = ni / 16 * 16, nj16 = nj / 16 * 16;
    do {
      const E* s = src + in_base;
      E* o = dst + out_base;
      if (sizeof(E) < 4 && nj16 <= 256) {
        // Short output rows of small elements (an int8 image's 64 channels): a block writes 16
        // bytes of a 64-byte line, so the output goes in bands of 256 rows, each finished (every
        // line whole) before the next, its input read 16 rows at a time along 256 elements (the
        // other order wrote each line in four visits over the whole output, evicted in between;
        // a band's blocks one by one read all nj input rows at once, more streams than the
        // prefetcher follows).
        for (int64_t band = 0; band < ni16; band += 256) {
          const int64_t band_end = std::min(ni16, band + 256);
          for (int64_t j0 = 0; j0 < nj16; j0 += 16) {
            for (int64_t i0 = band; i0 < band_end; i0 += 16) transpose16x16(s + j0 * sj + i0, sj, o + i0 * oi + j0, oi);
          }
        }
      } else if (sizeof(E) < 4) {
        // Long output rows of small elements: bands of 64 bytes of every output row, each line
        // written whole before the next band (16 bytes a visit, with output rows a multiple of
        // 1 KiB apart, kept 64 lines in four cache sets: NHWC -> NCHW of an int8 image at 4.6x
        // a memcpy's time, 1.3x now). A band's input is a few KiB read once per block row.
        constexpr int64_t kBand = 64 / static_cast<int64_t>(sizeof(E));
        for (int64_t band = 0; band < nj16; band += kBand) {
          const int64_t band_end = std::min(nj16, band + kBand);
          for (int64_t i0 = 0; i0 < ni16; i0 += 16) {
            for (int64_t j0 = band; j0 < band_end; j0 += 16) transpose16x16(s + j0 * sj + i0, sj, o + i0 * oi + j0, oi);
          }
        }
      } else {
        for (int64_t j0 = 0; j0 < nj16; j0 += 16) {
          for (int64_t i0 = 0; i0 < ni16; i0 += 16) transpose16x16(s + j0 * sj + i0, sj, o + i0 * oi + j0, oi);
        }
      }
      for (int64_t i = 0; i < ni; ++i) {
        for (int64_t j = i < ni16 ? nj16 : 0; j < nj; ++j) o[i * oi + j] = s[i + j * sj];
      }
    } while (next());
  };
  // The nj rows of the input (sj apart) into runs of nj in the output (oi == nj): 16 elements of
  // each at a time by block16(from, to), the ragged ends element by element.
  auto interleaved = [&](auto block16) {
    do {
      const E* s = src + in_base;
      E* o = dst + out_base;
      const int64_t ni16 = ni / 16 * 16;
      for (int64_t i0 = 0; i0 < ni16; i0 += 16) block16(s + i0, o + i0 * nj);
      for (int64_t i = ni16; i < ni; ++i) {
        for (int64_t j = 0; j < nj; ++j) o[i * nj + j] = s[i + j * sj];
      }
    } while (next());
  };
#if defined(__AVX512F__)
  if constexpr (sizeof(E) == 4) {
    // Three rows into runs of three (NCHW -> NHWC of an RGB image) and back; two or four rows
    // into runs of two or four (a pixel shuffle's last dimensions).
    if (si == 1 && nj == 3 && oi == 3) return interleaved([&](const E* f, E* t) { permute_detail::interleave3x16(f, sj, t); });
    if (si == 1 && nj == 2 && oi == 2) return interleaved([&](const E* f, E* t) { permute_detail::interleave2x16(f, sj, t); });
    if (si == 1 && nj == 4 && oi == 4) return interleaved([&](const E* f, E* t) { permute_detail::interleave4x16(f, sj, t); });
    if (si == 1 && ni == 3 && sj == 3) {
      do {
        const E* s = src + in_base;
        E* o = dst + out_base;
        const int64_t nj16 = nj / 16 * 16;
        for (int64_t j0 = 0; j0 < nj16; j0 += 16) permute_detail::deinterleave3x16(s + j0 * 3, o + j0, oi);
        for (int64_t j = nj16; j < nj; ++j) {
          for (int64_t i = 0; i < 3; ++i) o[i * oi + j] = s[i + j * 3];
        }
      } while (next());
      return;
    }
    if (si == 1) return blocks16(permute_detail::transpose16x16);
  }
#endif
#if defined(__SSE2__)
  if constexpr (sizeof(E) == 1) {
    // Two or four rows of bytes into runs of two or four (an int8 pixel shuffle).
    if (si == 1 && (nj == 2 || nj == 4) && oi == nj) {
      return interleaved([&](const E* f, E* t) {
        auto row = [&](int64_t j) { return _mm_loadu_si128(reinterpret_cast<const __m128i*>(f + j * sj)); };
        auto put = [&](int k, __m128i v) { _mm_storeu_si128(reinterpret_cast<__m128i*>(t + 16 * k), v); };
        const __m128i r0 = row(0), r1 = row(1);
        const __m128i p0 = _mm_unpacklo_epi8(r0, r1), p1 = _mm_unpackhi_epi8(r0, r1);
        if (nj == 2) {
          put(0, p0);
          put(1, p1);
          return;
        }
        const __m128i r2 = row(2), r3 = row(3);
        const __m128i q0 = _mm_unpacklo_epi8(r2, r3), q1 = _mm_unpackhi_epi8(r2, r3);
        put(0, _mm_unpacklo_epi16(p0, q0));
        put(1, _mm_unpackhi_epi16(p0, q0));
        put(2, _mm_unpacklo_epi16(p1, q1));
        put(3, _mm_unpackhi_epi16(p1, q1));
      });
    }
#if defined(__SSSE3__)
    // Three rows of bytes into runs of three (NCHW -> NHWC of an int8 RGB image): output vector v
    // takes byte 16 v + l from row (16 v + l) % 3, element (16 v + l) / 3, by byte shuffles.
    if (si == 1 && nj == 3 && oi == 3) {
      alignas(16) static constexpr auto kPick = [] {
        std::array<std::array<std::array<int8_t, 16>, 3>, 3> pick{};  // [v][row][lane]
        for (int v = 0; v < 3; ++v) {
          for (int j = 0; j < 3; ++j) {
            for (int l = 0; l < 16; ++l) pick[v][j][l] = (16 * v + l) % 3 == j ? static_cast<int8_t>((16 * v + l) / 3) : int8_t{-128};
          }
        }
        return pick;
      }();
      return interleaved([&](const E* f, E* t) {
        __m128i r[3];
        for (int j = 0; j < 3; ++j) r[j] = _mm_loadu_si128(reinterpret_cast<const __m128i*>(f + j * sj));
        for (int v = 0; v < 3; ++v) {
          __m128i o = _mm_setzero_si128();
          for (int j = 0; j < 3; ++j) o = _mm_or_si128(o, _mm_shuffle_epi8(r[j], _mm_load_si128(reinterpret_cast<const __m128i*>(kPick[v][j].data()))));
          _mm_storeu_si128(reinterpret_cast<__m128i*>(t + 16 * v), o);
        }
      });
    }
#endif
    if (si == 1) return blocks16(permute_detail::transpose16x16_bytes);
  }
#endif
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
