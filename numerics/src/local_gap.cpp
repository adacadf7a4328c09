#include "etscope/numerics/local_gap.h"

#include <algorithm>
#include <map>
#include <memory>
#include <set>
#include <span>
#include <utility>

#include "etscope/formats/op_signatures.h"
#include "etscope/formats/tensor_stats.h"
#include "etscope/runtime/method.h"

namespace etscope::numerics {
namespace {

using Handles = std::vector<int64_t>;

/// One input to replace before a call: the value and the AOT bytes it gets.
struct Replacement {
  int32_t value = -1;
  std::span<const uint8_t> bytes;
};

/// The AOT value standing for output `k` (of `outputs` tensors) of a call: the tensor itself for a
/// single output, element k of a sequence otherwise; null when there is none.
const inspect::GapValue* aot_output(const inspect::AotEntry& entry, size_t k, size_t outputs) {
  if (entry.output.kind == inspect::GapValue::Kind::kTensor) return outputs == 1 && k == 0 ? &entry.output : nullptr;
  if (entry.output.is_list() && k < entry.output.items.size() && entry.output.items.size() == outputs) {
    const inspect::GapValue& item = entry.output.items[k];
    return item.kind == inspect::GapValue::Kind::kTensor ? &item : nullptr;
  }
  return nullptr;
}

/// The replacements before each call, keyed by (chain, instruction), and how many inputs made by
/// an earlier call keep their runtime value.
struct Plan {
  std::map<std::pair<size_t, size_t>, std::vector<Replacement>> before;
  size_t kept = 0;
};

using AotByKey = std::map<Handles, const inspect::AotEntry*>;

/// The AOT entries by their sorted handles.
AotByKey aot_by_key(const inspect::AotIntermediates& aot) {
  AotByKey by_key;
  for (const inspect::AotEntry& e : aot.entries) {
    Handles key = e.handles;
    std::sort(key.begin(), key.end());
    by_key.emplace(std::move(key), &e);
  }
  return by_key;
}

using NodeHandles = std::map<std::pair<int64_t, int64_t>, Handles>;

/// The AOT entry of a call or node whose output the debug handles `h` (in their recorded order)
/// stand for: the entry keyed by all of them, else the one keyed by the last (the node that makes
/// the output, which calculate_numeric_gap compares output 0 with).
const inspect::AotEntry* entry_for(const AotByKey& by_key, const Handles& h) {
  if (h.empty()) return nullptr;
  Handles sorted = h;
  std::sort(sorted.begin(), sorted.end());
  if (auto e = by_key.find(sorted); e != by_key.end()) return e->second;
  if (auto e = by_key.find(Handles{h.back()}); e != by_key.end()) return e->second;
  return nullptr;
}

/// The debug handles of each delegate node's logged output, (instruction, delegate debug id) ->
/// handles in their recorded order, as the Inspector of the unforced run linked them (it knows how etscope's
/// XNNPACK ids map to the edge graph's handles).
NodeHandles node_handles(const inspect::Inspector& run) {
  NodeHandles out;
  for (const inspect::EventBlock& b : run.blocks()) {
    for (const inspect::Event& e : b.events) {
      if (!e.is_delegated_op.value_or(false) || !e.delegate_id_int || !e.debug_handles) continue;
      out.emplace(std::make_pair(static_cast<int64_t>(e.instruction_id), *e.delegate_id_int), *e.debug_handles);
    }
  }
  return out;
}

/// Fills `logical` with the AOT value standing for a delegate's node output: the entry of the
/// handles the node's output was linked to, a tensor of exactly `sizes` (any floating dtype, read
/// as float). False when there is none.
bool delegate_reference(const NodeHandles& nodes, const AotByKey& by_key, size_t instruction, int32_t handle,
                        std::span<const int64_t> sizes, std::span<float> logical) {
  auto n = nodes.find({static_cast<int64_t>(instruction), handle});
  if (n == nodes.end()) return false;
  const inspect::AotEntry* e = entry_for(by_key, n->second);
  if (e == nullptr) return false;
  const inspect::GapValue& ref = e->output;
  if (ref.kind != inspect::GapValue::Kind::kTensor || !is_floating_type(ref.tensor.dtype)) return false;
  if (!std::equal(ref.tensor.shape.begin(), ref.tensor.shape.end(), sizes.begin(), sizes.end())) return false;
  if (ref.tensor.numel() != logical.size()) return false;
  for (size_t k = 0; k < logical.size(); ++k) logical[k] = static_cast<float>(element_as_double(ref.tensor.dtype, ref.tensor.bytes.data(), k));
  return true;
}

Result<Plan> plan_replacements(const ExecutionPlan& plan, const etrecord::MethodMaps& maps, const AotByKey& by_key) {
  auto handles_of = [&](size_t instruction) -> Handles {
    auto it = maps.debug_handle_map.find(static_cast<int64_t>(instruction));
    if (it == maps.debug_handle_map.end()) return {};
    Handles h = it->second;
    std::sort(h.begin(), h.end());
    return h;
  };
  // Per handle tuple, the last call that has it: the one calculate_numeric_gap compares.
  std::map<Handles, std::pair<size_t, size_t>> last_call;
  for (size_t c = 0; c < plan.chains.size(); ++c) {
    const auto& instructions = plan.chains[c].instructions;
    for (size_t i = 0; i < instructions.size(); ++i) {
      const InstructionKind kind = instructions[i].kind;
      if (kind != InstructionKind::kKernelCall && kind != InstructionKind::kDelegateCall) continue;
      if (Handles h = handles_of(i); !h.empty()) last_call[h] = {c, i};
    }
  }

  Plan out;
  std::set<int32_t> written(plan.inputs.begin(), plan.inputs.end()), mutated;
  // The value each tensor gets when it is made, if the call that makes it has an AOT output.
  std::map<int32_t, std::span<const uint8_t>> reference;
  std::set<int32_t> made_by_call;
  for (size_t c = 0; c < plan.chains.size(); ++c) {
    const auto& instructions = plan.chains[c].instructions;
    for (size_t i = 0; i < instructions.size(); ++i) {
      const Instruction& in = instructions[i];
      if (in.kind == InstructionKind::kMoveCall) written.insert(in.move_to);
      if (in.kind != InstructionKind::kKernelCall && in.kind != InstructionKind::kDelegateCall) continue;
      std::vector<int32_t> inputs, outputs;
      const bool delegate = in.kind == InstructionKind::kDelegateCall;
      if (!delegate) {
        const KernelArgs args = split_kernel_args(plan, in);
        for (int32_t v : args.inputs) append_tensor_values(plan, v, inputs);
        for (int32_t v : args.outputs) append_tensor_values(plan, v, outputs);
        mutated.insert(args.mutated.begin(), args.mutated.end());
      } else {
        DelegateTensors t = delegate_call_tensors(plan, in, [&](int32_t v) { return written.contains(v); });
        inputs = std::move(t.inputs);
        outputs = std::move(t.outputs);
      }
      // Before the call: each input made by an earlier call, replaced by that call's AOT output.
      std::vector<Replacement>& now = out.before[{c, i}];
      for (int32_t v : inputs) {
        if (!made_by_call.contains(v)) continue;
        auto r = reference.find(v);
        if (r == reference.end() || mutated.contains(v)) {
          ++out.kept;
          continue;
        }
        if (std::none_of(now.begin(), now.end(), [&](const Replacement& x) { return x.value == v; })) now.push_back({v, r->second});
      }
      // What the call makes: its AOT output when the call is the one its handles stand for. A
      // delegate's outputs are its inner nodes': left as they are.
      const Handles h = handles_of(i);
      const auto key = by_key.find(h);
      const auto last = last_call.find(h);
      const bool compared = !h.empty() && key != by_key.end() && last != last_call.end() && last->second == std::make_pair(c, i);
      for (size_t k = 0; k < outputs.size(); ++k) {
        const int32_t v = outputs[k];
        made_by_call.insert(v);
        written.insert(v);
        reference.erase(v);
        if (delegate || !compared) continue;
        const inspect::GapValue* ref = aot_output(*key->second, k, outputs.size());
        const TensorInfo& t = plan.values[static_cast<size_t>(v)].tensor;
        if (ref == nullptr || ref->tensor.dtype != t.dtype || ref->tensor.bytes.size() != t.nbytes) continue;
        reference[v] = ref->tensor.bytes;
      }
      if (now.empty()) out.before.erase({c, i});
    }
  }
  return out;
}

}  // namespace

Result<ForcedRun> run_forced(runner::Runner& runner, const etrecord::EtRecord& record, const inspect::AotIntermediates& aot,
                             const inspect::Inspector& run_profile) {
  const std::string where = runner.program().name() + ": method '" + runner.method_name() + "'";
  if (runner.engine() != runner::EngineKind::kEtscope) {
    return Error(ErrorCode::kNotSupported, where + ": local gaps run on etscope's engine (ExecuTorch's runtime has no hook between "
                                                   "instructions to replace inputs)");
  }
  const ExecutionPlan* plan = runner.program().find_plan(runner.method_name());
  const etrecord::MethodMaps* maps = record.method_maps(runner.method_name());
  if (plan == nullptr) return Error(ErrorCode::kNotFound, where + ": no such method");
  if (maps == nullptr || maps->debug_handle_map.empty()) {
    return Error(ErrorCode::kInvalidArgument, record.path + ": no debug handle map for method '" + runner.method_name() +
                                                  "': local gaps need it to know which call made which tensor");
  }
  const AotByKey by_key = aot_by_key(aot);
  const NodeHandles nodes = node_handles(run_profile);
  ETSCOPE_ASSIGN_OR_RETURN(Plan replacements, plan_replacements(*plan, *maps, by_key));
  ForcedRun run;
  run.kept = replacements.kept;
  runtime::Method& method = runner.method();
  method.set_instruction_hook([&](size_t chain, size_t instruction) -> Status {
    ++run.calls;
    auto it = replacements.before.find({chain, instruction});
    if (it == replacements.before.end()) return ok_status();
    for (const Replacement& r : it->second) {
      // Memory that cannot take the bytes (another dim order, a size changed at run time) keeps
      // the runtime's value.
      if (method.overwrite_tensor(r.value, r.bytes).ok()) {
        ++run.replaced;
      } else {
        ++run.kept;
      }
    }
    return ok_status();
  });
  // Inside XNNPACK delegates: each node output the debug buffer logs continues as its AOT value.
  method.set_delegate_value_hook([&](size_t, size_t instruction, int32_t handle, std::span<const int64_t> sizes, std::span<float> logical) {
    const bool replaced = delegate_reference(nodes, by_key, instruction, handle, sizes, logical);
    ++(replaced ? run.replaced : run.kept);
    return replaced;
  });
  Result<double> executed = runner.execute_once(events::kBlockExecute.data());
  method.set_instruction_hook({});
  method.set_delegate_value_hook({});
  if (!executed.ok()) return executed.error();
  return run;
}

}  // namespace etscope::numerics
