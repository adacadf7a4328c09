// The loaders behind load_tokenizer(), one per file kind. Each takes the whole file and the name
// errors start with.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "etscope/tokenizer/tokenizer.h"

namespace etscope::tokenizer {

Result<std::unique_ptr<Tokenizer>> load_huggingface(std::string_view json_text, const std::string& name);
Result<std::unique_ptr<Tokenizer>> load_tiktoken(std::string_view text, const std::string& name);
Result<std::unique_ptr<Tokenizer>> load_sentencepiece(std::string_view bytes, const std::string& name);

/// Applies Unicode NFC to valid UTF-8 (through ICU when the build found it); nullopt when this
/// build has no ICU.
bool nfc_available();
Result<std::string> nfc_normalize(std::string_view text);

}  // namespace etscope::tokenizer
