#include "testing/test_util.h"

#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace etscope::testing {

std::string test_data_dir() { return ETSCOPE_TEST_DATA_DIR; }
std::string fixture_dir() { return ETSCOPE_FIXTURE_DIR; }
std::string fixture_extracted_dir() { return ETSCOPE_FIXTURE_EXTRACTED_DIR; }
std::string binary_dir() { return ETSCOPE_BINARY_DIR; }
std::string cli_path() { return ETSCOPE_CLI_PATH; }

std::string real_artifact(const std::string& name) { return std::string(ETSCOPE_TEST_DATA_DIR) + "/real/" + name; }

std::string fixture(const std::string& relative) {
  const std::string committed = std::string(ETSCOPE_FIXTURE_DIR) + "/" + relative;
  if (std::filesystem::exists(committed)) return committed;
  return std::string(ETSCOPE_FIXTURE_EXTRACTED_DIR) + "/" + relative;
}

std::vector<std::string> real_artifacts_with_extension(const std::string& extension) {
  std::vector<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(std::string(ETSCOPE_TEST_DATA_DIR) + "/real")) {
    if (entry.path().extension() == extension) names.push_back(entry.path().filename().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

std::shared_ptr<const Blob> load(const std::string& path) {
  auto blob = Blob::open_file(path);
  if (!blob.ok()) FAIL(blob.error().message());
  return *blob;
}

std::shared_ptr<const Blob> blob_of(const std::vector<uint8_t>& bytes, const std::string& name) {
  return Blob::from_bytes(name, bytes);
}

namespace {
std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}
}  // namespace

CommandResult run_etscope(const std::string& args) {
  static int counter = 0;
  const std::string tag = std::to_string(::getpid()) + "_";
  const std::string dir = temp_dir("cli_run_" + tag + std::to_string(++counter));
  const std::string out = dir + "/stdout", err = dir + "/stderr";
  const std::string command = std::string(ETSCOPE_CLI_PATH) + " " + args + " >" + out + " 2>" + err;
  int status = std::system(command.c_str());
  CommandResult r;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  r.out = slurp(out);
  r.err = slurp(err);
  return r;
}

std::string temp_dir(const std::string& name) {
  std::filesystem::path p = std::filesystem::path(ETSCOPE_BINARY_DIR) / "test_tmp" / name;
  std::filesystem::remove_all(p);
  std::filesystem::create_directories(p);
  return p.string();
}

}  // namespace etscope::testing
