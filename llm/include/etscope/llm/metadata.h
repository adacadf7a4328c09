// The metadata an LLM export carries as constant methods, read the way ExecuTorch's LLM runner
// reads them: get_max_seq_len, get_max_context_len, get_vocab_size, get_bos_id, get_eos_ids,
// get_n_layers, use_kv_cache, use_sdpa_with_kv_cache, enable_dynamic_shape. Each is a method of
// no inputs whose outputs are the value(s); etscope executes it with its own runtime.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "etscope/core/result.h"
#include "etscope/formats/program.h"

namespace etscope::llm {

struct LlmMetadata {
  int64_t max_seq_len = 0;      ///< get_max_seq_len (required): positions the KV cache holds.
  int64_t max_context_len = 0;  ///< get_max_context_len, else max_seq_len.
  int64_t vocab_size = 0;       ///< get_vocab_size (required): the logits' width.
  std::optional<int64_t> bos_id;  ///< get_bos_id, when the program has it.
  std::vector<int64_t> eos_ids;   ///< get_eos_ids, when the program has it.
  std::optional<int64_t> n_layers;
  /// As ExecuTorch's runner defaults them when the method is absent.
  bool use_kv_cache = true;
  bool use_sdpa_with_kv_cache = false;
  bool enable_dynamic_shape = false;
  /// The metadata methods the program has, in the order read.
  std::vector<std::string> methods;
};

/// True when `program` looks like an LLM export (it has get_max_seq_len or get_vocab_size).
bool has_llm_metadata(const Program& program);

/// Reads the metadata. Errors (naming the program): get_max_seq_len or get_vocab_size missing
/// (kNotFound: "is this an export of ExecuTorch's LLM exporter?"), a metadata method that fails
/// or returns something other than ints/bools, values out of range (negative lengths).
Result<LlmMetadata> read_llm_metadata(const Program& program);

}  // namespace etscope::llm
