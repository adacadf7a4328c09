// etscope: native developer tools for ExecuTorch programs. Parses the command line, runs one
// verb, prints `etscope: <file>: <problem>` and exits 1 on failure (2 on a usage error).
#include <cstdio>
#include <exception>
#include <new>
#include <string>
#include <vector>

#include "commands/command.h"

namespace {

int fail(const char* message) {
  std::fflush(stdout);
  std::fprintf(stderr, "etscope: %s\n", message);
  return 1;
}

// Runs a parsed verb. Libraries report failure as Result; nothing should throw past them, but a
// front end must never end in std::terminate: anything that still escapes (an allocation a file
// or an option asked for, a library bug) becomes one line and exit code 1.
int run_verb(etscope::cli::Command& command) {
  try {
    auto result = command.run();
    if (!result.ok()) return fail(result.error().message().c_str());
    return *result;
  } catch (const std::bad_alloc&) {
    return fail("out of memory (a file or an option asked for more than this machine could allocate)");
  } catch (const std::exception& e) {
    const std::string message = std::string("internal error: ") + e.what();
    return fail(message.c_str());
  } catch (...) {
    return fail("internal error: unknown exception");
  }
}

}  // namespace

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
  commands.push_back(make_debug_command());
  commands.push_back(make_train_command());
  commands.push_back(make_store_command());
  commands.push_back(make_runs_command());
  commands.push_back(make_compare_command());
  commands.push_back(make_history_command());
  commands.push_back(make_sql_command());
  std::vector<std::pair<CLI::App*, Command*>> verbs;
  for (auto& c : commands) verbs.emplace_back(c->add_to(app), c.get());

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  for (auto& [sub, command] : verbs) {
    if (!sub->parsed()) continue;
    return run_verb(*command);
  }
  return 2;
}
