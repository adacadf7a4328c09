// etscope::tokenizer: text to token ids and back for `etscope generate` and `etscope tokenize`.
//
// Three file kinds, detected by content (the extension is only a tie-breaker for messages):
//   - Hugging Face tokenizer.json with a BPE model: byte-level BPE (Llama 3, Qwen2, SmolLM, GPT-2)
//     and SentencePiece-style BPE (Metaspace or Replace/Prepend normalizers, <0xNN> byte fallback).
//   - tiktoken BPE files (one "base64-token rank" per line) read as ExecuTorch's Llama 3 runner
//     reads them: Llama 3's split pattern and its 256 special tokens appended after the ranks.
//   - SentencePiece .model files, through libsentencepiece when the build found it.
// Anything else, or a tokenizer.json using a component etscope does not implement (a WordPiece or
// Unigram model, an NFKC normalizer, ...), fails to load with one line naming it.
//
// No function throws; failures are etscope::Error with a message that starts with the file name.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "etscope/core/result.h"

namespace etscope::tokenizer {

enum class TokenizerKind : uint8_t {
  kHuggingFace,    ///< tokenizer.json, BPE model
  kTiktoken,       ///< tiktoken ranks with Llama 3's special tokens
  kSentencePiece,  ///< SentencePiece .model protobuf
};

/// "huggingface", "tiktoken", "sentencepiece".
const char* to_string(TokenizerKind kind);

/// A loaded tokenizer. Immutable after load; encode and decode may run concurrently.
class Tokenizer {
 public:
  virtual ~Tokenizer() = default;

  virtual TokenizerKind kind() const = 0;
  /// The name errors start with (the file name given to the loader).
  const std::string& name() const { return name_; }
  /// One line describing the file: kind, model, pre-tokenizer, vocabulary size.
  virtual std::string description() const = 0;
  /// Number of ids, special tokens included: every valid id is below this.
  virtual int64_t vocab_size() const = 0;

  /// The beginning-of-sequence id when the file names one (a TemplateProcessing post-processor,
  /// Llama 3's <|begin_of_text|>, a SentencePiece bos piece).
  virtual std::optional<int64_t> bos_id() const = 0;
  /// End-of-sequence ids the file knows of (may be empty). A program's own get_eos_ids method,
  /// when it has one, is the authority for generation.
  virtual std::vector<int64_t> eos_ids() const = 0;
  /// True for special/control tokens (added tokens marked special, tiktoken's special tokens,
  /// SentencePiece control and unknown pieces). False for ids out of range.
  virtual bool is_special(int64_t id) const = 0;

  /// Token ids of `text` (UTF-8), with bos_id() in front and the first of eos_ids() at the end
  /// when asked. Special tokens written in the text are matched as themselves. Fails when
  /// `add_bos`/`add_eos` is asked of a file that names no such token, or when the text is not
  /// valid UTF-8.
  virtual Result<std::vector<int64_t>> encode(std::string_view text, bool add_bos, bool add_eos) const = 0;

  /// The text of `ids`; invalid UTF-8 (a sequence cut in the middle of a character) becomes
  /// U+FFFD. Special tokens decode to their text (SentencePiece control pieces to nothing, as
  /// SentencePiece decodes them). Fails naming the first id outside [0, vocab_size()).
  Result<std::string> decode(std::span<const int64_t> ids) const;

  /// The bytes of `ids` before the UTF-8 repair decode() applies: may end inside a character.
  /// StreamDecoder builds on this.
  virtual Result<std::string> decode_bytes(std::span<const int64_t> ids) const = 0;

 protected:
  explicit Tokenizer(std::string name) : name_(std::move(name)) {}
  Status check_ids(std::span<const int64_t> ids) const;

 private:
  std::string name_;
};

/// Loads a tokenizer file of any supported kind, detected by content. Errors: kIo (unreadable),
/// kWrongKind (none of the kinds), kCorrupt/kTruncated (a broken file of a known kind, naming the
/// problem), kNotSupported (a component or file kind this build cannot read).
Result<std::unique_ptr<Tokenizer>> load_tokenizer(const std::filesystem::path& path);

/// The same from bytes in memory (tests, fuzzing); `name` starts every error message.
Result<std::unique_ptr<Tokenizer>> load_tokenizer_from_bytes(std::span<const uint8_t> bytes, const std::string& name);

/// Whether this build reads SentencePiece .model files (libsentencepiece found at configure time).
bool sentencepiece_available();

/// Turns ids arriving one at a time into text as soon as it is complete: holds back bytes of a
/// character split across tokens (byte-level BPE, <0xNN> byte fallback) and re-decodes a short
/// window so that decoders that look at neighbouring tokens (a leading-space strip) give the
/// same text as decoding everything at once. The concatenation of everything next() and
/// finish() return equals tokenizer.decode(all ids).
///
/// Borrows `tokenizer`, which must outlive the decoder.
class StreamDecoder {
 public:
  explicit StreamDecoder(const Tokenizer& tokenizer) : tokenizer_(&tokenizer) {}

  /// The text that `id` completes (often empty while a character is split). Fails for an id out
  /// of range, leaving the decoder as it was.
  Result<std::string> next(int64_t id);
  /// Whatever is still held back, with incomplete characters as U+FFFD.
  std::string finish();

 private:
  const Tokenizer* tokenizer_;
  std::vector<int64_t> window_;   // ids from the first one whose text is not settled
  size_t prefix_ids_ = 0;         // how many of window_ produced prefix_
  std::string prefix_;            // decode_bytes of window_[0, prefix_ids_)
};

/// `bytes` with each invalid or incomplete UTF-8 sequence replaced by U+FFFD (as Python's
/// errors="replace" does, one U+FFFD per maximal invalid subpart).
std::string repair_utf8(std::string_view bytes);

/// Length of the longest prefix of `bytes` that does not end inside a UTF-8 sequence that could
/// still be completed (complete characters and definitely-invalid bytes both count as settled).
size_t settled_utf8_prefix(std::string_view bytes);

}  // namespace etscope::tokenizer
