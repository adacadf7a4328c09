// Inspector: conformance with ExecuTorch's Python Inspector on the fixtures it was run on
// (tests/fixtures/executorch/<m>/<m>.inspector.json, written by samples/export/inspect_tools.py),
// plus the statistics rules of semantics.md §3.4 on hand-made numbers.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstring>
#include <map>
#include <cmath>
#include <sstream>

#include "etscope/core/stats.h"
#include "etscope/etdump/etdump_reader.h"
#include "etscope/etrecord/etrecord_reader.h"
#include "etscope/formats/pte_reader.h"
#include "etscope/inspect/consistency.h"
#include "etscope/inspect/inspector.h"
#include "etscope/inspect/logged_tensor.h"
#include "etscope/inspect/run_trace.h"
#include "testing/test_json.h"
#include "testing/test_util.h"

using namespace etscope;
using namespace etscope::inspect;
using etscope::testing::fixture;
using nlohmann::json;

namespace {

bool close(double a, double b, double rel = 1e-9) {
  if (a == b) return true;
  return std::fabs(a - b) <= rel * std::max(std::fabs(a), std::fabs(b));
}

std::shared_ptr<const etdump::EtDumpFile> dump_of(const std::string& path) {
  auto r = etdump::EtDumpReader::open(path);
  INFO(path);
  REQUIRE(r.ok());
  return std::make_shared<const etdump::EtDumpFile>(std::move(r).value());
}

std::shared_ptr<const etrecord::EtRecord> record_of(const std::string& path) {
  auto r = etrecord::EtRecordReader::open(path);
  INFO(path << ": " << (r.ok() ? "" : r.error().message()));
  REQUIRE(r.ok());
  return std::make_shared<const etrecord::EtRecord>(std::move(r).value());
}

Inspector inspector_for(const std::string& etdp, const std::string& etrecord, const std::string& debug_bin) {
  std::shared_ptr<const Blob> buffer;
  if (!debug_bin.empty()) buffer = etscope::testing::load(debug_bin);
  auto in = Inspector::build(dump_of(etdp), etrecord.empty() ? nullptr : record_of(etrecord), buffer);
  INFO(etdp << ": " << (in.ok() ? "" : in.error().message()));
  REQUIRE(in.ok());
  return std::move(in).value();
}

// The fixture's JSON encodes non-finite floats as strings; timings are always finite numbers.
double num(const json& j) { return j.get<double>(); }

// `folder`: the fixture directory (the model's own by default).
void check_against_reference(const std::string& model, const std::string& variant, std::string folder = "") {
  if (folder.empty()) folder = model;
  const std::string dir = folder + "/" + model;
  const json ref = etscope::testing::load_json(fixture(dir + variant + ".inspector.json"));
  const json& meta = ref["meta"];
  const std::string base = folder + "/";
  Inspector in = inspector_for(fixture(base + meta["etdump"].get<std::string>()), fixture(base + meta["etrecord"].get<std::string>()),
                               fixture(base + meta["debug_buffer"].get<std::string>()));
  const json& ref_blocks = ref["event_blocks"];
  REQUIRE(in.blocks().size() == ref_blocks.size());
  const json& rows = ref["to_dataframe"]["rows"];
  size_t row = 0;
  for (size_t b = 0; b < in.blocks().size(); ++b) {
    const EventBlock& block = in.blocks()[b];
    const json& rb = ref_blocks[b];
    INFO(model << variant << " block " << b << " " << block.name);
    CHECK(block.name == rb["name"].get<std::string>());
    CHECK(block.bundled_input_index == rb["bundled_input_index"].get<int>());
    CHECK(block.run_outputs.size() == rb["run_output"].size());
    REQUIRE(block.events.size() == rb["events"].size());
    for (size_t e = 0; e < block.events.size(); ++e, ++row) {
      const Event& ev = block.events[e];
      const json& re = rb["events"][e];
      const json& rr = rows[row];
      INFO("event " << e << " " << ev.name);
      CHECK(ev.name == re["name"].get<std::string>());
      CHECK(ev.instruction_id == re["instruction_id"].get<int>());
      if (re["delegate_debug_identifier"].is_null()) {
        CHECK(ev.delegate_identifier_text().empty());
      } else if (re["delegate_debug_identifier"].is_number()) {
        REQUIRE(ev.delegate_id_int.has_value());
        CHECK(*ev.delegate_id_int == re["delegate_debug_identifier"].get<int64_t>());
      } else {
        CHECK(ev.delegate_identifier_text() == re["delegate_debug_identifier"].get<std::string>());
      }
      CHECK(ev.is_delegated_op == std::optional<bool>(re["is_delegated_op"].get<bool>()));
      if (re["delegate_backend_name"].is_null()) {
        CHECK_FALSE(ev.delegate_backend_name.has_value());
      } else {
        CHECK(ev.delegate_backend_name.value_or("<none>") == re["delegate_backend_name"].get<std::string>());
      }
      const json& dh = re["debug_handles"];
      if (dh.is_null()) {
        CHECK_FALSE(ev.debug_handles.has_value());
      } else {
        std::vector<int64_t> want = dh.is_array() ? dh.get<std::vector<int64_t>>() : std::vector<int64_t>{dh.get<int64_t>()};
        CHECK(ev.debug_handles.value_or(std::vector<int64_t>{-99}) == want);
      }
      CHECK(ev.num_outputs == re["num_outputs"].get<int64_t>());
      CHECK(ev.op_types == re["op_types"].get<std::vector<std::string>>());
      CHECK(ev.debug_values.size() == re["num_debug_values"].get<size_t>());
      // The DataFrame row: raw samples, statistics, start times, stack traces, module hierarchy.
      REQUIRE(rr["event_name"].get<std::string>() == ev.name);
      if (rr["raw"].is_null()) {
        CHECK_FALSE(ev.perf.has_value());
      } else {
        REQUIRE(ev.perf.has_value());
        REQUIRE(ev.perf->raw.size() == rr["raw"].size());
        for (size_t k = 0; k < ev.perf->raw.size(); ++k) CHECK(close(ev.perf->raw[k], num(rr["raw"][k])));
        CHECK(close(ev.perf->p10, num(rr["p10 (ms)"])));
        CHECK(close(ev.perf->p50, num(rr["p50 (ms)"])));
        CHECK(close(ev.perf->p90, num(rr["p90 (ms)"])));
        CHECK(close(ev.perf->avg, num(rr["avg (ms)"])));
        CHECK(close(ev.perf->min, num(rr["min (ms)"])));
        CHECK(close(ev.perf->max, num(rr["max (ms)"])));
        CHECK(ev.start_times == rr["start_time"].get<std::vector<uint64_t>>());
      }
      const json& st = rr["stack_traces"];
      const json& mh = rr["module_hierarchy"];
      REQUIRE(ev.nodes.size() == st.size());
      for (const NodeLink& link : ev.nodes) {
        INFO("node " << link.node_name);
        REQUIRE(st.contains(link.node_name));
        CHECK((st[link.node_name].is_null() ? std::string() : st[link.node_name].get<std::string>()) == link.stack_trace);
        REQUIRE(mh.contains(link.node_name));
        const json& stack = mh[link.node_name];
        if (stack.is_null()) {
          CHECK(link.module_stack.empty());
          continue;
        }
        REQUIRE(stack.size() == link.module_stack.size());
        size_t k = 0;
        for (auto it = stack.begin(); it != stack.end(); ++it, ++k) {
          CHECK(link.module_stack[k].key == it.key());
          CHECK(link.module_stack[k].path == it.value()[0].get<std::string>());
          CHECK(link.module_stack[k].type == it.value()[1].get<std::string>());
        }
      }
    }
  }
  CHECK(row == rows.size());
  // find_total_for_module for every key the reference computed.
  for (const auto& [module, total] : ref["find_total_for_module"]["totals"].items()) {
    INFO("find_total_for_module " << module);
    CHECK(close(in.find_total_for_module(module), total.get<double>(), 1e-9));
  }
}

}  // namespace

TEST_CASE("inspector matches ExecuTorch's Inspector on simple_conv (intermediate outputs)", "[inspector][conformance]") {
  check_against_reference("simple_conv", "");
}

TEST_CASE("inspector matches ExecuTorch's Inspector on simple_conv (program outputs)", "[inspector][conformance]") {
  check_against_reference("simple_conv", ".program_outputs");
}

TEST_CASE("inspector matches ExecuTorch's Inspector on the XNNPACK-delegated simple_conv", "[inspector][conformance]") {
  check_against_reference("simple_conv_xnnpack", "");
  check_against_reference("simple_conv_xnnpack", ".program_outputs");
}

TEST_CASE("inspector matches ExecuTorch's Inspector on ExecuTorch's dumps of the XNNPACK programs", "[inspector][conformance][xnnpack]") {
  // fp16 has no ETRecord (its export script could not write one); every other program of
  // tests/fixtures/executorch/xnnpack: per-node XNNPACK events, partial delegation, quantized graphs.
  for (const char* model : {"xnn_cnn", "xnn_mobilenet_v3_small", "xnn_transformer", "xnn_qcnn", "xnn_dqlinear", "xnn_4bit",
                            "xnn_partial", "xnn_ops_mix", "xnn_ops_more", "xnn_convt", "xnn_nhwc_softmax"}) {
    check_against_reference(model, "", "xnnpack");
  }
}

TEST_CASE("inspector matches ExecuTorch's Inspector on the dynamic-shape XNNPACK programs", "[inspector][conformance][xnnpack]") {
  // Dumps ExecuTorch took at a shape below the upper bounds (tests/fixtures/executorch/xnnpack_dynamic):
  // debug tensors have the run's sizes.
  for (const char* model : {"xnn_dyn_mlp", "xnn_dyn_cnn", "xnn_dyn_transformer", "xnn_dyn_encoder", "xnn_dyn_dqlinear",
                            "xnn_dyn_partial", "xnn_dyn_conv1d", "xnn_dyn_ops4d", "xnn_dyn_pair"}) {
    check_against_reference(model, "", "xnnpack_dynamic");
  }
}

TEST_CASE("inspector matches ExecuTorch's Inspector on cifar10", "[inspector][conformance]") {
  check_against_reference("cifar10", "");
  check_against_reference("cifar10", ".program_outputs");
}

TEST_CASE("inspector matches ExecuTorch's Inspector on mobilenet_v2", "[inspector][conformance]") {
  check_against_reference("mobilenet_v2", "");
  check_against_reference("mobilenet_v2", ".program_outputs");
}

TEST_CASE("percentiles interpolate linearly like numpy", "[inspector]") {
  const std::vector<double> xs{1, 2, 3, 4, 10};
  CHECK(percentile_sorted(xs, 10) == Approx(1.4));
  CHECK(percentile_sorted(xs, 50) == 3.0);
  CHECK(percentile_sorted(xs, 90) == Approx(7.6));
  CHECK(percentile_sorted({5.0}, 90) == 5.0);
  CHECK(percentile_sorted({}, 50) == 0.0);
}

TEST_CASE("elapsed time follows ExecuTorch's 32-bit wraparound rule", "[inspector]") {
  CHECK(*elapsed_ticks(10, 25) == 15);
  // One short of modular arithmetic, as ExecuTorch computes it.
  CHECK(*elapsed_ticks(0xFFFFFFF0ull, 0x10) == 0x0F + 0x10);
  auto bad = elapsed_ticks(uint64_t{1} << 40, 5);
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.error().code() == ErrorCode::kCorrupt);
}

TEST_CASE("time scales convert and cycles only convert to cycles", "[inspector]") {
  auto dump = dump_of(fixture("simple_conv/simple_conv.profile.etdp"));
  InspectorOptions us;
  us.target = TimeScale::kUs;
  auto in_us = Inspector::build(dump, nullptr, nullptr, us);
  auto in_ms = Inspector::build(dump, nullptr, nullptr, {});
  REQUIRE(in_us.ok());
  REQUIRE(in_ms.ok());
  const Event& a = in_us->blocks().back().events.front();
  const Event& b = in_ms->blocks().back().events.front();
  CHECK(a.perf->avg == Approx(b.perf->avg * 1000.0));
  InspectorOptions mixed;
  mixed.source = TimeScale::kCycles;
  auto bad = Inspector::build(dump, nullptr, nullptr, mixed);
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.error().code() == ErrorCode::kInvalidArgument);
  CHECK(parse_time_scale("cycles").ok());
  CHECK_FALSE(parse_time_scale("minutes").ok());
}

TEST_CASE("repeated Execute runs group into one block with one sample per run", "[inspector]") {
  auto dump = dump_of(fixture("cifar10/cifar10.profile.etdp"));
  auto in = Inspector::build(dump, nullptr, nullptr, {});
  REQUIRE(in.ok());
  REQUIRE(in->blocks().size() == 2);
  CHECK(in->blocks()[0].name == "Default");
  CHECK(in->blocks()[1].name == "Execute");
  CHECK(in->blocks()[1].runs.size() == 10);
  for (const Event& e : in->blocks()[1].events) {
    REQUIRE(e.perf.has_value());
    CHECK(e.perf->raw.size() == 10);
    CHECK(e.raw_events.size() == 10);
  }
}

TEST_CASE("per-type summary, module tree and delegate time add up", "[inspector]") {
  Inspector in = inspector_for(fixture("cifar10/cifar10.etdp"), fixture("cifar10/cifar10.etrecord"), "");
  const size_t exec = 1;
  REQUIRE(in.blocks()[exec].name == "Execute");
  std::vector<TypeSummary> types = in.summary_by_type(exec);
  REQUIRE_FALSE(types.empty());
  double kernels = 0, share = 0;
  for (const Event& e : in.blocks()[exec].events) {
    if (e.perf && e.name.rfind("native_call_", 0) == 0) kernels += e.perf->avg;
  }
  double total = 0;
  for (const TypeSummary& t : types) {
    total += t.total;
    share += t.share;
    CHECK(t.count > 0);
  }
  CHECK(total == Approx(kernels));
  CHECK(share > 0.5);
  CHECK(share <= 1.0 + 1e-9);
  bool conv = false;
  for (const TypeSummary& t : types) conv |= t.type == "convolution.out" && t.count == 3;
  CHECK(conv);
  // Module tree: the root holds the kernels and OPERATOR_CALLs are not counted twice.
  ModuleNode root = in.module_tree(exec);
  REQUIRE_FALSE(root.children.empty());
  CHECK(root.total == Approx(kernels));
  double children = 0;
  for (const ModuleNode& c : root.children.front().children) children += c.total;
  CHECK(children <= root.total * (1 + 1e-9));

  Inspector x = inspector_for(fixture("simple_conv_xnnpack/simple_conv_xnnpack.etdp"), fixture("simple_conv_xnnpack/simple_conv_xnnpack.etrecord"), "");
  std::vector<DelegateSummary> d = x.delegate_summaries(1);
  REQUIRE(d.size() == 1);
  CHECK(d[0].backend == "XnnpackBackend");
  CHECK(d[0].sub_events.size() == 3);
  CHECK(d[0].unattributed == Approx(d[0].call_avg - d[0].sub_events_avg));
  CHECK(d[0].unattributed >= 0);
}

TEST_CASE("the Chrome trace lays runs end to end on one track per block name or one per run", "[inspector][trace]") {
  Inspector in = inspector_for(fixture("simple_conv/simple_conv.etdp"), fixture("simple_conv/simple_conv.etrecord"), "");
  // simple_conv.etdp: "Default" (load, 2 events) and 10 "Execute" runs of 5 events.
  for (const bool per_run : {false, true}) {
    INFO("per_run_tracks " << per_run);
    RunTraceOptions options;
    options.per_run_tracks = per_run;
    std::ostringstream out;
    write_run_trace(in, out, options);
    const json trace = json::parse(out.str());
    size_t tracks = 0, events = 0, run_slices = 0;
    bool module_arg = false;
    std::map<int, std::vector<std::pair<double, double>>> runs_by_track;
    for (const json& e : trace["traceEvents"]) {
      if (e["ph"] == "M" && e["name"] == "thread_name") ++tracks;
      if (e["ph"] != "X") continue;
      CHECK(e["dur"].get<double>() >= 0);
      if (e["cat"] == "run") {
        ++run_slices;
        runs_by_track[e["tid"].get<int>()].emplace_back(e["ts"].get<double>(), e["ts"].get<double>() + e["dur"].get<double>());
        continue;
      }
      ++events;
      CHECK(e["args"].contains("duration_ms"));  // the Inspector's target unit
      if (e["args"].contains("module_hierarchy")) module_arg = true;
    }
    CHECK(events == 2 + 10 * 5);
    CHECK(module_arg);
    if (per_run) {
      CHECK(tracks == in.dump().blocks.size());
      CHECK(run_slices == 0);
    } else {
      CHECK(tracks == 2);
      CHECK(run_slices == 11);
      // Runs on one track never overlap: end to end, gaps as recorded.
      for (auto& [tid, spans] : runs_by_track) {
        std::sort(spans.begin(), spans.end());
        for (size_t i = 1; i < spans.size(); ++i) CHECK(spans[i - 1].second <= spans[i].first + 1e-6);
      }
    }
  }
}

TEST_CASE("etscope inspect prints the table, CSV, JSON, per-type summary and module tree", "[inspector][cli]") {
  const std::string dump = fixture("cifar10/cifar10.etdp"), record = fixture("cifar10/cifar10.etrecord");
  auto table = etscope::testing::run_etscope("inspect --etdump '" + dump + "' --etrecord '" + record + "'");
  REQUIRE(table.exit_code == 0);
  CHECK(table.out.find("block 1 'Execute': 10 runs") != std::string::npos);
  CHECK(table.out.find("native_call_convolution.out") != std::string::npos);
  CHECK(table.out.find("OPERATOR_CALL") == std::string::npos);  // dropped, as ExecuTorch's table does

  auto csv = etscope::testing::run_etscope("inspect --etdump '" + dump + "' --format csv --operator-calls");
  REQUIRE(csv.exit_code == 0);
  size_t lines = 0;
  for (char c : csv.out) lines += c == '\n';
  Inspector in = inspector_for(dump, "", "");
  size_t events = 0;
  for (const auto& b : in.blocks()) events += b.events.size();
  CHECK(lines == events + 1);
  CHECK(csv.out.rfind("event_block_name,event_name,instruction_id", 0) == 0);

  auto js = etscope::testing::run_etscope("inspect --etdump '" + dump + "' --etrecord '" + record + "' --format json");
  REQUIRE(js.exit_code == 0);
  const json j = json::parse(js.out);
  REQUIRE(j["blocks"].size() == 2);
  CHECK(j["blocks"][1]["events"][0]["perf"]["raw"].size() == 10);
  CHECK(j["blocks"][1]["module_tree"]["children"].size() == 1);
  CHECK_FALSE(j["module_totals"].empty());
  // The run time the shares divide by, and where it came from; the Default block has none.
  CHECK(j["blocks"][1]["run_time"]["source"] == "Method::execute avg");
  CHECK(j["blocks"][1]["run_time"]["value"].get<double>() == Approx(in.run_time(1).value));
  CHECK(j["blocks"][0]["run_time"]["source"] == "none");
  CHECK(table.out.find("run time " ) != std::string::npos);

  auto types = etscope::testing::run_etscope("inspect --etdump '" + dump + "' --by-type --block Execute");
  REQUIRE(types.exit_code == 0);
  CHECK(types.out.find("convolution.out") != std::string::npos);
  auto modules = etscope::testing::run_etscope("inspect --etdump '" + dump + "' --etrecord '" + record + "' --modules");
  REQUIRE(modules.exit_code == 0);
  CHECK(modules.out.find("module tree") != std::string::npos);
  CHECK(modules.out.find("find_total_for_module") != std::string::npos);
}

TEST_CASE("etscope inspect and trace fail with one line naming the file", "[inspector][cli]") {
  const std::string dir = etscope::testing::temp_dir("inspect_errors");
  auto missing = etscope::testing::run_etscope("inspect --etdump '" + dir + "/nope.etdp'");
  CHECK(missing.exit_code == 1);
  CHECK(missing.err.find("nope.etdp") != std::string::npos);
  auto wrong = etscope::testing::run_etscope("inspect --etdump '" + fixture("simple_conv/simple_conv.pte") + "'");
  CHECK(wrong.exit_code == 1);
  CHECK(wrong.err.find("not an ETDump") != std::string::npos);
  // A truncated dump.
  auto bytes = etscope::read_file_bytes(fixture("simple_conv/simple_conv.etdp"));
  REQUIRE(bytes.ok());
  bytes->resize(bytes->size() / 2);
  REQUIRE(etscope::write_file_bytes(dir + "/half.etdp", *bytes).ok());
  auto half = etscope::testing::run_etscope("inspect --etdump '" + dir + "/half.etdp'");
  CHECK(half.exit_code == 1);
  CHECK(half.err.find("half.etdp") != std::string::npos);
  CHECK(std::count(half.err.begin(), half.err.end(), '\n') == 1);
  auto mixed = etscope::testing::run_etscope("inspect --etdump '" + fixture("simple_conv/simple_conv.etdp") + "' --source-time-scale cycles");
  CHECK(mixed.exit_code == 1);
  CHECK(mixed.err.find("cycles") != std::string::npos);
  auto bad_record = etscope::testing::run_etscope("inspect --etdump '" + fixture("simple_conv/simple_conv.etdp") + "' --etrecord '" +
                                                  fixture("simple_conv/simple_conv.pte") + "'");
  CHECK(bad_record.exit_code == 1);
  CHECK(bad_record.err.find("simple_conv.pte") != std::string::npos);
  auto no_block = etscope::testing::run_etscope("inspect --etdump '" + fixture("simple_conv/simple_conv.etdp") + "' --block Nope");
  CHECK(no_block.exit_code == 1);
  auto unwritable = etscope::testing::run_etscope("trace --etdump '" + fixture("simple_conv/simple_conv.etdp") + "' -o '" + dir + "/no/such/dir/t.json'");
  CHECK(unwritable.exit_code == 1);
  CHECK(unwritable.err.find("t.json") != std::string::npos);
  auto ok = etscope::testing::run_etscope("trace --etdump '" + fixture("simple_conv/simple_conv.etdp") + "' -o '" + dir + "/t.json'");
  CHECK(ok.exit_code == 0);
  CHECK(json::parse(etscope::testing::load(dir + "/t.json")->bytes().begin(), etscope::testing::load(dir + "/t.json")->bytes().end())["traceEvents"].size() > 50);
}

TEST_CASE("blocks are attributed to the method whose plan explains their kernels", "[inspector]") {
  auto program = etscope::PteReader::open(fixture("simple_conv/simple_conv.pte"));
  REQUIRE(program.ok());
  Inspector in = inspector_for(fixture("simple_conv/simple_conv.etdp"), "", "");
  std::vector<std::string> methods = in.block_methods(*program);
  REQUIRE(methods.size() == 2);
  CHECK(methods[0].empty());  // Default: load and init only
  CHECK(methods[1] == "forward");
  // Another model's program explains none of these kernels.
  auto other = etscope::PteReader::open(etscope::testing::real_artifact("add.pte"));
  REQUIRE(other.ok());
  std::vector<std::string> none = in.block_methods(*other);
  CHECK(none[1].empty());
}

namespace {

// Operator base names of a block's kernel events, in order, and the op types they were linked to.
std::vector<std::pair<std::string, std::string>> kernels_and_types(const EventBlock& block) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const Event& e : block.events) {
    if (e.name.rfind("native_call_", 0) != 0) continue;
    out.emplace_back(etscope::inspect::operator_base_name(e.name), e.op_types.empty() ? "" : e.op_types.front());
  }
  return out;
}

}  // namespace

TEST_CASE("each block of a two-method dump is linked with its own method's ETRecord maps", "[inspector][multi-method]") {
  // ExecuTorch's runtime ran forward twice, then encode twice: all blocks are named "Execute".
  const std::string dir = "two_methods/two_methods.";
  for (const std::string fallback : {"", "forward", "encode"}) {
    INFO("fallback method '" << fallback << "'");
    InspectorOptions options;
    options.method = fallback;
    auto built = Inspector::build(dump_of(fixture(dir + "etdp")), record_of(fixture(dir + "etrecord")), nullptr, options);
    REQUIRE(built.ok());
    const Inspector& in = *built;
    REQUIRE(in.blocks().size() == 3);
    CHECK(in.blocks()[1].method == "forward");
    CHECK(in.blocks()[2].method == "encode");
    // Every kernel is linked to a graph node of its own operator (encode's tanh at instruction 5
    // is forward's addmm there: forward's maps would call it a Linear).
    for (size_t b : {size_t{1}, size_t{2}}) {
      for (const auto& [op, type] : kernels_and_types(in.blocks()[b])) {
        INFO("block " << b << " " << op << " linked to " << type);
        CHECK(!type.empty());
        if (op != "permute_copy" && op != "addmm") CHECK(type == "aten." + op + ".default");
      }
    }
    const auto encode = kernels_and_types(in.blocks()[2]);
    REQUIRE(encode.size() == 6);
    CHECK(encode[5] == std::make_pair(std::string("tanh"), std::string("aten.tanh.default")));
    // The Default block (load and init) has no kernels: it takes the fallback.
    CHECK(in.blocks()[0].method == (fallback.empty() ? "forward" : fallback));
  }
}

TEST_CASE("inspect names the method of each block of a two-method dump", "[inspector][multi-method][cli]") {
  auto file = [](const char* ext) { return "'" + fixture(std::string("two_methods/two_methods.") + ext) + "'"; };
  auto r = etscope::testing::run_etscope("inspect --etdump " + file("etdp") + " --etrecord " + file("etrecord") + " --pte " + file("pte"));
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("block 1 'Execute' (method forward): 2 runs") != std::string::npos);
  CHECK(r.out.find("block 2 'Execute' (method encode): 2 runs") != std::string::npos);
  CHECK(r.out.find("aten.tanh.default") != std::string::npos);
}

TEST_CASE("a logged tensor's statistics never read outside the debug buffer", "[inspector][debug-buffer]") {
  // Two float32 values, 1.5 and -2, at offset 4 of a 12-byte buffer.
  const float values[2] = {1.5f, -2.0f};
  std::vector<uint8_t> bytes(12, 0);
  std::memcpy(bytes.data() + 4, values, sizeof values);
  const auto buffer = Blob::from_bytes("d.bin", bytes);
  etdump::LoggedTensor t;
  t.dtype = ScalarType::kFloat;
  t.sizes = {2};
  t.offset = 4;
  t.nbytes = 8;

  const LoggedTensorStats good = logged_tensor_stats(t, *buffer);
  CHECK(good.in_buffer);
  REQUIRE(good.stats.has_value());
  CHECK(good.stats->first_values == std::vector<double>{1.5, -2.0});
  CHECK(good.stats->min == -2.0);
  CHECK(good.stats->max == 1.5);
  CHECK(logged_tensor_stats(t, *buffer, 1).stats->first_values.size() == 1);

  // Hostile offsets and sizes: partly outside, past the end, negative, wrapping around.
  for (auto [offset, nbytes] : std::vector<std::pair<int64_t, uint64_t>>{
           {8, 8}, {13, 0}, {-1, 8}, {4, ~uint64_t{0} - 2}, {int64_t{1} << 62, 8}}) {
    etdump::LoggedTensor bad = t;
    bad.offset = offset;
    bad.nbytes = nbytes;
    INFO("offset " << offset << ", " << nbytes << " bytes");
    const LoggedTensorStats s = logged_tensor_stats(bad, *buffer);
    CHECK_FALSE(s.in_buffer);
    CHECK_FALSE(s.stats.has_value());
    auto read = logged_tensor_bytes(bad, *buffer, nbytes);
    REQUIRE_FALSE(read.ok());
    CHECK(read.error().code() == ErrorCode::kCorrupt);
    CHECK(read.error().message().find("d.bin: logged tensor at offset " + std::to_string(offset)) == 0);
  }

  // Inside the buffer, but the recorded bytes do not hold the elements the sizes claim, or the
  // sizes overflow: the bytes are in the buffer, the statistics are not computed.
  etdump::LoggedTensor short_bytes = t;
  short_bytes.sizes = {3};
  CHECK(logged_tensor_stats(short_bytes, *buffer).in_buffer);
  CHECK_FALSE(logged_tensor_stats(short_bytes, *buffer).stats.has_value());
  etdump::LoggedTensor overflow = t;
  overflow.sizes = {int64_t{1} << 40, int64_t{1} << 40};
  CHECK_FALSE(logged_tensor_stats(overflow, *buffer).stats.has_value());
  // Negative sizes count as 0 elements.
  etdump::LoggedTensor negative = t;
  negative.sizes = {-3};
  REQUIRE(logged_tensor_stats(negative, *buffer).stats.has_value());
  CHECK(logged_tensor_stats(negative, *buffer).stats->count == 0);
}
