// Issue 28, items 6 and 7: defaults that summarise instead of burying the signal, and one number
// policy (three significant figures, counted words) in every verb's text, full precision in data.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <regex>
#include <string>

#include "testing/test_util.h"

using etscope::testing::fixture;
using etscope::testing::run_etscope;

namespace {

size_t occurrences(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + what.size())) ++n;
  return n;
}

size_t lines_matching(const std::string& text, const std::regex& re) {
  size_t n = 0, start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    n += std::regex_search(text.substr(start, end - start), re);
    start = end + 1;
  }
  return n;
}

// A number with more than four significant digits after the point, such as 152.64642949999998
// (but not 0.00415, three significant figures of a small value).
const std::regex kLongDecimal{R"(\d\.0*[1-9]\d{4,})"};

}  // namespace

TEST_CASE("issue 28: pte summarises named data and lists each key once with --named-data", "[cli][issue28]") {
  const std::string pte = fixture("xnnpack/xnn_qcnn.pte");
  auto json = run_etscope("pte --format json " + pte);
  REQUIRE(json.exit_code == 0);
  const auto keys = nlohmann::json::parse(json.out)["named_data"];
  REQUIRE(keys.size() == 12);

  auto summary = run_etscope("pte " + pte);
  REQUIRE(summary.exit_code == 0);
  CHECK_THAT(summary.out, Catch::Contains("named data    12 keys, ") && Catch::Contains("(--named-data lists them)"));
  CHECK_THAT(summary.out, Catch::Contains("12 segments of named data, "));
  size_t shown = 0;
  for (const auto& k : keys) {
    const size_t n = occurrences(summary.out, k["key"].get<std::string>());
    CHECK(n <= 1);
    shown += n;
  }
  CHECK(shown == 3);  // a few examples, not the list

  auto full = run_etscope("pte --named-data " + pte);
  REQUIRE(full.exit_code == 0);
  for (const auto& k : keys) CHECK(occurrences(full.out, k["key"].get<std::string>()) == 1);
  CHECK_THAT(full.out, !Catch::Contains("(--named-data lists them)"));
}

TEST_CASE("issue 28: pte --kernels prints one line per delegate kind with its call count", "[cli][issue28]") {
  auto r = run_etscope("pte --kernels " + fixture("xnnpack/xnn_transformer.pte"));
  REQUIRE(r.exit_code == 0);
  CHECK(occurrences(r.out, "DELEGATE XnnpackBackend") == 1);
  CHECK_THAT(r.out, Catch::Contains("DELEGATE XnnpackBackend  x15 (15 delegates)"));
  CHECK_THAT(r.out, Catch::Contains(", 15 delegates\n"));
  // JSON keeps one entry per delegate.
  auto j = run_etscope("pte --kernels --format json " + fixture("xnnpack/xnn_transformer.pte"));
  REQUIRE(j.exit_code == 0);
  CHECK(nlohmann::json::parse(j.out)["plans"][0]["delegates"].size() == 15);
}

TEST_CASE("issue 28: inspect hides untimed debug events unless --debug-events", "[cli][issue28][inspect]") {
  const std::string dir = etscope::testing::temp_dir("issue28_debug_events");
  auto run = run_etscope("run " + fixture("xnnpack/xnn_cnn.pte") + " --etdump " + dir + "/x.etdp --debug-buffer " + dir +
                         "/x.bin --debug-level intermediate");
  INFO(run.err);
  REQUIRE(run.exit_code == 0);
  const std::string args = "inspect --etdump " + dir + "/x.etdp --debug-buffer " + dir + "/x.bin";
  // An untimed row: "#  name  instr  0  -  -  ...".
  const std::regex untimed{R"(^\s*\d+\s+\S+\s+-?\d+\s+0\s+-\s+-)"};
  auto quiet = run_etscope(args);
  REQUIRE(quiet.exit_code == 0);
  CHECK(lines_matching(quiet.out, untimed) == 0);
  CHECK_THAT(quiet.out, Catch::Contains("debug events without timings not shown: --debug-events lists them"));
  auto all = run_etscope(args + " --debug-events");
  REQUIRE(all.exit_code == 0);
  CHECK(lines_matching(all.out, untimed) > 0);
  CHECK_THAT(all.out, !Catch::Contains("not shown"));
  // Data formats keep every event.
  auto csv = run_etscope(args + " --format csv");
  REQUIRE(csv.exit_code == 0);
  CHECK(lines_matching(csv.out, std::regex{R"(^Execute,\d+,-?\d+,\d+,0,)"}) > 0);
}

TEST_CASE("issue 28: inspect --modules prints totals with three significant figures", "[cli][issue28][inspect]") {
  auto r = run_etscope("inspect --etdump " + fixture("cifar10/cifar10.etdp") + " --etrecord " + fixture("cifar10/cifar10.etrecord") +
                       " --block Execute --modules");
  REQUIRE(r.exit_code == 0);
  CHECK(lines_matching(r.out, kLongDecimal) == 0);
  CHECK_THAT(r.out, Catch::Contains("  features  153\n"));
  CHECK_THAT(r.out, Catch::Contains(" 1 event\n") && !Catch::Contains(" 1 events"));
}

TEST_CASE("issue 28: history, sql and runs print durations by the one policy, data at full precision", "[cli][issue28][store]") {
  const std::string dir = etscope::testing::temp_dir("issue28_numbers");
  const std::string store = dir + "/runs.sqlite";
  auto stored = run_etscope("run " + fixture("simple_conv/simple_conv.pte") + " --iterations 3 --store " + store);
  INFO(stored.err);
  REQUIRE(stored.exit_code == 0);

  auto runs = run_etscope("runs --store " + store);
  REQUIRE(runs.exit_code == 0);
  CHECK_THAT(runs.out, Catch::Contains("\n1 run in "));

  auto history = run_etscope("history simple_conv.pte --store " + store);
  INFO(history.out + history.err);
  REQUIRE(history.exit_code == 0);
  CHECK(lines_matching(history.out, kLongDecimal) == 0);
  CHECK(lines_matching(history.out, std::regex{R"(\d (ns|us|ms|s)\s+3$)"}) == 1);  // "412 us  3"
  CHECK_THAT(history.out, Catch::Contains(", 1 run\n"));
  auto in_us = run_etscope("history simple_conv.pte --time-unit ns --store " + store);
  REQUIRE(in_us.exit_code == 0);
  CHECK(lines_matching(in_us.out, std::regex{R"(\d ns\s+3$)"}) == 1);
  auto history_csv = run_etscope("history simple_conv.pte --format csv --store " + store);
  REQUIRE(history_csv.exit_code == 0);
  CHECK_THAT(history_csv.out, Catch::StartsWith("run,created_utc,engine,engine_version,median_ms,samples\n"));

  const std::string query = " \"SELECT method_median_ms, method_median_ms / 3.0 AS third, executions FROM v_runs\" --store " + store;
  auto table = run_etscope("sql" + query);
  REQUIRE(table.exit_code == 0);
  CHECK(lines_matching(table.out, kLongDecimal) == 0);
  auto json = run_etscope("sql" + query + " --format json");
  REQUIRE(json.exit_code == 0);
  const auto row = nlohmann::json::parse(json.out)[0];
  CHECK(row["third"].get<double>() == Approx(row["method_median_ms"].get<double>() / 3.0).epsilon(1e-12));
  CHECK(row["executions"] == 3);
}
