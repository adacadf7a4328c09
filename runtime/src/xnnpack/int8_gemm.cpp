// The int8 GEMM's kernel (int8_gemm.h): a block of up to 4 rows by up to 4 tiles of 16 outputs.
#include "xnnpack/int8_gemm.h"

#include <cstring>
#if defined(__AVX512VNNI__) && defined(__AVX512BW__)
#include <immintrin.h>
#endif

namespace etscope::runtime::xnnpack {
namespace {

#if defined(__AVX512VNNI__) && defined(__AVX512BW__)
// R rows by NT tiles: per group of 4 inputs, NT filter loads and R broadcasts feed R x NT dot
// products.
template <int R, int NT>
void block(const uint8_t* a, int64_t stride, const uint8_t* w, int64_t tile_bytes, int64_t kpad, int32_t (*acc)[kInt8Tiles * kInt8Tile]) {
  __m512i sum[R][NT];
  for (int r = 0; r < R; ++r) {
    for (int t = 0; t < NT; ++t) sum[r][t] = _mm512_setzero_si512();
  }
  for (int64_t g = 0; g < kpad / 4; ++g) {
    __m512i f[NT];
    for (int t = 0; t < NT; ++t) f[t] = _mm512_loadu_si512(w + t * tile_bytes + g * kInt8Tile * 4);
    for (int r = 0; r < R; ++r) {
      uint32_t v;
      std::memcpy(&v, a + r * stride + 4 * g, 4);
      const __m512i x = _mm512_set1_epi32(static_cast<int32_t>(v));
      for (int t = 0; t < NT; ++t) sum[r][t] = _mm512_dpbusd_epi32(sum[r][t], x, f[t]);
    }
  }
  for (int r = 0; r < R; ++r) {
    for (int t = 0; t < NT; ++t) _mm512_store_si512(acc[r] + t * kInt8Tile, sum[r][t]);
  }
}

template <int R>
void rows_block(const uint8_t* a, int64_t stride, const uint8_t* w, int64_t tile_bytes, int64_t ntiles, int64_t kpad,
                int32_t (*acc)[kInt8Tiles * kInt8Tile]) {
  switch (ntiles) {
    case 1: return block<R, 1>(a, stride, w, tile_bytes, kpad, acc);
    case 2: return block<R, 2>(a, stride, w, tile_bytes, kpad, acc);
    case 3: return block<R, 3>(a, stride, w, tile_bytes, kpad, acc);
    default: return block<R, 4>(a, stride, w, tile_bytes, kpad, acc);
  }
}
#endif

}  // namespace

void int8_tile_block(const uint8_t* a, int64_t stride, int64_t nrows, const uint8_t* tiles, int64_t tile_bytes, int64_t ntiles,
                     int64_t kpad, int32_t (*acc)[kInt8Tiles * kInt8Tile]) {
#if defined(__AVX512VNNI__) && defined(__AVX512BW__)
  switch (nrows) {
    case 1: return rows_block<1>(a, stride, tiles, tile_bytes, ntiles, kpad, acc);
    case 2: return rows_block<2>(a, stride, tiles, tile_bytes, ntiles, kpad, acc);
    case 3: return rows_block<3>(a, stride, tiles, tile_bytes, ntiles, kpad, acc);
    default: return rows_block<4>(a, stride, tiles, tile_bytes, ntiles, kpad, acc);
  }
#else
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
#endif
}

}  // namespace etscope::runtime::xnnpack
