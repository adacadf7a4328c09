// etscope::etrecord: real ETRecords from ExecuTorch 1.5.1 and 2023 checked against what
// ExecuTorch's Python Inspector derived from them, hand-built archives for the torch.save and
// pickle paths, and hostile archives (truncated, flipped, oversized, deeply nested) that must
// fail with one line naming the file.
//
// Sections: archive builders; real files; Inspector agreement; torch.save; hostile input; CLI.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <cstring>
#include <set>

#include "etscope/etrecord/etrecord_reader.h"
#include "etscope/formats/npy.h"
#include "testing/test_json.h"
#include "testing/test_util.h"

using namespace etscope;
using namespace etscope::etrecord;
using etscope::testing::blob_of;
using etscope::testing::fixture;
using etscope::testing::real_artifact;

namespace {

// ---- archive builders ----------------------------------------------------------------------

uint32_t crc32(const std::vector<uint8_t>& data) {
  uint32_t crc = 0xFFFFFFFFu;
  for (uint8_t b : data) {
    crc ^= b;
    for (int k = 0; k < 8; ++k) crc = (crc >> 1) ^ (0xEDB88320u & (0u - (crc & 1u)));
  }
  return ~crc;
}

struct Member {
  Member(std::string n, std::vector<uint8_t> d, uint16_t m = 0, std::optional<uint32_t> declared = std::nullopt)
      : name(std::move(n)), data(std::move(d)), method(m), declared_size(declared) {}
  std::string name;
  std::vector<uint8_t> data;
  uint16_t method;                        // 0 stored, 8 deflate (data is then raw deflate)
  std::optional<uint32_t> declared_size;  // uncompressed size to claim; default data.size()
};

void put16(std::vector<uint8_t>& out, uint32_t v) {
  out.push_back(static_cast<uint8_t>(v));
  out.push_back(static_cast<uint8_t>(v >> 8));
}
void put32(std::vector<uint8_t>& out, uint32_t v) {
  put16(out, v & 0xFFFF);
  put16(out, v >> 16);
}

// A plain zip (no zip64, no data descriptors), enough for every test archive.
std::vector<uint8_t> make_zip(const std::vector<Member>& members) {
  std::vector<uint8_t> out, central;
  for (const Member& m : members) {
    const uint32_t offset = static_cast<uint32_t>(out.size());
    const uint32_t crc = crc32(m.data);
    const uint32_t usize = m.declared_size.value_or(static_cast<uint32_t>(m.data.size()));
    auto header = [&](std::vector<uint8_t>& h, bool is_central) {
      put32(h, is_central ? 0x02014b50 : 0x04034b50);
      if (is_central) put16(h, 20);
      put16(h, 20);
      put16(h, 0);
      put16(h, m.method);
      put16(h, 0);
      put16(h, 0x21);
      put32(h, crc);
      put32(h, static_cast<uint32_t>(m.data.size()));
      put32(h, usize);
      put16(h, static_cast<uint32_t>(m.name.size()));
      put16(h, 0);
      if (is_central) {
        put16(h, 0);
        put16(h, 0);
        put16(h, 0);
        put32(h, 0);
        put32(h, offset);
      }
      h.insert(h.end(), m.name.begin(), m.name.end());
    };
    header(out, false);
    out.insert(out.end(), m.data.begin(), m.data.end());
    header(central, true);
  }
  const uint32_t cd_offset = static_cast<uint32_t>(out.size());
  out.insert(out.end(), central.begin(), central.end());
  put32(out, 0x06054b50);
  put16(out, 0);
  put16(out, 0);
  put16(out, static_cast<uint32_t>(members.size()));
  put16(out, static_cast<uint32_t>(members.size()));
  put32(out, static_cast<uint32_t>(central.size()));
  put32(out, cd_offset);
  put16(out, 0);
  return out;
}

std::vector<uint8_t> bytes_of(const std::string& s) { return {s.begin(), s.end()}; }

// Writes pickle opcodes the way torch.save (protocol 2) does.
struct PickleBuilder {
  PickleBuilder() {
    b.push_back(0x80);  // PROTO 2
    b.push_back(0x02);
  }
  std::vector<uint8_t> b;
  PickleBuilder& op(uint8_t o) {
    b.push_back(o);
    return *this;
  }
  PickleBuilder& str(const std::string& s) {
    b.push_back('X');
    put32(b, static_cast<uint32_t>(s.size()));
    b.insert(b.end(), s.begin(), s.end());
    return *this;
  }
  PickleBuilder& global(const std::string& module, const std::string& name) {
    b.push_back('c');
    b.insert(b.end(), module.begin(), module.end());
    b.push_back('\n');
    b.insert(b.end(), name.begin(), name.end());
    b.push_back('\n');
    return *this;
  }
  PickleBuilder& integer(uint32_t v) {
    if (v < 256) {
      b.push_back('K');
      b.push_back(static_cast<uint8_t>(v));
    } else {
      b.push_back('J');
      put32(b, v);
    }
    return *this;
  }
  PickleBuilder& ints(const std::vector<uint32_t>& v) {
    op('(');
    for (uint32_t x : v) integer(x);
    return op('t');
  }
  // _rebuild_tensor_v2(('storage', torch.<cls>, key, 'cpu', numel), offset, size, stride, False, OrderedDict())
  PickleBuilder& tensor(const std::string& storage_class, const std::string& key, uint32_t numel, uint32_t offset,
                        const std::vector<uint32_t>& size, const std::vector<uint32_t>& stride) {
    global("torch._utils", "_rebuild_tensor_v2").op('(');
    op('(').str("storage").global("torch", storage_class).str(key).str("cpu").integer(numel).op('t').op('Q');
    integer(offset).ints(size).ints(stride).op(0x89).global("collections", "OrderedDict").op(')').op('R');
    return op('t').op('R');
  }
  std::vector<uint8_t> done() {
    b.push_back('.');
    return b;
  }
};

std::vector<uint8_t> floats(const std::vector<float>& v) {
  std::vector<uint8_t> out(v.size() * 4);
  std::memcpy(out.data(), v.data(), out.size());
  return out;
}

std::vector<uint8_t> torch_save(const std::vector<uint8_t>& pickle, const std::vector<Member>& storages) {
  std::vector<Member> members{{"archive/data.pkl", pickle}, {"archive/byteorder", bytes_of("little")}};
  for (const Member& s : storages) members.push_back({"archive/data/" + s.name, s.data});
  members.push_back({"archive/version", bytes_of("3\n")});
  return make_zip(members);
}

std::vector<uint8_t> etrecord_with(std::vector<Member> members) {
  members.insert(members.begin(), Member{"ETRECORD_V0", {}});
  return make_zip(members);
}

Result<EtRecord> read_bytes(const std::vector<uint8_t>& bytes, const ReadLimits& limits = {}) {
  return EtRecordReader::read(blob_of(bytes, "mutant.etrecord"), limits);
}

void check_clean_error(const Error& e, const std::string& name = "mutant.etrecord") {
  INFO(e.message());
  CHECK(e.message().rfind(name + ": ", 0) == 0);
  CHECK(e.message().find('\n') == std::string::npos);
}

std::vector<uint8_t> file_bytes(const std::string& path) {
  auto b = etscope::testing::load(path);
  return {b->data(), b->data() + b->size()};
}

const std::string kSimpleConv = "simple_conv/simple_conv.etrecord";
const std::string kXnnpack = "simple_conv_xnnpack/simple_conv_xnnpack.etrecord";

EtRecord open_fixture(const std::string& path) {
  auto r = EtRecordReader::open(path);
  if (!r.ok()) FAIL(r.error().message());
  return std::move(*r);
}

}  // namespace

// ---- real files ------------------------------------------------------------------------------

TEST_CASE("every real ETRecord reads without undecoded members", "[etrecord]") {
  for (const std::string& path :
       {fixture(kSimpleConv), fixture(kXnnpack), fixture("xor/xor_train.etrecord"), fixture("xor/xor_train_split.etrecord"),
        real_artifact("tutorial_2023.etrecord")}) {
    INFO(path);
    EtRecord r = open_fixture(path);
    CHECK(r.path == path);
    CHECK(!r.edge_programs.empty());
    REQUIRE(r.reference_graph("forward") != nullptr);
    CHECK(r.reference_graph("forward")->operator_count() > 0);
    CHECK(r.method_maps("forward") != nullptr);
    CHECK(r.undecoded.empty());
  }
}

TEST_CASE("simple_conv: programs, nodes, targets, handles, module stacks and stack traces", "[etrecord]") {
  EtRecord r = open_fixture(fixture(kSimpleConv));
  CHECK(r.entries.size() == 15);
  CHECK(r.entries.front() == "ETRECORD_V0");
  REQUIRE(r.exported_program);
  CHECK(r.exported_program->name == "exported_program");
  CHECK(r.edge_programs.size() == 1);
  CHECK(r.graph_map.empty());
  CHECK(r.export_graph_id == 140029120697232);

  const Graph& g = r.edge_programs.at("forward");
  CHECK(g.name == "edge_dialect_exported_program/forward");
  CHECK(g.schema_version == "5.4");
  CHECK(g.dialect == "EDGE");
  CHECK_FALSE(g.layout_2023);
  // Three placeholders, two operators, the output.
  REQUIRE(g.nodes.size() == 6);
  CHECK(g.nodes[0].op == "placeholder");
  CHECK(g.nodes[0].name == "p_conv_weight");
  CHECK(g.nodes[2].name == "x");
  CHECK(g.nodes[5].op == "output");
  CHECK(g.nodes[5].input_names == std::vector<std::string>{"aten_relu_default"});

  const GraphNode& conv = g.nodes[3];
  CHECK(conv.name == "aten_convolution_default");
  CHECK(conv.op == "call_function");
  CHECK(conv.target == "aten.convolution.default");
  CHECK(conv.raw_target == "executorch.exir.dialects.edge.ops.aten.convolution.default");
  CHECK(conv.debug_handles == std::vector<int64_t>{1});
  CHECK(conv.input_names == std::vector<std::string>{"x", "p_conv_weight", "p_conv_bias"});
  CHECK(conv.output_names == std::vector<std::string>{"aten_convolution_default"});
  REQUIRE(conv.nn_module_stack.size() == 2);
  CHECK(conv.nn_module_stack[0].key == "L__self__");
  CHECK(conv.nn_module_stack[0].path == "");
  CHECK(conv.nn_module_stack[0].type == "models.simple_conv.SimpleConv");
  CHECK(conv.nn_module_stack[1].key == "L__self__conv");
  CHECK(conv.nn_module_stack[1].path == "conv");
  CHECK(conv.nn_module_stack[1].type == "torch.nn.modules.conv.Conv2d");
  CHECK_THAT(conv.stack_trace, Catch::StartsWith("File \"/work/main/samples/models/simple_conv.py\", line 13, in forward"));
  CHECK(conv.torch_fn == "conv2d_1;builtin_function_or_method.conv2d");
  // from_node leads to the torch.export graph recorded as export_graph_id.
  REQUIRE(conv.from_node.size() == 4);
  CHECK(conv.from_node.front().name == "conv2d");
  CHECK(conv.from_node.back().graph_id == *r.export_graph_id);
  CHECK(conv.from_node.back().target == "aten.conv2d.default");

  const TensorMeta& out = g.tensor_values.at("aten_convolution_default");
  CHECK(out.dtype == ScalarType::kFloat);
  CHECK(out.sizes == std::vector<int64_t>{1, 16, 32, 32});
  REQUIRE(g.inputs.size() == 3);
  CHECK(g.inputs[0].kind == "parameter");
  CHECK(g.inputs[0].name == "p_conv_weight");
  CHECK(g.inputs[0].target == "conv.weight");
  CHECK(g.inputs[2].kind == "user_input");
  CHECK(g.inputs[2].name == "x");
  REQUIRE(g.outputs.size() == 1);
  CHECK(g.outputs[0].kind == "user_output");

  // The ATen program names targets the way OpOverload.__name__ does.
  const GraphNode* aten_conv = r.exported_program->find_node("conv2d");
  REQUIRE(aten_conv != nullptr);
  CHECK(aten_conv->target == "conv2d.default");
  CHECK(aten_conv->raw_target == "torch.ops.aten.conv2d.default");

  auto by_handle = g.nodes_for_handle(2);
  REQUIRE(by_handle.size() == 1);
  CHECK(by_handle[0]->name == "aten_relu_default");
  CHECK(g.nodes_for_handle(99).empty());
  auto index = g.debug_handle_index();
  REQUIRE(index.size() == 2);
  CHECK(index.at(1) == g.nodes_for_handle(1));
  CHECK(index.at(2) == by_handle);
}

TEST_CASE("debug maps: portable kernels and an XNNPACK delegate", "[etrecord]") {
  EtRecord plain = open_fixture(fixture(kSimpleConv));
  const MethodMaps* m = plain.method_maps("forward");
  REQUIRE(m != nullptr);
  CHECK(m->debug_handle_map == std::map<int64_t, std::vector<int64_t>>{{0, {1}}, {1, {2}}});
  CHECK(m->delegate_map.empty());
  CHECK(m->instruction_id_to_num_outs.empty());

  EtRecord xnn = open_fixture(fixture(kXnnpack));
  const MethodMaps* x = xnn.method_maps("forward");
  REQUIRE(x != nullptr);
  CHECK(x->debug_handle_map == std::map<int64_t, std::vector<int64_t>>{{0, {1, 2}}});
  REQUIRE(x->delegate_map.count(0) == 1);
  CHECK(x->delegate_map.at(0).backend == "XnnpackBackend");
  CHECK(x->delegate_map.at(0).debug_map.empty());
  CHECK(x->instruction_id_to_num_outs == std::map<int64_t, int64_t>{{0, 1}});
}

TEST_CASE("training ETRecord: 61 mapped instructions over a joint graph", "[etrecord]") {
  EtRecord r = open_fixture(fixture("xor/xor_train.etrecord"));
  const Graph* g = r.reference_graph();
  REQUIRE(g != nullptr);
  CHECK(g->operator_count() == 61);
  CHECK(r.method_maps()->debug_handle_map.size() == 61);
  // Two nodes descend from the same original node and share handle 52.
  auto shared = g->nodes_for_handle(52);
  REQUIRE(shared.size() == 2);
  CHECK(shared[0]->target == "dim_order_ops._to_dim_order_copy.default");
  CHECK(shared[1]->target == "aten.sub.Tensor");
  // An ATen op left in the edge graph prints without its namespace, as the Inspector shows it.
  const GraphNode* scalar = g->find_node("scalar_tensor");
  REQUIRE(scalar != nullptr);
  CHECK(scalar->target == "scalar_tensor.default");
  REQUIRE(g->outputs.size() == 6);
  CHECK(g->outputs[0].kind == "loss_output");
  CHECK(g->outputs[2].kind == "gradient_to_parameter");
  CHECK(g->outputs[2].target == "net.linear.weight");
  // No reference outputs (no bundled program), one representative test case of two inputs.
  CHECK(r.reference_outputs.empty());
  REQUIRE(r.representative_inputs.at("forward").size() == 1);
  const auto& inputs = r.representative_inputs.at("forward")[0];
  REQUIRE(inputs.size() == 2);
  CHECK(inputs[0].dtype == ScalarType::kFloat);
  CHECK(inputs[1].dtype == ScalarType::kLong);
  CHECK(inputs[1].shape == std::vector<int64_t>{1});
}

TEST_CASE("the 2023 tutorial ETRecord reads with empty maps", "[etrecord]") {
  EtRecord r = open_fixture(real_artifact("tutorial_2023.etrecord"));
  CHECK(r.entries.size() == 7);
  CHECK_FALSE(r.exported_program);
  CHECK_FALSE(r.export_graph_id);
  CHECK(r.reference_outputs.empty());
  REQUIRE(r.edge_programs.count("forward") == 1);
  const Graph& g = r.edge_programs.at("forward");
  CHECK(g.name == "edge_dialect_exported_program");
  CHECK(g.layout_2023);
  CHECK(g.schema_version == "1");
  REQUIRE(g.operator_count() == 1);
  const GraphNode* mul = g.find_node("aten_mul_tensor");
  REQUIRE(mul != nullptr);
  CHECK(mul->target == "aten.mul.Tensor");
  CHECK(mul->debug_handles == std::vector<int64_t>{2});
  CHECK(mul->source_fn_stack == "mul,_operator.mul");
  CHECK_THAT(mul->stack_trace, Catch::Contains("model.py\", line 18, in forward"));
  CHECK(mul->input_names == std::vector<std::string>{"arg0_1", "arg1_1"});
  CHECK(g.tensor_values.at("arg0_1").sizes == std::vector<int64_t>{3, 2});
  CHECK(g.tensor_values.at("arg0_1").dtype == ScalarType::kFloat);

  REQUIRE(r.graph_map.count("aten_dialect_output/forward") == 1);
  const Graph& aten = r.graph_map.at("aten_dialect_output/forward");
  REQUIRE(aten.operator_count() == 1);
  CHECK(aten.nodes[2].target == "mul.Tensor");
  CHECK(aten.nodes[2].debug_handles.empty());
  CHECK(r.find_graph("aten_dialect_output/forward") == &aten);

  const MethodMaps* m = r.method_maps("forward");
  REQUIRE(m != nullptr);
  CHECK(m->debug_handle_map.empty());
  CHECK(m->delegate_map.empty());
  CHECK(m->instruction_id_to_num_outs.empty());
  // Both state dicts are empty torch.save archives.
  CHECK(r.saved_tensors.at("edge_dialect_exported_program_state_dict").empty());
}

// ---- Inspector agreement -----------------------------------------------------------------------

namespace {

// Joins every event of an Inspector fixture with the ETRecord the way semantics.md §3.6 says,
// and compares op_types, debug handles, stack_traces and module_hierarchy.
void check_against_inspector(const std::string& etrecord_path, const std::string& inspector_path) {
  EtRecord r = open_fixture(etrecord_path);
  nlohmann::json j = etscope::testing::load_json(inspector_path);
  const Graph* g = r.reference_graph("forward");
  const MethodMaps* maps = r.method_maps("forward");
  REQUIRE(g != nullptr);
  REQUIRE(maps != nullptr);
  const auto& rows = j["to_dataframe"]["rows"];
  size_t row = 0, compared = 0;
  for (const auto& block : j["event_blocks"]) {
    for (const auto& e : block["events"]) {
      const auto& df = rows.at(row++);
      REQUIRE(df["event_name"] == e["name"]);
      const std::string name = e["name"];
      if (name == "Method::init" || name == "Program::load_method" || name == "Method::execute") continue;
      INFO(name);
      const int64_t instr = e["instruction_id"];
      std::vector<int64_t> handles;
      if (e["delegate_debug_identifier"].is_null()) {
        if (auto it = maps->debug_handle_map.find(instr); it != maps->debug_handle_map.end()) handles = it->second;
      } else if (auto d = maps->delegate_map.find(instr); d != maps->delegate_map.end()) {
        const auto& id = e["delegate_debug_identifier"];
        const std::vector<int64_t>* h = d->second.handles_for(id.is_string() ? id.get<std::string>() : id.dump());
        if (h != nullptr) handles = *h;
        CHECK(e["delegate_backend_name"] == d->second.backend);
      }
      std::vector<int64_t> expected_handles;
      if (e["debug_handles"].is_number()) expected_handles = {e["debug_handles"].get<int64_t>()};
      if (e["debug_handles"].is_array()) expected_handles = e["debug_handles"].get<std::vector<int64_t>>();
      CHECK(handles == expected_handles);

      std::vector<std::string> op_types;
      nlohmann::json stack_traces = nlohmann::json::object(), hierarchy = nlohmann::json::object();
      for (int64_t h : handles) {
        for (const GraphNode* n : g->nodes_for_handle(h)) {
          if (n->skipped_by_inspector()) continue;
          const std::string key = n->name + "_";
          if (!stack_traces.contains(key)) {
            stack_traces[key] = n->stack_trace;
            nlohmann::json frames = nlohmann::json::object();
            for (const ModuleFrame& f : n->nn_module_stack) frames[f.key] = {f.path, f.type};
            hierarchy[key] = frames;
          }
          op_types.push_back(n->target);
        }
      }
      CHECK(op_types == e["op_types"].get<std::vector<std::string>>());
      CHECK(stack_traces == df["stack_traces"]);
      CHECK(hierarchy == df["module_hierarchy"]);
      ++compared;
    }
  }
  CHECK(compared > 0);
}

}  // namespace

TEST_CASE("op types, stack traces and module hierarchy agree with ExecuTorch's Inspector", "[etrecord][inspector]") {
  SECTION("simple_conv, portable kernels") {
    check_against_inspector(fixture(kSimpleConv), fixture("simple_conv/simple_conv.inspector.json"));
  }
  SECTION("simple_conv, XNNPACK delegate") {
    check_against_inspector(fixture(kXnnpack), fixture("simple_conv_xnnpack/simple_conv_xnnpack.inspector.json"));
  }
  SECTION("cifar10, 14 kernels") {
    check_against_inspector(fixture("cifar10/cifar10.etrecord"), fixture("cifar10/cifar10.inspector.json"));
  }
}

// ---- torch.save ---------------------------------------------------------------------------------

TEST_CASE("reference outputs and representative inputs decode to the bundled test cases", "[etrecord][torch_save]") {
  EtRecord r = open_fixture(fixture(kSimpleConv));
  REQUIRE(r.reference_outputs.count("forward") == 1);
  const auto& cases = r.reference_outputs.at("forward");
  REQUIRE(cases.size() == 2);
  for (size_t c = 0; c < 2; ++c) {
    INFO("test case " << c);
    auto expected = read_npy(fixture("simple_conv/simple_conv.testcase" + std::to_string(c) + ".expected0.npy"));
    REQUIRE(expected.ok());
    REQUIRE(cases[c].size() == 1);
    CHECK(cases[c][0].dtype == ScalarType::kFloat);
    CHECK(cases[c][0].shape == std::vector<int64_t>{1, 16, 32, 32});
    CHECK(cases[c][0].shape == expected->shape);
    CHECK(cases[c][0].bytes == expected->data);
  }
  const auto& inputs = r.representative_inputs.at("forward");
  REQUIRE(inputs.size() == 1);
  auto input0 = read_npy(fixture("simple_conv/simple_conv.testcase0.input0.npy"));
  REQUIRE(input0.ok());
  REQUIRE(inputs[0].size() == 1);
  CHECK(inputs[0][0].shape == std::vector<int64_t>{1, 3, 32, 32});
  CHECK(inputs[0][0].bytes == input0->data);

  const auto& state = r.saved_tensors.at("exported_program_state_dict");
  REQUIRE(state.size() == 2);
  CHECK(state[0].name == "conv.weight");
  CHECK(state[0].value.shape == std::vector<int64_t>{16, 3, 3, 3});
  CHECK(state[0].value.requires_grad);
  CHECK(state[0].value.bytes.size() == 16 * 27 * 4);
  CHECK(state[1].name == "conv.bias");
  CHECK(r.saved_tensors.at("exported_program_constants").empty());
  REQUIRE(r.saved_tensors.at("exported_program_example_inputs").size() == 1);
  CHECK(r.saved_tensors.at("exported_program_example_inputs")[0].name == "[0][0]");
}

// The AOT inputs: the representative inputs when recorded (simple_conv's first test case), else,
// as ExecuTorch's LLM exporter writes its ETRecord, the example inputs the edge program was
// exported with, in their recorded order (tokens, then input_pos): those the fixture's AOT
// intermediates and ExecuTorch's run were made from.
TEST_CASE("the AOT inputs are the representative inputs, else the example inputs", "[etrecord][torch_save]") {
  EtRecord conv = open_fixture(fixture(kSimpleConv));
  auto recorded = conv.aot_inputs_of("forward");
  REQUIRE(recorded.ok());
  CHECK(recorded->source == "the representative inputs");
  REQUIRE(recorded->tensors.size() == 1);
  CHECK(recorded->tensors[0].bytes == conv.representative_inputs.at("forward")[0][0].bytes);

  for (const char* n : {"xnn_8da4w_emb4", "portable_fp32_sdpa"}) {
    INFO(n);
    const std::string base = std::string("llm_etrecord/") + n + "/" + n;
    EtRecord llm = open_fixture(fixture(base + ".etrecord"));
    CHECK(llm.representative_cases("forward") == 0);
    auto aot = llm.aot_inputs_of("forward");
    REQUIRE(aot.ok());
    CHECK(aot->source.find("example inputs") != std::string::npos);
    REQUIRE(aot->tensors.size() == 2);
    for (size_t i = 0; i < 2; ++i) {
      auto npy = read_npy(fixture(base + ".input" + std::to_string(i) + ".npy"));
      REQUIRE(npy.ok());
      CHECK(aot->tensors[i].dtype == ScalarType::kLong);
      CHECK(aot->tensors[i].shape == npy->shape);
      CHECK(aot->tensors[i].bytes == npy->data);
    }
    CHECK_FALSE(llm.aot_inputs_of("decode").ok());  // no such method: no example inputs stand for it
  }
}

TEST_CASE("torch.save tensors with offsets and transposed strides come out contiguous", "[etrecord][torch_save]") {
  // Storage 0..7; tensor A = storage[1:7] viewed 2x3; tensor B = its transpose (3x2, strides 1,3).
  PickleBuilder p;
  p.op(']').op('(');
  p.tensor("FloatStorage", "0", 8, 1, {2, 3}, {3, 1});
  p.tensor("FloatStorage", "0", 8, 1, {3, 2}, {1, 3});
  p.op('e');
  auto saved = torch_save(p.done(), {{"0", floats({0, 1, 2, 3, 4, 5, 6, 7})}});
  auto r = read_bytes(etrecord_with({{"representative_inputs", saved}}));
  REQUIRE(r.ok());
  CHECK(r->undecoded.empty());
  const auto& inputs = r->representative_inputs.at("forward").at(0);
  REQUIRE(inputs.size() == 2);
  CHECK(inputs[0].bytes == floats({1, 2, 3, 4, 5, 6}));
  CHECK(inputs[1].shape == std::vector<int64_t>{3, 2});
  CHECK(inputs[1].bytes == floats({1, 4, 2, 5, 3, 6}));
}

TEST_CASE("a lowered backend module's original program is reachable by debug handle", "[etrecord]") {
  using nlohmann::json;
  auto program = [](json nodes, json inputs, json outputs) {
    return json{{"graph_module",
                 {{"graph", {{"inputs", inputs}, {"outputs", outputs}, {"nodes", nodes}, {"tensor_values", json::object()}}},
                  {"signature", {{"input_specs", json::array()}, {"output_specs", json::array()}}}}},
                {"schema_version", {{"major", 5}, {"minor", 4}}},
                {"dialect", "EDGE"}};
  };
  json tensor_x = {{"as_tensor", {{"name", "x"}}}};
  json inner = program(json::array({{{"name", "aten_relu_default"},
                                     {"target", "executorch.exir.dialects.edge.ops.aten.relu.default"},
                                     {"inputs", json::array({{{"name", "self"}, {"arg", tensor_x}}})},
                                     {"outputs", json::array({{{"as_tensor", {{"name", "aten_relu_default"}}}}})},
                                     {"metadata", {{"debug_handle", "1"}, {"nn_module_stack", "L__self__,,m.Net;L__self___relu,relu,torch.nn.ReLU"}}}}}),
                       json::array({tensor_x}), json::array({{{"as_tensor", {{"name", "aten_relu_default"}}}}}));
  json lowered = {{"backend_id", "XnnpackBackend"},
                  {"processed_bytes", "AAECAwQ="},
                  {"compile_specs", json::array({{{"key", "level"}, {"value", ""}}})},
                  {"original_module", inner}};
  json outer = program(
      json::array({{{"name", "executorch_call_delegate"},
                    {"target", "torch.ops.higher_order.executorch_call_delegate"},
                    {"inputs", json::array({{{"name", "lowered_module_0"}, {"arg", {{"as_string", lowered.dump()}}}},
                                            {{"name", "delegate_arg_0"}, {"arg", tensor_x}}})},
                    {"outputs", json::array({{{"as_tensors", json::array({{{"name", "getitem"}}})}}})},
                    {"metadata", {{"debug_handle", "1"}}}},
                   {{"name", "getitem"},
                    {"target", "_operator.getitem"},
                    {"inputs", json::array()},
                    {"outputs", json::array({{{"as_tensor", {{"name", "getitem"}}}}})},
                    {"metadata", json::object()}}}),
      json::array({tensor_x}), json::array({{{"as_tensor", {{"name", "getitem"}}}}}));
  auto r = read_bytes(etrecord_with({{"edge_after_transform/forward", bytes_of(outer.dump())}}));
  REQUIRE(r.ok());
  CHECK(r->undecoded.empty());
  const Graph& g = r->graph_map.at("edge_after_transform/forward");
  REQUIRE(g.lowered_modules.size() == 1);
  const LoweredModule& lm = g.lowered_modules[0];
  CHECK(lm.name == "lowered_module_0");
  CHECK(lm.backend_id == "XnnpackBackend");
  CHECK(lm.processed_bytes == 5);
  CHECK(lm.compile_spec_keys == std::vector<std::string>{"level"});
  REQUIRE(lm.original_program != nullptr);
  const GraphNode* call = g.find_node("executorch_call_delegate");
  REQUIRE(call != nullptr);
  CHECK(call->target == "executorch_call_delegate");
  CHECK(call->lowered_module == size_t{0});
  CHECK(call->input_names == std::vector<std::string>{"x"});
  CHECK(g.find_node("getitem")->skipped_by_inspector());
  // Handle 1 names the delegate call and the relu inside the lowered module.
  auto nodes = g.nodes_for_handle(1);
  REQUIRE(nodes.size() == 2);
  CHECK(nodes[0] == call);
  CHECK(nodes[1]->target == "aten.relu.default");
  CHECK(nodes[1]->nn_module_stack.back().path == "relu");
  CHECK(g.debug_handle_index().at(1) == nodes);
}

TEST_CASE("members that cannot be decoded are listed, not fatal", "[etrecord]") {
  PickleBuilder legacy;  // a bare pickle, as ExecuTorch < 1.3 wrote reference_outputs
  legacy.op('}');
  auto r = read_bytes(etrecord_with({
      {"reference_outputs", legacy.done()},
      {"debug_handle_map", bytes_of("{\"forward\": {\"0\": 1, \"x\": 2}}")},
      {"delegate_map", bytes_of("{not json")},
      {"edge_dialect_exported_program/forward", bytes_of("{\"something\": 1}")},
      {"export_graph_id", bytes_of("\"abc\"")},
  }));
  REQUIRE(r.ok());
  CHECK(r->method_maps("forward")->debug_handle_map.size() == 1);
  CHECK(r->edge_programs.empty());
  std::set<std::string> members;
  for (const std::string& u : r->undecoded) {
    INFO(u);
    CHECK(u.find('\n') == std::string::npos);
    members.insert(u.substr(0, u.find(':')));
  }
  CHECK(members == std::set<std::string>{"reference_outputs", "debug_handle_map", "delegate_map",
                                         "edge_dialect_exported_program/forward", "export_graph_id"});
}

TEST_CASE("helpers: target names, module stacks with commas, the delegate id quirk", "[etrecord]") {
  CHECK(inspector_op_name("executorch.exir.dialects.edge.ops.aten.convolution.default") == "aten.convolution.default");
  CHECK(inspector_op_name("executorch.exir.dialects.backend.ops.xnn.conv.default") == "xnn.conv.default");
  CHECK(inspector_op_name("torch.ops.aten.mul.Tensor") == "mul.Tensor");
  CHECK(inspector_op_name("torch.ops.higher_order.executorch_call_delegate") == "executorch_call_delegate");
  CHECK(inspector_op_name("_operator.getitem") == "getitem");
  CHECK(inspector_op_name("memory.alloc") == "alloc");

  auto frames = parse_nn_module_stack(
      "L__self__,,m.Net;L__self___layers_slice_None__2__None__,layers.slice(None, 2, None),torch.nn.Sequential;"
      "L__self___d,d[\"a,b\"],torch.nn.ModuleDict");
  REQUIRE(frames.size() == 3);
  CHECK(frames[1].path == "layers.slice(None, 2, None)");
  CHECK(frames[1].type == "torch.nn.Sequential");
  CHECK(frames[2].path == "d[\"a,b\"]");
  CHECK(parse_nn_module_stack("").empty());
  CHECK(parse_nn_module_stack("only,two").empty());

  DelegateEntry d;
  d.debug_map = {{"1", {5}}, {"12", {7}}, {"2", {9}}};
  CHECK(*d.handles_for("12") == std::vector<int64_t>{7});
  CHECK(*d.handles_for("123") == std::vector<int64_t>{9});  // "1", "12" and "2" match; the last wins
  CHECK(d.handles_for("9") == nullptr);
  // The substring rule follows the JSON's key order, not the map's sorted order.
  d.key_order = {"2", "12", "1"};
  CHECK(*d.handles_for("123") == std::vector<int64_t>{5});
  CHECK(d.keys_in_order() == std::vector<std::string>{"2", "12", "1"});

  CHECK(scalar_type_from_serde(7) == ScalarType::kFloat);
  CHECK(scalar_type_from_serde(5) == ScalarType::kLong);
  CHECK(scalar_type_from_serde(12) == ScalarType::kBool);
  CHECK_FALSE(scalar_type_from_serde(0));
}

TEST_CASE("record queries: program roles, methods, saved bytes", "[etrecord]") {
  EtRecord r = open_fixture(fixture(kSimpleConv));
  const std::vector<const Graph*> programs = r.programs();
  REQUIRE(programs.size() == 2);
  CHECK(programs[0] == &*r.exported_program);
  CHECK(r.role_of(*programs[0]) == GraphRole::kExportedProgram);
  CHECK(r.role_of(*programs[1]) == GraphRole::kEdgeProgram);
  CHECK(std::string(to_string(r.role_of(*programs[1]))) == "edge_program");
  const Graph stranger;
  CHECK(r.role_of(stranger) == GraphRole::kUnknown);
  CHECK(r.methods() == std::vector<std::string>{"forward"});
  CHECK(r.has_method("forward"));
  CHECK_FALSE(r.has_method("backward"));
  for (const auto& [member, tensors] : r.saved_tensors) {
    uint64_t bytes = 0;
    for (const NamedTensor& t : tensors) bytes += t.value.bytes.size();
    CHECK(total_bytes(tensors) == bytes);
  }

  Graph g;
  r.graph_map["aten_dialect_output/forward"] = g;
  CHECK(r.role_of(r.graph_map.begin()->second) == GraphRole::kGraphMap);
  CHECK(r.programs().size() == 3);
}

TEST_CASE("tracebacks: frames, source lines, the innermost frame outside torch", "[etrecord]") {
  const std::string trace =
      "  File \"/home/u/model.py\", line 13, in forward\n"
      "    x = self.conv(x)\n"
      "  File \"/venv/lib/python3.12/site-packages/torch/nn/modules/conv.py\", line 554, in forward\n"
      "    return self._conv_forward(input, self.weight, self.bias)\n"
      "  File \"/venv/lib/python3.12/site-packages/torch/nn/modules/conv.py\", line 549, in _conv_forward\n";
  const std::vector<TracebackFrame> frames = parse_traceback(trace);
  REQUIRE(frames.size() == 3);
  CHECK(frames[0].file == "/home/u/model.py");
  CHECK(frames[0].line == "13");
  CHECK(frames[0].code == "x = self.conv(x)");
  CHECK(frames[0].file_name() == "model.py");
  CHECK(frames[1].line == "554");
  CHECK(frames[2].code.empty());
  const auto user = user_frame(trace);
  REQUIRE(user);
  CHECK(user->file == "/home/u/model.py");
  // Only torch frames: the innermost one.
  const auto inner = user_frame(trace.substr(trace.find("  File \"/venv")));
  REQUIRE(inner);
  CHECK(inner->line == "549");
  // A frame line directly followed by another frame has no source line.
  CHECK(parse_traceback("File \"a.py\", line 1, in f\nFile \"b.py\", line 2, in g")[0].code.empty());
  CHECK(parse_traceback("not a traceback").empty());
  CHECK_FALSE(user_frame(""));
  CHECK(TracebackFrame{"plain.py", "", ""}.file_name() == "plain.py");
}

// ---- hostile input ------------------------------------------------------------------------------

TEST_CASE("files that are not ETRecords fail with one line naming the file", "[etrecord][hostile]") {
  auto missing = EtRecordReader::open("/nonexistent/dir/x.etrecord");
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.error().code() == ErrorCode::kNotFound);
  check_clean_error(missing.error(), "/nonexistent/dir/x.etrecord");

  auto empty = read_bytes({});
  REQUIRE_FALSE(empty.ok());
  CHECK(empty.error().code() == ErrorCode::kWrongKind);
  CHECK(empty.error().message() == "mutant.etrecord: not an ETRecord archive (empty file)");

  auto text = read_bytes(bytes_of("this is certainly not a zip archive, just some text."));
  REQUIRE_FALSE(text.ok());
  CHECK(text.error().code() == ErrorCode::kWrongKind);
  CHECK(text.error().message() == "mutant.etrecord: not an ETRecord archive (not a zip file)");

  auto pte = EtRecordReader::open(real_artifact("add.pte"));
  REQUIRE_FALSE(pte.ok());
  check_clean_error(pte.error(), real_artifact("add.pte"));

  auto plain_zip = read_bytes(make_zip({{"debug_handle_map", bytes_of("{}")}}));
  REQUIRE_FALSE(plain_zip.ok());
  CHECK(plain_zip.error().code() == ErrorCode::kWrongKind);
  CHECK(plain_zip.error().message() == "mutant.etrecord: not an ETRecord archive (no ETRECORD_V0 entry)");
}

TEST_CASE("truncated ETRecords fail cleanly at every length", "[etrecord][hostile][sweep]") {
  const std::vector<uint8_t> full = file_bytes(real_artifact("tutorial_2023.etrecord"));
  size_t failures = 0;
  for (size_t len = 0; len < full.size(); len += (len + 600 < full.size() ? 3 : 1)) {
    std::vector<uint8_t> cut(full.begin(), full.begin() + static_cast<std::ptrdiff_t>(len));
    auto r = read_bytes(cut);
    if (!r.ok()) {
      ++failures;
      check_clean_error(r.error());
    }
  }
  CHECK(failures > 0);
  // A larger, current-layout archive at a few hundred lengths.
  const std::vector<uint8_t> conv = file_bytes(fixture(kSimpleConv));
  for (size_t i = 0; i < 300; ++i) {
    size_t len = conv.size() - 1 - (i * 7919) % conv.size();
    std::vector<uint8_t> cut(conv.begin(), conv.begin() + static_cast<std::ptrdiff_t>(len));
    auto r = read_bytes(cut);
    REQUIRE_FALSE(r.ok());
    check_clean_error(r.error());
  }
}

TEST_CASE("single-byte flips fail cleanly or read consistently", "[etrecord][hostile][sweep]") {
  const std::vector<uint8_t> full = file_bytes(real_artifact("tutorial_2023.etrecord"));
  size_t ok = 0, failed = 0;
  // Every byte of the headers' region at the end (central directory), every 11th byte elsewhere.
  for (size_t pos = 0; pos < full.size(); pos += (pos + 1200 < full.size() ? 11 : 1)) {
    for (uint8_t mask : {uint8_t{0x01}, uint8_t{0xFF}}) {
      std::vector<uint8_t> m = full;
      m[pos] ^= mask;
      auto r = read_bytes(m);
      if (r.ok()) {
        ++ok;
        for (const auto& [method, g] : r->edge_programs) (void)g.nodes_for_handle(2);
      } else {
        ++failed;
        check_clean_error(r.error());
      }
    }
  }
  CHECK(failed > 0);
}

TEST_CASE("mutated pickles inside a torch.save member never crash", "[etrecord][hostile][sweep]") {
  PickleBuilder p;
  p.op('}').str("forward").op(']').op('(').op(']');
  p.tensor("FloatStorage", "0", 4, 0, {2, 2}, {2, 1});
  p.op('a').op('e').op('s');
  const std::vector<uint8_t> pickle = p.done();
  const std::vector<uint8_t> storage = floats({1, 2, 3, 4});
  {
    auto r = read_bytes(etrecord_with({{"reference_outputs", torch_save(pickle, {{"0", storage}})}}));
    REQUIRE(r.ok());
    REQUIRE(r->reference_outputs.at("forward").at(0).size() == 1);
    CHECK(r->reference_outputs.at("forward")[0][0].bytes == storage);
  }
  for (size_t pos = 0; pos < pickle.size(); ++pos) {
    for (int variant = 0; variant < 4; ++variant) {
      std::vector<uint8_t> m = pickle;
      if (variant == 0) m.resize(pos);
      if (variant == 1) m[pos] ^= 0x01;
      if (variant == 2) m[pos] = 0xFF;
      if (variant == 3) m[pos] = static_cast<uint8_t>(m[pos] + 0x40);
      auto r = read_bytes(etrecord_with({{"reference_outputs", torch_save(m, {{"0", storage}})}}));
      if (!r.ok()) check_clean_error(r.error());
    }
  }
}

TEST_CASE("an entry whose declared size is huge is refused before inflating", "[etrecord][hostile]") {
  // A raw deflate stored block holding "{}", declared as 3.75 GiB uncompressed.
  std::vector<uint8_t> deflate{0x01, 0x02, 0x00, 0xFD, 0xFF, '{', '}'};
  auto r = read_bytes(etrecord_with({{"debug_handle_map", deflate, 8, 0xF0000000u}}));
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().code() == ErrorCode::kOutOfResources);
  check_clean_error(r.error());
  CHECK_THAT(r.error().message(), Catch::StartsWith("mutant.etrecord: entry 'debug_handle_map': declared size"));
  CHECK_THAT(r.error().message(), Catch::Contains("exceeds the per-entry limit"));

  // 2 MiB claimed from 7 bytes: over the 1000:1 ratio cap.
  auto ratio = read_bytes(etrecord_with({{"debug_handle_map", deflate, 8, 2u << 20}}));
  REQUIRE_FALSE(ratio.ok());
  CHECK(ratio.error().code() == ErrorCode::kOutOfResources);
  CHECK_THAT(ratio.error().message(), Catch::Contains("compression ratio"));
}

TEST_CASE("limits on entries, sizes, JSON nesting and pickles are enforced", "[etrecord][hostile]") {
  ReadLimits few_entries;
  few_entries.max_entries = 5;
  auto r1 = EtRecordReader::open(fixture(kSimpleConv), few_entries);
  REQUIRE_FALSE(r1.ok());
  CHECK(r1.error().code() == ErrorCode::kOutOfResources);
  CHECK_THAT(r1.error().message(), Catch::EndsWith("15 zip entries exceed the limit of 5"));

  ReadLimits small_entries;
  small_entries.max_entry_bytes = 100000;
  auto r2 = EtRecordReader::open(fixture(kSimpleConv), small_entries);
  REQUIRE_FALSE(r2.ok());
  CHECK_THAT(r2.error().message(), Catch::Contains("entry 'reference_outputs': declared size 132901 bytes exceeds"));

  ReadLimits small_total;
  small_total.max_total_bytes = 50000;
  auto r3 = EtRecordReader::open(fixture(kSimpleConv), small_total);
  REQUIRE_FALSE(r3.ok());
  CHECK_THAT(r3.error().message(), Catch::Contains("total"));

  auto deep = read_bytes(etrecord_with({{"debug_handle_map", bytes_of(std::string(100000, '[') + std::string(100000, ']'))}}));
  REQUIRE_FALSE(deep.ok());
  CHECK(deep.error().code() == ErrorCode::kOutOfResources);
  CHECK_THAT(deep.error().message(), Catch::StartsWith("mutant.etrecord: entry 'debug_handle_map': JSON nested deeper"));

  PickleBuilder marks;
  for (int i = 0; i < 5000; ++i) marks.op('(');
  auto nested = read_bytes(etrecord_with({{"representative_inputs", torch_save(marks.done(), {})}}));
  REQUIRE_FALSE(nested.ok());
  CHECK(nested.error().code() == ErrorCode::kOutOfResources);
  CHECK_THAT(nested.error().message(), Catch::StartsWith("mutant.etrecord: entry 'representative_inputs'"));

  // A list that holds itself 30 times over, 20 levels deep, would expand to 30^20 values.
  PickleBuilder bomb;
  bomb.op(']').b.insert(bomb.b.end(), {'q', 0});
  for (int level = 1; level <= 20; ++level) {
    bomb.op(']').op('(');
    for (int k = 0; k < 30; ++k) bomb.b.insert(bomb.b.end(), {'h', static_cast<uint8_t>(level - 1)});
    bomb.op('e').b.insert(bomb.b.end(), {'q', static_cast<uint8_t>(level)});
  }
  auto exploded = read_bytes(etrecord_with({{"representative_inputs", torch_save(bomb.done(), {})}}));
  REQUIRE_FALSE(exploded.ok());
  CHECK(exploded.error().code() == ErrorCode::kOutOfResources);

  // A tensor claiming more elements than its storage holds.
  PickleBuilder lying;
  lying.op(']').op('(').tensor("FloatStorage", "0", 1000, 0, {10, 100}, {100, 1}).op('e');
  auto short_storage = read_bytes(etrecord_with({{"representative_inputs", torch_save(lying.done(), {{"0", floats({1, 2})}})}}));
  REQUIRE(short_storage.ok());
  REQUIRE(short_storage->undecoded.size() == 1);
  CHECK_THAT(short_storage->undecoded[0], Catch::StartsWith("representative_inputs: "));
}

// ---- CLI ----------------------------------------------------------------------------------------

TEST_CASE("etscope etrecord prints a summary and the reference graph", "[etrecord][cli]") {
  auto r = etscope::testing::run_etscope("etrecord --graph " + fixture(kXnnpack));
  REQUIRE(r.exit_code == 0);
  CHECK(r.err.empty());
  CHECK_THAT(r.out, Catch::Contains("ETRecord, 15 entries"));
  CHECK_THAT(r.out, Catch::Contains("edge_dialect_exported_program/forward"));
  CHECK_THAT(r.out, Catch::Contains("delegate at instruction 0: XnnpackBackend"));
  CHECK_THAT(r.out, Catch::Contains("forward case 1: f32[1,16,32,32]"));
  CHECK_THAT(r.out, Catch::Contains("aten_convolution_default  aten.convolution.default  handles 1  module conv "
                                    "(torch.nn.modules.conv.Conv2d)  @ simple_conv.py:13 return self.relu(self.conv(x))"));

  auto old = etscope::testing::run_etscope("etrecord " + real_artifact("tutorial_2023.etrecord"));
  REQUIRE(old.exit_code == 0);
  CHECK_THAT(old.out, Catch::Contains("(2023 layout)"));
  CHECK_THAT(old.out, Catch::Contains("forward: debug_handle_map 0 instructions"));
}

TEST_CASE("etscope etrecord --json has the documented shape", "[etrecord][cli][json]") {
  auto r = etscope::testing::run_etscope("etrecord --json " + fixture(kSimpleConv));
  REQUIRE(r.exit_code == 0);
  auto j = nlohmann::json::parse(r.out);
  CHECK(j["file"] == fixture(kSimpleConv));
  CHECK(j["entries"].size() == 15);
  CHECK(j["export_graph_id"] == 140029120697232);
  const auto& g = j["edge_programs"]["forward"];
  CHECK(g["member"] == "edge_dialect_exported_program/forward");
  CHECK(g["operator_count"] == 2);
  const auto& conv = g["nodes"][3];
  CHECK(conv["target"] == "aten.convolution.default");
  CHECK(conv["debug_handles"] == nlohmann::json::array({1}));
  CHECK(conv["nn_module_stack"][1]["path"] == "conv");
  CHECK(conv["outputs"][0]["dtype"] == "Float");
  CHECK(j["exported_program"]["nodes"].size() == 6);
  CHECK(j["maps"]["forward"]["debug_handle_map"]["1"] == nlohmann::json::array({2}));
  CHECK(j["reference_outputs"]["forward"][0][0]["shape"] == nlohmann::json::array({1, 16, 32, 32}));
  CHECK(j["representative_inputs"]["forward"][0][0]["nbytes"] == 12288);
  CHECK(j["saved_tensors"]["exported_program_state_dict"][0]["name"] == "conv.weight");
  CHECK(j["undecoded"].empty());
}

TEST_CASE("etscope etrecord errors name the file and exit 1", "[etrecord][cli]") {
  auto missing = etscope::testing::run_etscope("etrecord /nonexistent/x.etrecord");
  CHECK(missing.exit_code == 1);
  CHECK(missing.err == "etscope: /nonexistent/x.etrecord: no such file\n");

  auto wrong = etscope::testing::run_etscope("etrecord " + real_artifact("add.pte"));
  CHECK(wrong.exit_code == 1);
  CHECK(wrong.err == "etscope: " + real_artifact("add.pte") + ": not an ETRecord archive (not a zip file)\n");

  auto method = etscope::testing::run_etscope("etrecord --method backward " + fixture(kSimpleConv));
  CHECK(method.exit_code == 1);
  CHECK_THAT(method.err, Catch::Contains("no method 'backward' (methods: forward)"));
}
