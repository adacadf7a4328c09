// The store's connection to a database: one small interface, SQLite (sqlite3) and PostgreSQL
// (libpq) behind it. SQL text is shared; parameters are written $1, $2, ... and passed as text
// (or NULL; an infinite real as infinity() spells it), rows come back as text (an infinity as
// strtod reads it). Private to store/: no SQL outside this folder.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "etscope/core/result.h"

namespace etscope::store {

using Param = std::optional<std::string>;
using Row = std::vector<std::optional<std::string>>;

struct Rows {
  std::vector<std::string> columns;
  std::vector<Row> rows;
};

class Db {
 public:
  virtual ~Db() = default;
  virtual const char* backend() const = 0;  ///< "sqlite" or "postgresql".
  /// Runs one statement (or, with no parameters, a script of several) and returns its rows.
  virtual Result<Rows> query(const std::string& sql, const std::vector<Param>& params = {}) = 0;
  Status exec(const std::string& sql, const std::vector<Param>& params = {}) {
    auto r = query(sql, params);
    return r.ok() ? ok_status() : Status(r.error());
  }
  /// One transaction; rollback() after a failure (never throws, ignores its own errors).
  virtual Status begin() = 0;
  virtual Status commit() = 0;
  virtual void rollback() = 0;
  /// Puts the connection in read-only mode for what follows (etscope sql), or back.
  virtual Status set_read_only(bool on) = 0;
  /// The autoincrementing key column's type in CREATE TABLE.
  virtual const char* id_column() const = 0;
  /// The text of an infinite real parameter (negative: -inf), read as one by a REAL or DOUBLE
  /// PRECISION column; text columns keep whatever text they are given.
  virtual const char* infinity(bool negative) const = 0;
  /// An exclusive lock held until commit, so that two importers migrate or insert one at a time.
  virtual Status lock_for_write() = 0;
};

/// Opens (creating when absent) an SQLite database file. Errors name the path.
Result<std::unique_ptr<Db>> open_sqlite(const std::string& path);
/// Connects to a PostgreSQL server (a libpq connection URI). Errors name the server, not the password.
Result<std::unique_ptr<Db>> open_postgres(const std::string& uri);

}  // namespace etscope::store
