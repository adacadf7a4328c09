#include "commands/inspect_inputs.h"

#include <memory>

#include "etscope/etdump/etdump_reader.h"
#include "etscope/etrecord/etrecord_reader.h"
#include "etscope/formats/blob.h"

namespace etscope::cli {

void InspectInputs::add_options(CLI::App* sub) {
  sub->add_option("--etdump", etdump, "ETDump trace (.etdp)")->required();
  sub->add_option("--etrecord", etrecord, "ETRecord archive of the same program (module hierarchy, stack traces, op types)");
  sub->add_option("--debug-buffer", debug_buffer, "Debug buffer (.bin) the run wrote next to the ETDump");
  sub->add_option("--source-time-scale", source, "Unit of the ETDump's timestamps")
      ->check(CLI::IsMember({"ns", "us", "ms", "s", "cycles"}))->capture_default_str();
  sub->add_option("--target-time-scale", target, "Unit of the reported times")
      ->check(CLI::IsMember({"ns", "us", "ms", "s", "cycles"}))->capture_default_str();
  sub->add_option("--method", method, "Method whose ETRecord debug maps are used")->capture_default_str();
}

Result<inspect::Inspector> InspectInputs::load() const {
  inspect::InspectorOptions options;
  ETSCOPE_ASSIGN_OR_RETURN(options.source, inspect::parse_time_scale(source));
  ETSCOPE_ASSIGN_OR_RETURN(options.target, inspect::parse_time_scale(target));
  options.method = method;
  ETSCOPE_ASSIGN_OR_RETURN(etdump::EtDumpFile dump, etdump::EtDumpReader::open(etdump));
  std::shared_ptr<const etrecord::EtRecord> record;
  if (!etrecord.empty()) {
    ETSCOPE_ASSIGN_OR_RETURN(etrecord::EtRecord r, etrecord::EtRecordReader::open(etrecord));
    record = std::make_shared<const etrecord::EtRecord>(std::move(r));
  }
  std::shared_ptr<const Blob> buffer;
  if (!debug_buffer.empty()) {
    ETSCOPE_ASSIGN_OR_RETURN(buffer, Blob::open_file(debug_buffer));
  }
  return inspect::Inspector::build(std::make_shared<const etdump::EtDumpFile>(std::move(dump)), std::move(record), std::move(buffer), options);
}

}  // namespace etscope::cli
