#include "testing/kernel_sources.h"

#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

namespace fs = std::filesystem;

namespace etscope::testing {

std::string kernel_source_dir() {
  return (fs::path(ETSCOPE_TEST_DATA_DIR).parent_path().parent_path() / "runtime" / "src" / "kernels").string();
}

std::map<std::string, std::string> registered_operator_files() {
  std::map<std::string, std::string> files;
  const std::regex file_name("op_[a-z0-9_]+\\.cpp");
  const std::regex function_start("^void register_[a-z0-9_]+_kernels\\(KernelRegistry& r\\) \\{");
  const std::regex operator_literal("[A-Za-z_][A-Za-z0-9_.]*\\(\\s*\"([A-Za-z_][A-Za-z0-9_]*::[A-Za-z0-9_.]+)\"");
  for (const auto& entry : fs::directory_iterator(kernel_source_dir())) {
    const std::string name = entry.path().filename().string();
    if (!std::regex_match(name, file_name)) continue;
    std::ifstream in(entry.path());
    std::string line;
    bool inside = false;
    while (std::getline(in, line)) {
      if (!inside) {
        inside = std::regex_search(line, function_start);
        continue;
      }
      if (line == "}") break;  // the registration function ends at the first closing brace in column 0
      for (auto it = std::sregex_iterator(line.begin(), line.end(), operator_literal); it != std::sregex_iterator(); ++it) {
        std::string& file = files[(*it)[1].str()];
        file += (file.empty() ? "" : " ") + name;
      }
    }
  }
  return files;
}

}  // namespace etscope::testing
