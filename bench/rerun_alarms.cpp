// compare's false alarms on back-to-back reruns, and its power on a planted slowdown (issue 28,
// item 1). Reads a store filled by bench/rerun_alarms.sh (runs tagged prog=, engine=, batch=),
// pairs each run with the next run of the same program, engine and batch, and compares every
// pair with compare_runs as `etscope compare` does (the store's samples, the defaults unless
// flags say otherwise), with and without the drift correction:
//   - method alarms: pairs whose method total is a regression or improvement;
//   - pairs with operator alarms: pairs with any operator flagged;
//   - the drift d and the method total's raw change, their largest magnitudes;
//   - planted: in each pair's B run, every top-level operator (a kernel or a delegate call,
//     not an event a delegate raises inside its call) whose median is at least 10 times the
//     absolute floor and 5 us (so that +20% clears the floor twice over) is in turn made 20% slower (its samples times 1.2,
//     and each execution's method total longer by the same amount); found when that operator is
//     a regression and no other operator is flagged.
//
//   etscope-rerun-alarms STORE [--batch B] [--threshold 0.05] [--min-change-us 5] [--alpha 0.05]
//                              [--drift-allowance 1.5] [--runs-per-side K] [--pairs]
// --runs-per-side K compares consecutive sets of K runs with compare_run_sets (the method total
// on the runs' medians) instead of consecutive runs; every pair also gets all of B 20% slower,
// which the method total should find. --sets compares consecutive `run --repeat` sets instead
// (the runs sharing a set= tag, as `etscope compare set=A set=B` takes them).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "etscope/core/stats.h"
#include "etscope/inspect/compare.h"
#include "etscope/store/store.h"

namespace {

using etscope::inspect::Comparison;
using etscope::inspect::CompareOptions;
using etscope::inspect::CompareRow;
using etscope::inspect::OperatorSamples;
using etscope::inspect::RunSamples;
using etscope::inspect::Verdict;

bool flagged(const CompareRow& r) { return r.verdict == Verdict::kRegression || r.verdict == Verdict::kImprovement; }

size_t operator_alarms(const Comparison& c) { return c.regressions + c.improvements; }

bool top_level(const std::string& name) { return name.rfind("native_call_", 0) == 0 || name == "DELEGATE_CALL"; }

struct Tally {
  size_t pairs = 0, method_alarms = 0, operator_pairs = 0, operator_alarms = 0;
  size_t planted = 0, found = 0, found_alone = 0, gated = 0;
  size_t planted_quiet = 0, found_quiet = 0;  // in pairs whose operators scatter by 5% or less
  size_t uniform = 0, uniform_found = 0;       // everything 20% slower: the method total a regression
  double max_drift = 0, max_method = 0;  // largest |d - 1| and |method delta|
  std::vector<double> method_deltas;

  void add(const Tally& t) {
    pairs += t.pairs;
    method_alarms += t.method_alarms;
    operator_pairs += t.operator_pairs;
    operator_alarms += t.operator_alarms;
    planted += t.planted;
    found += t.found;
    found_alone += t.found_alone;
    gated += t.gated;
    planted_quiet += t.planted_quiet;
    uniform += t.uniform;
    uniform_found += t.uniform_found;
    found_quiet += t.found_quiet;
    max_drift = std::max(max_drift, t.max_drift);
    max_method = std::max(max_method, t.max_method);
    method_deltas.insert(method_deltas.end(), t.method_deltas.begin(), t.method_deltas.end());
  }
};

// The runs of B with operator i (of B's first run's numbering) 20% slower in each, every
// execution's total longer by as much.
std::vector<RunSamples> slowed(const std::vector<RunSamples>& b, const OperatorSamples& op) {
  std::vector<RunSamples> out = b;
  for (RunSamples& run : out) {
    for (OperatorSamples& o : run.operators) {
      if (o.chain != op.chain || o.instruction != op.instruction || o.name != op.name) continue;
      const bool per_execution = o.samples_ms.size() == run.method_ms.size();
      const double extra_median = 0.2 * etscope::median(o.samples_ms);
      for (size_t k = 0; k < run.method_ms.size(); ++k) run.method_ms[k] += per_execution ? 0.2 * o.samples_ms[k] : extra_median;
      for (double& x : o.samples_ms) x *= 1.2;
    }
  }
  return out;
}

// The runs of B with everything 20% slower: a real uniform change.
std::vector<RunSamples> uniformly_slowed(std::vector<RunSamples> b) {
  for (RunSamples& run : b) {
    for (OperatorSamples& o : run.operators) {
      for (double& x : o.samples_ms) x *= 1.2;
    }
    for (double& x : run.method_ms) x *= 1.2;
  }
  return b;
}

// The pair (a, b) unchanged, then with each eligible operator of b slowed by 20% in turn, then
// with all of b 20% slower.
void measure(const std::vector<RunSamples>& a, const std::vector<RunSamples>& b, const CompareOptions& o, Tally& t, bool verbose,
             const std::string& label) {
  const Comparison c = etscope::inspect::compare_run_sets(a, b, o);
  ++t.pairs;
  const bool method_alarm = flagged(c.method);
  t.method_alarms += method_alarm;
  t.operator_pairs += operator_alarms(c) > 0;
  t.operator_alarms += operator_alarms(c);
  t.max_drift = std::max(t.max_drift, std::abs(c.drift - 1));
  t.max_method = std::max(t.max_method, std::abs(c.method.delta));
  t.method_deltas.push_back(std::abs(c.method.delta));
  if (verbose) {
    std::printf("  %-34s drift %+6.1f%% (%3zu ops, scatter %4.1f%%)  method %+6.1f%% %-11s  operator alarms %zu", label.c_str(), (c.drift - 1) * 100,
                c.drift_operators, c.operator_scatter * 100, c.method.delta * 100, to_string(c.method.verdict), operator_alarms(c));
    for (const CompareRow& r : c.rows) {
      if (flagged(r)) std::printf("  [%s #%d %+.1f%% net %+.1f%% p %.2g ps %.2g q %.2g]", r.name.c_str(), r.instruction, r.delta * 100, r.net_delta * 100, r.test.p, r.p_scatter, r.p_adjusted);
    }
    std::printf("\n");
  }
  ++t.uniform;
  t.uniform_found += etscope::inspect::compare_run_sets(a, uniformly_slowed(b), o).method.verdict == Verdict::kRegression;
  std::map<std::tuple<int32_t, int32_t, std::string>, double> a_medians;
  for (const auto& op : a.front().operators) a_medians[{op.chain, op.instruction, op.name}] = etscope::median(op.samples_ms);
  for (const OperatorSamples& op : b.front().operators) {
    auto it = a_medians.find({op.chain, op.instruction, op.name});
    // +20% must clear the absolute floor twice over (and the operator be at least 5 us).
    if (!top_level(op.name) || it == a_medians.end() || it->second < std::max(0.005, 10 * o.min_change_ms)) continue;
    const Comparison p = etscope::inspect::compare_run_sets(a, slowed(b, op), o);
    ++t.planted;
    bool hit = false;
    size_t others = 0;
    const CompareRow* planted = nullptr;
    for (const CompareRow& r : p.rows) {
      if (r.chain == op.chain && r.instruction == op.instruction && r.name == op.name) {
        hit = r.verdict == Verdict::kRegression;
        planted = &r;
      } else {
        others += flagged(r);
      }
    }
    t.found += hit;
    t.found_alone += hit && others == 0;
    if (c.operator_scatter <= 0.05) {
      ++t.planted_quiet;
      t.found_quiet += hit && others == 0;
    }
    t.gated += p.gate_failed;
    if (verbose && !(hit && others == 0)) {
      std::printf("    planted %s #%d (%.3f ms): %s (net %+.1f%%, p %.2g, p_scatter %.2g, q %.2g), %zu other operators flagged\n",
                  op.name.c_str(), op.instruction, it->second, hit ? "found" : "missed", planted->net_delta * 100, planted->test.p,
                  planted->p_scatter, planted->p_adjusted, others);
    }
  }
}

void print(const char* what, const Tally& t) {
  std::vector<double> d = t.method_deltas;
  std::printf("%-40s pairs %3zu  method alarms %2zu  pairs with operator alarms %2zu (%4.1f%%, %zu alarms)  "
              "|drift| max %5.1f%%  |method change| p95 %5.1f%% max %5.1f%%  planted +20%%: %zu/%zu found alone (%zu found, %zu gate; "
              "scatter <= 5%%: %zu/%zu); all +20%%: method %zu/%zu\n",
              what, t.pairs, t.method_alarms, t.operator_pairs, t.pairs ? 100.0 * static_cast<double>(t.operator_pairs) / static_cast<double>(t.pairs) : 0,
              t.operator_alarms, t.max_drift * 100, etscope::percentile(d, 95) * 100, t.max_method * 100, t.found_alone, t.planted, t.found,
              t.gated, t.found_quiet, t.planted_quiet, t.uniform_found, t.uniform);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: etscope-rerun-alarms STORE [--batch B] [--threshold F] [--min-change-us US] [--alpha A] "
                         "[--drift-allowance F] [--runs-per-side K] [--sets] [--pairs]\n");
    return 2;
  }
  CompareOptions o;
  std::string batch;
  bool verbose = false;
  size_t per_side = 1;
  bool by_set = false;
  for (int i = 2; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--pairs") {
      verbose = true;
      continue;
    }
    if (arg == "--sets") {
      by_set = true;
      continue;
    }
    if (i + 1 >= argc) {
      std::fprintf(stderr, "etscope-rerun-alarms: %s needs a value\n", arg.c_str());
      return 2;
    }
    const char* v = argv[++i];
    if (arg == "--batch") batch = v;
    else if (arg == "--threshold") o.threshold = std::atof(v);
    else if (arg == "--min-change-us") o.min_change_ms = std::atof(v) / 1000;
    else if (arg == "--alpha") o.alpha = std::atof(v);
    else if (arg == "--drift-allowance") o.drift_allowance = std::atof(v);
    else if (arg == "--runs-per-side") per_side = static_cast<size_t>(std::max(1, std::atoi(v)));
    else {
      std::fprintf(stderr, "etscope-rerun-alarms: unknown option %s\n", arg.c_str());
      return 2;
    }
  }
  auto store = etscope::store::Store::open(argv[1], etscope::store::OpenMode::kExisting);
  if (!store.ok()) {
    std::fprintf(stderr, "etscope-rerun-alarms: %s\n", store.error().message().c_str());
    return 1;
  }
  etscope::store::RunFilter filter;
  if (!batch.empty()) filter.tags["batch"] = batch;
  auto runs = (*store)->runs(filter);
  if (!runs.ok()) {
    std::fprintf(stderr, "etscope-rerun-alarms: %s\n", runs.error().message().c_str());
    return 1;
  }
  // Groups of back-to-back runs, oldest first; with --sets, each run's set.
  std::map<std::string, std::vector<int64_t>> groups;
  std::map<int64_t, std::string> set_of;
  for (const auto& r : *runs) {
    auto tag = [&](const char* k) {
      auto it = r.tags.find(k);
      return it == r.tags.end() ? std::string("?") : it->second;
    };
    if (by_set && tag(std::string(etscope::store::kSetTag).c_str()) == "?") continue;
    groups[tag("prog") + " " + tag("engine") + " batch " + tag("batch")].push_back(r.id);
    set_of[r.id] = tag(std::string(etscope::store::kSetTag).c_str());
  }
  CompareOptions before = o;
  before.correct_drift = false;
  before.drift_allowance = 0;
  std::printf("threshold %.1f%%, floor %.1f us, alpha %g, drift allowance %.1f%%\n", o.threshold * 100, o.min_change_ms * 1000, o.alpha,
              o.drift_allowance * 100);
  Tally all, all_before;
  for (auto& [name, ids] : groups) {
    std::sort(ids.begin(), ids.end());
    Tally t, t_before;
    if (verbose) std::printf("%s\n", name.c_str());
    // Consecutive sets of per_side runs (with --sets, the runs of each set), each against the next.
    std::vector<std::vector<RunSamples>> sets;
    std::vector<size_t> starts;
    for (size_t i = 0; i < ids.size();) {
      size_t end = i + per_side;
      if (by_set) {
        for (end = i + 1; end < ids.size() && set_of[ids[end]] == set_of[ids[i]];) ++end;
      }
      if (end > ids.size()) break;
      starts.push_back(i);
      std::vector<RunSamples> set;
      for (size_t k = i; k < end; ++k) {
        auto r = (*store)->samples(ids[k]);
        if (!r.ok()) {
          std::fprintf(stderr, "etscope-rerun-alarms: %s\n", r.error().message().c_str());
          return 1;
        }
        set.push_back(std::move(*r));
      }
      sets.push_back(std::move(set));
      i = end;
    }
    for (size_t i = 0; i + 1 < sets.size(); ++i) {
      const std::string label = "runs " + std::to_string(ids[starts[i]]) + ".. against " + std::to_string(ids[starts[i + 1]]) + "..";
      measure(sets[i], sets[i + 1], o, t, verbose, label);
      measure(sets[i], sets[i + 1], before, t_before, false, "");
    }
    print(name.c_str(), t);
    print("  (no drift correction, no allowance)", t_before);
    all.add(t);
    all_before.add(t_before);
  }
  print("all", all);
  print("all (no drift correction, no allowance)", all_before);
  return 0;
}
