// The rules that read a profile alone: a delegate's unattributed time, timings taken with
// intermediate logging on, and a first execution far slower than the rest.
#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "etscope/core/stats.h"
#include "etscope/core/text.h"
#include "etscope/inspect/compare.h"
#include "etscope/inspect/debug_buffer_planner.h"
#include "etscope/inspect/profile.h"
#include "rules/rules.h"

namespace etscope::findings {

// delegate-overhead: a delegate call whose operators' times add up to much less than the call.
void rule_delegate_overhead(const Context& ctx, std::vector<Found>& out) {
  const inspect::Inspector& in = *ctx.inspector();
  const size_t block = *ctx.block();
  for (const inspect::DelegateSummary& d : in.delegate_summaries(block)) {
    if (d.sub_events.empty()) continue;  // a delegate that reports no operators: nothing to compare
    const double call_ms = d.call_avg * ctx.ms_per_unit(), sub_ms = d.sub_events_avg * ctx.ms_per_unit();
    const double gap_ms = d.unattributed * ctx.ms_per_unit();
    if (gap_ms <= 0 || gap_ms < 0.15 * call_ms) continue;
    Found f;
    Finding& fi = f.finding;
    fi.rule = "delegate-overhead";
    fi.what = d.backend + " call at instruction " + std::to_string(d.instruction_id) +
              " spends much of its time in none of its operators";
    Place p = ctx.place_of(0, d.instruction_id);
    if (p.op.empty()) p.op = "delegate " + d.backend;
    fi.where.push_back(p);
    fi.evidence.push_back(share_text(gap_ms / call_ms) + " of the call unattributed");
    fi.evidence.push_back("call " + duration_text_ms(call_ms) + ", its " + count_text(d.sub_events.size(), "operator") + " " +
                          duration_text_ms(sub_ms) + ", unattributed " + duration_text_ms(gap_ms));
    fi.time_ms = gap_ms;
    if (ctx.run_ms() > 0) fi.share = gap_ms / ctx.run_ms();
    fi.severity = ctx.severity_for(gap_ms);
    fi.advice = "The delegate's own work around its operators (copying inputs and outputs, layout conversions at its "
                "boundary, its per-call setup) is not in any operator's time (executorch#4504). Fewer, larger delegates "
                "(fuse the partitions: fewer operators left between them) pay it once.";
    out.push_back(std::move(f));
  }
}

// logged-timings: intermediate outputs logged while the run was timed.
void rule_logged_timings(const Context& ctx, std::vector<Found>& out) {
  const inspect::Inspector& in = *ctx.inspector();
  const size_t logged = inspect::logged_intermediates(in.dump());
  if (logged == 0) return;
  Found f;
  Finding& fi = f.finding;
  fi.rule = "logged-timings";
  fi.severity = Severity::kHigh;
  fi.what = "the profile was recorded with intermediate outputs logged: every operator's time includes copying its outputs";
  fi.where.push_back(ctx.method_place());
  fi.evidence.push_back(count_text(logged, "logged value") + " in the dump besides the program outputs");
  if (ctx.plan()) {
    const uint64_t bytes = inspect::DebugBufferPlanner::plan(*ctx.plan()).intermediate.bytes_needed;
    fi.bytes = bytes;
    fi.evidence.push_back("intermediate logging writes " + bytes_text(bytes) + " into the debug buffer per execution");
  }
  fi.advice = "Time the program with logging off (etscope run without --debug-level intermediate; ExecuTorch's "
              "ETDumpGen without a debug buffer) and log intermediates in a separate run (etscope debug).";
  out.push_back(std::move(f));
}

// warmup: the first execution of the main block far slower than the rest (caches, lazy
// initialisation, a delegate packing its weights on the first call) and counted in the averages.
void rule_warmup(const Context& ctx, std::vector<Found>& out) {
  const inspect::Inspector& in = *ctx.inspector();
  const inspect::EventBlock& block = in.blocks()[*ctx.block()];
  const inspect::Event* execute = nullptr;
  for (const inspect::Event& ev : block.events) {
    if (ev.name == events::kMethodExecute && ev.perf) execute = &ev;
  }
  if (!execute || execute->perf->raw.size() < 3) return;
  const std::vector<double>& raw = execute->perf->raw;
  const std::vector<double> rest(raw.begin() + 1, raw.end());
  const double first_ms = raw.front() * ctx.ms_per_unit(), rest_ms = median(rest) * ctx.ms_per_unit();
  if (!(first_ms > 1.5 * rest_ms) || first_ms - rest_ms < 0.02) return;
  Found f;
  Finding& fi = f.finding;
  fi.rule = "warmup";
  const double skew_ms = (first_ms - rest_ms) / static_cast<double>(raw.size());
  fi.what = "the first timed execution is far slower than the others and is counted in every average";
  fi.where.push_back(ctx.method_place());
  fi.evidence.push_back("the first of " + std::to_string(raw.size()) + " executions took " + duration_text_ms(first_ms) +
                        ", the others " + duration_text_ms(rest_ms) + " (median)");
  fi.evidence.push_back("first / median of the rest = " + significant_text(first_ms / rest_ms, 3) + "x; it moves the average by " +
                        duration_text_ms(skew_ms));
  fi.severity = ctx.run_ms() > 0 && skew_ms / ctx.run_ms() >= 0.05 ? Severity::kMedium : Severity::kLow;
  fi.advice = "Leave warm-up executions out of the statistics: etscope run --warmup N records them apart; for a dump of "
              "ExecuTorch's own runner, inspect --skip-runs 1.";
  out.push_back(std::move(f));
}

// regressions: the operators a baseline run was significantly faster in (etscope compare's
// verdicts: Mann-Whitney U with Benjamini-Hochberg, its drift correction and practical floors),
// summed by module, so that a regression reads as "features.3 got 0.4 ms slower" rather than as
// a list of operators.
void rule_regressions(const Context& ctx, std::vector<Found>& out) {
  const inspect::Inspector* baseline = ctx.inputs().baseline;
  if (!baseline) return;
  const inspect::Comparison cmp = inspect::compare_runs(inspect::run_samples(*baseline), inspect::run_samples(*ctx.inspector()));
  struct Module {
    std::vector<const inspect::CompareRow*> rows;
    std::vector<Place> places;
    double change_ms = 0;
  };
  std::map<std::string, Module> modules;
  std::vector<std::string> order;
  for (const inspect::CompareRow& row : cmp.rows) {
    if (row.verdict != inspect::Verdict::kRegression) continue;
    const Place place = ctx.place_of(row.chain, row.instruction);
    const std::string key = place.module_path.empty() ? "" : place.module_path;
    if (!modules.contains(key)) order.push_back(key);
    Module& m = modules[key];
    m.rows.push_back(&row);
    m.places.push_back(place);
    m.change_ms += row.change_ms;
  }
  for (const std::string& key : order) {
    const Module& m = modules[key];
    Found f;
    Finding& fi = f.finding;
    fi.rule = "regressions";
    fi.what = (key.empty() ? std::string("operators outside any module") : "module " + key) + ": " +
              count_text(m.rows.size(), "operator") + " significantly slower than in the baseline";
    fi.where = m.places;
    for (const inspect::CompareRow* r : m.rows) {
      fi.evidence.push_back(r->name + " #" + std::to_string(r->instruction) + ": " + duration_text_ms(r->median_a_ms) + " -> " +
                            duration_text_ms(r->median_b_ms) + " (+" + significant_text(r->delta * 100.0, 3) + "%, adjusted p " +
                            significant_text(r->p_adjusted, 2) + ")");
    }
    if (cmp.method.n_a && cmp.method.n_b) {
      fi.evidence.push_back("method total " + duration_text_ms(cmp.method.median_a_ms) + " -> " + duration_text_ms(cmp.method.median_b_ms));
    }
    fi.time_ms = m.change_ms;
    if (ctx.run_ms() > 0) fi.share = m.change_ms / ctx.run_ms();
    fi.severity = ctx.severity_for(m.change_ms);
    fi.advice = "What changed between the two runs in this module (the export, its partitioning, the kernels, the build) is "
                "where to look; `etscope compare` lists every operator with its test, and a rerun of the baseline on this "
                "machine tells a real change from the machine's drift.";
    out.push_back(std::move(f));
  }
}

}  // namespace etscope::findings
