// Local versus inherited numeric error (numerics/local_gap.h, `etscope debug`): a program whose
// one layer computes wrong (cifar10 with its second convolution's weights changed in the .pte) has
// that layer as its own culprit, while every layer after it diverges only by inheritance.
#include <catch2/catch.hpp>

#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "etscope/etdump/etdump_reader.h"
#include "etscope/etrecord/etrecord_reader.h"
#include "etscope/formats/op_signatures.h"
#include "etscope/inspect/numeric_gap.h"
#include "etscope/inspect/program_description.h"
#include "etscope/numerics/local_gap.h"
#include "etscope/formats/tensor_data_file.h"
#include "testing/test_util.h"

namespace etscope::numerics {
namespace {

using nlohmann::json;
using testing::fixture;

// cifar10.pte with every weight of its `which`-th convolution (0-based) shifted by `delta`,
// written to `path`; returns the instruction index of that convolution.
size_t write_with_changed_conv(const std::string& path, size_t which, float delta) {
  auto program = inspect::load_program(fixture("cifar10/cifar10.pte"));
  REQUIRE(program.ok());
  const ExecutionPlan& plan = *program->find_plan("forward");
  size_t seen = 0;
  for (size_t i = 0; i < plan.chains[0].instructions.size(); ++i) {
    const Instruction& in = plan.chains[0].instructions[i];
    if (in.kind != InstructionKind::kKernelCall) continue;
    if (plan.operators[static_cast<size_t>(in.op_index)].qualified_name() != "aten::convolution.out") continue;
    if (seen++ != which) continue;
    const int32_t weight = split_kernel_args(plan, in).inputs.at(1);
    const TensorInfo& t = plan.values[static_cast<size_t>(weight)].tensor;
    REQUIRE(t.data_kind == TensorDataKind::kConstant);
    REQUIRE(t.dtype == ScalarType::kFloat);
    std::vector<uint8_t> bytes(program->blob->bytes().begin(), program->blob->bytes().end());
    for (uint64_t k = 0; k < t.data.size / 4; ++k) {
      float f = 0;
      std::memcpy(&f, bytes.data() + t.data.offset + 4 * k, 4);
      f += delta;
      std::memcpy(bytes.data() + t.data.offset + 4 * k, &f, 4);
    }
    std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
    return i;
  }
  FAIL("cifar10 has fewer convolutions than asked");
  return 0;
}

double first_gap(const json& gaps) {
  REQUIRE(gaps.is_array());
  REQUIRE(!gaps.empty());
  return gaps[0].is_number() ? gaps[0].get<double>() : (gaps[0] == "inf" ? HUGE_VAL : -HUGE_VAL);
}

}  // namespace

TEST_CASE("local gaps: a layer's changed weights are its own error / the layers after only inherit it", "[numerics][gap]") {
  const std::string dir = testing::temp_dir("local_gap");
  const std::string pte = dir + "/cifar10_changed.pte";
  write_with_changed_conv(pte, 1, 0.02f);
  const std::string args = "debug '" + pte + "' --etrecord '" + fixture("cifar10/cifar10.etrecord") + "' --aot-intermediates '" +
                           fixture("cifar10/cifar10.aot_intermediates.ptd") + "' --aot-index '" +
                           fixture("cifar10/cifar10.aot_intermediates.json") + "'";
  const testing::CommandResult r = testing::run_etscope(args + " --format json");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const json j = json::parse(r.out);
  const json& rows = j["gap"]["rows"];
  // The second convolution's row.
  size_t conv = 0, convs = 0;
  for (size_t k = 0; k < rows.size(); ++k) {
    for (const json& op : rows[k]["runtime_ops"]) {
      if (op == "native_call_convolution.out" && convs++ == 1) conv = k;
    }
  }
  REQUIRE(convs >= 2);
  CHECK(j["first_divergence"]["row"] == conv);
  REQUIRE(j.contains("culprit"));
  CHECK(j["culprit"]["row"] == conv);
  CHECK(j["culprit"]["module"] == "features.3 (Conv2d)");  // cifar10's second convolution
  CHECK(j["first_divergence"]["module"] == "features.3 (Conv2d)");
  CHECK(j["culprit"]["forced"]["replaced"].get<size_t>() > 0);
  // Its own gap is its accumulated one (its inputs were right); after it the accumulated gaps
  // stay below 40 dB while every operator computes right from right inputs (local gaps high).
  CHECK(first_gap(rows[conv]["local_gap"]) == Approx(first_gap(rows[conv]["gap"])).epsilon(1e-3));
  size_t inherited = 0;
  for (size_t k = conv + 1; k < rows.size(); ++k) {
    if (rows[k]["local_gap"].is_null()) continue;
    if (first_gap(rows[k]["gap"]) < 40 && first_gap(rows[k]["local_gap"]) > 60) ++inherited;
  }
  CHECK(inherited >= 3);
  // Rows before it: right, and right locally.
  for (size_t k = 0; k < conv; ++k) {
    CHECK(first_gap(rows[k]["gap"]) > 60);
    if (!rows[k]["local_gap"].is_null()) CHECK(first_gap(rows[k]["local_gap"]) > 60);
  }

  // The table: both columns and the culprit by name; --no-local drops them.
  const testing::CommandResult table = testing::run_etscope(args);
  REQUIRE(table.exit_code == 0);
  CHECK_THAT(table.out, Catch::Contains("culprit (local SNR < 40): row " + std::to_string(conv + 1)));
  CHECK_THAT(table.out, Catch::Contains("  module features.3 (Conv2d)\n"));
  CHECK_THAT(table.out, Catch::Contains("only inherits its error") || !Catch::Contains("the first divergence (row"));
  const testing::CommandResult quick = testing::run_etscope(args + " --no-local --format json");
  REQUIRE(quick.exit_code == 0);
  const json q = json::parse(quick.out);
  CHECK(!q.contains("culprit"));
  CHECK(!q["gap"]["rows"][0].contains("local_gap"));
}

TEST_CASE("local gaps inside an XNNPACK delegate: each node continues from the AOT value of the one before", "[numerics][gap]") {
  // xnn_cnn: one XNNPACK delegate, its nodes logged by etscope's engine. The AOT intermediates are
  // changed instead of the program: conv2d_1's reference output (handle 5) scaled by 1.1. The run
  // is right, so only that row's accumulated gap is low; in the forced run the average pool after
  // it computes from the scaled value, so its *local* gap is low too, while its accumulated one is
  // not: forcing reached inside the delegate.
  const std::string dir = testing::temp_dir("local_gap_xnnpack");
  const std::string base = "xnnpack/xnn_cnn";
  auto aot = inspect::load_aot_intermediates(fixture(base + ".aot_intermediates.ptd"), fixture(base + ".aot_intermediates.json"));
  REQUIRE(aot.ok());
  const std::vector<uint8_t> original(aot->file->blob->bytes().begin(), aot->file->blob->bytes().end());
  std::vector<uint8_t> changed = original;
  bool found = false;
  for (const inspect::AotEntry& e : aot->entries) {
    if (e.handles != std::vector<int64_t>{5}) continue;
    REQUIRE(e.output.kind == inspect::GapValue::Kind::kTensor);
    REQUIRE(e.output.tensor.dtype == ScalarType::kFloat);
    const size_t offset = static_cast<size_t>(e.output.tensor.bytes.data() - aot->file->blob->bytes().data());
    for (size_t k = 0; k < e.output.tensor.bytes.size(); k += 4) {
      float f = 0;
      std::memcpy(&f, changed.data() + offset + k, 4);
      f *= 1.1f;
      std::memcpy(changed.data() + offset + k, &f, 4);
    }
    found = true;
  }
  REQUIRE(found);
  std::ofstream(dir + "/changed.ptd", std::ios::binary).write(reinterpret_cast<const char*>(changed.data()), static_cast<std::streamsize>(changed.size()));
  const testing::CommandResult r =
      testing::run_etscope("debug '" + fixture(base + ".pte") + "' --etrecord '" + fixture(base + ".etrecord") + "' --aot-intermediates '" +
                           dir + "/changed.ptd' --aot-index '" + fixture(base + ".aot_intermediates.json") + "' --format json");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const json j = json::parse(r.out);
  const json& rows = j["gap"]["rows"];
  size_t conv = rows.size(), pool = rows.size();
  for (size_t k = 0; k < rows.size(); ++k) {
    if (rows[k]["aot_debug_handle"] == json::array({5})) conv = k;
    if (rows[k]["aot_debug_handle"] == json::array({6})) pool = k;
  }
  REQUIRE(conv < rows.size());
  REQUIRE(pool < rows.size());
  CHECK(first_gap(rows[conv]["gap"]) < 40);
  CHECK(first_gap(rows[pool]["gap"]) > 100);        // the run itself is right
  REQUIRE(!rows[pool]["local_gap"].is_null());
  CHECK(first_gap(rows[pool]["local_gap"]) < 40);   // computed from the scaled reference
  CHECK(first_gap(rows[conv]["local_gap"]) < 40);
  CHECK(j["culprit"]["row"] == conv);
  CHECK(j["culprit"]["forced"]["replaced"].get<size_t>() >= 5);
  // Rows before it compute right from right values.
  for (size_t k = 0; k < conv; ++k) CHECK(first_gap(rows[k]["local_gap"]) > 100);
}

TEST_CASE("local gaps: the unchanged program has no culprit / only etscope's engine can force inputs", "[numerics][gap]") {
  const std::string args = "debug '" + fixture("cifar10/cifar10.pte") + "' --etrecord '" + fixture("cifar10/cifar10.etrecord") +
                           "' --aot-intermediates '" + fixture("cifar10/cifar10.aot_intermediates.ptd") + "' --aot-index '" +
                           fixture("cifar10/cifar10.aot_intermediates.json") + "' --format json";
  const testing::CommandResult r = testing::run_etscope(args);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const json j = json::parse(r.out);
  CHECK(j["culprit"]["row"].is_null());
  CHECK(j["culprit"]["forced"]["replaced"].get<size_t>() > 0);

  runner::RunnerOptions options;
  options.model = fixture("cifar10/cifar10.pte");
  options.engine = runner::EngineKind::kExecutorch;
  if (!runner::engine_available(runner::EngineKind::kExecutorch).ok()) return;
  auto et = runner::Runner::load(options);
  REQUIRE(et.ok());
  auto record = etrecord::EtRecordReader::open(fixture("cifar10/cifar10.etrecord"));
  REQUIRE(record.ok());
  auto aot = inspect::load_aot_intermediates(fixture("cifar10/cifar10.aot_intermediates.ptd"), "");
  REQUIRE(aot.ok());
  auto dump = etdump::EtDumpReader::open(fixture("cifar10/cifar10.etdp"));
  REQUIRE(dump.ok());
  auto profile = inspect::Inspector::build(std::make_shared<const etdump::EtDumpFile>(std::move(*dump)), nullptr, nullptr);
  REQUIRE(profile.ok());
  auto forced = run_forced(**et, *record, *aot, *profile);
  REQUIRE_FALSE(forced.ok());
  CHECK(forced.error().code() == ErrorCode::kNotSupported);
}

}  // namespace etscope::numerics
