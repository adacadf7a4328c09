#include "etscope/llm/metadata.h"

#include <string_view>

#include "etscope/runtime/method.h"

namespace etscope::llm {
namespace {

bool has_method(const Program& program, std::string_view name) { return program.find_plan(std::string(name)) != nullptr; }

// Executes the constant method `name` and returns its outputs as integers (bools as 0/1; a
// one-element or 1-D integer tensor contributes its elements).
Result<std::vector<int64_t>> method_values(const Program& program, const std::string& name) {
  auto where = [&](const std::string& what) { return program.name() + ": metadata method " + name + ": " + what; };
  auto loaded = runtime::Method::load(program, name);
  if (!loaded.ok()) return loaded.error();
  runtime::Method& m = **loaded;
  if (m.num_inputs() != 0) return Error(ErrorCode::kCorrupt, where("takes inputs; a metadata method takes none"));
  ETSCOPE_TRY(m.execute());
  std::vector<int64_t> out;
  for (size_t i = 0; i < m.num_outputs(); ++i) {
    const EValue& v = m.output(i);
    if (v.tag == Tag::kInt) {
      out.push_back(v.scalar.i);
    } else if (v.tag == Tag::kBool) {
      out.push_back(v.scalar.b ? 1 : 0);
    } else if (v.tag == Tag::kTensor && v.tensor != nullptr && v.tensor->data() != nullptr && v.tensor->dim() <= 1 &&
               (v.tensor->dtype() == ScalarType::kLong || v.tensor->dtype() == ScalarType::kInt)) {
      for (int64_t k = 0; k < v.tensor->numel(); ++k) {
        out.push_back(v.tensor->dtype() == ScalarType::kLong ? v.tensor->data_as<int64_t>()[k] : v.tensor->data_as<int32_t>()[k]);
      }
    } else {
      return Error(ErrorCode::kCorrupt, where("returns a " + std::string(to_string(v.tag)) + ", not an int or bool"));
    }
  }
  return out;
}

Result<int64_t> single_value(const Program& program, const std::string& name) {
  ETSCOPE_ASSIGN_OR_RETURN(std::vector<int64_t> values, method_values(program, name));
  if (values.size() != 1) {
    return Error(ErrorCode::kCorrupt, program.name() + ": metadata method " + name + " returns " + std::to_string(values.size()) +
                                          " values, not one");
  }
  return values.front();
}

}  // namespace

bool has_llm_metadata(const Program& program) {
  return has_method(program, "get_max_seq_len") || has_method(program, "get_vocab_size");
}

Result<LlmMetadata> read_llm_metadata(const Program& program) {
  LlmMetadata md;
  for (const char* required : {"get_max_seq_len", "get_vocab_size"}) {
    if (!has_method(program, required)) {
      return Error(ErrorCode::kNotFound, program.name() + ": no metadata method " + required +
                                             " (ExecuTorch's LLM exporter writes it; is this an LLM export?)");
    }
  }
  auto read_int = [&](const char* name, int64_t* target) -> Status {
    if (!has_method(program, name)) return ok_status();
    ETSCOPE_ASSIGN_OR_RETURN(*target, single_value(program, name));
    md.methods.emplace_back(name);
    return ok_status();
  };
  auto read_bool = [&](const char* name, bool* target) -> Status {
    int64_t v = *target ? 1 : 0;
    ETSCOPE_TRY(read_int(name, &v));
    *target = v != 0;
    return ok_status();
  };
  ETSCOPE_TRY(read_int("get_max_seq_len", &md.max_seq_len));
  md.max_context_len = md.max_seq_len;
  ETSCOPE_TRY(read_int("get_max_context_len", &md.max_context_len));
  ETSCOPE_TRY(read_int("get_vocab_size", &md.vocab_size));
  if (has_method(program, "get_bos_id")) {
    int64_t bos = 0;
    ETSCOPE_TRY(read_int("get_bos_id", &bos));
    md.bos_id = bos;
  }
  if (has_method(program, "get_eos_ids")) {
    ETSCOPE_ASSIGN_OR_RETURN(md.eos_ids, method_values(program, "get_eos_ids"));
    md.methods.emplace_back("get_eos_ids");
  } else if (has_method(program, "get_eos_id")) {
    ETSCOPE_ASSIGN_OR_RETURN(md.eos_ids, method_values(program, "get_eos_id"));
    md.methods.emplace_back("get_eos_id");
  }
  if (has_method(program, "get_n_layers")) {
    int64_t n = 0;
    ETSCOPE_TRY(read_int("get_n_layers", &n));
    md.n_layers = n;
  }
  ETSCOPE_TRY(read_bool("use_kv_cache", &md.use_kv_cache));
  ETSCOPE_TRY(read_bool("use_sdpa_with_kv_cache", &md.use_sdpa_with_kv_cache));
  ETSCOPE_TRY(read_bool("enable_dynamic_shape", &md.enable_dynamic_shape));
  if (md.max_seq_len <= 0 || md.max_context_len <= 0 || md.vocab_size <= 0) {
    return Error(ErrorCode::kCorrupt, program.name() + ": metadata says max_seq_len " + std::to_string(md.max_seq_len) +
                                          ", max_context_len " + std::to_string(md.max_context_len) + ", vocab_size " +
                                          std::to_string(md.vocab_size) + ": each must be positive");
  }
  for (int64_t id : md.eos_ids) {
    if (id < 0 || id >= md.vocab_size) {
      return Error(ErrorCode::kCorrupt, program.name() + ": end-of-sequence id " + std::to_string(id) + " lies outside the vocabulary of " +
                                            std::to_string(md.vocab_size));
    }
  }
  return md;
}

}  // namespace etscope::llm
