#include "model/program_model.h"

#include "etscope/inspect/program_description.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>

#include "etscope/formats/op_signatures.h"
#include "model/text_format.h"

namespace etscope::gui {
namespace {

std::string value_contents(const ExecutionPlan& plan, int32_t index) {
  // argument_text without the leading "%N " (and the "=" of scalars).
  std::string s = inspect::argument_text(plan, index);
  const size_t space = s.find(' ');
  s = space == std::string::npos ? "" : s.substr(space + 1);
  if (!s.empty() && s[0] == '=') s.erase(0, 1);
  return s;
}

}  // namespace

ProgramModel ProgramModel::build(const Program& program, size_t plan_index) {
  ProgramModel m;
  const ExecutionPlan& plan = program.plans.at(plan_index);
  m.name_ = plan.name;

  auto fact = [&](std::string label, std::string value) { m.facts_.emplace_back(std::move(label), std::move(value)); };
  fact("file", program.name());
  fact("size", bytes_text(program.file_size) + " (" + std::to_string(program.file_size) + " B)");
  fact("identifier", program.file_identifier + ", schema version " + std::to_string(program.version));
  fact("header", program.header ? "eh00, " + std::to_string(program.header->length) + " bytes, segments at " +
                                      std::to_string(program.header->segment_base_offset)
                                : "none (flat FlatBuffer)");
  fact("flatbuffer", bytes_text(program.flatbuffer_size));
  fact("segments", std::to_string(program.segments.size()));
  fact("constants", program.constant_storage == ConstantStorage::kNone
                        ? "none"
                        : bytes_text(program.constant_bytes) + " in " + to_string(program.constant_storage));
  std::string methods;
  for (const ExecutionPlan& p : program.plans) methods += (methods.empty() ? "" : ", ") + p.name;
  fact("methods", methods);
  std::map<std::string, size_t> kinds;
  for (const Value& v : plan.values) ++kinds[to_string(v.kind)];
  std::string kind_list;
  for (const auto& [k, n] : kinds) kind_list += (kind_list.empty() ? "" : ", ") + std::to_string(n) + " " + k;
  fact("values", std::to_string(plan.values.size()) + (kind_list.empty() ? "" : " (" + kind_list + ")"));
  fact("instructions", std::to_string(plan.instruction_count()) +
                           (plan.chains.size() == 1 ? "" : " in " + std::to_string(plan.chains.size()) + " chains"));

  auto io_rows = [&](const std::vector<int32_t>& indices, std::vector<IoRow>& out) {
    for (int32_t idx : indices) {
      IoRow row;
      row.value = idx;
      row.text = inspect::argument_text(plan, idx);
      const Value& v = plan.values[static_cast<size_t>(idx)];
      if (v.kind == ValueKind::kTensor) row.location = inspect::location_text(v.tensor);
      out.push_back(std::move(row));
    }
  };
  io_rows(plan.inputs, m.inputs_);
  io_rows(plan.outputs, m.outputs_);

  for (const Operator& op : plan.operators) m.operators_.push_back({op.qualified_name(), 0});
  for (size_t d = 0; d < plan.delegates.size(); ++d) {
    const Delegate& del = plan.delegates[d];
    m.delegates_.push_back("#" + std::to_string(d) + " " + del.id + ": " + bytes_text(del.data.size) +
                           (del.inline_data ? " inline" : " in segment " + std::to_string(del.index)));
    m.delegate_graphs_.push_back(inspect::describe_delegate_graph(program, plan, d));
  }
  for (size_t k = 1; k < plan.non_const_buffer_sizes.size(); ++k) {
    m.arenas_.push_back("arena " + std::to_string(k) + ": " +
                        bytes_text(static_cast<uint64_t>(plan.non_const_buffer_sizes[k])));
  }

  int64_t step = 0;
  for (size_t c = 0; c < plan.chains.size(); ++c) {
    const Chain& chain = plan.chains[c];
    m.chain_first_step_.push_back(step);
    for (size_t i = 0; i < chain.instructions.size(); ++i, ++step) {
      const Instruction& in = chain.instructions[i];
      InstructionRow row;
      row.ref = {static_cast<int32_t>(c), static_cast<int32_t>(i)};
      row.step = step;
      row.kind = inspect::instruction_kind_word(in.kind);
      switch (in.kind) {
        case InstructionKind::kKernelCall:
          row.op = plan.operators[static_cast<size_t>(in.op_index)].qualified_name();
          ++m.operators_[static_cast<size_t>(in.op_index)].calls;
          break;
        case InstructionKind::kDelegateCall:
          row.op = "delegate " + plan.delegates[static_cast<size_t>(in.delegate_index)].id;
          break;
        default: row.op = row.kind; break;
      }
      row.text = inspect::instruction_text(plan, in);
      if (i < chain.stacktrace.size() && !chain.stacktrace[i].empty()) {
        const auto& frames = chain.stacktrace[i];
        const Frame& f = frames.back();
        row.source = f.filename + ":" + std::to_string(f.lineno) + " in " + f.name;
        for (const Frame& fr : frames) {
          row.stack += fr.filename + ":" + std::to_string(fr.lineno) + " in " + fr.name + "\n";
          if (!fr.context.empty()) row.stack += "    " + fr.context + "\n";
        }
      }
      m.longest_instruction_ = std::max(m.longest_instruction_, row.text.size());
      m.has_sources_ = m.has_sources_ || !row.source.empty();
      m.instructions_.push_back(std::move(row));
    }
  }

  m.values_.reserve(plan.values.size());
  for (size_t i = 0; i < plan.values.size(); ++i) {
    const Value& v = plan.values[i];
    ValueRow row;
    row.index = static_cast<int32_t>(i);
    row.kind = to_string(v.kind);
    if (v.kind == ValueKind::kTensor) {
      const TensorInfo& t = v.tensor;
      row.type = shape_text(t.dtype, t.sizes);
      row.nbytes = t.nbytes;
      row.location = inspect::location_text(t);
      auto note = [&](const std::string& n) { row.notes += (row.notes.empty() ? "" : ", ") + n; };
      if (!t.fqn.empty() && !t.external) note("fqn '" + t.fqn + "'");
      if (t.requires_grad) note("requires_grad");
      if (t.dynamism == ShapeDynamism::kDynamicBound) note("dynamic (bounded)");
      if (t.dynamism == ShapeDynamism::kDynamicUnbound) note("dynamic (unbounded)");
    } else {
      row.type = value_contents(plan, static_cast<int32_t>(i));
    }
    m.values_.push_back(std::move(row));
  }
  return m;
}

int64_t ProgramModel::step_of(const InstructionRef& ref) const {
  if (!ref.valid() || static_cast<size_t>(ref.chain) >= chain_first_step_.size()) return -1;
  const int64_t first = chain_first_step_[static_cast<size_t>(ref.chain)];
  const int64_t next = static_cast<size_t>(ref.chain) + 1 < chain_first_step_.size()
                           ? chain_first_step_[static_cast<size_t>(ref.chain) + 1]
                           : static_cast<int64_t>(instructions_.size());
  const int64_t step = first + ref.instruction;
  return step < next ? step : -1;
}

InstructionRef ProgramModel::at_step(int64_t step) const {
  if (step < 0 || static_cast<size_t>(step) >= instructions_.size()) return {};
  return instructions_[static_cast<size_t>(step)].ref;
}

}  // namespace etscope::gui
