#include "commands/inspect_inputs.h"

#include <cstdio>
#include <memory>
#include <optional>

#include "etscope/etdump/etdump_reader.h"
#include "etscope/etrecord/etrecord_reader.h"
#include "etscope/formats/blob.h"
#include "etscope/formats/pte_reader.h"
#include "etscope/inspect/consistency.h"

namespace etscope::cli {

void InspectInputs::add_options(CLI::App* sub) {
  sub->add_option("--etdump", etdump, "ETDump trace (.etdp)")->required();
  sub->add_option("--etrecord", etrecord, "ETRecord archive of the same program (module hierarchy, stack traces, op types)");
  sub->add_option("--debug-buffer", debug_buffer, "Debug buffer (.bin) the run wrote next to the ETDump");
  sub->add_option("--source-time-scale", source, "Unit of the ETDump's timestamps")
      ->check(CLI::IsMember({"ns", "us", "ms", "s", "cycles"}))->capture_default_str();
  sub->add_option("--target-time-scale", target, "Unit of the reported times")
      ->check(CLI::IsMember({"ns", "us", "ms", "s", "cycles"}))->capture_default_str();
  sub->add_option("--method", method,
                  "ETRecord method for blocks whose kernels do not tell their method (default: forward); a block "
                  "one method explains always uses that method's maps");
  sub->add_option("--pte", pte, "The program that was run: checked against the ETDump and ETRecord");
  sub->add_flag("--force", force, "Join an ETDump, ETRecord and program that do not belong together, and compare a --gap whose run used other inputs than the AOT intermediates (each with a warning)");
  sub->add_flag("--include-warmup", include_warmup, "Count etscope's warm-up executions ('Warmup' blocks) as runs");
  sub->add_option("--skip-runs", skip_runs, "Leave out the first N executions (warm-up in dumps from ExecuTorch's runtime)");
}

Result<inspect::Inspector> InspectInputs::load() const {
  inspect::InspectorOptions options;
  ETSCOPE_ASSIGN_OR_RETURN(options.source, inspect::parse_time_scale(source));
  ETSCOPE_ASSIGN_OR_RETURN(options.target, inspect::parse_time_scale(target));
  options.method = method;
  options.include_warmup = include_warmup;
  options.skip_runs = skip_runs;
  ETSCOPE_ASSIGN_OR_RETURN(etdump::EtDumpFile dump, etdump::EtDumpReader::open(etdump));
  std::shared_ptr<const etrecord::EtRecord> record;
  if (!etrecord.empty()) {
    ETSCOPE_ASSIGN_OR_RETURN(etrecord::EtRecord r, etrecord::EtRecordReader::open(etrecord));
    record = std::make_shared<const etrecord::EtRecord>(std::move(r));
    // Whatever could not be decoded is missing from the report: say so instead of leaving
    // columns quietly empty.
    if (!record->undecoded.empty()) {
      std::fprintf(stderr, "etscope: %s: warning: not decoded: %s%s\n", etrecord.c_str(), record->undecoded.front().c_str(),
                   record->undecoded.size() > 1 ? (" (and " + std::to_string(record->undecoded.size() - 1) + " more)").c_str() : "");
    }
  }
  std::optional<Program> program;
  if (!pte.empty()) {
    ETSCOPE_ASSIGN_OR_RETURN(Program p, PteReader::open(pte));
    program = std::move(p);
  }
  const inspect::ConsistencyReport consistency =
      inspect::check_consistency(&dump, record.get(), program ? &*program : nullptr);
  for (const std::string& problem : consistency.problems) {
    if (!force) return Error(ErrorCode::kInvalidArgument, problem + " (--force joins them anyway)");
    std::fprintf(stderr, "etscope: warning: %s (joined anyway: --force)\n", problem.c_str());
  }
  std::shared_ptr<const Blob> buffer;
  if (!debug_buffer.empty()) {
    ETSCOPE_ASSIGN_OR_RETURN(buffer, Blob::open_file(debug_buffer));
  }
  ETSCOPE_ASSIGN_OR_RETURN(
      inspect::Inspector in,
      inspect::Inspector::build(std::make_shared<const etdump::EtDumpFile>(std::move(dump)), std::move(record), std::move(buffer), options));
  // What the recording lost is said, not shown as events.
  for (const std::string& loss : in.recording_losses()) {
    std::fprintf(stderr, "etscope: %s: warning: %s\n", etdump.c_str(), loss.c_str());
  }
  return in;
}

}  // namespace etscope::cli
