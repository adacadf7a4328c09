// etscope compare: two runs operator by operator (median change, Mann-Whitney U p-value, its
// Benjamini-Hochberg adjustment and the effect size from libinspect's compare_runs), exit 1 when
// the method total or an operator regressed both significantly and by a practical amount.
// ETDump files are read directly and stay out of any store unless --store is given.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <optional>

#include "commands/command.h"
#include "commands/store_options.h"
#include "etscope/core/text.h"
#include "etscope/inspect/engine_identity.h"
#include "etscope/inspect/profile.h"
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
    sub->add_option("a", a_,
                    "Baseline: a run id, key=value (the newest run with that tag; when it is one of a `run --repeat` set, "
                    "every run of the set, e.g. set=12), or an ETDump file; several runs separated by commas (1,2,3,4) test "
                    "the method total on the runs' medians")->required();
    sub->add_option("b", b_, "Candidate, likewise")->required();
    sub->add_option("--threshold", threshold_, "Smallest relative change of the median that counts, e.g. 5% or 0.05 (default 5%)");
    sub->add_option("--min-change-us", min_change_us_,
                    "Smallest absolute change of the median that counts, microseconds (default 5; both this and --threshold must be "
                    "exceeded)");
    sub->add_option("--alpha", alpha_,
                    "False-discovery rate of the operators' verdicts (Benjamini-Hochberg over the operators of the comparison) and "
                    "significance level of the method total (default 0.05)");
    sub->add_option("--drift-allowance", drift_allowance_,
                    "With one run per side, the method total is a verdict only when it moved by more than this, e.g. 150% (the "
                    "default: back-to-back reruns on a busy machine moved it by up to +133%) or 10% on a quiet one");
    sub->add_flag("--all", all_, "List every operator, not only the changed ones");
    sub->add_flag("--allow-engine-mismatch", allow_engine_mismatch_,
                  "Compare runs timed by different engines (e.g. etscope and executorch) anyway, with a warning; refused "
                  "without it");
    add_table_format(sub, format_);
    add_store_option(sub, location_)->description(
        "Run store the runs are read from and ETDump files imported into (without it, files are compared without any store)");
    return sub;
  }

  Result<int> run() override {
    const std::optional<double> threshold = fraction(threshold_), drift_allowance = fraction(drift_allowance_);
    if (!threshold || !drift_allowance || !(alpha_ > 0 && alpha_ < 1) || !(min_change_us_ >= 0) || !std::isfinite(min_change_us_)) {
      std::fprintf(stderr, "etscope compare: --threshold and --drift-allowance take a percentage or fraction such as 5%% or 0.05, "
                           "--alpha a number in (0, 1), --min-change-us a number of microseconds >= 0\n");
      return 2;
    }
    const std::vector<std::string> refs_a = runs_of(a_), refs_b = runs_of(b_);
    refs_ = refs_a;
    refs_.insert(refs_.end(), refs_b.begin(), refs_b.end());
    std::vector<Side> sa, sb;
    std::vector<inspect::RunSamples> samples_a, samples_b;
    for (auto [refs, sides, samples] : {std::tie(refs_a, sa, samples_a), std::tie(refs_b, sb, samples_b)}) {
      for (const std::string& ref : refs) {
        ETSCOPE_ASSIGN_OR_RETURN(std::vector<Side> named, sides_of(ref));
        for (Side& one : named) {
          samples.push_back(std::move(one.samples));
          sides.push_back(std::move(one));
        }
      }
    }
    // Timings of different engines differ for that reason alone: refused unless asked for (exit 2,
    // so that a CI gate on exit 1 never takes the refusal for a regression). Every run of either
    // side is checked against A's first.
    inspect::EngineCheck engines = inspect::check_engines(sa.front().engine, sb.front().engine);
    for (const auto* sides : {&sa, &sb}) {
      for (const Side& x : *sides) {
        const inspect::EngineCheck one = inspect::check_engines(sa.front().engine, x.engine);
        if (one.match == inspect::EngineMatch::kDifferent || (one.match == inspect::EngineMatch::kUnknown && engines.match == inspect::EngineMatch::kSame)) {
          engines = one;
        }
      }
    }
    if (engines.match == inspect::EngineMatch::kDifferent && !allow_engine_mismatch_) {
      std::fflush(stdout);
      std::fprintf(stderr, "etscope compare: %s; --allow-engine-mismatch compares them anyway\n", engines.text.c_str());
      return 2;
    }
    if (engines.match == inspect::EngineMatch::kDifferent) std::fprintf(stderr, "etscope: warning: %s\n", engines.text.c_str());
    if (engines.match == inspect::EngineMatch::kUnknown) std::fprintf(stderr, "etscope: note: %s\n", engines.text.c_str());
    inspect::CompareOptions o;
    o.threshold = *threshold;
    o.drift_allowance = *drift_allowance;
    o.alpha = alpha_;
    o.min_change_ms = min_change_us_ / 1000;
    o.same_program = same_program(sa, samples_a, sb, samples_b);
    const inspect::Comparison c = inspect::compare_run_sets(samples_a, samples_b, o);

    TextTable table;
    table.columns = {"operator", "instruction", "n_a", "n_b", format_ == "table" ? "median_a" : "median_a_ms",
                     format_ == "table" ? "median_b" : "median_b_ms", format_ == "table" ? "change" : "change_ms", "delta",
                     format_ == "table" ? "net" : "net_delta", "p", "p_scatter", "q", "effect", "verdict"};
    table.numeric = {false, true, true, true, true, true, true, true, true, true, true, true, true, false};
    auto add = [&](const inspect::CompareRow& r, bool method = false) {
      const bool both = r.n_a > 0 && r.n_b > 0;
      table.rows.push_back({r.name, r.instruction >= 0 ? std::optional<std::string>(std::to_string(r.instruction)) : std::nullopt,
                            std::to_string(r.n_a), std::to_string(r.n_b),
                            r.n_a ? std::optional<std::string>(ms_text(r.median_a_ms)) : std::nullopt,
                            r.n_b ? std::optional<std::string>(ms_text(r.median_b_ms)) : std::nullopt,
                            both ? std::optional<std::string>(change_text(r.change_ms)) : std::nullopt,
                            both ? std::optional<std::string>(format_ == "table" ? percent(r.delta) : number_text(r.delta)) : std::nullopt,
                            both ? std::optional<std::string>(format_ == "table" ? percent(r.net_delta) : number_text(r.net_delta))
                                 : std::nullopt,
                            both ? std::optional<std::string>(format_ == "table" ? p_text(r.test.p) : number_text(r.test.p)) : std::nullopt,
                            both && !method ? std::optional<std::string>(format_ == "table" ? p_text(r.p_scatter) : number_text(r.p_scatter))
                                            : std::nullopt,
                            both ? std::optional<std::string>(format_ == "table" ? p_text(r.p_adjusted) : number_text(r.p_adjusted))
                                 : std::nullopt,
                            both ? std::optional<std::string>(number_text(std::round(r.test.effect * 1000) / 1000)) : std::nullopt,
                            inspect::to_string(r.verdict)});
    };
    for (const inspect::CompareRow& r : c.rows) {
      if (all_ || format_ != "table" || r.verdict != inspect::Verdict::kUnchanged) add(r);
    }
    add(c.method, true);
    if (format_ == "json") {
      Json j{{"a", side_json(sa)}, {"b", side_json(sb)}, {"threshold", *threshold}, {"min_change_us", min_change_us_}, {"alpha", alpha_},
             {"multiple_testing", "benjamini-hochberg"}, {"operators_tested", c.tests}, {"drift", c.drift},
             {"drift_operators", c.drift_operators}, {"operator_scatter", c.operator_scatter}, {"drift_allowance", *drift_allowance},
             {"matched_by", o.same_program ? "instruction" : "name and position"},
             {"engines", inspect::to_string(engines.match)}, {"regressions", c.regressions},
             {"improvements", c.improvements}, {"gate_failed", c.gate_failed},
             {"rows", Json::parse(render_table(table, "json"))}};
      std::printf("%s\n", dump_json(j).c_str());
    } else if (format_ == "csv") {
      std::fputs(render_table(table, "csv").c_str(), stdout);
    } else {
      for (const Side& x : sa) std::printf("A  %s\n", x.label.c_str());
      for (const Side& x : sb) std::printf("B  %s\n", x.label.c_str());
      std::printf("operators matched by %s; a median's change counts above %s and from %s, significant at false-discovery "
                  "rate %g\n(Mann-Whitney U, two-sided; q: the larger of p and p_scatter adjusted over the %zu operators by "
                  "Benjamini-Hochberg; the method total at level %g)\n%s\n\n",
                  o.same_program ? "instruction" : "name and position (the programs differ)", percent(*threshold).c_str() + 1,
                  duration_text_ms(o.min_change_ms).c_str(), alpha_, c.tests, alpha_, inspect::drift_text(c, o).c_str());
      std::fputs(render_table(table, "table").c_str(), stdout);
      const size_t hidden = c.rows.size() - (table.rows.size() - 1);
      if (hidden > 0 && !all_) std::printf("(%zu unchanged operators not shown; --all lists them)\n", hidden);
      std::printf("%zu regressions, %zu improvements; method total %s (%s)\n", c.regressions, c.improvements,
                  inspect::to_string(c.method.verdict), c.method.n_a && c.method.n_b ? percent(c.method.delta).c_str() : "n/a");
    }
    return c.gate_failed ? 1 : 0;
  }

 private:
  // One side of the comparison: its samples, its header line and its JSON.
  struct Side {
    inspect::RunSamples samples;
    std::string label;
    Json json;
    std::string program_hash;  ///< Stored runs only.
    inspect::EngineIdentity engine;  ///< What made its timings (unknown without an engine marker).
  };

  // "1,2,3" as its runs; a file whose name has a comma as itself.
  static std::vector<std::string> runs_of(const std::string& list) {
    if (std::filesystem::exists(list)) return {list};
    std::vector<std::string> out;
    for (size_t start = 0;;) {
      const size_t comma = list.find(',', start);
      out.push_back(list.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
      if (comma == std::string::npos) return out;
      start = comma + 1;
    }
  }

  // One run's JSON, or with several runs on a side the array of them.
  static Json side_json(const std::vector<Side>& sides) {
    if (sides.size() == 1) return sides.front().json;
    Json all = Json::array();
    for (const Side& x : sides) all.push_back(x.json);
    return all;
  }

  // A run id or key=value names a stored run; anything else is an ETDump file.
  static bool names_stored_run(const std::string& ref) {
    if (!ref.empty() && ref.size() < 19 && std::all_of(ref.begin(), ref.end(), [](char ch) { return ch >= '0' && ch <= '9'; })) return true;
    const size_t eq = ref.find('=');
    return eq != std::string::npos && eq > 0 && !std::filesystem::exists(ref);
  }

  // Without --store an ETDump file is read as it is and no store is opened for it (issue 28:
  // comparing two files used to import both into the default store without a word). A tag that
  // names a run of a `run --repeat` set is every run of the set.
  Result<std::vector<Side>> sides_of(const std::string& ref) {
    std::vector<Side> out;
    if (location_.empty() && !names_stored_run(ref)) {
      ETSCOPE_ASSIGN_OR_RETURN(Side one, file_side(ref));
      out.push_back(std::move(one));
      return out;
    }
    if (!store_) {
      // Runs named by id or tag are only read: a store that is not there is an error, not a new
      // one; an ETDump file given with --store is imported into it.
      const bool imports = !std::all_of(refs_.begin(), refs_.end(), names_stored_run);
      ETSCOPE_ASSIGN_OR_RETURN(store_, open_store(location_, imports ? store::OpenMode::kCreate : store::OpenMode::kExisting));
    }
    ETSCOPE_ASSIGN_OR_RETURN(std::vector<int64_t> ids, store_->resolve_runs(ref, store::this_machine()));
    for (int64_t id : ids) {
      ETSCOPE_ASSIGN_OR_RETURN(Side one, stored_side(id));
      out.push_back(std::move(one));
    }
    return out;
  }

  // An ETDump file read as it is.
  static Result<Side> file_side(const std::string& ref) {
    Side s;
    inspect::ProfileFiles files;
    files.etdump = ref;
    ETSCOPE_ASSIGN_OR_RETURN(inspect::Profile profile, inspect::open_profile(files));
    for (const inspect::ProfileWarning& w : profile.warnings) {
      std::fprintf(stderr, "etscope: %s: warning: %s\n", (w.file.empty() ? ref : w.file).c_str(), w.text.c_str());
    }
    s.samples = inspect::run_samples(*profile.inspector);
    s.engine = profile.engine;
    s.label = "file " + ref + "  " + std::to_string(s.samples.method_ms.size()) + " executions (not stored), engine " +
              s.engine.label();
    s.json = Json{{"file", ref}, {"executions", s.samples.method_ms.size()}};
    put_engine_json(s.json, s.engine);
    return s;
  }

  // A stored run (its samples, its label and its JSON).
  Result<Side> stored_side(int64_t id) {
    Side s;
    ETSCOPE_ASSIGN_OR_RETURN(store::RunRow r, store_->run(id));
    // Runs timed with intermediate logging on (tagged so by the store) time the logging too.
    if (r.tags.count(std::string(store::kLoggingTag)) != 0) {
      std::fprintf(stderr, "etscope: run %lld (%s): warning: recorded with intermediate logging on: its timings include the logging\n",
                   static_cast<long long>(r.id), r.file.c_str());
    }
    ETSCOPE_ASSIGN_OR_RETURN(s.samples, store_->samples(id));
    s.label = "run " + std::to_string(r.id) + "  " + r.created_at + "  " + describe(r) + tags(r);
    s.json = run_json(r);
    s.program_hash = r.program_hash;
    s.engine = r.engine;
    return s;
  }

  // The same program when the stored hashes agree; without programs, when all runs time the
  // same operators at the same instructions.
  static bool same_program(const std::vector<Side>& a, const std::vector<inspect::RunSamples>& sa, const std::vector<Side>& b,
                           const std::vector<inspect::RunSamples>& sb) {
    const std::string& first = a.front().program_hash;
    bool hashes = !first.empty(), same = true;
    for (const auto* sides : {&a, &b}) {
      for (const Side& x : *sides) {
        hashes = hashes && !x.program_hash.empty();
        same = same && x.program_hash == first;
      }
    }
    if (hashes) return same;
    for (const auto* runs : {&sa, &sb}) {
      for (const inspect::RunSamples& r : *runs) {
        if (!inspect::same_operators(sa.front(), r)) return false;
      }
    }
    return true;
  }
  static std::string describe(const store::RunRow& r) {
    return (r.program.empty() ? r.file : r.program) + " " + r.method + ", " + std::to_string(r.executions) + " executions" +
           (r.environment.host.empty() ? "" : ", " + r.environment.host) + ", engine " + r.engine.label();
  }
  static std::string tags(const store::RunRow& r) {
    std::string s;
    for (const auto& [k, v] : r.tags) s += "  " + k + "=" + v;
    return s;
  }
  static Json run_json(const store::RunRow& r) {
    Json j{{"id", r.id}, {"created_utc", r.created_at}, {"program", r.program}, {"method", r.method}, {"file", r.file},
           {"executions", r.executions}};
    put_engine_json(j, r.engine);
    j["tags"] = r.tags;
    return j;
  }

  // Table: libinspect's duration policy (three significant figures); CSV and JSON: the number.
  std::string ms_text(double ms) const {
    return format_ == "table" ? duration_text_ms(ms) : number_text(ms);
  }

  // The change of a median: signed, in the table's duration policy; the number elsewhere.
  std::string change_text(double ms) const {
    if (format_ != "table") return number_text(ms);
    return (ms >= 0 ? "+" : "-") + duration_text_ms(std::fabs(ms));
  }

  // "5%" or "0.05" as a fraction >= 0; none when it is neither.
  static std::optional<double> fraction(std::string t) {
    const bool pct = !t.empty() && t.back() == '%';
    if (pct) t.pop_back();
    char* end = nullptr;
    const double v = std::strtod(t.c_str(), &end);
    if (t.empty() || *end != '\0' || !(v >= 0) || !std::isfinite(v)) return std::nullopt;
    return pct ? v / 100 : v;
  }

  std::string a_, b_, location_, format_ = "table", threshold_ = "5%", drift_allowance_ = "150%";
  std::vector<std::string> refs_;  ///< Every run named on both sides.
  double alpha_ = 0.05;
  double min_change_us_ = inspect::kDefaultMinChangeUs;
  std::unique_ptr<store::Store> store_;
  bool all_ = false;
  bool allow_engine_mismatch_ = false;
};

}  // namespace

std::unique_ptr<Command> make_compare_command() { return std::make_unique<CompareCommand>(); }

}  // namespace etscope::cli
