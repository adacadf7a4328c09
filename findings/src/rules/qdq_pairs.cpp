// qdq-pairs: quantize and dequantize operators that undo each other or that wrap a single float
// operator, left outside any delegate. A dequantize whose result is quantized again with the
// same parameters gives back its input (a copy twice over); a quantize dequantized at once only
// rounds a float tensor to the grid; a dequantize -> op -> quantize runs one operator in float.
#include <algorithm>

#include "etscope/core/text.h"
#include "rules/rules.h"

namespace etscope::findings {
namespace {

bool is_quantize(const std::string& op) {
  return op.starts_with("quantized_decomposed::quantize_per_");
}
bool is_dequantize(const std::string& op) {
  return op.starts_with("quantized_decomposed::dequantize_per_");
}

bool same_value(const Value* a, const Value* b) {
  if (!a || !b || a->kind != b->kind) return false;
  switch (a->kind) {
    case ValueKind::kNone: return true;
    case ValueKind::kInt: return a->int_value == b->int_value;
    case ValueKind::kBool: return a->bool_value == b->bool_value;
    case ValueKind::kDouble: return a->double_value == b->double_value;
    default: return false;
  }
}

// The quantization parameters of a q or dq call agree: the same scale and zero-point tensors
// (per-tensor .tensor and per-channel variants) and the same scalars (scale, zero point, range,
// dtype), compared over the arguments both have.
bool same_parameters(const Context& ctx, const Call& a, const Call& b) {
  if (a.inputs.size() != b.inputs.size()) return false;
  for (size_t i = 1; i < a.inputs.size(); ++i) {
    if (a.inputs[i] != b.inputs[i]) return false;
  }
  const size_t n = std::min<size_t>(std::min(a.scalars.size(), b.scalars.size()), 5);
  if (n == 0 && a.inputs.size() < 2) return false;
  for (size_t i = 0; i < n; ++i) {
    if (a.scalars[i] != b.scalars[i] && !same_value(ctx.value(a.scalars[i]), ctx.value(b.scalars[i]))) return false;
  }
  return true;
}

}  // namespace

std::vector<QdqPattern> qdq_patterns(const Context& ctx) {
  const std::vector<Call>& calls = ctx.calls();
  std::vector<QdqPattern> out;
  for (size_t k = 0; k < calls.size(); ++k) {
    const Call& first = calls[k];
    if (first.delegate || first.outputs.size() != 1 || first.inputs.empty()) continue;
    const bool dq = is_dequantize(first.op), q = is_quantize(first.op);
    if (!dq && !q) continue;
    const int32_t mid = first.outputs.front();
    for (size_t r : ctx.readers(mid, k)) {
      const Call& second = calls[r];
      if (dq && is_quantize(second.op) && second.inputs.front() == mid && same_parameters(ctx, first, second)) {
        out.push_back({QdqPattern::Kind::kCancelling, k, r, r});
      } else if (q && is_dequantize(second.op) && second.inputs.front() == mid && same_parameters(ctx, first, second)) {
        out.push_back({QdqPattern::Kind::kRoundTrip, k, r, r});
      } else if (dq && !second.delegate && !is_quantize(second.op) && !is_dequantize(second.op) && second.outputs.size() == 1) {
        for (size_t r2 : ctx.readers(second.outputs.front(), r)) {
          const Call& third = calls[r2];
          if (is_quantize(third.op) && third.inputs.front() == second.outputs.front()) {
            out.push_back({QdqPattern::Kind::kFloatIsland, k, r, r2});
          }
        }
      }
    }
  }
  return out;
}

void rule_qdq_pairs(const Context& ctx, std::vector<Found>& out) {
  const std::vector<Call>& calls = ctx.calls();
  auto emit = [&](std::vector<size_t> group, std::string what, std::string evidence, std::string advice) {
    Found f;
    Finding& fi = f.finding;
    fi.rule = "qdq-pairs";
    fi.what = std::move(what);
    for (size_t k : group) fi.where.push_back(ctx.place(calls[k]));
    fi.evidence.push_back(std::move(evidence));
    ctx.cost(fi, group);
    fi.advice = std::move(advice);
    f.calls = std::move(group);
    out.push_back(std::move(f));
  };
  for (const QdqPattern& p : qdq_patterns(ctx)) {
    const Call& first = calls[p.first];
    const Call& second = calls[p.middle];
    const Call& third = calls[p.last];
    const int32_t mid = first.outputs.front();
    switch (p.kind) {
      case QdqPattern::Kind::kCancelling:
        emit({p.first, p.last}, "a dequantize quantized again with the same parameters gives back its input: " + first.op + " -> " + second.op,
             ctx.describe_value(first.inputs.front()) + " -> " + ctx.describe_value(mid) + " -> " +
                 ctx.describe_value(second.outputs.empty() ? -1 : second.outputs.front()) + " (instructions " +
                 std::to_string(first.instruction) + ", " + std::to_string(second.instruction) + ")",
             "Remove the pair: the quantized tensor can be used as it is. It appears when an operator between two quantized "
             "ones was folded away or shares its neighbours' quantization parameters; run the lowering's q/dq fusion "
             "(to_edge_transform_and_lower with the backend's partitioner) after that rewrite.");
        break;
      case QdqPattern::Kind::kRoundTrip:
        emit({p.first, p.last}, "a float tensor quantized and dequantized at once (" + first.op + " -> " + second.op +
                                    "): it only rounds the values to the quantization grid",
             ctx.describe_value(first.inputs.front()) + " -> " + ctx.describe_value(mid) + " -> float again (instructions " +
                 std::to_string(first.instruction) + ", " + std::to_string(second.instruction) + ")",
             "The quantized operator this pair was meant for was not lowered: check why the partitioner left it out "
             "(get_delegation_info), or remove the quantization annotation on this edge so the pair disappears.");
        break;
      case QdqPattern::Kind::kFloatIsland: {
        const bool same = same_parameters(ctx, first, third);
        emit({p.first, p.last}, second.op + " runs in float between a dequantize and a quantize" +
                                    (same ? " with the same parameters" : ""),
             first.op + " #" + std::to_string(first.instruction) + " -> " + second.op + " #" + std::to_string(second.instruction) +
                 " -> " + third.op + " #" + std::to_string(third.instruction),
             "Lower " + second.op + " into the quantized delegate (a quantized kernel for it, or an operator the partitioner "
             "takes) so the tensor stays quantized" +
                 std::string(same ? "; an operator that only moves elements (" + second.op +
                                        ") gives the same result on the quantized values, so the pair is pure cost"
                                  : "; the pair costs two passes over the tensor") + ".");
        break;
      }
    }
  }
}

}  // namespace etscope::findings
