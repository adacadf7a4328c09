// The SVG and Chrome-trace writers, and agreement with traces written by ExecuTorch's own
// activation memory profiler when the reference fixtures hold them.
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <tuple>

#include "crafted_programs.h"
#include "etscope/inspect/memory_chrome_trace.h"
#include "etscope/inspect/memory_plan.h"
#include "etscope/inspect/memory_svg.h"

#include "testing/test_util.h"

using namespace etscope;
using namespace etscope::inspect;

namespace {

MemoryPlan plan_of(const Program& program, size_t index = 0) {
  auto m = MemoryPlan::build(program, program.plans.at(index));
  if (!m.ok()) FAIL(m.error().message());
  return std::move(m).value();
}

Program open_real(const std::string& name) {
  auto p = PteReader::open(etscope::testing::real_artifact(name));
  if (!p.ok()) FAIL(p.error().message());
  return std::move(p).value();
}

size_t count(const std::string& haystack, const std::string& needle) {
  size_t n = 0;
  for (size_t at = haystack.find(needle); at != std::string::npos; at = haystack.find(needle, at + 1)) ++n;
  return n;
}

}  // namespace

TEST_CASE("chrome trace of add.pte follows the activation memory profiler's format", "[inspect][trace]") {
  Program program = open_real("add.pte");
  MemoryPlan m = plan_of(program);
  auto j = nlohmann::json::parse(memory_chrome_trace(m));
  const auto& events = j.at("traceEvents");
  // Steps start, 0, end hold 2, 3 and 1 tensors.
  REQUIRE(events.size() == 6);
  CHECK(memory_chrome_trace_event_count(m) == 6);
  const auto& first = events[0];
  CHECK(first["name"] == "%0 input 0");
  CHECK(first["cat"] == "memory_allocation");
  CHECK(first["ph"] == "X");
  CHECK(first["ts"] == 0);
  CHECK(first["dur"] == 4);
  CHECK(first["pid"] == 1);
  CHECK(first["tid"] == 0);
  CHECK(first["args"]["op_name"] == "input");
  CHECK(first["args"]["Memory ID"] == 1);
  CHECK(first["args"]["fqn"] == "");
  CHECK(first["args"]["source"] == "None");
  CHECK(first["args"]["bytes"] == 4);
  CHECK(events[2]["tid"] == 1);
  CHECK(events[4]["name"] == "%2 aten::add.out");
  CHECK(events[4]["ts"] == 32);
  CHECK(events[5]["tid"] == 2);
}

TEST_CASE("chrome trace of xor_training.pte stays inside the arena", "[inspect][trace]") {
  Program program = open_real("xor_training.pte");
  MemoryPlan m = plan_of(program);
  auto j = nlohmann::json::parse(memory_chrome_trace(m));
  const auto& events = j.at("traceEvents");
  size_t expected = 0;
  for (const PlannedTensor& t : m.tensors()) expected += static_cast<size_t>(t.lifetime.end - t.lifetime.start + 1);
  CHECK(events.size() == expected);
  int64_t last_tid = 0;
  for (const auto& e : events) {
    CHECK(e["ts"].get<uint64_t>() + e["dur"].get<uint64_t>() <= 624);
    CHECK(e["pid"] == 1);
    CHECK(e["tid"].get<int64_t>() >= last_tid);
    last_tid = e["tid"].get<int64_t>();
  }
  CHECK(last_tid == 67);  // Steps start..end, none empty.
}

TEST_CASE("SVG has one titled rectangle per planned tensor / a legend and the peak", "[inspect][svg]") {
  Program program = open_real("xor_training.pte");
  MemoryPlan m = plan_of(program);
  std::string svg = memory_svg(m, MemorySvgOptions{1200, 800, "xor_training.pte"});
  CHECK(svg.rfind("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"1200\" height=\"800\"", 0) == 0);
  CHECK(count(svg, "<rect class=\"tensor\"") == 72);
  CHECK(count(svg, "<title>") == 72);
  CHECK_THAT(svg, Catch::Contains("<title>%0 net.linear.weight\nvalue %0 (weight, net.linear.weight)\n"
                                  "f32[10,2], 80 bytes\narena 1 [320, 400)\nlive steps -1..66</title>"));
  CHECK(count(svg, "class=\"peak\"") == 1);
  CHECK_THAT(svg, Catch::Contains("peak 560 B at step 34"));
  for (const char* role : {"input", "weight", "gradient", "output", "activation"}) {
    CHECK_THAT(svg, Catch::Contains(std::string(">") + role + "</text>"));
  }
  CHECK_THAT(svg, Catch::Contains("byte offset in arena"));
  CHECK_THAT(svg, Catch::Contains("instruction step"));
  CHECK(svg.substr(svg.size() - 7) == "</svg>\n");
}

TEST_CASE("SVG outlines conflicting tensors and escapes names", "[inspect][svg]") {
  Program p = etscope::testing::crafted_program(etscope::testing::chain_plan({1, 0}, {1, 8}, {1, 32}));
  MemoryPlan m = plan_of(p);
  std::string svg = memory_svg(m, MemorySvgOptions{1200, 800, "a<b>&\"c\".pte"});
  CHECK_THAT(svg, Catch::Contains("1 conflict(s)"));
  CHECK(count(svg, "stroke=\"#d62728\" stroke-width=\"2\">") == 2);
  CHECK_THAT(svg, Catch::Contains("a&lt;b&gt;&amp;&quot;c&quot;.pte"));
}

TEST_CASE("SVG titles fit the picture however long", "[inspect][svg]") {
  Program program = open_real("xor_training.pte");
  MemoryPlan m = plan_of(program);
  // A short title is left as it is, from the left edge.
  const std::string short_svg = memory_svg(m, MemorySvgOptions{1200, 800, "x.pte"});
  CHECK_THAT(short_svg, Catch::Contains("<text class=\"title\" x=\"12\" y=\"24\" font-size=\"16\" font-weight=\"bold\">x.pte: method"));
  // A long one in a narrow picture is squeezed to the width less the margins.
  const std::string path = "/home/someone/projects/a-rather-long-directory-name/exports/2026-11-25/model_v3_final.pte";
  const std::string svg = memory_svg(m, MemorySvgOptions{400, 300, path});
  CHECK_THAT(svg, Catch::Contains("textLength=\"376.00\" lengthAdjust=\"spacingAndGlyphs\">" + path + ": method 'forward'"));
}

namespace {

namespace fs = std::filesystem;

struct TraceAllocation {
  std::string name;
  uint32_t mem_id = 0;
  uint64_t offset = 0;
  uint64_t bytes = 0;
  int64_t first_tid = 0;
  int64_t last_tid = 0;
};

// The distinct allocations of a memory trace (one per name and placement) with the range of
// timestep ordinals they appear in. Returns false when the trace was written without memory
// offsets: then every timestep's ts values are running sums of the durations before them.
bool read_trace(const nlohmann::json& j, std::vector<TraceAllocation>& out) {
  std::map<int64_t, uint64_t> running;
  bool running_sums = true;
  std::map<std::tuple<std::string, uint32_t, uint64_t, uint64_t>, size_t> index;
  for (const auto& e : j["traceEvents"]) {
    if (!e.contains("ts") || !e.contains("dur") || !e.contains("pid") || !e.contains("tid")) continue;
    const auto tid = e["tid"].get<int64_t>();
    const auto ts = e["ts"].get<uint64_t>(), dur = e["dur"].get<uint64_t>();
    if (running[tid] != ts) running_sums = false;
    running[tid] += dur;
    auto key = std::make_tuple(e.value("name", std::string()), e["pid"].get<uint32_t>(), ts, dur);
    auto it = index.find(key);
    if (it == index.end()) {
      index.emplace(key, out.size());
      out.push_back(TraceAllocation{std::get<0>(key), std::get<1>(key), ts, dur, tid, tid});
    } else {
      out[it->second].last_tid = std::max(out[it->second].last_tid, tid);
      out[it->second].first_tid = std::min(out[it->second].first_tid, tid);
    }
  }
  return !running_sums;
}

// Traces live in the fixture folders, committed raw or unpacked from large.tar.xz into the build
// tree at configure time (tests/CMakeLists.txt).
std::vector<fs::path> fixture_roots() {
  std::vector<fs::path> roots;
  for (const std::string& dir : {etscope::testing::fixture_dir(), etscope::testing::fixture_extracted_dir()}) {
    if (fs::exists(dir)) roots.push_back(dir);
  }
  return roots;
}

// The program a trace describes: "<stem>.<anything>.json" describes "<stem>.pte" in the same
// folder, raw or extracted.
std::optional<fs::path> program_for(const fs::path& trace, const std::vector<fs::path>& roots) {
  const std::string file = trace.filename().string();
  const std::string stem = file.substr(0, file.find('.'));
  const fs::path folder = trace.parent_path().filename();
  for (const fs::path& root : roots) {
    fs::path candidate = root / folder / (stem + ".pte");
    if (fs::exists(candidate)) return candidate;
  }
  return std::nullopt;
}

}  // namespace

TEST_CASE("planned offsets / sizes and lifetimes agree with ExecuTorch's memory traces", "[inspect][trace][fixtures]") {
  const auto roots = fixture_roots();
  size_t checked = 0;
  std::set<std::string> seen;
  for (const fs::path& root : roots) {
    for (const auto& entry : fs::recursive_directory_iterator(root)) {
      const std::string file = entry.path().filename().string();
      if (!entry.is_regular_file() || file.find("memory_trace") == std::string::npos ||
          entry.path().extension() != ".json" || !seen.insert(file).second) {
        continue;
      }
      std::ifstream in(entry.path());
      std::stringstream ss;
      ss << in.rdbuf();
      auto j = nlohmann::json::parse(ss.str(), nullptr, false);
      if (j.is_discarded() || !j.is_object() || !j.contains("traceEvents")) {
        WARN(entry.path() << " is not a complete Chrome trace; skipped");
        continue;
      }
      std::vector<TraceAllocation> allocations;
      if (!read_trace(j, allocations)) continue;  // Written without memory offsets.
      auto pte = program_for(entry.path(), roots);
      if (!pte) {
        WARN("no .pte for memory trace " << entry.path() << "; skipped");
        continue;
      }
      INFO(entry.path().string() << " vs " << pte->string());
      auto program = PteReader::open(pte->string());
      if (!program.ok() && pte->string().find(etscope::testing::fixture_dir()) != 0) {
        WARN("extracted " << *pte << " does not read (" << program.error().message() << "); skipped");
        continue;
      }
      REQUIRE(program.ok());
      const ExecutionPlan* forward = program->find_plan("forward");
      REQUIRE(forward != nullptr);
      auto built = MemoryPlan::build(*program, *forward);
      REQUIRE(built.ok());
      const MemoryPlan& m = *built;
      CHECK(m.conflicts().empty());

      // Every allocation ExecuTorch lists is a planned tensor here, at the same place and size.
      // A slot reused over time holds several; pair the k-th of ExecuTorch's (by first
      // timestep) with our k-th (by first step).
      std::map<std::tuple<uint32_t, uint64_t, uint64_t>, std::vector<size_t>> theirs_by_slot, ours_by_slot;
      for (size_t a = 0; a < allocations.size(); ++a) {
        const TraceAllocation& t = allocations[a];
        if (t.bytes == 0) continue;  // Empty tensors take no bytes; which ones get listed differs.
        theirs_by_slot[{t.mem_id, t.offset, t.bytes}].push_back(a);
      }
      for (size_t i = 0; i < m.tensors().size(); ++i) {
        const PlannedTensor& p = m.tensors()[i];
        if (p.placed && !p.lifetime.empty() && p.view_of < 0 && p.nbytes > 0) ours_by_slot[{p.memory_id, p.offset, p.nbytes}].push_back(i);
      }
      std::vector<const PlannedTensor*> ours(allocations.size(), nullptr);
      for (auto& [slot, list] : theirs_by_slot) {
        INFO("slot [" << std::get<1>(slot) << ", +" << std::get<2>(slot) << ") of arena " << std::get<0>(slot));
        auto found = ours_by_slot.find(slot);
        REQUIRE(found != ours_by_slot.end());
        std::vector<size_t>& mine = found->second;
        CHECK(mine.size() == list.size());
        std::stable_sort(list.begin(), list.end(),
                         [&](size_t a, size_t b) { return allocations[a].first_tid < allocations[b].first_tid; });
        std::stable_sort(mine.begin(), mine.end(), [&](size_t a, size_t b) {
          return m.tensors()[a].lifetime.start < m.tensors()[b].lifetime.start;
        });
        for (size_t k = 0; k < list.size() && k < mine.size(); ++k) {
          const PlannedTensor& p = m.tensors()[mine[k]];
          ours[list[k]] = &p;
          // ExecuTorch names the op "aten.convolution.out"; we name the kernel "aten::convolution.out".
          const std::string& name = allocations[list[k]].name;
          INFO("ExecuTorch " << name << " paired with " << p.name);
          if (p.producer >= 0 && name.rfind("aten_", 0) == 0) {
            // "aten_permute_copy_default_8" -> op family "permute_copy"; ours "aten::permute_copy.out".
            std::string family = p.op_name.substr(p.op_name.find("::") + 2);
            family = family.substr(0, family.find('.'));
            CHECK(name.find(family) != std::string::npos);
          }
        }
      }
      // Lifetimes: instruction steps compress the planner's node order, so compare orderings:
      // one allocation that ExecuTorch ends before another starts must not start after it here.
      for (size_t a = 0; a < allocations.size(); ++a) {
        for (size_t b = 0; b < allocations.size(); ++b) {
          if (!ours[a] || !ours[b] || ours[a] == ours[b]) continue;
          if (allocations[a].last_tid < allocations[b].first_tid) {
            INFO(allocations[a].name << " ends before " << allocations[b].name << " starts");
            CHECK(ours[a]->lifetime.start <= ours[b]->lifetime.start);
          }
        }
      }
      ++checked;
    }
  }
  if (checked == 0) WARN("no ExecuTorch memory traces with offsets in the fixtures yet; skipped");
  SUCCEED("compared " << checked << " memory traces");
}
