// etscope etrecord: what an ETRecord archive holds (programs, debug maps, delegates, reference
// data), and with --graph every node of the reference graphs. JSON shape: docs/etrecord.md.
//
// Sections: small formatters; text summary; --graph listing; JSON; the command.
#include <cinttypes>
#include <cstdio>
#include <filesystem>
#include <iostream>

#include "commands/command.h"
#include "etscope/etrecord/etrecord_reader.h"
#include "etscope/formats/npy.h"
#include "render/format.h"
#include "render/json_output.h"

namespace etscope::cli {
namespace {

using etrecord::EtRecord;
using etrecord::Graph;
using etrecord::GraphNode;
using etrecord::TensorValue;

// ---- small formatters --------------------------------------------------------------------

std::string tensor_string(const TensorValue& t) { return shape_text(t.dtype, t.shape); }

std::string handles_string(const std::vector<int64_t>& handles) {
  std::string s;
  for (size_t i = 0; i < handles.size(); ++i) s += (i ? "," : "") + std::to_string(handles[i]);
  return s;
}

// A node's source as one line: "file.py:13 source line" for its innermost frame outside torch.
std::string source_line(const std::string& trace) {
  const std::optional<etrecord::TracebackFrame> f = etrecord::user_frame(trace);
  if (!f) return "";
  return f->file_name() + ":" + f->line + (f->code.empty() ? "" : " " + f->code);
}

// ---- text summary ------------------------------------------------------------------------

constexpr size_t kMaxListed = 16;  // debug-map lines per method in the summary

void print_summary(const EtRecord& r, const std::string& only_method) {
  std::printf("%s: ETRecord, %zu entries\n", r.path.c_str(), r.entries.size());

  std::printf("\nprograms:\n");
  for (const Graph* g : r.programs()) {
    std::printf("  %-44s %-16s %4zu operators, %4zu nodes, schema %s%s\n", g->name.c_str(), etrecord::to_string(r.role_of(*g)),
                g->operator_count(), g->nodes.size(), g->schema_version.empty() ? "?" : g->schema_version.c_str(),
                g->layout_2023 ? " (2023 layout)" : "");
    for (const auto& lm : g->lowered_modules) {
      std::printf("      lowered module %s: %s, %s, %zu nodes in its original program\n", lm.name.c_str(),
                  lm.backend_id.c_str(), bytes_text(lm.processed_bytes).c_str(),
                  lm.original_program ? lm.original_program->nodes.size() : size_t{0});
    }
  }

  std::printf("\nmethods:\n");
  if (r.maps.empty()) std::printf("  (no debug maps)\n");
  for (const auto& [method, m] : r.maps) {
    if (!only_method.empty() && method != only_method) continue;
    std::printf("  %s: debug_handle_map %zu instructions, delegate_map %zu, instruction_id_to_num_outs %zu\n",
                method.c_str(), m.debug_handle_map.size(), m.delegate_map.size(), m.instruction_id_to_num_outs.size());
    size_t shown = 0;
    for (const auto& [instr, handles] : m.debug_handle_map) {
      if (shown++ == kMaxListed) {
        std::printf("    ... %zu more (--json lists all)\n", m.debug_handle_map.size() - kMaxListed);
        break;
      }
      std::printf("    instruction %4" PRId64 " -> handles %s\n", instr, handles_string(handles).c_str());
    }
    for (const auto& [instr, d] : m.delegate_map) {
      auto outs = m.instruction_id_to_num_outs.find(instr);
      std::printf("    delegate at instruction %" PRId64 ": %s, %zu delegate debug ids", instr, d.backend.c_str(),
                  d.debug_map.size());
      if (outs != m.instruction_id_to_num_outs.end()) std::printf(", %" PRId64 " outputs", outs->second);
      std::printf("\n");
      for (const auto& [id, handles] : d.debug_map) {
        std::printf("      delegate id %s -> handles %s\n", id.c_str(), handles_string(handles).c_str());
      }
    }
  }

  auto print_cases = [&](const char* title, const std::map<std::string, std::vector<std::vector<TensorValue>>>& data) {
    if (data.empty()) return;
    std::printf("\n%s:\n", title);
    for (const auto& [method, cases] : data) {
      if (!only_method.empty() && method != only_method) continue;
      for (size_t c = 0; c < cases.size(); ++c) {
        std::string s;
        for (size_t i = 0; i < cases[c].size(); ++i) s += (i ? ", " : "") + tensor_string(cases[c][i]);
        std::printf("  %s case %zu: %s\n", method.c_str(), c, s.empty() ? "-" : s.c_str());
      }
    }
  };
  print_cases("reference outputs", r.reference_outputs);
  print_cases("representative inputs", r.representative_inputs);

  if (!r.saved_tensors.empty()) {
    std::printf("\nsaved tensors:\n");
    for (const auto& [member, tensors] : r.saved_tensors) {
      std::string s;
      for (size_t i = 0; i < tensors.size(); ++i) {
        if (i < 4) {
          s += (i ? ", " : ": ") + (tensors[i].name.empty() ? std::string() : tensors[i].name + " ") +
               tensor_string(tensors[i].value);
        } else if (i == 4) {
          s += ", ...";
        }
      }
      std::printf("  %s: %zu tensors, %s%s\n", member.c_str(), tensors.size(), bytes_text(etrecord::total_bytes(tensors)).c_str(), s.c_str());
    }
  }
  if (r.export_graph_id) std::printf("\nexport graph id: %" PRId64 "\n", *r.export_graph_id);
  if (!r.undecoded.empty()) {
    std::printf("\nnot decoded:\n");
    for (const std::string& u : r.undecoded) std::printf("  %s\n", u.c_str());
  }
}

// ---- --graph -----------------------------------------------------------------------------

void print_graph(const Graph& g, int indent) {
  std::string pad(static_cast<size_t>(indent), ' ');
  std::printf("\n%s%s: %zu nodes\n", pad.c_str(), g.name.c_str(), g.nodes.size());
  for (const GraphNode& n : g.nodes) {
    std::string line = pad + "  " + n.op;
    line.resize(std::max(line.size(), pad.size() + 16), ' ');
    line += " " + n.name;
    if (!n.target.empty()) line += "  " + n.target;
    if (!n.debug_handles.empty()) line += "  handles " + handles_string(n.debug_handles);
    if (!n.nn_module_stack.empty()) {
      const auto& inner = n.nn_module_stack.back();
      line += "  module " + (inner.path.empty() ? std::string("<root>") : inner.path) + " (" + inner.type + ")";
    }
    std::string src = source_line(n.stack_trace);
    if (!src.empty()) line += "  @ " + src;
    std::printf("%s\n", line.c_str());
    if (n.lowered_module && *n.lowered_module < g.lowered_modules.size()) {
      const auto& lm = g.lowered_modules[*n.lowered_module];
      if (lm.original_program) print_graph(*lm.original_program, indent + 4);
    }
  }
}

// ---- JSON --------------------------------------------------------------------------------

Json tensor_json(const TensorValue& t) {
  return Json{{"dtype", scalar_type_name(t.dtype)}, {"shape", t.shape}, {"nbytes", t.bytes.size()}};
}

Json graph_json(const Graph& g) {
  Json nodes = Json::array();
  for (const GraphNode& n : g.nodes) {
    Json frames = Json::array();
    for (const auto& f : n.nn_module_stack) frames.push_back({{"key", f.key}, {"path", f.path}, {"type", f.type}});
    Json from = Json::array();
    for (const auto& s : n.from_node) {
      from.push_back({{"name", s.name}, {"target", s.target}, {"graph_id", s.graph_id}, {"pass_name", s.pass_name},
                      {"action", s.action}});
    }
    Json outputs = Json::array();
    for (const std::string& o : n.output_names) {
      Json out{{"name", o}};
      if (auto it = g.tensor_values.find(o); it != g.tensor_values.end()) {
        out["dtype"] = it->second.dtype ? Json(scalar_type_name(*it->second.dtype)) : Json(nullptr);
        out["shape"] = it->second.sizes;
      }
      outputs.push_back(std::move(out));
    }
    Json j{{"name", n.name},
           {"op", n.op},
           {"target", n.target},
           {"raw_target", n.raw_target},
           {"debug_handles", n.debug_handles},
           {"stack_trace", n.stack_trace},
           {"nn_module_stack", std::move(frames)},
           {"source_fn_stack", n.source_fn_stack},
           {"torch_fn", n.torch_fn},
           {"from_node", std::move(from)},
           {"inputs", n.input_names},
           {"outputs", std::move(outputs)}};
    j["lowered_module"] = n.lowered_module ? Json(*n.lowered_module) : Json(nullptr);
    nodes.push_back(std::move(j));
  }
  auto sig = [](const std::vector<etrecord::SignatureEntry>& entries) {
    Json a = Json::array();
    for (const auto& e : entries) a.push_back({{"kind", e.kind}, {"name", e.name}, {"target", e.target}});
    return a;
  };
  Json lowered = Json::array();
  for (const auto& lm : g.lowered_modules) {
    lowered.push_back({{"name", lm.name},
                       {"backend_id", lm.backend_id},
                       {"processed_bytes", lm.processed_bytes},
                       {"compile_spec_keys", lm.compile_spec_keys},
                       {"original_program", lm.original_program ? graph_json(*lm.original_program) : Json(nullptr)}});
  }
  return Json{{"member", g.name},
              {"schema_version", g.schema_version},
              {"dialect", g.dialect},
              {"layout_2023", g.layout_2023},
              {"operator_count", g.operator_count()},
              {"inputs", sig(g.inputs)},
              {"outputs", sig(g.outputs)},
              {"lowered_modules", std::move(lowered)},
              {"nodes", std::move(nodes)}};
}

Json record_json(const EtRecord& r, const std::string& only_method) {
  auto wanted = [&](const std::string& m) { return only_method.empty() || m == only_method; };
  Json edge = Json::object();
  for (const auto& [method, g] : r.edge_programs) {
    if (wanted(method)) edge[method] = graph_json(g);
  }
  Json graph_map = Json::object();
  for (const auto& [key, g] : r.graph_map) graph_map[key] = graph_json(g);
  Json maps = Json::object();
  for (const auto& [method, m] : r.maps) {
    if (!wanted(method)) continue;
    Json dh = Json::object();
    for (const auto& [instr, handles] : m.debug_handle_map) dh[std::to_string(instr)] = handles;
    Json dm = Json::object();
    for (const auto& [instr, d] : m.delegate_map) {
      Json ids = Json::object();
      for (const auto& [id, handles] : d.debug_map) ids[id] = handles;
      dm[std::to_string(instr)] = {{"backend", d.backend}, {"debug_map", std::move(ids)}};
    }
    Json outs = Json::object();
    for (const auto& [instr, n] : m.instruction_id_to_num_outs) outs[std::to_string(instr)] = n;
    maps[method] = {{"debug_handle_map", std::move(dh)}, {"delegate_map", std::move(dm)},
                    {"instruction_id_to_num_outs", std::move(outs)}};
  }
  auto cases_json = [&](const std::map<std::string, std::vector<std::vector<TensorValue>>>& data) {
    Json j = Json::object();
    for (const auto& [method, cases] : data) {
      if (!wanted(method)) continue;
      Json cs = Json::array();
      for (const auto& c : cases) {
        Json values = Json::array();
        for (const auto& t : c) values.push_back(tensor_json(t));
        cs.push_back(std::move(values));
      }
      j[method] = std::move(cs);
    }
    return j;
  };
  Json saved = Json::object();
  for (const auto& [member, tensors] : r.saved_tensors) {
    Json a = Json::array();
    for (const auto& t : tensors) {
      Json tj = tensor_json(t.value);
      tj["name"] = t.name;
      a.push_back(std::move(tj));
    }
    saved[member] = std::move(a);
  }
  return Json{{"file", r.path},
              {"entries", r.entries},
              {"exported_program", r.exported_program ? graph_json(*r.exported_program) : Json(nullptr)},
              {"edge_programs", std::move(edge)},
              {"graph_map", std::move(graph_map)},
              {"maps", std::move(maps)},
              {"reference_outputs", cases_json(r.reference_outputs)},
              {"representative_inputs", cases_json(r.representative_inputs)},
              {"saved_tensors", std::move(saved)},
              {"export_graph_id", r.export_graph_id ? Json(*r.export_graph_id) : Json(nullptr)},
              {"undecoded", r.undecoded}};
}

// ---- the command -------------------------------------------------------------------------

class EtrecordCommand final : public Command {
 public:
  CLI::App* add_to(CLI::App& app) override {
    CLI::App* sub = app.add_subcommand("etrecord", "Show what an ETRecord archive holds: programs, debug maps, reference data");
    sub->add_option("file", file_, "ETRecord archive (.etrecord, etrecord.bin)")->required();
    report_format_.add_to(sub, "see docs/etrecord.md");
    sub->add_flag("--graph", graph_, "List every node of the reference (edge) program of each method");
    sub->add_option("--method", method_, "Restrict methods, maps and --graph to this method");
    sub->add_option("--extract-inputs", extract_dir_,
                    "Write the representative inputs of --method (default forward) as DIR/input_<i>.npy");
    return sub;
  }

  Result<int> run() override {
    json_ = report_format_.json();
    ETSCOPE_ASSIGN_OR_RETURN(EtRecord r, etrecord::EtRecordReader::open(file_));
    if (!method_.empty() && !r.has_method(method_)) {
      std::string known;
      for (const std::string& m : r.methods()) known += (known.empty() ? "" : ", ") + m;
      return Error(ErrorCode::kNotFound,
                   r.path + ": no method '" + method_ + "' (methods: " + (known.empty() ? "none" : known) + ")");
    }
    if (!extract_dir_.empty()) return extract_inputs(r);
    if (json_) {
      std::cout << dump_json(record_json(r, method_)) << "\n";
      return 0;
    }
    print_summary(r, method_);
    if (graph_) {
      bool any = false;
      for (const auto& [method, g] : r.edge_programs) {
        if (!method_.empty() && method != method_) continue;
        print_graph(g, 0);
        any = true;
      }
      if (!any) {
        // No edge program (an unusual archive): list whatever programs there are.
        for (const Graph* g : r.programs()) print_graph(*g, 0);
      }
    }
    return 0;
  }

 private:
  // The inputs `run --inputs-from-etrecord` executes with, for other tools (or `run --input`).
  Result<int> extract_inputs(const EtRecord& r) const {
    ETSCOPE_ASSIGN_OR_RETURN(const std::vector<TensorValue>* inputs, r.representative_inputs_of(method_.empty() ? "forward" : method_));
    std::error_code ec;
    std::filesystem::create_directories(extract_dir_, ec);
    if (ec) return Error(ErrorCode::kIo, extract_dir_ + ": cannot create directory: " + ec.message());
    for (size_t i = 0; i < inputs->size(); ++i) {
      const std::string path = (std::filesystem::path(extract_dir_) / ("input_" + std::to_string(i) + ".npy")).string();
      ETSCOPE_TRY(check_not_an_input(path, {file_}));
      const TensorValue& t = (*inputs)[i];
      ETSCOPE_TRY(write_npy(path, t.dtype, t.shape, t.bytes));
      std::printf("%s  %s\n", path.c_str(), tensor_string(t).c_str());
    }
    return 0;
  }

  std::string file_, extract_dir_;
  std::string method_;
  bool json_ = false;
  ReportFormat report_format_;
  bool graph_ = false;
};

}  // namespace

std::unique_ptr<Command> make_etrecord_command() { return std::make_unique<EtrecordCommand>(); }

}  // namespace etscope::cli
