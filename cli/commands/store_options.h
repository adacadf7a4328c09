// What the store verbs (store add, runs, compare, history, sql) and run/train/debug --store
// share: the --store and --format options, tags given as key=value, opening the store, and
// recording a run in it.
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
#include "etscope/runner/runner.h"
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

/// `--format table|csv|json` of the store verbs' tables (cli/render/table.h).
inline void add_table_format(CLI::App* sub, std::string& format) {
  sub->add_option("--format", format, "table (default), csv or json")->check(CLI::IsMember({"table", "csv", "json"}));
}

/// The runner's trace written to a new temporary file (for --store without --etdump); the caller
/// removes it.
inline Result<std::string> temporary_etdump(runner::Runner& runner) {
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

struct StoredRun {
  int64_t run_id = 0;
  std::string location;
};

/// run/train/debug --store: records `request` in the store at `location` with the `--tag`
/// strings and this machine's environment. When the request names no ETDump, the runner's trace
/// goes through a temporary file, removed afterwards whatever happens.
inline Result<StoredRun> store_run(const std::string& location, const std::vector<std::string>& tags, store::ImportRequest request,
                                   runner::Runner& runner) {
  ETSCOPE_ASSIGN_OR_RETURN(request.tags, parse_tags(tags));
  request.environment = store::this_machine();
  std::string temp;
  if (request.etdump.empty()) {
    ETSCOPE_ASSIGN_OR_RETURN(temp, temporary_etdump(runner));
    request.etdump = temp;
  }
  auto stored = [&]() -> Result<StoredRun> {
    ETSCOPE_ASSIGN_OR_RETURN(auto store, open_store(location));
    ETSCOPE_ASSIGN_OR_RETURN(store::ImportResult r, store->add(request));
    return StoredRun{r.run_id, store->location()};
  }();
  if (!temp.empty()) std::remove(temp.c_str());
  return stored;
}

}  // namespace etscope::cli
