// etscope bpte: a bundled program's embedded program and its test cases.
#include <iostream>

#include "commands/command.h"
#include "etscope/formats/bpte_reader.h"
#include "render/format.h"
#include "render/json_output.h"
#include "render/program_text.h"

namespace etscope::cli {
namespace {

std::string describe(const BundledValue& v) {
  switch (v.kind) {
    case BundledValue::Kind::kTensor: return shape_text(v.dtype, v.sizes);
    case BundledValue::Kind::kInt: return "int " + std::to_string(v.int_value);
    case BundledValue::Kind::kBool: return v.bool_value ? "bool true" : "bool false";
    case BundledValue::Kind::kDouble: return "double " + number_text(v.double_value);
    case BundledValue::Kind::kNone: break;
  }
  return "None";
}

std::string describe_all(const std::vector<BundledValue>& values) {
  std::string s;
  for (size_t i = 0; i < values.size(); ++i) s += (i ? ", " : "") + describe(values[i]);
  return s.empty() ? "-" : s;
}

class BpteCommand final : public Command {
 public:
  CLI::App* add_to(CLI::App& app) override {
    CLI::App* sub = app.add_subcommand("bpte", "Show a bundled program (.bpte): its program and test cases");
    sub->add_option("file", file_, "Bundled program (.bpte)")->required();
    report_format_.add_to(sub, "see docs/json.md");
    sub->add_option("--extract-program", extract_, "Write the embedded program to this .pte file");
    return sub;
  }

  Result<int> run() override {
    json_ = report_format_.json();
    ETSCOPE_ASSIGN_OR_RETURN(BundledProgram b, BpteReader::open(file_));
    if (!extract_.empty()) {
      ETSCOPE_TRY(write_file_bytes(extract_, b.bytes(b.program_range)));
    }
    print_problems(b.program);
    if (json_) {
      std::cout << dump_json(bundled_program_json(b)) << "\n";
      return 0;
    }
    std::cout << b.name() << ": bundled program " << b.file_identifier << " version " << b.version << ", "
              << b.blob->size() << " bytes; embedded program " << b.program_range.size << " bytes at offset "
              << b.program_range.offset << "\n";
    if (!extract_.empty()) std::cout << "  wrote the embedded program to " << extract_ << "\n";
    std::cout << "\n";
    print_program_header(std::cout, b.program);
    for (const ExecutionPlan& plan : b.program.plans) print_plan_summary(std::cout, plan);
    std::cout << "\ntest suites " << b.suites.size() << "\n";
    for (const BundledTestSuite& s : b.suites) {
      std::cout << "  method " << s.method_name << ": " << s.cases.size() << " test cases\n";
      // Consecutive cases with the same signature are folded into one line.
      size_t i = 0;
      while (i < s.cases.size()) {
        const std::string in = describe_all(s.cases[i].inputs);
        const std::string out = describe_all(s.cases[i].expected_outputs);
        size_t j = i + 1;
        while (j < s.cases.size() && describe_all(s.cases[j].inputs) == in &&
               describe_all(s.cases[j].expected_outputs) == out) {
          ++j;
        }
        std::cout << "    case " << i;
        if (j - i > 1) std::cout << "-" << j - 1;
        std::cout << ": inputs " << in << " -> expected " << out << "\n";
        i = j;
      }
    }
    std::cout << "  tolerances: not stored in bundled programs; ExecuTorch's runtime defaults are rtol 1e-5, "
                 "atol 1e-8 (its example runner uses rtol 1e-3, atol 1e-5)\n";
    return 0;
  }

 private:
  std::string file_;
  std::string extract_;
  bool json_ = false;
  ReportFormat report_format_;
};

}  // namespace

std::unique_ptr<Command> make_bpte_command() { return std::make_unique<BpteCommand>(); }

}  // namespace etscope::cli
