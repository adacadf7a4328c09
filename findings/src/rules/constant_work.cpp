// constant-work: operators whose every input is a constant (or the result of such an operator)
// compute the same result on every run. Folding them at export stores the result instead.
#include <algorithm>
#include <map>
#include <set>

#include "etscope/core/text.h"
#include "rules/rules.h"

namespace etscope::findings {

std::vector<bool> constant_calls(const Context& ctx) {
  const std::vector<Call>& calls = ctx.calls();
  std::set<int32_t> derived;          // values computed from constants alone
  std::vector<bool> constant_call(calls.size(), false);
  for (size_t k = 0; k < calls.size(); ++k) {
    const Call& c = calls[k];
    if (c.delegate || c.writes_inputs || c.inputs.empty() || c.outputs.empty()) continue;
    bool all = true;
    for (int32_t v : c.inputs) all = all && (ctx.is_constant(v) || derived.contains(v));
    // Scalars computed at run time (sym sizes) make the result vary.
    for (int32_t v : c.scalars) {
      const Value* value = ctx.value(v);
      all = all && value && !value->written_at_run_time;
    }
    if (!all) continue;
    constant_call[k] = true;
    for (int32_t v : c.outputs) derived.insert(v);
  }
  return constant_call;
}

void rule_constant_work(const Context& ctx, std::vector<Found>& out) {
  const std::vector<Call>& calls = ctx.calls();
  // Results of at most this many elements (scalars lifted to tensors, a hardswish's 3 and 6
  // converted to float) are folded into one finding: each costs a kernel call, not a pass over data.
  constexpr uint64_t kTiny = 16;
  std::vector<size_t> tiny_calls;
  const std::vector<bool> constant_call = constant_calls(ctx);

  // A constant result that the rest of the program reads, with the calls that made it; results
  // made from the same constants (a weight permuted for each of a loop's steps) are one finding.
  struct Group {
    std::vector<size_t> chain;
    std::vector<int32_t> results;
    std::vector<size_t> consumers;
  };
  std::map<std::set<int32_t>, Group> groups;
  std::vector<std::set<int32_t>> order;  // groups in the order first seen
  std::vector<bool> claimed(calls.size(), false);
  for (size_t k = 0; k < calls.size(); ++k) {
    if (!constant_call[k]) continue;
    const Call& c = calls[k];
    bool frontier = false;
    std::vector<size_t> consumers;
    for (int32_t v : c.outputs) {
      for (size_t r : ctx.readers(v, k)) {
        if (!constant_call[r]) {
          frontier = true;
          consumers.push_back(r);
        }
      }
      if (std::find(ctx.plan()->outputs.begin(), ctx.plan()->outputs.end(), v) != ctx.plan()->outputs.end()) frontier = true;
    }
    if (!frontier) continue;
    // Its constant-derived ancestors, in plan order.
    std::vector<size_t> chain;
    std::vector<size_t> stack{k};
    std::set<size_t> seen;
    std::set<int32_t> sources;
    while (!stack.empty()) {
      const size_t at = stack.back();
      stack.pop_back();
      if (!seen.insert(at).second) continue;
      if (!claimed[at]) chain.push_back(at);
      claimed[at] = true;
      for (int32_t v : calls[at].inputs) {
        if (ctx.is_constant(v)) {
          sources.insert(v);
          continue;
        }
        const int32_t w = ctx.writer(v, at);
        if (w >= 0 && constant_call[static_cast<size_t>(w)]) stack.push_back(static_cast<size_t>(w));
      }
    }
    if (chain.empty()) continue;
    uint64_t result_numel = 0;
    for (int32_t v : c.outputs) result_numel += ctx.tensor(v) ? ctx.tensor(v)->numel : 0;
    if (result_numel <= kTiny) {
      tiny_calls.insert(tiny_calls.end(), chain.begin(), chain.end());
      continue;
    }
    if (!groups.contains(sources)) order.push_back(sources);
    Group& g = groups[sources];
    g.chain.insert(g.chain.end(), chain.begin(), chain.end());
    g.results.insert(g.results.end(), c.outputs.begin(), c.outputs.end());
    g.consumers.insert(g.consumers.end(), consumers.begin(), consumers.end());
  }

  for (const std::set<int32_t>& sources : order) {
    Group& g = groups[sources];
    std::sort(g.chain.begin(), g.chain.end());
    Found f;
    Finding& fi = f.finding;
    fi.rule = "constant-work";
    uint64_t source_bytes = 0, result_bytes = 0;
    for (int32_t v : sources) source_bytes += ctx.tensor(v)->nbytes;
    for (int32_t v : g.results) result_bytes += ctx.tensor(v) ? ctx.tensor(v)->nbytes : 0;
    std::map<std::string, size_t> ops;
    for (size_t at : g.chain) {
      fi.where.push_back(ctx.place(calls[at]));
      ++ops[calls[at].op];
    }
    std::string op_list;
    for (const auto& [op, n] : ops) op_list += (op_list.empty() ? "" : ", ") + op + (n > 1 ? " x" + std::to_string(n) : "");
    std::string src;
    for (int32_t v : sources) src += (src.empty() ? "" : ", ") + ctx.describe_value(v);
    fi.what = count_text(g.chain.size(), "operator") + " recompute" + (g.chain.size() == 1 ? "s" : "") + " " +
              (g.results.size() == 1 ? "a result" : std::to_string(g.results.size()) + " results") + " from " + src +
              " on every run (" + op_list + ")";
    std::string res;
    for (int32_t v : g.results) res += (res.empty() ? "" : ", ") + ctx.describe_value(v);
    std::string readers;
    std::sort(g.consumers.begin(), g.consumers.end());
    g.consumers.erase(std::unique(g.consumers.begin(), g.consumers.end()), g.consumers.end());
    for (size_t r : g.consumers) readers += (readers.empty() ? "" : ", ") + calls[r].op + " #" + std::to_string(calls[r].instruction);
    fi.evidence.push_back("result " + res + " (" + bytes_text(result_bytes) + ")" + (readers.empty() ? "" : ", read by " + readers));
    ctx.cost(fi, g.chain);
    if (result_bytes > source_bytes) {
      fi.evidence.push_back("the constants take " + bytes_text(source_bytes) + "; the folded result would take " + bytes_text(result_bytes));
      fi.advice = "This expands smaller constants on every run (weight-only quantization dequantizing its weights does this): "
                  "folding it at export trades " + bytes_text(result_bytes - source_bytes) +
                  " more program size for the time; a kernel that reads the packed constants directly (a delegate's quantized "
                  "linear, e.g. XNNPACK's with the XnnpackPartitioner) saves both.";
    } else {
      fi.advice = "Fold it at export: run ExecuTorch's constant propagation (executorch.exir.passes.constant_prop_pass."
                  "constant_prop_pass) on the edge program before to_executorch(), or let a delegate take the operators, so the "
                  "result is stored as a constant.";
    }
    f.calls = g.chain;
    out.push_back(std::move(f));
  }
  if (tiny_calls.empty()) return;
  std::sort(tiny_calls.begin(), tiny_calls.end());
  Found f;
  Finding& fi = f.finding;
  fi.rule = "constant-work";
  std::map<std::string, size_t> ops;
  for (size_t k : tiny_calls) {
    fi.where.push_back(ctx.place(calls[k]));
    ++ops[calls[k].op];
  }
  std::string list;
  for (const auto& [op, n] : ops) list += (list.empty() ? "" : ", ") + op + " x" + std::to_string(n);
  fi.what = count_text(tiny_calls.size(), "operator") + " recompute scalar-sized constants on every run (" + list + ")";
  fi.evidence.push_back("each result holds at most " + std::to_string(kTiny) + " elements: the cost is the kernel calls themselves");
  ctx.cost(fi, tiny_calls);
  if (!fi.time_ms) fi.severity = Severity::kInfo;
  fi.advice = "ExecuTorch's constant propagation (executorch.exir.passes.constant_prop_pass.constant_prop_pass) folds them; "
              "worth it where kernel calls are expensive (small models, microcontrollers).";
  f.calls = std::move(tiny_calls);
  out.push_back(std::move(f));
}

}  // namespace etscope::findings
