// GenerationProfile: a generation's profile grouped by phase. `etscope generate --etdump` records
// every call of the program as a run block of its own, in call order: "Prefill" for the calls that
// feed the prompt, "Decode" for each generated token (llm/generator.h). This reads those blocks
// from an Inspector and defines, once for every front end (`etscope inspect --generation`, the
// viewer's Generation view):
//   - per phase, the calls in order with their time (the run's Method::execute) and, for decode,
//     the position of the token each call fed;
//   - the phase's total, median, p90 and tokens per second;
//   - the phase's operator breakdown (Inspector::summary_by_type's rows, over all its runs);
//   - per call, the time of attention (llama::*sdpa* events) and of KV-cache updates
//     (llama::update_cache* events), so attention's growth with the context shows.
// All times are in the Inspector's target unit.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "etscope/core/result.h"
#include "etscope/inspect/inspector.h"

namespace etscope::inspect {


enum class GenerationPhase : uint8_t { kPrefill, kDecode };
/// "prefill", "decode".
const char* to_string(GenerationPhase phase);

/// An attention event: an llama:: operator whose name holds "sdpa" (llama::custom_sdpa.out,
/// llama::sdpa_with_kv_cache.out, llama::custom_quantized_sdpa.out), also as ExecuTorch's codegen
/// names its kernel wrappers (native_call_custom_sdpa.out: the namespace dropped).
bool is_attention_event(std::string_view name);
/// A KV-cache update event: llama::update_cache*, or native_call_update_cache*.
bool is_cache_update_event(std::string_view name);

/// One call of the program (one run block of the dump).
struct GenerationCall {
  uint32_t dump_block = 0;   ///< Index into EtDumpFile::blocks.
  /// Decode: the position of the token the call fed (prompt_tokens + k - 1 for the k-th decode
  /// call) when the prompt's token count is known, else the call's index in the phase (0-based).
  /// Prefill: the call's index in the phase.
  int64_t position = 0;
  double time = 0;           ///< The run's Method::execute.
  double attention = 0;      ///< Sum of its attention events (is_attention_event).
  double cache_update = 0;   ///< Sum of its KV-cache update events (is_cache_update_event).
};

/// One row of a phase's operator breakdown.
struct PhaseOperator {
  std::string name;   ///< Inspector::summary_by_type's type (kernel op, "<backend>: <node>", ...).
  uint64_t count = 0; ///< Events of this type over all the phase's calls.
  double total = 0;   ///< Their time over all the phase's calls.
  double share = 0;   ///< total / the phase's total, 0..1.
};

struct PhaseProfile {
  GenerationPhase phase = GenerationPhase::kPrefill;
  std::vector<GenerationCall> calls;  ///< In call order.
  double total = 0;                   ///< Sum of the calls' times.
  double median = 0, p90 = 0;         ///< Of the calls' times (numpy's rules); 0 without calls.
  /// Tokens the phase fed: the prompt's count for prefill (when known), one per call for decode.
  std::optional<int64_t> tokens;
  /// tokens / total in seconds; nullopt without tokens, a zero total or a cycles unit.
  std::optional<double> tokens_per_second;
  double attention = 0, cache_update = 0;  ///< Sums over the calls.
  std::vector<PhaseOperator> operators;    ///< Largest total first.
};

struct GenerationProfile {
  TimeScale unit = TimeScale::kMs;
  std::optional<int64_t> prompt_tokens;  ///< As given (GenerationOptions).
  bool positions_known = false;          ///< Decode positions are positions, not call indices.
  PhaseProfile prefill, decode;
};

struct GenerationOptions {
  /// The prompt's token count (the dump does not hold it): decode positions and prefill tokens
  /// per second need it.
  std::optional<int64_t> prompt_tokens;
};

/// True when the Inspector has a Prefill or a Decode block.
bool has_generation_blocks(const Inspector& inspector);

/// The generation profile of an Inspector's blocks. Errors: kInvalidArgument when there is no
/// Prefill or Decode block (naming the dump), a negative prompt_tokens, or a Prefill/Decode
/// block without a timed Method::execute.
Result<GenerationProfile> generation_profile(const Inspector& inspector, const GenerationOptions& options = {});

}  // namespace etscope::inspect
