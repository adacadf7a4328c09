// ProgramModel: one execution plan of a .pte, flattened into rows the Program view prints as
// they are. Everything is formatted once, on the loading thread; the view only clips and draws.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "etscope/formats/program.h"
#include "etscope/inspect/program_description.h"
#include "model/instruction_ref.h"

namespace etscope::gui {

struct InstructionRow {
  InstructionRef ref;
  int64_t step = 0;          ///< Position in the flattened instruction list (MemoryPlan steps).
  std::string kind;          ///< "kernel", "delegate", "move", "jump", "free".
  std::string op;            ///< "aten::convolution.out", "delegate XnnpackBackend", "move", ...
  std::string text;          ///< The whole instruction with its arguments.
  std::string source;        ///< Innermost stack frame "file:line in fn", or "".
  std::string stack;         ///< Every frame, one per line, outermost first; or "".
};

struct ValueRow {
  int32_t index = 0;
  std::string kind;          ///< "Tensor", "Int", "IntList", ...
  std::string type;          ///< "f32[1,16,32,32]" for tensors, the value itself otherwise.
  uint64_t nbytes = 0;       ///< Tensors only.
  std::string location;      ///< "arena 1 @ 320", "constant #2 @ file 0x980", ...
  std::string notes;         ///< "requires_grad", "fqn 'w'", "dynamic (bounded)", joined by ", ".
};

struct IoRow {
  int32_t value = 0;
  std::string text;          ///< "%0 f32[1,3,32,32]".
  std::string location;
};

struct OperatorRow {
  std::string name;          ///< "aten::convolution.out".
  size_t calls = 0;          ///< KernelCalls using it.
};

class ProgramModel {
 public:
  /// Formats plan `plan_index` of `program`. Neither needs to outlive the model.
  static ProgramModel build(const Program& program, size_t plan_index);

  const std::string& name() const { return name_; }
  /// Label/value pairs about the file and plan ("file", "size", "header", "values", ...).
  const std::vector<std::pair<std::string, std::string>>& facts() const { return facts_; }
  const std::vector<IoRow>& inputs() const { return inputs_; }
  const std::vector<IoRow>& outputs() const { return outputs_; }
  const std::vector<OperatorRow>& operators() const { return operators_; }
  /// "#0 XnnpackBackend: 12.3 KiB inline", one per delegate.
  const std::vector<std::string>& delegates() const { return delegates_; }
  /// Per delegate, the nodes of its graph (XNNPACK payloads; libinspect's description).
  const std::vector<inspect::DelegateGraphDescription>& delegate_graphs() const { return delegate_graphs_; }
  /// "arena 1: 64.0 KiB", one per arena.
  const std::vector<std::string>& arenas() const { return arenas_; }
  const std::vector<InstructionRow>& instructions() const { return instructions_; }
  const std::vector<ValueRow>& values() const { return values_; }
  /// Characters of the longest instruction text (the instruction column's width in a
  /// monospaced font).
  size_t longest_instruction() const { return longest_instruction_; }
  /// True when some instruction has a stack trace (exported with them).
  bool has_sources() const { return has_sources_; }

  /// Flattened step of an instruction, or -1 when the plan has no such instruction.
  int64_t step_of(const InstructionRef& ref) const;
  /// The instruction at a flattened step, or an invalid ref.
  InstructionRef at_step(int64_t step) const;
  /// Row index into instructions() of `ref`, or -1.
  int64_t row_of(const InstructionRef& ref) const { return step_of(ref); }

 private:
  std::string name_;
  std::vector<std::pair<std::string, std::string>> facts_;
  std::vector<IoRow> inputs_, outputs_;
  std::vector<OperatorRow> operators_;
  std::vector<std::string> delegates_, arenas_;
  std::vector<inspect::DelegateGraphDescription> delegate_graphs_;
  std::vector<InstructionRow> instructions_;
  std::vector<ValueRow> values_;
  std::vector<int64_t> chain_first_step_;  ///< Step of each chain's first instruction.
  size_t longest_instruction_ = 0;
  bool has_sources_ = false;
};

// The texts of arguments, locations and instructions are libinspect's program description
// (etscope/inspect/program_description.h), shared with `etscope pte`.

}  // namespace etscope::gui
