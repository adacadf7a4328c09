// FindingsModel: the Findings view's rows, from one findings::analyse of what the session loaded
// (program, ETRecord, the ETDump's Inspector and engine), run once on the loading thread. Every
// number is the findings library's; the model only words them as the CLI does (core/text.h) and
// turns each place into an InstructionRef the views can select.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "etscope/etrecord/etrecord.h"
#include "etscope/findings/findings.h"
#include "etscope/formats/program.h"
#include "etscope/inspect/inspector.h"
#include "model/instruction_ref.h"

namespace etscope::gui {

/// One place a finding names.
struct FindingsPlace {
  /// The instruction, valid when the place is one; invalid for the method as a whole.
  InstructionRef instruction;
  std::string method;  ///< The place's method (the plan to show when selecting it).
  /// "instruction 3 aten::elu.out (middle, model.py:12)", "method forward": as the CLI says it.
  std::string text;
};

struct FindingsRow {
  size_t rank = 0;                  ///< 1-based, in the library's order.
  findings::Severity severity = findings::Severity::kInfo;
  std::string severity_text;        ///< "high", "medium", "low", "info".
  std::string rule;                 ///< "constant-work".
  std::string what;
  /// "1.23 ms/run (4.56%), 12 KiB", "-" when the finding has no cost.
  std::string cost;
  std::optional<double> share;      ///< The library's share of the run (0..1), for a bar.
  std::vector<FindingsPlace> where;
  /// The first place, short, for the table: "12", "0:12" (chain 0 is implied), "12 +3" with three
  /// more places, "method" for the method as a whole; "" without places. Findings of one rule
  /// often share their `what` and differ only here.
  std::string at;
  std::vector<std::string> evidence;
  std::string advice;
};

/// What the findings read, borrowed for the length of build().
struct FindingsInputs {
  const Program* program = nullptr;
  const etrecord::EtRecord* record = nullptr;
  const inspect::Inspector* inspector = nullptr;
  std::string method;  ///< The method the profile was read as; "" = the library's default.
  /// The engine that timed the profile ("etscope 0.1.0"), "" when unknown.
  std::string engine;
};

class FindingsModel {
 public:
  /// Runs findings::analyse with its default options. A failure is kept as error(), not
  /// returned: the view says it where the findings would be.
  static FindingsModel build(const FindingsInputs& inputs);

  /// Whether analyse succeeded; when not, error() says why and there are no rows.
  bool ok() const { return error_.empty(); }
  const std::string& error() const { return error_; }

  const std::vector<FindingsRow>& rows() const { return rows_; }
  const std::string& program() const { return program_; }  ///< The program's file name (no directory), "" without one.
  const std::string& method() const { return method_; }
  bool timed() const { return timed_; }
  /// "profile of 5 runs by etscope 0.1.0, run time 1.23 ms" or "program only (no profile: no times)".
  const std::string& profile_text() const { return profile_text_; }
  /// "2 findings; together they cost 1.2 ms per run (12.3% of the run, each instruction once); 4 KiB of memory".
  const std::string& totals_text() const { return totals_text_; }
  /// Rules that did not run, with why ("warmup: needs a profile (--etdump)").
  const std::vector<std::string>& skipped() const { return skipped_; }
  /// The highest severity of any row, nullopt without rows.
  std::optional<findings::Severity> highest() const { return highest_; }

  /// Whether row `row` names instruction `ref` of method `method` among its places.
  bool names(size_t row, const std::string& method, const InstructionRef& ref) const;

 private:
  std::vector<FindingsRow> rows_;
  std::string error_;
  std::string program_, method_, profile_text_, totals_text_;
  bool timed_ = false;
  std::vector<std::string> skipped_;
  std::optional<findings::Severity> highest_;
};

/// FindingsRow::at for `where`.
std::string findings_at_text(const std::vector<findings::Place>& where);

}  // namespace etscope::gui
