// Loading by content, the shared decode and id checks, and the streaming decoder.
#include "etscope/tokenizer/tokenizer.h"

#include <cctype>
#include <fstream>
#include <iterator>

#include "loaders.h"

namespace etscope::tokenizer {
namespace {

// A tiktoken file starts with a line "base64 rank".
bool looks_like_tiktoken(std::string_view text) {
  const size_t end = std::min(text.find('\n'), text.size());
  std::string_view line = text.substr(0, end);
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  const size_t space = line.find(' ');
  if (space == 0 || space == std::string_view::npos || space + 1 >= line.size()) return false;
  for (char c : line.substr(0, space)) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '+' || c == '/' || c == '=')) return false;
  }
  for (char c : line.substr(space + 1)) {
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
  }
  return true;
}

}  // namespace

const char* to_string(TokenizerKind kind) {
  switch (kind) {
    case TokenizerKind::kHuggingFace:
      return "huggingface";
    case TokenizerKind::kTiktoken:
      return "tiktoken";
    case TokenizerKind::kSentencePiece:
      return "sentencepiece";
  }
  return "unknown";
}

Status Tokenizer::check_ids(std::span<const int64_t> ids) const {
  for (size_t i = 0; i < ids.size(); ++i) {
    if (ids[i] < 0 || ids[i] >= vocab_size()) {
      return Error(ErrorCode::kInvalidArgument, name_ + ": token id " + std::to_string(ids[i]) + " (position " + std::to_string(i) +
                                                    ") is outside the vocabulary of " + std::to_string(vocab_size()) + " ids");
    }
  }
  return ok_status();
}

Result<std::string> Tokenizer::decode(std::span<const int64_t> ids) const {
  ETSCOPE_ASSIGN_OR_RETURN(std::string bytes, decode_bytes(ids));
  return repair_utf8(bytes);
}

Result<std::unique_ptr<Tokenizer>> load_tokenizer_from_bytes(std::span<const uint8_t> bytes, const std::string& name) {
  const std::string_view text(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  if (text.empty()) return Error(ErrorCode::kTruncated, name + ": empty file (no tokenizer)");
  size_t first = 0;
  while (first < text.size() && (text[first] == ' ' || text[first] == '\n' || text[first] == '\r' || text[first] == '\t')) ++first;
  if (first < text.size() && text[first] == '{') return load_huggingface(text, name);
  if (looks_like_tiktoken(text)) return load_tiktoken(text, name);
  // A SentencePiece ModelProto opens with its repeated `pieces` field: field 1, length-delimited.
  if (text[0] == '\x0a') return load_sentencepiece(text, name);
  return Error(ErrorCode::kWrongKind, name + ": not a tokenizer (neither a Hugging Face tokenizer.json, a tiktoken file nor a "
                                             "SentencePiece model)");
}

Result<std::unique_ptr<Tokenizer>> load_tokenizer(const std::filesystem::path& path) {
  const std::string name = path.string();
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    return Error(ErrorCode::kInvalidArgument, name + ": is a directory (give the tokenizer file itself, e.g. " + name + "/tokenizer.json)");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) return Error(ErrorCode::kIo, name + ": cannot open for reading");
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) return Error(ErrorCode::kIo, name + ": read failed");
  return load_tokenizer_from_bytes({reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()}, name);
}

namespace {
// A decoder that re-decodes a window may show U+FFFD for a character still incomplete
// (SentencePiece's own decode does); past this many held ids the text is let through as it is.
constexpr size_t kMaxHeldIds = 8;
bool ends_with_replacement(std::string_view s) { return s.size() >= 3 && s.substr(s.size() - 3) == "\xEF\xBF\xBD"; }
}  // namespace

Result<std::string> StreamDecoder::next(int64_t id) {
  if (id < 0 || id >= tokenizer_->vocab_size()) {
    return Error(ErrorCode::kInvalidArgument, tokenizer_->name() + ": token id " + std::to_string(id) +
                                                  " is outside the vocabulary of " + std::to_string(tokenizer_->vocab_size()) + " ids");
  }
  window_.push_back(id);
  auto text = tokenizer_->decode_bytes(window_);
  if (!text.ok()) {
    window_.pop_back();
    return text.error();
  }
  const std::string& t = *text;
  const bool held_long = window_.size() - prefix_ids_ >= kMaxHeldIds;
  if (t.size() <= prefix_.size()) return std::string();
  if (!held_long && (settled_utf8_prefix(t) < t.size() || ends_with_replacement(t))) return std::string();
  std::string out = repair_utf8(std::string_view(t).substr(prefix_.size()));
  // Keep the ids just decoded as context for the next ones (a leading-space strip, byte pieces).
  window_.erase(window_.begin(), window_.begin() + static_cast<std::ptrdiff_t>(prefix_ids_));
  auto prefix = tokenizer_->decode_bytes(window_);
  prefix_ = prefix.ok() ? std::move(prefix).value() : std::string();
  prefix_ids_ = window_.size();
  return out;
}

std::string StreamDecoder::finish() {
  std::string out;
  if (prefix_ids_ < window_.size()) {
    auto text = tokenizer_->decode_bytes(window_);
    if (text.ok() && text->size() > prefix_.size()) out = repair_utf8(std::string_view(*text).substr(prefix_.size()));
  }
  window_.clear();
  prefix_.clear();
  prefix_ids_ = 0;
  return out;
}

}  // namespace etscope::tokenizer
