// etscope inspect: ExecuTorch's Inspector table (per-event statistics of a profiled run), joined
// with the ETRecord when one is given, as text, CSV, TSV or JSON; the per-type summary and the
// module tree with totals; with --aot-intermediates, the numeric gap between the AOT reference
// and the run (ExecuTorch's calculate_numeric_gap); with --generation, the profile of a generation
// (`etscope generate --etdump`) by phase.
#include <cstdio>
#include <iostream>
#include <memory>

#include "commands/command.h"
#include "commands/inspect_inputs.h"
#include "etscope/inspect/generation_profile.h"
#include "etscope/inspect/numeric_gap.h"
#include "etscope/findings/findings.h"
#include "render/findings_render.h"
#include "render/generation_render.h"
#include "render/inspector_render.h"
#include "render/numeric_gap_render.h"
#include "render/json_output.h"

namespace etscope::cli {
namespace {

class InspectCommand final : public Command {
 public:
  CLI::App* add_to(CLI::App& app) override {
    CLI::App* sub = app.add_subcommand("inspect", "Per-operator timing statistics of a profiled run, like ExecuTorch's Inspector");
    inputs_.add_options(sub);
    sub->add_option("--format", format_, "Output format")->check(CLI::IsMember({"table", "csv", "tsv", "json"}))->capture_default_str();
    sub->add_option("--sort", sort_, "Row order within a block")->check(CLI::IsMember({"order", "avg", "total", "name"}))->capture_default_str();
    sub->add_option("--top", top_, "Show at most N rows per block (0: all)")->check(CLI::NonNegativeNumber);
    sub->add_option("--block", block_, "Only blocks with this name (e.g. Execute)");
    sub->add_flag("--operator-calls", operator_calls_, "Keep " + std::string(events::kOperatorCall) + " rows (ExecuTorch's table drops them)");
    sub->add_flag("--debug-events", debug_events_, "Keep debug events without timings (n = 0, e.g. intermediate outputs "
                                                   "a delegate logged, named 1, 3, 4) in the table; CSV, TSV and JSON always have them");
    sub->add_flag("--by-type", by_type_, "Summary by operator type (count, total, share of the run)");
    sub->add_flag("--modules", modules_, "Module tree with totals (needs --etrecord)");
    sub->add_option("--aot-intermediates", aot_, "AOT intermediate outputs (.ptd, index FILE.json beside it) to compare the run with "
                                                 "(samples/export/write_aot_intermediates.py)");
    sub->add_option("--aot-index", aot_index_, "Index of the AOT intermediates (default: FILE.json beside the .ptd, if any)");
    sub->add_option("--gap", gap_, "Numeric gap metric with --aot-intermediates: L1, MSE or SNR (default L1)");
    sub->add_flag("--gap-stats", gap_stats_, "With --aot-intermediates: add each row's max errors, cosine, worst output channel's "
                                             "SQNR, ULPs, exact matches and NaN/Inf counts to the table (JSON and CSV always have them)");
    sub->add_flag("--generation", generation_, "A generation's profile by phase (etscope generate --etdump): per-token latency, "
                                               "attention and cache-update time per position, operators per phase");
    sub->add_flag("--findings", findings_, "What to change, ranked by the time it would save (etscope findings on this profile; "
                                           "give --pte for the program's rules)");
    sub->add_option("--prompt-tokens", prompt_tokens_, "With --generation: the prompt's token count (gives decode positions and "
                                                      "prefill tokens/s)")->check(CLI::NonNegativeNumber);
    return sub;
  }

  Result<int> run() override {
    if (!aot_.empty() || !aot_index_.empty() || !gap_.empty()) return run_gap();
    if (generation_) return run_generation();
    if (findings_) return run_findings();
    ETSCOPE_ASSIGN_OR_RETURN(inspect::Inspector in, inputs_.load());
    InspectTableOptions opt;
    opt.sort = sort_ == "avg" ? EventSort::kAvg : sort_ == "total" ? EventSort::kTotal : sort_ == "name" ? EventSort::kName : EventSort::kOrder;
    opt.top = top_;
    opt.operator_calls = operator_calls_;
    opt.debug_events = debug_events_;
    opt.block = block_;
    if (!block_.empty()) {
      bool any = false;
      for (const auto& b : in.blocks()) any |= b.name == block_;
      if (!any) return Error(ErrorCode::kNotFound, inputs_.etdump + ": no event block named '" + block_ + "'");
    }
    if (format_ == "json") {
      std::cout << dump_json(inspector_json(in, opt)) << "\n";
      return 0;
    }
    if (format_ == "csv" || format_ == "tsv") {
      // One table per output: the per-type summary, else the module tree, else the events.
      const char sep = format_ == "csv" ? ',' : '\t';
      if (by_type_ && modules_) {
        std::fprintf(stderr, "etscope inspect: --by-type and --modules are two tables: ask for one at a time with --format %s\n",
                     format_.c_str());
        return 2;
      }
      if (by_type_) render_type_rows(in, opt, sep, std::cout);
      else if (modules_) render_module_rows(in, opt, sep, std::cout);
      else render_event_rows(in, opt, sep, std::cout);
      return 0;
    }
    render_engine_line(in, std::cout);
    if (by_type_ || modules_) {
      if (by_type_) render_type_summary(in, opt, std::cout);
      if (modules_) {
        if (by_type_) std::cout << "\n";
        render_module_tree(in, opt, std::cout);
      }
      return 0;
    }
    render_event_table(in, opt, std::cout);
    return 0;
  }

 private:
  // A generation's profile (--generation).
  Result<int> run_generation() {
    if (format_ == "csv" || format_ == "tsv") {
      std::cerr << "etscope: --generation prints tables or JSON (--format table or json)\n";
      return 2;
    }
    ETSCOPE_ASSIGN_OR_RETURN(inspect::Inspector in, inputs_.load());
    inspect::GenerationOptions options;
    if (prompt_tokens_ >= 0) options.prompt_tokens = prompt_tokens_;
    ETSCOPE_ASSIGN_OR_RETURN(inspect::GenerationProfile profile, inspect::generation_profile(in, options));
    if (format_ == "json") {
      std::cout << dump_json(generation_json(profile, top_)) << "\n";
      return 0;
    }
    render_engine_line(in, std::cout);
    render_generation_text(profile, top_, std::cout);
    return 0;
  }

  // The findings of this profile (--findings), as `etscope findings` prints them.
  Result<int> run_findings() {
    if (format_ == "csv" || format_ == "tsv") {
      std::cerr << "etscope: --findings prints a report or JSON (--format table or json)\n";
      return 2;
    }
    ETSCOPE_ASSIGN_OR_RETURN(inspect::Profile profile, inputs_.load_profile());
    findings::Inputs in;
    in.program = profile.program.get();
    in.record = profile.record.get();
    in.inspector = profile.inspector.get();
    in.method = profile.method;
    in.engine = profile.engine.known() ? profile.engine.text() : "";
    ETSCOPE_ASSIGN_OR_RETURN(findings::Report report, findings::analyse(in));
    if (format_ == "json") {
      std::cout << dump_json(findings_json(report)) << "\n";
    } else {
      render_findings_text(report, std::cout);
    }
    return 0;
  }

  // The numeric gap table (--aot-intermediates / --gap).
  Result<int> run_gap() {
    if (aot_.empty() || inputs_.debug_buffer.empty() || inputs_.etrecord.empty()) {
      std::cerr << "etscope: the numeric gap needs --aot-intermediates FILE.ptd, --debug-buffer and --etrecord\n";
      return 2;
    }
    ETSCOPE_ASSIGN_OR_RETURN(inspect::GapMetric metric, inspect::parse_gap_metric(gap_.empty() ? "L1" : gap_));
    // The index written beside the .ptd (FILE.json), when present: op names and output order.
    const std::string index_path = aot_index_.empty() ? inspect::aot_index_beside(aot_) : aot_index_;
    if (index_path.empty()) std::cerr << "etscope: " << aot_ << ": warning: " << inspect::missing_aot_index_warning(aot_) << "\n";
    ETSCOPE_ASSIGN_OR_RETURN(inspect::AotIntermediates aot, inspect::load_aot_intermediates(aot_, index_path));
    // The gap needs the logged intermediates; their cost to the timings is beside the point here.
    inputs_.logging_expected = true;
    ETSCOPE_ASSIGN_OR_RETURN(inspect::Inspector in, inputs_.load());
    ETSCOPE_TRY(check_gap_inputs(in, inputs_.force));
    ETSCOPE_ASSIGN_OR_RETURN(std::vector<inspect::GapRow> rows, inspect::calculate_numeric_gap(in, aot, metric));
    if (format_ == "json") {
      std::cout << dump_json(gap_json(rows, metric)) << "\n";
    } else if (format_ == "csv" || format_ == "tsv") {
      render_gap_rows(rows, metric, format_ == "csv" ? ',' : '\t', std::cout);
    } else {
      render_gap_table(rows, metric, std::cout, nullptr, gap_stats_);
    }
    return 0;
  }

  InspectInputs inputs_;
  std::string aot_, aot_index_, gap_;
  std::string format_ = "table", sort_ = "order", block_;
  size_t top_ = 0;
  int64_t prompt_tokens_ = -1;
  bool generation_ = false, findings_ = false, gap_stats_ = false;
  bool operator_calls_ = false, debug_events_ = false, by_type_ = false, modules_ = false;
};

}  // namespace

std::unique_ptr<Command> make_inspect_command() { return std::make_unique<InspectCommand>(); }

}  // namespace etscope::cli
