// etscope findings: what a program, and when given its profile, says to change (findings/),
// ranked by the time each finding would save, with the evidence and the advice.
#include <algorithm>
#include <cstdio>
#include <iostream>
#include <memory>

#include "commands/command.h"
#include "commands/inspect_inputs.h"
#include "etscope/etrecord/etrecord_reader.h"
#include "etscope/findings/findings.h"
#include "etscope/inspect/profile.h"
#include "etscope/inspect/program_description.h"
#include "render/findings_render.h"
#include "render/json_output.h"

namespace etscope::cli {
namespace {

class FindingsCommand final : public Command {
 public:
  CLI::App* add_to(CLI::App& app) override {
    CLI::App* sub = app.add_subcommand(
        "findings", "What to change in a program, from the program and its profile, ranked by the time it would save (docs/findings.md)");
    sub->add_option("file", pte_, "Program (.pte, or a .bpte's program)");
    sub->add_option("--etdump", etdump_, "ETDump of a run of the program: adds times and the profile's rules");
    sub->add_option("--baseline", baseline_, "ETDump of an earlier run of the same program: its significant regressions, by module");
    sub->add_option("--etrecord", etrecord_, "ETRecord of the program: module paths and source lines");
    sub->add_option("--debug-buffer", debug_buffer_, "Debug buffer (.bin) of the run");
    sub->add_option("--method", method_, "Method to read (default: forward, else the first)");
    sub->add_option("--rule", rules_, "Only this rule (repeatable; --list-rules names them)");
    sub->add_option("--min-share", min_share_, "Leave out timed findings that cost less than this share of the run (default 0.005)")
        ->check(CLI::Range(0.0, 1.0));
    sub->add_option("--fail-on", fail_on_, "Exit 3 when a finding of this severity or higher is reported (info, low, medium, high)")
        ->check(CLI::IsMember({"info", "low", "medium", "high"}));
    sub->add_flag("--include-warmup", include_warmup_, "Count etscope's warm-up executions as runs");
    sub->add_option("--skip-runs", skip_runs_, "Leave out the first N executions (warm-up in dumps of ExecuTorch's runtime)");
    sub->add_flag("--force", force_, "Join a program, ETDump and ETRecord that do not belong together (with a warning)");
    sub->add_flag("--list-rules", list_rules_, "List the rules and exit");
    format_.add_to(sub, "see docs/json.md");
    return sub;
  }

  Result<int> run() override {
    if (list_rules_) return list_rules();
    if (!baseline_.empty() && etdump_.empty()) {
      std::fprintf(stderr, "etscope findings: --baseline compares with the run of --etdump, which is missing (etscope findings --help lists the options)\n");
      return 2;
    }
    if (pte_.empty() && etdump_.empty()) {
      std::fprintf(stderr, "etscope findings: needs a program, an --etdump, or both (etscope findings --help lists the options)\n");
      return 2;
    }
    for (const std::string& id : rules_) {
      const auto& catalog = findings::rule_catalog();
      if (std::none_of(catalog.begin(), catalog.end(), [&](const findings::RuleInfo& r) { return r.id == id; })) {
        std::fprintf(stderr, "etscope findings: unknown rule '%s' (etscope findings --list-rules names them)\n", id.c_str());
        return 2;
      }
    }
    findings::Options options;
    options.rules = rules_;
    options.min_share = min_share_;
    findings::Inputs inputs;
    inputs.method = method_;
    std::shared_ptr<const Program> program;
    std::shared_ptr<const etrecord::EtRecord> record;
    std::optional<inspect::Profile> profile, baseline;
    if (!etdump_.empty()) {
      inspect::ProfileFiles files;
      files.etdump = etdump_;
      files.etrecord = etrecord_;
      files.program = pte_;
      files.debug_buffer = debug_buffer_;
      files.options.method = method_;
      files.options.include_warmup = include_warmup_;
      files.options.skip_runs = skip_runs_;
      files.options.join_mismatched = force_;
      files.options.mismatch_hint = " (--force joins them anyway)";
      ETSCOPE_ASSIGN_OR_RETURN(inspect::Profile opened, inspect::open_profile(files));
      profile = std::move(opened);
      print_profile_warnings(profile->warnings, /*skip_logged_timings=*/true);  // logged-timings reports it
      program = profile->program;
      record = profile->record;
      inputs.method = profile->method;
      inputs.inspector = profile->inspector.get();
      inputs.engine = profile->engine.known() ? profile->engine.text() : "";
      if (!baseline_.empty()) {
        // The baseline is opened as the run is, against the same program and record.
        files.etdump = baseline_;
        ETSCOPE_ASSIGN_OR_RETURN(inspect::Profile opened_baseline, inspect::open_profile(files));
        baseline = std::move(opened_baseline);
        print_profile_warnings(baseline->warnings, true);
        const inspect::EngineCheck engines = inspect::check_engines(baseline->engine, profile->engine);
        if (engines.match == inspect::EngineMatch::kDifferent) {
          return Error(ErrorCode::kInvalidArgument, baseline_ + ": " + engines.text);
        }
        if (engines.match == inspect::EngineMatch::kUnknown) std::fprintf(stderr, "etscope: note: %s\n", engines.text.c_str());
        inputs.baseline = baseline->inspector.get();
      }
    } else {
      ETSCOPE_ASSIGN_OR_RETURN(Program p, inspect::load_program(pte_));
      program = std::make_shared<const Program>(std::move(p));
      if (!etrecord_.empty()) {
        ETSCOPE_ASSIGN_OR_RETURN(etrecord::EtRecord r, etrecord::EtRecordReader::open(etrecord_));
        record = std::make_shared<const etrecord::EtRecord>(std::move(r));
      }
      inspect::ProfileParts parts;
      parts.program = program;
      parts.record = record;
      parts.record_name = etrecord_;
      inspect::ProfileOptions popts;
      popts.method = method_;
      popts.join_mismatched = force_;
      popts.mismatch_hint = " (--force joins them anyway)";
      ETSCOPE_ASSIGN_OR_RETURN(std::vector<inspect::ProfileWarning> warnings, inspect::check_profile_parts(parts, popts));
      print_profile_warnings(warnings, true);
    }
    inputs.program = program.get();
    inputs.record = record.get();
    ETSCOPE_ASSIGN_OR_RETURN(findings::Report report, findings::analyse(inputs, options));
    if (format_.json()) {
      std::cout << dump_json(findings_json(report)) << "\n";
    } else {
      render_findings_text(report, std::cout);
    }
    if (!fail_on_.empty()) {
      ETSCOPE_ASSIGN_OR_RETURN(findings::Severity floor, findings::parse_severity(fail_on_));
      const std::optional<findings::Severity> top = findings::highest_severity(report);
      if (top && *top >= floor) return 3;
    }
    return 0;
  }

 private:
  Result<int> list_rules() const {
    if (format_.json()) {
      Json list = Json::array();
      for (const findings::RuleInfo& r : findings::rule_catalog()) {
        list.push_back(Json{{"id", r.id}, {"summary", r.summary}, {"needs_profile", r.needs_profile}});
      }
      std::cout << dump_json(list) << "\n";
      return 0;
    }
    for (const findings::RuleInfo& r : findings::rule_catalog()) {
      std::printf("%-21s %s%s\n", r.id.c_str(), r.summary.c_str(), r.needs_profile ? " (needs --etdump)" : "");
    }
    return 0;
  }

  std::string pte_, etdump_, baseline_, etrecord_, debug_buffer_, method_, fail_on_;
  std::vector<std::string> rules_;
  double min_share_ = 0.005;
  bool include_warmup_ = false, force_ = false, list_rules_ = false;
  uint32_t skip_runs_ = 0;
  ReportFormat format_;
};

}  // namespace

std::unique_ptr<Command> make_findings_command() { return std::make_unique<FindingsCommand>(); }

}  // namespace etscope::cli
