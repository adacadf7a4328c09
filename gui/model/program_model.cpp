#include "model/program_model.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>

#include "etscope/formats/op_signatures.h"
#include "model/text_format.h"

namespace etscope::gui {
namespace {

// Shortest "%g" text that reads back to the same double.
std::string double_text(double v) {
  char buf[40];
  for (int digits = 6; digits <= 17; ++digits) {
    std::snprintf(buf, sizeof buf, "%.*g", digits, v);
    if (std::strtod(buf, nullptr) == v) break;
  }
  return buf;
}

std::string joined_arguments(const ExecutionPlan& plan, const std::vector<int32_t>& values) {
  std::string s;
  for (int32_t v : values) {
    if (!s.empty()) s += ", ";
    s += argument_text(plan, v);
  }
  return s;
}

std::string hex(uint64_t v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}

const char* kind_word(InstructionKind kind) {
  switch (kind) {
    case InstructionKind::kKernelCall: return "kernel";
    case InstructionKind::kDelegateCall: return "delegate";
    case InstructionKind::kMoveCall: return "move";
    case InstructionKind::kJumpFalse: return "jump";
    case InstructionKind::kFree: return "free";
  }
  return "?";
}

std::string value_contents(const ExecutionPlan& plan, int32_t index) {
  // argument_text without the leading "%N " (and the "=" of scalars).
  std::string s = argument_text(plan, index);
  const size_t space = s.find(' ');
  s = space == std::string::npos ? "" : s.substr(space + 1);
  if (!s.empty() && s[0] == '=') s.erase(0, 1);
  return s;
}

}  // namespace

std::string argument_text(const ExecutionPlan& plan, int32_t value_index) {
  if (value_index < 0 || static_cast<size_t>(value_index) >= plan.values.size()) {
    return "%" + std::to_string(value_index) + " ?";
  }
  const Value& v = plan.values[static_cast<size_t>(value_index)];
  std::string s = "%" + std::to_string(value_index);
  switch (v.kind) {
    case ValueKind::kTensor: {
      switch (v.tensor.data_kind) {
        case TensorDataKind::kConstant: s += " const"; break;
        case TensorDataKind::kExternalConstant:
        case TensorDataKind::kExternalMutable: s += " ext"; break;
        default: break;
      }
      return s + " " + shape_text(v.tensor.dtype, v.tensor.sizes);
    }
    case ValueKind::kNone: return s + " =None";
    case ValueKind::kInt: return s + " =" + std::to_string(v.int_value);
    case ValueKind::kBool: return s + (v.bool_value ? " =true" : " =false");
    case ValueKind::kDouble: return s + " =" + double_text(v.double_value);
    case ValueKind::kString: return s + " =\"" + v.string_value + "\"";
    case ValueKind::kIntList: {
      std::string items;
      for (int64_t item : v.int_list) {
        const bool ok = item >= 0 && static_cast<size_t>(item) < plan.values.size() &&
                        plan.values[static_cast<size_t>(item)].kind == ValueKind::kInt;
        if (!items.empty()) items += ",";
        items += ok ? std::to_string(plan.values[static_cast<size_t>(item)].int_value) : "?";
      }
      return s + " =[" + items + "]";
    }
    case ValueKind::kDoubleList: {
      std::string items;
      for (double d : v.double_list) items += (items.empty() ? "" : ",") + double_text(d);
      return s + " =[" + items + "]";
    }
    case ValueKind::kBoolList: {
      std::string items;
      for (uint8_t b : v.bool_list) items += std::string(items.empty() ? "" : ",") + (b ? "true" : "false");
      return s + " =[" + items + "]";
    }
    case ValueKind::kTensorList:
    case ValueKind::kOptionalTensorList: {
      std::string items;
      for (int32_t t : v.tensor_list) {
        if (!items.empty()) items += ",";
        items += t < 0 ? "None" : "%" + std::to_string(t);
      }
      return s + " [" + items + "]";
    }
  }
  return s;
}

std::string location_text(const TensorInfo& t) {
  std::string arena;
  if (t.allocation) {
    arena = "arena " + std::to_string(t.allocation->memory_id) + " @ " + std::to_string(t.allocation->offset);
  }
  switch (t.data_kind) {
    case TensorDataKind::kConstant:
      return "constant #" + std::to_string(t.data_buffer_idx) + " @ file " + hex(t.data.offset);
    case TensorDataKind::kExternalConstant: return "external '" + t.fqn + "'";
    case TensorDataKind::kExternalMutable: return arena + ", init from external '" + t.fqn + "'";
    case TensorDataKind::kPlannedWithInit: return arena + ", init from file " + hex(t.data.offset);
    case TensorDataKind::kPlanned: return arena;
    case TensorDataKind::kRuntimeSupplied: return "unplanned (set at run time)";
  }
  return "?";
}

std::string instruction_text(const ExecutionPlan& plan, const Instruction& in) {
  switch (in.kind) {
    case InstructionKind::kKernelCall: {
      const std::string op = plan.operators[static_cast<size_t>(in.op_index)].qualified_name();
      const KernelArgs split = split_kernel_args(plan, in);
      const std::string outputs = joined_arguments(plan, split.outputs);
      return op + "(" + joined_arguments(plan, split.inputs) + ") -> " + (outputs.empty() ? "-" : outputs);
    }
    case InstructionKind::kDelegateCall:
      return "delegate #" + std::to_string(in.delegate_index) + " " +
             plan.delegates[static_cast<size_t>(in.delegate_index)].id + "(" + joined_arguments(plan, in.args) + ")";
    case InstructionKind::kMoveCall:
      return "move " + argument_text(plan, in.move_from) + " -> %" + std::to_string(in.move_to);
    case InstructionKind::kJumpFalse:
      return "jump to " + std::to_string(in.destination) + " if not " + argument_text(plan, in.cond_value);
    case InstructionKind::kFree: return "free " + argument_text(plan, in.free_value);
  }
  return "?";
}

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
      row.text = argument_text(plan, idx);
      const Value& v = plan.values[static_cast<size_t>(idx)];
      if (v.kind == ValueKind::kTensor) row.location = location_text(v.tensor);
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
      row.kind = kind_word(in.kind);
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
      row.text = instruction_text(plan, in);
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
      row.location = location_text(t);
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
