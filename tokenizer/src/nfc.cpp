// Unicode NFC for tokenizer.json normalizers (Qwen2's), through ICU when the build found it: the
// composition tables are Unicode data that ICU keeps current, not something to copy by hand.
#include "loaders.h"

#ifdef ETSCOPE_HAVE_ICU
#include <unicode/unorm2.h>
#include <unicode/ustring.h>
#endif

#include <vector>

namespace etscope::tokenizer {

#ifdef ETSCOPE_HAVE_ICU
bool nfc_available() { return true; }

Result<std::string> nfc_normalize(std::string_view text) {
  // ASCII is always in NFC.
  bool ascii = true;
  for (char c : text) ascii = ascii && static_cast<unsigned char>(c) < 0x80;
  if (ascii) return std::string(text);
  UErrorCode status = U_ZERO_ERROR;
  const UNormalizer2* nfc = unorm2_getNFCInstance(&status);
  if (U_FAILURE(status)) return Error(ErrorCode::kInternal, std::string("ICU has no NFC normalizer: ") + u_errorName(status));
  const auto length = static_cast<int32_t>(text.size());
  std::vector<UChar> utf16(text.size() + 1);
  int32_t utf16_length = 0;
  u_strFromUTF8(utf16.data(), static_cast<int32_t>(utf16.size()), &utf16_length, text.data(), length, &status);
  if (U_FAILURE(status)) return Error(ErrorCode::kInvalidArgument, std::string("text is not valid UTF-8 for NFC: ") + u_errorName(status));
  // NFC output is at most three times its input in UTF-16 code units.
  std::vector<UChar> normalized(static_cast<size_t>(utf16_length) * 3 + 1);
  const int32_t normalized_length =
      unorm2_normalize(nfc, utf16.data(), utf16_length, normalized.data(), static_cast<int32_t>(normalized.size()), &status);
  if (U_FAILURE(status)) return Error(ErrorCode::kInternal, std::string("NFC normalization failed: ") + u_errorName(status));
  std::string out(static_cast<size_t>(normalized_length) * 3 + 1, '\0');
  int32_t out_length = 0;
  u_strToUTF8(out.data(), static_cast<int32_t>(out.size()), &out_length, normalized.data(), normalized_length, &status);
  if (U_FAILURE(status)) return Error(ErrorCode::kInternal, std::string("NFC normalization failed: ") + u_errorName(status));
  out.resize(static_cast<size_t>(out_length));
  return out;
}
#else
bool nfc_available() { return false; }
Result<std::string> nfc_normalize(std::string_view) {
  return Error(ErrorCode::kNotSupported, "NFC normalization needs ICU, which this build did not find");
}
#endif

}  // namespace etscope::tokenizer
