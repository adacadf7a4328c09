// etscope trace: a profiled run as a Chrome trace (Perfetto, chrome://tracing), each event
// annotated with what the Inspector joined to it.
#include <fstream>
#include <iostream>
#include <memory>

#include "commands/command.h"
#include "commands/inspect_inputs.h"
#include "etscope/inspect/run_trace.h"

namespace etscope::cli {
namespace {

class TraceCommand final : public Command {
 public:
  CLI::App* add_to(CLI::App& app) override {
    CLI::App* sub = app.add_subcommand("trace", "Write a profiled run as a Chrome trace (Perfetto, chrome://tracing)");
    inputs_.add_options(sub);
    sub->add_option("-o,--output", output_, "Trace JSON to write")->required();
    return sub;
  }

  Result<int> run() override {
    ETSCOPE_ASSIGN_OR_RETURN(inspect::Inspector in, inputs_.load());
    std::ofstream out(output_, std::ios::binary | std::ios::trunc);
    if (!out) return Error(ErrorCode::kIo, output_ + ": cannot open for writing");
    inspect::write_run_trace(in, out);
    out.close();
    if (!out) return Error(ErrorCode::kIo, output_ + ": write failed");
    size_t events = 0;
    for (const auto& e : in.dump().events) events += e.kind == etdump::EventKind::kProfile;
    std::cout << output_ << ": " << events << " events on " << in.dump().blocks.size()
              << " tracks; open it in https://ui.perfetto.dev or chrome://tracing\n";
    return 0;
  }

 private:
  InspectInputs inputs_;
  std::string output_;
};

}  // namespace

std::unique_ptr<Command> make_trace_command() { return std::make_unique<TraceCommand>(); }

}  // namespace etscope::cli
