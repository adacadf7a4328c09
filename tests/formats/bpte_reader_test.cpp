// BpteReader on the real bundled program; expectations from a flatc decode.
#include <catch2/catch.hpp>
#include <cstring>

#include "etscope/formats/bpte_reader.h"
#include "testing/test_util.h"

using namespace etscope;
using etscope::testing::load;
using etscope::testing::real_artifact;

TEST_CASE("bundled_program.bpte: ten int32 cases for forward and an embedded program", "[bpte][real]") {
  auto r = BpteReader::read(load(real_artifact("bundled_program.bpte")));
  if (!r.ok()) FAIL(r.error().message());
  const BundledProgram& b = *r;
  CHECK(b.file_identifier == "BP08");
  CHECK(b.version == 2);
  CHECK(b.program_range.offset == 64);
  CHECK(b.program_range.size == 1696);
  REQUIRE(b.suites.size() == 1);
  CHECK(b.suites[0].method_name == "forward");
  REQUIRE(b.suites[0].cases.size() == 10);
  const BundledTestCase& c0 = b.suites[0].cases[0];
  REQUIRE(c0.inputs.size() == 2);
  REQUIRE(c0.expected_outputs.size() == 1);
  CHECK(c0.inputs[0].kind == BundledValue::Kind::kTensor);
  CHECK(c0.inputs[0].dtype == ScalarType::kInt);
  CHECK(c0.inputs[0].sizes == std::vector<int32_t>{2, 2});
  CHECK(c0.inputs[0].data.offset % 16 == 0);
  int32_t expected[4];
  std::memcpy(expected, b.bytes(c0.expected_outputs[0].data).data(), 16);
  for (int v : expected) CHECK(v == 2);
  // The embedded program: its own 24-byte header, one 32-byte segment, mul and add.
  const Program& p = b.program;
  REQUIRE(p.header);
  CHECK(p.header->length == 24);
  CHECK(p.header->program_size == 1584);
  CHECK(p.header->segment_base_offset == 1664);
  CHECK(p.constant_offsets == std::vector<uint64_t>{0, 0, 16});
  REQUIRE(p.plans.size() == 1);
  CHECK(p.plans[0].values.size() == 9);
  CHECK(p.plans[0].instruction_count() == 3);
}

TEST_CASE("bundled program errors: wrong kind / pre-release identifiers / broken embedded program", "[bpte][errors]") {
  auto pte = BpteReader::read(load(real_artifact("add.pte")));
  REQUIRE_FALSE(pte.ok());
  CHECK(pte.error().code() == ErrorCode::kWrongKind);
  auto blob = load(real_artifact("bundled_program.bpte"));
  std::vector<uint8_t> bytes(blob->data(), blob->data() + blob->size());
  std::memcpy(bytes.data() + 4, "BP05", 4);
  auto old = BpteReader::read(etscope::testing::blob_of(bytes, "old.bpte"));
  REQUIRE_FALSE(old.ok());
  CHECK(old.error().code() == ErrorCode::kNotSupported);
  CHECK_THAT(old.error().message(), Catch::Contains("BP05"));
  // BP06 shares BP08's layout and is accepted.
  std::memcpy(bytes.data() + 4, "BP06", 4);
  CHECK(BpteReader::read(etscope::testing::blob_of(bytes, "v06.bpte")).ok());
  // Corrupt the embedded program's identifier: the error says where.
  std::memcpy(bytes.data() + 4, "BP08", 4);
  std::memcpy(bytes.data() + 64 + 4, "XX12", 4);
  auto inner = BpteReader::read(etscope::testing::blob_of(bytes, "inner.bpte"));
  REQUIRE_FALSE(inner.ok());
  CHECK_THAT(inner.error().message(), Catch::StartsWith("inner.bpte (embedded program): "));
}
