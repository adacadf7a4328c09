// check_consistency: files of one export pass, files of different models are refused with the
// mismatch named (issue 11: cifar10's dump with mobilenet_v2's record labelled relu as
// batch_norm with exit code 0).
#include <catch2/catch.hpp>

#include <string>

#include "etscope/etdump/etdump_reader.h"
#include "etscope/etrecord/etrecord_reader.h"
#include "etscope/formats/pte_reader.h"
#include "etscope/inspect/consistency.h"
#include "testing/test_util.h"

using etscope::testing::fixture;
using namespace etscope;

namespace {

struct Files {
  etdump::EtDumpFile dump;
  etrecord::EtRecord record;
  Program program;
};

Files load_model(const std::string& dir, const std::string& name) {
  auto dump = etdump::EtDumpReader::open(fixture(dir + "/" + name + ".etdp"));
  auto record = etrecord::EtRecordReader::open(fixture(dir + "/" + name + ".etrecord"));
  auto program = PteReader::open(fixture(dir + "/" + name + ".pte"));
  REQUIRE(dump.ok());
  REQUIRE(record.ok());
  REQUIRE(program.ok());
  return {std::move(dump).value(), std::move(record).value(), std::move(program).value()};
}

}  // namespace

TEST_CASE("operators compare by base name across the three spellings", "[consistency]") {
  CHECK(inspect::operator_base_name("native_call_convolution.out") == "convolution");
  CHECK(inspect::operator_base_name("aten::convolution.out") == "convolution");
  CHECK(inspect::operator_base_name("aten.convolution.default") == "convolution");
  CHECK(inspect::operator_base_name("dim_order_ops._to_dim_order_copy.default") == "_to_dim_order_copy");
  CHECK(inspect::operator_base_name("native_call__native_batch_norm_legit_no_training.out") ==
        "_native_batch_norm_legit_no_training");
}

TEST_CASE("the dump, record and program of one export belong together", "[consistency]") {
  for (const auto& [dir, name] : std::vector<std::pair<std::string, std::string>>{
           {"simple_conv", "simple_conv"}, {"simple_conv_xnnpack", "simple_conv_xnnpack"}, {"cifar10", "cifar10"},
           {"mobilenet_v2", "mobilenet_v2"}}) {
    INFO(name);
    Files f = load_model(dir, name);
    auto report = inspect::check_consistency(&f.dump, &f.record, &f.program);
    INFO((report.problems.empty() ? std::string() : report.problems.front()));
    CHECK(report.ok());
  }
}

TEST_CASE("files of different models are refused, naming both and the mismatch", "[consistency]") {
  Files cifar = load_model("cifar10", "cifar10");
  Files mobile = load_model("mobilenet_v2", "mobilenet_v2");
  auto dump_record = inspect::check_consistency(&cifar.dump, &mobile.record, nullptr);
  REQUIRE_FALSE(dump_record.ok());
  CHECK(dump_record.problems[0].find("cifar10.etdp and mobilenet_v2.etrecord do not belong together") != std::string::npos);
  auto dump_program = inspect::check_consistency(&cifar.dump, nullptr, &mobile.program);
  REQUIRE_FALSE(dump_program.ok());
  CHECK(dump_program.problems[0].find("cifar10.etdp and mobilenet_v2.pte") != std::string::npos);
  auto record_program = inspect::check_consistency(nullptr, &mobile.record, &cifar.program);
  REQUIRE_FALSE(record_program.ok());
  CHECK(record_program.problems[0].find("mobilenet_v2.etrecord and cifar10.pte") != std::string::npos);
  // And the other way round.
  CHECK_FALSE(inspect::check_consistency(&mobile.dump, &cifar.record, &cifar.program).ok());
}
