// Command: one `etscope <verb>`. Each verb lives in commands/<verb>_command.cpp, declares its
// options on a CLI11 subcommand and runs against the libraries.
#pragma once

#include <CLI/CLI.hpp>

#include <memory>
#include <string>

#include "etscope/core/result.h"

namespace etscope::cli {

class Command {
 public:
  virtual ~Command() = default;
  /// Declares the subcommand and its options on `app`.
  virtual CLI::App* add_to(CLI::App& app) = 0;
  /// Runs the command after parsing. Returns the process exit code, or an Error that main prints
  /// as `etscope: <message>` and turns into exit code 1.
  virtual Result<int> run() = 0;
};

/// `--format table|json`, with `--json` kept as its alias: how every report verb (pte, ptd, bpte,
/// memory, etdump, etrecord) chooses between its text report and one JSON object.
struct ReportFormat {
  std::string format = "table";
  bool json_flag = false;
  void add_to(CLI::App* sub, const std::string& json_doc) {
    sub->add_option("--format", format, "table (default) or json (" + json_doc + ")")->check(CLI::IsMember({"table", "json"}));
    sub->add_flag("--json", json_flag, "Same as --format json");
  }
  bool json() const { return json_flag || format == "json"; }
};

std::unique_ptr<Command> make_pte_command();
std::unique_ptr<Command> make_ptd_command();
std::unique_ptr<Command> make_bpte_command();
std::unique_ptr<Command> make_memory_command();
std::unique_ptr<Command> make_run_command();
std::unique_ptr<Command> make_etdump_command();
std::unique_ptr<Command> make_etrecord_command();
std::unique_ptr<Command> make_inspect_command();
std::unique_ptr<Command> make_trace_command();
std::unique_ptr<Command> make_kernels_command();
std::unique_ptr<Command> make_debug_command();
std::unique_ptr<Command> make_train_command();
std::unique_ptr<Command> make_store_command();
std::unique_ptr<Command> make_runs_command();
std::unique_ptr<Command> make_compare_command();
std::unique_ptr<Command> make_history_command();
std::unique_ptr<Command> make_sql_command();
std::unique_ptr<Command> make_generate_command();
std::unique_ptr<Command> make_tokenize_command();
std::unique_ptr<Command> make_findings_command();

}  // namespace etscope::cli
