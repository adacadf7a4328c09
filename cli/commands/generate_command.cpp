// etscope generate: runs an LLM export of ExecuTorch's LLM exporter token by token (etscope's
// engine), streams the tokens, and prints ExecuTorch's runner statistics with per-token decode
// latency percentiles. The loop and every figure come from etscope::llm.
#include <algorithm>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "commands/command.h"
#include "commands/store_options.h"
#include "etscope/core/text.h"
#include "etscope/llm/generation_stats.h"
#include "etscope/llm/generator.h"
#include "etscope/tokenizer/tokenizer.h"
#include "render/json_output.h"

namespace etscope::cli {
namespace {

// "1, 2,3" -> {1, 2, 3}; nullopt with a message for anything else.
Result<std::vector<int64_t>> parse_ids(const std::string& text) {
  std::vector<int64_t> ids;
  size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && (text[i] == ' ' || text[i] == ',')) ++i;
    if (i >= text.size()) break;
    size_t end = i;
    if (text[end] == '-' || text[end] == '+') ++end;
    while (end < text.size() && text[end] >= '0' && text[end] <= '9') ++end;
    const std::string item = text.substr(i, end - i);
    if (item.empty() || item == "-" || item == "+" || (end < text.size() && text[end] != ',' && text[end] != ' ') || item.size() > 18) {
      return Error(ErrorCode::kInvalidArgument, "--prompt-ids takes comma-separated token ids (got '" + text + "')");
    }
    ids.push_back(std::stoll(item));
    i = end;
  }
  if (ids.empty()) return Error(ErrorCode::kInvalidArgument, "--prompt-ids has no token ids");
  return ids;
}

class GenerateCommand : public Command {
 public:
  CLI::App* add_to(CLI::App& app) override {
    CLI::App* sub = app.add_subcommand("generate", "Generate with an LLM export (ExecuTorch's LLM exporter) and profile it token by token");
    sub->add_option("model", model_, "The .pte")->required();
    sub->add_option("--ptd", ptd_files_, "Tensor-data file with external tensors (repeatable)");
    auto* ids = sub->add_option("--prompt-ids", prompt_ids_, "The prompt as token ids, comma-separated");
    auto* tok = sub->add_option("--tokenizer", tokenizer_path_, "Tokenizer file: Hugging Face tokenizer.json, tiktoken or SentencePiece .model");
    auto* text = sub->add_option("--prompt", prompt_, "The prompt as text (with --tokenizer), encoded with the tokenizer's BOS");
    ids->excludes(text);
    text->needs(tok);
    sub->add_option("--max-new-tokens", max_new_tokens_, "Stop after this many new tokens (default: until an end-of-sequence id or the context is full)");
    sub->add_option("--temperature", temperature_, "0 (default): greedy; above 0: sample at this temperature");
    sub->add_option("--top-p", top_p_, "With --temperature: sample from the smallest set of tokens whose probability reaches P (default 1: all)");
    sub->add_option("--seed", seed_, "Seed of the sampler (default 0)");
    sub->add_option("--threads", threads_, "Threads of the engine (its XNNPACK linear layers split their outputs over them); default 1")
        ->check(CLI::Range(1, 1024));
    sub->add_option("--amx", amx_,
                    "auto (default): a prefill's quantized linear layers multiply their integers on Intel AMX tiles where the "
                    "CPU offers them (the same outputs); off: AVX-512 only, as ExecuTorch's XNNPACK computes")
        ->check(CLI::IsMember({"auto", "off"}));
    sub->add_flag("--ignore-eos", ignore_eos_, "Do not stop at end-of-sequence ids");
    sub->add_option("--etdump", etdump_path_, "Record the load and every call (blocks \"Prefill\" and \"Decode\", in call order) as an ETDump");
    store_option_ = add_store_option(sub, store_location_)->expected(0, 1);
    sub->add_option("--tag", tags_, "With --store: key=value labels of the stored run (repeatable)");
    format_.add_to(sub, "docs/json.md, generate");
    return sub;
  }

  Result<int> run() override {
    auto usage = [](const std::string& message) {
      std::fprintf(stderr, "etscope generate: %s\n", message.c_str());
      return 2;
    };
    if (max_new_tokens_ < 0) return usage("--max-new-tokens cannot be negative");
    if (temperature_ < 0) return usage("--temperature cannot be negative");
    if (!(top_p_ > 0) || top_p_ > 1) return usage("--top-p takes a probability in (0, 1]");
    if (!etdump_path_.empty() && (etdump_path_ == model_ || std::find(ptd_files_.begin(), ptd_files_.end(), etdump_path_) != ptd_files_.end())) {
      return usage("--etdump names one of the inputs");
    }
    if (prompt_ids_.empty() && prompt_.empty()) return usage("give the prompt as --prompt-ids IDS, or as --tokenizer FILE --prompt TEXT");
    std::unique_ptr<tokenizer::Tokenizer> tok;
    if (!tokenizer_path_.empty()) {
      auto loaded = tokenizer::load_tokenizer(tokenizer_path_);
      if (!loaded.ok()) return loaded.error();
      tok = std::move(*loaded);
    }
    Result<std::vector<int64_t>> ids = prompt_.empty() ? parse_ids(prompt_ids_) : Result<std::vector<int64_t>>(std::vector<int64_t>{});
    if (!ids.ok()) return usage(ids.error().message());
    if (!prompt_.empty()) {
      ETSCOPE_ASSIGN_OR_RETURN(*ids, tok->encode(prompt_, tok->bos_id().has_value(), false));
      if (ids->empty()) return usage("--prompt encodes to no tokens");
    }
    const bool json = format_.json();

    runner::RunnerOptions options;
    options.model = model_;
    options.ptd_files = ptd_files_;
    options.engine = runner::EngineKind::kEtscope;
    options.threads = static_cast<uint32_t>(threads_);
    options.matrix_tiles = amx_ == "off" ? runtime::MatrixTiles::kOff : runtime::MatrixTiles::kAuto;
    const bool store = store_option_->count() > 0;
    if (!tags_.empty() && !store) return usage("--tag needs --store");
    options.trace = !etdump_path_.empty() || store;
    ETSCOPE_ASSIGN_OR_RETURN(std::unique_ptr<llm::Generator> generator, llm::Generator::load(options));
    const llm::LlmMetadata& md = generator->metadata();
    if (tok && tok->vocab_size() > md.vocab_size) {
      return Error(ErrorCode::kInvalidArgument, tokenizer_path_ + ": the tokenizer has " + std::to_string(tok->vocab_size()) +
                                                    " ids, the program's vocabulary " + std::to_string(md.vocab_size) +
                                                    ": they do not belong together");
    }
    if (!json) {
      std::printf("model      %s\n", model_.c_str());
      const uint32_t threads = generator->runner().engine_threads();
      std::printf("engine     etscope %s, %u thread%s (etscope's own kernels)\n", generator->runner().engine_version().c_str(), threads,
                  threads == 1 ? "" : "s");
      std::printf("context    %lld tokens, vocabulary %lld, %s, %s\n", static_cast<long long>(md.max_seq_len),
                  static_cast<long long>(md.vocab_size), md.use_kv_cache ? "KV cache" : "no KV cache",
                  generator->max_tokens_per_call() > 1 ? ("prefill up to " + std::to_string(generator->max_tokens_per_call()) + " tokens a call").c_str()
                                                       : "one token a call");
      std::printf("prompt     %zu tokens\n", ids->size());
      if (!tok) std::printf("tokens    ");
      std::fflush(stdout);
    }
    llm::GenerationConfig config;
    config.max_new_tokens = max_new_tokens_;
    config.temperature = temperature_;
    config.top_p = top_p_;
    config.seed = seed_;
    config.stop_at_eos = !ignore_eos_;
    if (tok) config.fallback_eos_ids = tok->eos_ids();
    std::optional<tokenizer::StreamDecoder> stream;
    if (tok) stream.emplace(*tok);
    std::string text;
    if (!json && tok) std::printf("text       %s", prompt_.c_str());
    auto result = generator->generate(*ids, config, [&](int64_t token) {
      if (stream) {
        auto piece = stream->next(token);
        if (piece.ok()) text += *piece;
        if (!json && piece.ok()) std::printf("%s", piece->c_str());
      } else if (!json) {
        std::printf(" %lld", static_cast<long long>(token));
      }
      if (!json) std::fflush(stdout);
    });
    if (stream) {
      const std::string rest = stream->finish();
      text += rest;
      if (!json) std::printf("%s", rest.c_str());
    }
    if (!json) std::printf("\n");
    // The dump is written even when generation failed part way: it shows what ran.
    Status trace = write_trace(*generator, json);
    if (!result.ok()) return result.error();
    ETSCOPE_TRY(trace);
    const llm::GenerationStats s = llm::generation_stats(*result);
    std::optional<StoredRun> stored;
    if (store) {
      // The generation's dump (Prefill and Decode blocks) with its figures as tags, so that
      // `runs`, `history` and `compare` find generation runs and their tokens per second.
      store::ImportRequest req;
      req.etdump = etdump_path_;
      req.pte = model_;
      req.method = generator->runner().method_name();
      req.source = "generate";
      std::vector<std::string> tags = tags_;
      tags.push_back("prompt_tokens=" + std::to_string(s.prompt_tokens));
      tags.push_back("generated_tokens=" + std::to_string(s.generated_tokens));
      tags.push_back("prefill_tokens_per_s=" + significant_text(s.prefill_tokens_per_s));
      tags.push_back("decode_tokens_per_s=" + significant_text(s.decode_tokens_per_s));
      ETSCOPE_ASSIGN_OR_RETURN(stored, store_run(store_location_, tags, std::move(req), &generator->runner()));
    }
    if (json) {
      Json j;
      j["model"] = model_;
      j["engine"] = "etscope";
      j["engine_version"] = generator->runner().engine_version();
      j["engine_threads"] = generator->runner().engine_threads();
      j["metadata"] = Json{{"max_seq_len", md.max_seq_len},
                           {"max_context_len", md.max_context_len},
                           {"vocab_size", md.vocab_size},
                           {"bos_id", md.bos_id ? Json(*md.bos_id) : Json()},
                           {"eos_ids", md.eos_ids},
                           {"use_kv_cache", md.use_kv_cache},
                           {"use_sdpa_with_kv_cache", md.use_sdpa_with_kv_cache},
                           {"enable_dynamic_shape", md.enable_dynamic_shape}};
      j["prompt_ids"] = result->prompt;
      j["generated_ids"] = result->generated;
      if (tok) {
        j["prompt"] = prompt_;
        j["text"] = text;
        j["tokenizer"] = tokenizer_path_;
      }
      j["stop_reason"] = result->stop_reason;
      Json calls = Json::array();
      for (const llm::CallRecord& c : result->calls) {
        calls.push_back(Json{{"phase", llm::to_string(c.phase)}, {"position", c.position}, {"tokens", c.tokens}, {"ms", number_json(c.ms)}});
      }
      j["calls"] = std::move(calls);
      j["stats"] = Json{{"prompt_tokens", s.prompt_tokens},
                        {"generated_tokens", s.generated_tokens},
                        {"prefill_calls", s.prefill_calls},
                        {"decode_calls", s.decode_calls},
                        {"load_ms", number_json(s.load_ms)},
                        {"prefill_ms", number_json(s.prefill_ms)},
                        {"decode_ms", number_json(s.decode_ms)},
                        {"first_token_ms", number_json(s.first_token_ms)},
                        {"sampling_ms", number_json(s.sampling_ms)},
                        {"total_ms", number_json(s.total_ms)},
                        {"prefill_tokens_per_s", number_json(s.prefill_tokens_per_s)},
                        {"decode_tokens_per_s", number_json(s.decode_tokens_per_s)},
                        {"decode_ms_percentiles",
                         Json{{"min", number_json(s.decode_min_ms)},
                              {"p50", number_json(s.decode_p50_ms)},
                              {"p90", number_json(s.decode_p90_ms)},
                              {"p99", number_json(s.decode_p99_ms)},
                              {"max", number_json(s.decode_max_ms)}}}};
      if (!etdump_path_.empty()) j["etdump"] = etdump_path_;
      if (stored) j["store"] = Json{{"run_id", stored->run_id}, {"location", stored->location}};
      std::printf("%s\n", dump_json(j).c_str());
      return 0;
    }
    std::printf("stopped    %s after %s\n", result->stop_reason.c_str(), count_text(static_cast<uint64_t>(s.generated_tokens), "new token").c_str());
    std::printf("load       %s\n", duration_text_ms(s.load_ms).c_str());
    std::printf("prefill    %s in %s (%s), %s tokens/s\n", count_text(static_cast<uint64_t>(s.prompt_tokens), "token").c_str(),
                count_text(static_cast<uint64_t>(s.prefill_calls), "call").c_str(), duration_text_ms(s.prefill_ms).c_str(),
                significant_text(s.prefill_tokens_per_s).c_str());
    std::printf("first      token after %s\n", duration_text_ms(s.first_token_ms).c_str());
    if (s.decode_calls > 0) {
      std::printf("decode     %s (%s), %s tokens/s; per token p50 %s  p90 %s  p99 %s  max %s\n",
                  count_text(static_cast<uint64_t>(s.decode_calls), "call").c_str(), duration_text_ms(s.decode_ms).c_str(),
                  significant_text(s.decode_tokens_per_s).c_str(), duration_text_ms(s.decode_p50_ms).c_str(),
                  duration_text_ms(s.decode_p90_ms).c_str(), duration_text_ms(s.decode_p99_ms).c_str(), duration_text_ms(s.decode_max_ms).c_str());
    }
    std::printf("sampling   %s\n", duration_text_ms(s.sampling_ms).c_str());
    std::printf("total      %s\n", duration_text_ms(s.total_ms).c_str());
    if (stored) std::printf("store      run %lld in %s\n", static_cast<long long>(stored->run_id), stored->location.c_str());
    return 0;
  }

 private:
  Status write_trace(llm::Generator& generator, bool json) {
    if (etdump_path_.empty()) return ok_status();
    auto files = generator.runner().write_trace(etdump_path_, "");
    if (!files.ok()) return files.error();
    if (!json) std::printf("etdump     %s: %zu events, %zu bytes\n", etdump_path_.c_str(), files->events, files->etdump_bytes);
    return ok_status();
  }

  std::string model_;
  std::vector<std::string> ptd_files_;
  std::string prompt_ids_;
  std::string tokenizer_path_;
  std::string prompt_;
  int64_t max_new_tokens_ = 0;
  double temperature_ = 0;
  double top_p_ = 1.0;
  uint64_t seed_ = 0;
  int threads_ = 1;
  std::string amx_ = "auto";
  bool ignore_eos_ = false;
  std::string etdump_path_;
  std::string store_location_;
  CLI::Option* store_option_ = nullptr;
  std::vector<std::string> tags_;
  ReportFormat format_;
};

}  // namespace

std::unique_ptr<Command> make_generate_command() { return std::make_unique<GenerateCommand>(); }

}  // namespace etscope::cli
