// etscope pte: what is inside a .pte program.
#include <iostream>

#include "commands/command.h"
#include "etscope/core/machine.h"
#include "etscope/formats/ptd_reader.h"
#include "etscope/formats/tensor_stats.h"
#include "etscope/inspect/memory_plan.h"
#include "etscope/inspect/program_description.h"
#include "render/format.h"
#include "render/program_json.h"
#include "render/program_text.h"

namespace etscope::cli {
namespace {

class PteCommand final : public Command {
 public:
  CLI::App* add_to(CLI::App& app) override {
    CLI::App* sub = app.add_subcommand("pte", "Show what is inside an ExecuTorch program (.pte, or the one in a .bpte)");
    sub->add_option("file", file_, "Program file (.pte), or a bundled program (.bpte)")->required();
    report_format_.add_to(sub, "see docs/json.md");
    sub->add_option("--method,--plan", plan_, "Show only this method (execution plan); --plan is the old name");
    sub->add_flag("--values", values_, "List every value: kind, dtype, shape, where its data lives");
    sub->add_flag("--instructions", instructions_, "List every instruction with its arguments");
    sub->add_option("--tensor", tensor_, "Statistics and first values of constant or external tensor INDEX")
        ->check(CLI::NonNegativeNumber);
    sub->add_option("--ptd", ptd_, "Tensor-data file (.ptd) holding the program's external tensors");
    return sub;
  }

  Result<int> run() override {
    json_ = report_format_.json();
    ETSCOPE_ASSIGN_OR_RETURN(Program program, inspect::load_program(file_));
    const ExecutionPlan* only = nullptr;
    if (!plan_.empty()) {
      ETSCOPE_ASSIGN_OR_RETURN(only, find_plan(program, plan_));
    }
    if (tensor_ >= 0) return show_tensor(program, only ? *only : first_plan(program));
    print_problems(program);
    for (const std::string& w : inspect::declared_memory_warnings(program, machine_memory_bytes())) {
      std::cerr << "etscope: " << file_ << ": warning: " << w << "\n";
    }
    if (json_) {
      Json j = program_json(program, only);
      std::cout << dump_json(j) << "\n";
      return 0;
    }
    print_program_header(std::cout, program);
    for (const ExecutionPlan& plan : program.plans) {
      if (only != nullptr && only != &plan) continue;
      const inspect::PlanDescription d = inspect::PlanDescription::describe(plan);
      print_plan_summary(std::cout, d);
      if (instructions_) print_instructions(std::cout, d);
      if (values_) print_values(std::cout, d);
    }
    return 0;
  }

 private:
  static Result<const ExecutionPlan*> find_plan(const Program& program, const std::string& name) {
    if (const ExecutionPlan* p = program.find_plan(name)) return p;
    std::string names;
    for (const auto& plan : program.plans) names += (names.empty() ? "" : ", ") + plan.name;
    return Error(ErrorCode::kNotFound,
                 program.name() + ": no method named '" + name + "' (methods: " + names + ")");
  }

  const ExecutionPlan& first_plan(const Program& program) {
    static const ExecutionPlan kEmpty;
    return program.plans.empty() ? kEmpty : program.plans.front();
  }

  Result<int> show_tensor(const Program& program, const ExecutionPlan& plan) {
    const std::string where = program.name() + ": method '" + plan.name + "'";
    if (static_cast<size_t>(tensor_) >= plan.values.size()) {
      return make_error(ErrorCode::kInvalidArgument, "%s: value %lld is out of range (the method has %zu values)",
                        where.c_str(), tensor_, plan.values.size());
    }
    const Value& v = plan.values[static_cast<size_t>(tensor_)];
    if (v.kind != ValueKind::kTensor) {
      return make_error(ErrorCode::kInvalidArgument, "%s: value %lld is a %s, not a tensor", where.c_str(),
                        tensor_, to_string(v.kind));
    }
    const TensorInfo& t = v.tensor;
    std::span<const uint8_t> bytes;
    std::string source;
    TensorDataFile ptd;
    if (t.data_kind == TensorDataKind::kConstant || t.data_kind == TensorDataKind::kPlannedWithInit) {
      bytes = program.bytes(t.data);
      source = t.data_kind == TensorDataKind::kConstant ? "constant" : "initial value";
    } else if (t.data_kind == TensorDataKind::kExternalConstant || t.data_kind == TensorDataKind::kExternalMutable) {
      if (ptd_.empty()) {
        return make_error(ErrorCode::kInvalidArgument,
                          "%s: value %lld is external ('%s'); pass the .ptd that holds it with --ptd FILE",
                          where.c_str(), tensor_, t.fqn.c_str());
      }
      ETSCOPE_ASSIGN_OR_RETURN(ptd, PtdReader::open(ptd_));
      const TensorDataEntry* e = ptd.find(t.fqn);
      if (e == nullptr) {
        return Error(ErrorCode::kNotFound, ptd_ + ": no entry '" + t.fqn + "' (needed by value " +
                                               std::to_string(tensor_) + " of " + program.name() + ")");
      }
      if (e->data.size < t.nbytes) {
        return make_error(ErrorCode::kCorrupt, "%s: entry '%s' holds %llu bytes, the tensor needs %llu",
                          ptd_.c_str(), t.fqn.c_str(), static_cast<unsigned long long>(e->data.size),
                          static_cast<unsigned long long>(t.nbytes));
      }
      bytes = ptd.bytes(FileRange{e->data.offset, t.nbytes});
      source = "external '" + t.fqn + "' from " + ptd_;
    } else {
      return make_error(ErrorCode::kInvalidArgument,
                        "%s: value %lld is %s (%s): its data exists only at run time", where.c_str(), tensor_,
                        to_string(t.data_kind), inspect::location_text(t).c_str());
    }
    auto stats = compute_tensor_stats(t.dtype, bytes, t.numel);
    if (!stats) {
      return make_error(ErrorCode::kNotSupported, "%s: value %lld has dtype %s, which etscope cannot summarise",
                        where.c_str(), tensor_, scalar_type_name(t.dtype).c_str());
    }
    if (json_) {
      Json j{{"file", program.name()}, {"plan", plan.name}, {"value", tensor_}, {"source", source},
             {"dtype", scalar_type_name(t.dtype)}, {"sizes", t.sizes}, {"stats", tensor_stats_json(*stats)}};
      std::cout << dump_json(j) << "\n";
    } else {
      print_tensor_stats(std::cout, "value " + std::to_string(tensor_) + " (" + source + ")", t.dtype, t.sizes,
                         *stats);
    }
    return 0;
  }

  std::string file_;
  std::string plan_;
  std::string ptd_;
  bool json_ = false;
  ReportFormat report_format_;
  bool values_ = false;
  bool instructions_ = false;
  long long tensor_ = -1;
};

}  // namespace

std::unique_ptr<Command> make_pte_command() { return std::make_unique<PteCommand>(); }

}  // namespace etscope::cli
