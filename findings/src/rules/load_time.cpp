// load-time: the method's load made mostly of one thing, a delegate's initialisation (for
// XNNPACK: building its runtime and packing every weight into its kernels' layout).
#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "etscope/core/event_names.h"
#include "etscope/core/text.h"
#include "rules/rules.h"

namespace etscope::findings {
namespace {

/// Loads shorter than this are left alone: nobody waits for them.
constexpr double kMinLoadMs = 1.0;
/// "Dominated": at least this share of the load.
constexpr double kDominantShare = 0.5;
/// A load this long is a medium finding (an app's start the user sees), shorter ones low.
constexpr double kLongLoadMs = 1000.0;

struct Init {
  int32_t chain = -1, instruction = 0;
  double ms = 0;
};

const inspect::EventBlock* load_block(const inspect::Inspector& in) {
  for (const inspect::EventBlock& b : in.blocks()) {
    if (b.name == events::kBlockDefault) return &b;
  }
  return nullptr;
}

std::string backend_advice(const std::string& backend) {
  if (backend == "XnnpackBackend") {
    return "XNNPACK builds its runtime and repacks every weight into its kernels' layout when a method loads: a "
           "cost per load, not per run. Load the method once and keep it (ExecuTorch's Module keeps a loaded method); "
           "methods that share weights (an LLM's prefill and decode) pack them once with ExecuTorch's XNNPACK weight "
           "cache (backend option weight_cache_enabled, in runtimes built with EXECUTORCH_XNNPACK_ENABLE_WEIGHT_CACHE).";
  }
  return "The backend's init (compiling its graph, preparing its weights) is paid on every load: load the method once and "
         "keep it, and see the backend's options for caching what its init prepares.";
}

}  // namespace

void rule_load_time(const Context& ctx, std::vector<Found>& out) {
  const inspect::Inspector& in = *ctx.inspector();
  const inspect::EventBlock* block = load_block(in);
  if (block == nullptr) return;
  double load_ms = 0;
  std::vector<Init> inits;
  for (const inspect::Event& ev : block->events) {
    if (!ev.perf) continue;
    const double ms = ev.perf->avg * ctx.ms_per_unit();
    if (ev.name == events::kProgramLoadMethod) load_ms = std::max(load_ms, ms);
    if (ev.name == events::kMethodInit && load_ms == 0) load_ms = ms;
    if (ev.name == events::kDelegateInit && ev.is_delegated_op != true) inits.push_back({ev.chain, ev.instruction_id, ms});
  }
  if (inits.empty() || load_ms < kMinLoadMs) return;

  // By backend: one delegate, or all delegates of one backend, may be the one thing.
  std::map<std::string, std::vector<Init>> by_backend;
  for (const Init& i : inits) {
    const Place p = ctx.place_of(i.chain, i.instruction);
    const std::string backend = p.op.starts_with("delegate ") ? p.op.substr(9) : std::string("a delegate");
    by_backend[backend].push_back(i);
  }
  for (auto& [backend, group] : by_backend) {
    std::sort(group.begin(), group.end(), [](const Init& a, const Init& b) { return a.ms > b.ms; });
    double sum = 0;
    for (const Init& i : group) sum += i.ms;
    if (sum < kDominantShare * load_ms) continue;
    const bool one = group.front().ms >= kDominantShare * load_ms;
    Found f;
    Finding& fi = f.finding;
    fi.rule = "load-time";
    fi.what = one ? "the method's load is mostly the init of one " + backend + " delegate (instruction " +
                        std::to_string(group.front().instruction) + ")"
                  : "the method's load is mostly " + backend + "'s init of its " + count_text(group.size(), "delegate");
    const size_t named = one ? 1 : std::min<size_t>(group.size(), 5);
    for (size_t k = 0; k < named; ++k) fi.where.push_back(ctx.place_of(group[k].chain, group[k].instruction));
    fi.evidence.push_back("load " + duration_text_ms(load_ms) + " (" + std::string(events::kProgramLoadMethod) + "), " +
                          backend + " init " + duration_text_ms(sum) + " (" + share_text(sum / load_ms) + ")");
    if (!one || group.size() > 1) {
      fi.evidence.push_back("largest: instruction " + std::to_string(group.front().instruction) + ", " +
                            duration_text_ms(group.front().ms) + " of " + count_text(group.size(), "delegate init"));
    }
    if (ctx.run_ms() > 0) {
      fi.evidence.push_back("the load takes as long as " + significant_text(load_ms / ctx.run_ms(), 3) + " executions (" +
                            duration_text_ms(ctx.run_ms()) + " each)");
    }
    fi.severity = load_ms >= kLongLoadMs ? Severity::kMedium : Severity::kLow;
    fi.advice = backend_advice(backend);
    out.push_back(std::move(f));
  }
}

}  // namespace etscope::findings
