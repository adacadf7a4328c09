// arena-over-greedy: a planned arena larger than ExecuTorch's greedy planner needs for the same
// tensors and lifetimes (inspect's MemoryPlan re-runs it): bytes every load allocates for nothing.
#include "etscope/core/text.h"
#include "rules/rules.h"

namespace etscope::findings {

void rule_arena_over_greedy(const Context& ctx, std::vector<Found>& out) {
  const inspect::MemoryPlan* memory = ctx.memory();
  if (!memory) return;
  for (const inspect::Arena& a : memory->arenas()) {
    const uint64_t waste = a.potential_saving();
    // Alignment and the planner's own rounding: not worth a finding.
    if (waste < 4096 || waste * 20 < a.size) continue;
    Found f;
    Finding& fi = f.finding;
    fi.rule = "arena-over-greedy";
    fi.what = "arena " + std::to_string(a.memory_id) + " is " + bytes_text(a.size) + "; ExecuTorch's greedy planner needs " +
              bytes_text(a.greedy_bytes) + " for the same tensors";
    fi.where.push_back(ctx.method_place());
    fi.evidence.push_back("peak live bytes " + bytes_text(a.peak_bytes) + " at step " + std::to_string(a.peak_step) +
                          ", utilisation " + share_text(a.utilisation) + ", " + bytes_text(a.never_used_bytes) + " never used");
    fi.bytes = waste;
    fi.severity = waste * 4 >= a.size ? Severity::kMedium : Severity::kLow;
    fi.advice = "Re-export with ExecuTorch's greedy memory planning (MemoryPlanningPass's default algorithm suite in "
                "ExecutorchBackendConfig) instead of a naive or custom plan; `etscope memory` shows which tensors could share.";
    out.push_back(std::move(f));
  }
}

}  // namespace etscope::findings
