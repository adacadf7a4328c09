// Inspector's aggregates: recording losses, module totals, run time and shares, the per-type
// summary, the module tree, delegate summaries and the methods of blocks, as ExecuTorch's
// Inspector derives them (../shared/spec/semantics.md §3). Building the blocks and linking them to
// the ETRecord is inspector.cpp.
#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "etscope/core/event_names.h"
#include "etscope/core/stats.h"
#include "etscope/inspect/inspector.h"
#include "record_match.h"

namespace etscope::inspect {


std::vector<std::string> Inspector::recording_losses() const {
  std::vector<std::string> out;
  for (size_t i = 0; i < blocks_.size(); ++i) {
    const EventBlock& b = blocks_[i];
    const std::string where = "block " + std::to_string(i) + " '" + b.name + "' (" + std::to_string(b.runs.size()) +
                              (b.runs.size() == 1 ? " run)" : " runs)");
    auto say = [&](uint64_t n, const char* what, const char* cause) {
      if (n > 0) out.push_back(where + ": " + std::to_string(n) + " " + what + " not recorded: " + cause);
    };
    say(b.values_dropped, b.values_dropped == 1 ? "logged value was" : "logged values were",
        "the debug buffer was full (raise run --debug-buffer-size)");
    say(b.events_dropped, b.events_dropped == 1 ? "event was" : "events were", "the ETDump writer's event capacity ran out");
    say(b.executions_dropped, b.executions_dropped == 1 ? "later execution was" : "later executions were",
        "the ETDump writer's block capacity ran out");
    if (b.drops_uncounted) out.push_back(where + ": the ETDump marks values or events it could not record (uncounted)");
  }
  return out;
}

double Inspector::find_total_for_module(std::string_view module_name) const {
  double total = 0;
  for (const EventBlock& block : blocks_) {
    for (const Event& ev : block.events) {
      if (ev.is_operator_call() || !ev.perf) continue;
      bool hit = false;
      for (const NodeLink& l : ev.nodes) {
        for (const etrecord::ModuleFrame& f : l.module_stack) hit |= f.key.find(module_name) != std::string::npos;
      }
      if (hit) total += ev.perf->avg;
    }
  }
  return total;
}

namespace {

std::string strip_instance_suffix(const std::string& name) {
  // XNNPACK names its events "Convolution (NHWC, F32) IGEMM #3": the type is the part before " #".
  size_t hash = name.rfind(" #");
  if (hash == std::string::npos) return name;
  for (size_t i = hash + 2; i < name.size(); ++i) {
    if (name[i] < '0' || name[i] > '9') return name;
  }
  return hash + 2 < name.size() ? name.substr(0, hash) : name;
}

}  // namespace

std::string to_string(RunTimeSource source) {
  switch (source) {
    case RunTimeSource::kNone: return "none";
    case RunTimeSource::kMethodExecute: return std::string(events::kMethodExecute) + " avg";
    case RunTimeSource::kCallSum: return "sum of kernel and delegate calls";
  }
  return "?";
}

std::optional<double> share_of_run(const Event& event, const RunTime& run) {
  if (!event.perf || run.value <= 0) return std::nullopt;
  return event.perf->avg / run.value;
}

RunTime Inspector::run_time(size_t block) const {
  if (block >= blocks_.size()) return {};
  const std::vector<Event>& evs = blocks_[block].events;
  for (const Event& ev : evs) {
    if (ev.name == events::kMethodExecute && ev.perf) return RunTime{ev.perf->avg, RunTimeSource::kMethodExecute};
  }
  // Instructions timed by a kernel event; their OPERATOR_CALL (kernel + overhead) is left out.
  std::unordered_set<uint64_t> with_kernel;
  auto instruction_key = [](const Event& ev) {
    return (static_cast<uint64_t>(static_cast<uint32_t>(ev.chain)) << 32) | static_cast<uint32_t>(ev.instruction_id);
  };
  for (const Event& ev : evs) {
    if (ev.perf && ev.kind() == events::EventClass::kNativeCall) with_kernel.insert(instruction_key(ev));
  }
  RunTime rt;
  for (const Event& ev : evs) {
    if (!ev.perf) continue;
    const events::EventClass k = ev.kind();
    const bool counted = k == events::EventClass::kNativeCall || k == events::EventClass::kDelegateCall ||
                         (k == events::EventClass::kOperatorCall && !with_kernel.contains(instruction_key(ev)));
    if (!counted) continue;
    rt.value += ev.perf->avg;
    rt.source = RunTimeSource::kCallSum;
  }
  return rt;
}

std::vector<TypeSummary> Inspector::summary_by_type(size_t block_index) const {
  std::vector<TypeSummary> rows;
  if (block_index >= blocks_.size()) return rows;
  const EventBlock& block = blocks_[block_index];
  std::unordered_map<std::string, size_t> index;
  auto add = [&](const std::string& type, double t) {
    auto [it, inserted] = index.emplace(type, rows.size());
    if (inserted) rows.push_back(TypeSummary{type, 0, 0, 0, 0});
    TypeSummary& row = rows[it->second];
    row.count += 1;
    row.total += t;
  };
  std::vector<DelegateSummary> delegates = delegate_summaries(block_index);
  std::unordered_map<int32_t, const DelegateSummary*> delegate_by_instruction;
  for (const DelegateSummary& d : delegates) delegate_by_instruction[d.instruction_id] = &d;
  for (const Event& ev : block.events) {
    if (!ev.perf || ev.is_operator_call() || ev.is_framework() || events::is_beside_execute_name(ev.name)) continue;
    if (ev.is_delegated_op.value_or(false)) {
      add((ev.delegate_backend_name ? *ev.delegate_backend_name : std::string("delegate")) + ": " + strip_instance_suffix(ev.name), ev.perf->avg);
    } else if (ev.kind() == events::EventClass::kDelegateCall) {
      // Only the part of the call its own events do not account for, so shares add up.
      auto it = delegate_by_instruction.find(ev.instruction_id);
      const bool has_sub = it != delegate_by_instruction.end() && !it->second->sub_events.empty();
      const std::string call(events::kDelegateCall);
      add(has_sub ? call + " (unattributed)" : call, has_sub ? it->second->unattributed : ev.perf->avg);
    } else {
      add(std::string(events::native_call_op(ev.name)), ev.perf->avg);
    }
  }
  const double denom = run_time(block_index).value;
  for (TypeSummary& r : rows) {
    r.avg = r.count ? r.total / static_cast<double>(r.count) : 0;
    r.share = denom > 0 ? r.total / denom : 0;
  }
  std::stable_sort(rows.begin(), rows.end(), [](const TypeSummary& a, const TypeSummary& b) { return a.total > b.total; });
  double cumulative = 0;
  for (TypeSummary& r : rows) r.cumulative_share = cumulative += r.share;
  return rows;
}

namespace {

// A module tree under construction. Nodes live in one vector and refer to each other by index:
// a child added later may move the vector, which an address taken earlier would not survive.
struct FlatTree {
  struct Node {
    const etrecord::ModuleFrame* frame = nullptr;  // null for the root
    double total = 0;
    uint64_t events = 0;
    size_t last_event = SIZE_MAX;  // the last event counted here, so each counts once
    std::vector<size_t> children;
  };
  std::vector<Node> nodes{Node{}};

  size_t child(size_t parent, const etrecord::ModuleFrame& f) {
    for (size_t c : nodes[parent].children) {
      if (nodes[c].frame->key == f.key) return c;
    }
    nodes.push_back(Node{&f, 0, 0, SIZE_MAX, {}});
    nodes[parent].children.push_back(nodes.size() - 1);
    return nodes.size() - 1;
  }
  void add(size_t node, size_t event, double t) {
    Node& n = nodes[node];
    if (n.last_event == event) return;
    n.last_event = event;
    n.total += t;
    n.events += 1;
  }
  ModuleNode build(size_t node, double root_total) const {
    const Node& n = nodes[node];
    ModuleNode out;
    if (n.frame != nullptr) {
      out.key = n.frame->key;
      out.path = n.frame->path;
      out.type = n.frame->type;
    }
    out.total = n.total;
    out.share = root_total > 0 ? n.total / root_total : 0;
    out.events = n.events;
    out.children.reserve(n.children.size());
    for (size_t c : n.children) out.children.push_back(build(c, root_total));
    return out;
  }
};

}  // namespace

ModuleNode Inspector::module_tree(size_t block_index) const {
  if (block_index >= blocks_.size()) return ModuleNode{};
  const EventBlock& block = blocks_[block_index];
  FlatTree tree;
  for (size_t e = 0; e < block.events.size(); ++e) {
    const Event& ev = block.events[e];
    // Delegate-internal events are covered by their DELEGATE_CALL, which maps to the same
    // modules; counting both would double the time.
    if (!ev.perf || ev.is_operator_call() || ev.is_framework() || ev.is_delegated_op.value_or(false)) continue;
    for (const NodeLink& l : ev.nodes) {
      size_t at = 0;
      for (const etrecord::ModuleFrame& f : l.module_stack) {
        at = tree.child(at, f);
        tree.add(at, e, ev.perf->avg);
        tree.add(0, e, ev.perf->avg);
      }
    }
  }
  return tree.build(0, tree.nodes[0].total);
}

std::vector<DelegateSummary> Inspector::delegate_summaries(size_t block_index) const {
  std::vector<DelegateSummary> out;
  if (block_index >= blocks_.size()) return out;
  const EventBlock& block = blocks_[block_index];
  for (const Event& ev : block.events) {
    if (ev.kind() != events::EventClass::kDelegateCall) continue;
    DelegateSummary d;
    d.instruction_id = ev.instruction_id;
    d.backend = ev.delegate_backend_name.value_or("");
    d.call_avg = ev.perf ? ev.perf->avg : 0;
    for (uint32_t i = 0; i < block.events.size(); ++i) {
      const Event& sub = block.events[i];
      if (!sub.is_delegated_op.value_or(false) || sub.instruction_id != ev.instruction_id || sub.chain != ev.chain) continue;
      d.sub_events.push_back(i);
      if (sub.perf) d.sub_events_avg += sub.perf->avg;
      if (d.backend.empty() && sub.delegate_backend_name) d.backend = *sub.delegate_backend_name;
    }
    d.unattributed = d.call_avg - d.sub_events_avg;
    out.push_back(std::move(d));
  }
  return out;
}

std::vector<std::string> Inspector::block_methods(const Program& program) const {
  std::vector<std::string> out(blocks_.size());
  for (size_t b = 0; b < blocks_.size(); ++b) {
    size_t best_score = 0;
    std::string best;
    bool tie = false;
    for (const ExecutionPlan& plan : program.plans) {
      size_t score = 0;
      bool ok = true;
      for (const Event& ev : blocks_[b].events) {
        const events::EventClass kind = ev.kind();
        const bool delegate_call = kind == events::EventClass::kDelegateCall;
        if (kind != events::EventClass::kNativeCall && !delegate_call) continue;
        if (ev.chain < 0 || static_cast<size_t>(ev.chain) >= plan.chains.size() || ev.instruction_id < 0 ||
            static_cast<size_t>(ev.instruction_id) >= plan.chains[static_cast<size_t>(ev.chain)].instructions.size()) {
          ok = false;
          break;
        }
        const Instruction& ins = plan.chains[static_cast<size_t>(ev.chain)].instructions[static_cast<size_t>(ev.instruction_id)];
        if (delegate_call) {
          ok = ins.kind == InstructionKind::kDelegateCall;
        } else {
          // The runtime names the event after the operator without its namespace.
          ok = ins.kind == InstructionKind::kKernelCall && ins.op_index >= 0 && static_cast<size_t>(ins.op_index) < plan.operators.size();
          if (ok) {
            const std::string q = plan.operators[static_cast<size_t>(ins.op_index)].qualified_name();
            const std::string_view want = events::native_call_op(ev.name);
            ok = q == want || (q.size() > want.size() + 1 && q.compare(q.size() - want.size(), want.size(), want) == 0 &&
                               q.compare(q.size() - want.size() - 2, 2, "::") == 0);
          }
        }
        if (!ok) break;
        ++score;
      }
      if (!ok || score == 0) continue;
      if (score > best_score) {
        best_score = score;
        best = plan.name;
        tie = false;
      } else if (score == best_score) {
        tie = true;
      }
    }
    if (!tie) out[b] = best;
  }
  return out;
}

std::vector<std::string> Inspector::top_level_modules() const {
  std::vector<std::string> out;
  for (const EventBlock& block : blocks_) {
    for (const Event& ev : block.events) {
      for (const NodeLink& l : ev.nodes) {
        // Frame 0 is the model itself (path ""); frame 1 is one of its direct children.
        if (l.module_stack.size() < 2) continue;
        const std::string& p = l.module_stack[1].path;
        if (std::find(out.begin(), out.end(), p) == out.end()) out.push_back(p);
      }
    }
  }
  return out;
}

}  // namespace etscope::inspect
