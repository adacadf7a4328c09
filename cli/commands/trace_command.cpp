// etscope trace: a profiled run as a Chrome trace (Perfetto, chrome://tracing), each event
// annotated with what the Inspector joined to it.
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>
#include <set>
#include <sstream>

#include "commands/command.h"
#include "commands/inspect_inputs.h"
#include "etscope/formats/blob.h"
#include "etscope/inspect/engine_identity.h"
#include "etscope/inspect/run_trace.h"

namespace etscope::cli {
namespace {

class TraceCommand final : public Command {
 public:
  CLI::App* add_to(CLI::App& app) override {
    CLI::App* sub = app.add_subcommand("trace", "Write a profiled run as a Chrome trace (Perfetto, chrome://tracing)");
    inputs_.add_options(sub);
    sub->add_option("-o,--output", output_, "Trace JSON to write ('-': standard output)")->required();
    sub->add_option("--tracks", tracks_,
                    "joined: one track per block name, runs end to end (default); per-run: one track per run")
        ->check(CLI::IsMember({"joined", "per-run"}));
    return sub;
  }

  Result<int> run() override {
    // The trace must never replace one of the files it is made from.
    if (output_ != "-") {
      if (Status s = check_not_an_input(output_, {inputs_.etdump, inputs_.etrecord, inputs_.debug_buffer, inputs_.pte});
          !s.ok()) {
        std::fprintf(stderr, "etscope trace: %s\n", s.error().message().c_str());
        return 2;
      }
      // Said before the inputs are read, and about the directory, not the file it would hold.
      const std::filesystem::path dir = std::filesystem::path(output_).parent_path();
      std::error_code ec;
      if (!dir.empty() && !std::filesystem::is_directory(dir, ec)) {
        return Error(ErrorCode::kNotFound, output_ + ": " +
                                               (std::filesystem::exists(dir, ec) ? "'" + dir.string() + "' is not a directory"
                                                                                 : "the directory '" + dir.string() + "' does not exist"));
      }
    }
    ETSCOPE_ASSIGN_OR_RETURN(inspect::Inspector in, inputs_.load());
    inspect::RunTraceOptions options;
    options.per_run_tracks = tracks_ == "per-run";
    std::ostringstream text;
    inspect::write_run_trace(in, text, options);
    if (output_ == "-") {
      std::cout << text.str();
      std::cout.flush();
      return std::cout ? 0 : 1;
    }
    // Written whole through a temporary file: a reader never sees a torn trace.
    ETSCOPE_TRY(write_file_text(output_, text.str()));
    size_t events = 0;
    for (const auto& e : in.dump().events) events += e.kind == etdump::EventKind::kProfile && !in.dump().is_marker(e);
    std::set<std::string> names;
    for (const auto& b : in.dump().blocks) names.insert(b.name);
    const size_t tracks = options.per_run_tracks ? in.dump().blocks.size() : names.size();
    std::cout << output_ << ": " << events << " events on " << tracks << (tracks == 1 ? " track" : " tracks")
              << " (engine " << inspect::dump_engine(in.dump()).text() << "); open it in https://ui.perfetto.dev or chrome://tracing\n";
    return 0;
  }

 private:
  InspectInputs inputs_;
  std::string output_;
  std::string tracks_ = "joined";
};

}  // namespace

std::unique_ptr<Command> make_trace_command() { return std::make_unique<TraceCommand>(); }

}  // namespace etscope::cli
