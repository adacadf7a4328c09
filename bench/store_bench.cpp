// The run store's speed: N synthetic runs of E events imported into SQLite and PostgreSQL side
// by side (each run's ETDump made once by etscope-synth-etdump with its own seed, then added to
// both stores, alternating which goes first), then `runs` and `compare` latency on the filled
// stores, in-process through the library and as whole `etscope` processes.
//   store_bench SQLITE_PATH POSTGRES_URI [--runs N] [--events E] [--repeat R]
// The SQLite file is replaced; the PostgreSQL database must be empty (e.g. a fresh createdb).
#include <sys/wait.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "etscope/core/stats.h"
#include "etscope/store/store.h"

namespace {

using Clock = std::chrono::steady_clock;
double ms_since(Clock::time_point t) { return std::chrono::duration<double, std::milli>(Clock::now() - t).count(); }

using etscope::median;

double percentile90(std::vector<double> v) { return etscope::percentile(std::move(v), 90); }

// Whole-process wall time of a shell command, in milliseconds.
double time_command(const std::string& cmd) {
  const auto t = Clock::now();
  const int rc = std::system((cmd + " > /dev/null").c_str());
  const double ms = ms_since(t);
  if (rc != 0) {
    std::fprintf(stderr, "store_bench: failed: %s\n", cmd.c_str());
    std::exit(1);
  }
  return ms;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: store_bench SQLITE_PATH POSTGRES_URI [--runs N] [--events E] [--repeat R]\n");
    return 2;
  }
  const std::string sqlite_path = argv[1], pg_uri = argv[2];
  int runs = 10000, events = 1000, repeat = 20;
  for (int i = 3; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--runs") == 0) runs = std::atoi(argv[i + 1]);
    else if (std::strcmp(argv[i], "--events") == 0) events = std::atoi(argv[i + 1]);
    else if (std::strcmp(argv[i], "--repeat") == 0) repeat = std::atoi(argv[i + 1]);
  }
  const std::string bin = std::filesystem::path(argv[0]).parent_path().string();
  std::filesystem::remove(sqlite_path);
  auto lite = etscope::store::Store::open(sqlite_path);
  auto pg = etscope::store::Store::open(pg_uri);
  if (!lite.ok() || !pg.ok()) {
    std::fprintf(stderr, "store_bench: %s\n", (!lite.ok() ? lite.error() : pg.error()).message().c_str());
    return 1;
  }
  const std::string dump = std::filesystem::temp_directory_path().string() + "/store_bench.etdp";
  std::vector<double> lite_ms, pg_ms;
  const auto env = etscope::store::this_machine();
  // ~1000 events per run: 20 executions of 24 kernels (each with its OPERATOR_CALL) + Method::execute.
  const int ops = std::max(1, (events / 20 - 1) / 2);
  for (int i = 0; i < runs; ++i) {
    const std::string synth = bin + "/etscope-synth-etdump " + dump + " --events " + std::to_string(events) + " --ops-per-run " +
                              std::to_string(ops) + " --seed " + std::to_string(i + 1) + (i % 100 == 99 ? " --slow 3:1.5" : "");
    time_command(synth);
    etscope::store::ImportRequest req;
    req.etdump = dump;
    req.environment = env;
    req.tags = {{"build", std::to_string(i)}, {"device", i % 2 ? "pixel" : "galaxy"}};
    for (int k = 0; k < 2; ++k) {
      const bool lite_turn = (i + k) % 2 == 0;
      auto& store = lite_turn ? *lite.value() : *pg.value();
      const auto t = Clock::now();
      auto r = store.add(req);
      (lite_turn ? lite_ms : pg_ms).push_back(ms_since(t));
      if (!r.ok() || !r->created) {
        std::fprintf(stderr, "store_bench: import %d: %s\n", i, r.ok() ? "not created" : r.error().message().c_str());
        return 1;
      }
    }
    if ((i + 1) % 1000 == 0) std::fprintf(stderr, "  %d runs imported\n", i + 1);
  }
  std::printf("import of %d runs of %d events: per run median %.2f ms (p90 %.2f) SQLite, %.2f ms (p90 %.2f) PostgreSQL\n", runs, events,
              median(lite_ms), percentile90(lite_ms), median(pg_ms), percentile90(pg_ms));

  const std::string etscope = bin + "/etscope";
  struct Case {
    const char* name;
    std::string args;
  };
  const std::string a = "build=" + std::to_string(runs / 2), b = "build=" + std::to_string(runs / 2 + 1);
  const std::vector<Case> cases = {{"runs (all runs)", "runs"},
                                   {"runs --limit 50", "runs --limit 50"},
                                   {"runs --tag device=pixel --limit 50", "runs --tag device=pixel --limit 50"},
                                   {"compare two runs by tag", "compare " + a + " " + b + " --threshold 1000%"}};
  for (const Case& c : cases) {
    std::vector<double> l, p;
    for (int r = 0; r < repeat; ++r) {
      l.push_back(time_command(etscope + " " + c.args + " --store '" + sqlite_path + "'"));
      p.push_back(time_command(etscope + " " + c.args + " --store '" + pg_uri + "'"));
    }
    std::printf("etscope %-36s whole process median %.1f ms SQLite, %.1f ms PostgreSQL\n", c.name, median(l), median(p));
  }
  // In-process: the library calls the commands make.
  for (auto* store : {lite.value().get(), pg.value().get()}) {
    std::vector<double> list, cmp;
    for (int r = 0; r < repeat; ++r) {
      auto t = Clock::now();
      auto all = store->runs({});
      list.push_back(ms_since(t));
      t = Clock::now();
      auto ia = store->resolve(a, env), ib = store->resolve(b, env);
      auto sa = store->samples(*ia), sb = store->samples(*ib);
      auto c = etscope::inspect::compare_runs(*sa, *sb);
      cmp.push_back(ms_since(t));
      if (!all.ok() || all->size() != static_cast<size_t>(runs) || c.rows.empty()) return 1;
    }
    std::printf("in process, %s: runs() of all %d runs median %.1f ms; resolve + samples + compare_runs median %.2f ms\n", store->backend(), runs,
                median(list), median(cmp));
  }
  std::filesystem::remove(dump);
  return 0;
}
