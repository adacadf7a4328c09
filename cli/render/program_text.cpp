#include "render/program_text.h"

#include <cstdio>
#include <map>

#include "etscope/formats/op_signatures.h"
#include "render/format.h"

namespace etscope::cli {
namespace {

std::string value_list(const ExecutionPlan& plan, const std::vector<int32_t>& indices) {
  std::string s;
  for (size_t i = 0; i < indices.size(); ++i) {
    if (i) s += ", ";
    s += argument_string(plan, indices[i]);
  }
  return s.empty() ? "-" : s;
}

}  // namespace

void print_program_header(std::ostream& out, const Program& p) {
  out << p.name() << ": ExecuTorch program " << p.file_identifier << ", " << p.file_size << " bytes ("
      << human_bytes(p.file_size) << ")\n";
  char buf[256];
  if (p.header) {
    const ExtendedHeader& h = *p.header;
    std::snprintf(buf, sizeof(buf),
                  "  header        eh00, %u-byte: program %llu B, segments at %llu, segment data %s\n", h.length,
                  static_cast<unsigned long long>(h.program_size),
                  static_cast<unsigned long long>(h.segment_base_offset),
                  h.length >= 32 ? (std::to_string(h.segment_data_size) + " B").c_str() : "not recorded");
    out << buf;
  } else {
    std::snprintf(buf, sizeof(buf), "  header        none (flat FlatBuffer), root table at 0x%x\n", p.root_offset);
    out << buf;
  }
  out << "  flatbuffer    " << p.flatbuffer_size << " B, schema version " << p.version << "\n";
  auto roles = segment_roles(p);
  out << "  segments      " << p.segments.size() << "\n";
  for (size_t i = 0; i < p.segments.size(); ++i) {
    std::snprintf(buf, sizeof(buf), "    #%-3zu @ +%-10llu %12s  %s\n", i,
                  static_cast<unsigned long long>(p.segments_relative[i].offset),
                  human_bytes(p.segments[i].size).c_str(), roles[i].c_str());
    out << buf;
  }
  size_t constant_count = 0;
  if (p.constant_storage == ConstantStorage::kSegment) constant_count = p.constant_offsets.size() - 1;
  if (p.constant_storage == ConstantStorage::kInlineBuffer) constant_count = p.constant_buffers.size() - 1;
  if (p.constant_storage == ConstantStorage::kNone) {
    out << "  constants     none\n";
  } else {
    out << "  constants     " << constant_count << " in " << to_string(p.constant_storage) << ", "
        << human_bytes(p.constant_bytes)
        << (p.constant_storage == ConstantStorage::kInlineBuffer ? " (legacy inline layout)" : "") << "\n";
  }
  if (!p.mutable_data_segments.empty()) {
    out << "  mutable data  " << p.mutable_data_segments[0].offsets.size() - 1 << " initial values in segment "
        << p.mutable_data_segments[0].segment_index << "\n";
  }
  if (p.named_data.empty()) {
    out << "  named data    none\n";
  } else {
    out << "  named data    " << p.named_data.size() << "\n";
    for (const auto& nd : p.named_data) {
      out << "    '" << nd.key << "'  segment " << nd.segment_index << ", "
          << human_bytes(p.segments[nd.segment_index].size) << "\n";
    }
  }
  out << "  methods       " << p.plans.size() << ":";
  for (const auto& plan : p.plans) out << " " << plan.name;
  out << "\n";
}

void print_plan_summary(std::ostream& out, const ExecutionPlan& plan) {
  out << "\nmethod " << plan.name << "\n";
  std::map<std::string, size_t> kinds;
  for (const Value& v : plan.values) ++kinds[to_string(v.kind)];
  out << "  values        " << plan.values.size();
  if (!kinds.empty()) {
    out << " (";
    bool first = true;
    for (const auto& [k, n] : kinds) {
      out << (first ? "" : ", ") << n << " " << k;
      first = false;
    }
    out << ")";
  }
  out << "\n  inputs        " << plan.inputs.size() << "\n";
  for (size_t i = 0; i < plan.inputs.size(); ++i) {
    const Value& v = plan.values[static_cast<size_t>(plan.inputs[i])];
    out << "    " << i << ": " << argument_string(plan, plan.inputs[i]);
    if (v.kind == ValueKind::kTensor) out << "  " << tensor_location(v.tensor);
    out << "\n";
  }
  out << "  outputs       " << plan.outputs.size() << "\n";
  for (size_t i = 0; i < plan.outputs.size(); ++i) {
    const Value& v = plan.values[static_cast<size_t>(plan.outputs[i])];
    out << "    " << i << ": " << argument_string(plan, plan.outputs[i]);
    if (v.kind == ValueKind::kTensor) out << "  " << tensor_location(v.tensor);
    out << "\n";
  }
  out << "  instructions  " << plan.instruction_count();
  if (plan.chains.size() != 1) out << " in " << plan.chains.size() << " chains";
  out << "\n  operators     " << plan.operators.size() << "\n";
  for (const auto& [name, count] : operator_call_counts(plan)) {
    char buf[32];
    std::snprintf(buf, sizeof(buf), "    %5zu x  ", count);
    out << buf << name << "\n";
  }
  out << "  delegates     " << plan.delegates.size() << "\n";
  for (size_t i = 0; i < plan.delegates.size(); ++i) {
    const Delegate& d = plan.delegates[i];
    out << "    #" << i << " " << d.id << ": " << human_bytes(d.data.size) << " "
        << (d.inline_data ? "inline" : "in segment " + std::to_string(d.index)) << ", compile specs:";
    if (d.compile_specs.empty()) out << " none";
    for (const auto& cs : d.compile_specs) out << " " << cs.key << " (" << cs.value.size() << " B)";
    out << "\n";
  }
  uint64_t total = 0;
  for (size_t k = 1; k < plan.non_const_buffer_sizes.size(); ++k) {
    total += static_cast<uint64_t>(plan.non_const_buffer_sizes[k]);
  }
  out << "  arenas        " << plan.arena_count();
  if (plan.arena_count() > 0) out << ", " << human_bytes(total) << " planned";
  out << "\n";
  for (size_t k = 1; k < plan.non_const_buffer_sizes.size(); ++k) {
    const uint64_t size = static_cast<uint64_t>(plan.non_const_buffer_sizes[k]);
    out << "    #" << k << "  " << size << " B";
    if (size >= 1024) out << " (" << human_bytes(size) << ")";
    out << "\n";
  }
}

void print_instructions(std::ostream& out, const ExecutionPlan& plan) {
  if (plan.instruction_count() == 0) return;
  out << "\ninstructions of " << plan.name << "\n";
  for (size_t c = 0; c < plan.chains.size(); ++c) {
    const Chain& chain = plan.chains[c];
    if (plan.chains.size() > 1) out << " chain " << c << "\n";
    for (size_t i = 0; i < chain.instructions.size(); ++i) {
      const Instruction& in = chain.instructions[i];
      char idx[32];
      std::snprintf(idx, sizeof(idx), "%5zu  ", i);
      out << idx;
      switch (in.kind) {
        case InstructionKind::kKernelCall: {
          const std::string op = plan.operators[static_cast<size_t>(in.op_index)].qualified_name();
          KernelArgs split = split_kernel_args(plan, in);
          out << op << "(" << (split.inputs.empty() ? "" : value_list(plan, split.inputs)) << ") -> "
              << value_list(plan, split.outputs);
          break;
        }
        case InstructionKind::kDelegateCall:
          out << "delegate #" << in.delegate_index << " "
              << plan.delegates[static_cast<size_t>(in.delegate_index)].id << "(" << value_list(plan, in.args) << ")";
          break;
        case InstructionKind::kMoveCall:
          out << "move " << argument_string(plan, in.move_from) << " -> %" << in.move_to;
          break;
        case InstructionKind::kJumpFalse:
          out << "jump to " << in.destination << " if not " << argument_string(plan, in.cond_value);
          break;
        case InstructionKind::kFree:
          out << "free " << argument_string(plan, in.free_value);
          break;
      }
      out << "\n";
      if (i < chain.stacktrace.size() && !chain.stacktrace[i].empty()) {
        const Frame& f = chain.stacktrace[i].back();
        out << "         at " << f.filename << ":" << f.lineno << " in " << f.name << "\n";
      }
    }
  }
}

void print_values(std::ostream& out, const ExecutionPlan& plan) {
  out << "\nvalues of " << plan.name << "\n";
  for (size_t i = 0; i < plan.values.size(); ++i) {
    const Value& v = plan.values[i];
    char head[48];
    std::snprintf(head, sizeof(head), "%6zu  %-10s ", i, to_string(v.kind));
    out << head;
    if (v.kind == ValueKind::kTensor) {
      const TensorInfo& t = v.tensor;
      out << shape_string(t.dtype, t.sizes) << "  " << t.nbytes << " B  " << tensor_location(t);
      if (!t.fqn.empty() && !t.external) out << "  fqn '" << t.fqn << "'";
      if (t.requires_grad) out << "  requires_grad";
      if (t.dynamism != ShapeDynamism::kStatic) {
        out << (t.dynamism == ShapeDynamism::kDynamicBound ? "  dynamic (bounded)" : "  dynamic (unbounded)");
      }
    } else {
      std::string s = argument_string(plan, static_cast<int32_t>(i));
      size_t space = s.find(' ');
      out << (space == std::string::npos ? "" : s.substr(space + 1));
    }
    out << "\n";
  }
}

}  // namespace etscope::cli

namespace etscope::cli {

void print_tensor_stats(std::ostream& out, const std::string& title, ScalarType dtype,
                        const std::vector<int32_t>& sizes, const TensorStats& s) {
  out << title << "  " << shape_string(dtype, sizes) << "  " << s.count << " elements\n";
  // Elements of narrow float types print at their own precision, not as long doubles.
  const bool narrow = dtype == ScalarType::kFloat || dtype == ScalarType::kHalf || dtype == ScalarType::kBFloat16;
  auto num = [&](double v) { return narrow ? float_string(static_cast<float>(v)) : number_string(v); };
  out << "  min " << num(s.min) << "  max " << num(s.max) << "  mean " << number_string(s.mean) << "  std "
      << number_string(s.std) << "\n";
  out << "  NaN " << s.nan_count << "  Inf " << s.inf_count << "\n";
  out << "  first:";
  for (double v : s.first_values) out << " " << num(v);
  if (s.count > s.first_values.size()) out << " ...";
  out << "\n";
}

void print_problems(const Program& program) {
  for (const std::string& p : program.problems) {
    std::fprintf(stderr, "etscope: %s: warning: %s\n", program.name().c_str(), p.c_str());
  }
}

}  // namespace etscope::cli
