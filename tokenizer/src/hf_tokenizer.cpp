// Hugging Face tokenizer.json with a BPE model.
//
// Sections: [1] components read from the JSON  [2] the tokenizer  [3] loading.
//
// Encoding follows the tokenizers library's pipeline: added tokens are cut out of the raw text
// first; each remaining segment is normalized, pre-tokenized into pieces, and each piece is
// merged by the BPE model. Only the components byte-level BPE (Llama 3, Qwen2, SmolLM, GPT-2) and
// SentencePiece-style BPE (Llama 2, Mistral) files use are implemented; any other component is
// refused at load with its name, never silently skipped.
#include <algorithm>
#include <cstring>
#include <memory>
#include <optional>
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

// ---- [1] components ----------------------------------------------------------------------

constexpr const char* kGpt2Pattern =
    R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";

std::vector<std::pair<size_t, size_t>> find_all(std::string_view text, std::string_view literal) {
  std::vector<std::pair<size_t, size_t>> out;
  if (literal.empty()) return out;
  for (size_t pos = text.find(literal); pos != std::string_view::npos; pos = text.find(literal, pos + literal.size())) {
    out.emplace_back(pos, pos + literal.size());
  }
  return out;
}

std::string replace_ranges(std::string_view text, const std::vector<std::pair<size_t, size_t>>& ranges, std::string_view content) {
  std::string out;
  size_t last = 0;
  for (auto [b, e] : ranges) {
    out.append(text.substr(last, b - last));
    out.append(content);
    last = e;
  }
  out.append(text.substr(last));
  return out;
}

std::string replace_literal(std::string_view text, std::string_view literal, std::string_view content) {
  return replace_ranges(text, find_all(text, literal), content);
}

// A literal string or a compiled regex, as the JSON's {"String": ...} / {"Regex": ...}.
struct Pattern {
  std::string literal;
  std::shared_ptr<RegexSplitter> regex;

  Result<std::vector<std::pair<size_t, size_t>>> matches(std::string_view text) const {
    if (regex) return regex->matches(text);
    return find_all(text, literal);
  }
  Result<std::string> replace_all(std::string_view text, std::string_view content) const {
    ETSCOPE_ASSIGN_OR_RETURN(auto ranges, matches(text));
    return replace_ranges(text, ranges, content);
  }
};

struct NormalizerStep {
  enum class Kind { kReplace, kPrepend, kNfc } kind;
  Pattern pattern;
  std::string content;
};

enum class SplitBehavior { kIsolated, kRemoved, kMergedWithPrevious, kMergedWithNext };
enum class PrependScheme { kAlways, kFirst, kNever };

struct PreTokenizerStep {
  enum class Kind { kSplit, kByteLevel, kDigits, kMetaspace } kind;
  Pattern pattern;
  SplitBehavior behavior = SplitBehavior::kIsolated;
  bool invert = false;
  bool add_prefix_space = false;
  std::string replacement;  // Metaspace
  PrependScheme prepend = PrependScheme::kAlways;
  bool split = false;       // Metaspace
};

struct DecoderStep {
  enum class Kind { kByteLevel, kMetaspace, kReplace, kByteFallback, kFuse, kStrip } kind;
  Pattern pattern;
  std::string content;  // Replace's content, Strip's character, Metaspace's replacement
  size_t start = 0, stop = 0;
  PrependScheme prepend = PrependScheme::kAlways;
};

// A piece of text moving through pre-tokenization; `first` marks the one at offset 0 of the
// whole text (Metaspace's prepend_scheme "first" looks at it).
struct Piece {
  std::string text;
  bool first = false;
};

std::vector<Piece> split_piece(const Piece& piece, const std::vector<std::pair<size_t, size_t>>& found,
                               SplitBehavior behavior, bool invert) {
  struct Part {
    size_t b, e;
    bool match;
  };
  std::vector<Part> parts;
  size_t last = 0;
  for (auto [b, e] : found) {
    if (b > last) parts.push_back({last, b, invert});
    parts.push_back({b, e, !invert});
    last = e;
  }
  if (last < piece.text.size()) parts.push_back({last, piece.text.size(), invert});
  std::vector<std::pair<size_t, size_t>> ranges;
  for (size_t i = 0; i < parts.size(); ++i) {
    const Part& p = parts[i];
    switch (behavior) {
      case SplitBehavior::kIsolated:
        ranges.emplace_back(p.b, p.e);
        break;
      case SplitBehavior::kRemoved:
        if (!p.match) ranges.emplace_back(p.b, p.e);
        break;
      case SplitBehavior::kMergedWithPrevious:
        if (p.match && !ranges.empty() && ranges.back().second == p.b && i > 0 && !parts[i - 1].match) {
          ranges.back().second = p.e;
        } else {
          ranges.emplace_back(p.b, p.e);
        }
        break;
      case SplitBehavior::kMergedWithNext:
        if (!p.match && i > 0 && parts[i - 1].match && !ranges.empty() && ranges.back().second == p.b) {
          ranges.back().second = p.e;
        } else {
          ranges.emplace_back(p.b, p.e);
        }
        break;
    }
  }
  std::vector<Piece> out;
  for (auto [b, e] : ranges) {
    if (e > b) out.push_back({piece.text.substr(b, e - b), piece.first && b == 0});
  }
  return out;
}

std::string to_byte_level(std::string_view text) {
  std::string out;
  out.reserve(text.size() * 2);
  const auto& table = byte_to_char();
  for (char c : text) append_utf8(out, table[static_cast<unsigned char>(c)]);
  return out;
}

std::string from_byte_level(std::string_view token) {
  std::string out;
  size_t pos = 0;
  while (pos < token.size()) {
    const size_t start = pos;
    const char32_t cp = next_code_point(token, pos);
    const int b = char_to_byte(cp);
    if (b >= 0) {
      out += static_cast<char>(b);
    } else {
      out.append(token.substr(start, pos - start));
    }
  }
  return out;
}

// "<0xNN>" -> byte, as Hugging Face's byte_fallback spells bytes.
std::optional<unsigned char> byte_fallback_value(std::string_view token) {
  if (token.size() != 6 || token.substr(0, 3) != "<0x" || token[5] != '>') return std::nullopt;
  unsigned value = 0;
  for (char c : token.substr(3, 2)) {
    value <<= 4;
    if (c >= '0' && c <= '9') {
      value |= static_cast<unsigned>(c - '0');
    } else if (c >= 'A' && c <= 'F') {
      value |= static_cast<unsigned>(c - 'A' + 10);
    } else if (c >= 'a' && c <= 'f') {
      value |= static_cast<unsigned>(c - 'a' + 10);
    } else {
      return std::nullopt;
    }
  }
  return static_cast<unsigned char>(value);
}

// ---- [2] the tokenizer -------------------------------------------------------------------

class HuggingFaceTokenizer final : public Tokenizer {
 public:
  explicit HuggingFaceTokenizer(std::string name) : Tokenizer(std::move(name)) {}

  TokenizerKind kind() const override { return TokenizerKind::kHuggingFace; }
  std::string description() const override { return description_; }
  int64_t vocab_size() const override { return static_cast<int64_t>(id_to_token_.size()); }
  std::optional<int64_t> bos_id() const override { return bos_; }
  std::vector<int64_t> eos_ids() const override { return eos_; }
  bool is_special(int64_t id) const override {
    return id >= 0 && id < vocab_size() && special_[static_cast<size_t>(id)];
  }

  Result<std::vector<int64_t>> encode(std::string_view text, bool add_bos, bool add_eos) const override {
    if (size_t bad = first_invalid_utf8(text); bad < text.size()) {
      return Error(ErrorCode::kInvalidArgument, "text is not valid UTF-8 (byte " + std::to_string(bad) + ")");
    }
    std::vector<int64_t> ids;
    if (add_bos) {
      if (!bos_) return Error(ErrorCode::kNotSupported, name() + ": the tokenizer names no beginning-of-sequence token");
      ids.push_back(*bos_);
    }
    for (const TextSegment& seg : added_.split(text)) {
      if (seg.id >= 0) {
        ids.push_back(seg.id);
        continue;
      }
      ETSCOPE_ASSIGN_OR_RETURN(std::string normalized, normalize(text.substr(seg.begin, seg.end - seg.begin)));
      std::vector<Piece> pieces{{std::move(normalized), seg.begin == 0}};
      for (const PreTokenizerStep& step : pre_tokenizer_) {
        ETSCOPE_ASSIGN_OR_RETURN(pieces, pre_tokenize(step, pieces));
      }
      for (const Piece& p : pieces) tokenize_piece(p.text, ids);
    }
    if (add_eos) {
      if (eos_.empty()) return Error(ErrorCode::kNotSupported, name() + ": the tokenizer names no end-of-sequence token");
      ids.push_back(eos_.front());
    }
    return ids;
  }

  Result<std::string> decode_bytes(std::span<const int64_t> ids) const override {
    ETSCOPE_TRY(check_ids(ids));
    std::vector<std::string> tokens;
    tokens.reserve(ids.size());
    for (int64_t id : ids) {
      // Ids inside the range that no vocabulary entry uses (a hole in the numbering).
      if (!present_[static_cast<size_t>(id)]) {
        return Error(ErrorCode::kInvalidArgument, name() + ": id " + std::to_string(id) + " has no token in this vocabulary");
      }
      tokens.push_back(id_to_token_[static_cast<size_t>(id)]);
    }
    if (!has_decoder_) {
      std::string out;
      for (size_t i = 0; i < tokens.size(); ++i) out += (i ? " " : "") + tokens[i];
      return out;
    }
    for (const DecoderStep& step : decoder_) ETSCOPE_TRY(apply_decoder(step, tokens));
    std::string out;
    for (const std::string& t : tokens) out += t;
    return out;
  }

 private:
  friend Result<std::unique_ptr<Tokenizer>>(::etscope::tokenizer::load_huggingface)(std::string_view, const std::string&);

  Result<std::string> normalize(std::string_view segment) const {
    std::string text(segment);
    for (const NormalizerStep& step : normalizer_) {
      switch (step.kind) {
        case NormalizerStep::Kind::kReplace: {
          ETSCOPE_ASSIGN_OR_RETURN(text, step.pattern.replace_all(text, step.content));
          break;
        }
        case NormalizerStep::Kind::kPrepend:
          if (!text.empty()) text = step.content + text;
          break;
        case NormalizerStep::Kind::kNfc: {
          ETSCOPE_ASSIGN_OR_RETURN(text, nfc_normalize(text));
          break;
        }
      }
    }
    return text;
  }

  Result<std::vector<Piece>> pre_tokenize(const PreTokenizerStep& step, const std::vector<Piece>& pieces) const {
    std::vector<Piece> out;
    for (const Piece& in : pieces) {
      switch (step.kind) {
        case PreTokenizerStep::Kind::kSplit:
        case PreTokenizerStep::Kind::kDigits: {
          ETSCOPE_ASSIGN_OR_RETURN(auto found, step.pattern.matches(in.text));
          auto parts = split_piece(in, found, step.behavior, step.invert);
          for (auto& p : parts) out.push_back(std::move(p));
          break;
        }
        case PreTokenizerStep::Kind::kByteLevel: {
          Piece p = in;
          if (step.add_prefix_space && (p.text.empty() || p.text[0] != ' ')) p.text = " " + p.text;
          std::vector<Piece> parts{p};
          if (step.pattern.regex) {
            ETSCOPE_ASSIGN_OR_RETURN(auto found, step.pattern.matches(p.text));
            parts = split_piece(p, found, SplitBehavior::kIsolated, false);
          }
          for (auto& part : parts) out.push_back({to_byte_level(part.text), part.first});
          break;
        }
        case PreTokenizerStep::Kind::kMetaspace: {
          Piece p{replace_literal(in.text, " ", step.replacement), in.first};
          const bool starts = p.text.compare(0, step.replacement.size(), step.replacement) == 0;
          if (!starts && (step.prepend == PrependScheme::kAlways || (step.prepend == PrependScheme::kFirst && p.first))) {
            p.text = step.replacement + p.text;
          }
          if (step.split) {
            auto parts = split_piece(p, find_all(p.text, step.replacement), SplitBehavior::kMergedWithNext, false);
            for (auto& part : parts) out.push_back(std::move(part));
          } else {
            out.push_back(std::move(p));
          }
          break;
        }
      }
    }
    return out;
  }

  void tokenize_piece(const std::string& piece, std::vector<int64_t>& ids) const {
    if (piece.empty()) return;
    if (ignore_merges_) {
      if (auto it = vocab_.find(piece); it != vocab_.end()) {
        ids.push_back(it->second);
        return;
      }
    }
    std::vector<int64_t> symbols;
    bool last_unk = false;
    size_t pos = 0;
    while (pos < piece.size()) {
      const size_t start = pos;
      pos += std::min(utf8_char_length(static_cast<unsigned char>(piece[pos])), piece.size() - pos);
      const std::string ch = piece.substr(start, pos - start);
      if (auto it = vocab_.find(ch); it != vocab_.end()) {
        symbols.push_back(it->second);
        last_unk = false;
        continue;
      }
      if (byte_fallback_) {
        std::vector<int64_t> bytes;
        for (char c : ch) {
          char name[8];
          std::snprintf(name, sizeof(name), "<0x%02X>", static_cast<unsigned char>(c));
          auto it = vocab_.find(name);
          if (it == vocab_.end()) break;
          bytes.push_back(it->second);
        }
        if (bytes.size() == ch.size()) {
          symbols.insert(symbols.end(), bytes.begin(), bytes.end());
          last_unk = false;
          continue;
        }
      }
      if (unk_) {
        if (!(fuse_unk_ && last_unk)) symbols.push_back(*unk_);
        last_unk = true;
      }
    }
    bpe_merge(symbols, [this](int64_t a, int64_t b) -> std::optional<BpeMerge> {
      auto it = merges_.find(pair_key(a, b));
      if (it == merges_.end()) return std::nullopt;
      return it->second;
    });
    ids.insert(ids.end(), symbols.begin(), symbols.end());
  }

  static Status apply_decoder(const DecoderStep& step, std::vector<std::string>& tokens) {
    switch (step.kind) {
      case DecoderStep::Kind::kByteLevel:
        for (auto& t : tokens) t = from_byte_level(t);
        break;
      case DecoderStep::Kind::kMetaspace:
        // As the tokenizers library: the replacement becomes a space, and in the first token it
        // is dropped (the space Metaspace prepended) unless the scheme never prepends.
        for (size_t i = 0; i < tokens.size(); ++i) {
          const bool drop = i == 0 && step.prepend != PrependScheme::kNever;
          tokens[i] = replace_literal(tokens[i], step.content, drop ? "" : " ");
        }
        break;
      case DecoderStep::Kind::kReplace:
        for (auto& t : tokens) {
          ETSCOPE_ASSIGN_OR_RETURN(t, step.pattern.replace_all(t, step.content));
        }
        break;
      case DecoderStep::Kind::kByteFallback:
        for (auto& t : tokens) {
          if (auto b = byte_fallback_value(t)) t = std::string(1, static_cast<char>(*b));
        }
        break;
      case DecoderStep::Kind::kFuse: {
        std::string all;
        for (const auto& t : tokens) all += t;
        tokens.assign(1, std::move(all));
        break;
      }
      case DecoderStep::Kind::kStrip:
        for (auto& t : tokens) {
          size_t b = 0, e = t.size();
          for (size_t k = 0; k < step.start && t.compare(b, step.content.size(), step.content) == 0; ++k) b += step.content.size();
          for (size_t k = 0; k < step.stop && e >= b + step.content.size() &&
                             t.compare(e - step.content.size(), step.content.size(), step.content) == 0;
               ++k) {
            e -= step.content.size();
          }
          t = t.substr(b, e - b);
        }
        break;
    }
    return ok_status();
  }

  static uint64_t pair_key(int64_t a, int64_t b) { return (static_cast<uint64_t>(a) << 32) | static_cast<uint64_t>(b); }

  std::string description_;
  std::unordered_map<std::string, int64_t> vocab_;
  std::unordered_map<uint64_t, BpeMerge> merges_;
  std::vector<std::string> id_to_token_;
  std::vector<bool> special_;
  std::vector<bool> present_;
  AddedTokenMatcher added_;
  std::vector<NormalizerStep> normalizer_;
  std::vector<PreTokenizerStep> pre_tokenizer_;
  std::vector<DecoderStep> decoder_;
  bool has_decoder_ = false;
  bool ignore_merges_ = false;
  bool byte_fallback_ = false;
  bool fuse_unk_ = false;
  std::optional<int64_t> unk_;
  std::optional<int64_t> bos_;
  std::vector<int64_t> eos_;
};

// ---- [3] loading -------------------------------------------------------------------------

// Ids must fit the merge table's 32-bit halves; no real vocabulary comes near.
constexpr int64_t kMaxId = (int64_t{1} << 31) - 1;

class Loader {
 public:
  explicit Loader(const std::string& name) : name_(name) {}

  Error fail(ErrorCode code, const std::string& problem) const { return Error(code, name_ + ": " + problem); }
  Error unsupported(const std::string& what, const std::string& type) const {
    return fail(ErrorCode::kNotSupported, what + " '" + type + "' is not supported (etscope reads BPE tokenizer.json files "
                                                     "of the byte-level and SentencePiece kinds; docs/llm.md lists the components)");
  }

  Result<Pattern> pattern(const Json& j, const std::string& where) const {
    if (const Json* s = typed_member(j, "String", Json::value_t::string)) return Pattern{s->get<std::string>(), nullptr};
    if (const Json* r = typed_member(j, "Regex", Json::value_t::string)) {
      auto compiled = RegexSplitter::compile(r->get<std::string>());
      if (!compiled.ok()) return compiled.error().with_context(name_ + ": " + where);
      return Pattern{"", std::make_shared<RegexSplitter>(std::move(compiled).value())};
    }
    return fail(ErrorCode::kCorrupt, where + " has no String or Regex pattern");
  }

  Result<PrependScheme> prepend_scheme(const Json& j) const {
    // Older files spell it add_prefix_space: true/false.
    if (const Json* s = typed_member(j, "prepend_scheme", Json::value_t::string)) {
      const std::string v = s->get<std::string>();
      if (v == "always") return PrependScheme::kAlways;
      if (v == "first") return PrependScheme::kFirst;
      if (v == "never") return PrependScheme::kNever;
      return fail(ErrorCode::kCorrupt, "Metaspace prepend_scheme '" + v + "' is unknown");
    }
    if (const Json* a = member(j, "add_prefix_space")) {
      return as_bool(*a).value_or(true) ? PrependScheme::kAlways : PrependScheme::kNever;
    }
    return PrependScheme::kAlways;
  }

  Status normalizer(const Json& j, std::vector<NormalizerStep>& out) const {
    if (j.is_null()) return ok_status();
    const std::string type = string_member(j, "type");
    if (type == "Sequence") {
      const Json* list = typed_member(j, "normalizers", Json::value_t::array);
      if (list == nullptr) return fail(ErrorCode::kCorrupt, "normalizer Sequence has no normalizers list");
      for (const Json& n : *list) ETSCOPE_TRY(normalizer(n, out));
      return ok_status();
    }
    if (type == "Replace") {
      const Json* p = member(j, "pattern");
      if (p == nullptr) return fail(ErrorCode::kCorrupt, "normalizer Replace has no pattern");
      ETSCOPE_ASSIGN_OR_RETURN(Pattern pat, pattern(*p, "normalizer Replace"));
      out.push_back({NormalizerStep::Kind::kReplace, std::move(pat), string_member(j, "content")});
      return ok_status();
    }
    if (type == "Prepend") {
      out.push_back({NormalizerStep::Kind::kPrepend, {}, string_member(j, "prepend")});
      return ok_status();
    }
    if (type == "NFC" && nfc_available()) {
      out.push_back({NormalizerStep::Kind::kNfc, {}, ""});
      return ok_status();
    }
    return unsupported("normalizer", type.empty() ? "(no type)" : type);
  }

  Status pre_tokenizer(const Json& j, std::vector<PreTokenizerStep>& out) const {
    if (j.is_null()) return ok_status();
    const std::string type = string_member(j, "type");
    if (type == "Sequence") {
      const Json* list = typed_member(j, "pretokenizers", Json::value_t::array);
      if (list == nullptr) return fail(ErrorCode::kCorrupt, "pre_tokenizer Sequence has no pretokenizers list");
      for (const Json& p : *list) ETSCOPE_TRY(pre_tokenizer(p, out));
      return ok_status();
    }
    PreTokenizerStep step{};
    if (type == "Split") {
      step.kind = PreTokenizerStep::Kind::kSplit;
      const Json* p = member(j, "pattern");
      if (p == nullptr) return fail(ErrorCode::kCorrupt, "pre_tokenizer Split has no pattern");
      ETSCOPE_ASSIGN_OR_RETURN(step.pattern, pattern(*p, "pre_tokenizer Split"));
      const std::string behavior = string_member(j, "behavior");
      if (behavior == "Isolated") {
        step.behavior = SplitBehavior::kIsolated;
      } else if (behavior == "Removed") {
        step.behavior = SplitBehavior::kRemoved;
      } else if (behavior == "MergedWithPrevious") {
        step.behavior = SplitBehavior::kMergedWithPrevious;
      } else if (behavior == "MergedWithNext") {
        step.behavior = SplitBehavior::kMergedWithNext;
      } else {
        return unsupported("Split behavior", behavior);
      }
      if (const Json* inv = member(j, "invert")) step.invert = as_bool(*inv).value_or(false);
    } else if (type == "ByteLevel") {
      step.kind = PreTokenizerStep::Kind::kByteLevel;
      if (const Json* a = member(j, "add_prefix_space")) step.add_prefix_space = as_bool(*a).value_or(false);
      bool use_regex = true;
      if (const Json* u = member(j, "use_regex")) use_regex = as_bool(*u).value_or(true);
      if (use_regex) {
        auto compiled = RegexSplitter::compile(kGpt2Pattern);
        if (!compiled.ok()) return compiled.error();
        step.pattern.regex = std::make_shared<RegexSplitter>(std::move(compiled).value());
      }
    } else if (type == "Digits") {
      step.kind = PreTokenizerStep::Kind::kDigits;
      bool individual = false;
      if (const Json* d = member(j, "individual_digits")) individual = as_bool(*d).value_or(false);
      auto compiled = RegexSplitter::compile(individual ? R"(\p{N})" : R"(\p{N}+)");
      if (!compiled.ok()) return compiled.error();
      step.pattern.regex = std::make_shared<RegexSplitter>(std::move(compiled).value());
    } else if (type == "Metaspace") {
      step.kind = PreTokenizerStep::Kind::kMetaspace;
      step.replacement = string_member(j, "replacement");
      if (step.replacement.empty()) step.replacement = "\xE2\x96\x81";
      ETSCOPE_ASSIGN_OR_RETURN(step.prepend, prepend_scheme(j));
      step.split = true;
      if (const Json* s = member(j, "split")) step.split = as_bool(*s).value_or(true);
    } else {
      return unsupported("pre_tokenizer", type.empty() ? "(no type)" : type);
    }
    out.push_back(std::move(step));
    return ok_status();
  }

  Status decoder(const Json& j, std::vector<DecoderStep>& out) const {
    const std::string type = string_member(j, "type");
    if (type == "Sequence") {
      const Json* list = typed_member(j, "decoders", Json::value_t::array);
      if (list == nullptr) return fail(ErrorCode::kCorrupt, "decoder Sequence has no decoders list");
      for (const Json& d : *list) ETSCOPE_TRY(decoder(d, out));
      return ok_status();
    }
    DecoderStep step{};
    if (type == "ByteLevel") {
      step.kind = DecoderStep::Kind::kByteLevel;
    } else if (type == "Metaspace") {
      step.kind = DecoderStep::Kind::kMetaspace;
      step.content = string_member(j, "replacement");
      if (step.content.empty()) step.content = "\xE2\x96\x81";
      ETSCOPE_ASSIGN_OR_RETURN(step.prepend, prepend_scheme(j));
    } else if (type == "Replace") {
      step.kind = DecoderStep::Kind::kReplace;
      const Json* p = member(j, "pattern");
      if (p == nullptr) return fail(ErrorCode::kCorrupt, "decoder Replace has no pattern");
      ETSCOPE_ASSIGN_OR_RETURN(step.pattern, pattern(*p, "decoder Replace"));
      step.content = string_member(j, "content");
    } else if (type == "ByteFallback") {
      step.kind = DecoderStep::Kind::kByteFallback;
    } else if (type == "Fuse") {
      step.kind = DecoderStep::Kind::kFuse;
    } else if (type == "Strip") {
      step.kind = DecoderStep::Kind::kStrip;
      step.content = string_member(j, "content");
      if (step.content.empty()) step.content = " ";
      const Json* s = member(j, "start");
      const Json* e = member(j, "stop");
      step.start = static_cast<size_t>(std::clamp<int64_t>(s ? as_int64(*s).value_or(0) : 0, 0, 1 << 20));
      step.stop = static_cast<size_t>(std::clamp<int64_t>(e ? as_int64(*e).value_or(0) : 0, 0, 1 << 20));
    } else {
      return unsupported("decoder", type.empty() ? "(no type)" : type);
    }
    out.push_back(std::move(step));
    return ok_status();
  }

  // The first special token of the post-processor's single-sequence template (BOS) and the last
  // one after the sequence (EOS), searching a Sequence of processors.
  void post_processor(const Json& j, std::optional<std::string>& bos, std::optional<std::string>& eos, int64_t& bos_id) const {
    const std::string type = string_member(j, "type");
    if (type == "Sequence") {
      if (const Json* list = typed_member(j, "processors", Json::value_t::array)) {
        for (const Json& p : *list) post_processor(p, bos, eos, bos_id);
      }
      return;
    }
    if (type != "TemplateProcessing") return;
    const Json* single = typed_member(j, "single", Json::value_t::array);
    if (single == nullptr || single->empty()) return;
    auto special_name = [](const Json& item) -> std::optional<std::string> {
      const Json* s = member(item, "SpecialToken");
      if (s == nullptr) return std::nullopt;
      return string_member(*s, "id");
    };
    bos = special_name(single->front());
    if (single->size() > 1) eos = special_name(single->back());
    if (bos) {
      // The template's own table gives the id even when the token is not an added token.
      if (const Json* table = member(j, "special_tokens")) {
        if (const Json* entry = member(*table, *bos)) {
          if (const Json* ids = typed_member(*entry, "ids", Json::value_t::array); ids && !ids->empty()) {
            bos_id = as_int64(ids->front()).value_or(-1);
          }
        }
      }
    }
  }

 private:
  const std::string& name_;
};

}  // namespace

Result<std::unique_ptr<Tokenizer>> load_huggingface(std::string_view json_text, const std::string& name) {
  Loader loader(name);
  auto parsed = parse_json(json_text, 64, name);
  if (!parsed.ok()) {
    return Error(ErrorCode::kCorrupt, parsed.error().message() + " (a tokenizer.json that is truncated or not JSON)");
  }
  const Json& root = *parsed;
  if (!root.is_object()) return loader.fail(ErrorCode::kWrongKind, "JSON but not a tokenizer.json (no object at the top)");
  const Json* model = typed_member(root, "model", Json::value_t::object);
  if (model == nullptr) return loader.fail(ErrorCode::kWrongKind, "JSON without a \"model\" object: not a Hugging Face tokenizer.json");
  std::string model_type = string_member(*model, "type");
  if (model_type.empty() && member(*model, "merges") != nullptr) model_type = "BPE";
  if (model_type != "BPE") return loader.unsupported("model", model_type.empty() ? "(no type)" : model_type);

  auto tok = std::make_unique<HuggingFaceTokenizer>(name);
  if (const Json* d = member(*model, "dropout"); d != nullptr && !d->is_null() && as_double(*d).value_or(0) > 0) {
    return loader.unsupported("BPE option", "dropout");
  }
  for (const char* key : {"continuing_subword_prefix", "end_of_word_suffix"}) {
    if (!string_member(*model, key).empty()) return loader.unsupported("BPE option", key);
  }
  if (const Json* v = member(*model, "ignore_merges")) tok->ignore_merges_ = as_bool(*v).value_or(false);
  if (const Json* v = member(*model, "byte_fallback")) tok->byte_fallback_ = as_bool(*v).value_or(false);
  if (const Json* v = member(*model, "fuse_unk")) tok->fuse_unk_ = as_bool(*v).value_or(false);

  // Vocabulary.
  const Json* vocab = typed_member(*model, "vocab", Json::value_t::object);
  if (vocab == nullptr) return loader.fail(ErrorCode::kCorrupt, "model has no vocab object");
  int64_t max_id = -1;
  tok->vocab_.reserve(vocab->size());
  for (const auto& [token, value] : vocab->items()) {
    const auto id = as_int64(value);
    if (!id || *id < 0 || *id > kMaxId) return loader.fail(ErrorCode::kCorrupt, "vocab entry '" + token + "' has no valid id");
    tok->vocab_.emplace(token, *id);
    max_id = std::max(max_id, *id);
  }
  // Added tokens.
  std::vector<AddedToken> added;
  if (const Json* list = member(root, "added_tokens"); list != nullptr && !list->is_null()) {
    if (!list->is_array()) return loader.fail(ErrorCode::kCorrupt, "added_tokens is not a list");
    for (const Json& a : *list) {
      AddedToken t;
      t.content = string_member(a, "content");
      const Json* idj = member(a, "id");
      const auto id = idj ? as_int64(*idj) : std::nullopt;
      if (t.content.empty() || !id || *id < 0 || *id > kMaxId) {
        return loader.fail(ErrorCode::kCorrupt, "added_tokens entry " + std::to_string(added.size()) + " has no content or no valid id");
      }
      t.id = *id;
      auto flag = [&](const char* key) {
        const Json* f = member(a, key);
        return f != nullptr && as_bool(*f).value_or(false);
      };
      t.special = flag("special");
      t.lstrip = flag("lstrip");
      t.rstrip = flag("rstrip");
      t.single_word = flag("single_word");
      max_id = std::max(max_id, t.id);
      added.push_back(std::move(t));
    }
  }
  if (max_id < 0) return loader.fail(ErrorCode::kCorrupt, "the vocabulary is empty");
  tok->id_to_token_.assign(static_cast<size_t>(max_id) + 1, std::string());
  tok->special_.assign(static_cast<size_t>(max_id) + 1, false);
  std::vector<bool> present(static_cast<size_t>(max_id) + 1, false);
  for (const auto& [token, id] : tok->vocab_) {
    tok->id_to_token_[static_cast<size_t>(id)] = token;
    present[static_cast<size_t>(id)] = true;
  }
  for (const AddedToken& t : added) {
    tok->id_to_token_[static_cast<size_t>(t.id)] = t.content;
    tok->special_[static_cast<size_t>(t.id)] = t.special;
    present[static_cast<size_t>(t.id)] = true;
  }
  tok->present_ = std::move(present);
  if (std::string unk = string_member(*model, "unk_token"); !unk.empty()) {
    auto it = tok->vocab_.find(unk);
    if (it == tok->vocab_.end()) return loader.fail(ErrorCode::kCorrupt, "unk_token '" + unk + "' is not in the vocabulary");
    tok->unk_ = it->second;
  }

  // Merges: "a b" strings (older files) or [a, b] pairs; the rank is the position.
  const Json* merges = typed_member(*model, "merges", Json::value_t::array);
  if (merges == nullptr) return loader.fail(ErrorCode::kCorrupt, "BPE model has no merges list");
  tok->merges_.reserve(merges->size());
  uint32_t rank = 0;
  for (const Json& m : *merges) {
    std::string a, b;
    if (m.is_string()) {
      const std::string& s = m.get_ref<const std::string&>();
      const size_t space = s.find(' ');
      if (space == std::string::npos || s.find(' ', space + 1) != std::string::npos) {
        return loader.fail(ErrorCode::kCorrupt, "merges entry " + std::to_string(rank) + " ('" + s + "') is not two tokens separated by one space");
      }
      a = s.substr(0, space);
      b = s.substr(space + 1);
    } else if (m.is_array() && m.size() == 2 && m[0].is_string() && m[1].is_string()) {
      a = m[0].get<std::string>();
      b = m[1].get<std::string>();
    } else {
      return loader.fail(ErrorCode::kCorrupt, "merges entry " + std::to_string(rank) + " is neither \"a b\" nor [a, b]");
    }
    auto ia = tok->vocab_.find(a), ib = tok->vocab_.find(b), im = tok->vocab_.find(a + b);
    for (auto [it, token] : {std::pair{ia, &a}, std::pair{ib, &b}}) {
      if (it == tok->vocab_.end()) {
        return loader.fail(ErrorCode::kCorrupt, "merges entry " + std::to_string(rank) + " names unknown token '" + *token + "'");
      }
    }
    if (im == tok->vocab_.end()) {
      return loader.fail(ErrorCode::kCorrupt, "merges entry " + std::to_string(rank) + " makes '" + a + b + "', which is not in the vocabulary");
    }
    // A repeated pair keeps its first (lowest) rank, as the tokenizers library does.
    tok->merges_.emplace(HuggingFaceTokenizer::pair_key(ia->second, ib->second), BpeMerge{rank, im->second});
    ++rank;
  }

  if (const Json* n = member(root, "normalizer")) ETSCOPE_TRY(loader.normalizer(*n, tok->normalizer_));
  if (const Json* p = member(root, "pre_tokenizer")) ETSCOPE_TRY(loader.pre_tokenizer(*p, tok->pre_tokenizer_));
  if (const Json* d = member(root, "decoder"); d != nullptr && !d->is_null()) {
    tok->has_decoder_ = true;
    ETSCOPE_TRY(loader.decoder(*d, tok->decoder_));
  }

  // BOS/EOS: the post-processor's template, else well-known special token names.
  std::optional<std::string> bos_name, eos_name;
  int64_t template_bos = -1;
  if (const Json* p = member(root, "post_processor"); p != nullptr && !p->is_null()) {
    loader.post_processor(*p, bos_name, eos_name, template_bos);
  }
  auto added_id = [&](const std::string& content) -> std::optional<int64_t> {
    for (const AddedToken& t : added) {
      if (t.content == content) return t.id;
    }
    auto it = tok->vocab_.find(content);
    if (it != tok->vocab_.end()) return it->second;
    return std::nullopt;
  };
  if (template_bos >= 0 && template_bos <= max_id) {
    tok->bos_ = template_bos;
  } else if (bos_name) {
    tok->bos_ = added_id(*bos_name);
  }
  if (!tok->bos_) {
    for (const char* known : {"<|begin_of_text|>", "<s>", "<bos>"}) {
      if (auto id = added_id(known)) {
        tok->bos_ = id;
        break;
      }
    }
  }
  if (eos_name) {
    if (auto id = added_id(*eos_name)) tok->eos_.push_back(*id);
  }
  for (const char* known : {"<|end_of_text|>", "</s>", "<|endoftext|>", "<eos>", "<|eot_id|>", "<|im_end|>", "<|end|>"}) {
    for (const AddedToken& t : added) {
      if (t.special && t.content == known && std::find(tok->eos_.begin(), tok->eos_.end(), t.id) == tok->eos_.end()) {
        tok->eos_.push_back(t.id);
      }
    }
  }

  const bool byte_level = std::any_of(tok->pre_tokenizer_.begin(), tok->pre_tokenizer_.end(),
                                      [](const PreTokenizerStep& s) { return s.kind == PreTokenizerStep::Kind::kByteLevel; });
  tok->description_ = std::string("Hugging Face tokenizer.json, ") + (byte_level ? "byte-level BPE" : "BPE") +
                      (tok->byte_fallback_ ? " with byte fallback" : "") + ", " + std::to_string(max_id + 1) + " ids (" +
                      std::to_string(merges->size()) + " merges, " + std::to_string(added.size()) + " added tokens)";
  tok->added_ = AddedTokenMatcher(std::move(added));
  return std::unique_ptr<Tokenizer>(std::move(tok));
}

}  // namespace etscope::tokenizer
