// PtdReader on both FT01 layouts, expectations from flatc decodes of the real files.
#include <catch2/catch.hpp>
#include <cstring>

#include "etscope/formats/ptd_reader.h"
#include "testing/test_util.h"

using namespace etscope;
using etscope::testing::load;
using etscope::testing::real_artifact;

TEST_CASE("xor_training.ptd: current layout / four parameters in 16-aligned segments", "[ptd][real]") {
  auto r = PtdReader::read(load(real_artifact("xor_training.ptd")));
  REQUIRE(r.ok());
  const TensorDataFile& f = *r;
  CHECK_FALSE(f.legacy);
  CHECK(f.flatbuffer_offset == 48);
  CHECK(f.flatbuffer_size == 496);
  CHECK(f.segment_base_offset == 544);
  CHECK(f.segment_data_size == 216);
  REQUIRE(f.segments.size() == 4);
  CHECK(f.segments[1].offset == 544 + 80);
  CHECK(f.segments[1].size == 40);
  REQUIRE(f.entries.size() == 4);
  const TensorDataEntry* w = f.find("net.linear.weight");
  REQUIRE(w);
  REQUIRE(w->layout);
  CHECK(w->layout->dtype == ScalarType::kFloat);
  CHECK(w->layout->sizes == std::vector<int32_t>{10, 2});
  CHECK(w->layout->dim_order == std::vector<uint8_t>{0, 1});
  CHECK(w->data.offset == 544);
  CHECK(w->data.size == 80);
  const TensorDataEntry* b2 = f.find("net.linear2.bias");
  REQUIRE(b2);
  CHECK(b2->segment_index == 3);
  CHECK(b2->data.size == 8);
  CHECK(f.find("net.missing") == nullptr);
}

TEST_CASE("linear_external_legacy.ptd: ExecuTorch 0.6 layout with one shared segment", "[ptd][real]") {
  auto r = PtdReader::read(load(real_artifact("linear_external_legacy.ptd")));
  REQUIRE(r.ok());
  const TensorDataFile& f = *r;
  CHECK(f.legacy);
  CHECK(f.tensor_alignment == 16);
  CHECK(f.segment_base_offset == 272);
  CHECK(f.segment_data_size == 64);
  REQUIRE(f.entries.size() == 2);
  const TensorDataEntry* w = f.find("linear.weight");
  const TensorDataEntry* b = f.find("linear.bias");
  REQUIRE(w);
  REQUIRE(b);
  CHECK(w->data.offset == 272);
  CHECK(w->data.size == 36);
  CHECK(b->data.offset == 272 + 48);
  CHECK(b->data.size == 12);
  CHECK(b->layout->sizes == std::vector<int32_t>{3});
}

TEST_CASE("a .pte handed to the .ptd reader is named as a program", "[ptd][errors]") {
  auto r = PtdReader::read(load(real_artifact("add.pte")));
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().code() == ErrorCode::kWrongKind);
  CHECK_THAT(r.error().message(), Catch::Contains("add.pte") && Catch::Contains("program"));
}

TEST_CASE("a .ptd whose segment data is cut off reports truncation", "[ptd][errors]") {
  auto blob = load(real_artifact("xor_training.ptd"));
  std::vector<uint8_t> bytes(blob->data(), blob->data() + 700);
  auto r = PtdReader::read(etscope::testing::blob_of(bytes, "cut.ptd"));
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().code() == ErrorCode::kTruncated);
  CHECK(r.error().message() == "cut.ptd: file is 700 bytes but its header declares segment data up to byte 760");
}
