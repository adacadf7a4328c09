#include "etscope/inspect/profile.h"

#include <utility>

#include "etscope/core/event_names.h"
#include "etscope/etrecord/etrecord_reader.h"
#include "etscope/formats/training.h"
#include "etscope/inspect/consistency.h"
#include "etscope/inspect/program_description.h"

namespace etscope::inspect {
namespace {

constexpr std::string_view kForward = "forward";

int block_rank(std::string_view name) {
  if (name == events::kBlockExecute) return 3;
  if (name == events::kBlockDefault) return 0;
  if (name == events::kBlockEval || name == events::kBlockWarmup) return 1;
  return 2;
}

}  // namespace

std::string profile_method(const std::string& requested, const Program* program, const etrecord::EtRecord* record) {
  if (!requested.empty()) return requested;
  if (program != nullptr) {
    const ExecutionPlan* first = nullptr;
    for (const ExecutionPlan& plan : program->plans) {
      if (is_training_marker(plan.name)) continue;
      if (plan.name == kForward) return plan.name;
      if (first == nullptr) first = &plan;
    }
    if (first != nullptr) return first->name;
  }
  if (record != nullptr && !record->has_method(std::string(kForward))) {
    const std::vector<std::string> methods = record->methods();
    if (!methods.empty()) return methods.front();
  }
  return std::string(kForward);
}

Result<Profile> open_profile(const ProfileFiles& files) {
  ProfileParts parts;
  if (files.etdump_bytes) {
    ETSCOPE_ASSIGN_OR_RETURN(etdump::EtDumpFile dump, etdump::EtDumpReader::read(files.etdump_bytes));
    parts.dump = std::make_shared<const etdump::EtDumpFile>(std::move(dump));
  } else {
    ETSCOPE_ASSIGN_OR_RETURN(etdump::EtDumpFile dump, etdump::EtDumpReader::open(files.etdump));
    parts.dump = std::make_shared<const etdump::EtDumpFile>(std::move(dump));
  }
  if (!files.etrecord.empty()) {
    ETSCOPE_ASSIGN_OR_RETURN(etrecord::EtRecord record, etrecord::EtRecordReader::open(files.etrecord));
    parts.record = std::make_shared<const etrecord::EtRecord>(std::move(record));
    parts.record_name = files.etrecord;
  }
  if (!files.program.empty()) {
    ETSCOPE_ASSIGN_OR_RETURN(Program program, load_program(files.program));
    parts.program = std::make_shared<const Program>(std::move(program));
  }
  if (!files.debug_buffer.empty()) {
    ETSCOPE_ASSIGN_OR_RETURN(parts.debug_buffer, Blob::open_file(files.debug_buffer));
  }
  return open_profile(std::move(parts), files.options);
}

Result<std::vector<ProfileWarning>> check_profile_parts(const ProfileParts& parts, const ProfileOptions& options) {
  std::vector<ProfileWarning> warnings;
  const ConsistencyReport consistency = check_consistency(parts.dump.get(), parts.record.get(), parts.program.get());
  for (const std::string& problem : consistency.problems) {
    if (!options.join_mismatched) return Error(ErrorCode::kInvalidArgument, problem + options.mismatch_hint);
    warnings.push_back({ProfileWarning::Kind::kMismatch, "", problem});
  }
  for (const std::string& note : consistency.notes) warnings.push_back({ProfileWarning::Kind::kUnmapped, parts.record_name, note});
  // Whatever could not be decoded is missing from every report: say so instead of leaving
  // columns quietly empty.
  if (parts.record && !parts.record->undecoded.empty()) {
    const size_t more = parts.record->undecoded.size() - 1;
    warnings.push_back({ProfileWarning::Kind::kUndecoded, parts.record_name,
                        "not decoded: " + parts.record->undecoded.front() + (more > 0 ? " (and " + std::to_string(more) + " more)" : "")});
  }
  return warnings;
}

size_t logged_intermediates(const etdump::EtDumpFile& dump) {
  size_t n = 0;
  for (const etdump::LoggedValue& v : dump.values) n += v.output ? 0 : 1;
  return n;
}

Result<Profile> open_profile(ProfileParts parts, const ProfileOptions& options) {
  if (!parts.dump) return Error(ErrorCode::kInvalidArgument, "a profile needs an ETDump");
  Profile profile;
  profile.method = profile_method(options.method, parts.program.get(), parts.record.get());
  ETSCOPE_ASSIGN_OR_RETURN(profile.warnings, check_profile_parts(parts, options));
  InspectorOptions inspector_options;
  inspector_options.source = options.source;
  inspector_options.target = options.target;
  inspector_options.method = profile.method;
  inspector_options.include_warmup = options.include_warmup;
  inspector_options.skip_runs = options.skip_runs;
  ETSCOPE_ASSIGN_OR_RETURN(Inspector inspector, Inspector::build(parts.dump, parts.record, parts.debug_buffer, inspector_options));
  // What the recording lost is said, not shown as events.
  for (const std::string& loss : inspector.recording_losses()) {
    profile.warnings.push_back({ProfileWarning::Kind::kRecordingLoss, parts.dump->name(), loss});
  }
  if (const size_t logged = logged_intermediates(*parts.dump); logged > 0) {
    profile.warnings.push_back({ProfileWarning::Kind::kLoggedTimings, parts.dump->name(),
                                "recorded with intermediate logging on (" + std::to_string(logged) +
                                    " logged values): its timings include copying them into the debug buffer; "
                                    "time a run without --debug-level intermediate"});
  }
  profile.engine = dump_engine(*parts.dump);
  profile.inspector = std::make_unique<Inspector>(std::move(inspector));
  profile.dump = std::move(parts.dump);
  profile.record = std::move(parts.record);
  profile.program = std::move(parts.program);
  profile.debug_buffer = std::move(parts.debug_buffer);
  return profile;
}

std::optional<size_t> main_block(const std::vector<BlockCandidate>& blocks) {
  std::optional<size_t> best;
  for (size_t b = 0; b < blocks.size(); ++b) {
    if (!best) {
      best = b;
      continue;
    }
    const BlockCandidate& x = blocks[b];
    const BlockCandidate& y = blocks[*best];
    const int rx = block_rank(x.name), ry = block_rank(y.name);
    if (rx > ry || (rx == ry && x.runs > y.runs)) best = b;
  }
  return best;
}

std::optional<size_t> main_block(const Inspector& inspector) {
  std::vector<BlockCandidate> candidates;
  candidates.reserve(inspector.blocks().size());
  for (const EventBlock& block : inspector.blocks()) candidates.push_back({block.name, block.runs.size()});
  return main_block(candidates);
}

}  // namespace etscope::inspect
