// etscope runs: the stored runs, newest first, filtered by program, tag and date.
#include <cstdio>
#include <map>
#include <set>

#include "commands/command.h"
#include "commands/store_options.h"
#include "etscope/core/text.h"
#include "render/format.h"
#include "render/table.h"

namespace etscope::cli {
namespace {

class RunsCommand final : public Command {
 public:
  CLI::App* add_to(CLI::App& app) override {
    CLI::App* sub = app.add_subcommand("runs", "List the runs in the run store");
    sub->add_option("--program", filter_.program, "Only runs of this program: its file (found by its SHA-256), a hash prefix, or the file name it was stored under");
    sub->add_option("--tag", tags_, "Only runs with this key=value tag (repeatable: all must match)");
    sub->add_option("--since", filter_.since, "Only runs stored at or after this UTC date or time (YYYY-MM-DD[ HH:MM:SS])");
    sub->add_option("--limit", filter_.limit, "At most this many (newest first)");
    add_table_format(sub, format_);
    add_store_option(sub, location_);
    return sub;
  }

  Result<int> run() override {
    ETSCOPE_ASSIGN_OR_RETURN(filter_.tags, parse_tags(tags_));
    ETSCOPE_ASSIGN_OR_RETURN(auto store, open_store(location_, store::OpenMode::kExisting));
    ETSCOPE_ASSIGN_OR_RETURN(auto runs, store->runs(filter_));
    // A name stored for different programs (an XNNPACK and a portable export, both prog.pte) lists
    // runs of each: say so, and tell them apart in the table by their hashes.
    std::set<std::string> ambiguous;
    if (!filter_.program.empty()) {
      ETSCOPE_ASSIGN_OR_RETURN(std::vector<store::StoredProgram> programs, store->programs(filter_.program));
      if (programs.size() > 1) {
        std::string list;
        for (const auto& p : programs) list += (list.empty() ? "" : ", ") + store::program_label(p);
        std::fprintf(stderr, "etscope: note: '%s' names %zu different programs (%s); these runs mix them, give the program file or a hash prefix for one\n",
                     filter_.program.c_str(), programs.size(), list.c_str());
      }
    }
    std::map<std::string, std::set<std::string>> hashes_of_name;
    for (const store::RunRow& r : runs) {
      if (!r.program.empty()) hashes_of_name[r.program].insert(r.program_hash);
    }
    for (const auto& [name, hashes] : hashes_of_name) {
      if (hashes.size() > 1) ambiguous.insert(name);
    }
    TextTable t;
    const bool table = format_ == "table";
    // The engine that made the timings: one cell in the table, name and version apart elsewhere.
    t.columns = {"id", "created_utc", "program", "method", "source", "engine"};
    if (!table) t.columns.push_back("engine_version");
    for (const char* c : {"executions", table ? "median" : "median_ms", "host", "device", "tags"}) t.columns.push_back(c);
    t.rows.reserve(runs.size());
    t.numeric = {true, false, false, false, false, false};
    if (!table) t.numeric.push_back(false);
    for (bool numeric : {true, true, false, false, false}) t.numeric.push_back(numeric);
    for (store::RunRow& r : runs) {
      std::string tags;
      for (const auto& [k, v] : r.tags) tags += (tags.empty() ? "" : " ") + k + "=" + v;
      std::vector<std::optional<std::string>> row;
      row.reserve(t.columns.size());
      row.emplace_back(std::to_string(r.id));
      row.emplace_back(std::move(r.created_at));
      if (r.program.empty()) {
        row.emplace_back(std::nullopt);
      } else if (table && ambiguous.count(r.program) > 0) {
        row.emplace_back(store::program_label({0, r.program_hash, r.program, 0}));
      } else {
        row.emplace_back(std::move(r.program));
      }
      row.emplace_back(std::move(r.method));
      row.emplace_back(std::move(r.source));
      if (table) {
        row.emplace_back(r.engine.label());
      } else {
        row.emplace_back(r.engine.known() ? std::optional<std::string>(r.engine.name) : std::nullopt);
        row.emplace_back(r.engine.known() ? std::optional<std::string>(r.engine.version) : std::nullopt);
      }
      row.emplace_back(std::to_string(r.executions));
      if (r.median_ms) {
        row.emplace_back(table ? duration_text_ms(*r.median_ms) : number_text(*r.median_ms));
      } else {
        row.emplace_back(std::nullopt);
      }
      row.emplace_back(std::move(r.environment.host));
      row.emplace_back(std::move(r.environment.device));
      row.emplace_back(std::move(tags));
      t.rows.push_back(std::move(row));
    }
    std::fputs(render_table(t, format_).c_str(), stdout);
    if (format_ == "table") std::printf("%s in %s\n", count_text(runs.size(), "run").c_str(), store->location().c_str());
    return 0;
  }

 private:
  store::RunFilter filter_;
  std::vector<std::string> tags_;
  std::string location_, format_ = "table";
};

}  // namespace

std::unique_ptr<Command> make_runs_command() { return std::make_unique<RunsCommand>(); }

}  // namespace etscope::cli
