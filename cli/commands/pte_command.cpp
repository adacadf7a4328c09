// etscope pte: what is inside a .pte program.
#include <algorithm>
#include <iostream>

#include "commands/command.h"
#include "etscope/formats/bool_constants.h"
#include "etscope/core/machine.h"
#include "etscope/formats/ptd_reader.h"
#include "etscope/formats/training.h"
#include "etscope/formats/xnnpack_payload.h"
#include "etscope/runtime/kernel.h"
#include "etscope/formats/tensor_stats.h"
#include "etscope/inspect/memory_plan.h"
#include "etscope/inspect/program_description.h"
#include "render/delegate_render.h"
#include "render/format.h"
#include "render/json_output.h"
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
    sub->add_flag("--named-data", named_data_, "List every named-data key with its segment and size "
                                               "(by default: their count, bytes and a few keys)");
    sub->add_option("--tensor", tensor_, "Statistics and first values of constant or external tensor INDEX")
        ->check(CLI::NonNegativeNumber);
    sub->add_option("--ptd", ptd_, "Tensor-data file (.ptd) holding the program's external tensors");
    sub->add_flag("--delegates", delegates_, "List each delegate; for XNNPACK ones every node of the graph in the payload, "
                                             "with inputs, outputs, shapes, element types, quantization and attributes");
    sub->add_flag("--kernels", kernels_, "Before running: which of each method's operators etscope has kernels for, "
                                         "which it lacks, and the delegates (exit 1 when anything is missing)");
    return sub;
  }

  Result<int> run() override {
    json_ = report_format_.json();
    ETSCOPE_ASSIGN_OR_RETURN(Program program, inspect::load_program(file_));
    const ExecutionPlan* only = nullptr;
    if (!plan_.empty()) {
      ETSCOPE_ASSIGN_OR_RETURN(only, find_plan(program, plan_));
    }
    for (const NonBinaryBool& b : non_binary_bool_tensors(program)) {
      std::cerr << "etscope: " << file_ << ": warning: " << b.message << "\n";
    }
    if (tensor_ >= 0) return show_tensor(program, only ? *only : first_plan(program));
    if (kernels_) return show_kernels(program, only);
    if (delegates_) return show_delegates(program, only);
    print_problems(program);
    for (const std::string& w : inspect::declared_memory_warnings(program, machine_memory_bytes())) {
      std::cerr << "etscope: " << file_ << ": warning: " << w << "\n";
    }
    if (json_) {
      Json j = program_json(program, only);
      std::cout << dump_json(j) << "\n";
      return 0;
    }
    print_program_header(std::cout, program, named_data_);
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

  // Per method: each operator with its call count and whether the runtime has a kernel for it,
  // then the delegates (etscope's runtime executes none yet). The same lookup Method::load makes.
  Result<int> show_kernels(const Program& program, const ExecutionPlan* only) {
    const runtime::KernelRegistry& registry = runtime::KernelRegistry::portable();
    Json plans = Json::array();
    bool anything_missing = false;
    for (const ExecutionPlan& plan : program.plans) {
      if ((only != nullptr && only != &plan) || is_training_marker(plan.name)) continue;
      std::vector<size_t> calls(plan.operators.size(), 0);
      std::vector<size_t> delegate_calls(plan.delegates.size(), 0);
      for (const auto& chain : plan.chains) {
        for (const Instruction& in : chain.instructions) {
          if (in.kind == InstructionKind::kKernelCall && in.op_index >= 0 && static_cast<size_t>(in.op_index) < calls.size()) {
            ++calls[static_cast<size_t>(in.op_index)];
          } else if (in.kind == InstructionKind::kDelegateCall && in.delegate_index >= 0 &&
                     static_cast<size_t>(in.delegate_index) < delegate_calls.size()) {
            ++delegate_calls[static_cast<size_t>(in.delegate_index)];
          }
        }
      }
      Json ops = Json::array();
      std::vector<std::string> missing;
      for (size_t i = 0; i < plan.operators.size(); ++i) {
        const std::string name = plan.operators[i].qualified_name();
        const bool have = registry.find(name) != nullptr;
        if (!have && std::find(missing.begin(), missing.end(), name) == missing.end()) missing.push_back(name);
        ops.push_back(Json{{"name", name}, {"calls", calls[i]}, {"kernel", have}});
      }
      Json delegates = Json::array();
      for (size_t i = 0; i < plan.delegates.size(); ++i) {
        delegates.push_back(Json{{"backend", plan.delegates[i].id}, {"calls", delegate_calls[i]}});
      }
      const bool foreign_delegate = std::any_of(plan.delegates.begin(), plan.delegates.end(),
                                                [](const Delegate& d) { return d.id != xnn::kBackendId; });
      anything_missing = anything_missing || !missing.empty() || foreign_delegate;
      if (json_) {
        plans.push_back(Json{{"name", plan.name}, {"operators", std::move(ops)}, {"missing", missing}, {"delegates", std::move(delegates)}});
        continue;
      }
      std::cout << "method " << plan.name << ": " << count_text(plan.operators.size(), "operator") << ", "
                << (plan.operators.size() - missing.size()) << " with a kernel";
      if (!missing.empty()) std::cout << ", " << missing.size() << " missing";
      if (!plan.delegates.empty()) std::cout << ", " << count_text(plan.delegates.size(), "delegate");
      std::cout << "\n";
      for (const Json& op : ops) {
        std::cout << "  " << (op["kernel"].get<bool>() ? "yes      " : "MISSING  ") << op["name"].get<std::string>() << "  x"
                  << op["calls"].get<size_t>() << "\n";
      }
      // One line per backend: a program lowered in 24 pieces calls one kind of delegate 24 times.
      for (const inspect::DelegateCalls& d : inspect::delegate_call_counts(plan)) {
        const bool xnnpack = d.backend == xnn::kBackendId;
        std::cout << "  DELEGATE " << d.backend << "  x" << d.calls;
        if (d.delegates > 1) std::cout << " (" << count_text(d.delegates, "delegate") << ")";
        std::cout << (xnnpack ? "  (executed node by node; node kinds are checked when the method loads)"
                              : "  (etscope's runtime executes only XNNPACK delegates)")
                  << "\n";
      }
    }
    if (json_) std::cout << dump_json(Json{{"file", file_}, {"plans", std::move(plans)}}) << "\n";
    return anything_missing ? 1 : 0;
  }

  // Exit 1 when a delegate's payload does not read (the message says why).
  Result<int> show_delegates(const Program& program, const ExecutionPlan* only) {
    bool ok = true;
    Json plans = Json::array();
    for (const ExecutionPlan& plan : program.plans) {
      if (only != nullptr && only != &plan) continue;
      if (json_) {
        Json j = delegates_json(program, plan);
        for (const Json& d : j["delegates"]) ok = ok && !d.contains("error");
        plans.push_back(std::move(j));
      } else {
        ok = print_delegates(std::cout, program, plan) && ok;
      }
    }
    if (json_) std::cout << dump_json(Json{{"file", file_}, {"plans", std::move(plans)}}) << "\n";
    return ok ? 0 : 1;
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
  bool kernels_ = false;
  bool delegates_ = false;
  bool json_ = false;
  ReportFormat report_format_;
  bool values_ = false;
  bool instructions_ = false;
  bool named_data_ = false;
  long long tensor_ = -1;
};

}  // namespace

std::unique_ptr<Command> make_pte_command() { return std::make_unique<PteCommand>(); }

}  // namespace etscope::cli
