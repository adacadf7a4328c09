// Added and special tokens are found in the text before any pre-tokenization (Hugging Face's
// added vocabulary, tiktoken's allowed special tokens): the text is cut into segments that are
// either one added token or ordinary text.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace etscope::tokenizer {

struct AddedToken {
  std::string content;
  int64_t id = 0;
  bool special = false;
  bool lstrip = false;       ///< swallows whitespace on its left
  bool rstrip = false;       ///< swallows whitespace on its right
  bool single_word = false;  ///< matches only with no word character on either side
};

struct TextSegment {
  size_t begin = 0, end = 0;  ///< byte range in the text
  int64_t id = -1;            ///< the added token's id, or -1 for ordinary text
};

class AddedTokenMatcher {
 public:
  AddedTokenMatcher() = default;
  explicit AddedTokenMatcher(std::vector<AddedToken> tokens);

  /// Segments covering `text` in order: at each position the longest added token that starts
  /// there wins (leftmost-longest, as Hugging Face's Aho-Corasick matcher).
  std::vector<TextSegment> split(std::string_view text) const;

  const std::vector<AddedToken>& tokens() const { return tokens_; }

 private:
  std::vector<AddedToken> tokens_;
  std::unordered_map<unsigned char, std::vector<size_t>> by_first_byte_;  // longest first
};

}  // namespace etscope::tokenizer
