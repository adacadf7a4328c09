// docs/architecture.md stays true: every public header of every library is on the page, and
// every header the page names exists.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>

#include "testing/test_util.h"

namespace fs = std::filesystem;

namespace {

fs::path source_root() { return fs::path(etscope::testing::test_data_dir()).parent_path().parent_path(); }

std::string read_text(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Public headers: <library>/include/etscope/<library>/*.h.
std::set<std::string> public_headers() {
  std::set<std::string> out;
  for (const auto& entry : fs::recursive_directory_iterator(source_root())) {
    const fs::path& p = entry.path();
    const std::string s = p.generic_string();
    if (s.find("/build") != std::string::npos || s.find("/.git/") != std::string::npos) continue;
    if (p.extension() == ".h" && s.find("/include/etscope/") != std::string::npos) out.insert(p.filename().string());
  }
  return out;
}

}  // namespace

TEST_CASE("docs/architecture.md lists every public header, and only existing ones", "[docs]") {
  const std::string page = read_text(source_root() / "docs" / "architecture.md");
  REQUIRE_FALSE(page.empty());
  const std::set<std::string> headers = public_headers();
  REQUIRE(headers.size() > 20);
  for (const std::string& h : headers) {
    INFO(h);
    CHECK(page.find("`" + h + "`") != std::string::npos);
  }
  // Every `name.h` the page names is a public header.
  const std::regex named("`([a-z0-9_/]+\\.h)`");
  for (auto it = std::sregex_iterator(page.begin(), page.end(), named); it != std::sregex_iterator(); ++it) {
    const std::string name = fs::path((*it)[1].str()).filename().string();
    INFO(name);
    CHECK(headers.count(name) == 1);
  }
}

namespace {

// Library folders: top-level folders with include/etscope/<folder>/.
std::set<std::string> library_folders() {
  std::set<std::string> out;
  for (const auto& entry : fs::directory_iterator(source_root())) {
    const std::string name = entry.path().filename().string();
    std::error_code ec;  // hidden folders (.git, .deps with the executorch wheel) are no libraries
    if (name.empty() || name[0] == '.') continue;
    if (fs::is_directory(entry.path() / "include" / "etscope" / name, ec)) out.insert(name);
  }
  return out;
}

// The etscope libraries a folder's CMakeLists.txt links (etscope::<name>).
std::set<std::string> linked_libraries(const std::string& folder) {
  const std::string cmake = read_text(source_root() / folder / "CMakeLists.txt");
  std::set<std::string> out;
  const std::regex lib("etscope::([a-z_]+)");
  for (auto it = std::sregex_iterator(cmake.begin(), cmake.end(), lib); it != std::sregex_iterator(); ++it) {
    if ((*it)[1].str() != folder) out.insert((*it)[1].str());
  }
  return out;
}

}  // namespace

TEST_CASE("docs/architecture.md's dependency edges are the ones the CMake files declare", "[docs]") {
  const std::string page = read_text(source_root() / "docs" / "architecture.md");
  const std::set<std::string> libraries = library_folders();
  REQUIRE(libraries.count("runtime") == 1);
  REQUIRE(libraries.count("inspect") == 1);
  for (const std::string& lib : libraries) {
    INFO(lib);
    // "- `lib` -> `a`, `b` (...)": the edge line, continued on indented lines.
    const size_t at = page.find("\n- `" + lib + "` -> ");
    REQUIRE(at != std::string::npos);
    size_t end = page.find('\n', at + 1);
    while (end != std::string::npos && page.compare(end, 3, "\n  ") == 0) end = page.find('\n', end + 1);
    const std::string line = page.substr(at, end - at);
    std::set<std::string> named;
    const std::regex name("`([a-z_]+)`");
    for (auto it = std::sregex_iterator(line.begin(), line.end(), name); it != std::sregex_iterator(); ++it) {
      if (libraries.count((*it)[1].str()) && (*it)[1].str() != lib) named.insert((*it)[1].str());
    }
    CHECK(named == linked_libraries(lib));
  }
}

TEST_CASE("the runtime links nothing above formats, and no library reaches into another's src/", "[docs]") {
  CHECK(linked_libraries("runtime") == std::set<std::string>{"formats"});
  for (const std::string& lib : library_folders()) {
    INFO(lib);
    const std::string cmake = read_text(source_root() / lib / "CMakeLists.txt");
    for (const std::string& other : library_folders()) {
      if (other != lib) CHECK(cmake.find("/" + other + "/src") == std::string::npos);
    }
  }
  for (const char* consumer : {"fuzz", "bench", "cli", "gui"}) {
    INFO(consumer);
    const std::string cmake = read_text(source_root() / consumer / "CMakeLists.txt");
    CHECK(cmake.find("/src)") == std::string::npos);
  }
}
