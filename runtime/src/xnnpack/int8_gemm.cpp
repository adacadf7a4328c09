// The int8 GEMM's kernel (int8_gemm.h): blocks of up to 4 rows by up to 4 tiles of 16 outputs,
// requantized as they leave the registers.
#include "xnnpack/int8_gemm.h"
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
// The requantized form: R rows by NT tiles starting at output `first`, sums started from the
// offsets, requantized from the registers. Tiles past the packing's n outputs are masked off.
template <int R, int NT, typename Out>
void requantized_block(const uint8_t* a, int64_t stride, const uint8_t* w, int64_t tile_bytes, int64_t kpad, int64_t first, int64_t n,
                       const Int8Requant& rq, Out* dst, int64_t dst_stride) {
  __mmask16 mask[NT];
  __m512i sum[R][NT];
  for (int t = 0; t < NT; ++t) {
    const int64_t valid = n - (first + t * kInt8Tile);
    mask[t] = valid >= kInt8Tile ? __mmask16{0xffff} : valid <= 0 ? __mmask16{0} : static_cast<__mmask16>((1u << valid) - 1u);
    const __m512i start = _mm512_maskz_loadu_epi32(mask[t], rq.offset + first + t * kInt8Tile);
    for (int r = 0; r < R; ++r) sum[r][t] = start;
  }
  for (int64_t g = 0; g < kpad / 4; ++g) {
    __m512i f[NT];
    for (int t = 0; t < NT; ++t) f[t] = _mm512_loadu_si512(w + t * tile_bytes + g * kInt8Tile * 4);
    for (int r = 0; r < R; ++r) {
      uint32_t v;
      std::memcpy(&v, a + r * stride + 4 * g, 4);
      const __m512i x = _mm512_set1_epi32(static_cast<int32_t>(v));
      for (int t = 0; t < NT; ++t) sum[r][t] = dpbusd(sum[r][t], x, f[t]);
    }
  }
  for (int t = 0; t < NT; ++t) {
    const __m512 scale = _mm512_maskz_loadu_ps(mask[t], rq.scale + first + t * kInt8Tile);
    for (int r = 0; r < R; ++r) requantize16(sum[r][t], scale, mask[t], rq, dst + r * dst_stride + first + t * kInt8Tile);
  }
}

// requantized_block for a runtime number of rows (1..R) and tiles (1..NT).
template <int R, int NT, typename Out>
void requantized_any(int64_t nr, int64_t nt, const uint8_t* a, int64_t stride, const uint8_t* w, int64_t tile_bytes, int64_t kpad, int64_t first,
                     int64_t n, const Int8Requant& rq, Out* dst, int64_t dst_stride) {
  if constexpr (R > 1) {
    if (nr < R) return requantized_any<R - 1, NT>(nr, nt, a, stride, w, tile_bytes, kpad, first, n, rq, dst, dst_stride);
  }
  if constexpr (NT > 1) {
    if (nt < NT) return requantized_any<R, NT - 1>(nr, nt, a, stride, w, tile_bytes, kpad, first, n, rq, dst, dst_stride);
  }
  requantized_block<R, NT>(a, stride, w, tile_bytes, kpad, first, n, rq, dst, dst_stride);
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
void gemm_requantized(const uint8_t* a, int64_t stride, int64_t rows, const PackedInt8& w, int64_t tile_begin, int64_t tile_end, const Int8Requant& rq,
                      Out* dst, int64_t dst_stride) {
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
      const uint8_t* ar = a + r0 * stride;
      Out* to = dst + r0 * dst_stride;
      if (nt == 1) {
        requantized_any<12, 1>(nr, nt, ar, stride, wt, w.tile_bytes(), w.kpad, first, w.n, rq, to, dst_stride);
      } else if (nt == 2) {
        requantized_any<8, 2>(nr, nt, ar, stride, wt, w.tile_bytes(), w.kpad, first, w.n, rq, to, dst_stride);
      } else {
        requantized_any<kInt8Rows, kInt8Tiles>(nr, nt, ar, stride, wt, w.tile_bytes(), w.kpad, first, w.n, rq, to, dst_stride);
      }
    }
#else
    for (int64_t r0 = 0; r0 < rows; r0 += kInt8Rows) {
      const int64_t nr = std::min(kInt8Rows, rows - r0);
      const uint8_t* ar = a + r0 * stride;
      Out* to = dst + r0 * dst_stride;
      alignas(64) int32_t acc[kInt8Rows][kInt8Tiles * kInt8Tile];
      tile_sums(ar, stride, nr, wt, w.tile_bytes(), nt, w.kpad, acc);
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

}  // namespace

void int8_gemm_requantized(const uint8_t* a, int64_t stride, int64_t rows, const PackedInt8& w, int64_t tile_begin, int64_t tile_end,
                           const Int8Requant& rq, int8_t* dst, int64_t dst_stride) {
  gemm_requantized(a, stride, rows, w, tile_begin, tile_end, rq, dst, dst_stride);
}
void int8_gemm_requantized(const uint8_t* a, int64_t stride, int64_t rows, const PackedInt8& w, int64_t tile_begin, int64_t tile_end,
                           const Int8Requant& rq, float* dst, int64_t dst_stride) {
  gemm_requantized(a, stride, rows, w, tile_begin, tile_end, rq, dst, dst_stride);
}

}  // namespace etscope::runtime::xnnpack
