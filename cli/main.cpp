// etscope: native developer tools for ExecuTorch programs. Parses the command line, runs one
// verb, prints `etscope: <file>: <problem>` and exits 1 on failure (2 on a usage error).
#include <cstdio>
#include <vector>

#include "commands/command.h"

namespace etscope::cli {
std::unique_ptr<Command> make_kernels_command();  // commands/kernels_command.cpp
}  // namespace etscope::cli

int main(int argc, char** argv) {
  using namespace etscope::cli;
  CLI::App app{"etscope: inspect, run and profile ExecuTorch programs", "etscope"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "etscope 0.1.0");
  std::vector<std::unique_ptr<Command>> commands;
  commands.push_back(make_pte_command());
  commands.push_back(make_ptd_command());
  commands.push_back(make_bpte_command());
  commands.push_back(make_memory_command());
  commands.push_back(make_run_command());
  commands.push_back(make_etdump_command());
  commands.push_back(make_etrecord_command());
  commands.push_back(make_inspect_command());
  commands.push_back(make_trace_command());
  commands.push_back(make_kernels_command());
  std::vector<std::pair<CLI::App*, Command*>> verbs;
  for (auto& c : commands) verbs.emplace_back(c->add_to(app), c.get());

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  for (auto& [sub, command] : verbs) {
    if (!sub->parsed()) continue;
    auto result = command->run();
    if (!result.ok()) {
      std::fflush(stdout);
      std::fprintf(stderr, "etscope: %s\n", result.error().message().c_str());
      return 1;
    }
    return *result;
  }
  return 2;
}
