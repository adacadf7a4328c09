// The inputs of a profiled run as `etscope inspect` and `etscope trace` take them (--etdump,
// --etrecord, --debug-buffer, time scales, --method) and the Inspector built from them.
#pragma once

#include <CLI/CLI.hpp>

#include <string>
#include <vector>

#include "etscope/core/result.h"
#include "etscope/inspect/inspector.h"
#include "etscope/inspect/profile.h"

namespace etscope::cli {

/// Prints what an opened profile's warnings say on stderr, one line each ("etscope: FILE: warning:
/// ..."; a mismatch joined with --force names both files). Timings taken with intermediate logging
/// on are left out when `skip_logged_timings` (the caller logged them itself, or reports them).
void print_profile_warnings(const std::vector<inspect::ProfileWarning>& warnings, bool skip_logged_timings);

struct InspectInputs {
  std::string etdump, etrecord, debug_buffer;
  std::string source = "ns", target = "ms";
  std::string method;  // "" = each block its own method (else forward)
  std::string pte;          ///< The program: checked against the others; names the default method.
  bool force = false;       ///< Join files that do not belong together, with a warning.
  bool include_warmup = false;
  uint32_t skip_runs = 0;
  /// The caller logged intermediate outputs itself and says so (`debug`): no warning that the
  /// dump's timings include the logging.
  bool logging_expected = false;

  /// Declares the options on `sub`, bound to this object (which must outlive the parse).
  void add_options(CLI::App* sub);
  /// Opens the files as inspect::open_profile does (files that do not belong together are
  /// refused unless --force) and prints its warnings on stderr.
  Result<inspect::Inspector> load() const;
  /// The same, keeping the whole profile (program, ETRecord, method, engine) for reports that
  /// need more than the Inspector (inspect --findings).
  Result<inspect::Profile> load_profile() const;
};

}  // namespace etscope::cli
