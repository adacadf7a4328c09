// The int8 GEMM's kernel (int8_gemm.h): blocks of up to 4 rows by up to 4 tiles of 16 outputs,
// requantized as they leave the registers.
#include "xnnpack/int8_gemm.h"
#include "matrix_tiles.h"
#include "kernels/util/lanes.h"
#include "xnnpack/vnni.h"

#include <cmath>
#include <cstring>
#include <type_traits>
#if defined(__AVX512VNNI__) && defined(__AVX512BW__)
#include <immintrin.h>
#endif

namespace etscope::runtime::xnnpack {
namespace {

#if defined(__AVX512VNNI__) && defined(__AVX512BW__)
// The requantized form: rows r0 .. r0 + R - 1 of x by NT tiles starting at output `first`, sums
// started from the offsets, requantized from the registers. Tiles past the packing's n outputs
// are masked off. With PF, each group of 4 inputs also fetches the cache line at prefetch + 64
// bytes per group into the second-level cache: a block fetches one tile's packing.
template <int R, int NT, typename Out, bool PF = false>
void requantized_block(const Int8Rows& x, int64_t r0, const uint8_t* w, int64_t tile_bytes, int64_t kpad, int64_t first, int64_t n,
                       const Int8Requant& rq, Out* dst, int64_t dst_stride, const uint8_t* prefetch = nullptr) {
  __mmask16 mask[NT];
  __m512i sum[R][NT];
  for (int t = 0; t < NT; ++t) {
    const int64_t valid = n - (first + t * kInt8Tile);
    mask[t] = kernels::first_lanes(valid);
    const __m512i start = _mm512_maskz_loadu_epi32(mask[t], rq.offset + first + t * kInt8Tile);
    for (int r = 0; r < R; ++r) sum[r][t] = start;
  }
  const uint8_t* row[R];
  x.rows(r0, R, row);
  const int64_t run = kpad / x.taps;
  const uint8_t* wg = w;  // the filter's groups in order: run after run
  for (int64_t j = 0; j < x.taps; ++j) {
    const int64_t off = x.tap_offset != nullptr ? x.tap_offset[j] : 0;
    for (int64_t c = off; c < off + run; c += 4, wg += kInt8Tile * 4) {
      if constexpr (PF) _mm_prefetch(reinterpret_cast<const char*>(prefetch + (wg - w)), _MM_HINT_T1);
      __m512i f[NT];
      for (int t = 0; t < NT; ++t) f[t] = _mm512_loadu_si512(wg + t * tile_bytes);
      for (int r = 0; r < R; ++r) {
        uint32_t v;
        std::memcpy(&v, row[r] + c, 4);
        const __m512i b = _mm512_set1_epi32(static_cast<int32_t>(v));
        for (int t = 0; t < NT; ++t) sum[r][t] = dpbusd(sum[r][t], b, f[t]);
      }
    }
  }
  for (int t = 0; t < NT; ++t) {
    const __m512 scale = _mm512_maskz_loadu_ps(mask[t], rq.scale + first + t * kInt8Tile);
    for (int r = 0; r < R; ++r) requantize16(sum[r][t], scale, mask[t], rq, dst + r * dst_stride + first + t * kInt8Tile);
  }
}

// requantized_block for a runtime number of rows (1..R) and tiles (1..NT).
template <int R, int NT, typename Out>
void requantized_any(int64_t nr, int64_t nt, const Int8Rows& x, int64_t r0, const uint8_t* w, int64_t tile_bytes, int64_t kpad, int64_t first,
                     int64_t n, const Int8Requant& rq, Out* dst, int64_t dst_stride) {
  if constexpr (R > 1) {
    if (nr < R) return requantized_any<R - 1, NT>(nr, nt, x, r0, w, tile_bytes, kpad, first, n, rq, dst, dst_stride);
  }
  if constexpr (NT > 1) {
    if (nt < NT) return requantized_any<R, NT - 1>(nr, nt, x, r0, w, tile_bytes, kpad, first, n, rq, dst, dst_stride);
  }
  requantized_block<R, NT>(x, r0, w, tile_bytes, kpad, first, n, rq, dst, dst_stride);
}
#endif

#if !(defined(__AVX512VNNI__) && defined(__AVX512BW__))
// acc[r][t * kInt8Tile + j] = the raw sums of row r and output j of tile t: the portable loop.
void tile_sums(const uint8_t* a, int64_t stride, int64_t nrows, const uint8_t* tiles, int64_t tile_bytes, int64_t ntiles, int64_t kpad,
               int32_t (*acc)[kInt8Tiles * kInt8Tile]) {
  for (int64_t r = 0; r < nrows; ++r) {
    const uint8_t* ar = a + r * stride;
    for (int64_t t = 0; t < ntiles; ++t) {
      int32_t* out = acc[r] + t * kInt8Tile;
      int32_t s[kInt8Tile] = {};
      const uint8_t* wt = tiles + t * tile_bytes;
      for (int64_t g = 0; g < kpad / 4; ++g) {
        const int8_t* wg = reinterpret_cast<const int8_t*>(wt + g * kInt8Tile * 4);
        for (int64_t j = 0; j < kInt8Tile; ++j) {
          for (int64_t q = 0; q < 4; ++q) s[j] += static_cast<int32_t>(ar[4 * g + q]) * wg[j * 4 + q];
        }
      }
      std::memcpy(out, s, sizeof s);
    }
  }
}
#endif

template <typename Out>
void gemm_requantized_rows(const Int8Rows& x, int64_t row0, int64_t rows, const PackedInt8& w, int64_t tile_begin, int64_t tile_end,
                           const Int8Requant& rq, Out* dst, int64_t dst_stride);

// Rows in chunks whose inputs stay in the second-level cache (about 512 KiB) while every tile
// passes over them: a layer of many rows reads its input once per chunk from there instead of
// once per group of tiles from memory (a 16384-row joiner's 16 MiB input, 65 times).
template <typename Out>
void gemm_requantized(const Int8Rows& x, int64_t row0, int64_t rows, const PackedInt8& w, int64_t tile_begin, int64_t tile_end, const Int8Requant& rq,
                      Out* dst, int64_t dst_stride) {
  const int64_t chunk = std::max<int64_t>(48, (int64_t{512} << 10) / std::max<int64_t>(w.kpad, 1) / 48 * 48);
  for (int64_t c0 = 0; c0 < rows; c0 += chunk) {
    gemm_requantized_rows(x, row0 + c0, std::min(chunk, rows - c0), w, tile_begin, tile_end, rq, dst + c0 * dst_stride, dst_stride);
  }
}

template <typename Out>
void gemm_requantized_rows(const Int8Rows& x, int64_t row0, int64_t rows, const PackedInt8& w, int64_t tile_begin, int64_t tile_end,
                           const Int8Requant& rq, Out* dst, int64_t dst_stride) {
  for (int64_t t0 = tile_begin; t0 < tile_end; t0 += kInt8Tiles) {
    const int64_t nt = std::min(kInt8Tiles, tile_end - t0);
    const int64_t first = t0 * kInt8Tile;
    const uint8_t* wt = w.bytes.data() + t0 * w.tile_bytes();
#if defined(__AVX512VNNI__) && defined(__AVX512BW__)
    // Fewer tiles take more rows per block: at least 12 independent sums to cover the dot
    // product's latency (a layer of 16 outputs had 4), and about 16 registers of them.
    const int64_t block_rows = nt == 1 ? 12 : nt == 2 ? 8 : kInt8Rows;
    for (int64_t r0 = 0; r0 < rows; r0 += block_rows) {
      const int64_t nr = std::min(block_rows, rows - r0);
      Out* to = dst + r0 * dst_stride;
      if (nt == 1) {
        requantized_any<12, 1>(nr, nt, x, row0 + r0, wt, w.tile_bytes(), w.kpad, first, w.n, rq, to, dst_stride);
      } else if (nt == 2) {
        requantized_any<8, 2>(nr, nt, x, row0 + r0, wt, w.tile_bytes(), w.kpad, first, w.n, rq, to, dst_stride);
      } else if (const int64_t b = r0 / block_rows; nr == kInt8Rows && b < kInt8Tiles && t0 + kInt8Tiles + b < tile_end) {
        // A group's packing comes from memory (a layer's is read by nothing else): the first
        // four blocks of rows over a group fetch the next group's tiles, one each.
        requantized_block<kInt8Rows, kInt8Tiles, Out, true>(x, row0 + r0, wt, w.tile_bytes(), w.kpad, first, w.n, rq, to, dst_stride,
                                                             wt + (kInt8Tiles + b) * w.tile_bytes());
      } else {
        requantized_any<kInt8Rows, kInt8Tiles>(nr, nt, x, row0 + r0, wt, w.tile_bytes(), w.kpad, first, w.n, rq, to, dst_stride);
      }
    }
#else
    for (int64_t r0 = 0; r0 < rows; r0 += kInt8Rows) {
      const int64_t nr = std::min(kInt8Rows, rows - r0);
      const uint8_t* ar = x.a + (row0 + r0) * x.stride;  // contiguous rows only (kInt8WindowRows)
      Out* to = dst + r0 * dst_stride;
      alignas(64) int32_t acc[kInt8Rows][kInt8Tiles * kInt8Tile];
      tile_sums(ar, x.stride, nr, wt, w.tile_bytes(), nt, w.kpad, acc);
      const int64_t count = std::min(nt * kInt8Tile, w.n - first);
      for (int64_t r = 0; r < nr; ++r) {
        for (int64_t j = 0; j < count; ++j) {
          const int64_t o = first + j;
          const int32_t s = static_cast<int32_t>(static_cast<uint32_t>(acc[r][j]) + static_cast<uint32_t>(rq.offset[o]));
          const float v = std::min(std::max(static_cast<float>(s) * rq.scale[o], rq.lo), rq.hi);
          if constexpr (std::is_same_v<Out, int8_t>) {
            to[r * dst_stride + o] = static_cast<int8_t>(static_cast<int32_t>(std::nearbyint(v)) + rq.zero);
          } else {
            to[r * dst_stride + o] = (std::nearbyint(v) + 0.0f) * rq.out_scale;
          }
        }
      }
    }
#endif
  }
}

#if ETSCOPE_MATRIX_TILES
// [tiles] The same sums on AMX tiles (matrix_tiles.h): 2 x 2 tiles of 16 rows x 16 outputs per
// pass, 64 inputs per tdpbusd, the filter's tiles read where they are packed (16 groups of 4
// inputs are 16 rows of 64 bytes). What the tiles would read past the matrix or the filter
// comes from zero-padded copies: the last 64-input chunk when kpad is not a multiple of 64, and
// every row of a group of fewer than 32 rows. Each block's sums are stored, the offsets added
// (wrapping, as the AVX-512 path's sums that start from them) and requantized as there.
struct TileGemm {
  const uint8_t* a;      // rows
  int64_t stride;        // bytes between rows
  const uint8_t* tail;   // the rows' last chunk (zeros after kpad), tail_stride apart; null without one
  int64_t tail_stride;
  int64_t kfull;         // inputs in whole chunks of 64
  const PackedInt8* w;
};

template <int NA, int NB, typename Out>
void tile_block(const TileGemm& g, int64_t nr, int64_t t, const Int8Requant& rq, Out* dst, int64_t dst_stride) {
  const PackedInt8& w = *g.w;
  zero_sums_2x2<NA, NB>();
  const uint8_t* b0 = w.bytes.data() + t * w.tile_bytes();
  const uint8_t* b1 = b0 + w.tile_bytes();
  const uint8_t* a1 = g.a + kTileRows * g.stride;
  for (int64_t k0 = 0; k0 < g.kfull; k0 += 64) add_products_2x2<NA, NB>(g.a + k0, a1 + k0, g.stride, b0 + k0 * kInt8Tile, b1 + k0 * kInt8Tile);
  if (g.tail != nullptr) {
    const uint8_t* bt = w.tail_chunks.data() + t * kInt8ChunkBytes;
    add_products_2x2<NA, NB>(g.tail, g.tail + kTileRows * g.tail_stride, g.tail_stride, bt, bt + kInt8ChunkBytes);
  }
  alignas(64) int32_t sums[2][2][kTileRows][kInt8Tile];
  store_sums_2x2<NA, NB>([&](int i, int j) { return sums[i][j][0]; });
  for (int j = 0; j < NB; ++j) {
    const int64_t first = (t + j) * kInt8Tile;
    const int64_t valid = w.n - first;
    const __mmask16 mask = kernels::first_lanes(valid);
    const __m512i offset = _mm512_maskz_loadu_epi32(mask, rq.offset + first);
    const __m512 scale = _mm512_maskz_loadu_ps(mask, rq.scale + first);
    for (int64_t r = 0; r < nr; ++r) {
      const __m512i sum = _mm512_add_epi32(_mm512_load_si512(sums[r / kTileRows][j][r % kTileRows]), offset);
      requantize16(sum, scale, mask, rq, dst + r * dst_stride + first);
    }
  }
}

template <typename Out>
void gemm_tiles(const uint8_t* a, int64_t stride, int64_t rows, const PackedInt8& w, int64_t tile_begin, int64_t tile_end, const Int8Requant& rq,
                Out* dst, int64_t dst_stride) {
  const int64_t kfull = w.kpad / 64 * 64, tail = w.kpad - kfull, ka = kfull + (tail > 0 ? 64 : 0);
  thread_local kernels::aligned_vector<uint8_t> arows, atail;
  configure_tiles_2x2(64);
  for (int64_t r0 = 0; r0 < rows; r0 += 2 * kTileRows) {
    const int64_t nr = std::min(2 * kTileRows, rows - r0);
    TileGemm g{a + r0 * stride, stride, nullptr, 64, kfull, &w};
    if (nr < 2 * kTileRows) {
      // The group's rows in a zero-padded copy of 32 rows of ka bytes, its tail chunk included.
      arows.assign(static_cast<size_t>(2 * kTileRows * ka), 0);
      for (int64_t r = 0; r < nr; ++r) std::memcpy(arows.data() + r * ka, g.a + r * stride, static_cast<size_t>(w.kpad));
      g.a = arows.data();
      g.stride = ka;
      if (tail > 0) {
        g.tail = arows.data() + kfull;
        g.tail_stride = ka;
      }
    } else if (tail > 0) {
      atail.assign(static_cast<size_t>(2 * kTileRows * 64), 0);
      for (int64_t r = 0; r < nr; ++r) std::memcpy(atail.data() + r * 64, g.a + r * stride + kfull, static_cast<size_t>(tail));
      g.tail = atail.data();
    }
    Out* to = dst + r0 * dst_stride;
    for (int64_t t = tile_begin; t < tile_end; t += 2) {
      const bool two = t + 1 < tile_end;
      if (nr > kTileRows) {
        if (two) tile_block<2, 2>(g, nr, t, rq, to, dst_stride); else tile_block<2, 1>(g, nr, t, rq, to, dst_stride);
      } else {
        if (two) tile_block<1, 2>(g, nr, t, rq, to, dst_stride); else tile_block<1, 1>(g, nr, t, rq, to, dst_stride);
      }
    }
  }
  _tile_release();
}
#endif

}  // namespace

bool int8_gemm_on_tiles(MatrixTiles tiles, int64_t rows) {
  return ETSCOPE_MATRIX_TILES && (tiles == MatrixTiles::kAlways || (tiles == MatrixTiles::kAuto && rows >= kInt8TileMinRows));
}

void int8_gemm_requantized(const uint8_t* a, int64_t stride, int64_t rows, const PackedInt8& w, int64_t tile_begin, int64_t tile_end,
                           const Int8Requant& rq, int8_t* dst, int64_t dst_stride, MatrixTiles tiles) {
  if (int8_gemm_on_tiles(tiles, rows)) {  // never without tile code
#if ETSCOPE_MATRIX_TILES
    return gemm_tiles(a, stride, rows, w, tile_begin, tile_end, rq, dst, dst_stride);
#endif
  }
  gemm_requantized(Int8Rows{a, stride}, 0, rows, w, tile_begin, tile_end, rq, dst, dst_stride);
}
void int8_gemm_requantized(const uint8_t* a, int64_t stride, int64_t rows, const PackedInt8& w, int64_t tile_begin, int64_t tile_end,
                           const Int8Requant& rq, float* dst, int64_t dst_stride, MatrixTiles tiles) {
  if (int8_gemm_on_tiles(tiles, rows)) {  // never without tile code
#if ETSCOPE_MATRIX_TILES
    return gemm_tiles(a, stride, rows, w, tile_begin, tile_end, rq, dst, dst_stride);
#endif
  }
  gemm_requantized(Int8Rows{a, stride}, 0, rows, w, tile_begin, tile_end, rq, dst, dst_stride);
}
void int8_gemm_requantized(const Int8Rows& x, int64_t r0, int64_t rows, const PackedInt8& w, int64_t tile_begin, int64_t tile_end,
                           const Int8Requant& rq, int8_t* dst, int64_t dst_stride) {
  gemm_requantized(x, r0, rows, w, tile_begin, tile_end, rq, dst, dst_stride);
}
void int8_gemm_requantized(const Int8Rows& x, int64_t r0, int64_t rows, const PackedInt8& w, int64_t tile_begin, int64_t tile_end,
                           const Int8Requant& rq, float* dst, int64_t dst_stride) {
  gemm_requantized(x, r0, rows, w, tile_begin, tile_end, rq, dst, dst_stride);
}

}  // namespace etscope::runtime::xnnpack
