// Intel AMX tiles (the matrix units of Sapphire Rapids and later Xeons): whether this process
// may use them, and the one tile layout etscope's integer GEMMs use. Kernels with a tile path
// (qd8_layers.cpp, int8_gemm.cpp) check matrix_tiles_available() at load and keep their AVX-512
// or portable path otherwise.
#pragma once

#include <cstdint>

#if defined(__AMX_TILE__) && defined(__AMX_INT8__) && defined(__AVX512VNNI__) && defined(__AVX512BW__)
#include <immintrin.h>
#define ETSCOPE_MATRIX_TILES 1
#else
#define ETSCOPE_MATRIX_TILES 0
#endif

namespace etscope::runtime {

/// True when this build has tile code (compiled for a CPU with AMX-TILE and AMX-INT8), the CPU
/// running it has both, the OS saves tile state (XCR0), and Linux gave this process the
/// permission to use tile data (arch_prctl ARCH_REQ_XCOMP_PERM, asked once on the first call).
bool matrix_tiles_available();

#if ETSCOPE_MATRIX_TILES
/// Rows of a tile.
constexpr int64_t kTileRows = 16;

/// Configures this thread's tiles for 2 x 2 blocks of uint8 rows times int8 filters: tiles 0-3
/// hold int32 sums (16 rows x 16 outputs), 4-5 two row tiles' inputs (16 rows x `inputs` bytes),
/// 6-7 two output tiles' filter values (inputs / 4 groups of 16 outputs x 4 bytes, the packed
/// int8 layout). `inputs` (4 to 64, a multiple of 4) per tdpbusd. Release with _tile_release().
inline void configure_tiles_2x2(int64_t inputs) {
  struct alignas(64) {
    uint8_t palette = 1;
    uint8_t start_row = 0;
    uint8_t reserved[14] = {};
    uint16_t colsb[16] = {};
    uint8_t rows[16] = {};
  } c;
  for (int t = 0; t < 4; ++t) {
    c.rows[t] = kTileRows;
    c.colsb[t] = 64;
  }
  for (int t = 4; t < 6; ++t) {
    c.rows[t] = kTileRows;
    c.colsb[t] = static_cast<uint16_t>(inputs);
  }
  for (int t = 6; t < 8; ++t) {
    c.rows[t] = static_cast<uint8_t>(inputs / 4);
    c.colsb[t] = 64;
  }
  // Not _tile_loadconfig: GCC 12's reads the configuration through an 8-byte operand, so the
  // compiler may drop or sink the stores of the other 56 bytes (it did: a #GP at ldtilecfg).
  __asm__ volatile("ldtilecfg %0" : : "m"(c));
}

// The steps of a 2 x 2 block on tiles configured by configure_tiles_2x2: NA (1 or 2) row tiles
// by NB (1 or 2) output tiles; sums tile (i, j) is tile 2 i + j.

/// Zeroes the block's sums.
template <int NA, int NB>
inline void zero_sums_2x2() {
  _tile_zero(0);
  if constexpr (NB == 2) _tile_zero(1);
  if constexpr (NA == 2) _tile_zero(2);
  if constexpr (NA == 2 && NB == 2) _tile_zero(3);
}

/// Adds one chunk's products: row tiles at a0 and a1 (16 rows each, a_stride bytes apart),
/// filter tiles at b0 and b1 (groups of 64 bytes). Tiles NA and NB past the block are not read.
template <int NA, int NB>
inline void add_products_2x2(const uint8_t* a0, const uint8_t* a1, int64_t a_stride, const uint8_t* b0, const uint8_t* b1) {
  _tile_loadd(4, a0, a_stride);
  if constexpr (NA == 2) _tile_loadd(5, a1, a_stride);
  _tile_loadd(6, b0, 64);
  if constexpr (NB == 2) _tile_loadd(7, b1, 64);
  _tile_dpbusd(0, 4, 6);
  if constexpr (NB == 2) _tile_dpbusd(1, 4, 7);
  if constexpr (NA == 2) _tile_dpbusd(2, 5, 6);
  if constexpr (NA == 2 && NB == 2) _tile_dpbusd(3, 5, 7);
}

/// Stores sums tile (i, j) at at(i, j): 16 rows of 16 int32, 64 bytes apart.
template <int NA, int NB, typename At>
inline void store_sums_2x2(At at) {
  _tile_stored(0, at(0, 0), 64);
  if constexpr (NB == 2) _tile_stored(1, at(0, 1), 64);
  if constexpr (NA == 2) _tile_stored(2, at(1, 0), 64);
  if constexpr (NA == 2 && NB == 2) _tile_stored(3, at(1, 1), 64);
}
#endif

}  // namespace etscope::runtime
