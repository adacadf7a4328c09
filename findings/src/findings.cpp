#include "etscope/findings/findings.h"

#include <algorithm>
#include <string>

#include "etscope/core/text.h"
#include <set>
#include <utility>

#include "context.h"
#include "rules/rules.h"

namespace etscope::findings {
namespace {

enum class Needs : uint8_t { kProgram, kProfile, kBaseline };

struct RuleEntry {
  RuleInfo info;
  Needs needs;
  Rule run;
};

const std::vector<RuleEntry>& entries() {
  static const std::vector<RuleEntry> all = {
      {{"constant-work", "operators that compute from constants alone, again on every run", false}, Needs::kProgram, rule_constant_work},
      {{"layout-copies", "permute/transpose/clone copies made only to feed a matrix product", false}, Needs::kProgram, rule_layout_copies},
      {{"partial-delegation", "operators left to portable kernels in a program that calls a delegate", false}, Needs::kProgram, rule_partial_delegation},
      {{"qdq-pairs", "quantize/dequantize pairs that cancel or wrap one float operator", false}, Needs::kProgram, rule_qdq_pairs},
      {{"dtype-round-trip", "a tensor converted to another dtype and back", false}, Needs::kProgram, rule_dtype_round_trip},
      {{"delegate-overhead", "a delegate call whose operators leave much of its time unattributed", true}, Needs::kProfile, rule_delegate_overhead},
      {{"arena-over-greedy", "a planned arena larger than ExecuTorch's greedy planner needs", false}, Needs::kProgram, rule_arena_over_greedy},
      {{"logged-timings", "timings recorded with intermediate outputs logged", true}, Needs::kProfile, rule_logged_timings},
      {{"warmup", "a first execution far slower than the rest, counted in the averages", true}, Needs::kProfile, rule_warmup},
      {{"load-time", "a method's load made mostly of one delegate's (or one backend's) init", true}, Needs::kProfile, rule_load_time},
      {{"regressions", "operators significantly slower than in a baseline run (--baseline), summed by module", true}, Needs::kBaseline, rule_regressions},
      {{"suspicious-constants", "NaN/Inf in weights, all-zero weight matrices, bool constants holding other bytes", false}, Needs::kProgram, rule_suspicious_constants},
  };
  return all;
}

}  // namespace

const char* to_string(Severity severity) {
  switch (severity) {
    case Severity::kInfo: return "info";
    case Severity::kLow: return "low";
    case Severity::kMedium: return "medium";
    case Severity::kHigh: return "high";
  }
  return "info";
}

Result<Severity> parse_severity(std::string_view text) {
  for (Severity s : {Severity::kInfo, Severity::kLow, Severity::kMedium, Severity::kHigh}) {
    if (text == to_string(s)) return s;
  }
  return Error(ErrorCode::kInvalidArgument, "unknown severity '" + std::string(text) + "' (info, low, medium, high)");
}

const std::vector<RuleInfo>& rule_catalog() {
  static const std::vector<RuleInfo> infos = [] {
    std::vector<RuleInfo> out;
    for (const RuleEntry& e : entries()) out.push_back(e.info);
    return out;
  }();
  return infos;
}

Result<Report> analyse(const Inputs& inputs, const Options& options) {
  std::set<std::string> wanted;
  for (const std::string& id : options.rules) {
    if (id.empty()) continue;
    const bool known = std::any_of(entries().begin(), entries().end(), [&](const RuleEntry& e) { return e.info.id == id; });
    if (!known) {
      std::string ids;
      for (const RuleEntry& e : entries()) ids += (ids.empty() ? "" : ", ") + e.info.id;
      return Error(ErrorCode::kInvalidArgument, "unknown rule '" + id + "' (rules: " + ids + ")");
    }
    wanted.insert(id);
  }
  ETSCOPE_ASSIGN_OR_RETURN(Context ctx, Context::build(inputs));

  Report report;
  report.program = inputs.program ? inputs.program->name() : "";
  report.method = ctx.method();
  report.timed = ctx.timed();
  report.engine = inputs.engine;
  report.run_ms = ctx.run_ms();
  if (ctx.timed()) report.runs = inputs.inspector->blocks()[*ctx.block()].runs.size();

  std::vector<Found> found;
  for (const RuleEntry& e : entries()) {
    if (!wanted.empty() && !wanted.contains(e.info.id)) continue;
    if (e.needs == Needs::kProgram && !ctx.plan()) {
      report.skipped.push_back(e.info.id + ": needs the program (--pte)");
      continue;
    }
    if ((e.needs == Needs::kProfile || e.needs == Needs::kBaseline) && !ctx.timed()) {
      report.skipped.push_back(e.info.id + ": needs a profile (--etdump)");
      continue;
    }
    if (e.needs == Needs::kBaseline && !inputs.baseline) {
      report.skipped.push_back(e.info.id + ": needs a baseline profile (--baseline)");
      continue;
    }
    e.run(ctx, found);
  }

  // Timed findings below the share floor are folded, per rule, into one finding that names them
  // all: one by one they are noise, together (one export pass removes them all) they may not be.
  std::vector<Found> kept;
  std::vector<std::pair<std::string, std::vector<Found>>> small;  // per rule, in rule order
  for (Found& f : found) {
    const bool below = f.finding.share && *f.finding.share < options.min_share && f.finding.bytes == 0;
    if (!below) {
      kept.push_back(std::move(f));
      continue;
    }
    auto it = std::find_if(small.begin(), small.end(), [&](const auto& s) { return s.first == f.finding.rule; });
    if (it == small.end()) it = small.insert(small.end(), {f.finding.rule, {}});
    it->second.push_back(std::move(f));
  }
  for (auto& [rule, group] : small) {
    if (group.size() == 1) {
      kept.push_back(std::move(group.front()));
      continue;
    }
    Found merged;
    Finding& m = merged.finding;
    m.rule = rule;
    m.what = std::to_string(group.size()) + " smaller " + rule + " findings, each under " +
             significant_text(options.min_share * 100.0, 2) + "% of the run";
    m.advice = group.front().finding.advice;
    for (Found& g : group) {
      m.where.insert(m.where.end(), g.finding.where.begin(), g.finding.where.end());
      m.evidence.push_back(g.finding.what);
      merged.calls.insert(merged.calls.end(), g.calls.begin(), g.calls.end());
    }
    std::sort(merged.calls.begin(), merged.calls.end());
    merged.calls.erase(std::unique(merged.calls.begin(), merged.calls.end()), merged.calls.end());
    if (merged.calls.empty()) {  // findings whose time stands alone: their sum
      double sum = 0;
      for (const Found& g : group) sum += g.finding.time_ms.value_or(0);
      m.time_ms = sum;
      if (ctx.run_ms() > 0) m.share = sum / ctx.run_ms();
      m.severity = ctx.severity_for(m.time_ms);
    } else {
      ctx.cost(m, merged.calls);
    }
    kept.push_back(std::move(merged));
  }
  found = std::move(kept);
  std::stable_sort(found.begin(), found.end(), [](const Found& a, const Found& b) {
    const double ta = a.finding.time_ms.value_or(-1), tb = b.finding.time_ms.value_or(-1);
    if (ta != tb) return ta > tb;
    if (a.finding.bytes != b.finding.bytes) return a.finding.bytes > b.finding.bytes;
    return a.finding.severity > b.finding.severity;
  });

  std::set<size_t> counted;
  for (Found& f : found) {
    if (f.finding.time_ms) {
      if (f.calls.empty()) {
        report.total_ms += *f.finding.time_ms;
      } else {
        for (size_t k : f.calls) {
          if (counted.insert(k).second) report.total_ms += ctx.cost_ms(ctx.calls()[k]).value_or(0.0);
        }
      }
    }
    report.total_bytes += f.finding.bytes;
    report.findings.push_back(std::move(f.finding));
  }
  if (ctx.timed() && ctx.run_ms() > 0) report.total_share = report.total_ms / ctx.run_ms();
  return report;
}

std::optional<Severity> highest_severity(const Report& report) {
  std::optional<Severity> best;
  for (const Finding& f : report.findings) {
    if (!best || f.severity > *best) best = f.severity;
  }
  return best;
}

}  // namespace etscope::findings
