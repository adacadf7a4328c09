// etscope memory: memory arenas, lifetimes, peaks and conflicts of a .pte, from the file alone.
#include <cstdio>
#include <iostream>
#include <set>

#include "commands/command.h"
#include "etscope/core/machine.h"
#include "etscope/formats/pte_reader.h"
#include "etscope/inspect/debug_buffer_planner.h"
#include "etscope/inspect/memory_chrome_trace.h"
#include "etscope/inspect/memory_plan.h"
#include "etscope/inspect/program_description.h"
#include "etscope/inspect/memory_svg.h"
#include "render/memory_json.h"
#include "render/memory_text.h"

namespace etscope::cli {
namespace {

bool has_planned_memory(const ExecutionPlan& plan) {
  if (plan.arena_count() > 0) return true;
  for (const Value& v : plan.values) {
    if (v.kind == ValueKind::kTensor && v.tensor.allocation) return true;
  }
  return false;
}


class MemoryCommand final : public Command {
 public:
  CLI::App* add_to(CLI::App& app) override {
    CLI::App* sub = app.add_subcommand(
        "memory", "Memory arenas of a program: lifetimes, peaks, conflicts, debug-buffer size (see docs/memory.md)");
    sub->add_option("file", file_, "Program file (.pte), or a bundled program (.bpte)")->required();
    sub->add_option("--method,--plan", plan_, "Only this method (default: every method with planned memory); --plan is the old name");
    report_format_.add_to(sub, "see docs/memory.md");
    sub->add_option("--top", top_, "How many of the largest tensors to list (default 10)")
        ->check(CLI::NonNegativeNumber);
    sub->add_option("--svg", svg_, "Write an SVG arena picture (x = byte offset, y = instruction step); '-': standard output");
    sub->add_option("--chrome-trace", trace_,
                    "Write a Chrome trace in the form of ExecuTorch's activation memory profiler; '-': standard output");
    return sub;
  }

  Result<int> run() override {
    json_ = report_format_.json();
    // An output that is the program, or both outputs in one file, would destroy what is read.
    auto usage = [](const std::string& message) {
      std::fprintf(stderr, "etscope memory: %s\n", message.c_str());
      return 2;
    };
    if (svg_ == "-" && trace_ == "-") return usage("--svg and --chrome-trace cannot both go to standard output");
    // An output on standard output replaces the report there.
    const bool to_stdout = svg_ == "-" || trace_ == "-";
    for (const std::string* out : {&svg_, &trace_}) {
      if (out->empty() || *out == "-") continue;
      if (Status s = check_not_an_input(*out, {file_}); !s.ok()) return usage(s.error().message());
    }
    if (!svg_.empty() && svg_ == trace_) return usage("--svg and --chrome-trace name the same file");
    ETSCOPE_ASSIGN_OR_RETURN(Program program, inspect::load_program(file_));  // a .pte, or the one in a .bpte
    std::vector<const ExecutionPlan*> plans;
    if (!plan_.empty()) {
      const ExecutionPlan* p = program.find_plan(plan_);
      if (p == nullptr) {
        std::string names;
        for (const auto& plan : program.plans) names += (names.empty() ? "" : ", ") + plan.name;
        return Error(ErrorCode::kNotFound,
                     program.name() + ": no method named '" + plan_ + "' (methods: " + names + ")");
      }
      plans.push_back(p);
    } else {
      for (const ExecutionPlan& p : program.plans) {
        if (has_planned_memory(p)) plans.push_back(&p);
      }
    }

    std::vector<inspect::MemoryPlan> models;
    std::vector<inspect::DebugBufferPlan> debug;
    for (const ExecutionPlan* p : plans) {
      ETSCOPE_ASSIGN_OR_RETURN(inspect::MemoryPlan m, inspect::MemoryPlan::build(program, *p));
      models.push_back(std::move(m));
      debug.push_back(inspect::DebugBufferPlanner::plan(*p));
    }

    // Errors first, on stderr, so they are seen even when stdout is JSON or piped away.
    int exit_code = 0;
    std::set<std::string> reported(program.problems.begin(), program.problems.end());
    auto error_line = [&](const std::string& what) {
      std::cout.flush();
      std::cerr << "etscope: " << program.name() << ": error: " << what << "\n";
      exit_code = 1;
    };
    for (const std::string& p : program.problems) error_line(p);
    for (const std::string& w : inspect::declared_memory_warnings(program, machine_memory_bytes())) {
      std::cerr << "etscope: " << program.name() << ": warning: " << w << "\n";
    }
    for (const auto& m : models) {
      for (const std::string& p : m.problems()) {
        if (reported.insert(p).second) error_line(p);
      }
      for (const auto& c : m.conflicts()) {
        std::cerr << "CONFLICT: " << program.name() << ": " << c.message << "\n";
        exit_code = 1;
      }
    }

    if (to_stdout) {
      // The SVG or trace below is all stdout gets.
    } else if (json_) {
      Json out{{"file", program.name()}, {"plans", Json::array()}, {"problems", program.problems}};
      for (size_t i = 0; i < models.size(); ++i) {
        Json plan = memory_plan_json(models[i], debug[i], top_);
        plan["state"] = state_json(inspect::state_summary(models[i], program));
        out["plans"].push_back(std::move(plan));
      }
      std::cout << dump_json(out) << "\n";
    } else {
      std::cout << program.name() << ": " << program.plans.size() << " method"
                << (program.plans.size() == 1 ? "" : "s") << ", " << models.size() << " with planned memory\n";
      for (size_t i = 0; i < models.size(); ++i) {
        std::cout << "\n";
        print_memory_summary(std::cout, models[i], debug[i], top_);
        print_state_summary(std::cout, inspect::state_summary(models[i], program));
        for (size_t k = 0; k < models[i].arenas().size(); ++k) print_arena_map(std::cout, models[i], k);
      }
    }

    if (!svg_.empty() || !trace_.empty()) {
      if (models.empty()) {
        return Error(ErrorCode::kInvalidArgument, program.name() + ": no method has planned memory to draw");
      }
      const inspect::MemoryPlan& m = models.front();
      if (!svg_.empty()) {
        inspect::MemorySvgOptions options;
        options.title = program.name();
        if (svg_ == "-") {
          std::cout << inspect::memory_svg(m, options);
        } else {
          ETSCOPE_TRY(write_file_text(svg_, inspect::memory_svg(m, options)));
          if (!json_ && !to_stdout) std::cout << "\nwrote " << svg_ << " (method " << m.plan_name() << ")\n";
        }
      }
      if (!trace_.empty()) {
        if (trace_ == "-") {
          std::cout << inspect::memory_chrome_trace(m);
        } else {
          ETSCOPE_TRY(write_file_text(trace_, inspect::memory_chrome_trace(m)));
          if (!json_ && !to_stdout) {
            std::cout << (svg_.empty() ? "\n" : "") << "wrote " << trace_ << " (method " << m.plan_name() << ", "
                      << inspect::memory_chrome_trace_event_count(m) << " events)\n";
          }
        }
      }
    }
    return exit_code;
  }

 private:
  std::string file_;
  std::string plan_;
  std::string svg_;
  std::string trace_;
  bool json_ = false;
  ReportFormat report_format_;
  size_t top_ = 10;
};

}  // namespace

std::unique_ptr<Command> make_memory_command() { return std::make_unique<MemoryCommand>(); }

}  // namespace etscope::cli
