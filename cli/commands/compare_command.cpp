// etscope compare: two runs operator by operator (median delta, Mann-Whitney U p-value and effect
// size from libinspect's compare_runs), exit 1 when a significant regression passes the threshold.
#include <cmath>
#include <cstdio>
#include <filesystem>

#include "commands/command.h"
#include "commands/store_options.h"
#include "etscope/core/text.h"
#include "render/format.h"
#include "render/json_output.h"
#include "render/table.h"

namespace etscope::cli {
namespace {

std::string percent(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%+.1f%%", v * 100);
  return buf;
}

std::string p_text(double p) {
  char buf[32];
  std::snprintf(buf, sizeof buf, p < 1e-4 ? "%.1e" : "%.4f", p);
  return buf;
}

class CompareCommand final : public Command {
 public:
  CLI::App* add_to(CLI::App& app) override {
    CLI::App* sub = app.add_subcommand("compare", "Compare two runs operator by operator; exit 1 on a significant regression");
    sub->add_option("a", a_, "Baseline: a run id, key=value (the newest run with that tag), or an ETDump file")->required();
    sub->add_option("b", b_, "Candidate, likewise")->required();
    sub->add_option("--threshold", threshold_, "Smallest change of the median that counts, e.g. 5% or 0.05 (default 5%)");
    sub->add_option("--alpha", alpha_, "Significance level of the Mann-Whitney U test (default 0.05)");
    sub->add_flag("--all", all_, "List every operator, not only the changed ones");
    add_table_format(sub, format_);
    add_store_option(sub, location_);
    return sub;
  }

  Result<int> run() override {
    std::string t = threshold_;
    const bool pct = !t.empty() && t.back() == '%';
    if (pct) t.pop_back();
    char* end = nullptr;
    double threshold = std::strtod(t.c_str(), &end);
    if (t.empty() || *end != '\0' || !(threshold >= 0) || !std::isfinite(threshold) || !(alpha_ > 0 && alpha_ < 1)) {
      std::fprintf(stderr, "etscope compare: --threshold takes a percentage or fraction such as 5%% or 0.05, --alpha a number in (0, 1)\n");
      return 2;
    }
    if (pct) threshold /= 100;
    // Runs named by id or tag are only read: a store that is not there is an error, not a new one.
    std::error_code ec;
    const bool imports = std::filesystem::is_regular_file(a_, ec) || std::filesystem::is_regular_file(b_, ec);
    ETSCOPE_ASSIGN_OR_RETURN(auto store, open_store(location_, imports ? store::OpenMode::kCreate : store::OpenMode::kExisting));
    const store::Environment env = store::this_machine();
    ETSCOPE_ASSIGN_OR_RETURN(int64_t ia, store->resolve(a_, env));
    ETSCOPE_ASSIGN_OR_RETURN(int64_t ib, store->resolve(b_, env));
    ETSCOPE_ASSIGN_OR_RETURN(store::RunRow ra, store->run(ia));
    ETSCOPE_ASSIGN_OR_RETURN(store::RunRow rb, store->run(ib));
    ETSCOPE_ASSIGN_OR_RETURN(inspect::RunSamples sa, store->samples(ia));
    ETSCOPE_ASSIGN_OR_RETURN(inspect::RunSamples sb, store->samples(ib));
    inspect::CompareOptions o;
    o.threshold = threshold;
    o.alpha = alpha_;
    o.same_program = same_program(ra, rb, sa, sb);
    const inspect::Comparison c = inspect::compare_runs(sa, sb, o);

    TextTable table;
    table.columns = {"operator", "instruction", "n_a", "n_b", format_ == "table" ? "median_a" : "median_a_ms",
                     format_ == "table" ? "median_b" : "median_b_ms", "delta", "p", "effect", "verdict"};
    table.numeric = {false, true, true, true, true, true, true, true, true, false};
    auto add = [&](const inspect::CompareRow& r) {
      const bool both = r.n_a > 0 && r.n_b > 0;
      table.rows.push_back({r.name, r.instruction >= 0 ? std::optional<std::string>(std::to_string(r.instruction)) : std::nullopt,
                            std::to_string(r.n_a), std::to_string(r.n_b),
                            r.n_a ? std::optional<std::string>(ms_text(r.median_a_ms)) : std::nullopt,
                            r.n_b ? std::optional<std::string>(ms_text(r.median_b_ms)) : std::nullopt,
                            both ? std::optional<std::string>(format_ == "table" ? percent(r.delta) : number_text(r.delta)) : std::nullopt,
                            both ? std::optional<std::string>(format_ == "table" ? p_text(r.test.p) : number_text(r.test.p)) : std::nullopt,
                            both ? std::optional<std::string>(number_text(std::round(r.test.effect * 1000) / 1000)) : std::nullopt,
                            inspect::to_string(r.verdict)});
    };
    for (const inspect::CompareRow& r : c.rows) {
      if (all_ || format_ != "table" || r.verdict != inspect::Verdict::kUnchanged) add(r);
    }
    add(c.method);
    if (format_ == "json") {
      Json j{{"a", run_json(ra)}, {"b", run_json(rb)}, {"threshold", threshold}, {"alpha", alpha_},
             {"matched_by", o.same_program ? "instruction" : "name and position"}, {"regressions", c.regressions},
             {"improvements", c.improvements}, {"gate_failed", c.gate_failed},
             {"rows", Json::parse(render_table(table, "json"))}};
      std::printf("%s\n", dump_json(j).c_str());
    } else if (format_ == "csv") {
      std::fputs(render_table(table, "csv").c_str(), stdout);
    } else {
      std::printf("A  run %lld  %s  %s%s\nB  run %lld  %s  %s%s\n", static_cast<long long>(ra.id), ra.created_at.c_str(),
                  describe(ra).c_str(), tags(ra).c_str(), static_cast<long long>(rb.id), rb.created_at.c_str(), describe(rb).c_str(),
                  tags(rb).c_str());
      std::printf("operators matched by %s; threshold %s, alpha %g (Mann-Whitney U, two-sided)\n\n",
                  o.same_program ? "instruction" : "name and position (the programs differ)", percent(threshold).c_str() + 1, alpha_);
      std::fputs(render_table(table, "table").c_str(), stdout);
      const size_t hidden = c.rows.size() - (table.rows.size() - 1);
      if (hidden > 0 && !all_) std::printf("(%zu unchanged operators not shown; --all lists them)\n", hidden);
      std::printf("%zu regressions, %zu improvements; method total %s (%s)\n", c.regressions, c.improvements,
                  inspect::to_string(c.method.verdict), c.method.n_a && c.method.n_b ? percent(c.method.delta).c_str() : "n/a");
    }
    return c.gate_failed ? 1 : 0;
  }

 private:
  // The same program when the stored hashes agree; without programs, when both runs time the
  // same operators at the same instructions.
  static bool same_program(const store::RunRow& a, const store::RunRow& b, const inspect::RunSamples& sa, const inspect::RunSamples& sb) {
    if (!a.program_hash.empty() && !b.program_hash.empty()) return a.program_hash == b.program_hash;
    return inspect::same_operators(sa, sb);
  }
  static std::string describe(const store::RunRow& r) {
    return (r.program.empty() ? r.file : r.program) + " " + r.method + ", " + std::to_string(r.executions) + " executions" +
           (r.environment.host.empty() ? "" : ", " + r.environment.host);
  }
  static std::string tags(const store::RunRow& r) {
    std::string s;
    for (const auto& [k, v] : r.tags) s += "  " + k + "=" + v;
    return s;
  }
  static Json run_json(const store::RunRow& r) {
    return Json{{"id", r.id}, {"created_utc", r.created_at}, {"program", r.program}, {"method", r.method}, {"file", r.file},
                {"executions", r.executions}, {"tags", r.tags}};
  }

  // Table: libinspect's duration policy (three significant figures); CSV and JSON: the number.
  std::string ms_text(double ms) const {
    return format_ == "table" ? duration_text_ms(ms) : number_text(ms);
  }

  std::string a_, b_, location_, format_ = "table", threshold_ = "5%";
  double alpha_ = 0.05;
  bool all_ = false;
};

}  // namespace

std::unique_ptr<Command> make_compare_command() { return std::make_unique<CompareCommand>(); }

}  // namespace etscope::cli
