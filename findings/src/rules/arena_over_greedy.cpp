// arena-over-greedy: a planned arena in which no two tensors share bytes although their lifetimes
// would let them (the plan of ExecuTorch's naive algorithm, or of a custom one without reuse),
// with what ExecuTorch's greedy planner needs for the same tensors (inspect's MemoryPlan re-runs
// it). An arena whose tensors already share is left alone: ExecuTorch's greedy planner works on
// the graph's own lifetimes, which etscope's re-run over instruction steps only approximates, so
// a smaller bound there is no promise that a re-export reaches it.
#include "etscope/core/text.h"
#include "rules/rules.h"

namespace etscope::findings {

void rule_arena_over_greedy(const Context& ctx, std::vector<Found>& out) {
  const inspect::MemoryPlan* memory = ctx.memory();
  if (!memory) return;
  for (const inspect::Arena& a : memory->arenas()) {
    // Bytes the arena's tensors would take side by side, each in its own slot.
    uint64_t side_by_side = 0;
    size_t tensors = 0;
    for (const inspect::PlannedTensor& t : memory->tensors()) {
      if (!t.placed || t.memory_id != a.memory_id || t.view_of >= 0) continue;
      side_by_side += t.reserved;
      ++tensors;
    }
    if (tensors < 2 || side_by_side * 20 < a.size * 19) continue;  // its tensors share: a plan with reuse
    const uint64_t waste = a.potential_saving();
    // The naive plan's signature is a bound at most half the arena. Smaller gaps come from the
    // lifetimes themselves: ExecuTorch's greedy plans of xnn_transformer and antialias_resize leave
    // 16% and 8% that the re-run over instruction steps would share (docs/findings.md).
    if (waste < 4096 || waste * 2 < a.size) continue;
    Found f;
    Finding& fi = f.finding;
    fi.rule = "arena-over-greedy";
    fi.what = "arena " + std::to_string(a.memory_id) + " gives each of its " + std::to_string(tensors) +
              " tensors bytes of its own (" + bytes_text(a.size) + "); ExecuTorch's greedy planner needs " +
              bytes_text(a.greedy_bytes) + " for them";
    fi.where.push_back(ctx.method_place());
    fi.evidence.push_back("peak live bytes " + bytes_text(a.peak_bytes) + " at step " + std::to_string(a.peak_step) +
                          ", utilisation " + share_text(a.utilisation) + ", " + bytes_text(a.never_used_bytes) + " never used");
    fi.bytes = waste;
    fi.severity = waste * 4 >= a.size ? Severity::kMedium : Severity::kLow;
    fi.advice = "Re-export with ExecuTorch's default memory planning: to_executorch() without a memory_planning_pass, or "
                "MemoryPlanningPass(memory_planning_algo=MemoryPlanningAlgorithmSuite(algo_list=[greedy])) in "
                "ExecutorchBackendConfig; `etscope memory` shows which tensors could share.";
    out.push_back(std::move(f));
  }
}

}  // namespace etscope::findings
