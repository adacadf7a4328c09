// EtRecord: what an ExecuTorch ETRecord archive holds, read without Python.
//
// An ETRecord is a zip (formats.md §6) written by `executorch.devtools.generate_etrecord` or
// `EdgeProgramManager(..., generate_etrecord=True)`. It carries the exported programs as
// torch.export serde JSON (graphs with node metadata: debug handles, stack traces, module
// stacks), the debug maps that link a `.pte`'s instructions to those nodes, and optionally the
// expected outputs and inputs of a bundled program as `torch.save` archives.
//
// EtRecordReader::open / read parse everything C++ can parse (formats.md §6.7) into plain values;
// the result owns all its data and does not refer to the blob it was read from. Members that are
// present but cannot be decoded (pre-1.3 pickles, custom objects, unknown layouts) are listed in
// EtRecord::undecoded with a reason rather than failing the read. Only a bad zip, a missing
// `ETRECORD_V0` member, or a breached safety limit (entry count, sizes, compression ratio, JSON
// nesting, pickle size) is an error; its message starts with the blob's name.
//
// Linking an ETDump event to nodes (semantics.md §3.6, formats.md §6.6):
//   const MethodMaps* maps = record.method_maps("forward");
//   handles = maps->debug_handle_map[instruction_id]  (or a DelegateEntry's handles_for(id))
//   const Graph* g = record.reference_graph("forward");
//   for each handle h: for (const GraphNode* n : g->nodes_for_handle(h)) ...
//     stack_traces[n->name + "_"] = n->stack_trace; module_hierarchy from n->nn_module_stack;
//     op_types.push_back(n->target);
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "etscope/formats/blob.h"
#include "etscope/core/result.h"
#include "etscope/core/scalar_type.h"

namespace etscope::etrecord {

/// One `nn_module_stack` entry, as the serializer wrote `key,path,type`: `key` is the stack key
/// (e.g. "L__self__conv"), `path` the module path ("conv", "" for the root), `type` the qualified
/// class name ("torch.nn.modules.conv.Conv2d"). Paths may contain commas inside brackets.
struct ModuleFrame {
  std::string key;
  std::string path;
  std::string type;
};

/// Shape and dtype of one tensor value of a graph (`tensor_values` in the JSON).
struct TensorMeta {
  /// ExecuTorch ScalarType translated from the serde dtype code (§6.3.5); nullopt when the code
  /// has no ExecuTorch equivalent (0 unknown, complex32).
  std::optional<ScalarType> dtype;
  int serde_dtype = 0;               ///< The raw export-serde dtype code.
  std::vector<int64_t> sizes;        ///< -1 for a symbolic dimension.
  std::vector<std::string> symbolic; ///< Expression per dimension ("" when concrete).
  bool requires_grad = false;
};

/// One step of `from_node` provenance (§6.3.4).
struct NodeSource {
  std::string name;
  std::string target;
  int64_t graph_id = 0;
  std::string pass_name;
  std::string action;
};

/// A call to a lowered backend module inside a graph (§6.3.6). `original_program` is the
/// pre-lowering program whose nodes carry the handles the delegate's debug map refers to.
struct Graph;
struct LoweredModule {
  std::string name;          ///< Name of the lowered-module argument, e.g. "lowered_module_0".
  std::string backend_id;    ///< e.g. "XnnpackBackend".
  uint64_t processed_bytes = 0;            ///< Size of the decoded delegate blob.
  std::vector<std::string> compile_spec_keys;
  std::shared_ptr<const Graph> original_program;  ///< Null when absent or not decodable.
};

/// One FX node of a serialized graph. Graph inputs become `placeholder` nodes and the graph
/// outputs one `output` node, as torch.export's deserializer builds them; every serialized node
/// is `call_function`.
struct GraphNode {
  std::string name;        ///< FX node name as in the JSON (the Inspector appends "_").
  std::string op;          ///< "placeholder", "call_function" or "output".
  /// The target as ExecuTorch's Inspector names it in `op_types` (the target's `__name__`):
  /// edge and backend ops "aten.convolution.default", ATen ops "convolution.default",
  /// higher-order ops and Python callables their last component ("getitem",
  /// "executorch_call_delegate"). Empty for placeholders and the output node.
  std::string target;
  std::string raw_target;  ///< The target string as serialized, e.g. "torch.ops.aten.mul.Tensor".
  std::vector<int64_t> debug_handles;  ///< Empty when the node has none.
  std::string stack_trace;             ///< "" when absent.
  std::vector<ModuleFrame> nn_module_stack;  ///< Outermost first; empty when absent.
  std::string source_fn_stack;  ///< Raw `name,target;...` string, "" when absent.
  std::string torch_fn;         ///< Raw string, "" when absent.
  /// `from_node` chain down to the greatest ancestor: first the direct parent record, last the
  /// innermost (original) one, following the last record at each level. Empty when absent.
  std::vector<NodeSource> from_node;
  std::map<std::string, std::string> metadata;  ///< Every metadata key as serialized.
  std::vector<std::string> input_names;   ///< Tensor names this node reads, in argument order.
  std::vector<std::string> output_names;  ///< Tensor names this node produces.
  /// Index into Graph::lowered_modules when this node calls a lowered backend module.
  std::optional<size_t> lowered_module;

  /// True for the nodes ExecuTorch's Inspector leaves out of its operator graph
  /// (`memory.alloc` and `getitem` calls).
  bool skipped_by_inspector() const;
};

/// One input or output of the exported program's signature.
struct SignatureEntry {
  std::string kind;  ///< "user_input", "parameter", "buffer", "user_output", "loss_output", ...
  std::string name;  ///< Graph value name ("" for non-tensor arguments).
  std::string target;  ///< Parameter / buffer / gradient FQN when the kind has one.
};

/// One serialized exported program.
struct Graph {
  std::string name;    ///< Zip member it came from, e.g. "edge_dialect_exported_program/forward".
  std::vector<GraphNode> nodes;
  std::map<std::string, TensorMeta> tensor_values;
  std::vector<SignatureEntry> inputs;
  std::vector<SignatureEntry> outputs;
  std::vector<LoweredModule> lowered_modules;
  std::string schema_version;  ///< "5.4", "-1.-1", or "1" (2023 bare integer); "" if absent.
  std::string dialect;         ///< `dialect`, or the first of `verifiers` ("EDGE"); may be "".
  bool layout_2023 = false;    ///< Nodes without names / `{"meta": ...}` wrappers seen.

  /// Nodes whose debug handles contain `handle`: this graph's own nodes, then the nodes of
  /// every lowered module's original program (recursively), in graph order. Pointers stay valid
  /// while the Graph lives and is not modified.
  std::vector<const GraphNode*> nodes_for_handle(int64_t handle) const;
  /// Every debug handle -> its nodes (same order and scope as nodes_for_handle), built in one
  /// pass; use it when joining many events. Pointers stay valid while the Graph lives.
  std::map<int64_t, std::vector<const GraphNode*>> debug_handle_index() const;
  /// The node named `name` in this graph (not in lowered modules), or null.
  const GraphNode* find_node(const std::string& name) const;
  /// Number of `call_function` nodes.
  size_t operator_count() const;
};

/// One delegate-call instruction's entry in `delegate_map`.
struct DelegateEntry {
  std::string backend;  ///< `name`, the backend id, e.g. "XnnpackBackend".
  /// Delegate debug id (as the JSON key string) -> debug handles.
  std::map<std::string, std::vector<int64_t>> debug_map;
  /// debug_map's keys in the order the JSON lists them (the Inspector's substring rule depends
  /// on it); empty when unknown, then map order is used.
  std::vector<std::string> key_order;

  /// The keys in JSON order when known, else in map order.
  std::vector<std::string> keys_in_order() const;

  /// The handles for a delegate event's identifier, as the Inspector finds them: the exact key
  /// first; otherwise the last key (in JSON order) that is a substring of `id` (Inspector quirk,
  /// semantics.md §3.6). Null when nothing matches.
  const std::vector<int64_t>* handles_for(const std::string& id) const;
};

/// The debug maps of one method (§6.5). Missing maps are empty.
struct MethodMaps {
  std::map<int64_t, std::vector<int64_t>> debug_handle_map;  ///< instruction id -> handles
  std::map<int64_t, DelegateEntry> delegate_map;             ///< instruction id -> entry
  std::map<int64_t, int64_t> instruction_id_to_num_outs;     ///< instruction id -> outputs
};

/// A tensor decoded from a `torch.save` archive: contiguous, little-endian, row-major.
struct TensorValue {
  ScalarType dtype = ScalarType::kFloat;
  std::vector<int64_t> shape;
  std::vector<uint8_t> bytes;
  bool requires_grad = false;
  int64_t numel() const;
};

/// A tensor with the path it was found under inside a pickled structure, e.g. "conv.weight"
/// for a state dict or "[0][1]" for nested lists/tuples (dict keys are joined with ".").
struct NamedTensor {
  std::string name;
  TensorValue value;
};

/// What a program member of an ETRecord is, as `etscope etrecord` names it.
enum class GraphRole : uint8_t {
  kExportedProgram,  ///< `exported_program` (ATen dialect).
  kEdgeProgram,      ///< An edge-dialect program of one method.
  kGraphMap,         ///< Another recorded program (`graph_map`).
  kUnknown,          ///< Not a program of this record.
};

/// "exported_program", "edge_program", "graph_map", "unknown".
const char* to_string(GraphRole role);

/// Everything read from one ETRecord.
struct EtRecord {
  std::string path;                    ///< The blob's name (usually the file path).
  std::vector<std::string> entries;    ///< Every zip member name, in archive order.
  std::optional<Graph> exported_program;       ///< `exported_program` (ATen), if present.
  std::map<std::string, Graph> edge_programs;  ///< method -> edge-dialect program.
  /// Other recorded programs: "<module>/<method>" -> graph (e.g. "aten_dialect_output/forward").
  std::map<std::string, Graph> graph_map;
  std::map<std::string, MethodMaps> maps;      ///< method -> debug maps.
  /// method -> per test case -> outputs. Non-tensor outputs are skipped (listed in undecoded).
  std::map<std::string, std::vector<std::vector<TensorValue>>> reference_outputs;
  /// method ("forward") -> per test case -> inputs. ExecuTorch records one case.
  std::map<std::string, std::vector<std::vector<TensorValue>>> representative_inputs;
  /// Tensors of every other decoded torch.save member (`*_state_dict`, `*_constants`,
  /// `*_example_inputs`): member name -> tensors in pickle order.
  std::map<std::string, std::vector<NamedTensor>> saved_tensors;
  std::optional<int64_t> export_graph_id;
  /// "<member>: <reason>" for each member present but not (fully) decoded.
  std::vector<std::string> undecoded;

  /// The graph ExecuTorch's Inspector uses for `method` by default: the edge program of that
  /// method, else the only edge program when there is exactly one; null when there is none.
  const Graph* reference_graph(const std::string& method = "forward") const;
  /// Any program by its member name ("exported_program", "edge_dialect_exported_program/forward",
  /// "aten_dialect_output/forward"), or null.
  const Graph* find_graph(const std::string& member) const;
  /// The maps of `method`, or null.
  const MethodMaps* method_maps(const std::string& method = "forward") const;
  /// The representative inputs of `method`: case `index`; the first (the default) is the inputs
  /// the AOT outputs were made from, as `run --inputs-from-etrecord`, `etrecord --extract-inputs`
  /// and the numeric gap's input check use them. kNotFound when that case is not recorded.
  Result<const std::vector<TensorValue>*> representative_inputs_of(const std::string& method = "forward", size_t index = 0) const;
  /// How many cases of representative inputs `method` has (0 when none).
  size_t representative_cases(const std::string& method = "forward") const;
  /// The inputs `method`'s AOT intermediate outputs are computed from: its representative inputs
  /// (case 0); else, as ExecuTorch's LLM exporter records none, the example inputs the method
  /// was exported with (its edge program's `_example_inputs`, else the exported program's), in
  /// their recorded order (positional, then keyword). samples/export/write_aot_intermediates.py
  /// makes the same choice. `source` says which it is, for messages.
  struct AotInputs {
    std::vector<TensorValue> tensors;
    std::string source;
  };
  Result<AotInputs> aot_inputs_of(const std::string& method = "forward") const;

  /// Every program: the exported program, then the edge programs and the graph_map programs,
  /// each in name order. Pointers stay valid while the record lives and is not modified.
  std::vector<const Graph*> programs() const;
  /// What `graph` is in this record (by identity, not by name).
  GraphRole role_of(const Graph& graph) const;
  /// The methods that have an edge program, in name order.
  std::vector<std::string> methods() const;
  /// True when `method` has an edge program or debug maps.
  bool has_method(const std::string& method) const;
};

/// Bytes of the tensors' data together.
uint64_t total_bytes(const std::vector<NamedTensor>& tensors);

/// One frame of a Python traceback as torch.export records it in a node's `stack_trace`:
/// `  File "/path/model.py", line 13, in forward` followed by the source line.
struct TracebackFrame {
  std::string file;  ///< The path as written.
  std::string line;  ///< The line number's digits; "" when the frame has none.
  std::string code;  ///< The source line, trimmed; "" when absent.

  /// `file` without its directories.
  std::string file_name() const;
};

/// Every frame of `trace`, outermost first (as Python prints them). Text that is not a
/// traceback gives no frames.
std::vector<TracebackFrame> parse_traceback(const std::string& trace);

/// The innermost frame of `trace` outside torch itself (`/site-packages/torch/`, `/torch/nn/`),
/// else the innermost frame; nullopt when `trace` has no frames.
std::optional<TracebackFrame> user_frame(const std::string& trace);



/// Translates an export-serde dtype code (§6.3.5) to ExecuTorch's ScalarType.
std::optional<ScalarType> scalar_type_from_serde(int serde_dtype);

/// The Inspector's name for a serialized target (see GraphNode::target).
std::string inspector_op_name(const std::string& raw_target);

/// Parses an `nn_module_stack` metadata string; entries that do not split into three fields are
/// skipped.
std::vector<ModuleFrame> parse_nn_module_stack(const std::string& text);

}  // namespace etscope::etrecord
