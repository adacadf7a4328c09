// tiktoken BPE files as ExecuTorch's Llama 3 runner reads them (pytorch_tokenizers' Tiktoken):
// one "base64-bytes rank" pair per line; the ranks are the ids and the merge priorities; Llama 3's
// split pattern cuts the text; 256 special tokens follow the ranks (<|begin_of_text|>,
// <|end_of_text|>, two reserved, the chat-format tokens, then reserved tokens up to 256), and
// every special token written in the text is encoded as itself, as the C++ runner does.
#include <array>
#include <string>
#include <unordered_map>
#include <vector>

#include "added_tokens.h"
#include "bpe.h"
#include "etscope/core/json.h"
#include "loaders.h"
#include "regex_splitter.h"
#include "utf8.h"

namespace etscope::tokenizer {
namespace {

constexpr const char* kLlama3Pattern =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
constexpr size_t kLlama3SpecialCount = 256;

std::vector<std::string> llama3_special_tokens() {
  std::vector<std::string> names = {
      "<|begin_of_text|>", "<|end_of_text|>",   "<|reserved_special_token_0|>", "<|reserved_special_token_1|>",
      "<|finetune_right_pad_id|>", "<|step_id|>", "<|start_header_id|>",     "<|end_header_id|>",
      "<|eom_id|>",        "<|eot_id|>",        "<|python_tag|>",               "<|image|>",
  };
  for (int reserved = 2; names.size() < kLlama3SpecialCount; ++reserved) {
    names.push_back("<|reserved_special_token_" + std::to_string(reserved) + "|>");
  }
  return names;
}

// Standard base64 with optional '=' padding; nullopt on any other character or a bad length.
std::optional<std::string> base64_decode(std::string_view in) {
  auto value = [](char c) -> int {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+') return 62;
    if (c == '/') return 63;
    return -1;
  };
  while (!in.empty() && in.back() == '=') in.remove_suffix(1);
  if (in.size() % 4 == 1) return std::nullopt;
  std::string out;
  uint32_t acc = 0;
  int bits = 0;
  for (char c : in) {
    const int v = value(c);
    if (v < 0) return std::nullopt;
    acc = (acc << 6) | static_cast<uint32_t>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out += static_cast<char>((acc >> bits) & 0xFF);
    }
  }
  return out;
}

class TiktokenTokenizer final : public Tokenizer {
 public:
  TiktokenTokenizer(std::string name, RegexSplitter splitter) : Tokenizer(std::move(name)), splitter_(std::move(splitter)) {}

  TokenizerKind kind() const override { return TokenizerKind::kTiktoken; }
  std::string description() const override {
    return "tiktoken BPE (Llama 3 split pattern and special tokens), " + std::to_string(vocab_size()) + " ids (" +
           std::to_string(num_base_) + " ranks, " + std::to_string(kLlama3SpecialCount) + " special tokens)";
  }
  int64_t vocab_size() const override { return num_base_ + static_cast<int64_t>(kLlama3SpecialCount); }
  std::optional<int64_t> bos_id() const override { return num_base_; }
  std::vector<int64_t> eos_ids() const override { return {num_base_ + 1}; }
  bool is_special(int64_t id) const override { return id >= num_base_ && id < vocab_size(); }

  Result<std::vector<int64_t>> encode(std::string_view text, bool add_bos, bool add_eos) const override {
    if (size_t bad = first_invalid_utf8(text); bad < text.size()) {
      return Error(ErrorCode::kInvalidArgument, "text is not valid UTF-8 (byte " + std::to_string(bad) + ")");
    }
    std::vector<int64_t> ids;
    if (add_bos) ids.push_back(num_base_);
    for (const TextSegment& seg : specials_.split(text)) {
      if (seg.id >= 0) {
        ids.push_back(seg.id);
        continue;
      }
      const std::string_view segment = text.substr(seg.begin, seg.end - seg.begin);
      auto found = splitter_.matches(segment);
      if (!found.ok()) return found.error().with_context(name());
      for (auto [b, e] : *found) encode_piece(segment.substr(b, e - b), ids);
    }
    if (add_eos) ids.push_back(num_base_ + 1);
    return ids;
  }

  Result<std::string> decode_bytes(std::span<const int64_t> ids) const override {
    ETSCOPE_TRY(check_ids(ids));
    std::string out;
    for (int64_t id : ids) {
      if (id >= num_base_) {
        out += specials_.tokens()[static_cast<size_t>(id - num_base_)].content;
      } else if (!present_[static_cast<size_t>(id)]) {
        return Error(ErrorCode::kInvalidArgument, name() + ": id " + std::to_string(id) + " has no token (no line has rank " +
                                                      std::to_string(id) + ")");
      } else {
        out += bytes_[static_cast<size_t>(id)];
      }
    }
    return out;
  }

 private:
  friend Result<std::unique_ptr<Tokenizer>>(::etscope::tokenizer::load_tiktoken)(std::string_view, const std::string&);

  void encode_piece(std::string_view piece, std::vector<int64_t>& ids) const {
    if (auto it = ranks_.find(std::string(piece)); it != ranks_.end()) {
      ids.push_back(it->second);
      return;
    }
    std::vector<int64_t> symbols;
    symbols.reserve(piece.size());
    for (char c : piece) symbols.push_back(byte_rank_[static_cast<unsigned char>(c)]);
    std::string joined;
    bpe_merge(symbols, [&](int64_t a, int64_t b) -> std::optional<BpeMerge> {
      joined.assign(bytes_[static_cast<size_t>(a)]);
      joined += bytes_[static_cast<size_t>(b)];
      auto it = ranks_.find(joined);
      if (it == ranks_.end()) return std::nullopt;
      return BpeMerge{static_cast<uint32_t>(it->second), it->second};
    });
    ids.insert(ids.end(), symbols.begin(), symbols.end());
  }

  RegexSplitter splitter_;
  std::unordered_map<std::string, int64_t> ranks_;
  std::vector<std::string> bytes_;
  std::vector<bool> present_;
  std::array<int64_t, 256> byte_rank_{};
  int64_t num_base_ = 0;
  AddedTokenMatcher specials_;
};

}  // namespace

Result<std::unique_ptr<Tokenizer>> load_tiktoken(std::string_view text, const std::string& name) {
  auto fail = [&](const std::string& problem) { return Error(ErrorCode::kCorrupt, name + ": " + problem); };
  auto splitter = RegexSplitter::compile(kLlama3Pattern);
  if (!splitter.ok()) return splitter.error().with_context(name);
  auto tok = std::make_unique<TiktokenTokenizer>(name, std::move(splitter).value());
  size_t line_number = 0;
  int64_t max_rank = -1;
  size_t pos = 0;
  std::vector<std::pair<std::string, int64_t>> entries;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(pos, end - pos);
    pos = end + 1;
    ++line_number;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.empty()) continue;
    const size_t space = line.find(' ');
    if (space == std::string_view::npos) return fail("line " + std::to_string(line_number) + " is not \"base64 rank\"");
    auto bytes = base64_decode(line.substr(0, space));
    if (!bytes || bytes->empty()) {
      return fail("line " + std::to_string(line_number) + ": invalid base64 '" + std::string(line.substr(0, std::min<size_t>(space, 40))) + "'");
    }
    const auto rank = parse_int(line.substr(space + 1));
    if (!rank || *rank < 0 || *rank > (int64_t{1} << 31)) {
      return fail("line " + std::to_string(line_number) + ": rank '" + std::string(line.substr(space + 1, 20)) + "' is not a non-negative integer");
    }
    max_rank = std::max(max_rank, *rank);
    entries.emplace_back(std::move(*bytes), *rank);
  }
  if (entries.empty()) return Error(ErrorCode::kTruncated, name + ": no ranks (an empty tiktoken file)");
  // Special tokens are numbered from the count of ranks (as pytorch_tokenizers does), so ranks
  // with gaps would collide with them.
  if (max_rank + 1 != static_cast<int64_t>(entries.size())) {
    return fail(std::to_string(entries.size()) + " ranks but the largest is " + std::to_string(max_rank) +
                ": ranks must be 0.." + std::to_string(entries.size() - 1) + " without gaps or repeats");
  }
  tok->num_base_ = static_cast<int64_t>(entries.size());
  tok->bytes_.assign(entries.size(), std::string());
  tok->present_.assign(entries.size(), false);
  tok->ranks_.reserve(entries.size());
  for (auto& [bytes, rank] : entries) {
    if (tok->present_[static_cast<size_t>(rank)]) return fail("rank " + std::to_string(rank) + " appears twice");
    if (!tok->ranks_.emplace(bytes, rank).second) return fail("token of rank " + std::to_string(rank) + " appears twice");
    tok->present_[static_cast<size_t>(rank)] = true;
    tok->bytes_[static_cast<size_t>(rank)] = std::move(bytes);
  }
  for (int b = 0; b < 256; ++b) {
    auto it = tok->ranks_.find(std::string(1, static_cast<char>(b)));
    if (it == tok->ranks_.end()) return fail("byte " + std::to_string(b) + " has no rank (every single byte needs one)");
    tok->byte_rank_[static_cast<size_t>(b)] = it->second;
  }
  std::vector<AddedToken> specials;
  const auto names = llama3_special_tokens();
  for (size_t i = 0; i < names.size(); ++i) {
    specials.push_back({names[i], tok->num_base_ + static_cast<int64_t>(i), true, false, false, false});
  }
  tok->specials_ = AddedTokenMatcher(std::move(specials));
  return std::unique_ptr<Tokenizer>(std::move(tok));
}

}  // namespace etscope::tokenizer
