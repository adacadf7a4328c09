// Exported-program JSON reader. Sections: arguments and tensor names; tensor metadata; node
// metadata (debug handles, module stacks, provenance); lowered modules; the program.
#include "etscope/etrecord/graph_json.h"

#include <algorithm>

namespace etscope::etrecord {
namespace {

constexpr int kMaxLoweredNesting = 4;

// ---- arguments -----------------------------------------------------------------------------

std::string sym_name(const Json& sym) {
  // SymIntArgument / SymBoolArgument: {"as_name": "s0"} or {"as_int": 3}.
  UnionMember m = union_member(sym);
  if (m.value != nullptr && m.key == "as_name" && m.value->is_string()) return m.value->get<std::string>();
  return {};
}

// Appends the value names an Argument refers to.
void argument_names(const Json& arg, std::vector<std::string>* out) {
  UnionMember m = union_member(arg);
  if (m.value == nullptr) return;
  const Json& v = *m.value;
  auto push = [&](std::string s) {
    if (!s.empty()) out->push_back(std::move(s));
  };
  if (m.key == "as_tensor" || m.key == "as_custom_obj" || m.key == "as_token") {
    push(string_member(v, "name"));
  } else if (m.key == "as_tensors" && v.is_array()) {
    for (const Json& t : v) push(string_member(t, "name"));
  } else if (m.key == "as_optional_tensors" && v.is_array()) {
    for (const Json& t : v) {
      UnionMember o = union_member(t);
      if (o.value != nullptr && o.key == "as_tensor") push(string_member(*o.value, "name"));
    }
  } else if (m.key == "as_sym_int" || m.key == "as_sym_bool" || m.key == "as_sym_float") {
    push(sym_name(v));
  } else if ((m.key == "as_sym_ints" || m.key == "as_sym_bools" || m.key == "as_sym_floats") && v.is_array()) {
    for (const Json& s : v) push(sym_name(s));
  }
}

// ---- tensor metadata -----------------------------------------------------------------------

TensorMeta tensor_meta(const Json& j) {
  TensorMeta m;
  if (const Json* d = member(j, "dtype"); d != nullptr && d->is_number_integer()) {
    m.serde_dtype = d->get<int>();
    m.dtype = scalar_type_from_serde(m.serde_dtype);
  }
  if (const Json* sizes = member(j, "sizes"); sizes != nullptr && sizes->is_array()) {
    for (const Json& s : *sizes) {
      UnionMember u = union_member(s);
      std::optional<int64_t> n = u.value != nullptr && u.key == "as_int" ? as_int64(*u.value) : std::nullopt;
      if (n) {
        m.sizes.push_back(*n);
        m.symbolic.emplace_back();
      } else {
        m.sizes.push_back(-1);
        m.symbolic.push_back(u.value != nullptr && u.key == "as_expr" ? string_member(*u.value, "expr_str") : "?");
      }
    }
  }
  if (const Json* rg = member(j, "requires_grad"); rg != nullptr && rg->is_boolean()) m.requires_grad = rg->get<bool>();
  return m;
}

// ---- node metadata -------------------------------------------------------------------------

std::vector<int64_t> parse_debug_handles(const std::string& text) {
  std::vector<int64_t> out;
  if (auto v = parse_int(text)) {
    out.push_back(*v);
    return out;
  }
  // Tolerate a list written as "[1, 2]" or "(1, 2)".
  std::string inner = text;
  inner.erase(std::remove_if(inner.begin(), inner.end(), [](char c) { return c == '[' || c == ']' || c == '(' || c == ')'; }),
              inner.end());
  size_t start = 0;
  while (start <= inner.size()) {
    size_t comma = inner.find(',', start);
    std::string part = inner.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    if (auto v = parse_int(part)) {
      out.push_back(*v);
    } else if (part.find_first_not_of(" \t") != std::string::npos) {
      return {};
    }
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

// from_node: follow the last record at each level down to the greatest ancestor.
std::vector<NodeSource> parse_from_node(const Json& list) {
  std::vector<NodeSource> chain;
  const Json* level = &list;
  while (level->is_array() && !level->empty()) {
    const Json& rec = level->back();
    if (!rec.is_object()) break;
    NodeSource s;
    s.name = string_member(rec, "name");
    s.target = string_member(rec, "target");
    if (const Json* g = member(rec, "graph_id"); g != nullptr) s.graph_id = as_int64(*g).value_or(0);
    s.pass_name = string_member(rec, "pass_name");
    s.action = string_member(rec, "action");
    if (const Json* a = member(rec, "action"); a != nullptr && a->is_array()) {
      for (const Json& x : *a) {
        if (!s.action.empty()) s.action += "+";
        s.action += x.is_string() ? x.get<std::string>() : x.dump();
      }
    }
    chain.push_back(std::move(s));
    const Json* next = member(rec, "from_node");
    if (next == nullptr) break;
    level = next;
  }
  return chain;
}

std::string meta_text(const Json& v) { return v.is_string() ? v.get<std::string>() : v.dump(); }

// ---- lowered modules -----------------------------------------------------------------------

uint64_t base64_decoded_size(const std::string& s) {
  size_t n = s.size();
  size_t pad = 0;
  while (pad < 2 && n > pad && s[n - 1 - pad] == '=') ++pad;
  return n / 4 * 3 - (n % 4 == 0 ? pad : 0) + (n % 4 == 0 ? 0 : (n % 4) * 3 / 4);
}

std::optional<LoweredModule> parse_lowered(const std::string& name, const std::string& text, const std::string& where,
                                           const ReadLimits& limits, int nesting, std::vector<std::string>* notes) {
  const std::string here = where + ": lowered module '" + name + "'";
  auto parsed = parse_json(text, limits.max_json_depth, here);
  if (!parsed.ok()) {
    notes->push_back(parsed.error().message());
    return std::nullopt;
  }
  const Json& j = *parsed;
  if (!j.is_object() || member(j, "backend_id") == nullptr) return std::nullopt;
  LoweredModule lm;
  lm.name = name;
  lm.backend_id = string_member(j, "backend_id");
  lm.processed_bytes = base64_decoded_size(string_member(j, "processed_bytes"));
  if (const Json* specs = member(j, "compile_specs"); specs != nullptr && specs->is_array()) {
    for (const Json& cs : *specs) lm.compile_spec_keys.push_back(string_member(cs, "key"));
  }
  if (const Json* orig = member(j, "original_module"); orig != nullptr && orig->is_object()) {
    if (nesting + 1 > kMaxLoweredNesting) {
      notes->push_back(here + ": lowered modules nested deeper than " + std::to_string(kMaxLoweredNesting) +
                       ", original program not read");
    } else {
      auto g = parse_exported_program(*orig, name, here, limits, nesting + 1, notes);
      if (g.ok()) {
        lm.original_program = std::make_shared<const Graph>(std::move(*g));
      } else {
        notes->push_back(g.error().message());
      }
    }
  }
  return lm;
}

// ---- signature -----------------------------------------------------------------------------

SignatureEntry signature_entry(const Json& spec) {
  SignatureEntry e;
  UnionMember m = union_member(spec);
  if (m.value == nullptr) return e;
  e.kind = std::string(m.key);
  const Json& v = *m.value;
  if (const Json* arg = member(v, "arg"); arg != nullptr) {
    std::string direct = string_member(*arg, "name");
    if (!direct.empty()) {
      e.name = direct;
    } else {
      std::vector<std::string> names;
      argument_names(*arg, &names);
      if (!names.empty()) e.name = names.front();
    }
  }
  if (v.is_object()) {
    for (auto it = v.begin(); it != v.end(); ++it) {
      const std::string& k = it.key();
      if (it.value().is_string() && (k == "target" || (k.size() > 5 && k.compare(k.size() - 5, 5, "_name") == 0))) {
        e.target = it.value().get<std::string>();
        break;
      }
    }
  }
  return e;
}

}  // namespace

Result<Graph> parse_exported_program(const Json& root, const std::string& name, const std::string& where,
                                     const ReadLimits& limits, int nesting, std::vector<std::string>* notes) {
  const Json* gm = member(root, "graph_module");
  const Json* graph = gm != nullptr ? member(*gm, "graph") : nullptr;
  if (graph == nullptr || !graph->is_object()) {
    return Error(ErrorCode::kCorrupt, where + ": no graph_module.graph, not an exported program");
  }
  Graph g;
  g.name = name;

  if (const Json* sv = member(root, "schema_version"); sv != nullptr) {
    if (sv->is_number_integer()) {
      g.schema_version = std::to_string(sv->get<int64_t>());
    } else if (sv->is_object()) {
      auto part = [&](const char* k) {
        const Json* x = member(*sv, k);
        return x != nullptr && x->is_number_integer() ? std::to_string(x->get<int64_t>()) : std::string("?");
      };
      g.schema_version = part("major") + "." + part("minor");
    }
  }
  g.dialect = string_member(root, "dialect");
  if (const Json* ver = member(root, "verifiers"); g.dialect.empty() && ver != nullptr && ver->is_array() &&
                                                   !ver->empty() && ver->front().is_string()) {
    g.dialect = ver->front().get<std::string>();
  }

  if (const Json* tv = member(*graph, "tensor_values"); tv != nullptr && tv->is_object()) {
    for (auto it = tv->begin(); it != tv->end(); ++it) {
      const Json* meta = &it.value();
      if (const Json* wrapped = member(*meta, "meta"); wrapped != nullptr) {  // 2023: {"meta": TensorMeta}
        meta = wrapped;
        g.layout_2023 = true;
      }
      g.tensor_values.emplace(it.key(), tensor_meta(*meta));
    }
  }

  // Placeholders first, as the deserializer creates them from graph.inputs.
  if (const Json* inputs = member(*graph, "inputs"); inputs != nullptr && inputs->is_array()) {
    for (size_t i = 0; i < inputs->size(); ++i) {
      GraphNode n;
      n.op = "placeholder";
      std::vector<std::string> names;
      argument_names((*inputs)[i], &names);
      n.name = names.empty() ? "arg" + std::to_string(i) : names.front();
      n.output_names = {n.name};
      g.nodes.push_back(std::move(n));
    }
  }

  if (const Json* nodes = member(*graph, "nodes"); nodes != nullptr && nodes->is_array()) {
    for (size_t i = 0; i < nodes->size(); ++i) {
      const Json& jn = (*nodes)[i];
      GraphNode n;
      n.op = "call_function";
      n.raw_target = string_member(jn, "target");
      n.target = inspector_op_name(n.raw_target);
      if (const Json* outs = member(jn, "outputs"); outs != nullptr && outs->is_array()) {
        for (const Json& o : *outs) argument_names(o, &n.output_names);
      }
      n.name = string_member(jn, "name");
      if (member(jn, "name") == nullptr) g.layout_2023 = true;
      if (n.name.empty()) n.name = n.output_names.empty() ? "node" + std::to_string(i) : n.output_names.front();

      const bool is_delegate_call = n.raw_target.find("executorch_call_delegate") != std::string::npos;
      if (const Json* ins = member(jn, "inputs"); ins != nullptr && ins->is_array()) {
        for (const Json& named : *ins) {
          const Json* arg = member(named, "arg");
          if (arg == nullptr) continue;
          argument_names(*arg, &n.input_names);
          UnionMember u = union_member(*arg);
          if (is_delegate_call && u.value != nullptr && u.key == "as_string" && u.value->is_string() &&
              !n.lowered_module) {
            auto lm = parse_lowered(string_member(named, "name"), u.value->get<std::string>(), where, limits, nesting, notes);
            if (lm) {
              n.lowered_module = g.lowered_modules.size();
              g.lowered_modules.push_back(std::move(*lm));
            }
          }
        }
      }

      if (const Json* md = member(jn, "metadata"); md != nullptr && md->is_object()) {
        for (auto it = md->begin(); it != md->end(); ++it) {
          if (it.value().is_null()) continue;
          n.metadata.emplace(it.key(), meta_text(it.value()));
        }
      }
      if (auto it = n.metadata.find("debug_handle"); it != n.metadata.end()) n.debug_handles = parse_debug_handles(it->second);
      if (auto it = n.metadata.find("stack_trace"); it != n.metadata.end()) n.stack_trace = it->second;
      if (auto it = n.metadata.find("nn_module_stack"); it != n.metadata.end()) {
        n.nn_module_stack = parse_nn_module_stack(it->second);
      }
      if (auto it = n.metadata.find("source_fn_stack"); it != n.metadata.end()) n.source_fn_stack = it->second;
      if (auto it = n.metadata.find("torch_fn"); it != n.metadata.end()) n.torch_fn = it->second;
      if (auto it = n.metadata.find("from_node"); it != n.metadata.end()) {
        auto fj = parse_json(it->second, limits.max_json_depth, where + ": node '" + n.name + "': from_node");
        if (fj.ok()) {
          n.from_node = parse_from_node(*fj);
        } else {
          notes->push_back(fj.error().message());
        }
      }
      g.nodes.push_back(std::move(n));
    }
  }

  GraphNode out;
  out.name = "output";
  out.op = "output";
  if (const Json* outputs = member(*graph, "outputs"); outputs != nullptr && outputs->is_array()) {
    for (const Json& o : *outputs) argument_names(o, &out.input_names);
  }
  g.nodes.push_back(std::move(out));

  if (const Json* sig = gm != nullptr ? member(*gm, "signature") : nullptr; sig != nullptr) {
    if (const Json* specs = member(*sig, "input_specs"); specs != nullptr && specs->is_array()) {
      for (const Json& s : *specs) g.inputs.push_back(signature_entry(s));
    }
    if (const Json* specs = member(*sig, "output_specs"); specs != nullptr && specs->is_array()) {
      for (const Json& s : *specs) g.outputs.push_back(signature_entry(s));
    }
  }
  return g;
}

}  // namespace etscope::etrecord
