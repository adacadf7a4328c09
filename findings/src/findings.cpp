#include "etscope/findings/findings.h"

#include <algorithm>
#include <set>
#include <utility>

#include "context.h"
#include "rules/rules.h"

namespace etscope::findings {
namespace {

enum class Needs : uint8_t { kProgram, kProfile };

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
  ETSCOPE_ASSIGN_OR_RETURN(Context ctx, Context::build(inputs, options));

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
    if (e.needs == Needs::kProfile && !ctx.timed()) {
      report.skipped.push_back(e.info.id + ": needs a profile (--etdump)");
      continue;
    }
    e.run(ctx, found);
  }

  // Timed findings below the share floor are noise; a finding without time keeps its place.
  std::erase_if(found, [&](const Found& f) {
    return f.finding.share && *f.finding.share < options.min_share && f.finding.bytes == 0 &&
           f.finding.severity != Severity::kHigh;
  });
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
