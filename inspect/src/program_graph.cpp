#include "etscope/inspect/program_graph.h"

#include <algorithm>
#include <map>
#include <set>
#include <utility>

#include "etscope/formats/op_signatures.h"
#include "etscope/formats/xnnpack_payload.h"
#include "etscope/inspect/lifetime.h"
#include "etscope/inspect/program_description.h"

namespace etscope::inspect {
namespace {

bool is_constant(const TensorInfo& t) {
  return t.data_kind == TensorDataKind::kConstant || t.data_kind == TensorDataKind::kExternalConstant;
}

// Values with an initial value and no writer before they are read: parameters and buffers of a
// training program, listed with the constants rather than drawn as inputs.
bool is_state(const TensorInfo& t) {
  return t.data_kind == TensorDataKind::kPlannedWithInit || t.data_kind == TensorDataKind::kExternalMutable;
}

// The tensor values an instruction's arguments name (list items included), in argument order.
void tensor_args(const ExecutionPlan& plan, const Instruction& in, std::vector<int32_t>& out) {
  out.clear();
  for (int32_t a : in.args) append_tensor_values(plan, a, out);
}

bool same_frame(const etrecord::ModuleFrame& a, const etrecord::ModuleFrame& b) { return a.path == b.path && a.type == b.type; }

// The longest common prefix of the non-empty stacks.
std::vector<etrecord::ModuleFrame> common_stack(const std::vector<const std::vector<etrecord::ModuleFrame>*>& stacks) {
  std::vector<etrecord::ModuleFrame> out;
  bool first = true;
  for (const auto* s : stacks) {
    if (s->empty()) continue;
    if (first) {
      out = *s;
      first = false;
      continue;
    }
    size_t n = 0;
    while (n < out.size() && n < s->size() && same_frame(out[n], (*s)[n])) ++n;
    out.resize(n);
  }
  return out;
}

}  // namespace

ProgramGraph build_program_graph(const ExecutionPlan& plan, const etrecord::EtRecord* record, const Program* program) {
  ProgramGraph g;
  const ValueTimeline timeline = build_value_timeline(plan);
  const size_t value_count = plan.values.size();
  auto tensor_of = [&](int32_t v) -> const TensorInfo* {
    if (v < 0 || static_cast<size_t>(v) >= value_count) return nullptr;
    const Value& value = plan.values[static_cast<size_t>(v)];
    return value.kind == ValueKind::kTensor ? &value.tensor : nullptr;
  };

  // Inputs.
  std::vector<int32_t> input_node(value_count, -1);
  for (size_t i = 0; i < plan.inputs.size(); ++i) {
    ProgramGraphNode n;
    n.kind = GraphNodeKind::kInput;
    n.io_index = static_cast<int32_t>(i);
    n.op = "input " + std::to_string(i);
    const int32_t v = plan.inputs[i];
    if (const TensorInfo* t = tensor_of(v)) n.shape = shape_text(t->dtype, t->sizes);
    if (v >= 0 && static_cast<size_t>(v) < value_count && input_node[static_cast<size_t>(v)] < 0) {
      input_node[static_cast<size_t>(v)] = static_cast<int32_t>(g.nodes.size());
    }
    g.nodes.push_back(std::move(n));
  }

  // Instructions; a MoveCall makes its target an alias of its source.
  const etrecord::MethodMaps* maps = record != nullptr ? record->method_maps(plan.name) : nullptr;
  const etrecord::Graph* reference = record != nullptr ? record->reference_graph(plan.name) : nullptr;
  std::vector<int32_t> alias(value_count, -1);
  auto origin = [&](int32_t v) {
    for (int guard = 0; guard < 64 && v >= 0 && static_cast<size_t>(v) < value_count && alias[static_cast<size_t>(v)] >= 0; ++guard) {
      v = alias[static_cast<size_t>(v)];
    }
    return v;
  };
  std::map<std::pair<uint32_t, uint32_t>, size_t> edge_index;
  auto connect = [&](int32_t from, uint32_t to, int32_t value) {
    if (from < 0 || static_cast<uint32_t>(from) == to) return;
    auto [it, inserted] = edge_index.emplace(std::make_pair(static_cast<uint32_t>(from), to), g.edges.size());
    if (inserted) g.edges.push_back(ProgramGraphEdge{static_cast<uint32_t>(from), to, {}});
    auto& values = g.edges[it->second].values;
    if (std::find(values.begin(), values.end(), value) == values.end()) values.push_back(value);
  };
  // The node that last made value v what it is at step t: its producer, else the input.
  auto source_of = [&](int32_t v, int64_t t) -> int32_t {
    const int32_t o = origin(v);
    if (o < 0 || static_cast<size_t>(o) >= value_count) return -1;
    if (input_node[static_cast<size_t>(o)] >= 0) return input_node[static_cast<size_t>(o)];
    const int64_t p = timeline.producer[static_cast<size_t>(o)];
    if (p >= 0 && p < t && static_cast<size_t>(p) < g.node_of_step.size() && g.node_of_step[static_cast<size_t>(p)] >= 0) {
      return g.node_of_step[static_cast<size_t>(p)];
    }
    return -1;
  };

  // Planned tensors written by a kernel, by where they live: a tensor nobody writes that sits at
  // the same arena offset is a view of the latest one written there (a reshape the exporter
  // turned into a memory alias, no instruction).
  std::map<std::pair<uint32_t, uint64_t>, std::vector<std::pair<int64_t, int32_t>>> written_at;
  for (size_t v = 0; v < value_count; ++v) {
    const TensorInfo* t = tensor_of(static_cast<int32_t>(v));
    if (t == nullptr || !t->allocation || timeline.producer[v] < 0) continue;
    written_at[{t->allocation->memory_id, t->allocation->offset}].push_back({timeline.producer[v], static_cast<int32_t>(v)});
  }
  for (auto& [where, writes] : written_at) std::sort(writes.begin(), writes.end());
  auto view_source = [&](int32_t v, int64_t t) -> int32_t {
    const TensorInfo* info = tensor_of(v);
    if (info == nullptr || !info->allocation || timeline.producer[static_cast<size_t>(v)] >= 0) return -1;
    auto it = written_at.find({info->allocation->memory_id, info->allocation->offset});
    if (it == written_at.end()) return -1;
    int32_t found = -1;
    for (const auto& [p, w] : it->second) {
      if (p >= t) break;
      found = static_cast<int32_t>(p);
    }
    return found >= 0 && static_cast<size_t>(found) < g.node_of_step.size() ? g.node_of_step[static_cast<size_t>(found)] : -1;
  };

  std::vector<int32_t> args;
  int64_t step = 0;
  for (size_t c = 0; c < plan.chains.size(); ++c) {
    const Chain& chain = plan.chains[c];
    for (size_t i = 0; i < chain.instructions.size(); ++i, ++step) {
      const Instruction& in = chain.instructions[i];
      if (in.kind == InstructionKind::kMoveCall) {
        if (in.move_to >= 0 && static_cast<size_t>(in.move_to) < value_count && in.move_from != in.move_to) {
          alias[static_cast<size_t>(in.move_to)] = in.move_from;
        }
        g.node_of_step.push_back(-1);
        continue;
      }
      if (in.kind != InstructionKind::kKernelCall && in.kind != InstructionKind::kDelegateCall) {
        g.node_of_step.push_back(-1);
        continue;
      }
      ProgramGraphNode n;
      n.chain = static_cast<int32_t>(c);
      n.instruction = static_cast<int32_t>(i);
      n.step = step;
      if (in.kind == InstructionKind::kKernelCall) {
        n.kind = GraphNodeKind::kKernel;
        n.op = in.op_index >= 0 && static_cast<size_t>(in.op_index) < plan.operators.size()
                   ? plan.operators[static_cast<size_t>(in.op_index)].qualified_name()
                   : "operator ?";
      } else {
        n.kind = GraphNodeKind::kDelegate;
        n.op = in.delegate_index >= 0 && static_cast<size_t>(in.delegate_index) < plan.delegates.size()
                   ? plan.delegates[static_cast<size_t>(in.delegate_index)].id
                   : "delegate ?";
      }
      const uint32_t self = static_cast<uint32_t>(g.nodes.size());
      g.node_of_step.push_back(static_cast<int32_t>(self));
      tensor_args(plan, in, args);
      for (int32_t v : args) {
        const TensorInfo& t = plan.values[static_cast<size_t>(v)].tensor;
        const int32_t o = origin(v);
        const int64_t producer = o >= 0 ? timeline.producer[static_cast<size_t>(o)] : -1;
        // A method input is read, never made here (a delegate "produces" what it first uses).
        const bool input = o >= 0 && input_node[static_cast<size_t>(o)] >= 0;
        if (producer == step && !input) {
          if (n.shape.empty()) n.shape = shape_text(t.dtype, t.sizes);
          continue;
        }
        int32_t from = source_of(v, step);
        if (from < 0) from = view_source(origin(v), step);
        if (from >= 0) {
          connect(from, self, v);
        } else if (is_constant(t) || is_state(t)) {
          if (std::find(n.constants.begin(), n.constants.end(), v) == n.constants.end()) n.constants.push_back(v);
        }
      }
      // ETRecord: the graph nodes behind the instruction, their module stacks and, for a
      // delegate, the ops lowered into it.
      if (maps != nullptr && reference != nullptr) {
        std::vector<int64_t> handles;
        if (auto it = maps->debug_handle_map.find(step); it != maps->debug_handle_map.end()) handles = it->second;
        if (auto it = maps->delegate_map.find(step); it != maps->delegate_map.end()) {
          for (const std::string& key : it->second.keys_in_order()) {
            for (int64_t h : it->second.debug_map.at(key)) {
              if (std::find(handles.begin(), handles.end(), h) == handles.end()) handles.push_back(h);
            }
          }
        }
        std::vector<const std::vector<etrecord::ModuleFrame>*> stacks;
        std::set<std::string> seen;
        for (int64_t h : handles) {
          for (const etrecord::GraphNode* node : reference->nodes_for_handle(h)) {
            if (node->skipped_by_inspector() || !seen.insert(node->name).second) continue;
            stacks.push_back(&node->nn_module_stack);
            if (n.kind == GraphNodeKind::kDelegate && !node->target.empty()) n.delegated_ops.push_back(node->target);
          }
        }
        n.debug_handles = std::move(handles);
        n.modules = common_stack(stacks);
        // The root module (path "") holds everything; it is not a group.
        n.modules.erase(std::remove_if(n.modules.begin(), n.modules.end(), [](const etrecord::ModuleFrame& f) { return f.path.empty(); }),
                        n.modules.end());
      }
      // Without an ETRecord's ops, an XNNPACK delegate shows the nodes of its payload (one that
      // does not read has none, as before).
      if (n.kind == GraphNodeKind::kDelegate && n.delegated_ops.empty() && program != nullptr && in.delegate_index >= 0 &&
          static_cast<size_t>(in.delegate_index) < plan.delegates.size() &&
          plan.delegates[static_cast<size_t>(in.delegate_index)].id == xnn::kBackendId) {
        auto payload = xnn::parse_xnnpack_delegate(*program, plan.delegates[static_cast<size_t>(in.delegate_index)], program->name());
        if (payload.ok()) {
          for (const xnn::Node& node : payload->nodes) n.delegated_ops.push_back(std::string("xnnpack::") + xnn::to_string(node.kind));
        }
      }
      g.nodes.push_back(std::move(n));
    }
  }

  // Outputs.
  const int64_t T = step;
  for (size_t j = 0; j < plan.outputs.size(); ++j) {
    ProgramGraphNode n;
    n.kind = GraphNodeKind::kOutput;
    n.io_index = static_cast<int32_t>(j);
    n.step = T;
    n.op = "output " + std::to_string(j);
    const int32_t v = plan.outputs[j];
    if (const TensorInfo* t = tensor_of(v)) n.shape = shape_text(t->dtype, t->sizes);
    const uint32_t self = static_cast<uint32_t>(g.nodes.size());
    g.nodes.push_back(std::move(n));
    int32_t from = source_of(v, T);
    if (from < 0 && v >= 0 && static_cast<size_t>(v) < value_count) from = view_source(origin(v), T);
    connect(from, self, v);
  }
  return g;
}

}  // namespace etscope::inspect
