#include "render/program_text.h"

#include <cstdio>

#include "render/format.h"

namespace etscope::cli {
namespace {

void print_io(std::ostream& out, const char* title, const std::vector<inspect::IoDescription>& rows) {
  out << "  " << title << rows.size() << "\n";
  for (size_t i = 0; i < rows.size(); ++i) {
    out << "    " << i << ": " << rows[i].text;
    if (!rows[i].location.empty()) out << "  " << rows[i].location;
    out << "\n";
  }
}

}  // namespace

void print_program_header(std::ostream& out, const Program& p, bool list_named_data) {
  const inspect::ProgramDescription d = inspect::ProgramDescription::describe(p);
  out << d.file << ": ExecuTorch program " << p.file_identifier << ", " << p.file_size << " bytes ("
      << bytes_text(p.file_size) << ")\n";
  out << "  header        " << d.header << "\n";
  out << "  flatbuffer    " << p.flatbuffer_size << " B, schema version " << p.version << "\n";
  out << "  segments      " << d.segments.size() << "\n";
  char buf[256];
  size_t folded = 0;
  uint64_t folded_bytes = 0;
  for (size_t i = 0; i < d.segments.size(); ++i) {
    const inspect::ProgramDescription::Segment& s = d.segments[i];
    // A named-data segment's key is listed under "named data": never twice.
    if (s.named_data_only && !list_named_data) {
      ++folded;
      folded_bytes += s.size;
      continue;
    }
    std::snprintf(buf, sizeof(buf), "    #%-3zu @ +%-10llu %12s  %s\n", i, static_cast<unsigned long long>(s.offset),
                  bytes_text(s.size).c_str(), s.named_data_only ? "named data" : s.role.c_str());
    out << buf;
  }
  if (folded > 0) out << "    " << count_text(folded, "segment") << " of named data, " << bytes_text(folded_bytes) << "\n";
  out << "  constants     " << d.constants << "\n";
  if (!d.mutable_data.empty()) out << "  mutable data  " << d.mutable_data << "\n";
  // Listing every key below, the summary line names none of them (each key appears once).
  out << "  named data    " << (list_named_data ? d.named_data_totals : d.named_data_summary);
  if (!list_named_data && d.named_data.size() > 3) out << " (--named-data lists them)";
  out << "\n";
  if (list_named_data) {
    for (const auto& nd : d.named_data) {
      out << "    '" << nd.key << "'  segment " << nd.segment << ", " << bytes_text(nd.size) << "\n";
    }
  }
  out << "  methods       " << d.methods.size() << ":";
  for (const std::string& m : d.methods) out << " " << m;
  out << "\n";
}

void print_plan_summary(std::ostream& out, const inspect::PlanDescription& plan) {
  out << "\nmethod " << plan.name << "\n";
  out << "  values        " << plan.values_summary << "\n";
  print_io(out, "inputs        ", plan.inputs);
  print_io(out, "outputs       ", plan.outputs);
  out << "  instructions  " << plan.instructions_summary << "\n";
  out << "  operators     " << plan.operators.size() << "\n";
  for (const inspect::OperatorCalls& op : plan.operators) {
    char buf[32];
    std::snprintf(buf, sizeof(buf), "    %5zu x  ", op.calls);
    out << buf << op.name << "\n";
  }
  out << "  delegates     " << plan.delegates.size() << "\n";
  for (const inspect::DelegateDescription& d : plan.delegates) out << "    " << d.text << "\n";
  out << "  arenas        " << plan.arenas.size();
  if (!plan.arenas.empty()) out << ", " << bytes_text(plan.planned_bytes) << " planned";
  out << "\n";
  for (const inspect::ArenaDescription& a : plan.arenas) out << "    #" << a.memory_id << "  " << a.text << "\n";
}

void print_instructions(std::ostream& out, const inspect::PlanDescription& plan) {
  if (plan.instructions.empty()) return;
  out << "\ninstructions of " << plan.name << "\n";
  for (const inspect::InstructionDescription& in : plan.instructions) {
    if (plan.chain_count > 1 && in.index == 0) out << " chain " << in.chain << "\n";
    char idx[32];
    std::snprintf(idx, sizeof(idx), "%5d  ", in.index);
    out << idx << in.text << "\n";
    if (!in.source.empty()) out << "         at " << in.source << "\n";
  }
}

void print_values(std::ostream& out, const inspect::PlanDescription& plan) {
  out << "\nvalues of " << plan.name << "\n";
  for (const inspect::ValueDescription& v : plan.values) {
    char head[48];
    std::snprintf(head, sizeof(head), "%6d  %-10s ", v.index, v.kind.c_str());
    out << head << v.type;
    if (v.is_tensor) {
      out << "  " << v.bytes << "  " << v.location;
      for (const std::string& note : v.notes) out << "  " << note;
    }
    out << "\n";
  }
}

void print_plan_summary(std::ostream& out, const ExecutionPlan& plan) {
  print_plan_summary(out, inspect::PlanDescription::describe(plan));
}
void print_instructions(std::ostream& out, const ExecutionPlan& plan) {
  print_instructions(out, inspect::PlanDescription::describe(plan));
}
void print_values(std::ostream& out, const ExecutionPlan& plan) {
  print_values(out, inspect::PlanDescription::describe(plan));
}

}  // namespace etscope::cli

namespace etscope::cli {

void print_tensor_stats(std::ostream& out, const std::string& title, ScalarType dtype,
                        const std::vector<int32_t>& sizes, const TensorStats& s) {
  out << title << "  " << shape_text(dtype, sizes) << "  " << s.count << " elements\n";
  // Elements of narrow float types print at their own precision, not as long doubles.
  const bool narrow = dtype == ScalarType::kFloat || dtype == ScalarType::kHalf || dtype == ScalarType::kBFloat16;
  auto num = [&](double v) { return narrow ? float_text(static_cast<float>(v)) : number_text(v); };
  out << "  min " << num(s.min) << "  max " << num(s.max) << "  mean " << number_text(s.mean) << "  std "
      << number_text(s.std) << "\n";
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
