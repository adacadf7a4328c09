#include "added_tokens.h"

#include <algorithm>
#include <cctype>

namespace etscope::tokenizer {
namespace {

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'; }
// A byte of a word character for single_word: ASCII alphanumerics, '_' and any non-ASCII byte.
bool is_word_byte(char c) {
  const auto u = static_cast<unsigned char>(c);
  return u >= 0x80 || std::isalnum(u) || c == '_';
}

}  // namespace

AddedTokenMatcher::AddedTokenMatcher(std::vector<AddedToken> tokens) : tokens_(std::move(tokens)) {
  for (size_t i = 0; i < tokens_.size(); ++i) {
    if (tokens_[i].content.empty()) continue;
    by_first_byte_[static_cast<unsigned char>(tokens_[i].content[0])].push_back(i);
  }
  for (auto& [byte, list] : by_first_byte_) {
    std::stable_sort(list.begin(), list.end(),
                     [&](size_t a, size_t b) { return tokens_[a].content.size() > tokens_[b].content.size(); });
  }
}

std::vector<TextSegment> AddedTokenMatcher::split(std::string_view text) const {
  std::vector<TextSegment> out;
  size_t plain_begin = 0;
  size_t pos = 0;
  while (pos < text.size()) {
    const AddedToken* found = nullptr;
    if (auto it = by_first_byte_.find(static_cast<unsigned char>(text[pos])); it != by_first_byte_.end()) {
      for (size_t index : it->second) {
        const AddedToken& t = tokens_[index];
        if (text.compare(pos, t.content.size(), t.content) != 0) continue;
        if (t.single_word) {
          const bool left_word = pos > 0 && is_word_byte(text[pos - 1]);
          const size_t e = pos + t.content.size();
          const bool right_word = e < text.size() && is_word_byte(text[e]);
          if (left_word || right_word) continue;
        }
        found = &t;
        break;
      }
    }
    if (found == nullptr) {
      ++pos;
      continue;
    }
    size_t begin = pos, end = pos + found->content.size();
    if (found->lstrip) {
      while (begin > plain_begin && is_space(text[begin - 1])) --begin;
    }
    if (found->rstrip) {
      while (end < text.size() && is_space(text[end])) ++end;
    }
    if (begin > plain_begin) out.push_back({plain_begin, begin, -1});
    out.push_back({begin, end, found->id});
    plain_begin = pos = end;
  }
  if (plain_begin < text.size()) out.push_back({plain_begin, text.size(), -1});
  return out;
}

}  // namespace etscope::tokenizer
