// Every .pte, .ptd and .bpte that samples/export made with ExecuTorch 1.5 (tests/fixtures/
// executorch, listed in its index.json) reads cleanly, and each program's structure equals the
// facts ExecuTorch's own Python deserializer recorded in the matching *.facts.json.
#include <catch2/catch.hpp>
#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>

#include "etscope/formats/bpte_reader.h"
#include "etscope/formats/ptd_reader.h"
#include "etscope/formats/pte_reader.h"
#include "testing/test_json.h"
#include "testing/test_util.h"

using namespace etscope;
using etscope::testing::fixture;
using etscope::testing::load_json;
using nlohmann::json;

namespace {

std::string upper(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  return s;
}

// ExecuTorch's Python names for value kinds.
std::string python_kind(ValueKind k) {
  return k == ValueKind::kNone ? "Null" : to_string(k);
}

std::vector<std::string> files_with_extension(const json& index, const std::string& ext) {
  std::vector<std::string> out;
  for (const auto& f : index["files"]) {
    const std::string path = f["path"];
    if (path.size() > ext.size() && path.compare(path.size() - ext.size(), ext.size(), ext) == 0) out.push_back(path);
  }
  return out;
}

}  // namespace

TEST_CASE("every fixture program / tensor-data file and bundled program reads cleanly", "[fixtures]") {
  const json index = load_json(fixture("index.json"));
  size_t checked = 0;
  for (const std::string& rel : files_with_extension(index, ".pte")) {
    INFO(rel);
    auto p = PteReader::open(fixture(rel));
    if (!p.ok()) FAIL(p.error().message());
    CHECK(p->problems.empty());
    ++checked;
  }
  for (const std::string& rel : files_with_extension(index, ".ptd")) {
    INFO(rel);
    auto f = PtdReader::open(fixture(rel));
    if (!f.ok()) FAIL(f.error().message());
    CHECK_FALSE(f->entries.empty());
    ++checked;
  }
  for (const std::string& rel : files_with_extension(index, ".bpte")) {
    INFO(rel);
    auto b = BpteReader::open(fixture(rel));
    if (!b.ok()) FAIL(b.error().message());
    REQUIRE(b->suites.size() >= 1);
    CHECK(b->suites[0].cases.size() == 2);
    ++checked;
  }
  CHECK(checked >= 20);
}

TEST_CASE("fixture programs match the facts ExecuTorch's deserializer recorded", "[fixtures]") {
  const json index = load_json(fixture("index.json"));
  size_t programs = 0;
  for (const std::string& rel : files_with_extension(index, ".facts.json")) {
    INFO(rel);
    const json facts = load_json(fixture(rel));
    const std::string dir = std::filesystem::path(rel).parent_path().string();
    // Training facts name their program; inference facts sit next to <name>.pte.
    const std::string stem = std::filesystem::path(rel).filename().string();
    const std::string pte_name = facts.contains("files") ? facts["files"]["pte"].get<std::string>()
                                                         : stem.substr(0, stem.size() - std::string(".facts.json").size()) + ".pte";
    auto read = PteReader::open(fixture(dir + "/" + pte_name));
    if (!read.ok()) FAIL(read.error().message());
    const Program& p = *read;
    ++programs;
    CHECK(p.file_size == facts["file_size"].get<uint64_t>());
    if (facts["extended_header"].is_null()) {
      CHECK_FALSE(p.header.has_value());
    } else {
      REQUIRE(p.header.has_value());
      CHECK(p.header->program_size == facts["extended_header"]["program_size"].get<uint64_t>());
      CHECK(p.header->segment_base_offset == facts["extended_header"]["segment_base_offset"].get<uint64_t>());
      CHECK(p.header->segment_data_size == facts["extended_header"]["segment_data_size"].get<uint64_t>());
    }
    REQUIRE(p.segments_relative.size() == facts["segments"].size());
    for (size_t s = 0; s < p.segments_relative.size(); ++s) {
      CHECK(p.segments_relative[s].offset == facts["segments"][s]["offset"].get<uint64_t>());
      CHECK(p.segments_relative[s].size == facts["segments"][s]["size"].get<uint64_t>());
    }
    CHECK(p.constant_offsets == facts["raw_constant_segment_offsets"].get<std::vector<uint64_t>>());
    REQUIRE(p.plans.size() == facts["execution_plans"].size());
    for (size_t i = 0; i < p.plans.size(); ++i) {
      const ExecutionPlan& plan = p.plans[i];
      const json& fp = facts["execution_plans"][i];
      INFO("plan " << plan.name);
      CHECK(plan.name == fp["name"].get<std::string>());
      CHECK(plan.values.size() == fp["num_values"].get<size_t>());
      std::map<std::string, size_t> kinds;
      for (const Value& v : plan.values) ++kinds[python_kind(v.kind)];
      CHECK(kinds == fp["value_type_counts"].get<std::map<std::string, size_t>>());
      CHECK(plan.non_const_buffer_sizes == fp["non_const_buffer_sizes"].get<std::vector<int64_t>>());
      REQUIRE(plan.inputs.size() == fp["inputs"].size());
      for (size_t k = 0; k < plan.inputs.size(); ++k) {
        const json& fi = fp["inputs"][k];
        CHECK(plan.inputs[k] == fi["value_index"].get<int32_t>());
        const Value& v = plan.values[static_cast<size_t>(plan.inputs[k])];
        if (v.kind == ValueKind::kTensor) {
          CHECK(upper(scalar_type_name(v.tensor.dtype)) == fi["scalar_type"].get<std::string>());
          CHECK(v.tensor.sizes == fi["sizes"].get<std::vector<int32_t>>());
        }
      }
      REQUIRE(plan.outputs.size() == fp["outputs"].size());
      for (size_t k = 0; k < plan.outputs.size(); ++k) CHECK(plan.outputs[k] == fp["outputs"][k]["value_index"].get<int32_t>());
      REQUIRE(plan.instruction_count() == fp["num_instructions"].get<size_t>());
      const auto& instructions = plan.chains.at(0).instructions;
      for (size_t k = 0; k < instructions.size(); ++k) {
        const json& fi = fp["instructions"][k];
        const Instruction& in = instructions[k];
        CHECK(std::string(to_string(in.kind)) == fi["kind"].get<std::string>());
        if (in.kind == InstructionKind::kKernelCall) {
          CHECK(plan.operators[static_cast<size_t>(in.op_index)].qualified_name() == fi["op"].get<std::string>());
        }
        if (fi.contains("args")) CHECK(in.args == fi["args"].get<std::vector<int32_t>>());
      }
      REQUIRE(plan.delegates.size() == fp["delegates"].size());
    }
  }
  CHECK(programs >= 9);
}
