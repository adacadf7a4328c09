#include "etscope/llm/generation_stats.h"

#include <vector>

#include "etscope/core/stats.h"

namespace etscope::llm {

GenerationStats generation_stats(const GenerationResult& r) {
  GenerationStats s;
  s.prompt_tokens = static_cast<int64_t>(r.prompt.size());
  s.generated_tokens = static_cast<int64_t>(r.generated.size());
  s.load_ms = r.load_ms;
  s.first_token_ms = r.first_token_ms;
  s.sampling_ms = r.sampling_ms;
  s.total_ms = r.total_ms;
  std::vector<double> decode;
  for (const CallRecord& c : r.calls) {
    if (c.phase == Phase::kPrefill) {
      ++s.prefill_calls;
      s.prefill_ms += c.ms;
    } else {
      ++s.decode_calls;
      s.decode_ms += c.ms;
      decode.push_back(c.ms);
    }
  }
  if (s.prefill_ms > 0) s.prefill_tokens_per_s = static_cast<double>(s.prompt_tokens) * 1000.0 / s.prefill_ms;
  if (s.decode_ms > 0) s.decode_tokens_per_s = static_cast<double>(s.decode_calls) * 1000.0 / s.decode_ms;
  if (!decode.empty()) {
    s.decode_min_ms = percentile(decode, 0);
    s.decode_p50_ms = percentile(decode, 50);
    s.decode_p90_ms = percentile(decode, 90);
    s.decode_p99_ms = percentile(decode, 99);
    s.decode_max_ms = percentile(decode, 100);
  }
  return s;
}

}  // namespace etscope::llm
