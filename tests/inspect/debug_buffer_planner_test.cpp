// DebugBufferPlanner: the ETDump debug-buffer bytes one execution needs, worked out by hand.
#include <catch2/catch.hpp>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>

#include "crafted_programs.h"
#include "etscope/inspect/debug_buffer_planner.h"
#include "etscope/inspect/greedy_planner.h"

using namespace etscope;
using namespace etscope::inspect;
using etscope::testing::crafted_kernel;
using etscope::testing::crafted_tensor;

TEST_CASE("debug buffer: every kernel output / delegate argument and output / 64-byte aligned",
          "[inspect][debug_buffer]") {
  ExecutionPlan plan;
  plan.name = "forward";
  plan.values = {
      crafted_tensor({3}, Allocation{1, 0}),                     // 0 x   12 B
      crafted_tensor({5}, Allocation{1, 16}),                    // 1 y   20 B
      crafted_tensor({0}, Allocation{1, 48}),                    // 2 z    0 B
      crafted_tensor({2}, Allocation{1, 48}),                    // 3 a    8 B
      crafted_tensor({3}, Allocation{1, 64}, ScalarType::kLong), // 4 b   24 B
  };
  Value list;
  list.kind = ValueKind::kTensorList;
  list.tensor_list = {3, 4};
  plan.values.push_back(list);  // 5 [a, b]
  Value one;
  one.kind = ValueKind::kInt;
  one.int_value = 1;
  plan.values.push_back(one);   // 6
  plan.inputs = {0};
  plan.outputs = {3, 4};
  plan.operators = {{"aten::relu", "out"}, {"aten::max_pool2d_with_indices", "out"}};
  Instruction delegate;
  delegate.kind = InstructionKind::kDelegateCall;
  delegate.delegate_index = 0;
  delegate.args = {1, 2};
  Chain chain;
  chain.instructions = {crafted_kernel(0, {0, 1, 1}), crafted_kernel(1, {1, 6, 3, 4, 5}), delegate};
  plan.chains = {chain};
  Delegate d;
  d.id = "TestBackend";
  d.inline_data = true;
  plan.delegates = {d};
  plan.non_const_buffer_sizes = {0, 96};
  ProgramSpec spec;
  spec.plans = {plan};
  spec.delegate_blobs = {std::vector<uint8_t>(4, 1)};
  auto bytes = PteWriter::write(spec);
  REQUIRE(bytes.ok());
  auto program = PteReader::read(etscope::testing::blob_of(*bytes, "debug.pte"));
  REQUIRE(program.ok());

  DebugBufferPlan p = DebugBufferPlanner::plan(program->plans.at(0));
  // y at 0 (ends 20); a at 64 (72); b at 128 (152); the delegate's y at 192 (212) and empty z
  // takes nothing; outputs a at 256 (264), b at 320 (344).
  const auto& e = p.intermediate.entries;
  REQUIRE(e.size() == 7);
  CHECK(e[0].value == 1);
  CHECK(e[0].offset == 0);
  CHECK(e[1].value == 3);
  CHECK(e[1].offset == 64);
  CHECK(e[2].value == 4);
  CHECK(e[2].offset == 128);
  CHECK(e[3].value == 1);
  CHECK(e[3].step == 2);
  CHECK(e[3].offset == 192);
  CHECK(e[4].value == 2);
  CHECK(e[4].nbytes == 0);
  CHECK(e[5].output);
  CHECK(e[5].offset == 256);
  CHECK(e[6].offset == 320);
  CHECK(p.intermediate.bytes_needed == 344);
  CHECK(p.intermediate.data_bytes == 20 + 8 + 24 + 20 + 0 + 8 + 24);
  // Program outputs only: a at 0 (8), b at 64 (88).
  CHECK(p.program_outputs.entries.size() == 2);
  CHECK(p.program_outputs.bytes_needed == 88);
}

TEST_CASE("debug buffer for real programs", "[inspect][debug_buffer]") {
  auto program = PteReader::open(etscope::testing::real_artifact("maxpool2d.pte"));
  REQUIRE(program.ok());
  DebugBufferPlan p = DebugBufferPlanner::plan(program->plans.at(0));
  // Values 802816 B at 0, indices 1605632 B at 802816, output values again at 2408448: all
  // sizes are multiples of 64.
  CHECK(p.intermediate.entries.size() == 3);
  CHECK(p.intermediate.bytes_needed == 802816 + 1605632 + 802816);
  CHECK(p.program_outputs.bytes_needed == 802816);

  auto add = PteReader::open(etscope::testing::real_artifact("add.pte"));
  REQUIRE(add.ok());
  DebugBufferPlan q = DebugBufferPlanner::plan(add->plans.at(0));
  CHECK(q.intermediate.bytes_needed == 64 + 4);
  CHECK(q.program_outputs.bytes_needed == 4);
}

namespace {

// Offsets of every tensor ExecuTorch wrote to the debug buffer, in logging order, from an
// ETDump rendered as JSON (etdump.json in the fixtures).
void collect_offsets(const nlohmann::json& j, std::vector<int64_t>& out) {
  if (j.is_object()) {
    if (j.contains("debug_event") && j["debug_event"].is_object()) {
      const auto& entry = j["debug_event"]["debug_entry"];
      if (entry.is_object()) {
        if (entry.contains("tensor") && entry["tensor"].is_object()) out.push_back(entry["tensor"]["offset"].get<int64_t>());
        if (entry.contains("tensor_list") && entry["tensor_list"].is_object()) {
          for (const auto& t : entry["tensor_list"]["tensors"]) out.push_back(t["offset"].get<int64_t>());
        }
      }
      return;
    }
    for (const auto& [key, value] : j.items()) collect_offsets(value, out);
  } else if (j.is_array()) {
    for (const auto& value : j) collect_offsets(value, out);
  }
}

std::optional<nlohmann::json> read_json(const std::string& path) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  std::stringstream ss;
  ss << in.rdbuf();
  auto j = nlohmann::json::parse(ss.str(), nullptr, false);
  if (j.is_discarded()) return std::nullopt;
  return j;
}

}  // namespace

TEST_CASE("debug buffer layout agrees with the buffers ExecuTorch filled", "[inspect][debug_buffer][fixtures]") {
  // The fixtures ran each model 10 times at intermediate level; etdump.json lists where each
  // logged tensor went. The buffer itself need not start 64-aligned, so ExecuTorch's first
  // offset is where an aligned layout starts; after that every offset must be ours.
  size_t checked = 0;
  for (const char* model : {"simple_conv", "simple_conv_xnnpack", "cifar10", "mobilenet_v2"}) {
    const std::string dir = std::string(model) + "/" + model;
    auto program = PteReader::open(etscope::testing::fixture(dir + ".pte"));
    auto run = read_json(etscope::testing::fixture(dir + ".run.json"));
    auto etdump = read_json(etscope::testing::fixture(dir + ".etdump.json"));
    if (!program.ok() || !run || !etdump || !run->contains("intermediate")) {
      WARN("fixture " << model << " not available; skipped");
      continue;
    }
    const auto executions = (*run)["intermediate"]["executions"].get<size_t>();
    std::vector<int64_t> recorded;
    collect_offsets(*etdump, recorded);
    DebugBufferPlan p = DebugBufferPlanner::plan(program->plans.at(0));
    INFO(model << ": " << recorded.size() << " tensors logged over " << executions << " runs");
    REQUIRE(recorded.size() == p.intermediate.entries.size() * executions);
    if (recorded.empty()) continue;
    REQUIRE(recorded.front() >= 0);
    const auto base = static_cast<uint64_t>(recorded.front());
    CHECK(base % 16 == 0);
    // Our layout of `executions` runs back to back, shifted to ExecuTorch's first offset. Empty
    // tensors are logged with offset -1 and take no space.
    std::vector<int64_t> ours;
    uint64_t end = 0;
    for (size_t run_index = 0; run_index < executions; ++run_index) {
      for (const DebugBufferEntry& e : p.intermediate.entries) {
        if (e.nbytes == 0) {
          ours.push_back(-1);
          continue;
        }
        const uint64_t at = round_up(end, p.alignment);
        ours.push_back(static_cast<int64_t>(base + at));
        end = at + e.nbytes;
      }
    }
    size_t mismatches = 0;
    for (size_t i = 0; i < ours.size(); ++i) mismatches += ours[i] != recorded[i] ? 1 : 0;
    CHECK(mismatches == 0);
    CHECK(DebugBufferPlanner::bytes_for(p.intermediate, executions) == end);
    // The buffer ExecuTorch filled holds at least that much.
    CHECK((*run)["intermediate"]["debug_buffer_size"].get<uint64_t>() >= base + end);
    ++checked;
  }
  if (checked == 0) WARN("no ETDump debug-buffer fixtures yet; skipped");
}
