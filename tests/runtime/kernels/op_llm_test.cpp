// Tests of ExecuTorch's LLM custom operators (op_llm.cpp): cache updates write only the rows
// asked for and refuse positions outside the cache; attention equals a direct computation with
// grouped-query heads, causal positions and masks; the quantised variant sums in integers.
#include <cmath>
#include <cstdint>
#include <tuple>
#include <vector>

#include "runtime/kernels/kernel_test_util.h"

using etscope::EValue;
using etscope::ScalarType;
using etscope::testing::KernelCall;

namespace {

// out[s, h, :] of attention over the first `kv` rows of caches [1, S, Hkv, D] (batch 1), with
// a float mask [S, kv] added after scaling if given.
std::vector<float> direct_attention(const std::vector<float>& q, const std::vector<float>& k, const std::vector<float>& v, int64_t S,
                                    int64_t H, int64_t Hkv, int64_t D, int64_t start, bool causal, int64_t kv,
                                    const float* mask = nullptr) {
  std::vector<float> out(static_cast<size_t>(S * H * D), 0.0f);
  for (int64_t s = 0; s < S; ++s) {
    for (int64_t h = 0; h < H; ++h) {
      const int64_t kh = h / (H / Hkv);
      std::vector<double> w(static_cast<size_t>(kv), 0.0);
      double mx = -INFINITY;
      for (int64_t n = 0; n < kv; ++n) {
        if (causal && n > start + s) {
          w[static_cast<size_t>(n)] = -INFINITY;
          continue;
        }
        double dot = 0;
        for (int64_t d = 0; d < D; ++d) dot += q[static_cast<size_t>((s * H + h) * D + d)] * k[static_cast<size_t>((n * Hkv + kh) * D + d)];
        w[static_cast<size_t>(n)] = dot / std::sqrt(static_cast<double>(D)) + (mask != nullptr ? mask[s * kv + n] : 0.0f);
        mx = std::max(mx, w[static_cast<size_t>(n)]);
      }
      double sum = 0;
      for (double& x : w) sum += (x = std::exp(x - mx));
      for (int64_t d = 0; d < D; ++d) {
        double acc = 0;
        for (int64_t n = 0; n < kv; ++n) acc += w[static_cast<size_t>(n)] * v[static_cast<size_t>((n * Hkv + kh) * D + d)];
        out[static_cast<size_t>((s * H + h) * D + d)] = static_cast<float>(acc / sum);
      }
    }
  }
  return out;
}

std::vector<float> wave(size_t n, float phase) {
  std::vector<float> out(n);
  for (size_t i = 0; i < n; ++i) out[i] = std::sin(0.37f * static_cast<float>(i) + phase);
  return out;
}

// custom_sdpa's operands: query [1, S, H, D] and caches [1, Smax, Hkv, D] of waves (phases given),
// and an output of query's shape.
struct SdpaOperands {
  std::vector<float> q, k, v;
  EValue *out, *qv, *kv, *vv;
  SdpaOperands(KernelCall& c, int64_t S, int64_t H, int64_t Hkv, int64_t D, int64_t Smax, float qp, float kp, float vp)
      : q(wave(static_cast<size_t>(S * H * D), qp)),
        k(wave(static_cast<size_t>(Smax * Hkv * D), kp)),
        v(wave(static_cast<size_t>(Smax * Hkv * D), vp)),
        out(c.f32({1, S, H, D})),
        qv(c.f32({1, S, H, D}, q)),
        kv(c.f32({1, Smax, Hkv, D}, k)),
        vv(c.f32({1, Smax, Hkv, D}, v)) {}
};

}  // namespace

TEST_CASE("llama::update_cache writes rows start_pos.. and refuses rows outside the cache", "[kernels][llm]") {
  KernelCall c;
  EValue* cache = c.f32({1, 4, 1, 2}, std::vector<float>(8, -1.0f));
  EValue* value = c.f32({1, 2, 1, 2}, {1, 2, 3, 4});
  EValue* out = c.f32({1});
  REQUIRE_FALSE(c.run("llama::update_cache.out", {value, cache, c.integer(1), out, out}).failed());
  CHECK(c.t(cache).values<float>() == std::vector<float>{-1, -1, 1, 2, 3, 4, -1, -1});
  CHECK(c.run("llama::update_cache.out", {value, cache, c.integer(3), out, out}).failed());   // rows 3..4 of 4
  CHECK(c.run("llama::update_cache.out", {value, cache, c.integer(-1), out, out}).failed());  // ExecuTorch would write before the cache
  CHECK(c.run("llama::update_cache.out", {c.f32({1, 2, 2, 2}), cache, c.integer(0), out, out}).failed());  // heads differ
  CHECK(c.t(cache).values<float>() == std::vector<float>{-1, -1, 1, 2, 3, 4, -1, -1});
}

TEST_CASE("llama::update_cache_with_indices writes the indexed rows, checks every index first", "[kernels][llm]") {
  KernelCall c;
  EValue* cache = c.f32({1, 4, 1, 1}, {0, 0, 0, 0});
  EValue* value = c.f32({1, 2, 1, 1}, {5, 6});
  EValue* out = c.f32({1});
  REQUIRE_FALSE(c.run("llama::update_cache_with_indices.out", {value, cache, c.integer(0), c.i64({1, 2}, {3, 0}), out, out}).failed());
  CHECK(c.t(cache).values<float>() == std::vector<float>{6, 0, 0, 5});
  CHECK(c.run("llama::update_cache_with_indices.out", {value, cache, c.integer(0), c.i64({1, 2}, {1, 4}), out, out}).failed());
  CHECK(c.run("llama::update_cache_with_indices.out", {value, cache, c.integer(0), c.i64({1, 2}, {-1, 1}), out, out}).failed());
  CHECK(c.t(cache).values<float>() == std::vector<float>{6, 0, 0, 5});  // a bad index wrote nothing
}

TEST_CASE("llama::custom_sdpa: grouped-query causal attention over the filled cache rows", "[kernels][llm]") {
  const int64_t S = 3, H = 4, Hkv = 2, D = 8, Smax = 6, start = 2;
  KernelCall c;
  const SdpaOperands o(c, S, H, Hkv, D, Smax, 0.1f, 1.3f, 2.9f);
  const std::vector<float>&q = o.q, &k = o.k, &v = o.v;
  EValue *out = o.out, *qv = o.qv, *kv = o.kv, *vv = o.vv;
  REQUIRE_FALSE(c.run("llama::custom_sdpa.out", {qv, kv, vv, c.integer(start), c.none(), c.dbl(0), c.boolean_scalar(true), c.none(), out, out}).failed());
  const std::vector<float> want = direct_attention(q, k, v, S, H, Hkv, D, start, true, start + S);
  const std::vector<float> got = c.t(out).values<float>();
  for (size_t i = 0; i < want.size(); ++i) CHECK(std::fabs(got[i] - want[i]) < 1e-5f);
  // Positions past the cache, a mask together with is_causal, and too little scratch are refused.
  CHECK(c.run("llama::custom_sdpa.out", {qv, kv, vv, c.integer(4), c.none(), c.dbl(0), c.boolean_scalar(true), c.none(), out, out}).failed());
  CHECK(c.run("llama::custom_sdpa.out", {qv, kv, vv, c.integer(-1), c.none(), c.dbl(0), c.boolean_scalar(true), c.none(), out, out}).failed());
  EValue* mask = c.f32({S, Smax}, std::vector<float>(static_cast<size_t>(S * Smax), 0.0f));
  CHECK(c.run("llama::custom_sdpa.out", {qv, kv, vv, c.integer(0), mask, c.dbl(0), c.boolean_scalar(true), c.none(), out, out}).failed());
  CHECK(c.run("llama::custom_sdpa.out", {qv, kv, vv, c.integer(0), c.none(), c.dbl(0), c.boolean_scalar(true), c.none(), out, out}, 16).failed());
  // A float mask instead of is_causal: every cache row, the mask added after scaling.
  REQUIRE_FALSE(c.run("llama::custom_sdpa.out", {qv, kv, vv, c.integer(0), mask, c.dbl(0), c.boolean_scalar(false), c.none(), out, out}).failed());
  const std::vector<float> all = direct_attention(q, k, v, S, H, Hkv, D, 0, false, Smax);
  const std::vector<float> masked = c.t(out).values<float>();
  for (size_t i = 0; i < all.size(); ++i) CHECK(std::fabs(masked[i] - all[i]) < 1e-5f);
}

TEST_CASE("llama::custom_sdpa on float32 head sizes of 16 and more (the blocked path) equals the direct computation", "[kernels][llm]") {
  // Head sizes with and without a last half register of outputs; one to 17 query rows per key
  // head (grouped-query heads and positions share it); keys from a partial block of 16 to several.
  const int64_t D = GENERATE(16, 48, 64, 128);
  const auto [S, H, Hkv, start] = GENERATE(std::tuple<int64_t, int64_t, int64_t, int64_t>{1, 9, 3, 37}, std::tuple<int64_t, int64_t, int64_t, int64_t>{1, 4, 4, 0},
                                           std::tuple<int64_t, int64_t, int64_t, int64_t>{5, 2, 1, 11}, std::tuple<int64_t, int64_t, int64_t, int64_t>{17, 9, 3, 0},
                                           std::tuple<int64_t, int64_t, int64_t, int64_t>{40, 4, 2, 23});
  const int64_t Smax = 64;
  KernelCall c;
  const SdpaOperands o(c, S, H, Hkv, D, Smax, 0.7f, 1.1f, 2.3f);
  const std::vector<float>&q = o.q, &k = o.k, &v = o.v;
  EValue *out = o.out, *qv = o.qv, *kv = o.kv, *vv = o.vv;
  REQUIRE_FALSE(c.run("llama::custom_sdpa.out", {qv, kv, vv, c.integer(start), c.none(), c.dbl(0), c.boolean_scalar(true), c.none(), out, out}).failed());
  const std::vector<float> want = direct_attention(q, k, v, S, H, Hkv, D, start, true, start + S);
  const std::vector<float> got = c.t(out).values<float>();
  bool close = got.size() == want.size();
  for (size_t i = 0; close && i < want.size(); ++i) close = std::fabs(got[i] - want[i]) < 2e-6f;
  CHECK(close);
  // A float mask over every cache row: -inf hides keys, and a row that sees none is NaN (0 / 0).
  std::vector<float> m(static_cast<size_t>(S * Smax), 0.0f);
  for (int64_t s = 0; s < S; ++s) {
    for (int64_t n = 0; n < Smax; ++n) {
      if ((n * 7 + s) % 5 == 0 || s == S - 1) m[static_cast<size_t>(s * Smax + n)] = (s == S - 1) ? -INFINITY : 0.25f * static_cast<float>(n % 3);
    }
  }
  EValue* mask = c.f32({S, Smax}, m);
  REQUIRE_FALSE(c.run("llama::custom_sdpa.out", {qv, kv, vv, c.integer(0), mask, c.dbl(0), c.boolean_scalar(false), c.none(), out, out}).failed());
  const std::vector<float> all = direct_attention(q, k, v, S, H, Hkv, D, 0, false, Smax, m.data());
  const std::vector<float> masked = c.t(out).values<float>();
  bool same = masked.size() == all.size();
  for (size_t i = 0; same && i < all.size(); ++i) same = std::isnan(all[i]) ? std::isnan(masked[i]) : std::fabs(masked[i] - all[i]) < 2e-6f;
  CHECK(same);
}

TEST_CASE("llama::sdpa_with_kv_cache updates both caches, then attends", "[kernels][llm]") {
  const int64_t S = 2, H = 2, Hkv = 1, D = 4, Smax = 4;
  KernelCall c;
  EValue* kc = c.f32({1, Smax, Hkv, D}, std::vector<float>(static_cast<size_t>(Smax * Hkv * D), 0.0f));
  EValue* vc = c.f32({1, Smax, Hkv, D}, std::vector<float>(static_cast<size_t>(Smax * Hkv * D), 0.0f));
  const std::vector<float> q = wave(static_cast<size_t>(S * H * D), 0.5f), k = wave(static_cast<size_t>(S * Hkv * D), 1.5f),
                           v = wave(static_cast<size_t>(S * Hkv * D), 2.5f);
  EValue* out = c.f32({1, S, H, D});
  REQUIRE_FALSE(c.run("llama::sdpa_with_kv_cache.out", {c.f32({1, S, H, D}, q), c.f32({1, S, Hkv, D}, k), c.f32({1, S, Hkv, D}, v), kc, vc,
                                                        c.integer(0), c.integer(S), c.none(), c.dbl(0), c.boolean_scalar(true), c.none(), out, out})
                    .failed());
  std::vector<float> kfull(static_cast<size_t>(Smax * Hkv * D), 0.0f), vfull = kfull;
  std::copy(k.begin(), k.end(), kfull.begin());
  std::copy(v.begin(), v.end(), vfull.begin());
  CHECK(c.t(kc).values<float>() == kfull);
  CHECK(c.t(vc).values<float>() == vfull);
  const std::vector<float> want = direct_attention(q, kfull, vfull, S, H, Hkv, D, 0, true, S);
  const std::vector<float> got = c.t(out).values<float>();
  for (size_t i = 0; i < want.size(); ++i) CHECK(std::fabs(got[i] - want[i]) < 1e-5f);
  CHECK(c.run("llama::sdpa_with_kv_cache.out", {c.f32({1, S, H, D}, q), c.f32({1, S, Hkv, D}, k), c.f32({1, S, Hkv, D}, v), kc, vc,
                                                 c.integer(3), c.integer(S), c.none(), c.dbl(0), c.boolean_scalar(true), c.none(), out, out})
            .failed());
}

TEST_CASE("llama::custom_quantized_sdpa: int8 per-token operands equal float attention on their dequantised values", "[kernels][llm]") {
  const int64_t S = 2, H = 2, Hkv = 1, D = 4, Smax = 3;
  KernelCall c;
  std::vector<int8_t> q8 = {10, -20, 30, 5, -7, 8, 100, -3, 1, 2, 3, 4, -50, 60, -70, 80};
  std::vector<int8_t> k8 = {3, -4, 5, 6, 7, 8, -9, 10, 11, -12, 13, 14};
  std::vector<int8_t> v8 = {-1, 2, -3, 4, 5, -6, 7, -8, 9, 10, -11, 12};
  const std::vector<float> qs = {0.02f, 0.03f, 0.01f, 0.05f}, ks = {0.1f, 0.2f, 0.05f}, vs = {0.3f, 0.1f, 0.2f};
  const std::vector<int8_t> qz = {1, -2, 0, 3}, kz = {2, 0, -1}, vz = {0, 1, -2};
  auto deq = [](const std::vector<int8_t>& x, const std::vector<float>& s, const std::vector<int8_t>& z, int64_t D) {
    std::vector<float> out(x.size());
    for (size_t i = 0; i < x.size(); ++i) out[i] = static_cast<float>(x[i] - z[i / static_cast<size_t>(D)]) * s[i / static_cast<size_t>(D)];
    return out;
  };
  EValue* out = c.f32({1, S, H, D});
  EValue* q = c.tensor<int8_t>(ScalarType::kChar, {1, S, H, D}, q8);
  EValue* k = c.tensor<int8_t>(ScalarType::kChar, {1, Smax, Hkv, D}, k8);
  EValue* v = c.tensor<int8_t>(ScalarType::kChar, {1, Smax, Hkv, D}, v8);
  EValue* qzp = c.tensor<int8_t>(ScalarType::kChar, {1, S, H, 1}, qz);
  EValue* kzp = c.tensor<int8_t>(ScalarType::kChar, {1, Smax, Hkv, 1}, kz);
  EValue* vzp = c.tensor<int8_t>(ScalarType::kChar, {1, Smax, Hkv, 1}, vz);
  REQUIRE_FALSE(c.run("llama::custom_quantized_sdpa.out",
                      {q, k, v, c.integer(1), c.none(), c.dbl(0), c.boolean_scalar(true), c.none(), qzp, c.f32({1, S, H, 1}, qs), kzp,
                       c.f32({1, Smax, Hkv, 1}, ks), vzp, c.f32({1, Smax, Hkv, 1}, vs), c.boolean_scalar(false), out, out})
                    .failed());
  const std::vector<float> want = direct_attention(deq(q8, qs, qz, D), deq(k8, ks, kz, D), deq(v8, vs, vz, D), S, H, Hkv, D, 1, true, 1 + S);
  const std::vector<float> got = c.t(out).values<float>();
  for (size_t i = 0; i < want.size(); ++i) CHECK(std::fabs(got[i] - want[i]) < 1e-4f);
  // Scales missing for an int8 query.
  CHECK(c.run("llama::custom_quantized_sdpa.out", {q, k, v, c.integer(1), c.none(), c.dbl(0), c.boolean_scalar(true), c.none(), c.none(),
                                                   c.none(), kzp, c.f32({1, Smax, Hkv, 1}, ks), vzp, c.f32({1, Smax, Hkv, 1}, vs),
                                                   c.boolean_scalar(false), out, out})
            .failed());
}
