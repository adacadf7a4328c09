// Transcendental elementwise nodes on floats and softmax. With AVX-512: XNNPACK's own arithmetic
// for GELU, tanh, exp, sigmoid, log and softmax (bit for bit). Elsewhere, Eigen's vectorized exp,
// tanh and erf and std::log (within float tolerance of XNNPACK's approximations, not bit for bit).
// The scalar forms in elementwise_ops.h stay for the nodes that compute one value at a time.
#include <algorithm>
#include <cmath>

#if defined(__AVX512F__)
#include <immintrin.h>
#endif

#include <Eigen/Core>
#include <unsupported/Eigen/SpecialFunctions>

#include "etscope/runtime/method.h"
#include "kernels/util/lanes.h"
#include "xnnpack/elementwise_ops.h"
#include "xnnpack/node_table.h"

namespace etscope::runtime::xnnpack {
namespace {

// Eigen evaluates an expression over an unaligned buffer with scalar code up to the first
// aligned element and after the last whole packet, so a value's result (an ulp of exp's, a
// sum's order) would depend on where the buffer happens to start. Every block of kBlock values
// goes through aligned buffers of fixed size instead: the same instructions for every element at
// any address, so a run gives the same bytes whatever the allocations before it.
constexpr Eigen::Index kBlock = 64;
using Block = Eigen::Map<Eigen::Array<float, kBlock, 1>, Eigen::Aligned64>;
using ConstBlock = Eigen::Map<const Eigen::Array<float, kBlock, 1>, Eigen::Aligned64>;

// f(block, i, len) for each block of count values of x in turn, copied into an aligned buffer
// (the last padded with zeros).
template <typename F>
void for_each_block(const float* x, int64_t count, F f) {
  alignas(64) float in[kBlock];
  for (int64_t i = 0; i < count; i += kBlock) {
    const int64_t len = std::min<int64_t>(kBlock, count - i);
    std::copy(x + i, x + i + len, in);
    std::fill(in + len, in + kBlock, 0.0f);
    f(ConstBlock(in), i, len);
  }
}

// out[i] = f(x)[i] for count values (x may be out), a block at a time.
template <typename F>
void blockwise(const float* x, float* out, int64_t count, F f) {
  alignas(64) float res[kBlock];
  for_each_block(x, count, [&](const ConstBlock& a, int64_t i, int64_t len) {
    Block o(res);
    f(a, o);
    std::copy(res, res + len, out + i);
  });
}

// out = f(x) over node n's input 0, then its output range.
template <typename F>
void run_vector(DelegateState& m, const Node& n, F f) {
  blockwise(m.input(n, 0), m.output(n), m.out_shape(n).numel(), f);
  apply_output_range(m, n);
}

}  // namespace

#if defined(__AVX512F__)
namespace {

// out = f(x) over n values, 16 at a time (the rest masked), then node n's output range.
template <typename F>
void run_map16(DelegateState& m, const Node& n, F f) {
  const float* x = m.input(n, 0);
  float* out = m.output(n);
  const int64_t count = m.out_shape(n).numel();
  int64_t i = 0;
  for (; i + 16 <= count; i += 16) _mm512_storeu_ps(out + i, f(_mm512_loadu_ps(x + i)));
  if (i < count) {
    const __mmask16 k = kernels::first_lanes(count - i);
    _mm512_mask_storeu_ps(out + i, k, f(_mm512_maskz_loadu_ps(k, x + i)));
  }
  apply_output_range(m, n);
}

// c[0] x^(N-1) + ... + c[N-1] in Horner's form, a fused multiply-add per step.
template <size_t N>
inline __m512 horner(__m512 x, const float (&c)[N]) {
  __m512 p = _mm512_fmadd_ps(x, _mm512_set1_ps(c[0]), _mm512_set1_ps(c[1]));
  for (size_t k = 2; k < N; ++k) p = _mm512_fmadd_ps(x, p, _mm512_set1_ps(c[k]));
  return p;
}

// x clamped to [-bound, bound], the bound first (a NaN stays NaN).
inline __m512 clamp_abs(__m512 x, float bound) { return _mm512_min_ps(_mm512_set1_ps(bound), _mm512_max_ps(_mm512_set1_ps(-bound), x)); }

// XNNPACK's AVX-512 GELU ("rational_12_10_div"): erf(x / sqrt 2) as x times a ratio of
// polynomials in x^2 (x clamped where erf is 1), then x / 2 times (1 + that).
inline __m512 gelu16(__m512 x) {
  static constexpr float p[] = {4.5835321316e-8f, 1.2609783880e-5f, 3.2973114867e-4f, 9.3065137044e-3f, 6.6972173750e-2f, 7.9788452387e-1f};
  static constexpr float q[] = {1.1988805682e-6f, 7.2267655923e-5f, 1.8622842617e-3f, 2.8431978077e-2f, 2.5060352683e-1f, 1.0f};
  const __m512 xc = clamp_abs(x, 5.1638283730f);
  const __m512 x2 = _mm512_mul_ps(xc, xc);
  const __m512 erf = _mm512_div_ps(_mm512_mul_ps(xc, horner(x2, p)), horner(x2, q));
  return _mm512_mul_ps(_mm512_mul_ps(x, _mm512_set1_ps(0.5f)), _mm512_add_ps(erf, _mm512_set1_ps(1.0f)));
}

// XNNPACK's AVX-512 tanh ("rational_9_8_div"): x times a ratio of polynomials in x^2, x clamped
// where tanh is +-1 in float.
inline __m512 tanh16(__m512 x) {
  static constexpr float p[] = {1.4248920266e-8f, 2.1235626264e-5f, 3.5330520477e-3f, 1.3412411511e-1f, 1.0f};
  static constexpr float q[] = {8.1365948290e-7f, 3.3472978976e-4f, 2.6018999517e-2f, 4.6745735407e-1f, 1.0f};
  const __m512 xc = clamp_abs(x, 7.9807181358f);
  const __m512 x2 = _mm512_mul_ps(xc, xc);
  return _mm512_div_ps(_mm512_mul_ps(xc, horner(x2, p)), horner(x2, q));
}

// XNNPACK's AVX-512 exp ("rational_3_2_div"): x log2 e (clamped to [-127, 128]) split into an
// integer z, rounded with a magic bias, and r; 2^z from z's bits, 2^r a ratio of polynomials.
inline __m512 exp16(__m512 x) {
  static constexpr float p[] = {5.5380910635e-3f, 7.2068706155e-2f, 4.1594290733e-1f, 1.0f};
  static constexpr float q[] = {2.3986088112e-2f, -2.7720427513e-1f, 1.0f};
  __m512 z = _mm512_mul_ps(x, _mm512_set1_ps(1.44269504089f));
  z = _mm512_min_ps(_mm512_set1_ps(128.0f), _mm512_max_ps(_mm512_set1_ps(-127.0f), z));
  const __m512 magic = _mm512_set1_ps(12582912.0f);
  const __m512 zi = _mm512_sub_ps(_mm512_add_ps(z, magic), magic);
  const __m512 r = _mm512_sub_ps(z, zi);
  const __m512 two_z = _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_castps_si512(_mm512_add_ps(zi, _mm512_set1_ps(8388735.0f))), 23));
  return _mm512_mul_ps(two_z, _mm512_div_ps(horner(r, p), horner(r, q)));
}

// XNNPACK's AVX-512 log ("rational_3_3_div"): x times sqrt 2 split into its exponent e
// (getexp; -inf for zero, NaN below) and its mantissa m in [1, 2), moved to m / sqrt 2 - 1 (a
// product and a difference, not fused: XNNPACK's is built without contraction); log(1 + m) a
// ratio of polynomials; then e ln 2 + that.
inline __m512 log16(__m512 x) {
  const __m512 one = _mm512_set1_ps(1.0f), zero = _mm512_setzero_ps();
  x = _mm512_mul_ps(x, _mm512_set1_ps(1.4142134190e+00f));
  __m512 e = _mm512_getexp_ps(x);
  e = _mm512_castsi512_ps(_mm512_mask_set1_epi32(_mm512_castps_si512(e), _mm512_cmp_ps_mask(x, zero, _CMP_EQ_OQ), static_cast<int32_t>(0xFF800000u)));
  e = _mm512_castsi512_ps(_mm512_mask_set1_epi32(_mm512_castps_si512(e), _mm512_cmp_ps_mask(x, zero, _CMP_LT_OQ), 0x7FC00001));
  __m512 m = _mm512_or_ps(_mm512_and_ps(x, _mm512_castsi512_ps(_mm512_set1_epi32(0x007FFFFF))), one);
  m = _mm512_mul_ps(m, _mm512_set1_ps(7.0710688829e-01f));
  asm("" : "+v"(m));  // the product rounded before the difference (no fused multiply-subtract)
  m = _mm512_sub_ps(m, one);
  const __m512 p = _mm512_mul_ps(m, _mm512_fmadd_ps(m, _mm512_fmadd_ps(m, _mm512_set1_ps(1.824996918440e-01f), one), one));
  __m512 q = _mm512_fmadd_ps(m, _mm512_set1_ps(0.049584995955f), _mm512_set1_ps(0.599170029163f));
  q = _mm512_fmadd_ps(m, q, _mm512_set1_ps(1.5f));
  q = _mm512_fmadd_ps(m, q, one);
  return _mm512_fmadd_ps(e, _mm512_set1_ps(0.693147180559945309f), _mm512_div_ps(p, q));
}

// 2^(k / 32) for k = 0..31, in two registers of 16 (sigmoid16's table).
struct Exp2Table {
  __m512 lo, hi;
  Exp2Table() {
    alignas(64) float t[32];
    for (int k = 0; k < 32; ++k) t[k] = static_cast<float>(std::exp2(k / 32.0));
    lo = _mm512_load_ps(t);
    hi = _mm512_load_ps(t + 16);
  }
};

// XNNPACK's AVX-512 sigmoid ("rr2_lut32_p2_perm2_scalef_div"): e = exp(-|x|) as 2^(n / 32)
// (n rounded with a magic bias; 2^(n mod 32 / 32) from a table, the power of two by scalef)
// times a degree-2 polynomial in the rest t (ln 2 in two parts); then e / (e + 1), or 1 less that
// for x >= 0.
inline __m512 sigmoid16(__m512 x) {
  static const Exp2Table table;
  const __m512i sign = _mm512_set1_epi32(static_cast<int32_t>(0x80000000u));
  const __m512 magic = _mm512_set1_ps(0x1.800000p18f);
  const __m512 z = _mm512_castsi512_ps(_mm512_or_epi32(_mm512_castps_si512(x), sign));
  __m512 n = _mm512_fmadd_ps(z, _mm512_set1_ps(0x1.715476p0f), magic);
  const __m512 l = _mm512_permutex2var_ps(table.lo, _mm512_castps_si512(n), table.hi);
  n = _mm512_sub_ps(n, magic);
  __m512 t = _mm512_fmadd_ps(n, _mm512_set1_ps(-0x1.62E430p-1f), z);
  t = _mm512_fmadd_ps(n, _mm512_set1_ps(0x1.05C61p-29f), t);
  __m512 p = _mm512_fmadd_ps(t, _mm512_set1_ps(0.5f), _mm512_set1_ps(0x1.0000F6p0f));
  t = _mm512_mul_ps(t, l);
  p = _mm512_fmadd_ps(t, p, l);
  const __m512 e = _mm512_scalef_ps(p, n);
  const __m512 one = _mm512_set1_ps(1.0f);
  const __m512 f = _mm512_div_ps(e, _mm512_add_ps(e, one));
  return _mm512_mask_sub_ps(f, _mm512_testn_epi32_mask(_mm512_castps_si512(x), sign), one, f);
}

}  // namespace

// With AVX-512: XNNPACK's own arithmetic for GELU, tanh, exp, sigmoid and log (bit for bit);
// else Eigen's (std::log).
void run_gelu(DelegateState& m, const Node& n) { run_map16(m, n, gelu16); }
void run_exp(DelegateState& m, const Node& n) { run_map16(m, n, exp16); }
void run_tanh(DelegateState& m, const Node& n) { run_map16(m, n, tanh16); }
void run_sigmoid(DelegateState& m, const Node& n) { run_map16(m, n, sigmoid16); }
void run_log(DelegateState& m, const Node& n) { run_map16(m, n, log16); }
#else
void run_gelu(DelegateState& m, const Node& n) {
  run_vector(m, n, [](const ConstBlock& x, Block& out) { out = 0.5f * x * (1.0f + (x * 0.70710678118654752f).erf()); });
}

void run_exp(DelegateState& m, const Node& n) {
  run_vector(m, n, [](const ConstBlock& x, Block& out) { out = x.exp(); });
}

void run_tanh(DelegateState& m, const Node& n) {
  run_vector(m, n, [](const ConstBlock& x, Block& out) { out = x.tanh(); });
}

void run_sigmoid(DelegateState& m, const Node& n) {
  run_vector(m, n, [](const ConstBlock& x, Block& out) { out = (1.0f + (-x).exp()).inverse(); });
}

void run_log(DelegateState& m, const Node& n) { run_unary<op_log>(m, n); }
#endif

#if defined(__AVX512F__)
namespace {

// exp(x - top) for 16 values as XNNPACK's AVX-512 softmax computes it (its f32
// raddstoreexpminusmax kernel "avx512f_rr2_p5"): x - top split into n ln 2 + t (n rounded with a
// magic bias, ln 2 in two parts), 2^n made from n's bits, e^t a degree-5 polynomial in Horner
// form; every step a fused multiply-add where XNNPACK has one. Below the cutoff the result is +0.
// The delegate runs with denormals flushed, as XNNPACK runs its operators, and t * 2^n relies on it.
inline __m512 exp_minus_top16(__m512 x, __m512 top) {
  const __m512 log2e = _mm512_set1_ps(0x1.715476p+0f), magic = _mm512_set1_ps(0x1.8000FEp23f);
  const __m512 minus_ln2_hi = _mm512_set1_ps(-0x1.62E400p-1f), minus_ln2_lo = _mm512_set1_ps(-0x1.7F7D1Cp-20f);
  const __m512 c5 = _mm512_set1_ps(0x1.0F9F9Cp-7f), c4 = _mm512_set1_ps(0x1.573A1Ap-5f), c3 = _mm512_set1_ps(0x1.555A80p-3f);
  const __m512 c2 = _mm512_set1_ps(0x1.FFFDC6p-2f), c1 = _mm512_set1_ps(0x1.FFFFF6p-1f), cutoff = _mm512_set1_ps(-0x1.5D589Ep6f);
  const __m512 vx = _mm512_sub_ps(x, top);
  __m512 vn = _mm512_fmadd_ps(vx, log2e, magic);
  const __m512 vs = _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_castps_si512(vn), 23));
  vn = _mm512_sub_ps(vn, magic);
  __m512 vt = _mm512_fmadd_ps(vn, minus_ln2_hi, vx);
  vt = _mm512_fmadd_ps(vn, minus_ln2_lo, vt);
  __m512 vp = _mm512_fmadd_ps(c5, vt, c4);
  vp = _mm512_fmadd_ps(vp, vt, c3);
  vp = _mm512_fmadd_ps(vp, vt, c2);
  vp = _mm512_fmadd_ps(vp, vt, c1);
  vt = _mm512_mul_ps(vt, vs);
  const __m512 vf = _mm512_fmadd_ps(vt, vp, vs);
  return _mm512_maskz_mov_ps(_mm512_cmp_ps_mask(vx, cutoff, _CMP_NLT_US), vf);
}

// XNNPACK's softmax of one row of n values (n > 0) on AVX-512: the row's largest value; each
// exp(x - top) stored and summed in two accumulators of 16 lanes over blocks of 64 (its "u64
// acc2" kernel: chunks 0 and 2 into the first, 1 and 3 into the second), then together, the
// whole 16s and the masked rest into one, lanes added by halves; then each value times 1 / sum.
void softmax_row_as_xnnpack(const float* x, float* y, int64_t n) {
  float top = x[0];
  for (int64_t j = 1; j < n; ++j) top = std::max(top, x[j]);
  const __m512 vtop = _mm512_set1_ps(top);
  __m512 acc0 = _mm512_setzero_ps(), acc1 = _mm512_setzero_ps();
  int64_t i = 0;
  for (; i + 64 <= n; i += 64) {
    __m512 f[4];
    for (int q = 0; q < 4; ++q) {
      f[q] = exp_minus_top16(_mm512_loadu_ps(x + i + 16 * q), vtop);
      _mm512_storeu_ps(y + i + 16 * q, f[q]);
    }
    acc0 = _mm512_add_ps(acc0, f[0]);
    acc1 = _mm512_add_ps(acc1, f[1]);
    acc0 = _mm512_add_ps(acc0, f[2]);
    acc1 = _mm512_add_ps(acc1, f[3]);
  }
  __m512 acc = _mm512_add_ps(acc0, acc1);
  for (; i + 16 <= n; i += 16) {
    const __m512 f = exp_minus_top16(_mm512_loadu_ps(x + i), vtop);
    _mm512_storeu_ps(y + i, f);
    acc = _mm512_add_ps(acc, f);
  }
  if (i < n) {
    const __mmask16 k = kernels::first_lanes(n - i);
    const __m512 f = exp_minus_top16(_mm512_maskz_loadu_ps(k, x + i), vtop);
    _mm512_mask_storeu_ps(y + i, k, f);
    acc = _mm512_mask_add_ps(acc, k, acc, f);
  }
  // Lanes added by halves: 8 + 8, 4 + 4, 2 + 2, 1 + 1.
  const __m256 h8 = _mm256_add_ps(_mm512_castps512_ps256(acc), _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(acc), 1)));
  const __m128 h4 = _mm_add_ps(_mm256_castps256_ps128(h8), _mm256_extractf128_ps(h8, 1));
  const __m128 h2 = _mm_add_ps(h4, _mm_movehl_ps(h4, h4));
  const float sum = _mm_cvtss_f32(h2) + _mm_cvtss_f32(_mm_shuffle_ps(h2, h2, 1));
  const __m512 scale = _mm512_set1_ps(1.0f / sum);
  for (i = 0; i + 16 <= n; i += 16) _mm512_storeu_ps(y + i, _mm512_mul_ps(_mm512_loadu_ps(y + i), scale));
  if (i < n) {
    const __mmask16 k = kernels::first_lanes(n - i);
    _mm512_mask_storeu_ps(y + i, k, _mm512_maskz_mul_ps(k, _mm512_maskz_loadu_ps(k, y + i), scale));
  }
}

}  // namespace
#endif

void run_softmax(DelegateState& m, const Node& n) {
  const float* x = m.input(n, 0);
  float* out = m.output(n);
  const Shape& so = m.out_shape(n);
  const int64_t count = so.numel();
  const int64_t c = so.d[so.rank - 1];
  for (int64_t r = 0; r + c <= count && c > 0; r += c) {
#if defined(__AVX512F__)
    softmax_row_as_xnnpack(x + r, out + r, c);
#else
    // The row's largest value and the sum of the exponentials in one fixed order (the blocks'
    // sums, each over a block of fixed size, added in row order).
    float top = x[r];
    for (int64_t j = 1; j < c; ++j) top = std::max(top, x[r + j]);
    float* o = out + r;
    blockwise(x + r, o, c, [top](const ConstBlock& v, Block& e) { e = (v - top).exp(); });
    float sum = 0.0f;  // the padding's zeros add nothing
    for_each_block(o, c, [&sum](const ConstBlock& v, int64_t, int64_t) { sum += v.sum(); });
    const float inv = 1.0f / sum;
    for (int64_t j = 0; j < c; ++j) o[j] *= inv;
#endif
  }
  apply_output_range(m, n);
}

}  // namespace etscope::runtime::xnnpack

namespace etscope::runtime {

bool xnnpack_float_kernels_as_xnnpack() {
#if defined(__AVX512F__)
  return true;
#else
  return false;
#endif
}

}  // namespace etscope::runtime
