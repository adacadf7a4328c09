#include "commands/inspect_inputs.h"

#include <cstdio>
#include <utility>

#include "etscope/inspect/profile.h"

namespace etscope::cli {

void print_profile_warnings(const std::vector<inspect::ProfileWarning>& warnings, bool skip_logged_timings) {
  for (const inspect::ProfileWarning& w : warnings) {
    if (skip_logged_timings && w.kind == inspect::ProfileWarning::Kind::kLoggedTimings) continue;
    if (w.kind == inspect::ProfileWarning::Kind::kMismatch) {
      std::fprintf(stderr, "etscope: warning: %s (joined anyway: --force)\n", w.text.c_str());
    } else {
      std::fprintf(stderr, "etscope: %s: warning: %s\n", w.file.c_str(), w.text.c_str());
    }
  }
}

void InspectInputs::add_options(CLI::App* sub) {
  sub->add_option("--etdump", etdump, "ETDump trace (.etdp)")->required();
  sub->add_option("--etrecord", etrecord, "ETRecord archive of the same program (module hierarchy, stack traces, op types)");
  sub->add_option("--debug-buffer", debug_buffer, "Debug buffer (.bin) the run wrote next to the ETDump");
  sub->add_option("--source-time-scale", source, "Unit of the ETDump's timestamps")
      ->check(CLI::IsMember({"ns", "us", "ms", "s", "cycles"}))->capture_default_str();
  sub->add_option("--target-time-scale", target, "Unit of the reported times")
      ->check(CLI::IsMember({"ns", "us", "ms", "s", "cycles"}))->capture_default_str();
  sub->add_option("--method", method,
                  "ETRecord method for blocks whose kernels do not tell their method (default: forward, else the --pte's first "
                  "method); a block one method explains always uses that method's maps");
  sub->add_option("--pte", pte, "The program that was run: checked against the ETDump and ETRecord");
  sub->add_flag("--force", force, "Join an ETDump, ETRecord and program that do not belong together, and compare a --gap whose run used other inputs than the AOT intermediates (each with a warning)");
  sub->add_flag("--include-warmup", include_warmup, "Count etscope's warm-up executions ('Warmup' blocks) as runs");
  sub->add_option("--skip-runs", skip_runs, "Leave out the first N executions (warm-up in dumps from ExecuTorch's runtime)");
}

Result<inspect::Inspector> InspectInputs::load() const {
  ETSCOPE_ASSIGN_OR_RETURN(inspect::Profile profile, load_profile());
  return std::move(*profile.inspector);
}

Result<inspect::Profile> InspectInputs::load_profile() const {
  inspect::ProfileFiles files;
  files.etdump = etdump;
  files.etrecord = etrecord;
  files.program = pte;
  files.debug_buffer = debug_buffer;
  inspect::ProfileOptions& options = files.options;
  ETSCOPE_ASSIGN_OR_RETURN(options.source, inspect::parse_time_scale(source));
  ETSCOPE_ASSIGN_OR_RETURN(options.target, inspect::parse_time_scale(target));
  options.method = method;
  options.include_warmup = include_warmup;
  options.skip_runs = skip_runs;
  options.join_mismatched = force;
  options.mismatch_hint = " (--force joins them anyway)";
  ETSCOPE_ASSIGN_OR_RETURN(inspect::Profile profile, inspect::open_profile(files));
  print_profile_warnings(profile.warnings, logging_expected);
  return profile;
}

}  // namespace etscope::cli
