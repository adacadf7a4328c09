#include "regex_splitter.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include "utf8.h"

namespace etscope::tokenizer {

struct RegexSplitter::Impl {
  pcre2_code* code = nullptr;
  ~Impl() { pcre2_code_free(code); }
};

RegexSplitter::RegexSplitter(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
RegexSplitter::RegexSplitter(RegexSplitter&&) noexcept = default;
RegexSplitter& RegexSplitter::operator=(RegexSplitter&&) noexcept = default;
RegexSplitter::~RegexSplitter() = default;

Result<RegexSplitter> RegexSplitter::compile(std::string_view pattern) {
  int error_code = 0;
  PCRE2_SIZE error_offset = 0;
  pcre2_code* code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern.data()), pattern.size(),
                                   PCRE2_UTF | PCRE2_UCP, &error_code, &error_offset, nullptr);
  if (code == nullptr) {
    PCRE2_UCHAR message[256];
    pcre2_get_error_message(error_code, message, sizeof(message));
    return Error(ErrorCode::kNotSupported, "split pattern does not compile at offset " + std::to_string(error_offset) +
                                               ": " + reinterpret_cast<const char*>(message));
  }
  // The JIT is an optimisation only: without it (a platform PCRE2 has no JIT for) matching is
  // the same, slower.
  (void)pcre2_jit_compile(code, PCRE2_JIT_COMPLETE);
  auto impl = std::make_unique<Impl>();
  impl->code = code;
  return RegexSplitter(std::move(impl));
}

Result<std::vector<std::pair<size_t, size_t>>> RegexSplitter::matches(std::string_view text) const {
  std::vector<std::pair<size_t, size_t>> out;
  pcre2_match_data* data = pcre2_match_data_create_from_pattern(impl_->code, nullptr);
  const auto* subject = reinterpret_cast<PCRE2_SPTR>(text.data());
  size_t start = 0;
  while (start <= text.size()) {
    // The caller validated the text: skip PCRE2's own UTF check, which would rescan it per match.
    const int rc = pcre2_match(impl_->code, subject, text.size(), start, PCRE2_NO_UTF_CHECK, data, nullptr);
    if (rc == PCRE2_ERROR_NOMATCH) break;
    if (rc < 0) {
      PCRE2_UCHAR message[256];
      pcre2_get_error_message(rc, message, sizeof(message));
      pcre2_match_data_free(data);
      return Error(ErrorCode::kOutOfResources, "the split pattern failed at byte " + std::to_string(start) + ": " +
                                                   reinterpret_cast<const char*>(message));
    }
    const PCRE2_SIZE* ov = pcre2_get_ovector_pointer(data);
    const size_t b = ov[0], e = ov[1];
    if (e > b) {
      out.emplace_back(b, e);
      start = e;
    } else {
      if (b >= text.size()) break;
      start = b + utf8_char_length(static_cast<unsigned char>(text[b]));
    }
  }
  pcre2_match_data_free(data);
  return out;
}

}  // namespace etscope::tokenizer
