// Inspector::module_tree against ExecuTorch's find_total_for_module: on a synthetic delegated
// ResNet-18 (one DELEGATE_CALL whose graph nodes build the whole tree within one event, the shape
// that broke the tree for XNNPACK-lowered models) and on every ExecuTorch fixture with an
// ETRecord. Also the run-time definition and shares that the front ends show.
#include <catch2/catch.hpp>

#include <algorithm>
#include <functional>
#include <set>
#include <string>
#include <vector>

#include "etscope/etdump/etdump_reader.h"
#include "etscope/etrecord/etrecord_reader.h"
#include "etscope/core/event_names.h"
#include "etscope/inspect/event_index.h"
#include "etscope/inspect/inspector.h"
#include "testing/test_util.h"

using namespace etscope;
using namespace etscope::inspect;
using etscope::testing::fixture;

namespace {

// One profile event of a synthetic dump: (name, chain, instruction, start, end).
struct Ev {
  std::string_view name;
  int32_t chain;
  int32_t instruction;
  uint64_t start, end;
};

// An in-memory ETDump with one "Execute" block per run; run r repeats `events` 10^6 ticks
// later than run r-1, each event 10 ticks longer.
std::shared_ptr<const etdump::EtDumpFile> make_dump(const std::vector<Ev>& events, int runs) {
  auto f = std::make_shared<etdump::EtDumpFile>();
  f->blob = Blob::from_bytes("synthetic.etdp", {});
  for (int r = 0; r < runs; ++r) {
    etdump::RunBlock block;
    block.name = std::string(events::kBlockExecute);
    block.first_event = static_cast<uint32_t>(f->events.size());
    const uint64_t shift = static_cast<uint64_t>(r) * 1'000'000;
    for (const Ev& ev : events) {
      etdump::Event e;
      e.start = ev.start + shift;
      e.end = ev.end + shift + static_cast<uint64_t>(r) * 10;
      e.chain = ev.chain;
      e.instruction = ev.instruction;
      auto it = std::find(f->names.begin(), f->names.end(), ev.name);
      e.ref = static_cast<uint32_t>(it - f->names.begin());
      if (it == f->names.end()) f->names.emplace_back(ev.name);
      f->events.push_back(e);
    }
    block.event_count = static_cast<uint32_t>(events.size());
    f->blocks.push_back(block);
  }
  return f;
}

etrecord::ModuleFrame frame(const std::string& path, const std::string& type) {
  std::string key = "L__self__";
  if (!path.empty()) key += "_" + path;
  for (char& c : key) c = c == '.' ? '_' : c;
  return {key, path, type};
}

// ResNet-18's module stacks in graph order, as torch.export records them: the stem, four layers
// of two BasicBlocks (with a downsample in the first block of layers 2-4 and the residual add
// belonging to the block itself, after its children), then avgpool and fc.
std::vector<std::vector<etrecord::ModuleFrame>> resnet18_stacks() {
  const etrecord::ModuleFrame model = frame("", "torchvision.models.resnet.ResNet");
  std::vector<std::vector<etrecord::ModuleFrame>> out;
  for (const char* stem : {"conv1", "bn1", "relu", "maxpool"}) out.push_back({model, frame(stem, "torch.nn.modules.Module")});
  for (int layer = 1; layer <= 4; ++layer) {
    const std::string l = "layer" + std::to_string(layer);
    const etrecord::ModuleFrame lf = frame(l, "torch.nn.modules.container.Sequential");
    for (int b = 0; b < 2; ++b) {
      const std::string bp = l + "." + std::to_string(b);
      const etrecord::ModuleFrame bf = frame(bp, "torchvision.models.resnet.BasicBlock");
      for (const char* part : {"conv1", "bn1", "relu", "conv2", "bn2"}) {
        out.push_back({model, lf, bf, frame(bp + "." + part, "torch.nn.modules.Module")});
      }
      if (layer > 1 && b == 0) {
        const etrecord::ModuleFrame df = frame(bp + ".downsample", "torch.nn.modules.container.Sequential");
        out.push_back({model, lf, bf, df, frame(bp + ".downsample.0", "torch.nn.modules.conv.Conv2d")});
        out.push_back({model, lf, bf, df, frame(bp + ".downsample.1", "torch.nn.modules.batchnorm.BatchNorm2d")});
      }
      out.push_back({model, lf, bf});  // the residual add
      out.push_back({model, lf, bf, frame(bp + ".relu", "torch.nn.modules.activation.ReLU")});
    }
  }
  out.push_back({model, frame("avgpool", "torch.nn.modules.pooling.AdaptiveAvgPool2d")});
  out.push_back({model, frame("fc", "torch.nn.modules.linear.Linear")});
  return out;
}

// The graph of a lowered ResNet-18: one node per module stack with its own debug handle (1..n),
// every handle on instruction 0 (the DELEGATE_CALL); instruction 1 is a portable kernel for fc.
std::shared_ptr<const etrecord::EtRecord> delegated_resnet18_record() {
  auto rec = std::make_shared<etrecord::EtRecord>();
  etrecord::Graph& g = rec->edge_programs["forward"];
  etrecord::MethodMaps& maps = rec->maps["forward"];
  const auto stacks = resnet18_stacks();
  for (size_t i = 0; i < stacks.size(); ++i) {
    etrecord::GraphNode n;
    n.name = "op_" + std::to_string(i);
    n.op = "call_function";
    n.target = "aten.op.default";
    n.raw_target = "torch.ops.aten.op.default";
    n.debug_handles = {static_cast<int64_t>(i + 1)};
    n.nn_module_stack = stacks[i];
    g.nodes.push_back(std::move(n));
    maps.debug_handle_map[0].push_back(static_cast<int64_t>(i + 1));
  }
  maps.debug_handle_map[1] = {static_cast<int64_t>(stacks.size())};  // fc again, as a kernel
  return rec;
}

Inspector build_delegated_resnet18() {
  const std::vector<Ev> run{
      {events::kDelegateCall, 0, 0, 1000, 11170},
      {"native_call_addmm.out", 0, 1, 11300, 11400},
      {events::kOperatorCall, 0, 1, 11250, 11450},
      {events::kMethodExecute, -1, 0, 900, 11500},
  };
  auto in = Inspector::build(make_dump(run, 3), delegated_resnet18_record(), nullptr, {});
  INFO((in.ok() ? "" : in.error().message()));
  REQUIRE(in.ok());
  return std::move(in).value();
}

// Keys ExecuTorch's substring match cannot single out: contained in a key outside their subtree
// ("L__self___features_1" inside "L__self___features_10").
std::set<std::string> ambiguous_keys(const ModuleNode& root) {
  std::vector<std::pair<std::string, std::set<std::string>>> subtree;  // key -> keys at or below
  std::function<std::set<std::string>(const ModuleNode&)> walk = [&](const ModuleNode& n) {
    std::set<std::string> below{n.key};
    for (const ModuleNode& c : n.children) {
      std::set<std::string> s = walk(c);
      below.insert(s.begin(), s.end());
    }
    subtree.emplace_back(n.key, below);
    return below;
  };
  walk(root);
  std::set<std::string> out;
  for (const auto& [key, below] : subtree) {
    for (const auto& [other, unused] : subtree) {
      if (!key.empty() && !below.contains(other) && other.find(key) != std::string::npos) out.insert(key);
    }
  }
  return out;
}

// Every node of `block`'s tree: its total equals find_total_for_module of its key (unless the
// key is ambiguous), a parent is never below a child, and a node counts at least one event.
// Returns how many nodes were compared with find_total_for_module.
size_t check_tree_against_find_total(const Inspector& in, size_t block) {
  const ModuleNode root = in.module_tree(block);
  const std::set<std::string> ambiguous = ambiguous_keys(root);
  size_t compared = 0;
  std::function<void(const ModuleNode&)> check = [&](const ModuleNode& n) {
    for (const ModuleNode& c : n.children) {
      INFO("module " << c.key << " (" << c.path << ") under " << (n.key.empty() ? "<root>" : n.key));
      CHECK(c.events > 0);
      CHECK(c.total > 0);
      CHECK(n.total >= c.total * (1 - 1e-12));
      CHECK(n.events >= c.events);
      if (!ambiguous.contains(c.key)) {
        CHECK(c.total == Approx(in.find_total_for_module(c.key)).epsilon(1e-9));
        ++compared;
      }
      check(c);
    }
  };
  check(root);
  return compared;
}

}  // namespace

TEST_CASE("module tree of a delegated ResNet-18 matches find_total_for_module for every module", "[inspector][modules]") {
  const Inspector in = build_delegated_resnet18();
  REQUIRE(in.blocks().size() == 1);
  const ModuleNode root = in.module_tree(0);
  // One DELEGATE_CALL spans every module; the fc kernel adds itself to fc and the model.
  REQUIRE(root.children.size() == 1);
  const ModuleNode& model = root.children[0];
  double delegate = 0, kernel = 0;
  for (const Event& e : in.blocks()[0].events) {
    if (e.kind() == events::EventClass::kDelegateCall) delegate = e.perf->avg;
    if (e.kind() == events::EventClass::kNativeCall) kernel = e.perf->avg;
  }
  REQUIRE(delegate > 0);
  CHECK(model.total == Approx(delegate + kernel));
  CHECK(model.events == 2);
  // Every block of every layer holds exactly the delegate call, counted once.
  size_t blocks = 0;
  for (const ModuleNode& layer : model.children) {
    if (layer.path.rfind("layer", 0) != 0) continue;
    REQUIRE(layer.children.size() == 2);
    for (const ModuleNode& b : layer.children) {
      INFO(b.path);
      CHECK(b.events == 1);
      CHECK(b.total == Approx(delegate));
      ++blocks;
    }
  }
  CHECK(blocks == 8);
  CHECK(check_tree_against_find_total(in, 0) > 60);
}

TEST_CASE("module tree matches find_total_for_module on the ExecuTorch fixtures", "[inspector][modules][conformance]") {
  for (const char* model : {"cifar10", "mobilenet_v2", "simple_conv_xnnpack"}) {
    const std::string base = std::string(model) + "/" + model;
    auto dump = etdump::EtDumpReader::open(fixture(base + ".etdp"));
    auto record = etrecord::EtRecordReader::open(fixture(base + ".etrecord"));
    INFO(model);
    REQUIRE(dump.ok());
    REQUIRE(record.ok());
    auto in = Inspector::build(std::make_shared<const etdump::EtDumpFile>(std::move(dump).value()),
                               std::make_shared<const etrecord::EtRecord>(std::move(record).value()), nullptr, {});
    REQUIRE(in.ok());
    size_t compared = 0, trees = 0;
    for (size_t b = 0; b < in->blocks().size(); ++b) {
      if (in->module_tree(b).children.empty()) continue;
      ++trees;
      compared += check_tree_against_find_total(*in, b);
    }
    CHECK(trees == 1);
    CHECK(compared >= 3);
  }
}

TEST_CASE("run time is Method::execute's avg, else the calls' sum without wrappers counted twice", "[inspector][run_time]") {
  const std::vector<Ev> with_execute{
      {"native_call_add.out", 0, 0, 110, 190},  // 80
      {events::kOperatorCall, 0, 0, 100, 200},  // 100, wraps the kernel
      {events::kOperatorCall, 0, 1, 200, 250},  // 50, a kernel without a codegen wrapper
      {events::kDelegateCall, 0, 2, 250, 400},  // 150
      {events::kMethodExecute, -1, 0, 90, 500},
  };
  InspectorOptions ns;
  ns.target = TimeScale::kNs;
  auto a = Inspector::build(make_dump(with_execute, 1), nullptr, nullptr, ns);
  REQUIRE(a.ok());
  const RunTime full = a->run_time(0);
  CHECK(full.source == RunTimeSource::kMethodExecute);
  CHECK(full.value == 410);
  CHECK(to_string(full.source) == "Method::execute avg");

  std::vector<Ev> without = with_execute;
  without.pop_back();
  auto b = Inspector::build(make_dump(without, 1), nullptr, nullptr, ns);
  REQUIRE(b.ok());
  const RunTime sum = b->run_time(0);
  CHECK(sum.source == RunTimeSource::kCallSum);
  CHECK(sum.value == 80 + 50 + 150);
  // Shares and the per-type summary divide by that same run time.
  const EventBlock& block = b->blocks()[0];
  CHECK(share_of_run(block.events[0], sum).value() == Approx(80.0 / 280.0));
  double shares = 0;
  for (const TypeSummary& t : b->summary_by_type(0)) {
    CHECK(t.share == Approx(t.total / sum.value));
    shares += t.share;
    CHECK(t.cumulative_share == Approx(shares));
  }
  CHECK_FALSE(share_of_run(block.events[0], RunTime{}).has_value());

  const std::vector<Ev> framework_only{{events::kMethodInit, -1, 0, 0, 10}};
  auto c = Inspector::build(make_dump(framework_only, 1), nullptr, nullptr, ns);
  REQUIRE(c.ok());
  CHECK(c->run_time(0).source == RunTimeSource::kNone);
  CHECK(c->run_time(0).value == 0);
  CHECK(c->run_time(7).source == RunTimeSource::kNone);
}

TEST_CASE("per-event totals are the sum of the samples", "[inspector]") {
  auto in = Inspector::build(make_dump({{"native_call_add.out", 0, 0, 100, 200}}, 4), nullptr, nullptr, {});
  REQUIRE(in.ok());
  const PerfData& p = *in->blocks()[0].events[0].perf;
  double sum = 0;
  for (double v : p.raw) sum += v;
  CHECK(p.raw.size() == 4);
  CHECK(p.total == sum);
  CHECK(p.total == Approx(p.avg * 4));
}

TEST_CASE("raw events lead to their Inspector event with its module texts and user frames", "[inspector][event_index]") {
  const Inspector in = build_delegated_resnet18();
  const EventIndex index(in);
  const etdump::EtDumpFile& dump = in.dump();
  for (uint32_t raw = 0; raw < dump.events.size(); ++raw) {
    const std::optional<EventRef> ref = index.locate(raw);
    REQUIRE(ref.has_value());
    const Event& e = in.blocks()[ref->block].events[ref->event];
    CHECK(index.find(raw) == &e);
    CHECK(e.name == dump.name_of(dump.events[raw]));
  }
  CHECK_FALSE(index.locate(static_cast<uint32_t>(dump.events.size())).has_value());
  CHECK(index.find(UINT32_MAX) == nullptr);

  const Event* kernel = nullptr;
  for (const Event& e : in.blocks()[0].events) {
    if (e.kind() == events::EventClass::kNativeCall) kernel = &e;
  }
  REQUIRE(kernel != nullptr);
  CHECK(module_path_text(*kernel) == "fc (Linear)");
  CHECK(innermost_module_text(*kernel) == "fc (Linear)");
  CHECK(short_type_name("torch.nn.modules.conv.Conv2d") == "Conv2d");
  CHECK(short_type_name("Conv2d") == "Conv2d");

  const std::string trace =
      "  File \"/home/me/model.py\", line 10, in forward\n    x = self.conv(x)\n"
      "  File \"/usr/lib/python3/site-packages/torch/nn/conv.py\", line 5, in forward\n    return F.conv2d(x)\n";
  CHECK(user_stack_frames(trace, 3) == "File \"/home/me/model.py\", line 10, in forward\n    x = self.conv(x)");
  const std::string torch_only = "  File \"/x/site-packages/a.py\", line 1, in f\n    a()\n  File \"/x/site-packages/b.py\", line 2, in g\n    b()\n";
  CHECK(user_stack_frames(torch_only, 1) == "File \"/x/site-packages/b.py\", line 2, in g\n    b()");
  CHECK(user_stack_frames("", 3).empty());
}

TEST_CASE("one classifier names every event the runtime and ExecuTorch emit", "[inspector][events]") {
  using events::EventClass;
  using events::classify;
  CHECK(classify(events::kMethodExecute, false) == EventClass::kFramework);
  CHECK(classify(events::kProgramLoadMethod, false) == EventClass::kFramework);
  CHECK(classify(events::kMethodInit, false) == EventClass::kFramework);
  CHECK(classify(events::kOperatorCall, false) == EventClass::kOperatorCall);
  CHECK(classify(events::kDelegateCall, false) == EventClass::kDelegateCall);
  CHECK(classify("native_call_convolution.out", false) == EventClass::kNativeCall);
  CHECK(classify("Convolution (NHWC, F32) IGEMM #1", true) == EventClass::kDelegateOp);
  CHECK(classify(events::kDelegateCall, true) == EventClass::kDelegateOp);
  CHECK(classify(events::kMethodStep, false) == EventClass::kOther);
  CHECK(classify(events::kJumpFalseCall, false) == EventClass::kOther);
  CHECK(classify("my::custom.out", false) == EventClass::kOther);
  CHECK(events::native_call_op("native_call_add.out") == "add.out");
  CHECK(events::native_call_op("OPERATOR_CALL") == "OPERATOR_CALL");
  CHECK(events::native_call_name("aten::convolution", "out") == "native_call_convolution.out");
  CHECK(events::native_call_name("relu", "") == "native_call_relu");
  CHECK(events::category_name(EventClass::kDelegateOp) == "delegate");
  static_assert(classify("native_call_add.out", false) == EventClass::kNativeCall);
}
