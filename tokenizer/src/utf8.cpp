#include "utf8.h"

#include <string>

#include "etscope/tokenizer/tokenizer.h"

namespace etscope::tokenizer {
namespace {

// Length of the valid UTF-8 sequence at bytes[pos], 0 if none starts there. `complete` reports
// whether a valid-so-far sequence was cut by the end of the input (so that more bytes could still
// complete it); `valid_prefix` how many bytes of it were valid (Unicode's "maximal subpart").
size_t valid_sequence(std::string_view bytes, size_t pos, bool& cut, size_t& valid_prefix) {
  const auto b0 = static_cast<unsigned char>(bytes[pos]);
  cut = false;
  valid_prefix = 1;
  if (b0 < 0x80) return 1;
  size_t need = 0;
  unsigned char lo = 0x80, hi = 0xBF;
  if (b0 >= 0xC2 && b0 <= 0xDF) {
    need = 2;
  } else if (b0 >= 0xE0 && b0 <= 0xEF) {
    need = 3;
    if (b0 == 0xE0) lo = 0xA0;
    if (b0 == 0xED) hi = 0x9F;
  } else if (b0 >= 0xF0 && b0 <= 0xF4) {
    need = 4;
    if (b0 == 0xF0) lo = 0x90;
    if (b0 == 0xF4) hi = 0x8F;
  } else {
    return 0;
  }
  for (size_t k = 1; k < need; ++k) {
    if (pos + k >= bytes.size()) {
      cut = true;
      return 0;
    }
    const auto b = static_cast<unsigned char>(bytes[pos + k]);
    const unsigned char l = k == 1 ? lo : 0x80, h = k == 1 ? hi : 0xBF;
    if (b < l || b > h) return 0;
    valid_prefix = k + 1;
  }
  return need;
}

}  // namespace

size_t first_invalid_utf8(std::string_view text) {
  size_t pos = 0;
  while (pos < text.size()) {
    bool cut = false;
    size_t valid_prefix = 0;
    const size_t n = valid_sequence(text, pos, cut, valid_prefix);
    if (n == 0) return pos;
    pos += n;
  }
  return text.size();
}

size_t utf8_char_length(unsigned char lead) {
  if (lead < 0x80) return 1;
  if (lead >= 0xF0) return 4;
  if (lead >= 0xE0) return 3;
  if (lead >= 0xC0) return 2;
  return 1;
}

void append_utf8(std::string& out, char32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

char32_t next_code_point(std::string_view text, size_t& pos) {
  const auto b0 = static_cast<unsigned char>(text[pos]);
  const size_t n = std::min(utf8_char_length(b0), text.size() - pos);
  char32_t cp = n == 1 ? b0 : (b0 & (0xFF >> (n + 1)));
  for (size_t k = 1; k < n; ++k) cp = (cp << 6) | (static_cast<unsigned char>(text[pos + k]) & 0x3F);
  pos += n;
  return cp;
}

const std::array<char32_t, 256>& byte_to_char() {
  static const std::array<char32_t, 256> table = [] {
    std::array<char32_t, 256> t{};
    char32_t next = 256;
    for (int b = 0; b < 256; ++b) {
      const bool printable = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
      t[b] = printable ? static_cast<char32_t>(b) : next++;
    }
    return t;
  }();
  return table;
}

int char_to_byte(char32_t c) {
  static const std::array<int16_t, 324> table = [] {
    std::array<int16_t, 324> t{};
    t.fill(-1);
    const auto& forward = byte_to_char();
    for (int b = 0; b < 256; ++b) t[forward[b]] = static_cast<int16_t>(b);
    return t;
  }();
  return c < table.size() ? table[c] : -1;
}

std::string repair_utf8(std::string_view bytes) {
  std::string out;
  out.reserve(bytes.size());
  size_t pos = 0;
  while (pos < bytes.size()) {
    bool cut = false;
    size_t valid_prefix = 0;
    const size_t n = valid_sequence(bytes, pos, cut, valid_prefix);
    if (n > 0) {
      out.append(bytes.substr(pos, n));
      pos += n;
    } else {
      out += "\xEF\xBF\xBD";
      pos += cut ? bytes.size() - pos : valid_prefix;
    }
  }
  return out;
}

size_t settled_utf8_prefix(std::string_view bytes) {
  // Only the last four bytes can start a sequence the next bytes might complete.
  const size_t from = bytes.size() > 4 ? bytes.size() - 4 : 0;
  size_t pos = 0;
  while (pos < bytes.size()) {
    bool cut = false;
    size_t valid_prefix = 0;
    const size_t n = valid_sequence(bytes, pos, cut, valid_prefix);
    if (cut && pos >= from) return pos;
    pos += n > 0 ? n : valid_prefix;
  }
  return bytes.size();
}

}  // namespace etscope::tokenizer
