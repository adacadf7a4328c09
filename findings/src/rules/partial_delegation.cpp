// partial-delegation: in a program that calls a delegate, the operators left to portable kernels,
// grouped by operator, with the share of the run they take; those between two delegate calls
// also cost a round trip out of and back into the delegate.
#include <algorithm>
#include <map>

#include "etscope/core/text.h"
#include "rules/rules.h"

namespace etscope::findings {
namespace {

// Operators no delegate is meant to take: the runtime's scalar and view primitives (no tensor
// data moves: executorch_prim::et_view, add.Scalar, sym_size, _local_scalar_dense) and the
// kernels of ExecuTorch's LLM custom-op library (llama::custom_sdpa, update_cache: written to run
// beside the delegate, on its KV caches).
bool meant_outside(const std::string& op) {
  return op.starts_with("executorch_prim::") || op.starts_with("llama::") || op.starts_with("aten::sym_size") ||
         op.starts_with("aten::sym_numel") || op.starts_with("aten::_local_scalar_dense");
}

}  // namespace

void rule_partial_delegation(const Context& ctx, std::vector<Found>& out) {
  const std::vector<Call>& calls = ctx.calls();
  size_t first = calls.size(), last = 0, delegate_calls = 0;
  std::map<std::string, size_t> backends;
  for (size_t k = 0; k < calls.size(); ++k) {
    if (!calls[k].delegate) continue;
    first = std::min(first, k);
    last = k;
    ++delegate_calls;
    ++backends[calls[k].op];
  }
  if (delegate_calls == 0) return;
  std::string backend_names;
  for (const auto& [name, n] : backends) backend_names += (backend_names.empty() ? "" : ", ") + name;
  const std::vector<bool> constant_call = constant_calls(ctx);
  // The quantize and dequantize calls of a q/dq pattern are that rule's finding.
  std::vector<bool> in_qdq(calls.size(), false);
  for (const QdqPattern& p : qdq_patterns(ctx)) in_qdq[p.first] = in_qdq[p.last] = true;

  // Delegated share of the run, for the evidence.
  std::vector<size_t> delegated;
  for (size_t k = 0; k < calls.size(); ++k) {
    if (calls[k].delegate) delegated.push_back(k);
  }
  const std::optional<double> delegated_ms = ctx.cost_ms(delegated);

  std::map<std::string, std::vector<size_t>> by_op;
  for (size_t k = 0; k < calls.size(); ++k) {
    if (calls[k].delegate || constant_call[k] || in_qdq[k]) continue;  // their own findings
    if (meant_outside(calls[k].op)) continue;
    by_op[calls[k].op].push_back(k);
  }
  for (auto& [op, group] : by_op) {
    size_t between = 0;
    for (size_t k : group) between += k > first && k < last ? 1 : 0;
    Found f;
    Finding& fi = f.finding;
    fi.rule = "partial-delegation";
    fi.what = op + " runs outside " + backend_names + " (" + count_text(group.size(), "call") +
              (between ? ", " + std::to_string(between) + " between delegate calls" : "") + ")";
    for (size_t k : group) fi.where.push_back(ctx.place(calls[k]));
    fi.evidence.push_back(count_text(delegate_calls, "delegate call") + " of " + backend_names + "; " +
                          count_text(by_op.size(), "operator") + " left to portable kernels");
    ctx.cost(fi, group);
    if (delegated_ms && ctx.run_ms() > 0) {
      fi.evidence.push_back("delegated: " + share_text(*delegated_ms / ctx.run_ms()) + " of the run in " + backend_names);
    }
    fi.advice = "The partitioner did not take " + op + ": ExecuTorch's get_delegation_info "
                "(executorch.devtools.backend_debug) on the lowered graph lists what stayed out and how often; replace it with "
                "operators the backend supports (its partitioner's op list), relax what kept it out (dtype, dynamic shape, rank), "
                "or move it before or after the model." +
                std::string(between ? " Between two delegate calls it also costs leaving the delegate and entering it again." : "");
    // Without a profile every operator is a candidate; say so as info rather than guessing.
    if (!fi.time_ms) fi.severity = between ? Severity::kLow : Severity::kInfo;
    f.calls = group;
    out.push_back(std::move(f));
  }
}

}  // namespace etscope::findings
