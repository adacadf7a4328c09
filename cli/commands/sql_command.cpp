// etscope sql: one read-only SELECT over the run store's documented views (docs/store.md).
#include <cstdio>
#include <cstdlib>

#include "commands/command.h"
#include "commands/store_options.h"
#include "etscope/core/text.h"
#include "render/table.h"

namespace etscope::cli {
namespace {

class SqlCommand final : public Command {
 public:
  CLI::App* add_to(CLI::App& app) override {
    CLI::App* sub = app.add_subcommand("sql", "A read-only SQL query over the run store's views (v_runs, v_operators, ...)");
    sub->add_option("query", query_, "One SELECT (or WITH) statement")->required();
    add_table_format(sub, format_);
    add_store_option(sub, location_);
    return sub;
  }

  Result<int> run() override {
    ETSCOPE_ASSIGN_OR_RETURN(auto store, open_store(location_, store::OpenMode::kExisting));
    ETSCOPE_ASSIGN_OR_RETURN(store::QueryResult r, store->sql(query_));
    TextTable t;
    t.columns = r.columns;
    t.rows = std::move(r.rows);
    // A column is numeric when every value in it parses as a number.
    t.numeric.assign(t.columns.size(), true);
    for (const auto& row : t.rows) {
      for (size_t c = 0; c < row.size(); ++c) {
        if (!row[c]) continue;
        char* end = nullptr;
        std::strtod(row[c]->c_str(), &end);
        if (row[c]->empty() || end == nullptr || *end != '\0') t.numeric[c] = false;
      }
    }
    // A real number reads as every etscope number does (three significant figures) in the table;
    // CSV and JSON keep what the store holds. Integers (ids, counts, bytes) stay exact.
    if (format_ == "table") {
      for (auto& row : t.rows) {
        for (size_t c = 0; c < row.size(); ++c) {
          if (c < t.numeric.size() && t.numeric[c] && row[c] && row[c]->find_first_of(".eE") != std::string::npos) {
            row[c] = significant_text(std::strtod(row[c]->c_str(), nullptr));
          }
        }
      }
    }
    std::fputs(render_table(t, format_).c_str(), stdout);
    return 0;
  }

 private:
  std::string query_, location_, format_ = "table";
};

}  // namespace

std::unique_ptr<Command> make_sql_command() { return std::make_unique<SqlCommand>(); }

}  // namespace etscope::cli
