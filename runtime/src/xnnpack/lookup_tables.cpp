// Chains of elementwise nodes between two 8-bit quantized values, run as one 256-entry table
// (DelegateState::LookupChain, delegate_state.h), as XNNPACK's runtime runs them.
#include <cstring>

#include "xnnpack/node_table.h"
#if defined(__AVX512F__)
#include <immintrin.h>
#endif

namespace etscope::runtime::xnnpack {
namespace {

constexpr size_t kMaxChainNodes = 10;  // XNNPACK fuses at most this many nodes into one table

bool eight_bit(const xnn::TensorValue& v) { return v.type == ElementType::kQInt8 || v.type == ElementType::kQUInt8; }

bool scalar_constant(const xnn::TensorValue& v) { return v.is_constant && v.numel == 1; }

}  // namespace

int32_t DelegateState::elementwise_input(const Node& n) const {
  if (n.outputs.size() != 1) return -1;
  if (has_trait(n.kind, kUnaryElementwise)) return n.inputs.size() == 1 ? n.inputs[0] : -1;
  if (!has_trait(n.kind, kBinaryElementwise) || n.inputs.size() != 2 || n.inputs[0] < 0 || n.inputs[1] < 0) return -1;
  const xnn::TensorValue& a = value(n.inputs[0]);
  const xnn::TensorValue& b = value(n.inputs[1]);
  if (scalar_constant(a) && !b.is_constant) return n.inputs[1];
  if (scalar_constant(b) && !a.is_constant) return n.inputs[0];
  return -1;
}

size_t DelegateState::lookup_chain_end(size_t i, const std::vector<int>& joins) const {
  // As XNNPACK's fusion: from a node elementwise in an 8-bit value, follow each output that one
  // elementwise node alone reads (here: the next node), at most kMaxChainNodes nodes; the chain
  // ends at the last node whose output is 8-bit and needs two nodes at least.
  const size_t nn = graph.nodes.size();
  const int32_t in = elementwise_input(graph.nodes[i]);
  if (in < 0 || !eight_bit(value(in)) || joins[i] == -1 || (i > 0 && joins[i - 1] == 1)) return i;
  size_t end = i, nodes = 0;
  for (size_t k = i;; ++k) {
    nodes += joins[k] == -1 ? 0 : 1;  // a Clamp XNNPACK fused into its producer is no node of its own
    const int32_t out = graph.nodes[k].outputs[0];
    if (eight_bit(value(out))) end = k + 1;
    if (k + 1 >= nn || consumers[static_cast<size_t>(out)] != 1 || (value(out).flags & xnn::kFlagExternalOutput) != 0) break;
    if (elementwise_input(graph.nodes[k + 1]) != out) break;
    if (nodes >= kMaxChainNodes && joins[k + 1] != -1) break;
  }
  return end >= i + 2 ? end : i;
}

void DelegateState::plan_lookup_tables() {
  for (LookupChain& c : lookup_chains) {
    c.ready = false;
    const size_t in = static_cast<size_t>(c.input), out = static_cast<size_t>(c.output);
    if (raw[in] == nullptr) continue;
    c.raw_output = raw[out] != nullptr;
    // The chain's nodes on the 256 integers: every value they read or write (but constants)
    // becomes a 256-element value with buffers of its own for the run, then is put back.
    struct Saved {
      size_t v;
      Shape shape;
      float* data;
      int8_t* raw;
    };
    std::vector<Saved> saved;
    for (uint32_t k = c.first; k <= c.last; ++k) {
      const Node& n = graph.nodes[k];
      for (const std::vector<int32_t>* list : {&n.inputs, &n.outputs}) {
        for (int32_t v : *list) {
          if (v < 0 || value(v).is_constant) continue;
          const size_t u = static_cast<size_t>(v);
          bool seen = false;
          for (const Saved& s : saved) seen |= s.v == u;
          if (!seen) saved.push_back({u, shapes[u], data[u], raw[u]});
        }
      }
    }
    std::vector<float> floats(saved.size() * 256);
    std::vector<int8_t> bytes(saved.size() * 256);
    for (size_t j = 0; j < saved.size(); ++j) {
      const size_t v = saved[j].v;
      Shape s;  // the value's rank, its elements along the last dimension
      s.rank = std::max(1, shapes[v].rank);
      std::fill(s.d, s.d + s.rank, int64_t{1});
      s.d[s.rank - 1] = 256;
      shapes[v] = s;
      data[v] = floats.data() + j * 256;
      if (raw[v] != nullptr) raw[v] = bytes.data() + j * 256;
    }
    for (int k = 0; k < 256; ++k) raw[in][k] = static_cast<int8_t>(static_cast<uint8_t>(k));
    if (c.raw_output) {
      raw[out] = c.table.data();
    } else {
      data[out] = c.floats.data();
    }
    const bool active = raw_active;
    raw_active = true;
    for (uint32_t k = c.first; k <= c.last; ++k) run_node(k);
    raw_active = active;
    for (const Saved& s : saved) {
      shapes[s.v] = s.shape;
      data[s.v] = s.data;
      raw[s.v] = s.raw;
    }
    c.ready = true;
  }
}

void DelegateState::run_lookup(const LookupChain& c) {
  const int8_t* from = raw[static_cast<size_t>(c.input)];
  const int64_t count = shapes[static_cast<size_t>(c.output)].numel();
  int64_t e = 0;
  if (!c.raw_output) {
    float* to = data[static_cast<size_t>(c.output)];
#if defined(__AVX512F__)
    for (; e + 16 <= count; e += 16) {
      const __m512i at = _mm512_maskz_cvtepu8_epi32(0xffff, _mm_loadu_si128(reinterpret_cast<const __m128i*>(from + e)));
      _mm512_storeu_ps(to + e, _mm512_mask_i32gather_ps(_mm512_setzero_ps(), 0xffff, at, c.floats.data(), 4));
    }
#endif
    for (; e < count; ++e) to[e] = c.floats[static_cast<uint8_t>(from[e])];
    return;
  }
  int8_t* to = raw[static_cast<size_t>(c.output)];
#if defined(__AVX512VBMI__) && defined(__AVX512BW__)
  // 64 integers at a time: the low seven bits pick one of 128 entries in two pairs of registers
  // (the table's halves for bytes 0..127 and 128..255), the top bit picks the half.
  const __m512i t0 = _mm512_loadu_si512(c.table.data()), t1 = _mm512_loadu_si512(c.table.data() + 64);
  const __m512i t2 = _mm512_loadu_si512(c.table.data() + 128), t3 = _mm512_loadu_si512(c.table.data() + 192);
  auto look = [&](__m512i x) {
    const __m512i lo = _mm512_permutex2var_epi8(t0, x, t1), hi = _mm512_permutex2var_epi8(t2, x, t3);
    return _mm512_mask_blend_epi8(_mm512_movepi8_mask(x), lo, hi);
  };
  for (; e + 64 <= count; e += 64) _mm512_storeu_si512(to + e, look(_mm512_loadu_si512(from + e)));
  if (e < count) {
    const __mmask64 m = (~__mmask64{0}) >> (64 - (count - e));
    _mm512_mask_storeu_epi8(to + e, m, look(_mm512_maskz_loadu_epi8(m, from + e)));
    e = count;
  }
#endif
  for (; e < count; ++e) to[e] = c.table[static_cast<uint8_t>(from[e])];
}

}  // namespace etscope::runtime::xnnpack
