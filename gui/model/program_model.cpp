#include "model/program_model.h"

#include <algorithm>

#include "etscope/core/text.h"

namespace etscope::gui {

ProgramModel ProgramModel::build(const Program& program, size_t plan_index) {
  ProgramModel m;
  const ExecutionPlan& plan = program.plans.at(plan_index);
  m.plan_ = inspect::PlanDescription::describe(plan);
  const inspect::ProgramDescription file = inspect::ProgramDescription::describe(program);

  auto fact = [&](std::string label, std::string value) { m.facts_.emplace_back(std::move(label), std::move(value)); };
  fact("file", file.file);
  fact("size", bytes_text(program.file_size) + " (" + std::to_string(program.file_size) + " B)");
  fact("identifier", program.file_identifier + ", schema version " + std::to_string(program.version));
  fact("header", file.header);
  fact("flatbuffer", bytes_text(program.flatbuffer_size));
  fact("segments", std::to_string(file.segments.size()));
  fact("constants", file.constants);
  if (!file.mutable_data.empty()) fact("mutable data", file.mutable_data);
  std::string methods;
  for (const std::string& name : file.methods) methods += (methods.empty() ? "" : ", ") + name;
  fact("methods", methods);
  fact("values", m.plan_.values_summary);
  fact("instructions", m.plan_.instructions_summary);

  for (size_t d = 0; d < m.plan_.delegates.size(); ++d) {
    m.delegates_.push_back(m.plan_.delegates[d].text);
    m.delegate_graphs_.push_back(inspect::describe_delegate_graph(program, plan, d));
  }
  for (const inspect::ArenaDescription& a : m.plan_.arenas) {
    m.arenas_.push_back("arena " + std::to_string(a.memory_id) + ": " + a.text);
  }

  // Steps are positions in the flattened list; a chain without instructions starts where the
  // next one does.
  m.chain_first_step_.assign(m.plan_.chain_count + 1, 0);
  for (const InstructionRow& row : m.plan_.instructions) {
    ++m.chain_first_step_[static_cast<size_t>(row.chain) + 1];
    m.longest_instruction_ = std::max(m.longest_instruction_, row.text.size());
  }
  for (size_t c = 1; c < m.chain_first_step_.size(); ++c) m.chain_first_step_[c] += m.chain_first_step_[c - 1];
  return m;
}

int64_t ProgramModel::step_of(const InstructionRef& ref) const {
  if (!ref.valid() || static_cast<size_t>(ref.chain) + 1 >= chain_first_step_.size()) return -1;
  const int64_t step = chain_first_step_[static_cast<size_t>(ref.chain)] + ref.instruction;
  return step < chain_first_step_[static_cast<size_t>(ref.chain) + 1] ? step : -1;
}

InstructionRef ProgramModel::at_step(int64_t step) const {
  if (step < 0 || static_cast<size_t>(step) >= plan_.instructions.size()) return {};
  return ref_of(plan_.instructions[static_cast<size_t>(step)]);
}

}  // namespace etscope::gui
