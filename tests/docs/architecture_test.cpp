// docs/architecture.md stays true: every public header of every library is on the page, and
// every header the page names exists.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>

namespace fs = std::filesystem;

namespace {

fs::path source_root() { return fs::path(ETSCOPE_TEST_DATA_DIR).parent_path().parent_path(); }

std::string read_text(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Public headers: <library>/include/etscope/<name>/*.h and runtime/runner/include/....
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
