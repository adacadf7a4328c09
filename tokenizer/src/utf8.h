// UTF-8 helpers private to the tokenizer library: validation, code points, and GPT-2's byte-level
// alphabet (each byte shown as one printable character, as byte-level BPE vocabularies spell
// their tokens).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace etscope::tokenizer {

/// Byte offset of the first invalid UTF-8 sequence in `text`, or text.size() when it is valid.
size_t first_invalid_utf8(std::string_view text);

/// Length in bytes of the UTF-8 character starting with `lead` (1 for a stray byte).
size_t utf8_char_length(unsigned char lead);

/// Appends the UTF-8 encoding of code point `cp` to `out`.
void append_utf8(std::string& out, char32_t cp);

/// Decodes the valid UTF-8 character at `text[pos]`, advancing pos. Callers validated the text.
char32_t next_code_point(std::string_view text, size_t& pos);

/// GPT-2's byte-level alphabet: byte b is written as the character byte_to_char()[b]; printable
/// Latin-1 bytes stand for themselves and the others are moved to U+0100 onwards.
const std::array<char32_t, 256>& byte_to_char();
/// The byte a byte-level character stands for, or -1 for a character outside the alphabet.
int char_to_byte(char32_t c);

}  // namespace etscope::tokenizer
