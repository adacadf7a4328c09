// The run store, for real on both backends: an SQLite file, and a throwaway PostgreSQL server
// the CTest fixture `postgres` starts (tests/store/postgres_fixture.sh; its URI in the file
// named by ETSCOPE_TEST_POSTGRES_FILE). The PostgreSQL tests fail, never skip, when the server is
// missing. Each PostgreSQL test works in a schema of its own.
#include <fcntl.h>
#include <libpq-fe.h>
#include <signal.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <optional>
#include <nlohmann/json.hpp>
#include <thread>

#include "etscope/etdump/etdump_reader.h"
#include "etscope/core/stats.h"
#include "etscope/core/version.h"
#include "etscope/inspect/compare.h"
#include "etscope/store/store.h"
#include "testing/test_util.h"

using namespace etscope;
using etscope::testing::fixture;
using etscope::testing::run_etscope;
using etscope::testing::temp_dir;

namespace {

template <typename T>
T must(Result<T> r) {
  if (!r.ok()) FAIL(r.error().message());
  return std::move(r).value();
}

std::string postgres_base_uri() {
  const char* file = std::getenv("ETSCOPE_TEST_POSTGRES_FILE");
  INFO("ETSCOPE_TEST_POSTGRES_FILE names the file the postgres fixture writes; run the tests through ctest");
  REQUIRE(file != nullptr);
  std::ifstream in(file);
  INFO(file << " is missing: the postgres fixture did not start a server (see its log in the build tree)");
  REQUIRE(in.good());
  std::string uri;
  std::getline(in, uri);
  REQUIRE(!uri.empty());
  return uri;
}

// A fresh schema on the test server; the URI makes it the connection's search path.
std::string fresh_postgres(const std::string& name) {
  const std::string base = postgres_base_uri();
  PGconn* c = PQconnectdb(base.c_str());
  REQUIRE(PQstatus(c) == CONNECTION_OK);
  const std::string sql = "DROP SCHEMA IF EXISTS " + name + " CASCADE; CREATE SCHEMA " + name;
  PGresult* r = PQexec(c, sql.c_str());
  const bool ok = PQresultStatus(r) == PGRES_COMMAND_OK;
  PQclear(r);
  PQfinish(c);
  REQUIRE(ok);
  return base + "?options=-csearch_path%3D" + name;
}

std::string fresh_sqlite(const std::string& name) { return temp_dir("store_db_" + name) + "/runs.sqlite"; }

std::string quoted(const std::string& s) { return "'" + s + "'"; }

// Both backends: an SQLite file and a PostgreSQL schema.
std::vector<std::string> both(const std::string& name) { return {fresh_sqlite(name), fresh_postgres("t_" + name)}; }

store::ImportRequest cifar10_request() {
  store::ImportRequest r;
  r.etdump = fixture("cifar10/cifar10.etdp");
  r.pte = fixture("cifar10/cifar10.pte");
  r.tags = {{"device", "ci"}, {"commit", "abc"}};
  r.environment = store::this_machine();
  return r;
}

std::string synth(const std::string& dir, const std::string& name, const std::string& args) {
  const std::string path = dir + "/" + name;
  const std::string cmd = std::string(etscope::testing::binary_dir()) + "/bin/etscope-synth-etdump " + path + " " + args + " > /dev/null";
  REQUIRE(std::system(cmd.c_str()) == 0);
  return path;
}

}  // namespace

TEST_CASE("the run store keeps an imported ETDump as the Inspector's per-operator samples (SQLite and PostgreSQL)", "[store]") {
  for (const std::string& location : both("import")) {
    INFO(location);
    auto s = must(store::Store::open(location));
    const store::ImportResult first = must(s->add(cifar10_request()));
    CHECK(first.created);
    const store::ImportResult again = must(s->add(cifar10_request()));
    CHECK_FALSE(again.created);
    CHECK(again.run_id == first.run_id);

    // Exactly what libinspect derives from the dump.
    auto dump = std::make_shared<const etdump::EtDumpFile>(must(etdump::EtDumpReader::open(fixture("cifar10/cifar10.etdp"))));
    const inspect::Inspector inspector = must(inspect::Inspector::build(dump, nullptr, nullptr));
    const inspect::RunSamples want = inspect::run_samples(inspector);
    const inspect::RunSamples got = must(s->samples(first.run_id));
    REQUIRE(got.operators.size() == want.operators.size());
    REQUIRE(!want.operators.empty());
    CHECK(got.method_ms == want.method_ms);
    for (size_t i = 0; i < want.operators.size(); ++i) {
      CHECK(got.operators[i].name == want.operators[i].name);
      CHECK(got.operators[i].instruction == want.operators[i].instruction);
      CHECK(got.operators[i].samples_ms == want.operators[i].samples_ms);
    }

    const auto runs = must(s->runs({}));
    REQUIRE(runs.size() == 1);
    CHECK(runs[0].program == "cifar10.pte");
    CHECK(runs[0].program_hash.size() == 64);
    CHECK(runs[0].tags.at("device") == "ci");
    CHECK(runs[0].executions == static_cast<int64_t>(want.method_ms.size()));
    REQUIRE(runs[0].median_ms);
    CHECK(*runs[0].median_ms == median(want.method_ms));
    store::RunFilter by_tag, by_program, by_date;
    by_tag.tags = {{"device", "phone"}};
    by_program.program = "cifar10.pte";
    by_date.since = "2999-01-01";
    CHECK(must(s->runs(by_tag)).empty());
    CHECK(must(s->runs(by_program)).size() == 1);
    CHECK(must(s->runs(by_date)).empty());

    CHECK(must(s->resolve("device=ci", {})) == first.run_id);
    CHECK(must(s->resolve(std::to_string(first.run_id), {})) == first.run_id);
    CHECK_FALSE(s->resolve("device=none", {}).ok());
    CHECK_FALSE(s->resolve("999", {}).ok());

    const auto history = must(s->history("cifar10.pte", ""));
    REQUIRE(history.size() == 1);
    CHECK(history[0].median_ms == median(want.method_ms));
    CHECK(must(s->history("cifar10.pte", "convolution.out")).size() == 1);
    CHECK_FALSE(s->history("nothing.pte", "").ok());

    const store::QueryResult q = must(s->sql("SELECT program, method, executions FROM v_runs"));
    REQUIRE(q.rows.size() == 1);
    CHECK(q.columns == std::vector<std::string>{"program", "method", "executions"});
    CHECK(*q.rows[0][0] == "cifar10.pte");
    for (const char* view : {"v_runs", "v_tags", "v_operators", "v_samples", "v_programs", "v_memory", "v_curves", "v_gaps", "v_outputs", "v_findings"}) {
      INFO(view);
      CHECK(s->sql(std::string("SELECT * FROM ") + view).ok());
    }
    CHECK(must(s->sql("SELECT count(*) AS n FROM v_memory")).rows.size() == 1);
    const inspect::Comparison same = inspect::compare_runs(got, got);
    CHECK_FALSE(same.gate_failed);
  }
}

TEST_CASE("an ETDump imported from memory is the same run as its file (SQLite and PostgreSQL)", "[store]") {
  for (const std::string& location : both("memory")) {
    INFO(location);
    auto s = must(store::Store::open(location));
    store::ImportRequest from_memory = cifar10_request();
    from_memory.etdump_bytes = etscope::testing::load(from_memory.etdump);
    from_memory.etdump.clear();
    const store::ImportResult first = must(s->add(from_memory));
    CHECK(first.created);
    const store::RunRow row = must(s->run(first.run_id));
    CHECK(row.file == from_memory.etdump_bytes->name());
    CHECK(row.method == "forward");
    // The file's bytes hash the same: importing the file finds the run already stored.
    const store::ImportResult again = must(s->add(cifar10_request()));
    CHECK_FALSE(again.created);
    CHECK(again.run_id == first.run_id);
    // And the samples are the file's.
    auto dump = std::make_shared<const etdump::EtDumpFile>(must(etdump::EtDumpReader::open(fixture("cifar10/cifar10.etdp"))));
    const inspect::RunSamples want = inspect::run_samples(must(inspect::Inspector::build(dump, nullptr, nullptr)));
    const inspect::RunSamples got = must(s->samples(first.run_id));
    CHECK(got.method_ms == want.method_ms);
    REQUIRE(got.operators.size() == want.operators.size());
    for (size_t i = 0; i < want.operators.size(); ++i) CHECK(got.operators[i].samples_ms == want.operators[i].samples_ms);
  }
}

TEST_CASE("an import of files of different models is refused with one line", "[store]") {
  auto s = must(store::Store::open(fresh_sqlite("mismatch")));
  store::ImportRequest r = cifar10_request();
  r.pte = fixture("simple_conv/simple_conv.pte");
  auto refused = s->add(r);
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.error().message().find('\n') == std::string::npos);
  CHECK(must(s->runs({})).empty());
}

TEST_CASE("etscope sql is read-only and takes one statement", "[store]") {
  for (const std::string& location : both("sql")) {
    INFO(location);
    auto s = must(store::Store::open(location));
    must(s->add(cifar10_request()));
    CHECK_FALSE(s->sql("DELETE FROM runs").ok());
    CHECK_FALSE(s->sql("SELECT 1; DELETE FROM runs").ok());
    CHECK_FALSE(s->sql("WITH x AS (DELETE FROM runs RETURNING id) SELECT * FROM x").ok());
    auto again = must(store::Store::open(location));
    CHECK(must(again->runs({})).size() == 1);
    // The statement alone was read-only: the same Store imports afterwards.
    store::ImportRequest other = cifar10_request();
    other.etdump = fixture("cifar10/cifar10.profile.etdp");
    auto added = s->add(other);
    INFO((added.ok() ? "" : added.error().message()));
    CHECK(added.ok());
  }
}

TEST_CASE("a store that is not one or damaged or newer or locked gives one line", "[store]") {
  const std::string dir = temp_dir("store_bad");
  SECTION("garbage bytes") {
    const std::string path = dir + "/garbage.sqlite";
    std::ofstream(path) << std::string(5000, 'x');
    auto s = store::Store::open(path);
    REQUIRE_FALSE(s.ok());
    CHECK_THAT(s.error().message(), Catch::Contains("garbage.sqlite") && Catch::Contains("not an etscope store"));
  }
  SECTION("a directory") {
    auto s = store::Store::open(dir);
    REQUIRE_FALSE(s.ok());
    CHECK_THAT(s.error().message(), Catch::Contains("not a regular file"));
  }
  SECTION("someone else's database with a runs table") {
    const std::string path = dir + "/other.sqlite";
    sqlite3* db = nullptr;
    REQUIRE(sqlite3_open(path.c_str(), &db) == SQLITE_OK);
    REQUIRE(sqlite3_exec(db, "CREATE TABLE runs (x INTEGER)", nullptr, nullptr, nullptr) == SQLITE_OK);
    sqlite3_close(db);
    auto s = store::Store::open(path);
    REQUIRE_FALSE(s.ok());
    CHECK_THAT(s.error().message(), Catch::Contains("not an etscope store"));
  }
  SECTION("a schema newer than this etscope") {
    const std::string path = dir + "/newer.sqlite";
    must(store::Store::open(path));
    sqlite3* db = nullptr;
    REQUIRE(sqlite3_open(path.c_str(), &db) == SQLITE_OK);
    REQUIRE(sqlite3_exec(db, "UPDATE etscope_meta SET value = '99' WHERE key = 'schema_version'", nullptr, nullptr, nullptr) == SQLITE_OK);
    sqlite3_close(db);
    auto s = store::Store::open(path);
    REQUIRE_FALSE(s.ok());
    CHECK_THAT(s.error().message(), Catch::Contains("version 99") && Catch::Contains("newer"));
    auto cli = run_etscope("runs --store " + path);
    CHECK(cli.exit_code == 1);
    CHECK_THAT(cli.err, Catch::Contains("newer"));
  }
  SECTION("locked by another writer") {
    const std::string path = dir + "/locked.sqlite";
    must(store::Store::open(path));
    sqlite3* db = nullptr;
    REQUIRE(sqlite3_open(path.c_str(), &db) == SQLITE_OK);
    REQUIRE(sqlite3_exec(db, "BEGIN EXCLUSIVE", nullptr, nullptr, nullptr) == SQLITE_OK);
    setenv("ETSCOPE_STORE_TIMEOUT_MS", "200", 1);
    auto s = store::Store::open(path);
    Result<store::ImportResult> r = s.ok() ? s.value()->add(cifar10_request()) : Result<store::ImportResult>(s.error());
    unsetenv("ETSCOPE_STORE_TIMEOUT_MS");
    sqlite3_exec(db, "ROLLBACK", nullptr, nullptr, nullptr);
    sqlite3_close(db);
    REQUIRE_FALSE(r.ok());
    CHECK_THAT(r.error().message(), Catch::Contains("locked.sqlite") && Catch::Contains("another process"));
  }
  SECTION("a PostgreSQL server that is not there") {
    auto s = store::Store::open("postgresql://nobody:secret@127.0.0.1:1/none");
    REQUIRE_FALSE(s.ok());
    CHECK_THAT(s.error().message(), Catch::Contains("cannot connect") && !Catch::Contains("secret"));
  }
}

TEST_CASE("an import killed with SIGKILL leaves the store as it was", "[store]") {
  const std::string dir = temp_dir("store_kill");
  const std::string big = synth(dir, "big.etdp", "--events 400000 --ops-per-run 400 --seed 3");
  const std::string bin = std::string(etscope::testing::binary_dir()) + "/bin/etscope";
  auto start_import = [&](const std::string& location) {
    const pid_t pid = fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
      const int devnull = open("/dev/null", O_WRONLY);
      dup2(devnull, 1);
      dup2(devnull, 2);
      execl(bin.c_str(), bin.c_str(), "store", "add", big.c_str(), "--store", location.c_str(), static_cast<char*>(nullptr));
      _exit(127);
    }
    return pid;
  };
  const std::vector<std::string> probes = both("kill_probe");
  const std::vector<std::string> locations = both("kill");
  for (size_t k = 0; k < locations.size(); ++k) {
    const std::string& location = locations[k];
    INFO(location);
    must(store::Store::open(location));
    must(store::Store::open(probes[k]));
    // How long a whole import takes on this backend and machine, to kill the next ones part-way.
    const auto t0 = std::chrono::steady_clock::now();
    int status = 0;
    waitpid(start_import(probes[k]), &status, 0);
    REQUIRE(WIFEXITED(status));
    REQUIRE(WEXITSTATUS(status) == 0);
    const auto whole = std::chrono::steady_clock::now() - t0;
    // The whole run, as a completed import stores it (the dump's last execution is cut short,
    // so most operators have one sample fewer than the method).
    inspect::RunSamples complete;
    {
      auto probe = must(store::Store::open(probes[k]));
      const auto probe_runs = must(probe->runs({}));
      REQUIRE(probe_runs.size() == 1);
      complete = must(probe->samples(probe_runs[0].id));
    }
    REQUIRE(complete.method_ms.size() > 400);
    REQUIRE(complete.operators.size() == 400);
    bool killed_before_commit = false;
    for (double part : {0.2, 0.5, 0.8}) {
      const pid_t pid = start_import(location);
      std::this_thread::sleep_for(std::chrono::duration_cast<std::chrono::microseconds>(whole * part));
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      auto s = must(store::Store::open(location));
      const auto runs = must(s->runs({}));
      if (WIFSIGNALED(status) && runs.empty()) killed_before_commit = true;
      // Either nothing or the whole run: never a run without all its samples.
      for (const auto& r : runs) {
        const inspect::RunSamples samples = must(s->samples(r.id));
        CHECK(samples.method_ms.size() == static_cast<size_t>(r.executions));
        CHECK(samples.method_ms == complete.method_ms);
        REQUIRE(samples.operators.size() == complete.operators.size());
        for (size_t o = 0; o < samples.operators.size(); ++o) CHECK(samples.operators[o].samples_ms == complete.operators[o].samples_ms);
      }
      if (!runs.empty()) break;
    }
    CHECK(killed_before_commit);
    // The store still takes the import, once.
    auto s = must(store::Store::open(location));
    store::ImportRequest req;
    req.etdump = big;
    must(s->add(req));
    CHECK(must(s->runs({})).size() == 1);
    if (location.find("postgresql") == std::string::npos) {
      sqlite3* db = nullptr;
      REQUIRE(sqlite3_open(location.c_str(), &db) == SQLITE_OK);
      sqlite3_stmt* st = nullptr;
      REQUIRE(sqlite3_prepare_v2(db, "PRAGMA integrity_check", -1, &st, nullptr) == SQLITE_OK);
      REQUIRE(sqlite3_step(st) == SQLITE_ROW);
      CHECK(std::string(reinterpret_cast<const char*>(sqlite3_column_text(st, 0))) == "ok");
      sqlite3_finalize(st);
      sqlite3_close(db);
    }
  }
}

namespace {

// Runs `etscope store add` on each dump into `location`, all at once, and checks that every
// process exits 0.
void import_at_once(const std::string& location, const std::vector<std::string>& dumps) {
  const std::string bin = std::string(etscope::testing::binary_dir()) + "/bin/etscope";
  std::vector<pid_t> pids;
  for (const std::string& dump : dumps) {
    const pid_t pid = fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
      const int devnull = open("/dev/null", O_WRONLY);
      dup2(devnull, 1);
      execl(bin.c_str(), bin.c_str(), "store", "add", dump.c_str(), "--store", location.c_str(), static_cast<char*>(nullptr));
      _exit(127);
    }
    pids.push_back(pid);
  }
  for (pid_t pid : pids) {
    int status = 0;
    waitpid(pid, &status, 0);
    CHECK(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);
  }
}

}  // namespace

TEST_CASE("two processes importing at once both succeed and the same bytes are one run", "[store]") {
  const std::string dir = temp_dir("store_concurrent");
  const std::string a = synth(dir, "a.etdp", "--events 60000 --ops-per-run 100 --seed 1");
  const std::string b = synth(dir, "b.etdp", "--events 60000 --ops-per-run 100 --seed 2");
  for (const std::string& location : both("concurrent")) {
    INFO(location);
    for (const auto& [x, y, expected] : {std::make_tuple(a, b, size_t{2}), std::make_tuple(a, a, size_t{2})}) {
      import_at_once(location, {x, y});
      auto s = must(store::Store::open(location));
      CHECK(must(s->runs({})).size() == expected);
    }
  }
}

// Both processes create the store: switching a new SQLite file to WAL is reported busy to the
// second one without the busy timeout's wait (it failed about one time in forty), so creation
// retries. Many rounds, three processes each, each on a new file.
TEST_CASE("processes that create a new SQLite store at once all succeed", "[store]") {
  const std::string dir = temp_dir("store_create_race");
  const std::string a = synth(dir, "a.etdp", "--events 300 --ops-per-run 10 --seed 3");
  const std::string b = synth(dir, "b.etdp", "--events 300 --ops-per-run 10 --seed 4");
  for (int round = 0; round < 60; ++round) {
    INFO("round " << round);
    const std::string location = dir + "/runs" + std::to_string(round) + ".sqlite";
    import_at_once(location, {a, b, a});
    auto s = must(store::Store::open(location));
    CHECK(must(s->runs({})).size() == 2);
  }
}

TEST_CASE("etscope compare finds a slowed operator and exits 1 and passes an unchanged rerun", "[store][cli]") {
  const std::string dir = temp_dir("store_compare");
  const std::string base = synth(dir, "base.etdp", "--events 20000 --ops-per-run 40 --seed 11");
  const std::string same = synth(dir, "same.etdp", "--events 20000 --ops-per-run 40 --seed 12");
  const std::string slow = synth(dir, "slow.etdp", "--events 20000 --ops-per-run 40 --seed 13 --slow 7:3");
  for (const std::string& location : both("compare")) {
    INFO(location);
    auto ok = run_etscope("compare " + base + " " + same + " --store " + quoted(location));
    INFO(ok.out << ok.err);
    CHECK(ok.exit_code == 0);
    CHECK_THAT(ok.out, Catch::Contains("0 regressions"));
    auto bad = run_etscope("compare " + base + " " + slow + " --store " + quoted(location) + " --format json");
    CHECK(bad.exit_code == 1);
    const auto j = nlohmann::json::parse(bad.out);
    CHECK(j["gate_failed"] == true);
    CHECK(j["regressions"] == 1);
    bool found = false;
    for (const auto& row : j["rows"]) {
      if (row["verdict"] == "regression" && row["operator"] != "Method::execute") {
        found = true;
        CHECK(row["instruction"] == 7);
        CHECK(row["p"].get<double>() < 1e-6);
        CHECK(row["delta"].get<double>() > 1.0);
      }
    }
    CHECK(found);
    // A threshold above the change lets it pass.
    CHECK(run_etscope("compare " + base + " " + slow + " --store " + quoted(location) + " --threshold 500%").exit_code == 0);
    CHECK(run_etscope("compare " + base + " " + slow + " --store " + quoted(location) + " --threshold lots").exit_code == 2);
    auto runs = run_etscope("runs --format json --store " + quoted(location));
    REQUIRE(runs.exit_code == 0);
    CHECK(nlohmann::json::parse(runs.out).size() == 3);
    auto sql = run_etscope("sql \"SELECT file, executions FROM v_runs ORDER BY run_id\" --format csv --store " + quoted(location));
    REQUIRE(sql.exit_code == 0);
    CHECK(sql.out == "file,executions\nbase.etdp,247\nsame.etdp,247\nslow.etdp,247\n");
    CHECK(run_etscope("sql \"DROP TABLE runs\" --store " + quoted(location)).exit_code == 1);
    // history needs a stored program: store one run of a real program twice over, with --pte.
    const std::string etdp = dir + "/mlp.etdp";
    REQUIRE(run_etscope("run " + fixture("training/mlp_mse.pte") + " --iterations 5 --etdump " + etdp + " --store " + quoted(location) +
                        " --tag kind=first").exit_code == 0);
    auto outputs = run_etscope("sql \"SELECT output, dtype, shape FROM v_outputs ORDER BY output\" --format csv --store " + quoted(location));
    REQUIRE(outputs.exit_code == 0);
    // The MLP's outputs: loss, prediction, four gradients, four parameters (CSV quotes the commas).
    CHECK(outputs.out == "output,dtype,shape\n0,f32,[]\n1,f32,\"[4,2]\"\n2,f32,\"[8,4]\"\n3,f32,[8]\n4,f32,\"[2,8]\"\n5,f32,[2]\n"
                         "6,f32,\"[8,4]\"\n7,f32,[8]\n8,f32,\"[2,8]\"\n9,f32,[2]\n");
    auto hist = run_etscope("history mlp_mse.pte --plot " + dir + "/h.svg --store " + quoted(location));
    INFO(hist.err);
    REQUIRE(hist.exit_code == 0);
    CHECK_THAT(hist.out, Catch::Contains("mlp_mse.pte (sha256 ") && Catch::Contains(") (Method::execute), 1 run\n"));  // issue 28: the hash, "1 run"
    CHECK(std::filesystem::file_size(dir + "/h.svg") > 200);
    auto by_op = run_etscope("history mlp_mse.pte --op addmm.out --format json --store " + quoted(location));
    REQUIRE(by_op.exit_code == 0);
    CHECK(nlohmann::json::parse(by_op.out).size() == 1);
    CHECK(run_etscope("history nothing.pte --store " + quoted(location)).exit_code == 1);
  }
}

TEST_CASE("issue 28: etscope compare of two ETDump files stores nothing unless --store is given", "[store][cli]") {
  const std::string dir = temp_dir("store_compare_files");
  const std::string base = synth(dir, "base.etdp", "--events 20000 --ops-per-run 40 --seed 11");
  const std::string slow = synth(dir, "slow.etdp", "--events 20000 --ops-per-run 40 --seed 13 --slow 7:3");
  const std::string default_store = dir + "/default/runs.sqlite";
  setenv("ETSCOPE_STORE", default_store.c_str(), 1);
  auto r = run_etscope("compare " + base + " " + slow + " --format json");
  auto table = run_etscope("compare " + base + " " + base);
  unsetenv("ETSCOPE_STORE");
  INFO(r.out << r.err << table.out << table.err);
  CHECK(r.exit_code == 1);
  CHECK_FALSE(std::filesystem::exists(default_store));
  CHECK_FALSE(std::filesystem::exists(dir + "/default"));
  const auto j = nlohmann::json::parse(r.out);
  CHECK(j["a"]["file"] == base);
  CHECK(j["regressions"] == 1);
  CHECK(j["multiple_testing"] == "benjamini-hochberg");
  CHECK(j["min_change_us"] == 5.0);
  CHECK(j["operators_tested"].get<int>() > 0);
  // Issue 28 item 1: the drift between the runs, what it was estimated from, the allowance.
  CHECK(j["drift"].get<double>() > 0);
  CHECK(j["drift_operators"].get<int>() >= 3);
  CHECK(j["operator_scatter"].get<double>() >= 0);
  CHECK(j["drift_allowance"] == 1.5);
  CHECK(j["rows"][0].contains("net_delta"));
  CHECK(table.exit_code == 0);
  CHECK_THAT(table.out, Catch::Contains("(not stored)"));
  CHECK_THAT(table.out, Catch::Contains("Benjamini-Hochberg"));
  CHECK_THAT(table.out, Catch::Contains("drift between the runs: +0.0%"));
  CHECK_THAT(table.out, Catch::Contains("(--drift-allowance)"));
  CHECK(run_etscope("compare " + base + " " + slow + " --drift-allowance lots").exit_code == 2);
  // Several runs a side, separated by commas: the method total is tested on the runs' medians.
  auto sets = run_etscope("compare " + base + "," + base + " " + slow + "," + slow + "," + slow + " --format json");
  INFO(sets.err);
  CHECK(sets.exit_code == 1);
  const auto js = nlohmann::json::parse(sets.out);
  CHECK(js["a"].size() == 2);
  CHECK(js["b"][2]["file"] == slow);
  CHECK(js["rows"].back()["operator"] == "Method::execute");
  CHECK(js["rows"].back()["n_a"] == 2);
  CHECK(js["rows"].back()["n_b"] == 3);
  CHECK(js["regressions"] == 1);
  // A missing file is one line naming it.
  auto missing = run_etscope("compare " + dir + "/none.etdp " + base);
  CHECK(missing.exit_code != 0);
  CHECK_THAT(missing.err, Catch::Contains("none.etdp"));
  CHECK_FALSE(std::filesystem::exists(default_store));
}

TEST_CASE("a training curve goes in and comes back with its time split and validation (SQLite and PostgreSQL)", "[store]") {
  for (const std::string& location : both("curve")) {
    INFO(location);
    auto s = store::Store::open(location);
    REQUIRE(s.ok());
    store::ImportRequest req = cifar10_request();
    req.source = "train";
    inspect::Curve& c = req.curve;
    c.first_step = 11;
    c.loss = {2.5, std::numeric_limits<double>::quiet_NaN(), 1.25};
    c.accuracy = {0.5, std::nullopt, 0.75};
    c.step_ms = {3.0, 2.5, 2.0};
    c.forward_backward_ms = {2.0, 2.0, 1.5};
    c.optimizer_ms = {1.0, 0.5, 0.5};
    c.val = {{12, 1.5, 0.625}};
    auto added = (*s)->add(req);
    REQUIRE(added.ok());
    auto back = (*s)->curve(added->run_id);
    INFO((back.ok() ? "" : back.error().message()));
    REQUIRE(back.ok());
    CHECK(back->first_step == 11);
    REQUIRE(back->loss.size() == 3);
    CHECK(back->loss[0] == 2.5);
    CHECK(std::isnan(back->loss[1]));  // stored as NULL
    CHECK(back->loss[2] == 1.25);
    CHECK(back->accuracy == c.accuracy);
    CHECK(back->step_ms == c.step_ms);
    CHECK(back->forward_backward_ms == c.forward_backward_ms);
    CHECK(back->optimizer_ms == c.optimizer_ms);
    REQUIRE(back->val.size() == 1);
    CHECK(back->val[0].step == 12);
    CHECK(back->val[0].loss == 1.5);
    CHECK(back->val[0].accuracy == 0.625);
    auto q = (*s)->sql("SELECT step, forward_backward_ms, optimizer_ms FROM v_curves ORDER BY step");
    REQUIRE(q.ok());
    REQUIRE(q->rows.size() == 3);
    CHECK(q->columns == std::vector<std::string>{"step", "forward_backward_ms", "optimizer_ms"});
    CHECK((*s)->curve(added->run_id + 100).error().code() == ErrorCode::kNotFound);
  }
}

TEST_CASE("numeric gaps keep their infinities and store a NaN as NULL and text stays text (SQLite and PostgreSQL)", "[store]") {
  for (const std::string& location : both("gaps")) {
    INFO(location);
    auto s = must(store::Store::open(location));
    store::ImportRequest req = cifar10_request();
    req.source = "debug";
    const double inf = std::numeric_limits<double>::infinity();
    req.gaps = {{0, "native_call_convolution.out", "SNR", inf},
                {0, "native_call_convolution.out", "max_abs", 0.25},
                {1, "native_call_relu.out", "SNR", -inf},
                {1, "native_call_relu.out", "cosine", std::numeric_limits<double>::quiet_NaN()}};
    req.tags = {{"note", "Infinity"}, {"other", "1e999"}};
    const store::ImportResult added = must(s->add(req));
    const store::QueryResult q = must(s->sql("SELECT op, metric, gap FROM v_gaps ORDER BY op, metric"));
    REQUIRE(q.rows.size() == 4);
    std::map<std::string, std::optional<std::string>> gap;
    for (const auto& row : q.rows) gap[*row[0] + " " + *row[1]] = row[2];
    REQUIRE(gap["0 SNR"]);
    CHECK(std::strtod(gap["0 SNR"]->c_str(), nullptr) == inf);
    CHECK(std::strtod(gap["0 max_abs"]->c_str(), nullptr) == 0.25);
    REQUIRE(gap["1 SNR"]);
    CHECK(std::strtod(gap["1 SNR"]->c_str(), nullptr) == -inf);
    CHECK_FALSE(gap["1 cosine"].has_value());
    // They compare as numbers: an infinite SNR passes any threshold.
    CHECK(must(s->sql("SELECT op FROM v_gaps WHERE metric = 'SNR' AND gap > 1e300")).rows.size() == 1);
    // Text that spells an infinity stays that text (a tag's value).
    const store::RunRow row = must(s->run(added.run_id));
    CHECK(row.tags.at("note") == "Infinity");
    CHECK(row.tags.at("other") == "1e999");
  }
}

TEST_CASE("a store of schema version 1 is migrated when opened and keeps its runs", "[store]") {
  const std::string copy = temp_dir("store_v1") + "/v1.sqlite";
  std::filesystem::copy_file(std::string(etscope::testing::test_data_dir()) + "/store/v1.sqlite", copy);
  {
    // Beside its training run (made by etscope's runner), an ETDump imported before runs had an
    // engine: it may come from ExecuTorch's runtime, so the migration cannot name its engine.
    sqlite3* db = nullptr;
    REQUIRE(sqlite3_open(copy.c_str(), &db) == SQLITE_OK);
    char* error = nullptr;
    const int rc = sqlite3_exec(db,
                                "INSERT INTO runs (content_hash, method, source, file, etscope_version, created_at, executions) "
                                "VALUES ('old-import', 'forward', 'etdump', 'phone.etdp', '0.1.0', '2026-01-01 00:00:00', 1)",
                                nullptr, nullptr, &error);
    INFO((error != nullptr ? error : ""));
    sqlite3_free(error);
    sqlite3_close(db);
    REQUIRE(rc == SQLITE_OK);
  }
  auto s = store::Store::open(copy);
  INFO((s.ok() ? "" : s.error().message()));
  REQUIRE(s.ok());
  auto version = (*s)->sql("SELECT value FROM etscope_meta WHERE key = 'schema_version'");
  REQUIRE(version.ok());
  CHECK(*version->rows.at(0).at(0) == std::to_string(store::kSchemaVersion));
  auto runs = (*s)->runs({});
  REQUIRE(runs.ok());
  REQUIRE(runs->size() == 2);
  // Version 3: a run etscope's runner made has the etscope engine at the version it recorded; the
  // old import's engine is unknown.
  CHECK(runs->at(0).source == "etdump");
  CHECK_FALSE(runs->at(0).engine.known());
  CHECK(runs->at(0).engine.label() == "unknown");
  runs->erase(runs->begin());
  CHECK(runs->front().source == "train");
  CHECK(runs->front().engine == inspect::EngineIdentity{"etscope", "0.1.0"});
  auto view = (*s)->sql("SELECT engine, engine_version FROM v_runs ORDER BY run_id");
  REQUIRE(view.ok());
  REQUIRE(view->rows.size() == 2);
  CHECK(view->rows[0][0] == std::optional<std::string>("etscope"));
  CHECK(view->rows[1][0] == std::nullopt);
  CHECK(runs->front().tags.at("made") == "schema-v1");
  // The v1 curve: six steps of loss and step time, no split.
  auto c = (*s)->curve(runs->front().id);
  REQUIRE(c.ok());
  CHECK(c->loss.size() == 6);
  CHECK(c->step_ms.size() == 6);
  CHECK(c->forward_backward_ms.empty());
  CHECK(c->val.empty());
  // New runs go in with the new columns.
  store::ImportRequest req = cifar10_request();
  req.curve.loss = {1.0};
  req.curve.step_ms = {2.0};
  req.curve.forward_backward_ms = {1.5};
  req.curve.optimizer_ms = {0.5};
  auto added = (*s)->add(req);
  INFO((added.ok() ? "" : added.error().message()));
  REQUIRE(added.ok());
  auto c2 = (*s)->curve(added->run_id);
  REQUIRE(c2.ok());
  CHECK(c2->optimizer_ms == std::vector<double>{0.5});
  // cifar10.etdp was written by ExecuTorch's runtime: no engine marker, an unknown engine.
  CHECK_FALSE(must((*s)->run(added->run_id)).engine.known());
}

TEST_CASE("every stored run keeps the engine its ETDump names (SQLite and PostgreSQL)", "[store][engine]") {
  const std::string dir = temp_dir("store_engines");
  const std::string ours = synth(dir, "ours.etdp", "--events 2000 --ops-per-run 20 --seed 1 --engine etscope:0.1.0");
  const std::string theirs = synth(dir, "theirs.etdp", "--events 2000 --ops-per-run 20 --seed 2 --engine executorch:1.5.1+cpu");
  const std::string unmarked = synth(dir, "unmarked.etdp", "--events 2000 --ops-per-run 20 --seed 3");
  for (const std::string& location : both("engines")) {
    INFO(location);
    auto s = must(store::Store::open(location));
    std::vector<int64_t> ids;
    for (const std::string& file : {ours, theirs, unmarked}) {
      store::ImportRequest req;
      req.etdump = file;
      req.environment = store::this_machine();
      ids.push_back(must(s->add(req)).run_id);
    }
    CHECK(must(s->run(ids[0])).engine == inspect::EngineIdentity{"etscope", "0.1.0"});
    CHECK(must(s->run(ids[1])).engine == inspect::EngineIdentity{"executorch", "1.5.1+cpu"});
    CHECK_FALSE(must(s->run(ids[2])).engine.known());
    const auto rows = must(s->runs({}));
    REQUIRE(rows.size() == 3);
    CHECK(rows[1].engine.text() == "executorch 1.5.1+cpu");
    // The marker is no operator: the stored samples hold the same operators either way.
    CHECK(must(s->samples(ids[0])).operators.size() == must(s->samples(ids[2])).operators.size());
    auto view = must(s->sql("SELECT engine, engine_version FROM v_runs WHERE run_id = " + std::to_string(ids[1])));
    REQUIRE(view.rows.size() == 1);
    CHECK(view.rows[0][0] == std::optional<std::string>("executorch"));
    CHECK(view.rows[0][1] == std::optional<std::string>("1.5.1+cpu"));
  }
}

TEST_CASE("etscope compare refuses runs of different engines unless --allow-engine-mismatch and notes unknown ones", "[store][cli][engine]") {
  const std::string dir = temp_dir("store_compare_engines");
  const std::string ours = synth(dir, "ours.etdp", "--events 4000 --ops-per-run 20 --seed 1 --engine etscope:0.1.0");
  const std::string ours2 = synth(dir, "ours2.etdp", "--events 4000 --ops-per-run 20 --seed 4 --engine etscope:0.2.0");
  const std::string theirs = synth(dir, "theirs.etdp", "--events 4000 --ops-per-run 20 --seed 2 --engine executorch:1.5.1+cpu");
  const std::string unmarked = synth(dir, "unmarked.etdp", "--events 4000 --ops-per-run 20 --seed 3");
  const std::string expected = "etscope compare: A was timed by engine etscope 0.1.0 and B by engine executorch 1.5.1+cpu: different "
                               "engines run different code, so their timings differ for that reason alone; --allow-engine-mismatch "
                               "compares them anyway\n";
  // Two files, no store.
  auto refused = run_etscope("compare " + ours + " " + theirs);
  CHECK(refused.exit_code == 2);  // not 1: a CI gate must not take the refusal for a regression
  CHECK(refused.out.empty());
  CHECK(refused.err == expected);
  auto allowed = run_etscope("compare " + ours + " " + theirs + " --allow-engine-mismatch --format json");
  INFO(allowed.err);
  CHECK(allowed.exit_code != 2);
  CHECK(allowed.err == "etscope: warning: A was timed by engine etscope 0.1.0 and B by engine executorch 1.5.1+cpu: different engines "
                       "run different code, so their timings differ for that reason alone\n");
  const auto j = nlohmann::json::parse(allowed.out);
  CHECK(j["engines"] == "different");
  CHECK(j["a"]["engine"] == "etscope");
  CHECK(j["b"]["engine"] == "executorch");
  CHECK(j["b"]["engine_version"] == "1.5.1+cpu");
  // Versions of one engine compare without a word: that is what comparing versions is for.
  auto versions = run_etscope("compare " + ours + " " + ours2);
  CHECK(versions.exit_code != 2);
  CHECK(versions.err.empty());
  CHECK_THAT(versions.out, Catch::Contains("engine etscope 0.2.0"));
  // A dump without a marker (ExecuTorch's own runners) is compared, with a note.
  auto unknown = run_etscope("compare " + unmarked + " " + theirs + " --format json");
  CHECK(unknown.exit_code != 2);
  CHECK(unknown.err == "etscope: note: A's engine is unknown (no etscope engine marker): it is not checked against B's "
                       "(executorch 1.5.1+cpu)\n");
  CHECK(nlohmann::json::parse(unknown.out)["a"]["engine"].is_null());
  // Stored runs: the same rule over the engines the store recorded.
  const std::string location = fresh_sqlite("compare_engines");
  const std::string at = " --store " + quoted(location);
  REQUIRE(run_etscope("store add " + ours + at).exit_code == 0);
  REQUIRE(run_etscope("store add " + theirs + at).exit_code == 0);
  auto stored = run_etscope("compare 1 2" + at);
  CHECK(stored.exit_code == 2);
  CHECK(stored.err == expected);
  auto stored_allowed = run_etscope("compare 1 2 --allow-engine-mismatch" + at);
  CHECK(stored_allowed.exit_code != 2);
  CHECK_THAT(stored_allowed.out, Catch::Contains("engine etscope 0.1.0"));
  CHECK_THAT(stored_allowed.out, Catch::Contains("engine executorch 1.5.1+cpu"));
  // runs and history show the engine.
  auto runs = run_etscope("runs" + at);
  CHECK_THAT(runs.out, Catch::Contains("engine"));
  CHECK_THAT(runs.out, Catch::Contains("executorch 1.5.1+cpu"));
  auto csv = run_etscope("runs --format csv" + at);
  CHECK_THAT(csv.out, Catch::StartsWith("id,created_utc,program,method,source,engine,engine_version,executions"));
  CHECK_THAT(csv.out, Catch::Contains(",executorch,1.5.1+cpu,"));
}

TEST_CASE("issue 28: a run timed with intermediate logging is tagged and warned about, a profile run is not", "[store]") {
  auto s = must(store::Store::open(fresh_sqlite("logging")));
  const store::ImportResult logged = must(s->add(cifar10_request()));  // ExecuTorch's run logged every output
  REQUIRE(logged.warnings.size() == 1);
  CHECK(logged.warnings[0].find("recorded with intermediate logging on") != std::string::npos);
  CHECK(logged.warnings[0].find("logging=intermediate") != std::string::npos);
  store::ImportRequest plain = cifar10_request();
  plain.etdump = fixture("cifar10/cifar10.profile.etdp");
  const store::ImportResult timed = must(s->add(plain));
  CHECK(timed.warnings.empty());
  const store::RunRow a = must(s->run(logged.run_id)), b = must(s->run(timed.run_id));
  CHECK(a.tags.at(std::string(store::kLoggingTag)) == "intermediate");
  CHECK(a.tags.at("device") == "ci");  // the caller's tags stay
  CHECK(b.tags.count(std::string(store::kLoggingTag)) == 0);
}

TEST_CASE("issue 28: a program given as a file is its hash, a name shared by two programs is ambiguous (SQLite and PostgreSQL)", "[store][cli]") {
  // An XNNPACK and a portable export of one model, both called prog.pte: they are no one trend.
  const std::string dir = temp_dir("store_program_identity");
  for (const char* sub : {"/xnnpack", "/portable", "/renamed", "/other"}) std::filesystem::create_directories(dir + sub);
  const std::string xnnpack = dir + "/xnnpack/prog.pte", portable = dir + "/portable/prog.pte";
  const std::string renamed = dir + "/renamed/anything.pte", other = dir + "/other/prog.pte";
  std::filesystem::copy_file(fixture("simple_conv_xnnpack/simple_conv_xnnpack.pte"), xnnpack);
  std::filesystem::copy_file(fixture("simple_conv/simple_conv.pte"), portable);
  std::filesystem::copy_file(xnnpack, renamed);
  std::filesystem::copy_file(fixture("cifar10/cifar10.pte"), other);
  for (const std::string& location : both("identity")) {
    INFO(location);
    const std::string at = " --store " + quoted(location);
    for (const std::string& program : {xnnpack, xnnpack, portable}) {
      auto r = run_etscope("run " + program + " --iterations 3" + at);
      INFO(r.err);
      REQUIRE(r.exit_code == 0);
    }
    // The file finds its own program's runs, whatever it is called now.
    auto by_file = run_etscope("history " + xnnpack + " --format json" + at);
    INFO(by_file.err);
    REQUIRE(by_file.exit_code == 0);
    CHECK(nlohmann::json::parse(by_file.out).size() == 2);
    auto by_other_name = run_etscope("history " + renamed + at);
    REQUIRE(by_other_name.exit_code == 0);
    CHECK_THAT(by_other_name.out, Catch::Contains("prog.pte (sha256 ") && Catch::Contains("2 runs"));
    auto portable_history = run_etscope("history " + portable + " --format json" + at);
    REQUIRE(portable_history.exit_code == 0);
    CHECK(nlohmann::json::parse(portable_history.out).size() == 1);
    auto runs_by_file = run_etscope("runs --program " + xnnpack + " --format json" + at);
    REQUIRE(runs_by_file.exit_code == 0);
    CHECK(nlohmann::json::parse(runs_by_file.out).size() == 2);
    CHECK(runs_by_file.err.empty());

    // The bare name is both programs: history refuses to draw one trend, runs lists both and says so.
    auto ambiguous = run_etscope("history prog.pte" + at);
    CHECK(ambiguous.exit_code == 1);
    CHECK(ambiguous.out.empty());
    CHECK_THAT(ambiguous.err, Catch::Contains("'prog.pte' names 2 different stored programs") && Catch::Contains(") 2 runs") &&
                                  Catch::Contains(") 1 run") && Catch::Contains("give the program file or a longer hash prefix"));
    auto runs_by_name = run_etscope("runs --program prog.pte" + at);
    REQUIRE(runs_by_name.exit_code == 0);
    CHECK_THAT(runs_by_name.out, Catch::Contains("3 runs") && Catch::Contains("prog.pte (sha256 "));
    CHECK_THAT(runs_by_name.err, Catch::Contains("'prog.pte' names 2 different programs"));

    // A program never stored: no runs, and history says it is this program that has none.
    auto unknown_runs = run_etscope("runs --program " + other + " --format json" + at);
    REQUIRE(unknown_runs.exit_code == 0);
    CHECK(nlohmann::json::parse(unknown_runs.out).empty());
    auto unknown_history = run_etscope("history " + other + at);
    CHECK(unknown_history.exit_code == 1);
    CHECK_THAT(unknown_history.err, Catch::Contains(other + ": no stored run of this program"));

    // The library: a file is exactly one program, a name every program stored under it.
    auto s = must(store::Store::open(location, store::OpenMode::kExisting));
    const auto one = must(s->programs(xnnpack));
    REQUIRE(one.size() == 1);
    CHECK(one[0].runs == 2);
    CHECK(one[0].name == "prog.pte");
    CHECK(must(s->programs("prog.pte")).size() == 2);
    CHECK(must(s->programs(one[0].hash.substr(0, 12))).size() == 1);
    CHECK(must(s->programs("add")).empty());  // a short name made of hex letters is no hash prefix
    const auto refused = s->history("prog.pte", "");
    REQUIRE_FALSE(refused.ok());
    CHECK(refused.error().code() == ErrorCode::kInvalidArgument);
  }
}

TEST_CASE("issue 28: read-only verbs never create a store (SQLite and PostgreSQL)", "[store][cli]") {
  const std::string dir = temp_dir("store_read_only");
  const std::string typo = dir + "/sub/typo.sqlite";
  for (const char* verb : {"runs", "history prog.pte", "sql \"SELECT 1\"", "compare 1 2"}) {
    INFO(verb);
    auto r = run_etscope(std::string(verb) + " --store " + quoted(typo));
    CHECK(r.exit_code == 1);
    CHECK(r.out.empty());
    CHECK(r.err == "etscope: " + typo + ": no run store here (run, train or debug --store, or etscope store add, make one)\n");
    CHECK_FALSE(std::filesystem::exists(dir + "/sub"));
  }
  // An empty file (or database) is not given a schema either.
  const std::string empty = dir + "/empty.sqlite";
  std::ofstream(empty).close();
  auto on_empty = run_etscope("runs --store " + quoted(empty));
  CHECK(on_empty.exit_code == 1);
  CHECK_THAT(on_empty.err, Catch::Contains("holds no etscope run store"));
  CHECK(std::filesystem::file_size(empty) == 0);
  const std::string pg = fresh_postgres("t_read_only");
  auto on_pg = run_etscope("runs --store " + quoted(pg));
  CHECK(on_pg.exit_code == 1);
  CHECK_THAT(on_pg.err, Catch::Contains("holds no etscope run store"));
  auto still = store::Store::open(pg, store::OpenMode::kExisting);
  REQUIRE_FALSE(still.ok());
  CHECK(still.error().code() == ErrorCode::kNotFound);
  // Writing verbs still make one, and then the readers read it.
  must(store::Store::open(typo));
  CHECK(run_etscope("runs --store " + quoted(typo)).exit_code == 0);
}

TEST_CASE("run --store records the etscope engine and history shows it", "[store][cli][engine]") {
  const std::string location = fresh_sqlite("history_engine");
  const std::string at = " --store " + quoted(location);
  const std::string pte = etscope::testing::real_artifact("add.pte");
  auto r = run_etscope("run " + pte + " --engine etscope --iterations 3" + at);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  {
    auto s = must(store::Store::open(location, store::OpenMode::kExisting));
    const auto rows = must(s->runs({}));
    REQUIRE(rows.size() == 1);
    CHECK(rows[0].engine == inspect::EngineIdentity{"etscope", std::string(etscope_version())});
  }
  auto history = run_etscope("history " + pte + at);
  CHECK(history.exit_code == 0);
  CHECK_THAT(history.out, Catch::Contains("etscope " + std::string(etscope_version())));
  auto csv = run_etscope("history " + pte + " --format csv" + at);
  CHECK_THAT(csv.out, Catch::StartsWith("run,created_utc,engine,engine_version,median_ms,samples\n1,"));
  // ExecuTorch's runtime, when this build has it, is recorded as such with its library's version.
  auto et = run_etscope("run " + pte + " --engine executorch --iterations 3" + at);
  if (et.exit_code == 0) {
    auto s = must(store::Store::open(location, store::OpenMode::kExisting));
    const auto rows = must(s->runs({}));
    REQUIRE(rows.size() == 2);
    bool found = false;
    for (const auto& row : rows) found |= row.engine.name == "executorch" && !row.engine.version.empty();
    CHECK(found);
  } else {
    CHECK_THAT(et.err, Catch::Contains("built without ExecuTorch's runtime"));
  }
}

TEST_CASE("issue 28: run --repeat stores a set of runs and prints the compare command, which works (SQLite and PostgreSQL)",
          "[store][cli][repeat]") {
  const std::string pte = fixture("training/mlp_mse.pte");
  const std::string dir = temp_dir("store_repeat");
  for (const std::string& location : both("repeat")) {
    INFO(location);
    const std::string at = " --store " + quoted(location);
    const std::string run = "run " + pte + " --engine etscope --iterations 5 --repeat 3" + at;
    auto first = run_etscope(run + " --tag commit=a --format json");
    INFO(first.err);
    REQUIRE(first.exit_code == 0);
    const auto j = nlohmann::json::parse(first.out);
    CHECK(j["repeat"] == 3);
    REQUIRE(j["runs"].size() == 3);
    CHECK(j["median_ms"].size() == 3);
    const std::vector<int64_t> a = j["store"]["run_ids"].get<std::vector<int64_t>>();
    REQUIRE(a.size() == 3);
    CHECK(a[0] != a[1]);
    CHECK(a[1] != a[2]);
    CHECK(j["store"]["set"] == std::to_string(a[0]));
    for (size_t k = 0; k < 3; ++k) CHECK(j["runs"][k]["store"]["run_id"] == a[k]);
    // The first set of a program has nothing to compare with yet.
    CHECK(j["compare"].is_null());
    CHECK(j["previous_set"].empty());
    {
      auto s = must(store::Store::open(location, store::OpenMode::kExisting));
      const auto rows = must(s->runs({}));
      REQUIRE(rows.size() == 3);
      for (const auto& row : rows) {
        CHECK(row.tags.at("set") == std::to_string(a[0]));
        CHECK(row.tags.at("commit") == "a");
      }
      CHECK(must(s->set_runs(std::to_string(a[0]))) == a);
      // A tag names the newest run with it, and that run's whole set; an id names one run.
      CHECK(must(s->resolve_runs("commit=a", store::this_machine())) == a);
      CHECK(must(s->resolve_runs(std::to_string(a[1]), store::this_machine())) == std::vector<int64_t>{a[1]});
      CHECK(must(s->resolve_runs(std::to_string(a[2]) + "," + std::to_string(a[0]), store::this_machine())) ==
            std::vector<int64_t>{a[2], a[0]});
    }

    // The second set of the same program: one line per run and the command comparing the sets.
    auto second = run_etscope(run + " --tag commit=b");
    INFO(second.out << second.err);
    REQUIRE(second.exit_code == 0);
    CHECK_THAT(second.out, Catch::Contains("run 3/3 ") && Catch::Contains("each its own load"));
    CHECK(second.out.find("latency    ") == std::string::npos);  // one line per run instead
    const size_t at_line = second.out.find("compare    etscope compare ");
    REQUIRE(at_line != std::string::npos);
    const size_t start = at_line + std::string("compare    etscope ").size();
    std::string command = second.out.substr(start, second.out.find("   (", start) - start);
    const std::string ids_a = std::to_string(a[0]) + "," + std::to_string(a[1]) + "," + std::to_string(a[2]);
    CHECK_THAT(command, Catch::StartsWith("compare " + ids_a + " "));
    auto cmp = run_etscope(command + " --format json");
    INFO(command << "\n" << cmp.err);
    REQUIRE((cmp.exit_code == 0 || cmp.exit_code == 1));
    const auto c = nlohmann::json::parse(cmp.out);
    REQUIRE(c["a"].size() == 3);
    REQUIRE(c["b"].size() == 3);
    CHECK(c["a"][0]["id"] == a[0]);
    CHECK(c["b"][0]["tags"]["commit"] == "b");
    // The same program twice, unchanged: no method alarm (three runs a side test the method
    // total on the runs' medians, whose smallest p, 0.1, is above alpha).
    CHECK(c["rows"].back()["operator"] == "Method::execute");
    CHECK(c["rows"].back()["n_a"] == 3);
    CHECK(c["rows"].back()["verdict"] == "unchanged");
    // Tags name the sets as well.
    auto by_tag = run_etscope("compare commit=a commit=b --format json" + at);
    REQUIRE((by_tag.exit_code == 0 || by_tag.exit_code == 1));
    const auto t = nlohmann::json::parse(by_tag.out);
    CHECK(t["a"].size() == 3);
    CHECK(t["b"].size() == 3);
    CHECK(t["rows"].back()["verdict"] == "unchanged");
  }
  // --etdump writes one file per run, the run's number before the extension.
  auto files = run_etscope("run " + pte + " --engine etscope --iterations 3 --repeat 2 --etdump " + dir + "/d.etdp");
  INFO(files.err);
  REQUIRE(files.exit_code == 0);
  CHECK(std::filesystem::exists(dir + "/d-1.etdp"));
  CHECK(std::filesystem::exists(dir + "/d-2.etdp"));
  CHECK_FALSE(std::filesystem::exists(dir + "/d.etdp"));
  auto cmp_files = run_etscope("compare " + dir + "/d-1.etdp," + dir + "/d-2.etdp " + dir + "/d-2.etdp --format json");
  REQUIRE((cmp_files.exit_code == 0 || cmp_files.exit_code == 1));
  CHECK(nlohmann::json::parse(cmp_files.out)["a"].size() == 2);
}

TEST_CASE("issue 28: run --repeat refuses what it cannot do with one line", "[store][cli][repeat][errors]") {
  const std::string pte = fixture("training/mlp_mse.pte");
  const std::string location = fresh_sqlite("repeat_errors");
  const std::string at = " --store " + quoted(location);
  const std::pair<std::string, std::string> cases[] = {
      {"--engine etscope --repeat 0" + at, "--repeat must be at least 1"},
      {"--engine etscope --repeat -2" + at, "--repeat must be at least 1"},
      {"--engine etscope --repeat 3", "--repeat needs --store"},
      {"--repeat 3 --engine both" + at, "--engine both does not take --repeat"},
      {"--engine etscope --repeat 3 --tag set=7" + at, "--tag set=7"},
      {"--engine etscope --repeat 3 --bundled" + at, "--bundled"},
  };
  for (const auto& [args, message] : cases) {
    INFO(args);
    auto r = run_etscope("run " + pte + " " + args);
    INFO(r.out << r.err);
    CHECK(r.exit_code != 0);
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
    CHECK_THAT(r.err, Catch::Contains(message));
    CHECK(r.out.empty());
  }
  CHECK_FALSE(std::filesystem::exists(location));
}

TEST_CASE("issue 33: every stored run keeps its findings and history --findings tells when one appeared (SQLite and PostgreSQL)",
          "[store][cli][findings]") {
  const std::string pte = fixture("findings/permuted_constant.pte");
  const std::string input = fixture("findings/permuted_constant.input0.npy");
  for (const std::string& location : both("findings")) {
    INFO(location);
    const std::string at = " --store " + quoted(location);
    const std::string run = "run " + quoted(pte) + " --engine etscope --input " + quoted(input) + " --iterations 4";
    // A profile, then one timed with intermediate logging on, then a profile again.
    const std::string dir = temp_dir("store_findings");
    REQUIRE(run_etscope(run + at).exit_code == 0);
    REQUIRE(run_etscope(run + " --etdump " + quoted(dir + "/logged.etdp") + " --debug-buffer " + quoted(dir + "/logged.bin") +
                        " --debug-level intermediate" + at).exit_code == 0);
    REQUIRE(run_etscope(run + at).exit_code == 0);
    auto s = must(store::Store::open(location, store::OpenMode::kExisting));
    const auto first = must(s->findings(1));
    REQUIRE_FALSE(first.empty());
    CHECK(first[0].rule == "constant-work");
    CHECK(first[0].instruction == std::optional<int64_t>(0));
    CHECK(first[0].op == "aten::permute_copy.out");
    REQUIRE(first[0].time_ms);
    CHECK(*first[0].time_ms > 0);
    CHECK_FALSE(s->findings(99).ok());
    const auto points = must(s->findings_history(pte));
    REQUIRE(points.size() == 3);
    CHECK(points[0].appeared.size() == points[0].findings.size());
    // logged-timings appears with the logged run and is gone from the next.
    auto has = [](const std::vector<store::StoredFinding>& fs, const std::string& rule) {
      return std::any_of(fs.begin(), fs.end(), [&](const store::StoredFinding& f) { return f.rule == rule; });
    };
    CHECK_FALSE(has(points[0].findings, "logged-timings"));
    bool appeared = false;
    for (size_t i : points[1].appeared) appeared |= points[1].findings[i].rule == "logged-timings";
    CHECK(appeared);
    CHECK(has(points[2].gone, "logged-timings"));
    // constant-work is the same finding in every run: appeared once, never gone.
    for (size_t i : points[1].appeared) CHECK(points[1].findings[i].rule != "constant-work");
    CHECK_FALSE(has(points[1].gone, "constant-work"));
    CHECK(must(s->sql("SELECT rule FROM v_findings WHERE run_id = 2 AND rule = 'logged-timings'")).rows.size() == 1);

    auto text = run_etscope("history " + quoted(pte) + " --findings" + at);
    INFO(text.err);
    CHECK(text.exit_code == 0);
    CHECK_THAT(text.out, Catch::Contains("  + [high] logged-timings: "));
    CHECK_THAT(text.out, Catch::Contains("  - [high] logged-timings: "));
    auto csv = run_etscope("history " + quoted(pte) + " --findings --format csv" + at);
    CHECK_THAT(csv.out, Catch::StartsWith("run,created_utc,engine,engine_version,change,rank,rule,severity,what,time_ms,share,bytes\n"));
    CHECK_THAT(csv.out, Catch::Contains(",gone,,logged-timings,high,"));
    CHECK(run_etscope("history " + quoted(pte) + " --findings --op mm.out" + at).exit_code == 2);
  }
}
