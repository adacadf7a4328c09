// Findings: what a program, and when given its profile, tells an expert to change.
//
// `etscope findings`, `inspect --findings` and the viewer's Findings panel read a program (and
// optionally an ETDump, ETRecord and debug buffer of one of its runs) and get back a list of
// findings. Each finding says what it found (one line), where (instructions with their operator,
// module path and source line), the evidence (numbers from the plan or the profile), what it
// costs per run (time, share of the run, bytes), and what to do about it. Every rule is its own
// small unit in src/rules/ (docs/findings.md lists them); this header is the whole interface.
//
// Numbers. A finding's time is what it would save per run: the sum over the instructions it
// names of each instruction's cost, the executor's view of it (OPERATOR_CALL, kernel plus the
// executor's overhead; the kernel event when the dump has no OPERATOR_CALL; DELEGATE_CALL for
// a delegate), its 10%-trimmed mean over the main block's runs (core/stats.h), in
// milliseconds; the run time is Method::execute's (the Inspector's run time without one).
// Trimmed means: a promise must not jump when one execution of a busy machine is preempted
// (as a mean does), nor miss the weight of a skewed distribution (as a median does). The total counts each
// instruction once however many findings name it. Findings are ranked by time saved, then by
// bytes, then by severity; findings without a cost keep rule order after them. Timed findings
// below Options::min_share are not dropped but folded, per rule, into one finding that names
// them all, so that a fix that removes them together (one export pass) is promised all of them.
//
// Severity, from the cost: high when a finding costs at least 10% of the run time (or a
// correctness problem: NaN or Inf in weights, timings that include intermediate logging),
// medium from 2%, low below, info for findings that cost nothing measurable.
//
// Safety. Every rule reads only what the readers validated (Program, MemoryPlan, Inspector):
// hostile files never make a rule read outside a validated range.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "etscope/core/result.h"
#include "etscope/etrecord/etrecord.h"
#include "etscope/formats/program.h"
#include "etscope/inspect/inspector.h"

namespace etscope::findings {

enum class Severity : uint8_t { kInfo, kLow, kMedium, kHigh };

/// "info", "low", "medium", "high".
const char* to_string(Severity severity);
/// Parses a severity name; kInvalidArgument for anything else.
Result<Severity> parse_severity(std::string_view text);

/// Where a finding is: one instruction of a method (or the method as a whole: chain -1).
struct Place {
  std::string method;
  int32_t chain = -1, instruction = -1;
  std::string op;           ///< "aten::permute_copy.out", "delegate XnnpackBackend", "" for the method.
  std::string module_path;  ///< Innermost nn.Module path ("features.0"), from the ETRecord; may be empty.
  std::string source;       ///< "model.py:42", from the ETRecord's stack trace or the program's; may be empty.
};

struct Finding {
  std::string rule;      ///< The rule's id ("constant-work"), see rule_catalog().
  Severity severity = Severity::kInfo;
  /// One line. It names operators, instructions and sizes but never a time, so that the same
  /// finding in two runs has the same text (the store tells findings apart by rule and text).
  std::string what;
  std::vector<Place> where;
  std::vector<std::string> evidence;  ///< One line each: the numbers that show it.
  /// Milliseconds per run the finding costs (and acting on it would save), when a profile says.
  std::optional<double> time_ms;
  std::optional<double> share;  ///< time_ms over the run time, 0..1.
  uint64_t bytes = 0;           ///< Memory it costs (arena bytes, debug buffer), 0 when none.
  std::string advice;           ///< What to do, one or two sentences.
};

struct RuleInfo {
  std::string id;
  std::string summary;   ///< What the rule looks for, one line.
  bool needs_profile = false;  ///< Fires only with an ETDump.
};

/// Every rule, in the order they run.
const std::vector<RuleInfo>& rule_catalog();

/// What the rules read. `program` or `inspector` is required; everything else may be null.
struct Inputs {
  const Program* program = nullptr;
  std::string method;            ///< The program's method to read ("" = the Inspector's / "forward" / the first).
  const etrecord::EtRecord* record = nullptr;
  const inspect::Inspector* inspector = nullptr;  ///< A profiled run of `method`.
  std::string engine;            ///< Which engine timed the profile ("etscope 0.1.0"), for the report.
  /// A profile of an earlier run of the same program (`--baseline`): the regressions rule
  /// compares the two as `etscope compare` does (inspect/compare.h) and sums its significant
  /// regressions by module.
  const inspect::Inspector* baseline = nullptr;
};

struct Options {
  /// Smallest share of the run time a timing finding must cost to be reported (0..1).
  double min_share = 0.005;
  /// Only these rules ("" entries ignored); empty = all.
  std::vector<std::string> rules;
};

struct Report {
  std::string program;           ///< The program's file name, "" without one.
  std::string method;
  bool timed = false;            ///< A profile was read.
  std::string engine;
  size_t runs = 0;               ///< Executions in the profile's main block.
  double run_ms = 0;             ///< The main block's run time (Inspector::run_time), ms.
  std::vector<Finding> findings; ///< Ranked (see the file comment).
  double total_ms = 0;           ///< Time the findings would save together, each instruction once.
  std::optional<double> total_share;
  uint64_t total_bytes = 0;
  /// Rules that could not run on these inputs, with why ("needs an ETDump").
  std::vector<std::string> skipped;
};

/// Runs the rules. Errors: kInvalidArgument when neither a program nor a profile is given, or
/// `method` names no method of the program; an unknown rule id in options.rules.
Result<Report> analyse(const Inputs& inputs, const Options& options = {});

/// The highest severity in `report`, nullopt when it has no findings.
std::optional<Severity> highest_severity(const Report& report);

}  // namespace etscope::findings
