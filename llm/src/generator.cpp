#include "etscope/llm/generator.h"

#include <algorithm>
#include <chrono>
#include <cstring>

#include "etscope/core/event_names.h"
#include "etscope/formats/tensor_stats.h"
#include "etscope/llm/sampler.h"

namespace etscope::llm {

const char* to_string(Phase phase) { return phase == Phase::kPrefill ? "prefill" : "decode"; }

struct Generator::Impl {
  std::unique_ptr<runner::Runner> runner;
  LlmMetadata metadata;
  std::string model;
  ScalarType token_dtype = ScalarType::kLong;
  int64_t per_call = 1;     // tokens one call can take
  bool has_position = false;
  std::vector<CallRecord> calls;

  std::string where() const { return model; }
};

Generator::Generator(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Generator::~Generator() = default;

const LlmMetadata& Generator::metadata() const { return impl_->metadata; }
runner::Runner& Generator::runner() { return *impl_->runner; }
int64_t Generator::max_tokens_per_call() const { return impl_->per_call; }
const std::vector<CallRecord>& Generator::calls() const { return impl_->calls; }

Result<std::unique_ptr<Generator>> Generator::load(const runner::RunnerOptions& options) {
  if (options.engine != runner::EngineKind::kEtscope) {
    return Error(ErrorCode::kNotSupported, options.model + ": generation runs on etscope's engine (ExecuTorch's wheel cannot run the "
                                                           "llama:: custom operators outside Python)");
  }
  auto impl = std::make_unique<Impl>();
  impl->model = options.model;
  ETSCOPE_ASSIGN_OR_RETURN(impl->runner, runner::Runner::load(options));
  ETSCOPE_ASSIGN_OR_RETURN(impl->metadata, read_llm_metadata(impl->runner->program()));
  runtime::Method& m = impl->runner->method();
  auto bad_inputs = [&](const std::string& why) {
    return Error(ErrorCode::kInvalidArgument, options.model + ": method '" + impl->runner->method_name() + "' " + why +
                                                  " (ExecuTorch's LLM exporter writes tokens [1, S] and, with a KV cache, input_pos [1])");
  };
  if (m.num_inputs() < 1 || m.num_inputs() > 2) return bad_inputs("takes " + std::to_string(m.num_inputs()) + " inputs");
  const EValue& tokens = m.input(0);
  if (tokens.tag != Tag::kTensor || tokens.tensor == nullptr || tokens.tensor->dim() != 2 || tokens.tensor->size(0) != 1 ||
      (tokens.tensor->dtype() != ScalarType::kLong && tokens.tensor->dtype() != ScalarType::kInt)) {
    return bad_inputs("does not take tokens as an int64 or int32 [1, S] tensor");
  }
  impl->token_dtype = tokens.tensor->dtype();
  impl->per_call = std::max<int64_t>(tokens.tensor->size(1), 1);
  if (m.num_inputs() == 2) {
    const EValue& pos = m.input(1);
    if (pos.tag != Tag::kTensor || pos.tensor == nullptr || pos.tensor->numel() != 1 ||
        (pos.tensor->dtype() != ScalarType::kLong && pos.tensor->dtype() != ScalarType::kInt)) {
      return bad_inputs("does not take the position as a one-element int64 or int32 tensor");
    }
    impl->has_position = true;
  } else if (impl->metadata.use_kv_cache) {
    return bad_inputs("has a KV cache but no position input");
  }
  if (m.num_outputs() < 1 || m.output(0).tag != Tag::kTensor) return bad_inputs("does not return logits as its first output");
  return std::unique_ptr<Generator>(new Generator(std::move(impl)));
}

namespace {

std::vector<uint8_t> int_bytes(std::span<const int64_t> values, ScalarType dtype) {
  std::vector<uint8_t> out;
  if (dtype == ScalarType::kLong) {
    out.resize(values.size() * sizeof(int64_t));
    std::memcpy(out.data(), values.data(), out.size());
  } else {
    out.resize(values.size() * sizeof(int32_t));
    for (size_t i = 0; i < values.size(); ++i) {
      const auto v = static_cast<int32_t>(values[i]);
      std::memcpy(out.data() + i * sizeof(int32_t), &v, sizeof(v));
    }
  }
  return out;
}

}  // namespace

Result<std::vector<float>> Generator::forward(std::span<const int64_t> tokens, int64_t start_pos, Phase phase) {
  Impl& m = *impl_;
  const LlmMetadata& md = m.metadata;
  const auto n = static_cast<int64_t>(tokens.size());
  if (n == 0) return Error(ErrorCode::kInvalidArgument, m.where() + ": a call needs at least one token");
  for (int64_t id : tokens) {
    if (id < 0 || id >= md.vocab_size) {
      return Error(ErrorCode::kInvalidArgument, m.where() + ": token id " + std::to_string(id) + " lies outside the vocabulary of " +
                                                    std::to_string(md.vocab_size));
    }
  }
  if (n > m.per_call) {
    return Error(ErrorCode::kInvalidArgument, m.where() + ": " + std::to_string(n) + " tokens in one call; the method takes at most " +
                                                  std::to_string(m.per_call));
  }
  if (start_pos < 0 || start_pos > md.max_seq_len - n) {
    return Error(ErrorCode::kInvalidArgument, m.where() + ": positions " + std::to_string(start_pos) + ".." +
                                                  std::to_string(start_pos + n - 1) + " lie outside the context of " +
                                                  std::to_string(md.max_seq_len) + " tokens");
  }
  const int64_t token_sizes[2] = {1, n};
  ETSCOPE_TRY(m.runner->set_input(0, int_bytes(tokens, m.token_dtype), token_sizes));
  if (m.has_position) {
    const EValue& pos = m.runner->method().input(1);
    const int64_t p[1] = {start_pos};
    ETSCOPE_TRY(m.runner->set_input(1, int_bytes(p, pos.tensor->dtype()), pos.tensor->sizes()));
  }
  ETSCOPE_ASSIGN_OR_RETURN(double ms, m.runner->execute_once((phase == Phase::kPrefill ? events::kBlockPrefill : events::kBlockDecode).data()));
  m.calls.push_back(CallRecord{phase, start_pos, n, ms});
  const EValue& out = m.runner->output(0);
  if (out.tag != Tag::kTensor || out.tensor == nullptr || out.tensor->data() == nullptr) {
    return Error(ErrorCode::kCorrupt, m.where() + ": the method returned no logits tensor");
  }
  const TensorImpl& t = *out.tensor;
  const int64_t count = t.numel();
  if (count < md.vocab_size || count % md.vocab_size != 0) {
    return Error(ErrorCode::kCorrupt, m.where() + ": logits of " + std::to_string(count) + " values are not rows of the vocabulary's " +
                                          std::to_string(md.vocab_size));
  }
  std::vector<float> logits(static_cast<size_t>(md.vocab_size));
  const int64_t first = count - md.vocab_size;  // the last row: the last token's logits
  for (int64_t i = 0; i < md.vocab_size; ++i) {
    const int64_t k = first + i;
    switch (t.dtype()) {
      case ScalarType::kFloat: logits[static_cast<size_t>(i)] = t.data_as<float>()[k]; break;
      case ScalarType::kHalf: logits[static_cast<size_t>(i)] = half_to_float(t.data_as<uint16_t>()[k]); break;
      case ScalarType::kBFloat16: logits[static_cast<size_t>(i)] = bfloat16_to_float(t.data_as<uint16_t>()[k]); break;
      case ScalarType::kDouble: logits[static_cast<size_t>(i)] = static_cast<float>(t.data_as<double>()[k]); break;
      default:
        return Error(ErrorCode::kCorrupt, m.where() + ": logits are " + scalar_type_name(t.dtype()) + ", not floating point");
    }
  }
  return logits;
}

Result<GenerationResult> Generator::generate(std::span<const int64_t> prompt, const GenerationConfig& config,
                                             const std::function<void(int64_t)>& on_token) {
  using clock = std::chrono::steady_clock;
  Impl& m = *impl_;
  const LlmMetadata& md = m.metadata;
  const auto ms_since = [](clock::time_point t0) { return std::chrono::duration<double, std::milli>(clock::now() - t0).count(); };
  if (prompt.empty()) return Error(ErrorCode::kInvalidArgument, m.where() + ": the prompt has no tokens");
  const auto plen = static_cast<int64_t>(prompt.size());
  const int64_t context = std::min(md.max_seq_len, md.max_context_len);
  if (plen > context) {
    return Error(ErrorCode::kInvalidArgument, m.where() + ": the prompt's " + std::to_string(plen) +
                                                  " tokens do not fit the context of " + std::to_string(context));
  }
  if (!m.has_position && plen > m.per_call) {
    return Error(ErrorCode::kInvalidArgument, m.where() + ": the prompt's " + std::to_string(plen) +
                                                  " tokens do not fit one call of at most " + std::to_string(m.per_call));
  }
  if (config.max_new_tokens < 0) return Error(ErrorCode::kInvalidArgument, "the number of new tokens must not be negative");
  GenerationResult result;
  result.prompt.assign(prompt.begin(), prompt.end());
  result.load_ms = m.runner->load_ms();
  const size_t first_call = m.calls.size();
  Sampler sampler(config.temperature, config.top_p, config.seed);
  const std::vector<int64_t>& eos = md.eos_ids.empty() ? config.fallback_eos_ids : md.eos_ids;
  const clock::time_point start = clock::now();
  std::vector<float> logits;
  if (m.has_position) {
    for (int64_t at = 0; at < plen; at += m.per_call) {
      const int64_t n = std::min(m.per_call, plen - at);
      ETSCOPE_ASSIGN_OR_RETURN(logits, forward(prompt.subspan(static_cast<size_t>(at), static_cast<size_t>(n)), at, Phase::kPrefill));
    }
  } else {
    ETSCOPE_ASSIGN_OR_RETURN(logits, forward(prompt, 0, Phase::kPrefill));
  }
  std::vector<int64_t> sequence = result.prompt;  // what a program without a KV cache is fed
  while (true) {
    const clock::time_point s0 = clock::now();
    const int64_t token = sampler.sample(logits);
    result.sampling_ms += ms_since(s0);
    result.generated.push_back(token);
    if (result.generated.size() == 1) result.first_token_ms = ms_since(start);
    if (on_token) on_token(token);
    if (config.stop_at_eos && std::find(eos.begin(), eos.end(), token) != eos.end()) {
      result.stop_reason = "eos";
      break;
    }
    if (config.max_new_tokens > 0 && static_cast<int64_t>(result.generated.size()) >= config.max_new_tokens) {
      result.stop_reason = "max_new_tokens";
      break;
    }
    const int64_t position = plen + static_cast<int64_t>(result.generated.size()) - 1;  // the new token's
    if (position >= context || (!m.has_position && position + 1 > m.per_call)) {
      result.stop_reason = "context";
      break;
    }
    if (m.has_position) {
      const int64_t one[1] = {token};
      ETSCOPE_ASSIGN_OR_RETURN(logits, forward(one, position, Phase::kDecode));
    } else {
      sequence.push_back(token);
      ETSCOPE_ASSIGN_OR_RETURN(logits, forward(sequence, 0, Phase::kDecode));
      m.calls.back().position = position;
    }
  }
  result.total_ms = ms_since(start);
  result.calls.assign(m.calls.begin() + static_cast<std::ptrdiff_t>(first_call), m.calls.end());
  return result;
}

}  // namespace etscope::llm
