// Regex pre-tokenization through PCRE2.
//
// Why PCRE2: the split patterns of Llama 3, GPT-2/4 and Qwen need Unicode properties (\p{L},
// \p{N}), Unicode-aware \s, case-insensitive groups and a negative lookahead (`\s+(?!\S)`).
// std::regex has no Unicode classes (and works on bytes, not characters); RE2 has no lookahead;
// hand-written Unicode tables would go stale with each Unicode version. PCRE2 (Debian's
// libpcre2-dev) accepts the same Perl syntax as the engines behind tiktoken (fancy-regex) and
// Hugging Face tokenizers (Oniguruma), with UTF and UCP modes and a JIT.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "etscope/core/result.h"

namespace etscope::tokenizer {

class RegexSplitter {
 public:
  /// Compiles `pattern` (UTF, UCP; JIT-compiled when the library supports it). The error names
  /// the pattern offset PCRE2 stopped at.
  static Result<RegexSplitter> compile(std::string_view pattern);

  RegexSplitter(RegexSplitter&&) noexcept;
  RegexSplitter& operator=(RegexSplitter&&) noexcept;
  ~RegexSplitter();

  /// Every non-overlapping match in `text` (valid UTF-8), left to right, as [begin, end) byte
  /// ranges. An empty match advances one character. Fails (never silently stops early) when
  /// PCRE2 gives up on a match, e.g. at its backtracking limit.
  Result<std::vector<std::pair<size_t, size_t>>> matches(std::string_view text) const;

 private:
  struct Impl;
  explicit RegexSplitter(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace etscope::tokenizer
