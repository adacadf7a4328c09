// Consistency: do an ETDump, an ETRecord and a program belong together?
//
// Nothing in the files names the others (ExecuTorch records no program identity in an ETDump),
// so joining a dump of one model with the record of another silently labels every event with
// the wrong operator and module. What the files do share is checked here:
//   - dump and program: every kernel event (`native_call_<op>` at chain/instruction) and every
//     DELEGATE_CALL of a run block is explained by one method of the program: the instruction
//     exists there and calls that operator (or a delegate);
//   - record and program: each method of the record's debug maps exists in the program, its
//     instruction ids lie within the method's instructions, delegate entries sit on delegate
//     calls, and the graph nodes behind an instruction's debug handles run the operator the
//     program calls there;
//   - dump and record: every kernel event's instruction has debug handles in some method's map
//     and the nodes behind them run the event's operator.
// Operators are compared by base name ("aten::convolution.out", "native_call_convolution.out"
// and "aten.convolution.default" are all "convolution"). A method passes when at most one in ten
// of the comparisons that can be made disagree, so an exporter rewrite of a few nodes cannot
// refuse a true pair, while files of different models disagree almost everywhere.
#pragma once

#include <string>
#include <vector>

#include "etscope/etdump/etdump_reader.h"
#include "etscope/etrecord/etrecord.h"
#include "etscope/formats/program.h"

namespace etscope::inspect {

struct ConsistencyReport {
  /// One line per mismatch found, naming both files and what disagrees.
  std::vector<std::string> problems;
  /// One line per thing that holds but limits what the files can show together (instructions the
  /// run executed that the ETRecord maps no debug handle for).
  std::vector<std::string> notes;
  bool ok() const { return problems.empty(); }
};

/// Checks the files against each other; any of them may be null (then its pairs are skipped).
ConsistencyReport check_consistency(const etdump::EtDumpFile* dump, const etrecord::EtRecord* record,
                                    const Program* program);

/// The operator's base name: no namespace, overload or `native_call_` prefix.
std::string operator_base_name(std::string_view name);

}  // namespace etscope::inspect
