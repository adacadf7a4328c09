// Helpers shared by the etscope tests: where test data lives, loading it, running the CLI.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "etscope/formats/blob.h"

namespace etscope::testing {

// Paths the build configures. Only test_util.cpp is compiled with them, so that every other test
// file's compile line is the same in any clone and a fresh clone's build reuses it from ccache.
std::string test_data_dir();          ///< tests/data
std::string fixture_dir();            ///< tests/fixtures/executorch (committed, some xz-packed)
std::string fixture_extracted_dir();  ///< the build's unpacked copy of the packed fixtures
std::string binary_dir();             ///< the build directory
std::string cli_path();               ///< the etscope binary

/// Path of a file in tests/data/real (copies of ../shared/real-artifacts).
std::string real_artifact(const std::string& name);

/// Path of a fixture made by samples/export: tests/fixtures/executorch/<relative> when committed
/// raw, else its copy unpacked from large.tar.xz into the build tree.
std::string fixture(const std::string& relative);

/// Every real artifact file name with one of the given extensions (".pte", ".ptd", ...).
std::vector<std::string> real_artifacts_with_extension(const std::string& extension);

/// Reads a file, failing the current test if it cannot.
std::shared_ptr<const Blob> load(const std::string& path);

/// A copy of `bytes` as a named in-memory blob.
std::shared_ptr<const Blob> blob_of(const std::vector<uint8_t>& bytes, const std::string& name = "test.bin");

struct CommandResult {
  int exit_code = -1;
  std::string out;
  std::string err;
};

/// Runs build/bin/etscope with `args` (a shell-quoted argument string), capturing both streams.
CommandResult run_etscope(const std::string& args);

/// A fresh empty directory under the build tree for a test's output files.
std::string temp_dir(const std::string& name);

}  // namespace etscope::testing
