// ProgramModel: one execution plan of a .pte as the Program view shows it. The rows are
// libinspect's PlanDescription (etscope/inspect/program_description.h), the same rows and texts
// `etscope pte --instructions/--values` prints; this model only arranges them for the view and
// adds what drawing needs (flattened steps, the instruction column's width). Everything is built
// once, on the loading thread; the view only clips and draws.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "etscope/formats/program.h"
#include "etscope/inspect/program_description.h"
#include "model/instruction_ref.h"

namespace etscope::gui {

/// The rows are libinspect's, under the names the views use.
using InstructionRow = inspect::InstructionDescription;
using ValueRow = inspect::ValueDescription;
using IoRow = inspect::IoDescription;
using OperatorRow = inspect::OperatorCalls;

/// The instruction a row describes, as the viewer's shared selection names it.
inline InstructionRef ref_of(const InstructionRow& row) { return {row.chain, row.index}; }

class ProgramModel {
 public:
  /// Describes plan `plan_index` of `program`. Neither needs to outlive the model.
  static ProgramModel build(const Program& program, size_t plan_index);

  const std::string& name() const { return plan_.name; }
  /// Label/value pairs about the file and plan ("file", "size", "header", "values", ...).
  const std::vector<std::pair<std::string, std::string>>& facts() const { return facts_; }
  const std::vector<IoRow>& inputs() const { return plan_.inputs; }
  const std::vector<IoRow>& outputs() const { return plan_.outputs; }
  const std::vector<OperatorRow>& operators() const { return plan_.operators; }
  /// "#0 XnnpackBackend: 12.3 KiB inline, compile specs: none", one per delegate.
  const std::vector<std::string>& delegates() const { return delegates_; }
  /// Per delegate, the nodes of its graph (XNNPACK payloads; libinspect's description).
  const std::vector<inspect::DelegateGraphDescription>& delegate_graphs() const { return delegate_graphs_; }
  /// "arena 1: 65536 B (64.0 KiB)", one per arena.
  const std::vector<std::string>& arenas() const { return arenas_; }
  /// Every instruction in step order.
  const std::vector<InstructionRow>& instructions() const { return plan_.instructions; }
  const std::vector<ValueRow>& values() const { return plan_.values; }
  /// Characters of the longest instruction text (the instruction column's width in a
  /// monospaced font).
  size_t longest_instruction() const { return longest_instruction_; }
  /// True when some instruction has a stack trace (exported with them).
  bool has_sources() const { return plan_.has_sources; }

  /// Flattened step of an instruction, or -1 when the plan has no such instruction.
  int64_t step_of(const InstructionRef& ref) const;
  /// The instruction at a flattened step, or an invalid ref.
  InstructionRef at_step(int64_t step) const;
  /// Row index into instructions() of `ref`, or -1.
  int64_t row_of(const InstructionRef& ref) const { return step_of(ref); }

 private:
  inspect::PlanDescription plan_;
  std::vector<std::pair<std::string, std::string>> facts_;
  std::vector<std::string> delegates_, arenas_;
  std::vector<inspect::DelegateGraphDescription> delegate_graphs_;
  /// Step of each chain's first instruction, plus one past the last step (chain_count + 1 entries).
  std::vector<int64_t> chain_first_step_;
  size_t longest_instruction_ = 0;
};

}  // namespace etscope::gui
