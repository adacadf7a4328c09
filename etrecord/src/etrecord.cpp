// Methods of the EtRecord value types and the small public helpers (target names, module stacks,
// dtype codes).
#include "etscope/etrecord/etrecord.h"

#include <string_view>

namespace etscope::etrecord {
namespace {

bool starts_with(std::string_view s, std::string_view prefix) { return s.substr(0, prefix.size()) == prefix; }

void collect_handle_nodes(const Graph& g, int64_t handle, std::vector<const GraphNode*>* out) {
  for (const GraphNode& n : g.nodes) {
    for (int64_t h : n.debug_handles) {
      if (h == handle) {
        out->push_back(&n);
        break;
      }
    }
  }
  for (const LoweredModule& lm : g.lowered_modules) {
    if (lm.original_program) collect_handle_nodes(*lm.original_program, handle, out);
  }
}

}  // namespace

bool GraphNode::skipped_by_inspector() const {
  return raw_target == "memory.alloc" || raw_target == "executorch.exir.memory.alloc" || target == "getitem";
}

std::vector<const GraphNode*> Graph::nodes_for_handle(int64_t handle) const {
  std::vector<const GraphNode*> out;
  collect_handle_nodes(*this, handle, &out);
  return out;
}

std::map<int64_t, std::vector<const GraphNode*>> Graph::debug_handle_index() const {
  std::map<int64_t, std::vector<const GraphNode*>> index;
  auto add = [&index](const Graph& g, auto& self) -> void {
    for (const GraphNode& n : g.nodes) {
      for (size_t i = 0; i < n.debug_handles.size(); ++i) {
        // A node listing one handle twice is indexed once, as nodes_for_handle returns it.
        bool seen = false;
        for (size_t k = 0; k < i; ++k) seen = seen || n.debug_handles[k] == n.debug_handles[i];
        if (!seen) index[n.debug_handles[i]].push_back(&n);
      }
    }
    for (const LoweredModule& lm : g.lowered_modules) {
      if (lm.original_program) self(*lm.original_program, self);
    }
  };
  add(*this, add);
  return index;
}

const GraphNode* Graph::find_node(const std::string& node_name) const {
  for (const GraphNode& n : nodes) {
    if (n.name == node_name) return &n;
  }
  return nullptr;
}

size_t Graph::operator_count() const {
  size_t count = 0;
  for (const GraphNode& n : nodes) count += n.op == "call_function" ? 1 : 0;
  return count;
}

const std::vector<int64_t>* DelegateEntry::handles_for(const std::string& id) const {
  if (auto it = debug_map.find(id); it != debug_map.end()) return &it->second;
  // The Inspector then assigns every key that is a substring of the id; the last one wins.
  const std::vector<int64_t>* found = nullptr;
  for (const std::string& key : keys_in_order()) {
    if (id.find(key) != std::string::npos) found = &debug_map.at(key);
  }
  return found;
}

std::vector<std::string> DelegateEntry::keys_in_order() const {
  if (key_order.size() == debug_map.size()) return key_order;
  std::vector<std::string> keys;
  for (const auto& [key, handles] : debug_map) keys.push_back(key);
  return keys;
}

int64_t TensorValue::numel() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

const Graph* EtRecord::reference_graph(const std::string& method) const {
  if (auto it = edge_programs.find(method); it != edge_programs.end()) return &it->second;
  if (edge_programs.size() == 1) return &edge_programs.begin()->second;
  return nullptr;
}

const Graph* EtRecord::find_graph(const std::string& member) const {
  if (exported_program && (member == exported_program->name || member == "exported_program")) return &*exported_program;
  for (const auto& [method, g] : edge_programs) {
    if (g.name == member) return &g;
  }
  if (auto it = graph_map.find(member); it != graph_map.end()) return &it->second;
  return nullptr;
}

const MethodMaps* EtRecord::method_maps(const std::string& method) const {
  auto it = maps.find(method);
  return it == maps.end() ? nullptr : &it->second;
}

const char* to_string(GraphRole role) {
  switch (role) {
    case GraphRole::kExportedProgram: return "exported_program";
    case GraphRole::kEdgeProgram: return "edge_program";
    case GraphRole::kGraphMap: return "graph_map";
    case GraphRole::kUnknown: break;
  }
  return "unknown";
}

std::vector<const Graph*> EtRecord::programs() const {
  std::vector<const Graph*> out;
  if (exported_program) out.push_back(&*exported_program);
  for (const auto& [method, g] : edge_programs) out.push_back(&g);
  for (const auto& [key, g] : graph_map) out.push_back(&g);
  return out;
}

GraphRole EtRecord::role_of(const Graph& graph) const {
  if (exported_program && &*exported_program == &graph) return GraphRole::kExportedProgram;
  for (const auto& [method, g] : edge_programs) {
    if (&g == &graph) return GraphRole::kEdgeProgram;
  }
  for (const auto& [key, g] : graph_map) {
    if (&g == &graph) return GraphRole::kGraphMap;
  }
  return GraphRole::kUnknown;
}

std::vector<std::string> EtRecord::methods() const {
  std::vector<std::string> out;
  for (const auto& [method, g] : edge_programs) out.push_back(method);
  return out;
}

bool EtRecord::has_method(const std::string& method) const {
  return edge_programs.count(method) != 0 || maps.count(method) != 0;
}

Result<const std::vector<TensorValue>*> EtRecord::representative_inputs_of(const std::string& method, size_t index) const {
  auto it = representative_inputs.find(method);
  if (it == representative_inputs.end() || it->second.empty()) {
    return Error(ErrorCode::kNotFound, path + ": no representative inputs for method '" + method + "'");
  }
  if (index >= it->second.size()) {
    return Error(ErrorCode::kNotFound, path + ": method '" + method + "' has " + std::to_string(it->second.size()) +
                                           " cases of representative inputs, not " + std::to_string(index + 1));
  }
  return &it->second[index];
}

Result<EtRecord::AotInputs> EtRecord::aot_inputs_of(const std::string& method) const {
  if (auto recorded = representative_inputs_of(method, 0); recorded.ok()) return AotInputs{**recorded, "the representative inputs"};
  for (const std::string& member : {"edge_dialect_exported_program/" + method + "_example_inputs", std::string("exported_program_example_inputs")}) {
    auto it = saved_tensors.find(member);
    if (it == saved_tensors.end() || it->second.empty()) continue;
    // The exported program's example inputs stand for "forward" only (the method it was exported as).
    if (member.rfind("exported_program", 0) == 0 && method != "forward") continue;
    AotInputs out;
    for (const NamedTensor& t : it->second) out.tensors.push_back(t.value);
    out.source = "the example inputs (" + member + "; the ETRecord has no representative inputs)";
    return out;
  }
  return Error(ErrorCode::kNotFound, path + ": no representative inputs for method '" + method + "', nor example inputs it was exported with");
}

size_t EtRecord::representative_cases(const std::string& method) const {
  auto it = representative_inputs.find(method);
  return it == representative_inputs.end() ? 0 : it->second.size();
}

uint64_t total_bytes(const std::vector<NamedTensor>& tensors) {
  uint64_t bytes = 0;
  for (const NamedTensor& t : tensors) bytes += t.value.bytes.size();
  return bytes;
}

std::string TracebackFrame::file_name() const {
  const size_t slash = file.find_last_of('/');
  return slash == std::string::npos ? file : file.substr(slash + 1);
}

std::vector<TracebackFrame> parse_traceback(const std::string& trace) {
  std::vector<TracebackFrame> frames;
  size_t pos = 0;
  while ((pos = trace.find("File \"", pos)) != std::string::npos) {
    const size_t quote = trace.find('"', pos + 6);
    if (quote == std::string::npos) break;
    TracebackFrame f;
    f.file = trace.substr(pos + 6, quote - pos - 6);
    const size_t ln = trace.find("line ", quote);
    const size_t eol = trace.find('\n', quote);
    if (ln != std::string::npos && (eol == std::string::npos || ln < eol)) {
      const size_t end = trace.find_first_not_of("0123456789", ln + 5);
      f.line = trace.substr(ln + 5, end == std::string::npos ? std::string::npos : end - ln - 5);
    }
    if (eol != std::string::npos) {
      // The source line follows the frame line, unless the next frame does.
      const size_t next = trace.find('\n', eol + 1);
      const std::string code = trace.substr(eol + 1, next == std::string::npos ? std::string::npos : next - eol - 1);
      const size_t b = code.find_first_not_of(" \t");
      f.code = b == std::string::npos ? "" : code.substr(b);
      if (starts_with(f.code, "File \"")) f.code.clear();
    }
    frames.push_back(std::move(f));
    pos = quote;
  }
  return frames;
}

std::optional<TracebackFrame> user_frame(const std::string& trace) {
  std::vector<TracebackFrame> frames = parse_traceback(trace);
  if (frames.empty()) return std::nullopt;
  for (auto it = frames.rbegin(); it != frames.rend(); ++it) {
    if (it->file.find("/site-packages/torch/") == std::string::npos && it->file.find("/torch/nn/") == std::string::npos) {
      return std::move(*it);
    }
  }
  return std::move(frames.back());
}

std::optional<ScalarType> scalar_type_from_serde(int code) {
  switch (code) {
    case 1: return ScalarType::kByte;
    case 2: return ScalarType::kChar;
    case 3: return ScalarType::kShort;
    case 4: return ScalarType::kInt;
    case 5: return ScalarType::kLong;
    case 6: return ScalarType::kHalf;
    case 7: return ScalarType::kFloat;
    case 8: return ScalarType::kDouble;
    case 9: return ScalarType::kComplexHalf;
    case 10: return ScalarType::kComplexFloat;
    case 11: return ScalarType::kComplexDouble;
    case 12: return ScalarType::kBool;
    case 13: return ScalarType::kBFloat16;
    case 14: return ScalarType::kUInt16;
    case 15: return ScalarType::kFloat8e5m2;
    case 16: return ScalarType::kFloat8e4m3fn;
    default: return std::nullopt;
  }
}

std::string inspector_op_name(const std::string& raw) {
  // Edge and backend ops print "<namespace>.<op>.<overload>" (EdgeOpOverload.__name__).
  for (std::string_view prefix : {"executorch.exir.dialects.edge.ops.", "executorch.exir.dialects.backend.ops."}) {
    if (starts_with(raw, prefix)) return raw.substr(prefix.size());
  }
  // Higher-order operators print their bare name.
  if (starts_with(raw, "torch.ops.higher_order.")) return raw.substr(std::string_view("torch.ops.higher_order.").size());
  // ATen OpOverload.__name__ drops the namespace: "torch.ops.aten.mul.Tensor" -> "mul.Tensor".
  if (starts_with(raw, "torch.ops.")) {
    std::string rest = raw.substr(std::string_view("torch.ops.").size());
    size_t dot = rest.find('.');
    return dot == std::string::npos ? rest : rest.substr(dot + 1);
  }
  // Python callables ("_operator.getitem", "memory.alloc") print their function name.
  size_t dot = raw.rfind('.');
  return dot == std::string::npos ? raw : raw.substr(dot + 1);
}

std::vector<ModuleFrame> parse_nn_module_stack(const std::string& text) {
  std::vector<ModuleFrame> frames;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find(';', start);
    std::string_view item = std::string_view(text).substr(start, end == std::string::npos ? std::string::npos : end - start);
    // Split on commas at bracket depth 0: module paths such as "layers.slice(None, 2, None)"
    // carry commas of their own.
    std::vector<std::string> fields;
    int depth = 0;
    size_t field_start = 0;
    bool balanced = true;
    for (size_t i = 0; i < item.size(); ++i) {
      char c = item[i];
      if (c == '(' || c == '[') {
        ++depth;
      } else if (c == ')' || c == ']') {
        if (--depth < 0) balanced = false;
      } else if (c == ',' && depth == 0) {
        fields.emplace_back(item.substr(field_start, i - field_start));
        field_start = i + 1;
      }
    }
    fields.emplace_back(item.substr(field_start));
    auto trim = [](std::string s) {
      size_t b = s.find_first_not_of(" \t");
      size_t e = s.find_last_not_of(" \t");
      return b == std::string::npos ? std::string() : s.substr(b, e - b + 1);
    };
    if (balanced && fields.size() == 3) frames.push_back({trim(fields[0]), trim(fields[1]), trim(fields[2])});
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return frames;
}

}  // namespace etscope::etrecord
