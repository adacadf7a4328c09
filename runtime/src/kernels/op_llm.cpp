// The operators of ExecuTorch's LLM custom-ops library (namespace `llama`), as its LLM exporter
// writes them for a model with a KV cache:
//   update_cache.out(value, cache(a!), start_pos, *, out)
//       cache[b, start_pos + s, h, d] = value[b, s, h, d]; `out` is a placeholder never written.
//   update_cache_with_indices.out(value, cache(a!), start_pos, indices, *, out)
//       cache[b, indices[b, s], h, d] = value[b, s, h, d] (start_pos unused).
//   custom_sdpa.out(query, key_cache, value_cache, start_pos, attn_mask?, dropout_p, is_causal,
//                   scale?, *, out)
//       attention of query [B, S, H, D] (token s at position start_pos + s) over the first
//       start_pos + S rows of caches [B, Smax, Hkv, D] (all Smax rows when a float mask
//       [S, Smax] is given, added after scaling); grouped-query heads share a KV head
//       (h / (H / Hkv)); is_causal hides keys after the query's own position.
//   sdpa_with_kv_cache.out(query, key, value, key_cache(a!), value_cache(b!), start_pos, seq_len,
//                          attn_mask?, dropout_p, is_causal, scale?, *, out)
//       update_cache of both caches, then custom_sdpa.
//   custom_quantized_sdpa.out(query, key, value, start_pos, attn_mask?, dropout_p, is_causal, scale?,
//                             q_zero_points?, q_scales?, k_zero_points?, k_scales?,
//                             v_zero_points?, v_scales?, is_seq_at_dim_2, *, out)
//       custom_sdpa over int8 query and caches quantised per token (one scale and int8 zero
//       point per [b, s, h]); q.k is summed in int32 and scaled, values are dequantised; out is
//       float32. With is_seq_at_dim_2 the tensors are [B, H, S, D].
// Scores, softmax and the weighted sum are computed in float, one query row at a time, as
// ExecuTorch's flash attention does for rows shorter than its 512-key blocks; for half and
// bfloat16 the softmax weights are rounded to the activation type before multiplying the values,
// as ExecuTorch's reduced-precision GEMM does. Dropout is ignored (inference), as in ExecuTorch.
// Every position, head count and shape is checked against the tensors before any access;
// unlike ExecuTorch, a negative start_pos or index is refused rather than written through.
#include <cmath>
#include <cstring>
#include <limits>

#include "kernels/register.h"
#include "kernels/util/elementwise_util.h"
#include "kernels/util/expf.h"
#include "kernels/util/kernel_util.h"
#include "kernels/util/lanes.h"
#include "kernels/util/permute_util.h"

namespace etscope::runtime::kernels {
namespace {

bool is_attention_dtype(ScalarType t) {
  return t == ScalarType::kFloat || t == ScalarType::kHalf || t == ScalarType::kBFloat16;
}

bool int_arg(KernelContext& ctx, Args args, size_t i, int64_t* v, const char* op, const char* what) {
  if (args[i]->tag != Tag::kInt) {
    ctx.fail(ErrorCode::kInvalidArgument, "%s: %s must be an int, got %s", op, what, to_string(args[i]->tag));
    return false;
  }
  *v = args[i]->scalar.i;
  return true;
}

bool bool_arg(KernelContext& ctx, Args args, size_t i, bool* v, const char* op, const char* what) {
  if (args[i]->tag != Tag::kBool) {
    ctx.fail(ErrorCode::kInvalidArgument, "%s: %s must be a bool, got %s", op, what, to_string(args[i]->tag));
    return false;
  }
  *v = args[i]->scalar.b;
  return true;
}

// A float? argument: true with *has=false for None.
bool optional_double_arg(KernelContext& ctx, Args args, size_t i, bool* has, double* v, const char* op, const char* what) {
  *has = false;
  if (args[i]->tag == Tag::kNone) return true;
  if (args[i]->tag != Tag::kDouble && args[i]->tag != Tag::kInt) {
    ctx.fail(ErrorCode::kInvalidArgument, "%s: %s must be a float or None, got %s", op, what, to_string(args[i]->tag));
    return false;
  }
  *has = true;
  *v = args[i]->tag == Tag::kDouble ? args[i]->scalar.d : static_cast<double>(args[i]->scalar.i);
  return true;
}

// ---- cache updates ----------------------------------------------------------------------------

// Checks value [B, S, H, D] against cache [B, Smax, H, D]: same element type, matching batch,
// heads and head size, both contiguous.
bool check_cache_pair(KernelContext& ctx, const TensorImpl& value, const TensorImpl& cache, const char* op) {
  if (value.dim() != 4 || cache.dim() != 4) {
    ctx.fail(ErrorCode::kInvalidArgument, "%s: value and cache must be 4-D, got %d and %d dims", op, value.dim(), cache.dim());
    return false;
  }
  if (value.dtype() != cache.dtype()) {
    ctx.fail(ErrorCode::kInvalidArgument, "%s: value is %s, the cache %s", op, scalar_type_name(value.dtype()).c_str(),
             scalar_type_name(cache.dtype()).c_str());
    return false;
  }
  for (int d : {0, 2, 3}) {
    if (value.size(d) != cache.size(d)) {
      ctx.fail(ErrorCode::kInvalidArgument, "%s: value has %lld in dimension %d, the cache %lld", op,
               static_cast<long long>(value.size(d)), d, static_cast<long long>(cache.size(d)));
      return false;
    }
  }
  return require_contiguous(ctx, op, {&value, &cache});
}

// Copies value's rows for batch b into the cache from row `pos` on (rows [pos, pos + count)).
void copy_rows(const TensorImpl& value, TensorImpl& cache, int64_t b, int64_t value_row, int64_t cache_row, int64_t count) {
  const size_t row_bytes = static_cast<size_t>(value.size(2) * value.size(3)) * value.element_size();
  const auto* src = static_cast<const uint8_t*>(value.data()) +
                    static_cast<size_t>(b * value.stride(0) + value_row * value.stride(1)) * value.element_size();
  auto* dst = static_cast<uint8_t*>(cache.data()) +
              static_cast<size_t>(b * cache.stride(0) + cache_row * cache.stride(1)) * cache.element_size();
  std::memmove(dst, src, row_bytes * static_cast<size_t>(count));
}

// Writes value [B, S, H, D] into cache rows [start_pos, start_pos + S).
bool update_cache_at(KernelContext& ctx, const TensorImpl& value, TensorImpl& cache, int64_t start_pos, const char* op) {
  if (!check_cache_pair(ctx, value, cache, op)) return false;
  const int64_t rows = value.size(1);
  if (start_pos < 0 || start_pos >= cache.size(1) || rows > cache.size(1) - start_pos) {
    ctx.fail(ErrorCode::kInvalidArgument, "%s: rows %lld..%lld lie outside the cache's %lld rows", op,
             static_cast<long long>(start_pos), static_cast<long long>(start_pos + rows - 1),
             static_cast<long long>(cache.size(1)));
    return false;
  }
  for (int64_t b = 0; b < value.size(0); ++b) copy_rows(value, cache, b, 0, start_pos, rows);
  return true;
}

void update_cache_out(KernelContext& ctx, Args args) {
  const char* op = "update_cache.out";
  if (!check_arg_count(ctx, args, 4, op)) return;
  const TensorImpl* value = tensor_arg(ctx, args, 0, op);
  TensorImpl* cache = tensor_arg(ctx, args, 1, op);
  if (!value || !cache || !tensor_arg(ctx, args, 3, op)) return;
  int64_t start_pos = 0;
  if (!int_arg(ctx, args, 2, &start_pos, op, "start_pos")) return;
  update_cache_at(ctx, *value, *cache, start_pos, op);
}

void update_cache_with_indices_out(KernelContext& ctx, Args args) {
  const char* op = "update_cache_with_indices.out";
  if (!check_arg_count(ctx, args, 5, op)) return;
  const TensorImpl* value = tensor_arg(ctx, args, 0, op);
  TensorImpl* cache = tensor_arg(ctx, args, 1, op);
  const TensorImpl* indices = tensor_arg(ctx, args, 3, op);
  if (!value || !cache || !indices || !tensor_arg(ctx, args, 4, op)) return;
  if (!check_cache_pair(ctx, *value, *cache, op) || !require_contiguous(ctx, op, {indices})) return;
  if (indices->dtype() != ScalarType::kLong || indices->dim() != 2 || indices->size(0) != value->size(0) ||
      indices->size(1) != value->size(1)) {
    ctx.fail(ErrorCode::kInvalidArgument, "%s: indices must be int64 [batch, seq] = [%lld, %lld]", op,
             static_cast<long long>(value->size(0)), static_cast<long long>(value->size(1)));
    return;
  }
  const int64_t* idx = indices->data_as<int64_t>();
  // Every index is checked before the first row is written, so a bad one changes nothing.
  for (int64_t i = 0; i < indices->numel(); ++i) {
    if (idx[i] < 0 || idx[i] >= cache->size(1)) {
      ctx.fail(ErrorCode::kInvalidArgument, "%s: index %lld lies outside the cache's %lld rows", op,
               static_cast<long long>(idx[i]), static_cast<long long>(cache->size(1)));
      return;
    }
  }
  for (int64_t b = 0; b < value->size(0); ++b) {
    for (int64_t s = 0; s < value->size(1); ++s) copy_rows(*value, *cache, b, s, idx[b * value->size(1) + s], 1);
  }
}

// ---- attention --------------------------------------------------------------------------------

// One of query, key cache or value cache, addressed by (batch, sequence row, head): the row of
// head_dim elements starts at b*sb + s*ss + h*sh. Quantised operands carry one scale and zero
// point per (b, s, h), in tensors of the operand's shape with a last dimension of 1.
struct Operand {
  const TensorImpl* t = nullptr;
  int64_t batch = 0, seq = 0, heads = 0, head_dim = 0;
  int64_t sb = 0, ss = 0, sh = 0;
  const float* scales = nullptr;
  const int8_t* zero_points = nullptr;
  int64_t qsb = 0, qss = 0, qsh = 0;

  int64_t offset(int64_t b, int64_t s, int64_t h) const { return b * sb + s * ss + h * sh; }
  int64_t qoffset(int64_t b, int64_t s, int64_t h) const { return b * qsb + s * qss + h * qsh; }
  // Row (b, s, h) as floats (dequantised for int8).
  void load_row(int64_t b, int64_t s, int64_t h, float* out) const {
    const int64_t o = offset(b, s, h);
    switch (t->dtype()) {
      case ScalarType::kFloat: std::memcpy(out, t->data_as<float>() + o, static_cast<size_t>(head_dim) * sizeof(float)); break;
      case ScalarType::kHalf:
        for (int64_t d = 0; d < head_dim; ++d) out[d] = half_to_float(t->data_as<uint16_t>()[o + d]);
        break;
      case ScalarType::kBFloat16:
        for (int64_t d = 0; d < head_dim; ++d) out[d] = bfloat16_to_float(t->data_as<uint16_t>()[o + d]);
        break;
      case ScalarType::kChar: {
        const int64_t q = qoffset(b, s, h);
        const float scale = scales[q];
        const int32_t zp = zero_points[q];
        const int8_t* src = t->data_as<int8_t>() + o;
        for (int64_t d = 0; d < head_dim; ++d) out[d] = static_cast<float>(static_cast<int32_t>(src[d]) - zp) * scale;
        break;
      }
      default: break;
    }
  }
};

// Binds `t` as an operand whose sequence dimension is `seq_dim` (1: [B, S, H, D], 2: [B, H, S, D]).
bool bind_operand(KernelContext& ctx, const TensorImpl& t, int seq_dim, Operand* o, const char* op, const char* what) {
  if (t.dim() != 4) {
    ctx.fail(ErrorCode::kInvalidArgument, "%s: %s must be 4-D, got %d dims", op, what, t.dim());
    return false;
  }
  if (!require_contiguous(ctx, op, {&t})) return false;
  const int heads_dim = 3 - seq_dim;  // the other of dims 1 and 2
  o->t = &t;
  o->batch = t.size(0);
  o->seq = t.size(seq_dim);
  o->heads = t.size(heads_dim);
  o->head_dim = t.size(3);
  o->sb = t.stride(0);
  o->ss = t.stride(seq_dim);
  o->sh = t.stride(heads_dim);
  return true;
}

// Scales [.., 1] float32 and zero points [.., 1] int8 of a per-token quantised operand.
bool bind_qparams(KernelContext& ctx, Args args, size_t zp_index, size_t scale_index, int seq_dim, Operand* o,
                  const char* op, const char* what) {
  const TensorImpl* zp = optional_tensor_arg(args, zp_index);
  const TensorImpl* sc = optional_tensor_arg(args, scale_index);
  if (zp == nullptr || sc == nullptr) {
    ctx.fail(ErrorCode::kInvalidArgument, "%s: an int8 %s needs its scales and zero points", op, what);
    return false;
  }
  if (sc->dtype() != ScalarType::kFloat || zp->dtype() != ScalarType::kChar || sc->dim() != 4 || zp->dim() != 4) {
    ctx.fail(ErrorCode::kInvalidArgument, "%s: %s's scales must be float32 and zero points int8, both 4-D", op, what);
    return false;
  }
  for (int d = 0; d < 3; ++d) {
    if (sc->size(d) != o->t->size(d) || zp->size(d) != o->t->size(d)) {
      ctx.fail(ErrorCode::kInvalidArgument, "%s: %s's scales and zero points must match it in dimension %d", op, what, d);
      return false;
    }
  }
  if (sc->size(3) != 1 || zp->size(3) != 1 || !require_contiguous(ctx, op, {sc, zp})) {
    if (!ctx.failed()) ctx.fail(ErrorCode::kInvalidArgument, "%s: %s's scales and zero points must end in a dimension of 1", op, what);
    return false;
  }
  o->scales = sc->data_as<float>();
  o->zero_points = zp->data_as<int8_t>();
  o->qsb = sc->stride(0);
  o->qss = sc->stride(seq_dim);
  o->qsh = sc->stride(3 - seq_dim);
  return true;
}

float dot(const float* a, const float* b, int64_t n) {
  float acc[8] = {};
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    for (int k = 0; k < 8; ++k) acc[k] += a[i + k] * b[i + k];
  }
  float s = ((acc[0] + acc[4]) + (acc[1] + acc[5])) + ((acc[2] + acc[6]) + (acc[3] + acc[7]));
  for (; i < n; ++i) s += a[i] * b[i];
  return s;
}

// (q - qzp) . (k - kzp) summed exactly in int32, then scaled by both scales.
float quantized_dot(const Operand& q, int64_t qb, int64_t qs, int64_t qh, const Operand& k, int64_t kb, int64_t ks, int64_t kh) {
  const int8_t* a = q.t->data_as<int8_t>() + q.offset(qb, qs, qh);
  const int8_t* b = k.t->data_as<int8_t>() + k.offset(kb, ks, kh);
  const int64_t qo = q.qoffset(qb, qs, qh), ko = k.qoffset(kb, ks, kh);
  const int32_t za = q.zero_points[qo], zb = k.zero_points[ko];
  int32_t acc = 0;
  for (int64_t d = 0; d < q.head_dim; ++d) acc += (static_cast<int32_t>(a[d]) - za) * (static_cast<int32_t>(b[d]) - zb);
  return static_cast<float>(acc) * (q.scales[qo] * k.scales[ko]);
}

float round_to(ScalarType t, float v) {
  if (t == ScalarType::kHalf) return half_to_float(float_to_half(v));
  if (t == ScalarType::kBFloat16) return bfloat16_to_float(float_to_bfloat16(v));
  return v;
}

struct Attention {
  Operand q, k, v;
  const TensorImpl* mask = nullptr;  // float [S, Skv]
  bool is_causal = false;
  int64_t start_pos = 0;
  float scale = 1.0f;
  ScalarType weight_dtype = ScalarType::kFloat;  // what softmax weights are rounded to
  int seq_dim = 1;                                // 1: [B, S, H, D]; 2: [B, H, S, D]
};

// Checks the operands against each other and the positions against the caches.
bool check_attention(KernelContext& ctx, const Attention& a, const char* op) {
  const Operand &q = a.q, &k = a.k, &v = a.v;
  if (k.batch != q.batch || v.batch != q.batch || k.heads != v.heads || k.seq != v.seq || k.head_dim != q.head_dim ||
      v.head_dim != q.head_dim) {
    ctx.fail(ErrorCode::kInvalidArgument, "%s: query, key and value disagree in batch, heads, length or head size", op);
    return false;
  }
  if (k.heads <= 0 || q.heads % k.heads != 0) {
    ctx.fail(ErrorCode::kInvalidArgument, "%s: %lld query heads are not a multiple of %lld key/value heads", op,
             static_cast<long long>(q.heads), static_cast<long long>(k.heads));
    return false;
  }
  if (a.start_pos < 0) {
    ctx.fail(ErrorCode::kInvalidArgument, "%s: start_pos %lld is negative", op, static_cast<long long>(a.start_pos));
    return false;
  }
  if (a.mask != nullptr) {
    if (a.is_causal) {
      ctx.fail(ErrorCode::kInvalidArgument, "%s: attn_mask and is_causal cannot both be set", op);
      return false;
    }
    if (a.mask->dtype() != ScalarType::kFloat || a.mask->dim() != 2 || a.mask->size(0) != q.seq || a.mask->size(1) != k.seq ||
        !a.mask->contiguous()) {
      ctx.fail(ErrorCode::kInvalidArgument, "%s: attn_mask must be a contiguous float32 [%lld, %lld]", op,
               static_cast<long long>(q.seq), static_cast<long long>(k.seq));
      return false;
    }
  } else if (q.seq > k.seq || a.start_pos > k.seq - q.seq) {
    ctx.fail(ErrorCode::kInvalidArgument, "%s: positions %lld..%lld lie outside the cache's %lld rows", op,
             static_cast<long long>(a.start_pos), static_cast<long long>(a.start_pos + q.seq - 1),
             static_cast<long long>(k.seq));
    return false;
  }
  return true;
}

#if defined(__AVX512F__)
// float32 attention in blocks: a key head's keys are transposed once ([head_dim][keys], 16 keys
// per register) and its values copied, then the query rows of all its heads (grouped-query heads
// share it; a decode step has one row per head) go kAttnRows at a time: scores 16 keys x
// kAttnRows rows per pass over head_dim (no horizontal sums), softmax per row, and the weighted
// values 32 outputs x kAttnRows rows per pass over the keys. The products are summed in another
// order than one row at a time (float rounding; ExecuTorch's GEMMs have theirs).
constexpr int64_t kAttnRows = 8;

int64_t attention_keys_padded(int64_t kv) { return (kv + 15) / 16 * 16; }

// Floats of scratch the blocked path needs for `kv` keys of head size d.
int64_t blocked_attention_floats(int64_t kv, int64_t d) {
  const int64_t pad = attention_keys_padded(kv);
  return kAttnRows * pad + pad * d;
}

bool blocked_attention_applies(const Attention& a, const TensorImpl& out) {
  const ScalarType f = ScalarType::kFloat;
  return a.q.t->dtype() == f && a.k.t->dtype() == f && a.v.t->dtype() == f && out.dtype() == f && a.q.head_dim % 16 == 0 &&
         a.q.head_dim > 0;
}

// One key head's state for the blocked path.
struct KeyHead {
  const Attention* a;
  const Operand* o;
  int64_t b, kh, kv_len, pad;
  const float* kt;      // [D][pad]
  const float* values;  // the value cache's rows of this head, vstride floats apart
  int64_t vstride;
  float* scores;        // [kAttnRows][pad]
  float* out;
};

// A register's 16 lanes: their maximum, their sum (pairwise). Through memory: GCC 12's reduce
// intrinsics read an undefined register and fail -Werror=maybe-uninitialized.
inline float lanes_max(__m512 v) {
  alignas(64) float t[16];
  _mm512_store_ps(t, v);
  float m = t[0];
  for (int i = 1; i < 16; ++i) m = t[i] > m ? t[i] : m;
  return m;
}

inline float lanes_sum(__m512 v) {
  alignas(64) float t[16];
  _mm512_store_ps(t, v);
  for (int w = 8; w >= 1; w /= 2) {
    for (int i = 0; i < w; ++i) t[i] += t[i + w];
  }
  return t[0];
}

// Query rows i0 .. i0 + NR - 1 of the key head (row i: head kh * reps + i / seq, position
// i % seq), each written to out.
template <int NR>
void attention_rows(const KeyHead& c, int64_t i0) {
  const Attention& a = *c.a;
  const Operand& q = a.q;
  const int64_t D = q.head_dim, pad = c.pad, reps = q.heads / a.k.heads;
  const float ninf = -std::numeric_limits<float>::infinity();
  const float* mask = a.mask != nullptr ? a.mask->data_as<float>() : nullptr;
  const float* qr[NR];
  int64_t last[NR], srow[NR], base[NR];
  int64_t top = 0;
  for (int r = 0; r < NR; ++r) {
    const int64_t i = i0 + r;
    const int64_t h = c.kh * reps + i / q.seq, s = i % q.seq;
    qr[r] = q.t->data_as<float>() + q.offset(c.b, s, h);
    srow[r] = s;
    last[r] = a.is_causal ? std::min(c.kv_len - 1, a.start_pos + s) : c.kv_len - 1;
    base[r] = c.o->offset(c.b, s, h);
    top = std::max(top, last[r]);
  }
  // Scores: scale x q.k (+ mask), -inf past each row's last key; and each row's maximum.
  const __m512 vscale = _mm512_set1_ps(a.scale);
  __m512 vmax[NR];
  for (int r = 0; r < NR; ++r) vmax[r] = _mm512_set1_ps(ninf);
  for (int64_t n0 = 0; n0 <= top; n0 += 16) {
    __m512 acc[NR];
    for (int r = 0; r < NR; ++r) acc[r] = _mm512_setzero_ps();
    const float* kc = c.kt + n0;
    for (int64_t d = 0; d < D; ++d) {
      const __m512 kv = _mm512_loadu_ps(kc + d * pad);
      for (int r = 0; r < NR; ++r) acc[r] = _mm512_fmadd_ps(_mm512_set1_ps(qr[r][d]), kv, acc[r]);
    }
    for (int r = 0; r < NR; ++r) {
      __m512 x = _mm512_mul_ps(acc[r], vscale);
      const __mmask16 m = first_lanes(last[r] + 1 - n0);  // the keys from n0 on this row sees
      if (mask != nullptr) x = _mm512_add_ps(x, _mm512_maskz_loadu_ps(m, mask + srow[r] * a.k.seq + n0));
      x = _mm512_mask_blend_ps(m, _mm512_set1_ps(ninf), x);
      _mm512_storeu_ps(c.scores + r * pad + n0, x);
      vmax[r] = _mm512_mask_max_ps(vmax[r], m, vmax[r], x);
    }
  }
  // Softmax weights: exp(x - max) up to each row's last key, zeros after it (up to top). A row
  // that sees nothing (max -inf) gets zero weights and divides 0 by 0 below, as ExecuTorch's
  // and PyTorch's do.
  __m512 inv[NR];
  for (int r = 0; r < NR; ++r) {
    float* sr = c.scores + r * pad;
    const float max = lanes_max(vmax[r]);
    float sum = 0.0f;
    if (max == ninf) {
      std::fill(sr, sr + top + 1, 0.0f);
    } else {
      const int64_t len = last[r] + 1;
      const __m512 vm = _mm512_set1_ps(max);
      for (int64_t n = 0; n < len; n += 16) {
        const __mmask16 m = first_lanes(len - n);
        _mm512_mask_storeu_ps(sr + n, m, _mm512_sub_ps(_mm512_maskz_loadu_ps(m, sr + n), vm));
      }
      expf_n(sr, sr, len);
      __m512 vs = _mm512_setzero_ps();
      for (int64_t n = 0; n < len; n += 16) vs = _mm512_add_ps(vs, _mm512_maskz_loadu_ps(first_lanes(len - n), sr + n));
      sum = lanes_sum(vs);
      std::fill(sr + len, sr + top + 1, 0.0f);
    }
    inv[r] = _mm512_set1_ps(1.0f / sum);
  }
  // The weighted values, 32 (or the last 16) outputs of every row at a time.
  for (int64_t d0 = 0; d0 < D; d0 += 32) {
    const bool two = d0 + 32 <= D;
    __m512 acc[NR][2];
    for (int r = 0; r < NR; ++r) acc[r][0] = acc[r][1] = _mm512_setzero_ps();
    for (int64_t n = 0; n <= top; ++n) {
      const float* vr = c.values + n * c.vstride + d0;
      const __m512 v0 = _mm512_loadu_ps(vr);
      const __m512 v1 = two ? _mm512_loadu_ps(vr + 16) : _mm512_setzero_ps();
      for (int r = 0; r < NR; ++r) {
        const __m512 w = _mm512_set1_ps(c.scores[r * pad + n]);
        acc[r][0] = _mm512_fmadd_ps(w, v0, acc[r][0]);
        acc[r][1] = _mm512_fmadd_ps(w, v1, acc[r][1]);
      }
    }
    for (int r = 0; r < NR; ++r) {
      _mm512_storeu_ps(c.out + base[r] + d0, _mm512_mul_ps(acc[r][0], inv[r]));
      if (two) _mm512_storeu_ps(c.out + base[r] + d0 + 16, _mm512_mul_ps(acc[r][1], inv[r]));
    }
  }
}

void run_attention_blocked(const Attention& a, float* scratch, TensorImpl& out, const Operand& o) {
  const Operand &q = a.q, &k = a.k, &v = a.v;
  const int64_t D = q.head_dim;
  KeyHead c;
  c.a = &a;
  c.o = &o;
  c.kv_len = a.mask != nullptr ? k.seq : a.start_pos + q.seq;
  c.pad = attention_keys_padded(c.kv_len);
  c.scores = scratch;
  float* kt = scratch + kAttnRows * c.pad;
  c.kt = kt;
  c.vstride = v.ss;
  c.out = out.data_as<float>();
  const float* kd = k.t->data_as<float>();
  const float* vd = v.t->data_as<float>();
  const int64_t rows = (q.heads / k.heads) * q.seq;
  for (c.b = 0; c.b < q.batch; ++c.b) {
    for (c.kh = 0; c.kh < k.heads; ++c.kh) {
      // Keys transposed 16 x 16 at a time in registers, the last partial block one by one;
      // values read where the cache holds them.
      const float* k0 = kd + k.offset(c.b, 0, c.kh);
      const int64_t whole = c.kv_len / 16 * 16;
      for (int64_t n = 0; n < whole; n += 16) {
        for (int64_t d = 0; d < D; d += 16) permute_detail::transpose16x16(k0 + n * k.ss + d, k.ss, kt + d * c.pad + n, c.pad);
      }
      for (int64_t n = whole; n < c.kv_len; ++n) {
        for (int64_t d = 0; d < D; ++d) kt[d * c.pad + n] = k0[n * k.ss + d];
      }
      for (int64_t d = 0; d < D; ++d) std::fill(kt + d * c.pad + c.kv_len, kt + (d + 1) * c.pad, 0.0f);
      c.values = vd + v.offset(c.b, 0, c.kh);
      for (int64_t i0 = 0; i0 < rows; i0 += kAttnRows) {
        switch (std::min(kAttnRows, rows - i0)) {
          case 1: attention_rows<1>(c, i0); break;
          case 2: attention_rows<2>(c, i0); break;
          case 3: attention_rows<3>(c, i0); break;
          case 4: attention_rows<4>(c, i0); break;
          case 5: attention_rows<5>(c, i0); break;
          case 6: attention_rows<6>(c, i0); break;
          case 7: attention_rows<7>(c, i0); break;
          default: attention_rows<8>(c, i0); break;
        }
      }
    }
  }
}
#endif

// Writes out[b, s, h, :] for every query row. Scratch: key length + 3 * head_dim floats.
void run_attention(KernelContext& ctx, const Attention& a, TensorImpl& out, const char* op) {
  const Operand &q = a.q, &k = a.k, &v = a.v;
  const int64_t D = q.head_dim;
  const int64_t kv_len = a.mask != nullptr ? k.seq : a.start_pos + q.seq;
  const bool quantized = q.t->dtype() == ScalarType::kChar;
  // out has query's shape and layout ([B, S, H, D], or [B, H, S, D] with the sequence at dim 2).
  Operand o;
  if (!bind_operand(ctx, out, a.seq_dim, &o, op, "out")) return;
#if defined(__AVX512F__)
  if (blocked_attention_applies(a, out) &&
      ctx.scratch().size() >= static_cast<size_t>(blocked_attention_floats(kv_len, D)) * sizeof(float)) {
    run_attention_blocked(a, reinterpret_cast<float*>(ctx.scratch().data()), out, o);
    return;
  }
#endif
  // Float caches: a key head's keys and values are read once into rows of floats, for all its
  // queries (load_row converted them again for every query row).
  const size_t need = static_cast<size_t>(kv_len + 3 * D + (quantized ? 0 : 2 * kv_len * D)) * sizeof(float);
  if (ctx.scratch().size() < need) {
    ctx.fail(ErrorCode::kInvalidArgument, "%s: needs %zu bytes of scratch, has %zu", op, need, ctx.scratch().size());
    return;
  }
  float* scores = reinterpret_cast<float*>(ctx.scratch().data());
  float* qrow = scores + kv_len;
  float* krow = qrow + D;
  float* acc = krow + D;
  float* keys = acc + D;              // [kv_len][D] of the current key head (float caches)
  float* values = keys + kv_len * D;  // the same of its values
  const int64_t reps = q.heads / k.heads;
  const float* mask = a.mask != nullptr ? a.mask->data_as<float>() : nullptr;
  const ScalarType out_dtype = out.dtype();
  for (int64_t b = 0; b < q.batch; ++b) {
    for (int64_t h = 0; h < q.heads; ++h) {
      const int64_t kh = h / reps;
      if (!quantized && h % reps == 0) {
        for (int64_t n = 0; n < kv_len; ++n) {
          k.load_row(b, n, kh, keys + n * D);
          v.load_row(b, n, kh, values + n * D);
        }
      }
      for (int64_t s = 0; s < q.seq; ++s) {
        if (!quantized) q.load_row(b, s, h, qrow);
        const int64_t last = a.is_causal ? std::min(kv_len - 1, a.start_pos + s) : kv_len - 1;
        float max = -std::numeric_limits<float>::infinity();
        for (int64_t n = 0; n < kv_len; ++n) {
          float x;
          if (n > last) {
            x = -std::numeric_limits<float>::infinity();
          } else {
            x = quantized ? quantized_dot(q, b, s, h, k, b, n, kh) : dot(qrow, keys + n * D, D);
            x *= a.scale;
            if (mask != nullptr) x += mask[s * k.seq + n];
          }
          scores[n] = x;
          if (x > max) max = x;
        }
        std::fill(acc, acc + D, 0.0f);
        float sum = 0.0f;
        if (max != -std::numeric_limits<float>::infinity()) {
          // The row's exponentials at once (expf_n: std::exp's values, 16 at a time), then the
          // sum and the weighted values in order, as before.
          for (int64_t n = 0; n <= last; ++n) scores[n] -= max;
          expf_n(scores, scores, last + 1);
          for (int64_t n = 0; n <= last; ++n) {
            const float e = scores[n];
            sum += e;
            if (e == 0.0f) continue;
            const float w = round_to(a.weight_dtype, e);
            const float* vr = values + n * D;
            if (quantized) {
              v.load_row(b, n, kh, krow);
              vr = krow;
            }
            for (int64_t d = 0; d < D; ++d) acc[d] += w * vr[d];
          }
        }
        // A row that attends to nothing divides 0 by 0, as ExecuTorch's and PyTorch's do.
        const float inv = 1.0f / sum;
        const int64_t base = o.offset(b, s, h);
        for (int64_t d = 0; d < D; ++d) store_from<float>(out_dtype, out.data(), base + d, acc[d] * inv);
      }
    }
  }
}

size_t attention_scratch_for(const EValue* key_cache, const EValue* query, int seq_dim) {
  if (key_cache == nullptr || key_cache->tag != Tag::kTensor || key_cache->tensor == nullptr || key_cache->tensor->dim() != 4) return 0;
  if (query == nullptr || query->tag != Tag::kTensor || query->tensor == nullptr || query->tensor->dim() != 4) return 0;
  const int64_t kv = key_cache->tensor->size(seq_dim);
  const int64_t d = query->tensor->size(3);
  if (kv < 0 || d < 0 || kv > (int64_t{1} << 24) || d > (int64_t{1} << 20)) return 0;
  const bool quantized = query->tensor->dtype() == ScalarType::kChar;
  int64_t floats = kv + 3 * d + (quantized ? 0 : 2 * kv * d);
#if defined(__AVX512F__)
  if (!quantized && d % 16 == 0) floats = std::max(floats, blocked_attention_floats(kv, d));
#endif
  return static_cast<size_t>(floats) * sizeof(float);
}

// Fills scale, causal flag and mask of `a` from custom_sdpa-style arguments starting at `i`:
// attn_mask?, dropout_p, is_causal, scale?.
bool attention_options(KernelContext& ctx, Args args, size_t i, Attention* a, const char* op) {
  a->mask = optional_tensor_arg(args, i);
  if (args[i]->tag != Tag::kNone && a->mask == nullptr) {
    ctx.fail(ErrorCode::kInvalidArgument, "%s: attn_mask must be a tensor or None", op);
    return false;
  }
  if (a->mask != nullptr && a->mask->numel() == 0) a->mask = nullptr;
  if (!bool_arg(ctx, args, i + 2, &a->is_causal, op, "is_causal")) return false;
  bool has_scale = false;
  double scale = 0.0;
  if (!optional_double_arg(ctx, args, i + 3, &has_scale, &scale, op, "scale")) return false;
  a->scale = has_scale ? static_cast<float>(scale) : static_cast<float>(1.0 / std::sqrt(static_cast<double>(a->q.head_dim)));
  return true;
}

bool check_float_operands(KernelContext& ctx, const Attention& a, const TensorImpl& out, const char* op) {
  const ScalarType t = a.q.t->dtype();
  if (!is_attention_dtype(t) || a.k.t->dtype() != t || a.v.t->dtype() != t || out.dtype() != t) {
    ctx.fail(ErrorCode::kInvalidArgument, "%s: query, caches and out must share one of float32, float16, bfloat16", op);
    return false;
  }
  return true;
}

void custom_sdpa_out(KernelContext& ctx, Args args) {
  const char* op = "custom_sdpa.out";
  if (!check_arg_count(ctx, args, 9, op)) return;
  const TensorImpl* query = tensor_arg(ctx, args, 0, op);
  const TensorImpl* key = tensor_arg(ctx, args, 1, op);
  const TensorImpl* value = tensor_arg(ctx, args, 2, op);
  TensorImpl* out = tensor_arg(ctx, args, 8, op);
  if (!query || !key || !value || !out) return;
  Attention a;
  if (!bind_operand(ctx, *query, 1, &a.q, op, "query") || !bind_operand(ctx, *key, 1, &a.k, op, "key") ||
      !bind_operand(ctx, *value, 1, &a.v, op, "value") || !int_arg(ctx, args, 3, &a.start_pos, op, "start_pos") ||
      !attention_options(ctx, args, 4, &a, op) || !check_float_operands(ctx, a, *out, op) || !check_attention(ctx, a, op)) {
    return;
  }
  a.weight_dtype = query->dtype();
  if (!resize_or_fail(ctx, out, query->sizes(), op)) return;
  run_attention(ctx, a, *out, op);
}

size_t custom_sdpa_scratch(Args args) { return args.size() < 9 ? 0 : attention_scratch_for(args[1], args[0], 1); }

void sdpa_with_kv_cache_out(KernelContext& ctx, Args args) {
  const char* op = "sdpa_with_kv_cache.out";
  if (!check_arg_count(ctx, args, 12, op)) return;
  const TensorImpl* query = tensor_arg(ctx, args, 0, op);
  const TensorImpl* key = tensor_arg(ctx, args, 1, op);
  const TensorImpl* value = tensor_arg(ctx, args, 2, op);
  TensorImpl* key_cache = tensor_arg(ctx, args, 3, op);
  TensorImpl* value_cache = tensor_arg(ctx, args, 4, op);
  TensorImpl* out = tensor_arg(ctx, args, 11, op);
  if (!query || !key || !value || !key_cache || !value_cache || !out) return;
  int64_t start_pos = 0, seq_len = 0;
  if (!int_arg(ctx, args, 5, &start_pos, op, "start_pos") || !int_arg(ctx, args, 6, &seq_len, op, "seq_len")) return;
  if (key_cache->dim() != 4 || value_cache->dim() != 4 || key_cache->size(1) != value_cache->size(1)) {
    ctx.fail(ErrorCode::kInvalidArgument, "%s: key and value caches must be 4-D of one length", op);
    return;
  }
  if (start_pos < 0 || seq_len < 0 || start_pos >= key_cache->size(1) || seq_len > key_cache->size(1) - start_pos) {
    ctx.fail(ErrorCode::kInvalidArgument, "%s: positions %lld..%lld lie outside the caches' %lld rows", op,
             static_cast<long long>(start_pos), static_cast<long long>(start_pos + seq_len - 1),
             static_cast<long long>(key_cache->size(1)));
    return;
  }
  Attention a;
  if (!bind_operand(ctx, *query, 1, &a.q, op, "query") || !bind_operand(ctx, *key_cache, 1, &a.k, op, "key_cache") ||
      !bind_operand(ctx, *value_cache, 1, &a.v, op, "value_cache") || !attention_options(ctx, args, 7, &a, op) ||
      !check_float_operands(ctx, a, *out, op)) {
    return;
  }
  a.start_pos = start_pos;
  a.weight_dtype = query->dtype();
  if (!check_attention(ctx, a, op)) return;
  if (!update_cache_at(ctx, *key, *key_cache, start_pos, op) || !update_cache_at(ctx, *value, *value_cache, start_pos, op)) return;
  if (!resize_or_fail(ctx, out, query->sizes(), op)) return;
  run_attention(ctx, a, *out, op);
}

size_t sdpa_with_kv_cache_scratch(Args args) { return args.size() < 12 ? 0 : attention_scratch_for(args[3], args[0], 1); }

void custom_quantized_sdpa_out(KernelContext& ctx, Args args) {
  const char* op = "custom_quantized_sdpa.out";
  if (!check_arg_count(ctx, args, 16, op)) return;
  const TensorImpl* query = tensor_arg(ctx, args, 0, op);
  const TensorImpl* key = tensor_arg(ctx, args, 1, op);
  const TensorImpl* value = tensor_arg(ctx, args, 2, op);
  TensorImpl* out = tensor_arg(ctx, args, 15, op);
  if (!query || !key || !value || !out) return;
  bool seq_at_dim_2 = false;
  if (!bool_arg(ctx, args, 14, &seq_at_dim_2, op, "is_seq_at_dim_2")) return;
  const int seq_dim = seq_at_dim_2 ? 2 : 1;
  Attention a;
  a.seq_dim = seq_dim;
  if (!bind_operand(ctx, *query, seq_dim, &a.q, op, "query") || !bind_operand(ctx, *key, seq_dim, &a.k, op, "key") ||
      !bind_operand(ctx, *value, seq_dim, &a.v, op, "value") || !int_arg(ctx, args, 3, &a.start_pos, op, "start_pos") ||
      !attention_options(ctx, args, 4, &a, op)) {
    return;
  }
  if (query->dtype() == ScalarType::kChar) {
    if (key->dtype() != ScalarType::kChar || value->dtype() != ScalarType::kChar) {
      ctx.fail(ErrorCode::kInvalidArgument, "%s: an int8 query needs int8 key and value", op);
      return;
    }
    if (!bind_qparams(ctx, args, 8, 9, seq_dim, &a.q, op, "query") || !bind_qparams(ctx, args, 10, 11, seq_dim, &a.k, op, "key") ||
        !bind_qparams(ctx, args, 12, 13, seq_dim, &a.v, op, "value")) {
      return;
    }
    if (out->dtype() != ScalarType::kFloat) {
      ctx.fail(ErrorCode::kInvalidArgument, "%s: out must be float32 for int8 operands", op);
      return;
    }
  } else if (!check_float_operands(ctx, a, *out, op)) {
    return;
  } else {
    a.weight_dtype = query->dtype();
  }
  if (!check_attention(ctx, a, op)) return;
  if (!resize_or_fail(ctx, out, query->sizes(), op)) return;
  run_attention(ctx, a, *out, op);
}

size_t custom_quantized_sdpa_scratch(Args args) {
  if (args.size() < 16 || args[14]->tag != Tag::kBool) return 0;
  return attention_scratch_for(args[1], args[0], args[14]->scalar.b ? 2 : 1);
}

Kernel llama_kernel(KernelFn run, uint32_t dtypes, ScratchFn scratch = nullptr) {
  Kernel k = kernel(run, dtypes, scratch);
  k.named_by_operator = true;
  return k;
}

}  // namespace

void register_llm_kernels(KernelRegistry& r) {
  const uint32_t attention = dtype_bit(ScalarType::kFloat) | kHalfDtypes;
  const uint32_t any = kRealBoolDtypes | kHalfDtypes;
  r.add("llama::update_cache.out", llama_kernel(update_cache_out, any));
  r.add("llama::update_cache_with_indices.out", llama_kernel(update_cache_with_indices_out, any));
  r.add("llama::custom_sdpa.out", llama_kernel(custom_sdpa_out, attention, custom_sdpa_scratch));
  r.add("llama::sdpa_with_kv_cache.out", llama_kernel(sdpa_with_kv_cache_out, attention, sdpa_with_kv_cache_scratch));
  r.add("llama::custom_quantized_sdpa.out",
        llama_kernel(custom_quantized_sdpa_out, attention | dtype_bit(ScalarType::kChar), custom_quantized_sdpa_scratch));
}

}  // namespace etscope::runtime::kernels
