// etscope: native developer tools for ExecuTorch programs. Parses the command line, runs one
// verb, prints `etscope: <file>: <problem>` and exits 1 on failure (2 on a usage error).
#include <cstdio>
#include <exception>
#include <new>
#include <string>
#include <vector>

#include "commands/command.h"
#include "etscope/core/version.h"

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

// CLI11's message on one line: its own line breaks become spaces.
std::string one_line(std::string text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  for (char& c : text) {
    if (c == '\n') c = ' ';
  }
  return text;
}

// A usage error: one line, `etscope: ...` or `etscope VERB: ...`, and exit code 2.
int usage_error(const std::string& verb, const std::string& message) {
  std::fflush(stdout);
  std::fprintf(stderr, "etscope%s%s: %s\n", verb.empty() ? "" : " ", verb.c_str(), message.c_str());
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace etscope::cli;
  CLI::App app{"etscope: inspect, run and profile ExecuTorch programs", "etscope"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "etscope " + std::string(etscope::etscope_version()));
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
  commands.push_back(make_generate_command());
  commands.push_back(make_store_command());
  commands.push_back(make_runs_command());
  commands.push_back(make_compare_command());
  commands.push_back(make_history_command());
  commands.push_back(make_sql_command());
  commands.push_back(make_tokenize_command());
  commands.push_back(make_findings_command());
  std::vector<std::pair<CLI::App*, Command*>> verbs;
  for (auto& c : commands) verbs.emplace_back(c->add_to(app), c.get());

  // The verb comes first; a word that is none is named, with the verbs it could have been.
  std::string verb_names;
  CLI::App* verb = nullptr;
  for (auto& [sub, command] : verbs) {
    verb_names += (verb_names.empty() ? "" : ", ") + sub->get_name();
    if (argc > 1 && sub->get_name() == argv[1]) verb = sub;
  }
  if (argc < 2) return usage_error("", "give a verb: " + verb_names + " (etscope --help describes them)");
  if (verb == nullptr && argv[1][0] != '-') {
    return usage_error("", "unknown verb '" + std::string(argv[1]) + "'; the verbs are " + verb_names + " (etscope --help describes them)");
  }

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help, --version: their text on stdout
    const std::string help = verb != nullptr ? "etscope " + verb->get_name() + " --help" : "etscope --help";
    return usage_error(verb != nullptr ? verb->get_name() : "", one_line(e.what()) + " (" + help + " lists the options)");
  }
  for (auto& [sub, command] : verbs) {
    if (!sub->parsed()) continue;
    return run_verb(*command);
  }
  return 2;
}
