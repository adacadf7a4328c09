// SQLite behind Db: WAL journal (readers never block the writer; a killed writer leaves the last
// committed state), a busy timeout so that concurrent importers wait instead of failing, foreign
// keys on.
#include <sqlite3.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <utility>
#include <vector>

#include "db.h"

namespace etscope::store {
namespace {

class SqliteDb final : public Db {
 public:
  SqliteDb(sqlite3* db, std::string path) : db_(db), path_(std::move(path)) {}
  ~SqliteDb() override { sqlite3_close_v2(db_); }
  const char* backend() const override { return "sqlite"; }
  const char* id_column() const override { return "INTEGER PRIMARY KEY"; }
  // (a real literal past the range: a REAL column's affinity reads it as an infinity)
  const char* infinity(bool negative) const override { return negative ? "-1e999" : "1e999"; }

  Result<Rows> query(const std::string& postgres_sql, const std::vector<Param>& params) override {
    Rows out;
    const std::string sql = numbered_parameters(postgres_sql);
    const char* tail = sql.c_str();
    const char* end = sql.c_str() + sql.size();
    while (tail < end) {
      sqlite3_stmt* stmt = nullptr;
      const char* next = nullptr;
      if (sqlite3_prepare_v2(db_, tail, static_cast<int>(end - tail), &stmt, &next) != SQLITE_OK) return error("prepare");
      tail = next;
      if (stmt == nullptr) continue;  // whitespace or a comment
      Status bound = bind(stmt, params);
      if (!bound.ok()) {
        sqlite3_finalize(stmt);
        return bound.error();
      }
      out.columns.clear();
      out.rows.clear();
      const int ncol = sqlite3_column_count(stmt);
      for (int c = 0; c < ncol; ++c) out.columns.emplace_back(sqlite3_column_name(stmt, c));
      int rc;
      while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
        Row row(static_cast<size_t>(ncol));
        for (int c = 0; c < ncol; ++c) {
          const int type = sqlite3_column_type(stmt, c);
          if (type == SQLITE_NULL) continue;
          if (type == SQLITE_FLOAT) {
            // SQLite's own text for a REAL keeps 15 digits; 17 read back as the same double.
            char buf[40];
            std::snprintf(buf, sizeof buf, "%.17g", sqlite3_column_double(stmt, c));
            row[static_cast<size_t>(c)] = std::string(buf);
            continue;
          }
          const auto* text = reinterpret_cast<const char*>(sqlite3_column_text(stmt, c));
          row[static_cast<size_t>(c)] = std::string(text, static_cast<size_t>(sqlite3_column_bytes(stmt, c)));
        }
        out.rows.push_back(std::move(row));
      }
      sqlite3_finalize(stmt);
      if (rc != SQLITE_DONE) return error("step");
    }
    return out;
  }

  Status begin() override { return exec("BEGIN IMMEDIATE"); }
  Status commit() override { return exec("COMMIT"); }
  void rollback() override { sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr); }
  Status set_read_only(bool on) override { return exec(on ? "PRAGMA query_only = ON" : "PRAGMA query_only = OFF"); }
  Status lock_for_write() override { return ok_status(); }  // BEGIN IMMEDIATE holds the write lock

 private:
  // The store's SQL numbers its parameters as PostgreSQL does ($1, $2...). SQLite reads "$1" as a
  // parameter *named* "$1", found by a linear search of the names both when the statement is
  // prepared and when each is bound: quadratic in a statement's parameters, and the multi-row
  // INSERTs of a run's samples have hundreds (a third of a 2,000-iteration `run` went there).
  // "?1" is SQLite's numbered form, whose number is its index; but its code generator still looks
  // each numbered parameter's name up, so parameters that are exactly $1, $2, ... in order
  // become plain "?" (the next index), which it does not. Quoted text is left as it is.
  static std::string numbered_parameters(const std::string& sql) {
    std::string out;
    out.reserve(sql.size());
    std::vector<std::pair<size_t, size_t>> params;  // where each "$k" starts and ends in `out`
    bool in_order = true;
    char quote = 0;
    for (size_t i = 0; i < sql.size(); ++i) {
      const char c = sql[i];
      if (quote != 0) {
        if (c == quote) quote = 0;  // a doubled quote closes and reopens: the same
      } else if (c == '\'' || c == '"') {
        quote = c;
      } else if (c == '$' && i + 1 < sql.size() && sql[i + 1] >= '0' && sql[i + 1] <= '9') {
        size_t end = i + 1;
        unsigned long k = 0;
        while (end < sql.size() && sql[end] >= '0' && sql[end] <= '9' && k < 1000000) k = k * 10 + static_cast<unsigned long>(sql[end++] - '0');
        in_order = in_order && k == params.size() + 1;
        params.emplace_back(out.size(), out.size() + (end - i));
        out += '?';
        out.append(sql, i + 1, end - i - 1);
        i = end - 1;
        continue;
      }
      out += c;
    }
    if (!in_order || params.empty()) return out;
    std::string plain;
    plain.reserve(out.size());
    size_t from = 0;
    for (const auto& [begin, end] : params) {
      plain.append(out, from, begin - from);
      plain += '?';
      from = end;
    }
    plain.append(out, from, std::string::npos);
    return plain;
  }

  Status bind(sqlite3_stmt* stmt, const std::vector<Param>& params) {
    // ?k is index k, and a plain ? in order is too (numbered_parameters): the count is the largest
    // k, and it refers to params[k-1].
    const int n = sqlite3_bind_parameter_count(stmt);
    if (static_cast<size_t>(n) > params.size()) {
      return Error(ErrorCode::kInternal, path_ + ": SQL parameter " + std::to_string(n) + " has no value");
    }
    for (int i = 1; i <= n; ++i) {
      const Param& p = params[static_cast<size_t>(i - 1)];
      const int rc = p ? sqlite3_bind_text(stmt, i, p->data(), static_cast<int>(p->size()), SQLITE_TRANSIENT)
                       : sqlite3_bind_null(stmt, i);
      if (rc != SQLITE_OK) return error("bind");
    }
    return ok_status();
  }

  Error error(const char* what) const {
    const int code = sqlite3_errcode(db_);
    std::string text = path_ + ": " + sqlite3_errmsg(db_);
    if (code == SQLITE_BUSY || code == SQLITE_LOCKED) text += " (another process holds the store; try again)";
    if (code == SQLITE_NOTADB || code == SQLITE_CORRUPT) {
      return Error(ErrorCode::kCorrupt, text + " (the file is not an etscope store, or it is damaged)");
    }
    (void)what;
    return Error(code == SQLITE_BUSY || code == SQLITE_LOCKED ? ErrorCode::kOutOfResources : ErrorCode::kInvalidArgument, text);
  }

  sqlite3* db_;
  std::string path_;
};

}  // namespace

Result<std::unique_ptr<Db>> open_sqlite(const std::string& path) {
  sqlite3* db = nullptr;
  const int rc = sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX, nullptr);
  if (rc != SQLITE_OK) {
    std::string message = db != nullptr ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
    sqlite3_close_v2(db);
    return Error(ErrorCode::kIo, path + ": cannot open the store: " + message);
  }
  // How long to wait for another process's write: ETSCOPE_STORE_TIMEOUT_MS, default 10 s.
  int timeout_ms = 10000;
  if (const char* t = std::getenv("ETSCOPE_STORE_TIMEOUT_MS"); t != nullptr && *t != '\0') {
    timeout_ms = static_cast<int>(std::clamp(std::strtol(t, nullptr, 10), 0L, 3600000L));
  }
  sqlite3_busy_timeout(db, timeout_ms);
  std::unique_ptr<Db> out = std::make_unique<SqliteDb>(db, path);
  // The first statement that reads the file tells a non-database apart.
  ETSCOPE_TRY(out->exec("PRAGMA foreign_keys = ON"));
  // Switching a new store to WAL takes an exclusive lock, and SQLite reports another process
  // doing the same at that moment as busy without waiting (the busy timeout does not cover it):
  // two first imports at once failed one time in forty. Retry within the same timeout.
  const auto start = std::chrono::steady_clock::now();
  for (;;) {
    auto mode = out->query("PRAGMA journal_mode = WAL");
    if (mode.ok()) break;
    const auto waited = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start).count();
    if (mode.error().code() != ErrorCode::kOutOfResources || waited >= timeout_ms) return mode.error();
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  return out;
}

}  // namespace etscope::store
