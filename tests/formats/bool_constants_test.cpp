// non_binary_bool_tensors: bool tensors whose bytes in the .pte are neither 0 nor 1 (issue 28
// item 9), named with the instructions that read them.
#include <catch2/catch.hpp>

#include "etscope/formats/bool_constants.h"
#include "etscope/formats/pte_reader.h"
#include "inspect/crafted_programs.h"
#include "testing/test_util.h"

using namespace etscope;

TEST_CASE("a bool constant with bytes other than 0 or 1 is named with its readers", "[bool_constants][issue28]") {
  auto program = PteReader::read(testing::blob_of(testing::bool_mask_program_bytes({0x00, 0x93, 0x01, 0x7f}), "mask.pte"));
  REQUIRE(program.ok());
  const auto found = non_binary_bool_tensors(*program);
  REQUIRE(found.size() == 1);
  CHECK(found[0].plan == "forward");
  CHECK(found[0].value == 0);
  CHECK(found[0].bad_bytes == 2);
  CHECK(found[0].first_bad == 1);
  CHECK(found[0].first_bad_byte == 0x93);
  CHECK(found[0].readers == std::vector<std::string>{"instruction 0 aten::where.self_out"});
  CHECK_THAT(found[0].message, Catch::Contains("value 0 (bool[4] constant)") && Catch::Contains("2 of 4 bytes") &&
                                   Catch::Contains("0x93") && Catch::Contains("non-zero as true") &&
                                   Catch::Contains("read by instruction 0 aten::where.self_out"));
}

TEST_CASE("bool constants holding only 0 and 1 are not reported", "[bool_constants][issue28]") {
  auto program = PteReader::read(testing::blob_of(testing::bool_mask_program_bytes({0, 1, 1, 0}), "mask.pte"));
  REQUIRE(program.ok());
  CHECK(non_binary_bool_tensors(*program).empty());
}
