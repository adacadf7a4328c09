// What the store verbs (store add, runs, compare, history, sql) and run/train --store share:
// the --store option, tags given as key=value, and opening the store.
#pragma once

#include <CLI/CLI.hpp>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include <unistd.h>

#include <cstdio>
#include <cstdlib>

#include "etscope/core/result.h"
#include "etscope/runtime/runner.h"
#include "etscope/store/store.h"

namespace etscope::cli {

/// Adds `--store PATH|URI` (default: store::Store::default_location()).
inline CLI::Option* add_store_option(CLI::App* sub, std::string& location) {
  return sub->add_option("--store", location,
                         "Run store: an SQLite file or a postgresql:// URI (default $ETSCOPE_STORE, else "
                         "~/.local/share/etscope/runs.sqlite)");
}

inline Result<std::unique_ptr<store::Store>> open_store(const std::string& location) {
  return store::Store::open(location.empty() ? store::Store::default_location() : location);
}

/// "k=v" strings into a map; an entry without '=' or with an empty key is an error naming it.
inline Result<std::map<std::string, std::string>> parse_tags(const std::vector<std::string>& tags) {
  std::map<std::string, std::string> out;
  for (const std::string& t : tags) {
    const size_t eq = t.find('=');
    if (eq == std::string::npos || eq == 0) {
      return Error(ErrorCode::kInvalidArgument, "--tag takes key=value (got '" + t + "')");
    }
    out[t.substr(0, eq)] = t.substr(eq + 1);
  }
  return out;
}

/// The runner's trace written to a new temporary file (for --store without --etdump); the caller
/// removes it.
inline Result<std::string> temporary_etdump(rt::Runner& runner) {
  const char* dir = std::getenv("TMPDIR");
  std::string path = std::string(dir != nullptr && *dir ? dir : "/tmp") + "/etscope-run-XXXXXX";
  const int fd = mkstemp(path.data());
  if (fd < 0) return Error(ErrorCode::kIo, path + ": cannot create a temporary ETDump for --store");
  close(fd);
  auto files = runner.write_trace(path, "");
  if (!files.ok()) {
    std::remove(path.c_str());
    return files.error();
  }
  return path;
}

}  // namespace etscope::cli
