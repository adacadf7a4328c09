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

#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include "etscope/core/result.h"
#include "etscope/formats/blob.h"
#include "etscope/runner/runner.h"
#include "etscope/store/store.h"

namespace etscope::cli {

/// Adds `--store PATH|URI` (default: store::Store::default_location()).
inline CLI::Option* add_store_option(CLI::App* sub, std::string& location) {
  return sub->add_option("--store", location,
                         "Run store: an SQLite file or a postgresql:// URI (default $ETSCOPE_STORE, else "
                         "~/.local/share/etscope/runs.sqlite)");
}

/// The store at `location` (default: store::Store::default_location()). Verbs that only read
/// (runs, history, sql, compare of stored runs) pass kExisting: a missing store is one line and
/// exit 1, never a new empty database.
inline Result<std::unique_ptr<store::Store>> open_store(const std::string& location, store::OpenMode mode = store::OpenMode::kCreate) {
  return store::Store::open(location.empty() ? store::Store::default_location() : location, mode);
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

struct StoredRun {
  int64_t run_id = 0;
  std::string location;
};

/// run/train/debug --store: records `request` in the store at `location` with the `--tag`
/// strings and this machine's environment. When the request names no ETDump, the runner's trace
/// goes to the store from memory (`runner` may be null only when the request names one).
inline Result<StoredRun> store_run(const std::string& location, const std::vector<std::string>& tags, store::ImportRequest request,
                                   const runner::Runner* runner) {
  ETSCOPE_ASSIGN_OR_RETURN(request.tags, parse_tags(tags));
  request.environment = store::this_machine();
  if (request.etdump.empty()) {
    if (runner == nullptr) return Error(ErrorCode::kInternal, "store: neither an ETDump file nor a runner's trace to store");
    ETSCOPE_ASSIGN_OR_RETURN(std::vector<uint8_t> trace, runner->trace_bytes());
    request.etdump_bytes = Blob::from_bytes("(in memory)", trace);
  }
  ETSCOPE_ASSIGN_OR_RETURN(auto store, open_store(location));
  ETSCOPE_ASSIGN_OR_RETURN(store::ImportResult r, store->add(request));
  const std::string name = request.etdump.empty() ? request.pte : request.etdump;
  for (const std::string& w : r.warnings) std::fprintf(stderr, "etscope: %s: warning: %s\n", name.c_str(), w.c_str());
  return StoredRun{r.run_id, store->location()};
}

}  // namespace etscope::cli
