// The figures of a generation: ExecuTorch's LLM runner's (load, prompt evaluation, time to first
// token, prefill and decode tokens per second) and per-token decode latency percentiles. The one
// definition the CLI, JSON, the store and the viewer use.
#pragma once

#include <cstdint>

#include "etscope/llm/generator.h"

namespace etscope::llm {

struct GenerationStats {
  int64_t prompt_tokens = 0;
  int64_t generated_tokens = 0;
  int64_t prefill_calls = 0;
  int64_t decode_calls = 0;
  double load_ms = 0;
  double prefill_ms = 0;       ///< Sum of the prefill calls' engine times ("prompt evaluation").
  double decode_ms = 0;        ///< Sum of the decode calls' engine times.
  double first_token_ms = 0;   ///< Wall time from the start of generation to the first token.
  double sampling_ms = 0;
  double total_ms = 0;         ///< Wall time of the whole generation.
  double prefill_tokens_per_s = 0;  ///< prompt tokens / prefill_ms (0 without prefill time).
  double decode_tokens_per_s = 0;   ///< decode calls / decode_ms: each decode call makes one token.
  /// Decode calls' times (ms), numpy percentiles; all 0 without decode calls.
  double decode_min_ms = 0, decode_p50_ms = 0, decode_p90_ms = 0, decode_p99_ms = 0, decode_max_ms = 0;
};

GenerationStats generation_stats(const GenerationResult& result);

}  // namespace etscope::llm
