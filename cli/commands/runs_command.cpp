// etscope runs: the stored runs, newest first, filtered by program, tag and date.
#include <cstdio>

#include "commands/command.h"
#include "commands/store_options.h"
#include "etscope/inspect/time_unit.h"
#include "render/format.h"
#include "render/table.h"

namespace etscope::cli {
namespace {

class RunsCommand final : public Command {
 public:
  CLI::App* add_to(CLI::App& app) override {
    CLI::App* sub = app.add_subcommand("runs", "List the runs in the run store");
    sub->add_option("--program", filter_.program, "Only runs of this program (file name or hash prefix)");
    sub->add_option("--tag", tags_, "Only runs with this key=value tag (repeatable: all must match)");
    sub->add_option("--since", filter_.since, "Only runs stored at or after this UTC date or time (YYYY-MM-DD[ HH:MM:SS])");
    sub->add_option("--limit", filter_.limit, "At most this many (newest first)");
    sub->add_option("--format", format_, "table (default), csv or json")->check(CLI::IsMember({"table", "csv", "json"}));
    add_store_option(sub, location_);
    return sub;
  }

  Result<int> run() override {
    ETSCOPE_ASSIGN_OR_RETURN(filter_.tags, parse_tags(tags_));
    ETSCOPE_ASSIGN_OR_RETURN(auto store, open_store(location_));
    ETSCOPE_ASSIGN_OR_RETURN(auto runs, store->runs(filter_));
    TextTable t;
    const bool table = format_ == "table";
    t.columns = {"id", "created_utc", "program", "method", "source", "executions", table ? "median" : "median_ms", "host", "device", "tags"};
    t.rows.reserve(runs.size());
    t.numeric = {true, false, false, false, false, true, true, false, false, false};
    for (const store::RunRow& r : runs) {
      std::string tags;
      for (const auto& [k, v] : r.tags) tags += (tags.empty() ? "" : " ") + k + "=" + v;
      t.rows.push_back({std::to_string(r.id), r.created_at, r.program.empty() ? std::optional<std::string>() : r.program, r.method, r.source,
                        std::to_string(r.executions),
                        r.median_ms ? std::optional<std::string>(table ? inspect::duration_text(*r.median_ms * 1e6, inspect::TimeUnit::kAuto)
                                                                       : number_string(*r.median_ms))
                                    : std::nullopt,
                        r.environment.host, r.environment.device, tags});
    }
    std::fputs(render_table(t, format_).c_str(), stdout);
    if (format_ == "table") std::printf("%zu runs in %s\n", runs.size(), store->location().c_str());
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
