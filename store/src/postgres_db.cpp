// PostgreSQL behind Db, through libpq: text parameters and results, one connection. Writers take
// a transaction-level advisory lock so that migrations and imports from several processes run one
// after the other; the unique content hash makes a repeated import a no-op.
#include <libpq-fe.h>

#include "db.h"

namespace etscope::store {
namespace {

// The URI without its password, for messages.
std::string redact(const std::string& uri) {
  const size_t scheme = uri.find("://");
  const size_t at = uri.find('@');
  if (scheme == std::string::npos || at == std::string::npos || at < scheme) return uri;
  const size_t colon = uri.find(':', scheme + 3);
  if (colon == std::string::npos || colon > at) return uri;
  return uri.substr(0, colon) + ":***" + uri.substr(at);
}

class PostgresDb final : public Db {
 public:
  PostgresDb(PGconn* conn, std::string name) : conn_(conn), name_(std::move(name)) {}
  ~PostgresDb() override { PQfinish(conn_); }
  const char* backend() const override { return "postgresql"; }
  const char* id_column() const override { return "BIGSERIAL PRIMARY KEY"; }
  const char* infinity(bool negative) const override { return negative ? "-Infinity" : "Infinity"; }

  Result<Rows> query(const std::string& sql, const std::vector<Param>& params) override {
    PGresult* res;
    if (params.empty()) {
      res = PQexec(conn_, sql.c_str());  // may hold several statements
    } else {
      std::vector<const char*> values;
      for (const Param& p : params) values.push_back(p ? p->c_str() : nullptr);
      res = PQexecParams(conn_, sql.c_str(), static_cast<int>(values.size()), nullptr, values.data(), nullptr, nullptr, 0);
    }
    const ExecStatusType st = PQresultStatus(res);
    if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK) {
      std::string message = PQresultErrorMessage(res);
      PQclear(res);
      while (!message.empty() && (message.back() == '\n' || message.back() == ' ')) message.pop_back();
      return Error(ErrorCode::kInvalidArgument, name_ + ": " + message);
    }
    Rows out;
    const int ncol = PQnfields(res), nrow = PQntuples(res);
    for (int c = 0; c < ncol; ++c) out.columns.emplace_back(PQfname(res, c));
    out.rows.reserve(static_cast<size_t>(nrow));
    for (int r = 0; r < nrow; ++r) {
      Row row(static_cast<size_t>(ncol));
      for (int c = 0; c < ncol; ++c) {
        if (!PQgetisnull(res, r, c)) row[static_cast<size_t>(c)] = std::string(PQgetvalue(res, r, c), static_cast<size_t>(PQgetlength(res, r, c)));
      }
      out.rows.push_back(std::move(row));
    }
    PQclear(res);
    return out;
  }

  Status begin() override { return exec("BEGIN"); }
  Status commit() override { return exec("COMMIT"); }
  void rollback() override { PQclear(PQexec(conn_, "ROLLBACK")); }
  Status set_read_only(bool on) override {
    return exec(on ? "SET SESSION CHARACTERISTICS AS TRANSACTION READ ONLY" : "SET SESSION CHARACTERISTICS AS TRANSACTION READ WRITE");
  }
  Status lock_for_write() override { return exec("SELECT pg_advisory_xact_lock(7415332)"); }

 private:
  PGconn* conn_;
  std::string name_;
};

}  // namespace

Result<std::unique_ptr<Db>> open_postgres(const std::string& uri) {
  const std::string name = redact(uri);
  PGconn* conn = PQconnectdb(uri.c_str());
  if (conn == nullptr || PQstatus(conn) != CONNECTION_OK) {
    std::string message = conn != nullptr ? PQerrorMessage(conn) : "out of memory";
    PQfinish(conn);
    while (!message.empty() && (message.back() == '\n' || message.back() == ' ')) message.pop_back();
    for (char& c : message) {
      if (c == '\n') c = ' ';
    }
    return Error(ErrorCode::kIo, name + ": cannot connect: " + message);
  }
  std::unique_ptr<Db> db = std::make_unique<PostgresDb>(conn, name);
  ETSCOPE_TRY(db->exec("SET client_min_messages = warning"));
  return db;
}

}  // namespace etscope::store
