// Fully connected layers on dynamically quantized rows (XNNPACK's qd8 GEMMs), as ExecuTorch's
// XNNPACK computes them: the f32 -> qdint8 Convert quantizes each row with its own zero point
// and multiplier, and the layer multiplies those int8 rows with int8 or 4-bit filters in int32,
// then converts and scales in float in XNNPACK's order. Sections: [rows] [planning] [running]
//
// The float operations here are XNNPACK's, one by one: this file is compiled with
// -ffp-contract=off (runtime/CMakeLists.txt) so that no product and sum fuse where XNNPACK's do
// not, and std::fma stands where its x86 kernels use a fused multiply-add. The order is that of
// the kernels ExecuTorch 1.5.1's XNNPACK selects on x86-64 CPUs with AVX512-VNNI: the qdu8
// variants (input rows shifted by 128 to uint8, zero points with them), filter columns packed 16
// inputs at a time (kr = 8, two planes).
#include <cmath>
#include <cstring>
#include <span>
#include <type_traits>
#if defined(__linux__)
#include <sys/mman.h>
#include <unistd.h>
#endif
#if defined(__AVX512VNNI__) && defined(__AVX512BW__)
#include <immintrin.h>
#endif

#include "matrix_tiles.h"
#include "kernels/util/lanes.h"
#include "xnnpack/node_table.h"
#include "xnnpack/vnni.h"


namespace etscope::runtime::xnnpack {
namespace {

// A float rounded to bfloat16 (nearest, ties to even) and back, as XNNPACK's math_cvt_bf16_fp32.
float round_bf16(float x) {
  uint32_t bits;
  std::memcpy(&bits, &x, 4);
  if (std::isnan(x)) return x;
  bits = (bits + 0x7fffu + ((bits >> 16) & 1u)) & 0xffff0000u;
  float r;
  std::memcpy(&r, &bits, 4);
  return r;
}

// Inputs per packed group of a filter column: XNNPACK sums a column's integers (times the block
// scale) into its float term one group at a time (2 * kr with kr = 8).
constexpr int64_t kPackGroup = 16;

// The raw 4-bit or 8-bit integer of element (row, col) of a 2-D filter constant.
int32_t filter_int(const xnn::TensorValue& v, int64_t row, int64_t col) {
  const int64_t last = v.shape.back();
  if (v.type == ElementType::kQCInt8) {
    return static_cast<int32_t>(static_cast<int8_t>(v.constant[static_cast<size_t>(row * last + col)])) - v.quant.zero_point;
  }
  const uint8_t byte = v.constant[static_cast<size_t>(row * ((last + 1) / 2) + col / 2)];
  return ((col % 2 == 0) ? (byte & 0x0f) : (byte >> 4)) - 8;
}

// lo = min(lo, x[i]), hi = max(hi, x[i]) over the row, NaN left out (std::min(lo, NaN) is lo).
// min and max are exact, so the order does not change them (a zero's sign may, and the caller
// widens the range to include +0 either way).
void row_min_max(const float* x, int64_t n, float& lo, float& hi) {
  int64_t i = 0;
#if defined(__AVX512VNNI__) && defined(__AVX512BW__)
  // minps(a, b) gives b when either is NaN: the element goes first, so NaN leaves the bound.
  __m512 vlo = _mm512_set1_ps(lo), vhi = _mm512_set1_ps(hi);
  for (; i + 16 <= n; i += 16) {
    const __m512 v = _mm512_loadu_ps(x + i);
    vlo = _mm512_min_ps(v, vlo);
    vhi = _mm512_max_ps(v, vhi);
  }
  alignas(64) float l[16], h[16];
  _mm512_store_ps(l, vlo);
  _mm512_store_ps(h, vhi);
  for (int k = 0; k < 16; ++k) {
    lo = std::min(lo, l[k]);
    hi = std::max(hi, h[k]);
  }
#endif
  for (; i < n; ++i) {
    lo = std::min(lo, x[i]);
    hi = std::max(hi, x[i]);
  }
}

// Asks the kernel to reclaim the whole pages inside `bytes` (MADV_PAGEOUT: a clean page of a
// mapped file is dropped and read again if touched; anonymous memory is kept or swapped, never
// lost), for spans of 1 MiB and more. A hint: errors (older kernels) are ignored.
void release_pages(std::span<const uint8_t> bytes) {
#if defined(__linux__) && defined(MADV_PAGEOUT)
  if (bytes.size() < (size_t{1} << 20)) return;
  const uintptr_t page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  const uintptr_t begin = (reinterpret_cast<uintptr_t>(bytes.data()) + page - 1) / page * page;
  const uintptr_t end = (reinterpret_cast<uintptr_t>(bytes.data()) + bytes.size()) / page * page;
  if (end > begin) madvise(reinterpret_cast<void*>(begin), end - begin, MADV_PAGEOUT);
#else
  (void)bytes;
#endif
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// [rows]

void quantize_rows_qd8(const float* x, float* out, int64_t rows, int64_t n, DynamicRows* ints) {
  if (ints != nullptr) {
    ints->q.resize(static_cast<size_t>(rows * n));
    ints->zero.resize(static_cast<size_t>(rows));
    ints->scale.resize(static_cast<size_t>(rows));
  }
  const float qmin = -128.0f, qmax = 127.0f;
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * n;
    float lo = INFINITY, hi = -INFINITY;
    row_min_max(xr, n, lo, hi);
    // XNNPACK's comparisons (its math_min_f32 and math_max_f32 on x86), in its order: with an
    // infinity in the row the zero point is NaN, and its clamp below turns it into qmin.
    const float rmin = lo < 0.0f ? lo : 0.0f, rmax = hi < 0.0f ? 0.0f : hi;
    const float mult = rmin == rmax ? 1.0f : (qmax - qmin) / (rmax - rmin);
    const float descaled_min = rmin * mult;
    const float descaled_max = rmax * mult;
    const float error_min = qmin + descaled_min;
    const float error_max = qmax + descaled_max;
    float zp = error_min + error_max > 0 ? qmin - descaled_min : qmax - descaled_max;
    zp = qmin < zp ? zp : qmin;
    zp = qmax < zp ? qmax : zp;
    const float zero = std::nearbyint(zp);
    const float scale = 1.0f / mult;
    // XNNPACK's convert: the scaled value clamped above at qmax - zero point (NaN becomes that
    // bound, as minps returns it), below at qmin - zero point, rounded to nearest even (the
    // magic-number addition, exact for these magnitudes), plus the zero point.
    const float lo_z = qmin - zero, hi_z = qmax - zero, magic = 12582912.0f;
    const int32_t zero_i = static_cast<int32_t>(zero);
    int8_t* __restrict q = ints != nullptr ? ints->q.data() + r * n : nullptr;
    float* o = out != nullptr ? out + r * n : nullptr;  // may be x itself
    for (int64_t i = 0; i < n; ++i) {
      float y = xr[i] * mult;
      y = y < hi_z ? y : hi_z;
      y = y > lo_z ? y : lo_z;
      const float rounded = (y + magic) - magic;
      if (q != nullptr) q[i] = static_cast<int8_t>(static_cast<int32_t>(rounded) + zero_i);
      if (o != nullptr) o[i] = rounded * scale;
    }
    if (ints != nullptr) {
      ints->zero[static_cast<size_t>(r)] = static_cast<int32_t>(zero);
      ints->scale[static_cast<size_t>(r)] = scale;
    }
  }
}

// ---------------------------------------------------------------------------------------------
// [planning]

bool DelegateState::qd8_layer(const Node& n) const {
  if (n.kind != NodeKind::kFullyConnected || n.inputs.size() < 3 || n.outputs.size() != 1 || n.inputs[1] < 0) return false;
  using Q = xnn::Quantization::Kind;
  const xnn::TensorValue& in = value(n.inputs[0]);
  const xnn::TensorValue& w = value(n.inputs[1]);
  const xnn::TensorValue& out = value(n.outputs[0]);
  if (in.type != ElementType::kQDInt8 || in.quant.kind != Q::kPerRowDynamic || in.quant.non_batch_dims != 1) return false;
  if (out.type != ElementType::kF32 || !w.is_constant || w.shape.size() != 2) return false;
  const bool t = (n.flags & kFlagTransposeB) != 0;
  if (w.type == ElementType::kQCInt8 || w.type == ElementType::kQCInt4) {
    if (w.quant.kind != Q::kPerChannel || w.quant.axis != (t ? 1u : 0u)) return false;
  } else if (w.type == ElementType::kQBInt4) {
    // XNNPACK takes blocks of a multiple of 32 inputs that divide the row, untransposed here.
    if (t || w.quant.kind != Q::kPerBlock || w.quant.block_size == 0 || w.quant.block_size % 32 != 0 ||
        w.shape[1] % w.quant.block_size != 0) {
      return false;
    }
  } else {
    return false;
  }
  if (n.inputs[2] >= 0) {
    const xnn::TensorValue& b = value(n.inputs[2]);
    if (!b.is_constant || b.type != ElementType::kF32) return false;
  }
  return true;
}

Status DelegateState::plan_qd8(size_t i) {
  const Node& n = graph.nodes[i];
  const xnn::TensorValue& w = value(n.inputs[1]);
  const bool t = (n.flags & kFlagTransposeB) != 0;
  Qd8Layer l;
  l.k = t ? w.shape[0] : w.shape[1];
  l.n = t ? w.shape[1] : w.shape[0];
  l.lo = n.output_min;
  l.hi = n.output_max;
  l.nibbles = w.type != ElementType::kQCInt8;
  l.kpad = (l.k + 7) / 8 * 8;
  l.tiles = (l.n + kQd8Tile - 1) / kQd8Tile;
  const bool blockwise = w.type == ElementType::kQBInt4;
  l.kind = blockwise ? Qd8Layer::Weights::kPerBlock : Qd8Layer::Weights::kPerChannel;
  l.block = blockwise ? static_cast<int64_t>(w.quant.block_size) : l.kpad;
  l.blocks = blockwise ? l.k / l.block : 1;
  const size_t wanted = static_cast<size_t>(blockwise ? l.n * l.blocks : l.n);
  if (w.quant.scales.size() != wanted) return bad(i, "filter scales do not cover the filter");
  const size_t per_output = static_cast<size_t>(l.tiles * kQd8Tile);
  l.packed.assign(static_cast<size_t>(l.tiles * l.tile_bytes()), 0);
  l.wsum.assign(per_output * static_cast<size_t>(l.blocks), 0);
  l.scale.assign(per_output * static_cast<size_t>(l.blocks), 0.0f);
  l.ksum.assign(per_output, 0.0f);
  l.bias.assign(per_output, 0.0f);
  std::vector<int32_t> row(static_cast<size_t>(l.kpad), 0);
  // 4-bit filters as stored, [outputs][inputs / 2] bytes (input 2i in the low nibble), read a byte
  // at a time; others (transposed, 8-bit) element by element.
  const bool packed_rows = l.nibbles && !t;
  const int64_t row_bytes = (w.shape.back() + 1) / 2;
  for (int64_t o = 0; o < l.n; ++o) {
    const int64_t tile = o / kQd8Tile, j = o % kQd8Tile;
    if (packed_rows) {
      const uint8_t* src = w.constant.data() + o * row_bytes;
      int32_t* r = row.data();
      for (int64_t i = 0; i < l.k / 2; ++i) {
        r[2 * i] = (src[i] & 0x0f) - 8;
        r[2 * i + 1] = (src[i] >> 4) - 8;
      }
      if (l.k % 2 != 0) r[l.k - 1] = (src[l.k / 2] & 0x0f) - 8;
    } else {
      for (int64_t k = 0; k < l.k; ++k) row[static_cast<size_t>(k)] = t ? filter_int(w, k, o) : filter_int(w, o, k);
    }
    // The tile's bytes for output j: per group of 8 inputs (4-bit) or 4 (8-bit), 4 bytes; row
    // is zero past the inputs, up to kpad.
    uint8_t* tp = l.packed.data() + tile * l.tile_bytes() + j * 4;
    const int32_t* r = row.data();
    if (l.nibbles) {
      for (int64_t p = 0; p < l.kpad / 8; ++p) {
        for (int64_t q = 0; q < 4; ++q) {
          const uint32_t lo = static_cast<uint32_t>(r[8 * p + q]) & 0xfu, hi = static_cast<uint32_t>(r[8 * p + 4 + q]) & 0xfu;
          tp[p * kQd8Tile * 4 + q] = static_cast<uint8_t>(lo | (hi << 4));
        }
      }
    } else {
      for (int64_t g = 0; g < l.kpad / 4; ++g) {
        for (int64_t q = 0; q < 4; ++q) tp[g * kQd8Tile * 4 + q] = static_cast<uint8_t>(static_cast<int8_t>(r[4 * g + q]));
      }
    }
    for (int64_t b = 0; b < l.blocks; ++b) {
      const int64_t k0 = b * l.block, k1 = std::min(l.k, k0 + l.block);
      int32_t sum = 0;
      for (int64_t k = k0; k < k1; ++k) sum += r[k];
      l.wsum[static_cast<size_t>((tile * l.blocks + b) * kQd8Tile + j)] += sum;
    }
    for (int64_t b = 0; b < l.blocks; ++b) {
      const size_t at = static_cast<size_t>((tile * l.blocks + b) * kQd8Tile + j);
      if (blockwise) {
        // The kernel's filter integers are 16x (shifted left 4): XNNPACK packs scale / 16 in bf16.
        l.scale[at] = round_bf16(round_bf16(w.quant.scales[static_cast<size_t>(o * l.blocks + b)]) / 16.0f);
      } else {
        l.scale[at] = w.quant.scales[static_cast<size_t>(o)];
      }
    }
    if (blockwise) {
      // XNNPACK's packing: the column's float term less each group's sum times its block's scale.
      float f = 0.0f;
      for (int64_t g = 0; g < l.k; g += kPackGroup) {
        int32_t sum = 0;
        for (int64_t k = g; k < std::min(g + kPackGroup, l.k); ++k) sum += row[static_cast<size_t>(k)];
        const float product = static_cast<float>(sum) * round_bf16(w.quant.scales[static_cast<size_t>(o * l.blocks + g / l.block)]);
        f = f - product;
      }
      l.ksum[static_cast<size_t>(o)] = f;
    }
  }
  if (n.inputs[2] >= 0) {
    const xnn::TensorValue& b = value(n.inputs[2]);
    if (b.numel != static_cast<uint64_t>(l.n)) return bad(i, "bias size differs from the outputs");
    std::memcpy(l.bias.data(), b.constant.data(), static_cast<size_t>(l.n) * 4);
  }
  // The kernels read only the packed copy from now on: the filter's pages in the program (most
  // of an LLM's file, mapped) may go (a hint: they come back from the file if read again).
  release_pages(w.constant);
  qd8_of_node[i] = static_cast<int32_t>(qd8_layers.size());
  qd8_layers.push_back(std::move(l));
  return ok_status();
}

// ---------------------------------------------------------------------------------------------
// [running]

namespace {

// acc[r][j] = the sum over `len` inputs (a multiple of 8) of row r's a[k] x the filter integer of
// output j of the tile (16x the integer for 4-bit filters, as XNNPACK's kernels sum them), for
// `nrows` (1 to kQd8Rows) rows `stride` bytes apart, from the packed bytes of those inputs.
// Integer sums: the same whichever instructions compute them.
// What turns a row block's sums for one output tile into outputs, and where they go: rows r0..,
// their zero points and scales, the tile's per-output arrays (tile-major, kQd8Tile wide, padded)
// and the first `width` outputs of each row, `out_stride` floats apart.
struct TileEpilogue {
  const int32_t* zero;     // per row: the input's zero point (int8)
  const float* in_scale;   // per row: the input's scale
  const float* bias;       // per output of the tile
  const float* scale;      // kPerChannel: per output
  const int32_t* wsum;     // kPerChannel: per output
  const float* ksum;       // kPerBlock: per output
  float lo, hi;
  float* out;
  int64_t out_stride, width;
};

constexpr int64_t kQd8Rows = 8;

#if defined(__AVX512VNNI__) && defined(__AVX512BW__)
// The kernels for a fixed number of rows NR, so that every row's sums stay in registers.
// The filter bytes kQd8Prefetch ahead are asked for in advance (the hardware's prefetchers stop
// at page boundaries): a single row (decode) streams each filter byte once (a 1B-shaped LLM's
// decode went from about 13 to 17 tokens/s with it, bench/llm.md); several rows (prefill) read a
// tile from memory for their first block of rows (the 135M shape's 32-token prefill: its layers
// 40-46 -> 33-37 ms; 2 KiB ahead did no better). A prefetch never faults, so the last ones may
// point past the filter.
constexpr int64_t kQd8Prefetch = 8192;

template <int NR>
void tile_sums_n(const uint8_t* a, int64_t stride, const uint8_t* w, int64_t len, bool nibbles, __m512i* sum) {
  __m512i high_sum[NR];  // a single row's second chain (see blockwise_tile_n)
  for (int r = 0; r < NR; ++r) sum[r] = high_sum[r] = _mm512_setzero_si512();
  auto broadcast = [&](int r, int64_t at) {
    uint32_t v;
    std::memcpy(&v, a + r * stride + at, 4);
    return _mm512_set1_epi32(static_cast<int32_t>(v));
  };
  if (nibbles) {
    const __m512i high = _mm512_set1_epi8(static_cast<char>(0xf0));
    for (int64_t p = 0; p < len / 8; ++p) {
      _mm_prefetch(reinterpret_cast<const char*>(w + p * kQd8Tile * 4 + kQd8Prefetch), _MM_HINT_T0);
      const __m512i bytes = _mm512_loadu_si512(w + p * kQd8Tile * 4);
      const __m512i wl = _mm512_and_si512(_mm512_slli_epi16(bytes, 4), high);
      const __m512i wh = _mm512_and_si512(bytes, high);
      for (int r = 0; r < NR; ++r) {  // one row: two chains (see blockwise_tile_n), added below
        sum[r] = dpbusd(sum[r], broadcast(r, 8 * p), wl);
        if constexpr (NR == 1) {
          high_sum[r] = dpbusd(high_sum[r], broadcast(r, 8 * p + 4), wh);
        } else {
          sum[r] = dpbusd(sum[r], broadcast(r, 8 * p + 4), wh);
        }
      }
    }
    if constexpr (NR == 1) sum[0] = _mm512_add_epi32(sum[0], high_sum[0]);
  } else {
    for (int64_t g = 0; g < len / 4; ++g) {
      _mm_prefetch(reinterpret_cast<const char*>(w + g * kQd8Tile * 4 + kQd8Prefetch), _MM_HINT_T0);
      const __m512i wg = _mm512_loadu_si512(w + g * kQd8Tile * 4);
      for (int r = 0; r < NR; ++r) sum[r] = dpbusd(sum[r], broadcast(r, 4 * g), wg);
    }
  }
}

// min(hi, max(lo, f)) as std::min(std::max(f, lo), hi) computes it: maxps and minps return their
// second operand when either is NaN, so a NaN stays NaN.
inline __m512 clamp_ps(__m512 f, __m512 lo, __m512 hi) { return _mm512_min_ps(hi, _mm512_max_ps(lo, f)); }

// The per-channel layers' outputs from their int32 sums: (sum [>> 4 for 4-bit] - (zero point +
// 128) x the filter's integer sum) as float, times the input's scale, then fma with the filter's
// scale and the bias, clamped: the scalar path's operations, 16 outputs at a time.
template <int NR>
void per_channel_outputs(const __m512i* sum, bool nibbles, const TileEpilogue& e) {
  const __m512i wsum = _mm512_loadu_si512(e.wsum);
  const __m512 scale = _mm512_loadu_ps(e.scale), bias = _mm512_loadu_ps(e.bias);
  const __m512 lo = _mm512_set1_ps(e.lo), hi = _mm512_set1_ps(e.hi);
  const __mmask16 m = kernels::first_lanes(e.width);
  for (int r = 0; r < NR; ++r) {
    const __m512i s = nibbles ? _mm512_srai_epi32(sum[r], 4) : sum[r];
    const __m512i z = _mm512_mullo_epi32(_mm512_set1_epi32(e.zero[r] + 128), wsum);
    const __m512 f = _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_sub_epi32(s, z)), _mm512_set1_ps(e.in_scale[r]));
    kernels::store_lanes(e.out + r * e.out_stride, m, clamp_ps(_mm512_fmadd_ps(f, scale, bias), lo, hi));
  }
}

// A blockwise layer's outputs from each row's float terms: times the input's scale, plus the bias,
// clamped (the scalar path's operations, 16 outputs at a time).
template <int NR>
void blockwise_outputs(const __m512* f, const TileEpilogue& e) {
  const __m512 bias = _mm512_loadu_ps(e.bias);
  const __m512 lo = _mm512_set1_ps(e.lo), hi = _mm512_set1_ps(e.hi);
  const __mmask16 m = kernels::first_lanes(e.width);
  for (int r = 0; r < NR; ++r) {
    const __m512 g = _mm512_add_ps(_mm512_mul_ps(f[r], _mm512_set1_ps(e.in_scale[r])), bias);
    kernels::store_lanes(e.out + r * e.out_stride, m, clamp_ps(g, lo, hi));
  }
}

template <int NR>
void per_channel_tile_n(const uint8_t* a, int64_t stride, const uint8_t* w, int64_t len, bool nibbles, const TileEpilogue& e) {
  __m512i sum[NR];
  tile_sums_n<NR>(a, stride, w, len, nibbles, sum);
  per_channel_outputs<NR>(sum, nibbles, e);
}

// A blockwise 4-bit tile: per row, the column's float term times (zero point + 128), then per
// block in order fma(float(block sum), block scale, that), then times the input's scale, plus
// the bias, clamped; every float of a row in one register from start to end.
template <int NR>
void blockwise_tile_n(const uint8_t* a, int64_t stride, const uint8_t* w, const float* scale, int64_t block, int64_t blocks,
                      const TileEpilogue& e) {
  __m512 f[NR];
  const __m512 ksum = _mm512_loadu_ps(e.ksum);
  for (int r = 0; r < NR; ++r) f[r] = _mm512_mul_ps(ksum, _mm512_set1_ps(static_cast<float>(e.zero[r] + 128)));
  const __m512i high = _mm512_set1_epi8(static_cast<char>(0xf0));
  // A single row (a decode step) sums in four independent chains (low and high nibbles apart, two
  // groups of inputs at a time), added at the end of the block: dot-product instructions have a
  // latency of several cycles, and one chain left it waiting on them (several rows are chains
  // enough). Integer sums, wrapping in 32 bits: the same in any order. Blocks are a multiple of 32
  // inputs (qd8_layer), so of U groups of 8.
  constexpr int U = NR == 1 ? 2 : 1;
  for (int64_t b = 0; b < blocks; ++b) {
    __m512i lo[U][NR], hi[U][NR];
    for (int u = 0; u < U; ++u) {
      for (int r = 0; r < NR; ++r) lo[u][r] = hi[u][r] = _mm512_setzero_si512();
    }
    const uint8_t* wb = w + b * block * kQd8Tile / 2;
    const uint8_t* ab = a + b * block;
    for (int64_t p0 = 0; p0 < block / 8; p0 += U) {
      for (int u = 0; u < U; ++u) {
        const int64_t p = p0 + u;
        _mm_prefetch(reinterpret_cast<const char*>(wb + p * kQd8Tile * 4 + kQd8Prefetch), _MM_HINT_T0);
        const __m512i bytes = _mm512_loadu_si512(wb + p * kQd8Tile * 4);
        const __m512i wl = _mm512_and_si512(_mm512_slli_epi16(bytes, 4), high);
        const __m512i wh = _mm512_and_si512(bytes, high);
        for (int r = 0; r < NR; ++r) {
          uint32_t lo4, hi4;
          std::memcpy(&lo4, ab + r * stride + 8 * p, 4);
          std::memcpy(&hi4, ab + r * stride + 8 * p + 4, 4);
          lo[u][r] = dpbusd(lo[u][r], _mm512_set1_epi32(static_cast<int32_t>(lo4)), wl);
          if constexpr (NR == 1) {
            hi[u][r] = dpbusd(hi[u][r], _mm512_set1_epi32(static_cast<int32_t>(hi4)), wh);
          } else {
            lo[u][r] = dpbusd(lo[u][r], _mm512_set1_epi32(static_cast<int32_t>(hi4)), wh);
          }
        }
      }
    }
    const __m512 s = _mm512_loadu_ps(scale + b * kQd8Tile);
    for (int r = 0; r < NR; ++r) {
      __m512i sum = lo[0][r];
      for (int u = 1; u < U; ++u) sum = _mm512_add_epi32(sum, lo[u][r]);
      if constexpr (NR == 1) {
        for (int u = 0; u < U; ++u) sum = _mm512_add_epi32(sum, hi[u][r]);
      }
      f[r] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(sum), s, f[r]);
    }
  }
  blockwise_outputs<NR>(f, e);
}

// Calls f(std::integral_constant<int, NR>) for nrows (1..kQd8Rows) as a compile-time constant.
template <typename F>
void for_rows(int64_t nrows, F f) {
  switch (nrows) {
    case 1: f(std::integral_constant<int, 1>{}); break;
    case 2: f(std::integral_constant<int, 2>{}); break;
    case 3: f(std::integral_constant<int, 3>{}); break;
    case 4: f(std::integral_constant<int, 4>{}); break;
    case 5: f(std::integral_constant<int, 5>{}); break;
    case 6: f(std::integral_constant<int, 6>{}); break;
    case 7: f(std::integral_constant<int, 7>{}); break;
    default: f(std::integral_constant<int, 8>{}); break;
  }
}
#endif

#if !(defined(__AVX512VNNI__) && defined(__AVX512BW__))
// acc[r][j] as above, for machines without AVX-512 VNNI.
void tile_sums(const uint8_t* a, int64_t stride, int64_t nrows, const uint8_t* w, int64_t len, bool nibbles, int32_t (*acc)[kQd8Tile]) {
  for (int64_t r = 0; r < nrows; ++r) {
    const uint8_t* ar = a + r * stride;
    int32_t* out = acc[r];
    for (int64_t j = 0; j < kQd8Tile; ++j) out[j] = 0;
    if (nibbles) {
      for (int64_t p = 0; p < len / 8; ++p) {
        const uint8_t* wp = w + p * kQd8Tile * 4;
        for (int64_t j = 0; j < kQd8Tile; ++j) {
          for (int64_t q = 0; q < 4; ++q) {
            const uint8_t byte = wp[j * 4 + q];
            out[j] += static_cast<int32_t>(ar[8 * p + q]) * static_cast<int8_t>(static_cast<uint8_t>(byte << 4)) +
                      static_cast<int32_t>(ar[8 * p + 4 + q]) * static_cast<int8_t>(byte & 0xf0);
          }
        }
      }
    } else {
      for (int64_t g = 0; g < len / 4; ++g) {
        const int8_t* wp = reinterpret_cast<const int8_t*>(w + g * kQd8Tile * 4);
        for (int64_t j = 0; j < kQd8Tile; ++j) {
          for (int64_t q = 0; q < 4; ++q) out[j] += static_cast<int32_t>(ar[4 * g + q]) * wp[j * 4 + q];
        }
      }
    }
  }
}
#endif

// The outputs of `nr` rows (1 to kQd8Rows, `a` their uint8 inputs kpad apart) for output tile t,
// whose packed filter is `wt`.
void tile_rows(const Qd8Layer& l, const uint8_t* a, int64_t nr, const uint8_t* wt, int64_t t, const TileEpilogue& e) {
  const float* scale = l.scale.data() + t * l.blocks * kQd8Tile;
#if defined(__AVX512VNNI__) && defined(__AVX512BW__)
  for_rows(nr, [&](auto rows) {
    constexpr int NR = decltype(rows)::value;
    if (l.kind == Qd8Layer::Weights::kPerChannel) {
      per_channel_tile_n<NR>(a, l.kpad, wt, l.kpad, l.nibbles, e);
    } else {
      blockwise_tile_n<NR>(a, l.kpad, wt, scale, l.block, l.blocks, e);
    }
  });
#else
  alignas(64) int32_t acc[kQd8Rows][kQd8Tile];
  if (l.kind == Qd8Layer::Weights::kPerChannel) {
    // The int32 sum of (input - zero point) x filter, times the input's scale; then the filter's
    // scale and the bias in one fused multiply-add.
    tile_sums(a, l.kpad, nr, wt, l.kpad, l.nibbles, acc);
    for (int64_t r = 0; r < nr; ++r) {
      const int32_t zero_u = e.zero[r] + 128;
      float* o = e.out + r * e.out_stride;
      for (int64_t j = 0; j < e.width; ++j) {
        const int32_t sum = (l.nibbles ? acc[r][j] >> 4 : acc[r][j]) - zero_u * e.wsum[j];
        const float f = static_cast<float>(sum) * e.in_scale[r];
        o[j] = std::min(std::max(std::fma(f, e.scale[j], e.bias[j]), e.lo), e.hi);
      }
    }
    return;
  }
  // Blockwise 4-bit filters: the column's float term times the zero point (+ 128), then per block
  // the int32 sum of (input + 128) x 16 x filter fused into it with the block's scale / 16; then
  // times the input's scale, plus the bias, clamped.
  float v[kQd8Rows][kQd8Tile];
  for (int64_t r = 0; r < nr; ++r) {
    const float zero_u = static_cast<float>(e.zero[r] + 128);
    for (int64_t j = 0; j < kQd8Tile; ++j) v[r][j] = e.ksum[j] * zero_u;
  }
  for (int64_t b = 0; b < l.blocks; ++b) {
    tile_sums(a + b * l.block, l.kpad, nr, wt + b * l.block * kQd8Tile / 2, l.block, true, acc);
    for (int64_t r = 0; r < nr; ++r) {
      for (int64_t j = 0; j < kQd8Tile; ++j) v[r][j] = std::fma(static_cast<float>(acc[r][j]), scale[b * kQd8Tile + j], v[r][j]);
    }
  }
  for (int64_t r = 0; r < nr; ++r) {
    float* o = e.out + r * e.out_stride;
    for (int64_t j = 0; j < e.width; ++j) {
      float f = v[r][j] * e.in_scale[r];
      f = f + e.bias[j];
      o[j] = std::min(std::max(f, e.lo), e.hi);
    }
  }
#endif
}

// The epilogue of output tile t for rows from r0 on.
TileEpilogue tile_epilogue(const Qd8Layer& l, const DynamicRows& x, int64_t t, int64_t r0, float* out) {
  const size_t at = static_cast<size_t>(t * kQd8Tile);
  TileEpilogue e{};
  e.bias = l.bias.data() + at;
  e.scale = l.scale.data() + at;
  e.wsum = l.wsum.data() + at;
  e.ksum = l.ksum.data() + at;
  e.lo = l.lo;
  e.hi = l.hi;
  e.out_stride = l.n;
  e.width = std::min(kQd8Tile, l.n - t * kQd8Tile);
  e.zero = x.zero.data() + r0;
  e.in_scale = x.scale.data() + r0;
  e.out = out + r0 * l.n + t * kQd8Tile;
  return e;
}

#if ETSCOPE_MATRIX_TILES
#define ETSCOPE_QD8_TILES 1
// [tiles] The same integer sums on AMX tiles: tdpbusd multiplies 16 rows of 64 uint8 inputs
// with 64 int8 filter values of 16 outputs (grouped by 4, the packed 8-bit layout) at once. Tiles
// 0-3 hold the sums of 2 x 2 blocks of 16 rows x 16 outputs, 4-5 two row tiles' inputs, 6-7 two
// output tiles' filter values. A 4-bit filter is unpacked (x 16, as the AVX-512 path multiplies
// it) once per pair of output tiles for all rows. The sums are exact integers, so everything
// after them (per-block float terms in block order, the epilogue) is the AVX-512 path's, and the
// outputs its bits.
constexpr int64_t kAmxRows = kTileRows;
// kAuto puts a layer on tiles when it has at least this many rows (a tile's 16 cost the same as
// one; 2048 x 2048 layers of 16 rows took 0.63x the AVX-512 path's time, of 8 rows 1.15x) and
// its integer sums run over 64 inputs or more before each float step: per channel, or blocks
// of a multiple of 64 inputs. Blocks of 32 (a 135M-shaped LLM's 8da4w) halve each tile
// product's work and add a float step per 32 inputs: 1.35x the AVX-512 path's time.
constexpr int64_t kAmxMinRows = 12;

// Inputs k0 .. k0 + kc - 1 of output tile t's filter as tdpbusd reads them, at `b`: [kc / 4][16
// outputs][4] int8 (4-bit values x 16: low nibbles, then high ones, of each packed group of 8
// inputs), zeros from kpad on.
void unpack_filter_chunk(const Qd8Layer& l, int64_t t, int64_t k0, int64_t kc, uint8_t* b) {
  const uint8_t* w = l.packed.data() + t * l.tile_bytes();
  const int64_t have = std::clamp<int64_t>(l.kpad - k0, 0, kc);  // inputs the filter has
  if (l.nibbles) {
    const __m512i high = _mm512_set1_epi8(static_cast<char>(0xf0));
    for (int64_t p = 0; p < have / 8; ++p) {
      const uint8_t* src = w + (k0 / 8 + p) * 64;
      _mm_prefetch(reinterpret_cast<const char*>(src + kQd8Prefetch), _MM_HINT_T0);
      const __m512i bytes = _mm512_loadu_si512(src);
      _mm512_store_si512(b + 2 * p * 64, _mm512_and_si512(_mm512_slli_epi16(bytes, 4), high));
      _mm512_store_si512(b + (2 * p + 1) * 64, _mm512_and_si512(bytes, high));
    }
  } else {
    std::memcpy(b, w + k0 * kQd8Tile, static_cast<size_t>(have * kQd8Tile));
  }
  std::memset(b + have * kQd8Tile, 0, static_cast<size_t>((kc - have) * kQd8Tile));
}

struct TileCall {
  const Qd8Layer* l;
  const DynamicRows* x;
  const uint8_t* a;  // rows of ka uint8 inputs, zero rows up to a multiple of 16
  int64_t ka;
  float* out;
  int64_t kc;
  uint8_t* b;        // two unpacked output tiles, ka * 16 bytes each
  int32_t* sums;     // per block: [row tile][output tile][16 rows][16 outputs]
};

constexpr int64_t kTileSums = 2 * 2 * kAmxRows * kQd8Tile;  // int32 sums of one block

// A blockwise layer's outputs for NR rows of one output tile from their block sums (`sums`: the
// first row's of block 0, rows 16 apart, blocks kTileSums apart): the AVX-512 path's float terms,
// block by block in order, each row's in a register.
template <int NR>
void blockwise_from_sums(const int32_t* sums, const float* scale, int64_t blocks, const TileEpilogue& e) {
  __m512 f[NR];
  const __m512 ksum = _mm512_loadu_ps(e.ksum);
  for (int r = 0; r < NR; ++r) f[r] = _mm512_mul_ps(ksum, _mm512_set1_ps(static_cast<float>(e.zero[r] + 128)));
  for (int64_t b = 0; b < blocks; ++b) {
    const __m512 s = _mm512_loadu_ps(scale + b * kQd8Tile);
    const int32_t* sb = sums + b * kTileSums;
    for (int r = 0; r < NR; ++r) f[r] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(_mm512_load_si512(sb + r * kQd8Tile)), s, f[r]);
  }
  blockwise_outputs<NR>(f, e);
}

// Rows r0 .. r0 + nr - 1 (NA row tiles) of output tiles t .. t + NB - 1: every block's sums on
// the tiles first, then the float terms and outputs from them.
// With `unpack` (the first rows of these output tiles), each chunk of their filters is unpacked
// right before its products: the filter's bytes arrive from memory while the tiles compute.
template <int NA, int NB>
void tile_block(const TileCall& c, int64_t r0, int64_t nr, int64_t t, bool unpack) {
  const Qd8Layer& l = *c.l;
  const DynamicRows& x = *c.x;
  const bool blockwise = l.kind == Qd8Layer::Weights::kPerBlock;
  const int64_t blocks = blockwise ? l.blocks : 1;
  const int64_t per_block = blockwise ? l.block : c.ka;  // inputs summed before the float terms
  const uint8_t* a0 = c.a + r0 * c.ka;
  const uint8_t* a1 = a0 + kAmxRows * c.ka;
  auto at = [&](int64_t blk, int i, int j) { return c.sums + blk * kTileSums + (i * 2 + j) * kAmxRows * kQd8Tile; };
  // Unpacking runs a chunk ahead of the products: a tile load of bytes just stored waits for the
  // stores to reach the cache.
  const int64_t k_end = blocks * per_block;
  auto unpack_at = [&](int64_t k0) {
    for (int j = 0; j < NB; ++j) unpack_filter_chunk(l, t + j, k0, c.kc, c.b + (j * c.ka + k0) * kQd8Tile);
  };
  if (unpack) unpack_at(0);
  for (int64_t blk = 0; blk < blocks; ++blk) {
    zero_sums_2x2<NA, NB>();
    for (int64_t k0 = blk * per_block; k0 < (blk + 1) * per_block; k0 += c.kc) {
      if (unpack && k0 + c.kc < k_end) unpack_at(k0 + c.kc);
      add_products_2x2<NA, NB>(a0 + k0, a1 + k0, c.ka, c.b + k0 * kQd8Tile, c.b + (c.ka + k0) * kQd8Tile);
    }
    store_sums_2x2<NA, NB>([&](int i, int j) { return at(blk, i, j); });
  }
  for (int i = 0; i < NA; ++i) {
    const int64_t rows = std::min(kAmxRows, nr - i * kAmxRows);
    for (int j = 0; j < NB; ++j) {
      for (int64_t r = 0; r < rows; r += kQd8Rows) {
        const TileEpilogue e = tile_epilogue(l, x, t + j, r0 + i * kAmxRows + r, c.out);
        const int32_t* first = at(0, i, j) + r * kQd8Tile;
        for_rows(std::min(kQd8Rows, rows - r), [&](auto n) {
          constexpr int NR = decltype(n)::value;
          if (blockwise) {
            blockwise_from_sums<NR>(first, l.scale.data() + (t + j) * l.blocks * kQd8Tile, blocks, e);
          } else {
            __m512i sum[NR];
            for (int q = 0; q < NR; ++q) sum[q] = _mm512_load_si512(first + q * kQd8Tile);
            per_channel_outputs<NR>(sum, l.nibbles, e);
          }
        });
      }
    }
  }
}

// Rows ra .. rb - 1 (ra a multiple of 2 x 16) of output tiles t0 .. t1 - 1, on this thread's tiles.
void tile_rows_range(const Qd8Layer& l, const DynamicRows& x, const uint8_t* a, int64_t ka, float* out, int64_t ra, int64_t rb,
                     int64_t t0, int64_t t1) {
  thread_local kernels::aligned_vector<uint8_t> filter;  // two unpacked output tiles
  thread_local kernels::aligned_vector<int32_t> sums;    // their blocks' sums
  filter.resize(static_cast<size_t>(2 * ka * kQd8Tile));
  sums.resize(static_cast<size_t>((l.kind == Qd8Layer::Weights::kPerBlock ? l.blocks : 1) * kTileSums));
  TileCall c{&l, &x, a, ka, out, 64, filter.data(), sums.data()};
  // Blocks of 32 inputs are summed alone; those of 64 or a multiple, 64 inputs at a time.
  if (l.kind == Qd8Layer::Weights::kPerBlock && l.block % 64 != 0) c.kc = 32;
  configure_tiles_2x2(c.kc);
  for (int64_t t = t0; t < t1; t += 2) {
    const int64_t nb = std::min<int64_t>(2, t1 - t);
    for (int64_t r0 = ra; r0 < rb; r0 += 2 * kAmxRows) {
      const int64_t nr = std::min(2 * kAmxRows, rb - r0);
      const bool unpack = r0 == ra;
      if (nr > kAmxRows) {
        if (nb == 2) tile_block<2, 2>(c, r0, nr, t, unpack); else tile_block<2, 1>(c, r0, nr, t, unpack);
      } else {
        if (nb == 2) tile_block<1, 2>(c, r0, nr, t, unpack); else tile_block<1, 1>(c, r0, nr, t, unpack);
      }
    }
  }
  _tile_release();
}
#else
#define ETSCOPE_QD8_TILES 0
#endif

}  // namespace

void run_fully_connected_qd8(DelegateState& m, const Node& n) {
  const size_t i = static_cast<size_t>(&n - m.graph.nodes.data());
  const Qd8Layer& l = m.qd8_layers[static_cast<size_t>(m.qd8_of_node[i])];
  const DynamicRows& x = m.dynamic_rows[static_cast<size_t>(n.inputs[0])];
  float* out = m.output(n);
  const int64_t rows = l.k > 0 ? m.in_shape(n, 0).numel() / l.k : 0;
#if ETSCOPE_QD8_TILES
  const bool long_sums = l.kind == Qd8Layer::Weights::kPerChannel || l.block % 64 == 0;
  const bool tiles = rows > 0 && (m.tiles == MatrixTiles::kAlways || (m.tiles == MatrixTiles::kAuto && rows >= kAmxMinRows && long_sums));
#else
  const bool tiles = false;
#endif
  // The rows as XNNPACK's qdu8 kernels read them: input + 128 as uint8, zero-padded to kpad (on
  // tiles: to a multiple of 64 inputs, and zero rows up to a multiple of 16).
  const int64_t stride = tiles ? (l.kpad + 63) / 64 * 64 : l.kpad;
  const int64_t padded_rows = tiles ? (rows + 15) / 16 * 16 : rows;
  kernels::aligned_vector<uint8_t>& au = m.qd8_rows;
  au.resize(static_cast<size_t>(padded_rows * stride));
  {
    // Raw pointers: byte stores through the vector's own storage would reload everything. An
    // int8 plus 128 as uint8 is its sign bit flipped, 64 at a time where AVX-512 is.
    const int64_t k = l.k;
    const int8_t* __restrict src = x.q.data();
    uint8_t* __restrict dst = au.data();
    for (int64_t r = 0; r < rows; ++r) {
      int64_t c = 0;
#if defined(__AVX512VNNI__) && defined(__AVX512BW__)
      const __m512i sign = _mm512_set1_epi8(static_cast<char>(0x80));
      for (; c < k; c += 64) {
        const __mmask64 m = k - c >= 64 ? ~__mmask64{0} : (__mmask64{1} << (k - c)) - 1;
        kernels::store_lanes(dst + r * stride + c, m, _mm512_xor_si512(_mm512_maskz_loadu_epi8(m, src + r * k + c), sign));
      }
#endif
      for (; c < k; ++c) dst[r * stride + c] = static_cast<uint8_t>(src[r * k + c] + 128);
      std::memset(dst + r * stride + k, 0, static_cast<size_t>(stride - k));  // only the padding is zeroed
    }
    if (padded_rows > rows) std::memset(dst + rows * stride, 0, static_cast<size_t>((padded_rows - rows) * stride));
  }
#if ETSCOPE_QD8_TILES
  if (tiles) {
    // Blocks of 32 rows, or of pairs of output tiles, over the method's threads.
    for_blocks(worth_splitting(m.parallel, rows * l.n * l.kpad), rows, 2 * kAmxRows, l.tiles, 2, [&](int64_t ra, int64_t rb, int64_t t0, int64_t t1) {
      tile_rows_range(l, x, au.data(), stride, out, ra, rb, t0, t1);
    });
    return;
  }
#endif
  // Blocks of rows (prefill), or of output tiles for fewer rows (decode: one row), over the
  // method's threads; each output computed as on one.
  for_blocks(worth_splitting(m.parallel, rows * l.n * l.kpad), rows, 4 * kQd8Rows, l.tiles, 1, [&](int64_t ra, int64_t rb, int64_t t0, int64_t t1) {
    for (int64_t t = t0; t < t1; ++t) {
      const uint8_t* wt = l.packed.data() + t * l.tile_bytes();
      for (int64_t r0 = ra; r0 < rb; r0 += kQd8Rows) {
        tile_rows(l, au.data() + r0 * l.kpad, std::min(kQd8Rows, rb - r0), wt, t, tile_epilogue(l, x, t, r0, out));
      }
    }
  });
}

}  // namespace etscope::runtime::xnnpack
