// Integer GEMM for the int8 layers of XNNPACK graphs (quantized_nodes.cpp): uint8 rows times
// int8 filters, summed in int32 as XNNPACK sums them. Rows are the layer's input integers plus
// 128 (int8 activations) or as they are (uint8 ones), so the product of an input less its zero
// point and a filter integer is recovered exactly as
//     sum_k (u_k - zu) * w_k = sum_k u_k * w_k - zu * sum_k w_k,
// with sum_k w_k kept per output at packing. Sums are integers: the same in any order, so the
// same whichever instructions compute them (AVX-512 VNNI's vpdpbusd where the build targets it,
// a plain loop elsewhere).
//
// Filters are packed once, at load: outputs in tiles of kInt8Tile, a tile's integers laid out
// input by input in groups of 4 ([kpad / 4][kInt8Tile][4] bytes), inputs padded with zeros to a
// multiple of 4 (kpad), the last tile padded with zero filters.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <vector>

#include "etscope/runtime/method.h"
#include "kernels/util/aligned.h"
#include "kernels/util/lanes.h"
#include "matrix_tiles.h"
#if defined(__AVX512F__) && defined(__AVX512BW__)
#include <immintrin.h>
#endif

namespace etscope::runtime::xnnpack {

constexpr int64_t kInt8Tile = 16;  // outputs per tile
constexpr int64_t kInt8Rows = 4;   // rows per block of the kernel
constexpr int64_t kInt8Tiles = 4;  // tiles per block of the kernel

struct PackedInt8 {
  int64_t k = 0, kpad = 0, n = 0, tiles = 0;
  kernels::aligned_vector<uint8_t> bytes;  // tiles x tile_bytes()
  std::vector<int32_t> wsum;   // per output, tiles x kInt8Tile (zeros past n)
  // With AMX tiles in the build and kpad not a multiple of 64: per tile, the groups of its last
  // chunk of 64 inputs followed by zero groups, kInt8ChunkBytes each (a tile's filter operand is
  // a whole chunk of 16 groups; past the tile's own groups lie the next tile's). Else empty.
  kernels::aligned_vector<uint8_t> tail_chunks;
  int64_t tile_bytes() const { return kpad * kInt8Tile; }
};

/// Bytes of 64 inputs' groups of one tile.
constexpr int64_t kInt8ChunkBytes = 64 * kInt8Tile;

/// Inputs padded to the packing's multiple of 4.
inline int64_t int8_kpad(int64_t k) { return (k + 3) / 4 * 4; }

/// The largest number of inputs a filter may have for every sum of (0..255) x (-128..127)
/// products, and the zero-point correction, to stay inside int32.
constexpr int64_t kInt8MaxInputs = 32768;

/// Bytes of an integer convolution's image in int8_scratch, rounded up to 64: `pixels` rows of
/// `row` bytes (the channels, or kpad for a pointwise convolution); its im2col matrix follows.
/// Sizes were overflow-checked when the node was (node_checks.cpp).
inline int64_t int8_image_bytes(int64_t pixels, int64_t row) { return (pixels * row + 63) / 64 * 64; }
/// Where a depthwise convolution's int32 sums start in int8_scratch, after `elements` int16s.
inline int64_t depthwise_acc_offset(int64_t elements) { return (elements * 2 + 63) / 64 * 64; }

/// Packs an n x k filter whose integer (output o, input i) is filter(o, i), each in -128..127.
template <typename F>
void pack_int8(PackedInt8& p, int64_t n, int64_t k, F filter) {
  p.k = k;
  p.n = n;
  p.kpad = int8_kpad(k);
  p.tiles = (n + kInt8Tile - 1) / kInt8Tile;
  p.bytes.assign(static_cast<size_t>(p.tiles * p.tile_bytes()), 0);
  p.wsum.assign(static_cast<size_t>(p.tiles * kInt8Tile), 0);
  for (int64_t o = 0; o < n; ++o) {
    uint8_t* tile = p.bytes.data() + (o / kInt8Tile) * p.tile_bytes();
    const int64_t j = o % kInt8Tile;
    int32_t sum = 0;
    for (int64_t i = 0; i < k; ++i) {
      const int32_t v = filter(o, i);
      tile[(i / 4) * kInt8Tile * 4 + j * 4 + i % 4] = static_cast<uint8_t>(static_cast<int8_t>(v));
      sum += v;
    }
    p.wsum[static_cast<size_t>(o)] = sum;
  }
#if ETSCOPE_MATRIX_TILES
  const int64_t kfull = p.kpad / 64 * 64;
  p.tail_chunks.clear();
  if (p.kpad > kfull) {
    p.tail_chunks.assign(static_cast<size_t>(p.tiles * kInt8ChunkBytes), 0);
    for (int64_t t = 0; t < p.tiles; ++t) {
      std::memcpy(p.tail_chunks.data() + t * kInt8ChunkBytes, p.bytes.data() + t * p.tile_bytes() + kfull * kInt8Tile,
                  static_cast<size_t>((p.kpad - kfull) * kInt8Tile));
    }
  }
#endif
}

/// How int8_gemm_requantized turns output o's raw sum into the layer's output, as XNNPACK's
/// requantization does: r = (sum + offset[o], wrapping in int32) as float times scale[o], clamped
/// to [lo, hi] (the output range less its zero point), rounded to nearest even; stored as r plus
/// `zero` (int8 outputs) or as r times out_scale (float outputs, the value r stands for).
struct Int8Requant {
  const int32_t* offset;  // per output of the packing
  const float* scale;     // per output of the packing
  float lo, hi;
  int32_t zero;
  float out_scale;
};

#if defined(__AVX512F__) && defined(__AVX512BW__)
/// 16 sums (offsets included) requantized by rq with their scales into to[0..16), lanes of mask k.
/// The zero-masking forms throughout: GCC 12's plain ones start from an "undefined" register it
/// then warns about.
template <typename Out>
inline void requantize16(__m512i sum, __m512 scale, __mmask16 k, const Int8Requant& rq, Out* to) {
  constexpr __mmask16 all = 0xffff;
  const __m512 lo = _mm512_set1_ps(rq.lo), hi = _mm512_set1_ps(rq.hi);
  const __m512 v = _mm512_maskz_mul_ps(all, _mm512_maskz_cvtepi32_ps(all, sum), scale);
  if constexpr (std::is_same_v<Out, int8_t>) {
    // As requantize_sums: cvtps rounds to nearest even (the default rounding mode); the clamped
    // values plus the zero point fit int8, so the truncating store keeps them.
    const __m512 c = _mm512_maskz_min_ps(all, _mm512_maskz_max_ps(all, v, lo), hi);
    // Narrowed in a register, then one 16-byte store (the narrowing store to memory, vpmovdb, is
    // slow on AMD's Zen cores).
    const __m128i b = _mm512_maskz_cvtepi32_epi8(all, _mm512_maskz_add_epi32(all, _mm512_maskz_cvtps_epi32(all, c), _mm512_set1_epi32(rq.zero)));
    if (k == all) {
      _mm_storeu_si128(reinterpret_cast<__m128i*>(to), b);
    } else {
      _mm_mask_storeu_epi8(to, k, b);
    }
  } else {
    // As std::min(std::max(v, lo), hi), NaN kept, then (nearbyint + 0) * out_scale.
    const __m512 c = _mm512_maskz_min_ps(all, hi, _mm512_maskz_max_ps(all, lo, v));
    const __m512 rounded = _mm512_maskz_roundscale_ps(all, c, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    kernels::store_lanes(to, k, _mm512_maskz_mul_ps(all, _mm512_maskz_add_ps(all, rounded, _mm512_setzero_ps()), _mm512_set1_ps(rq.out_scale)));
  }
}
#endif

/// The rows of an integer GEMM where they lie. Contiguous (per_line 0): row r is the kpad bytes at
/// a + r * stride. A convolution's windows over an image padded with its zero point's byte (NHWC,
/// so a window's taps are runs of the channels): output pixel r, per_line of them per output row,
/// starts at a + (r / per_line) * stride + (r % per_line) * pixel_step, and its k-th run of
/// kpad / taps bytes lies tap_offset[k] further. No im2col matrix is made.
struct Int8Rows {
  const uint8_t* a = nullptr;
  int64_t stride = 0;
  int64_t per_line = 0;
  int64_t pixel_step = 0;
  const int64_t* tap_offset = nullptr;  // taps of them; null: one run at offset 0
  int64_t taps = 1;
  /// Where rows r0 .. r0 + n - 1 start (one division for all of them).
  void rows(int64_t r0, int n, const uint8_t** at) const {
    if (per_line == 0) {
      for (int r = 0; r < n; ++r) at[r] = a + (r0 + r) * stride;
      return;
    }
    int64_t line = r0 / per_line, col = r0 % per_line;
    for (int r = 0; r < n; ++r) {
      at[r] = a + line * stride + col * pixel_step;
      if (++col == per_line) {
        col = 0;
        ++line;
      }
    }
  }
};

/// The most taps (kernel_h x kernel_w) a convolution reads as window rows; larger windows make
/// an im2col matrix.
constexpr int64_t kMaxWindowTaps = 64;

/// Whether int8_gemm_requantized reads window rows in this build (the AVX-512 VNNI path: each
/// group of 4 inputs is one load from its row); elsewhere a convolution makes its im2col matrix.
constexpr bool kInt8WindowRows =
#if defined(__AVX512VNNI__) && defined(__AVX512BW__)
    true;
#else
    false;
#endif

/// With `tiles` kAuto (the delegate may use AMX: matrix_tiles.h), calls of at least this many rows
/// sum on AMX tiles (fewer would leave most of a tile's 16 rows empty); kAlways: every call.
constexpr int64_t kInt8TileMinRows = 12;

/// Whether a GEMM of `rows` rows runs on AMX tiles under `tiles` (the delegate's setting).
bool int8_gemm_on_tiles(MatrixTiles tiles, int64_t rows);

/// The GEMM of `rows` rows of kpad bytes (`stride` apart) with tiles [tile_begin, tile_end) of the
/// packed filter, requantized by `rq` into dst: row r's output o (of the packing) at
/// dst[r * dst_stride + o]. The sums never leave registers where the build has AVX-512 VNNI; on
/// AMX tiles as `tiles` says (the same integers).
void int8_gemm_requantized(const uint8_t* a, int64_t stride, int64_t rows, const PackedInt8& w, int64_t tile_begin, int64_t tile_end,
                           const Int8Requant& rq, int8_t* dst, int64_t dst_stride, MatrixTiles tiles = MatrixTiles::kOff);
void int8_gemm_requantized(const uint8_t* a, int64_t stride, int64_t rows, const PackedInt8& w, int64_t tile_begin, int64_t tile_end,
                           const Int8Requant& rq, float* dst, int64_t dst_stride, MatrixTiles tiles = MatrixTiles::kOff);
/// The same for rows [r0, r0 + rows) of `x` (windows: only where kInt8WindowRows, never on tiles;
/// each run a multiple of 4 bytes), into dst's rows from 0.
void int8_gemm_requantized(const Int8Rows& x, int64_t r0, int64_t rows, const PackedInt8& w, int64_t tile_begin, int64_t tile_end,
                           const Int8Requant& rq, int8_t* dst, int64_t dst_stride);
void int8_gemm_requantized(const Int8Rows& x, int64_t r0, int64_t rows, const PackedInt8& w, int64_t tile_begin, int64_t tile_end,
                           const Int8Requant& rq, float* dst, int64_t dst_stride);

}  // namespace etscope::runtime::xnnpack
