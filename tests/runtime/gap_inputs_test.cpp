// The numeric gap's input check end to end: etscope's runtime logs the program inputs at
// intermediate-output level, the Inspector reads them as the run's inputs (not as an event), and
// inspect::check_run_inputs compares them with the ETRecord's representative inputs.
#include <catch2/catch.hpp>

#include <cmath>

#include "etscope/etdump/etdump_reader.h"
#include "etscope/etrecord/etrecord_reader.h"
#include "etscope/inspect/inspector.h"
#include "etscope/inspect/numeric_gap.h"
#include "etscope/runner/runner.h"
#include "testing/test_util.h"

using etscope::testing::fixture;
using etscope::testing::temp_dir;
using namespace etscope;

namespace {

const std::string kModel = "simple_conv/simple_conv";

// Runs simple_conv once at intermediate-output level with inputs set by `set`, and returns the
// Inspector over the dump it wrote (with the ETRecord and the debug buffer).
template <typename SetInputs>
inspect::Inspector traced_run(const std::string& name, SetInputs&& set) {
  runner::RunnerOptions options;
  options.model = fixture(kModel + ".pte");
  options.trace = true;
  options.debug_level = DebugLevel::kIntermediateOutputs;
  options.debug_buffer_bytes = 4 << 20;
  auto runner = runner::Runner::load(options);
  REQUIRE(runner.ok());
  REQUIRE(set(**runner).ok());
  REQUIRE((*runner)->run(0, 1).ok());
  const std::string dir = temp_dir("gap_inputs_" + name);
  REQUIRE((*runner)->write_trace(dir + "/run.etdp", dir + "/run.bin").ok());
  auto dump = etdump::EtDumpReader::open(dir + "/run.etdp");
  REQUIRE(dump.ok());
  auto record = etrecord::EtRecordReader::open(fixture(kModel + ".etrecord"));
  REQUIRE(record.ok());
  auto in = inspect::Inspector::build(std::make_shared<const etdump::EtDumpFile>(std::move(dump).value()),
                                      std::make_shared<const etrecord::EtRecord>(std::move(record).value()),
                                      etscope::testing::load(dir + "/run.bin"));
  REQUIRE(in.ok());
  return std::move(in).value();
}

const inspect::EventBlock& execute_block(const inspect::Inspector& in) {
  for (const auto& b : in.blocks())
    if (b.name == "Execute") return b;
  FAIL("no Execute block");
  return in.blocks().front();
}

}  // namespace

TEST_CASE("a run with the representative inputs passes the input check and matches the AOT outputs", "[gap][runner]") {
  const std::string etrecord = fixture(kModel + ".etrecord");
  auto in = traced_run("same", [&](runner::Runner& r) { return r.set_inputs_from_etrecord(etrecord); });
  const inspect::EventBlock& block = execute_block(in);
  // One tensor input, logged before the first instruction and kept out of the events.
  REQUIRE(block.run_inputs.size() == 1);
  for (const auto& e : block.events) CHECK(e.instruction_id != kProgramInputInstruction);

  auto check = inspect::check_run_inputs(in);
  REQUIRE(check.ok());
  CHECK(check->outcome == inspect::InputCheck::Outcome::kSame);
  CHECK(check->message.empty());
  CHECK(check->max_abs_difference == 0.0);

  // With the right inputs the gap is at float rounding, as ExecuTorch's Inspector reports it for
  // its own runtime (simple_conv.inspector.json: SNR 141.08 dB conv2d, 140.74 dB relu).
  auto aot = inspect::load_aot_intermediates(fixture(kModel + ".aot_intermediates.ptd"),
                                             inspect::aot_index_beside(fixture(kModel + ".aot_intermediates.ptd")));
  REQUIRE(aot.ok());
  auto rows = inspect::calculate_numeric_gap(in, *aot, inspect::GapMetric::kSNR);
  REQUIRE(rows.ok());
  REQUIRE(rows->size() == 2);
  CHECK((*rows)[0].aot_ops == std::vector<std::string>{"conv2d"});
  for (const auto& row : *rows) CHECK(row.gap.at(0) > 120.0);
  CHECK_FALSE(inspect::first_divergence(*rows, inspect::GapMetric::kSNR, 40.0).has_value());
}

TEST_CASE("a run with random inputs fails the input check with the rerun hint", "[gap][runner]") {
  auto in = traced_run("random", [](runner::Runner& r) { return r.set_random_inputs(3); });
  auto check = inspect::check_run_inputs(in);
  REQUIRE(check.ok());
  CHECK(check->outcome == inspect::InputCheck::Outcome::kDifferent);
  CHECK_THAT(check->message, Catch::Contains("the run used different inputs from the AOT intermediates"));
  CHECK_THAT(check->message, Catch::EndsWith("rerun with --inputs-from-etrecord"));
  CHECK(check->max_abs_difference > 0.1);
  // A looser tolerance than the differences accepts them.
  auto loose = inspect::check_run_inputs(in, 0.0, 10.0);
  REQUIRE(loose.ok());
  CHECK(loose->outcome == inspect::InputCheck::Outcome::kSame);

  // And the gap it would have reported is far from float rounding (the issue's -2.8 dB).
  auto aot = inspect::load_aot_intermediates(fixture(kModel + ".aot_intermediates.ptd"), "");
  REQUIRE(aot.ok());
  auto rows = inspect::calculate_numeric_gap(in, *aot, inspect::GapMetric::kSNR);
  REQUIRE(rows.ok());
  REQUIRE(inspect::first_divergence(*rows, inspect::GapMetric::kSNR, 40.0) == std::optional<size_t>(0));
}

TEST_CASE("dumps without recorded inputs cannot be checked", "[gap]") {
  // ExecuTorch's runtime logs no program inputs.
  auto dump = etdump::EtDumpReader::open(fixture(kModel + ".etdp"));
  REQUIRE(dump.ok());
  auto record = etrecord::EtRecordReader::open(fixture(kModel + ".etrecord"));
  REQUIRE(record.ok());
  auto in = inspect::Inspector::build(std::make_shared<const etdump::EtDumpFile>(std::move(dump).value()),
                                      std::make_shared<const etrecord::EtRecord>(std::move(record).value()), nullptr);
  REQUIRE(in.ok());
  auto check = inspect::check_run_inputs(*in);
  REQUIRE(check.ok());
  CHECK(check->outcome == inspect::InputCheck::Outcome::kNotRecorded);
  CHECK_THAT(check->message, Catch::Contains("inputs were not recorded"));
}
