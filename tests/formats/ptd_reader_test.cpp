// PtdReader on both FT01 layouts, expectations from flatc decodes of the real files.
#include <catch2/catch.hpp>
#include <cstring>

#include "etscope/formats/ptd_reader.h"
#include "etscope/formats/ptd_writer.h"
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

TEST_CASE("PtdWriter lays out a .ptd as ExecuTorch's exporter does", "[ptd][writer]") {
  // Rewrite the tensors of ExecuTorch's own xor_training.ptd with its 16-byte segment alignment.
  auto real = PtdReader::read(load(real_artifact("xor_training.ptd")));
  REQUIRE(real.ok());
  std::vector<PtdTensor> tensors;
  for (const TensorDataEntry& e : real->entries) {
    REQUIRE(e.layout);
    tensors.push_back({e.key, e.layout->dtype, e.layout->sizes, e.layout->dim_order, real->bytes(e.data)});
  }
  auto bytes = PtdWriter::write(tensors, {.segment_alignment = 16});
  REQUIRE(bytes.ok());
  auto back = PtdReader::read(Blob::from_bytes("written.ptd", *bytes));
  REQUIRE(back.ok());
  CHECK_FALSE(back->legacy);
  CHECK(back->flatbuffer_offset == real->flatbuffer_offset);
  CHECK(back->segment_base_offset == real->segment_base_offset);
  CHECK(back->segment_data_size == real->segment_data_size);
  REQUIRE(back->entries.size() == real->entries.size());
  for (size_t i = 0; i < back->entries.size(); ++i) {
    const TensorDataEntry& a = back->entries[i];
    const TensorDataEntry& b = real->entries[i];
    INFO(b.key);
    CHECK(a.key == b.key);
    CHECK(a.segment_index == b.segment_index);
    CHECK(a.data.offset == b.data.offset);
    CHECK(a.data.size == b.data.size);
    CHECK(a.layout->sizes == b.layout->sizes);
    CHECK(a.layout->dim_order == b.layout->dim_order);
    const auto x = back->bytes(a.data), y = real->bytes(b.data);
    CHECK(std::equal(x.begin(), x.end(), y.begin(), y.end()));
  }
  CHECK(bytes->size() == load(real_artifact("xor_training.ptd"))->bytes().size());
  // The default alignment is ExecuTorch's FlatTensorConfig's, 128.
  auto wide = PtdWriter::write(tensors);
  REQUIRE(wide.ok());
  auto wide_back = PtdReader::read(Blob::from_bytes("wide.ptd", *wide));
  REQUIRE(wide_back.ok());
  CHECK(wide_back->segment_base_offset % 128 == 0);
  CHECK(wide_back->segments[1].offset - wide_back->segment_base_offset == 128);
}

TEST_CASE("PtdWriter refuses keys, sizes and dim orders that do not describe the data", "[ptd][writer][errors]") {
  const std::vector<uint8_t> eight(8, 0);
  CHECK_FALSE(PtdWriter::write({{"", ScalarType::kFloat, {2}, {}, eight}}).ok());
  CHECK_FALSE(PtdWriter::write({{"a", ScalarType::kFloat, {2}, {}, eight}, {"a", ScalarType::kFloat, {2}, {}, eight}}).ok());
  CHECK_FALSE(PtdWriter::write({{"a", ScalarType::kFloat, {3}, {}, eight}}).ok());
  CHECK_FALSE(PtdWriter::write({{"a", ScalarType::kFloat, {-2}, {}, eight}}).ok());
  CHECK_FALSE(PtdWriter::write({{"a", ScalarType::kFloat, {1, 2}, {0, 0}, eight}}).ok());
  CHECK_FALSE(PtdWriter::write({{"a", ScalarType::kFloat, {2}, {}, eight}}, {.segment_alignment = 24}).ok());
  CHECK(PtdWriter::write({{"a", ScalarType::kFloat, {2}, {}, eight}}).ok());
}
