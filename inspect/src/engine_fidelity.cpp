#include "etscope/inspect/engine_fidelity.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <tuple>

#include "etscope/core/text.h"
#include "etscope/formats/tensor_stats.h"
#include "etscope/inspect/profile.h"

namespace etscope::inspect {
namespace {

using NodeKey = std::tuple<int32_t, int32_t, std::string>;

struct Node {
  NodeKey key;
  events::EventClass kind;
  double median = 0;
};

struct RunNodes {
  FidelityRun run;
  std::vector<Node> nodes;           // program order
  std::vector<Node> delegate_calls;  // containers, program order
};

// The nodes of one run's main block (the file comment of engine_fidelity.h says which).
Result<RunNodes> run_nodes(const Inspector& inspector, const char* engine) {
  const std::optional<size_t> main = main_block(inspector);
  if (!main) return Error(ErrorCode::kInvalidArgument, std::string("the ") + engine + " run recorded no execution");
  const EventBlock& block = inspector.blocks()[*main];
  RunNodes out;
  out.run.runs = block.runs.size();
  // Instructions that have a kernel event (their OPERATOR_CALL wraps it) and delegate calls that
  // raised events of their own (containers).
  std::set<std::pair<int32_t, int32_t>> with_kernel, with_delegate_events;
  for (const Event& ev : block.events) {
    const events::EventClass kind = ev.kind();
    if (kind == events::EventClass::kNativeCall) with_kernel.insert({ev.chain, ev.instruction_id});
    if (kind == events::EventClass::kDelegateOp && ev.perf) with_delegate_events.insert({ev.chain, ev.instruction_id});
  }
  bool have_execute = false;
  for (const Event& ev : block.events) {
    if (!ev.perf) continue;
    const events::EventClass kind = ev.kind();
    const std::pair<int32_t, int32_t> at{ev.chain, ev.instruction_id};
    Node node{{ev.chain, ev.instruction_id, ev.name}, kind, ev.perf->p50};
    switch (kind) {
      case events::EventClass::kFramework:
        if (ev.name == events::kMethodExecute) {
          out.run.run_ms = ev.perf->p50;
          out.run.source = RunTimeSource::kMethodExecute;
          have_execute = true;
        }
        continue;
      case events::EventClass::kOperatorCall:
        if (with_kernel.contains(at)) continue;
        break;
      case events::EventClass::kDelegateCall:
        if (with_delegate_events.contains(at)) {
          out.delegate_calls.push_back(std::move(node));
          continue;
        }
        break;
      case events::EventClass::kOther:
      case events::EventClass::kMarker:
        // User scopes, the trainer's Optimizer::step and etscope's markers are not nodes of the program.
        continue;
      case events::EventClass::kNativeCall:
      case events::EventClass::kDelegateOp:
        break;
    }
    out.run.nodes_ms += node.median;
    out.nodes.push_back(std::move(node));
  }
  if (!have_execute) {
    const RunTime rt = inspector.run_time(*main);
    out.run.run_ms = rt.value;
    out.run.source = rt.source;
  }
  return out;
}

std::optional<double> share(double ms, const FidelityRun& run) {
  if (run.run_ms <= 0) return std::nullopt;
  return ms / run.run_ms;
}

// The rows of two runs' node lists joined by key: `both` in the first run's program order (the
// second's own after it), and the nodes of each alone.
struct Joined {
  std::vector<FidelityRow> both, only_a, only_b;
};

Joined join(const std::vector<Node>& a, const FidelityRun& run_a, const std::vector<Node>& b, const FidelityRun& run_b) {
  std::map<NodeKey, size_t> in_b;
  for (size_t i = 0; i < b.size(); ++i) in_b.emplace(b[i].key, i);
  std::set<NodeKey> matched;
  Joined out;
  size_t order = 0;
  auto row_of = [&](const Node& n) {
    FidelityRow r;
    r.chain = std::get<0>(n.key);
    r.instruction = std::get<1>(n.key);
    r.name = std::get<2>(n.key);
    r.kind = n.kind;
    r.order = order++;
    return r;
  };
  for (const Node& n : a) {
    FidelityRow r = row_of(n);
    r.in_etscope = true;
    r.etscope_ms = n.median;
    r.etscope_share = share(n.median, run_a);
    auto it = in_b.find(n.key);
    if (it == in_b.end() || !matched.insert(n.key).second) {
      r.difference_ms = n.median;
      out.only_a.push_back(std::move(r));
      continue;
    }
    const Node& m = b[it->second];
    r.in_executorch = true;
    r.executorch_ms = m.median;
    r.executorch_share = share(m.median, run_b);
    r.difference_ms = r.etscope_ms - r.executorch_ms;
    if (r.executorch_ms > 0) r.ratio = r.etscope_ms / r.executorch_ms;
    out.both.push_back(std::move(r));
  }
  for (const Node& m : b) {
    if (matched.contains(m.key)) continue;
    FidelityRow r = row_of(m);
    r.in_executorch = true;
    r.executorch_ms = m.median;
    r.executorch_share = share(m.median, run_b);
    r.difference_ms = -m.median;
    out.only_b.push_back(std::move(r));
  }
  return out;
}

std::vector<double> average_ranks(std::span<const double> v) {
  std::vector<size_t> idx(v.size());
  for (size_t i = 0; i < idx.size(); ++i) idx[i] = i;
  std::stable_sort(idx.begin(), idx.end(), [&](size_t x, size_t y) { return v[x] < v[y]; });
  std::vector<double> ranks(v.size());
  for (size_t i = 0; i < idx.size();) {
    size_t j = i;
    while (j + 1 < idx.size() && v[idx[j + 1]] == v[idx[i]]) ++j;
    const double rank = (static_cast<double>(i) + static_cast<double>(j)) / 2.0 + 1.0;  // 1-based, ties averaged
    for (size_t k = i; k <= j; ++k) ranks[idx[k]] = rank;
    i = j + 1;
  }
  return ranks;
}

bool is_floating(ScalarType t) {
  return t == ScalarType::kFloat || t == ScalarType::kDouble || t == ScalarType::kHalf || t == ScalarType::kBFloat16;
}

}  // namespace

std::optional<double> spearman_correlation(std::span<const double> a, std::span<const double> b) {
  if (a.size() != b.size() || a.size() < 2) return std::nullopt;
  const std::vector<double> ra = average_ranks(a), rb = average_ranks(b);
  const double n = static_cast<double>(a.size());
  const double mean = (n + 1) / 2;  // of ranks 1..n, ties averaged or not
  double sab = 0, saa = 0, sbb = 0;
  for (size_t i = 0; i < ra.size(); ++i) {
    sab += (ra[i] - mean) * (rb[i] - mean);
    saa += (ra[i] - mean) * (ra[i] - mean);
    sbb += (rb[i] - mean) * (rb[i] - mean);
  }
  if (saa <= 0 || sbb <= 0) return std::nullopt;
  return sab / std::sqrt(saa * sbb);
}

Result<EngineFidelity> engine_fidelity(const Inspector& etscope, const Inspector& executorch) {
  const TimeScale ta = etscope.options().target, tb = executorch.options().target;
  if (ta != tb || ta == TimeScale::kCycles) {
    return Error(ErrorCode::kInvalidArgument, std::string("engine fidelity needs both runs in one time scale, not cycles (got ") +
                                                  to_string(ta) + " and " + to_string(tb) + ")");
  }
  ETSCOPE_ASSIGN_OR_RETURN(RunNodes a, run_nodes(etscope, "etscope engine's"));
  ETSCOPE_ASSIGN_OR_RETURN(RunNodes b, run_nodes(executorch, "ExecuTorch engine's"));
  EngineFidelity out;
  out.etscope = a.run;
  out.executorch = b.run;
  if (b.run.run_ms > 0) out.run_ratio = a.run.run_ms / b.run.run_ms;
  Joined nodes = join(a.nodes, a.run, b.nodes, b.run);
  std::vector<double> ms_a, ms_b;
  for (const FidelityRow& r : nodes.both) {
    ms_a.push_back(r.etscope_ms);
    ms_b.push_back(r.executorch_ms);
  }
  out.spearman = spearman_correlation(ms_a, ms_b);
  std::stable_sort(nodes.both.begin(), nodes.both.end(), [](const FidelityRow& x, const FidelityRow& y) {
    const double dx = std::fabs(x.difference_ms), dy = std::fabs(y.difference_ms);
    return dx != dy ? dx > dy : x.order < y.order;
  });
  out.rows = std::move(nodes.both);
  out.only_etscope = std::move(nodes.only_a);
  out.only_executorch = std::move(nodes.only_b);
  Joined calls = join(a.delegate_calls, a.run, b.delegate_calls, b.run);
  out.delegate_calls = std::move(calls.both);
  for (auto* alone : {&calls.only_a, &calls.only_b}) {
    for (FidelityRow& r : *alone) out.delegate_calls.push_back(std::move(r));
  }
  return out;
}

Result<OutputAgreement> compare_outputs(ScalarType etscope_dtype, std::span<const int64_t> etscope_sizes,
                                        std::span<const uint8_t> etscope, ScalarType executorch_dtype,
                                        std::span<const int64_t> executorch_sizes, std::span<const uint8_t> executorch,
                                        double rtol, double atol) {
  OutputAgreement out;
  if (etscope_dtype != executorch_dtype || !std::equal(etscope_sizes.begin(), etscope_sizes.end(), executorch_sizes.begin(),
                                                       executorch_sizes.end())) {
    out.problem = "etscope's is " + shape_text(etscope_dtype, etscope_sizes) + ", ExecuTorch's " +
                  shape_text(executorch_dtype, executorch_sizes);
    return out;
  }
  if (!is_numeric(etscope_dtype)) {
    out.problem = scalar_type_name(etscope_dtype) + " elements are not numbers";
    return out;
  }
  uint64_t count = 1;
  for (int64_t s : etscope_sizes) count *= static_cast<uint64_t>(std::max<int64_t>(s, 0));
  const uint64_t bytes = count * *element_size(etscope_dtype);
  if (etscope.size() < bytes || executorch.size() < bytes) {
    return Error(ErrorCode::kInvalidArgument, "an output holds fewer bytes than its " + shape_text(etscope_dtype, etscope_sizes) + " need");
  }
  out.comparable = true;
  out.floating = is_floating(etscope_dtype);
  out.count = count;
  bool within = true;
  for (uint64_t i = 0; i < count; ++i) {
    const double a = element_as_double(etscope_dtype, etscope.data(), i);
    const double x = element_as_double(executorch_dtype, executorch.data(), i);
    if (a == x || (std::isnan(a) && std::isnan(x))) continue;
    ++out.differing;
    if (!std::isfinite(a) || !std::isfinite(x)) {
      ++out.nonfinite_mismatches;
      within = false;
      continue;
    }
    const double abs_error = std::fabs(a - x);
    out.max_abs_error = std::max(out.max_abs_error, abs_error);
    out.max_rel_error = std::max(out.max_rel_error, abs_error / std::max({std::fabs(a), std::fabs(x), 1e-8}));
    if (abs_error > atol + rtol * std::fabs(x)) within = false;
  }
  out.within_tolerance = out.floating ? within : out.differing == 0;
  return out;
}

}  // namespace etscope::inspect
