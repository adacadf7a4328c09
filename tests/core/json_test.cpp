// core/json.h: parsing never throws, Python's non-finite tokens become floats, and the checked
// accessors refuse members of the wrong type.
#include <catch2/catch.hpp>

#include <cmath>

#include "etscope/core/json.h"

using etscope::Json;
using etscope::parse_json;

TEST_CASE("Python's NaN, Infinity and -Infinity tokens parse as float values", "[json]") {
  auto j = parse_json(R"({"mask": [-Infinity, 0.0, Infinity], "x": NaN, "s": "NaN Infinity"})", 8, "t.json");
  REQUIRE(j.ok());
  const Json& mask = (*j)["mask"];
  REQUIRE(mask.size() == 3);
  CHECK(std::isinf(mask[0].get<double>()));
  CHECK(mask[0].get<double>() < 0);
  CHECK(mask[1].get<double>() == 0.0);
  CHECK(std::isinf(mask[2].get<double>()));
  CHECK(mask[2].get<double>() > 0);
  CHECK(std::isnan((*j)["x"].get<double>()));
  // Inside strings the words are text.
  CHECK((*j)["s"].get<std::string>() == "NaN Infinity");
}

TEST_CASE("Tokens that only start like a non-finite number stay invalid", "[json]") {
  CHECK_FALSE(parse_json("[NaNa]", 8, "t.json").ok());
  CHECK_FALSE(parse_json("[Infinity2]", 8, "t.json").ok());
  CHECK_FALSE(parse_json("[Inf]", 8, "t.json").ok());
  auto bad = parse_json("{\"a\": Nope}", 8, "t.json");
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.error().message().rfind("t.json: invalid JSON", 0) == 0);
}

TEST_CASE("A string spelling the internal marker is still only a string", "[json]") {
  // The marker needs a NUL character, which a document can write as \u0000 inside a string;
  // such a string must not turn into a number unless it is exactly a marker, and plain strings
  // starting with NUL keep their text.
  auto j = parse_json(R"(["\u0000other"])", 8, "t.json");
  REQUIRE(j.ok());
  CHECK((*j)[0].is_string());
}

TEST_CASE("Nesting beyond the limit is refused before parsing", "[json]") {
  std::string deep(100, '[');
  deep += std::string(100, ']');
  auto j = parse_json(deep, 16, "deep.json");
  REQUIRE_FALSE(j.ok());
  CHECK(j.error().code() == etscope::ErrorCode::kOutOfResources);
}

TEST_CASE("Checked accessors answer absent or wrong-typed members with null", "[json]") {
  auto j = parse_json(R"({"is_sequence": "yes", "n": 3, "f": 1.5, "list": [1]})", 8, "t.json");
  REQUIRE(j.ok());
  CHECK_FALSE(etscope::as_bool((*j)["is_sequence"]).has_value());
  CHECK(etscope::typed_member(*j, "is_sequence", Json::value_t::boolean) == nullptr);
  CHECK(etscope::typed_member(*j, "list", Json::value_t::array) != nullptr);
  CHECK(etscope::typed_member(*j, "missing", Json::value_t::array) == nullptr);
  CHECK(etscope::typed_member(*j, "n", Json::value_t::number_float) != nullptr);
  CHECK(etscope::as_double((*j)["f"]).value() == 1.5);
  CHECK(etscope::as_int64((*j)["n"]).value() == 3);
  CHECK_FALSE(etscope::as_int64((*j)["f"]).has_value());
}
