// docs/operators.md stays a map a newcomer can trust: every operator etscope registers is on the
// page with the op_<family>.cpp that registers it, and every kernel file the page names exists.
// The registrations are read from the sources (testing/kernel_sources.h) and checked against the
// registry itself, so a registration the reader misses fails here rather than dropping off the page.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>

#include "etscope/runtime/kernel.h"
#include "testing/kernel_sources.h"

#include "testing/test_util.h"

namespace fs = std::filesystem;
using etscope::testing::kernel_source_dir;
using etscope::testing::registered_operator_files;

namespace {

std::string read_text(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string operators_page() {
  return read_text(fs::path(etscope::testing::test_data_dir()).parent_path().parent_path() / "docs" / "operators.md");
}

}  // namespace

TEST_CASE("the kernel sources register exactly the operators of the portable registry", "[docs]") {
  const auto files = registered_operator_files();
  const std::vector<std::string> names = etscope::runtime::KernelRegistry::portable().names();
  REQUIRE(names.size() > 200);
  for (const std::string& name : names) {
    INFO(name);
    CHECK(files.count(name) == 1);
  }
  const std::set<std::string> registered(names.begin(), names.end());
  for (const auto& [name, file] : files) {
    INFO(name << " read from " << file);
    CHECK(registered.count(name) == 1);
    // One family per operator: no operator is registered by two files.
    CHECK(file.find(' ') == std::string::npos);
  }
}

TEST_CASE("docs/operators.md names, for every registered operator, the file that registers it", "[docs]") {
  const std::string page = operators_page();
  REQUIRE_FALSE(page.empty());
  const auto files = registered_operator_files();
  REQUIRE(files.size() > 200);
  for (const auto& [name, file] : files) {
    INFO(name << " is registered in " << file);
    CHECK(page.find("| `" + name + "` | `" + file + "` |") != std::string::npos);
  }
}

TEST_CASE("every kernel file docs/operators.md names exists and registers operators", "[docs]") {
  const std::string page = operators_page();
  std::set<std::string> registering;
  for (const auto& [name, file] : registered_operator_files()) registering.insert(file);
  const std::regex named("`(op_[a-z0-9_]+\\.cpp)`");
  size_t count = 0;
  for (auto it = std::sregex_iterator(page.begin(), page.end(), named); it != std::sregex_iterator(); ++it, ++count) {
    const std::string file = (*it)[1].str();
    INFO(file);
    CHECK(fs::exists(fs::path(kernel_source_dir()) / file));
    CHECK(registering.count(file) == 1);
  }
  CHECK(count > 200);
}
