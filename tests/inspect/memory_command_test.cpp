// `etscope memory` end to end: exit codes, text, --json, --svg and --chrome-trace files.
#include <catch2/catch.hpp>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "crafted_programs.h"

using etscope::testing::real_artifact;
using etscope::testing::run_etscope;

namespace {

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string write_crafted(const std::string& dir, const std::string& name, const etscope::ExecutionPlan& plan) {
  const std::string path = dir + "/" + name;
  auto bytes = etscope::testing::crafted_bytes(plan);
  std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(bytes.data()),
                                              static_cast<std::streamsize>(bytes.size()));
  return path;
}

size_t count(const std::string& haystack, const std::string& needle) {
  size_t n = 0;
  for (size_t at = haystack.find(needle); at != std::string::npos; at = haystack.find(needle, at + 1)) ++n;
  return n;
}

}  // namespace

TEST_CASE("etscope memory prints the arena table / largest tensors and a map", "[cli][memory]") {
  auto r = run_etscope("memory " + real_artifact("add.pte"));
  REQUIRE(r.exit_code == 0);
  CHECK(r.err.empty());
  CHECK_THAT(r.out, Catch::Contains("method forward: 1 instructions"));
  CHECK_THAT(r.out, Catch::Contains("  #1          48 B        48 B         0  100.0%        12 B        36 B"));
  CHECK_THAT(r.out, Catch::Contains("%2     f32[1]"));
  CHECK_THAT(r.out, Catch::Contains("intermediate outputs        68 B"));
  CHECK_THAT(r.out, Catch::Contains("arena 1 map: 48 B"));
  CHECK_THAT(r.out, Catch::Contains("<- peak"));
}

TEST_CASE("etscope memory folds long timelines and skips methods without memory", "[cli][memory]") {
  auto r = run_etscope("memory --top 3 " + real_artifact("xor_training.pte"));
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.out, Catch::Contains("4 methods, 1 with planned memory"));
  CHECK_THAT(r.out, Catch::Contains("one row per 2 steps"));
  CHECK(count(r.out, "activation  %") + count(r.out, "weight      %") == 3);
}

TEST_CASE("etscope memory --json has the documented shape", "[cli][memory][json]") {
  auto r = run_etscope("memory --json " + real_artifact("xor_training.pte"));
  REQUIRE(r.exit_code == 0);
  auto j = nlohmann::json::parse(r.out);
  REQUIRE(j["plans"].size() == 1);
  const auto& p = j["plans"][0];
  CHECK(p["name"] == "forward");
  CHECK(p["instruction_count"] == 66);
  CHECK(p["arenas"][0]["size"] == 624);
  CHECK(p["arenas"][0]["peak_bytes"] == 560);
  CHECK(p["arenas"][0]["peak_step"] == 34);
  CHECK(p["tensors"].size() == 72);
  CHECK(p["tensors"][0]["role"] == "weight");
  CHECK(p["tensors"][0]["lifetime"]["start"] == -1);
  CHECK(p["conflicts"].empty());
  CHECK(p["largest"].size() == 10);
  CHECK(p["debug_buffer"]["alignment"] == 64);
  CHECK(p["debug_buffer"]["intermediate"]["tensors"] == 76);
  CHECK(p["step_labels"].size() == 66);
}

TEST_CASE("etscope memory --svg and --chrome-trace write their files", "[cli][memory]") {
  const std::string dir = etscope::testing::temp_dir("memory_cli_files");
  auto r = run_etscope("memory --plan forward --svg " + dir + "/xor.svg --chrome-trace " + dir + "/xor.json " +
                       real_artifact("xor_training.pte"));
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.out, Catch::Contains("wrote " + dir + "/xor.svg (method forward)"));
  std::string svg = slurp(dir + "/xor.svg");
  CHECK(count(svg, "<rect class=\"tensor\"") == 72);
  auto trace = nlohmann::json::parse(slurp(dir + "/xor.json"));
  CHECK(trace["traceEvents"].size() == 878);
  CHECK_THAT(r.out, Catch::Contains("878 events"));
}

TEST_CASE("etscope memory reports bad allocation info as errors and exits 1", "[cli][memory][errors]") {
  const std::string dir = etscope::testing::temp_dir("memory_cli_bad");
  const std::string zero = write_crafted(dir, "zero.pte", etscope::testing::chain_plan({0, 0}, {1, 16}, {1, 32}));
  auto r = run_etscope("memory " + zero);
  CHECK(r.exit_code == 1);
  CHECK(count(r.err, "memory_id 0 is not a valid arena id") == 1);  // Reader and plan agree: once.
  CHECK_THAT(r.out, Catch::Contains("1 with invalid placement"));

  const std::string beyond = write_crafted(dir, "beyond.pte", etscope::testing::chain_plan({1, 0}, {1, 16}, {1, 40}));
  r = run_etscope("memory --json " + beyond);
  CHECK(r.exit_code == 1);
  CHECK_THAT(r.err, Catch::Contains("extend beyond arena 1 (48 bytes)"));
  auto j = nlohmann::json::parse(r.out);  // stdout stays valid JSON
  CHECK(j["plans"][0]["problems"].size() == 1);
}

TEST_CASE("etscope memory prints CONFLICT lines for overlapping live tensors", "[cli][memory][errors]") {
  const std::string dir = etscope::testing::temp_dir("memory_cli_conflict");
  const std::string path = write_crafted(dir, "conflict.pte", etscope::testing::chain_plan({1, 0}, {1, 8}, {1, 32}));
  auto r = run_etscope("memory " + path);
  CHECK(r.exit_code == 1);
  CHECK_THAT(r.err, Catch::StartsWith("CONFLICT: "));
  CHECK_THAT(r.err, Catch::Contains("values 0 and 1 overlap on bytes [8, 16) of arena 1"));
  CHECK_THAT(r.out, Catch::Contains("conflicts: 1  <-- BROKEN PLAN"));

  const std::string alias = write_crafted(dir, "alias.pte", etscope::testing::chain_plan({1, 0}, {1, 0}, {1, 16}, 32));
  r = run_etscope("memory " + alias);
  CHECK(r.exit_code == 0);
  CHECK(r.err.empty());
  CHECK_THAT(r.out, Catch::Contains("arena 1 @ 0  aliases: %0 (start..1), %1 (0..1)"));
}

TEST_CASE("etscope memory rejects unknown methods and unreadable files", "[cli][memory][errors]") {
  auto r = run_etscope("memory --plan nope " + real_artifact("add.pte"));
  CHECK(r.exit_code == 1);
  CHECK_THAT(r.err, Catch::Contains("no method named 'nope' (methods: forward)"));
  r = run_etscope("memory " + real_artifact("xor_training.ptd"));
  CHECK(r.exit_code == 1);
  CHECK_THAT(r.err, Catch::StartsWith("etscope: "));
}

TEST_CASE("etscope memory shows an LLM's KV caches as buffers live over the whole method (issue 28)", "[cli][memory][issue28]") {
  const std::string pte = etscope::testing::fixture("models/kv_cache_decoder.pte");
  auto r = run_etscope("memory --json " + pte);
  REQUIRE(r.exit_code == 0);
  const auto j = nlohmann::json::parse(r.out);
  size_t buffers = 0;
  for (const auto& t : j["plans"][0]["tensors"]) {
    if (t["value"] != 12 && t["value"] != 13) continue;
    CHECK(t["role"] == "buffer");
    CHECK(t["lifetime"]["start"] == -1);
    CHECK(t["lifetime"]["end"] == 73);
    ++buffers;
  }
  CHECK(buffers == 2);
  auto text = run_etscope("memory " + pte);
  CHECK_THAT(text.out, Catch::Contains("note: 2 planned tensors are read before any instruction writes them"));
}
