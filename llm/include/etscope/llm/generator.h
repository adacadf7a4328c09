// The generation loop of an LLM export, over the runner (etscope's engine: ExecuTorch's wheel
// cannot run the llama:: custom operators outside Python):
//   prefill: the prompt in one call when the tokens input's sequence dimension is dynamic (in
//            chunks of its bound), else one call per token;
//   decode:  one call per generated token at the next position, until an end-of-sequence id,
//            the token limit or the context bound.
// Every call is an execution of its own, recorded (with a trace) in a run block named "Prefill"
// or "Decode", in call order, so a dump of a generation profiles it token by token.
// Inputs follow ExecuTorch's exporter: tokens [1, S] (int64 or int32) and, with a KV cache,
// input_pos [1] (the first token's position); without one the whole sequence is fed each call.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "etscope/core/result.h"
#include "etscope/llm/metadata.h"
#include "etscope/runner/runner.h"

namespace etscope::llm {

enum class Phase : uint8_t { kPrefill, kDecode };
const char* to_string(Phase phase);

/// One execution of the method.
struct CallRecord {
  Phase phase = Phase::kPrefill;
  int64_t position = 0;  ///< Position of the call's first token.
  int64_t tokens = 0;    ///< Tokens the call fed.
  double ms = 0;         ///< The engine's time for it (Engine::execute).
};

struct GenerationConfig {
  int64_t max_new_tokens = 0;  ///< 0: until the context bound.
  double temperature = 0;      ///< 0: greedy.
  double top_p = 1.0;
  uint64_t seed = 0;
  bool stop_at_eos = true;
  /// End-of-sequence ids used when the program has no get_eos_ids (a tokenizer's); the
  /// program's own take precedence, as in ExecuTorch's runner.
  std::vector<int64_t> fallback_eos_ids;
};

struct GenerationResult {
  std::vector<int64_t> prompt;
  std::vector<int64_t> generated;
  std::string stop_reason;  ///< "eos", "max_new_tokens" or "context".
  std::vector<CallRecord> calls;
  double load_ms = 0;       ///< The runner's load time.
  double sampling_ms = 0;   ///< Time spent choosing tokens (all calls).
  double total_ms = 0;      ///< Wall time of generate(), prefill to last token.
  double first_token_ms = 0;  ///< Wall time from the start of generate() to the first token.
};

class Generator {
 public:
  /// Loads the program with the runner (options.engine must be etscope's) and reads its metadata.
  /// Errors: those of Runner::load and read_llm_metadata; a forward method whose inputs are not
  /// tokens [1, S] (+ input_pos [1] with a KV cache).
  static Result<std::unique_ptr<Generator>> load(const runner::RunnerOptions& options);
  ~Generator();

  const LlmMetadata& metadata() const;
  runner::Runner& runner();
  /// Tokens one call can take: the bound of the tokens input's sequence dimension (1 for a
  /// static [1, 1] input).
  int64_t max_tokens_per_call() const;

  /// One call: feeds `tokens` at `start_pos` and returns the logits of the last one (vocab_size
  /// floats), recording the call. Errors: ids outside the vocabulary, positions past the context,
  /// a call longer than max_tokens_per_call(), the method's own errors.
  Result<std::vector<float>> forward(std::span<const int64_t> tokens, int64_t start_pos, Phase phase);
  /// The calls made so far (forward() and generate() append).
  const std::vector<CallRecord>& calls() const;

  /// Prefills `prompt` and decodes. `on_token(id)` is called as each token is chosen.
  Result<GenerationResult> generate(std::span<const int64_t> prompt, const GenerationConfig& config,
                                    const std::function<void(int64_t)>& on_token = {});

 private:
  struct Impl;
  explicit Generator(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace etscope::llm
