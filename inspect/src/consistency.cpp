#include "etscope/inspect/consistency.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <tuple>

#include "etscope/core/event_names.h"
#include "record_match.h"

namespace etscope::inspect {
namespace {

std::vector<KernelEvent> kernel_events(const etdump::EtDumpFile& dump, const etdump::RunBlock& block) {
  std::vector<KernelEvent> out;
  for (uint32_t i = block.first_event; i < block.first_event + block.event_count && i < dump.events.size(); ++i) {
    const etdump::Event& e = dump.events[i];
    if (e.kind != etdump::EventKind::kProfile || e.delegate) continue;
    const std::string& name = dump.name_of(e);
    KernelEvent k{e.chain, e.instruction, "", name, false};
    if (name == events::kDelegateCall) {
      k.delegate_call = true;
    } else if (name.rfind(events::kNativeCallPrefix, 0) == 0) {
      k.op = operator_base_name(name);
    } else {
      continue;
    }
    out.push_back(std::move(k));
  }
  return out;
}

const Instruction* instruction_at(const ExecutionPlan& plan, int32_t chain, int64_t index) {
  if (chain < 0 || static_cast<size_t>(chain) >= plan.chains.size() || index < 0) return nullptr;
  const auto& ins = plan.chains[static_cast<size_t>(chain)].instructions;
  return static_cast<size_t>(index) < ins.size() ? &ins[static_cast<size_t>(index)] : nullptr;
}

std::string plan_op(const ExecutionPlan& plan, const Instruction& in) {
  if (in.kind == InstructionKind::kDelegateCall) return "a delegate call";
  if (in.kind != InstructionKind::kKernelCall || in.op_index < 0 || static_cast<size_t>(in.op_index) >= plan.operators.size()) {
    return to_string(in.kind);
  }
  return plan.operators[static_cast<size_t>(in.op_index)].qualified_name();
}

// Why `plan` cannot have produced these events, or nullopt when it explains all of them.
std::optional<std::string> plan_mismatch(const ExecutionPlan& plan, const std::vector<KernelEvent>& events) {
  for (const KernelEvent& k : events) {
    const Instruction* in = instruction_at(plan, k.chain, k.instruction);
    const std::string at = "instruction " + std::to_string(k.instruction) + " ran " + k.name;
    if (in == nullptr) return at + ", beyond the method's instructions";
    if (k.delegate_call) {
      if (in->kind != InstructionKind::kDelegateCall) return at + ", where the method calls " + plan_op(plan, *in);
    } else if (in->kind != InstructionKind::kKernelCall || operator_base_name(plan_op(plan, *in)) != k.op) {
      return at + ", where the method calls " + plan_op(plan, *in);
    }
  }
  return std::nullopt;
}

// Base names of the graph nodes behind `handles`.
std::set<std::string> node_ops(const std::map<int64_t, std::vector<const etrecord::GraphNode*>>& index,
                               const std::vector<int64_t>& handles) {
  std::set<std::string> ops;
  for (int64_t h : handles) {
    auto it = index.find(h);
    if (it == index.end()) continue;
    for (const etrecord::GraphNode* n : it->second) {
      if (n->op == "call_function" && !n->target.empty()) ops.insert(operator_base_name(n->target));
    }
  }
  return ops;
}

// Comparisons of operators against the record's graph nodes, for one method.
struct Tally {
  size_t checked = 0;
  size_t disagree = 0;
  std::string first;  // the first disagreement, described
  bool passes() const { return disagree * 10 <= checked; }
  void add(bool agrees, const std::string& what) {
    ++checked;
    if (!agrees) {
      if (disagree == 0) first = what;
      ++disagree;
    }
  }
};

struct MethodIndex {
  const etrecord::MethodMaps* maps = nullptr;
  std::map<int64_t, std::vector<const etrecord::GraphNode*>> nodes;  // debug handle -> nodes
};

std::map<std::string, MethodIndex> index_record(const etrecord::EtRecord& record) {
  std::map<std::string, MethodIndex> out;
  for (const auto& [method, maps] : record.maps) {
    MethodIndex& m = out[method];
    m.maps = &maps;
    if (const etrecord::Graph* g = record.reference_graph(method)) m.nodes = g->debug_handle_index();
  }
  return out;
}

std::string short_name(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

void check_dump_program(const etdump::EtDumpFile& dump, const Program& program, ConsistencyReport& report) {
  for (size_t b = 0; b < dump.blocks.size(); ++b) {
    const std::vector<KernelEvent> events = kernel_events(dump, dump.blocks[b]);
    if (events.empty()) continue;
    std::string why;
    bool explained = false;
    for (const ExecutionPlan& plan : program.plans) {
      auto mismatch = plan_mismatch(plan, events);
      if (!mismatch) {
        explained = true;
        break;
      }
      if (why.empty()) why = "method '" + plan.name + "': " + *mismatch;
    }
    if (!explained) {
      report.problems.push_back(short_name(dump.name()) + " and " + short_name(program.name()) + " do not belong together: run block " +
                                std::to_string(b) + " ('" + dump.blocks[b].name + "') matches no method of the program (" + why + ")");
      return;  // one line per pair is enough
    }
  }
}

void check_record_program(const etrecord::EtRecord& record, const Program& program, ConsistencyReport& report) {
  const std::string pair = short_name(record.path) + " and " + short_name(program.name()) + " do not belong together: ";
  for (const auto& [method, index] : index_record(record)) {
    const ExecutionPlan* plan = program.find_plan(method);
    if (plan == nullptr) {
      report.problems.push_back(pair + "the ETRecord has debug maps for method '" + method + "', which the program lacks");
      return;
    }
    const size_t count = plan->chains.empty() ? 0 : plan->chains[0].instructions.size();
    Tally tally;
    for (const auto& [instruction, handles] : index.maps->debug_handle_map) {
      const Instruction* in = instruction_at(*plan, 0, instruction);
      if (in == nullptr) {
        report.problems.push_back(pair + "the ETRecord maps instruction " + std::to_string(instruction) + " of '" + method +
                                  "', which has " + std::to_string(count) + " instructions in the program");
        return;
      }
      if (in->kind != InstructionKind::kKernelCall) continue;
      const std::set<std::string> ops = node_ops(index.nodes, handles);
      if (ops.empty()) continue;
      const std::string op = plan_op(*plan, *in);
      tally.add(ops.count(operator_base_name(op)) > 0,
                "instruction " + std::to_string(instruction) + " calls " + op + ", its debug handles are " + *ops.begin() + " nodes");
    }
    for (const auto& [instruction, entry] : index.maps->delegate_map) {
      const Instruction* in = instruction_at(*plan, 0, instruction);
      tally.add(in != nullptr && in->kind == InstructionKind::kDelegateCall,
                "instruction " + std::to_string(instruction) + " is a delegate call in the ETRecord, not in the program");
    }
    if (!tally.passes()) {
      report.problems.push_back(pair + "method '" + method + "': " + std::to_string(tally.disagree) + " of " +
                                std::to_string(tally.checked) + " instructions disagree (" + tally.first + ")");
      return;
    }
  }
}

// How well one method of the record explains a block's kernel events.
struct MethodFit {
  // Kernel events of instructions the method maps no debug handle for, and the first of them.
  // ExecuTorch's to_executorch leaves some (a linear re-fused from permute and mm, an LLM's
  // update_cache): tolerated while they are at most half of the block's kernel events.
  size_t unmapped = 0, kernel_events = 0;
  std::string first_unmapped;
  bool beyond = false;  // too many of them
  Tally tally;
  std::string why;      // the first reason against it
  size_t mapped = 0;    // instructions the method maps
  std::set<int32_t> covered;  // of those, the ones the block ran
};

MethodFit fit(const std::vector<KernelEvent>& events, const std::string& method, const MethodIndex& index) {
  MethodFit f;
  f.mapped = index.maps->debug_handle_map.size();
  for (const KernelEvent& k : events) {
    if (k.chain != 0) continue;
    if (k.delegate_call) {
      const bool mapped = index.maps->delegate_map.count(k.instruction) > 0;
      if (mapped) f.covered.insert(k.instruction);
      f.tally.add(mapped, "instruction " + std::to_string(k.instruction) + " ran a DELEGATE_CALL the ETRecord does not map");
      continue;
    }
    ++f.kernel_events;
    auto it = index.maps->debug_handle_map.find(k.instruction);
    if (it == index.maps->debug_handle_map.end()) {
      if (f.unmapped++ == 0) f.first_unmapped = "instruction " + std::to_string(k.instruction) + " (" + k.name + ")";
      continue;
    }
    f.covered.insert(k.instruction);
    const std::set<std::string> ops = node_ops(index.nodes, it->second);
    if (ops.empty()) continue;
    f.tally.add(ops.count(k.op) > 0, "instruction " + std::to_string(k.instruction) + " ran " + k.name +
                                         ", the ETRecord's debug handles there are " + *ops.begin() + " nodes");
  }
  if (f.unmapped * 2 > f.kernel_events) {
    f.beyond = true;
    f.why = "method '" + method + "' maps no debug handle for " + std::to_string(f.unmapped) + " of the block's " +
            std::to_string(f.kernel_events) + " kernel events (the first: " + f.first_unmapped + ")";
  } else if (!f.tally.passes()) {
    f.why = "method '" + method + "': " + std::to_string(f.tally.disagree) + " of " + std::to_string(f.tally.checked) +
            " kernel events disagree, e.g. " + f.tally.first;
  }
  return f;
}

bool explains(const MethodFit& f) { return !f.beyond && f.tally.passes(); }

void check_dump_record(const etdump::EtDumpFile& dump, const etrecord::EtRecord& record, ConsistencyReport& report) {
  const auto methods = index_record(record);
  if (methods.empty()) return;  // 2023 records carry no maps: nothing to compare
  for (size_t b = 0; b < dump.blocks.size(); ++b) {
    const std::vector<KernelEvent> events = kernel_events(dump, dump.blocks[b]);
    if (events.empty()) continue;
    std::string why;
    bool explained = false;
    for (const auto& [method, index] : methods) {
      const MethodFit f = fit(events, method, index);
      if (explains(f)) {
        explained = true;
        if (f.unmapped > 0 && report.notes.empty()) {
          report.notes.push_back(short_name(record.path) + " maps no debug handle for " + std::to_string(f.unmapped) + " of " +
                                 std::to_string(f.kernel_events) + " kernel events of run block " + std::to_string(b) + " ('" +
                                 dump.blocks[b].name + "', method '" + method + "'; the first: " + f.first_unmapped +
                                 "): those operators have no module, stack trace or AOT values, as in ExecuTorch's Inspector");
        }
        break;
      }
      if (why.empty()) why = f.why;
    }
    if (!explained) {
      report.problems.push_back(short_name(dump.name()) + " and " + short_name(record.path) + " do not belong together: run block " +
                                std::to_string(b) + " ('" + dump.blocks[b].name + "'): " + why);
      return;
    }
  }
}

}  // namespace

std::string operator_base_name(std::string_view name) {
  if (name.rfind(events::kNativeCallPrefix, 0) == 0) name.remove_prefix(events::kNativeCallPrefix.size());
  if (const size_t ns = name.find("::"); ns != std::string_view::npos) {
    name.remove_prefix(ns + 2);
  } else if (std::count(name.begin(), name.end(), '.') >= 2) {
    name.remove_prefix(name.find('.') + 1);  // "aten.convolution.default"
  }
  if (const size_t dot = name.rfind('.'); dot != std::string_view::npos) name = name.substr(0, dot);
  return std::string(name);
}

std::string record_method_for(const std::vector<KernelEvent>& events, const etrecord::EtRecord& record) {
  if (events.empty()) return "";
  // Methods that explain every event; among them the one whose mapped instructions the block
  // ran all of (encode's events are also a prefix of forward's when forward starts with encode),
  // then the one with most agreeing operators. A tie names none.
  std::string best;
  std::tuple<bool, size_t> best_key{false, 0};
  bool tie = false;
  for (const auto& [method, index] : index_record(record)) {
    const MethodFit f = fit(events, method, index);
    if (!explains(f)) continue;
    const std::tuple<bool, size_t> key{f.covered.size() == f.mapped, f.tally.checked - f.tally.disagree};
    if (best.empty() || key > best_key) {
      best = method, best_key = key, tie = false;
    } else if (key == best_key) {
      tie = true;
    }
  }
  return tie ? "" : best;
}

ConsistencyReport check_consistency(const etdump::EtDumpFile* dump, const etrecord::EtRecord* record, const Program* program) {
  ConsistencyReport report;
  if (dump != nullptr && program != nullptr) check_dump_program(*dump, *program, report);
  if (record != nullptr && program != nullptr) check_record_program(*record, *program, report);
  if (dump != nullptr && record != nullptr) check_dump_record(*dump, *record, report);
  return report;
}

}  // namespace etscope::inspect
