// JSON helpers for tests that compare against reference files written by samples/export.
#pragma once

#include <catch2/catch.hpp>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

namespace etscope::testing {

/// Parses a JSON file, failing the current test if it cannot be opened.
inline nlohmann::json load_json(const std::string& path) {
  std::ifstream in(path);
  INFO(path);
  REQUIRE(in.good());
  return nlohmann::json::parse(in);
}

}  // namespace etscope::testing
