#include "etscope/inspect/generation_profile.h"

#include <algorithm>
#include <unordered_map>

#include "etscope/core/event_names.h"
#include "etscope/core/stats.h"

namespace etscope::inspect {

const char* to_string(GenerationPhase phase) { return phase == GenerationPhase::kPrefill ? "prefill" : "decode"; }

namespace {

constexpr std::string_view kLlamaNamespace = "llama::";

// The operator an event names, "llama::" left on for etscope's custom-op events and added back to
// ExecuTorch's codegen wrappers (native_call_<op>), so both spellings classify alike.
bool is_llama_op_with(std::string_view name, std::string_view part) {
  std::string_view op;
  if (name.starts_with(kLlamaNamespace)) {
    op = name.substr(kLlamaNamespace.size());
  } else if (events::is_native_call_name(name)) {
    op = events::native_call_op(name);
  } else {
    return false;
  }
  return op.find(part) != std::string_view::npos;
}

std::optional<GenerationPhase> phase_of(std::string_view block_name) {
  if (block_name == events::kBlockPrefill) return GenerationPhase::kPrefill;
  if (block_name == events::kBlockDecode) return GenerationPhase::kDecode;
  return std::nullopt;
}

// Adds one event block's runs and operator rows to its phase.
Status add_block(const Inspector& inspector, size_t index, PhaseProfile& phase,
                 std::unordered_map<std::string, size_t>& operator_rows) {
  const EventBlock& block = inspector.blocks()[index];
  const Event* execute = nullptr;
  for (const Event& ev : block.events) {
    if (ev.name == events::kMethodExecute && ev.perf) execute = &ev;
  }
  if (execute == nullptr || execute->perf->raw.size() != block.runs.size()) {
    return Error(ErrorCode::kInvalidArgument, inspector.dump().name() + ": block '" + block.name + "' has no timed " +
                                                  std::string(events::kMethodExecute) + " in every run");
  }
  for (size_t r = 0; r < block.runs.size(); ++r) {
    GenerationCall call;
    call.dump_block = block.runs[r];
    call.time = execute->perf->raw[r];
    for (const Event& ev : block.events) {
      if (!ev.perf || r >= ev.perf->raw.size()) continue;
      if (is_attention_event(ev.name)) call.attention += ev.perf->raw[r];
      if (is_cache_update_event(ev.name)) call.cache_update += ev.perf->raw[r];
    }
    phase.calls.push_back(call);
  }
  // summary_by_type's rows are per run (averages): times the runs, they are the phase's.
  const auto runs = static_cast<double>(block.runs.size());
  for (const TypeSummary& row : inspector.summary_by_type(index)) {
    auto [it, inserted] = operator_rows.emplace(row.type, phase.operators.size());
    if (inserted) phase.operators.push_back(PhaseOperator{row.type, 0, 0, 0});
    PhaseOperator& op = phase.operators[it->second];
    op.count += row.count * block.runs.size();
    op.total += row.total * runs;
  }
  return ok_status();
}

void finish(PhaseProfile& phase, const GenerationProfile& profile) {
  std::stable_sort(phase.calls.begin(), phase.calls.end(),
                   [](const GenerationCall& a, const GenerationCall& b) { return a.dump_block < b.dump_block; });
  std::vector<double> times;
  times.reserve(phase.calls.size());
  for (size_t k = 0; k < phase.calls.size(); ++k) {
    GenerationCall& call = phase.calls[k];
    call.position = static_cast<int64_t>(k);
    if (phase.phase == GenerationPhase::kDecode && profile.prompt_tokens) call.position += *profile.prompt_tokens;
    phase.total += call.time;
    phase.attention += call.attention;
    phase.cache_update += call.cache_update;
    times.push_back(call.time);
  }
  phase.median = median(times);
  phase.p90 = percentile(times, 90);
  if (phase.phase == GenerationPhase::kDecode) {
    phase.tokens = static_cast<int64_t>(phase.calls.size());
  } else if (profile.prompt_tokens && !phase.calls.empty()) {
    phase.tokens = profile.prompt_tokens;
  }
  if (phase.tokens && phase.total > 0 && profile.unit != TimeScale::kCycles) {
    phase.tokens_per_second = static_cast<double>(*phase.tokens) / (phase.total / units_per_second(profile.unit));
  }
  for (PhaseOperator& op : phase.operators) op.share = phase.total > 0 ? op.total / phase.total : 0;
  std::stable_sort(phase.operators.begin(), phase.operators.end(),
                   [](const PhaseOperator& a, const PhaseOperator& b) { return a.total > b.total; });
}

}  // namespace

bool is_attention_event(std::string_view name) { return is_llama_op_with(name, "sdpa"); }

bool is_cache_update_event(std::string_view name) { return is_llama_op_with(name, "update_cache"); }

bool has_generation_blocks(const Inspector& inspector) {
  return std::any_of(inspector.blocks().begin(), inspector.blocks().end(),
                     [](const EventBlock& b) { return phase_of(b.name).has_value(); });
}

Result<GenerationProfile> generation_profile(const Inspector& inspector, const GenerationOptions& options) {
  if (!has_generation_blocks(inspector)) {
    return Error(ErrorCode::kInvalidArgument, inspector.dump().name() + ": no " + std::string(events::kBlockPrefill) + " or " +
                                                  std::string(events::kBlockDecode) +
                                                  " blocks: not the profile of a generation (etscope generate --etdump)");
  }
  if (options.prompt_tokens && *options.prompt_tokens < 0) {
    return Error(ErrorCode::kInvalidArgument, "the prompt's token count cannot be negative");
  }
  GenerationProfile out;
  out.unit = inspector.options().target;
  out.prompt_tokens = options.prompt_tokens;
  out.positions_known = options.prompt_tokens.has_value();
  out.prefill.phase = GenerationPhase::kPrefill;
  out.decode.phase = GenerationPhase::kDecode;
  std::unordered_map<std::string, size_t> prefill_rows, decode_rows;
  for (size_t i = 0; i < inspector.blocks().size(); ++i) {
    const std::optional<GenerationPhase> phase = phase_of(inspector.blocks()[i].name);
    if (!phase) continue;
    const bool prefill = *phase == GenerationPhase::kPrefill;
    ETSCOPE_TRY(add_block(inspector, i, prefill ? out.prefill : out.decode, prefill ? prefill_rows : decode_rows));
  }
  finish(out.prefill, out);
  finish(out.decode, out);
  return out;
}

}  // namespace etscope::inspect
