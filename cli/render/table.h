// A table of text cells printed as aligned columns, CSV (RFC 4180) or a JSON array of objects:
// the store verbs' (runs, compare, history, sql) one way to print rows.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace etscope::cli {

struct TextTable {
  std::vector<std::string> columns;
  std::vector<std::vector<std::optional<std::string>>> rows;  ///< nullopt: SQL NULL / no value.
  std::vector<bool> numeric;  ///< Per column: right-aligned, and a JSON number when it parses as one.
};

/// "table" (aligned, NULL shown as "-"), "csv" or "json".
std::string render_table(const TextTable& table, const std::string& format);

}  // namespace etscope::cli
