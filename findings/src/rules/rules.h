// The rules: each is one function over the prepared Context, in its own file; findings.cpp runs
// them in rule_catalog() order. Private to the findings library.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "context.h"

namespace etscope::findings {

/// A finding and the calls (indices into Context::calls()) whose cost it is, so that the
/// report's total counts each call once; empty when its time stands alone (a delegate's
/// unattributed time).
struct Found {
  Finding finding;
  std::vector<size_t> calls;
};

using Rule = void (*)(const Context&, std::vector<Found>&);

// Program rules (a profile adds their time).
void rule_constant_work(const Context& ctx, std::vector<Found>& out);
void rule_layout_copies(const Context& ctx, std::vector<Found>& out);
void rule_partial_delegation(const Context& ctx, std::vector<Found>& out);
void rule_qdq_pairs(const Context& ctx, std::vector<Found>& out);
void rule_dtype_round_trip(const Context& ctx, std::vector<Found>& out);
void rule_suspicious_constants(const Context& ctx, std::vector<Found>& out);
void rule_arena_over_greedy(const Context& ctx, std::vector<Found>& out);
// Profile rules.
void rule_delegate_overhead(const Context& ctx, std::vector<Found>& out);
void rule_logged_timings(const Context& ctx, std::vector<Found>& out);
void rule_warmup(const Context& ctx, std::vector<Found>& out);
void rule_load_time(const Context& ctx, std::vector<Found>& out);
// Profile and baseline rules.
void rule_regressions(const Context& ctx, std::vector<Found>& out);

/// Operators that only move or copy bytes: their output holds the input's elements in another
/// layout (permute, transpose, clone, contiguous copies, expand).
bool is_layout_copy(const std::string& op);
/// Matrix products and convolutions: the consumers a layout copy is usually made for.
bool is_matrix_product(const std::string& op);
/// Per call: whether it computes from constants alone (rule constant-work's test).
std::vector<bool> constant_calls(const Context& ctx);
/// A quantize/dequantize pattern outside delegates (rule qdq-pairs): dequantize -> quantize with
/// the same parameters (cancelling), quantize -> dequantize (a round trip in float), or
/// dequantize -> one float operator -> quantize (a float island). Indices into Context::calls().
struct QdqPattern {
  enum class Kind : uint8_t { kCancelling, kRoundTrip, kFloatIsland };
  Kind kind = Kind::kCancelling;
  size_t first = 0, middle = 0, last = 0;  ///< middle == last for the two-call patterns.
};
std::vector<QdqPattern> qdq_patterns(const Context& ctx);
/// A dtype conversion (`_to_copy`, `_to_dim_order_copy`).
bool is_dtype_conversion(const std::string& op);

}  // namespace etscope::findings
