// SentencePiece .model files through Debian's libsentencepiece.
//
// Why the library rather than our own reader: a .model is a protobuf holding the pieces and a
// normalizer (a compiled character map), and encoding a unigram model is a lattice search with the
// library's own scoring details; reimplementing both to match SentencePiece id for id is a
// project of its own, while the library is packaged, small, and what the models were trained
// with. Without it (libsentencepiece-dev absent at configure time) etscope builds anyway and says
// so when asked to load a .model.
#include "loaders.h"

#ifdef ETSCOPE_HAVE_SENTENCEPIECE
#include <sentencepiece_processor.h>
#endif

#include "utf8.h"

namespace etscope::tokenizer {

#ifdef ETSCOPE_HAVE_SENTENCEPIECE
namespace {

class SentencePieceTokenizer final : public Tokenizer {
 public:
  explicit SentencePieceTokenizer(std::string name) : Tokenizer(std::move(name)) {}

  TokenizerKind kind() const override { return TokenizerKind::kSentencePiece; }
  std::string description() const override {
    return "SentencePiece model, " + std::to_string(vocab_size()) + " pieces";
  }
  int64_t vocab_size() const override { return processor_.GetPieceSize(); }
  std::optional<int64_t> bos_id() const override {
    const int id = processor_.bos_id();
    return id >= 0 ? std::optional<int64_t>(id) : std::nullopt;
  }
  std::vector<int64_t> eos_ids() const override {
    const int id = processor_.eos_id();
    return id >= 0 ? std::vector<int64_t>{id} : std::vector<int64_t>{};
  }
  bool is_special(int64_t id) const override {
    if (id < 0 || id >= vocab_size()) return false;
    return processor_.IsControl(static_cast<int>(id)) || processor_.IsUnknown(static_cast<int>(id));
  }

  Result<std::vector<int64_t>> encode(std::string_view text, bool add_bos, bool add_eos) const override {
    if (size_t bad = first_invalid_utf8(text); bad < text.size()) {
      return Error(ErrorCode::kInvalidArgument, "text is not valid UTF-8 (byte " + std::to_string(bad) + ")");
    }
    std::vector<int64_t> ids;
    if (add_bos) {
      if (!bos_id()) return Error(ErrorCode::kNotSupported, name() + ": the model has no beginning-of-sequence piece");
      ids.push_back(*bos_id());
    }
    std::vector<int> pieces;
    const auto status = processor_.Encode(absl::string_view(text.data(), text.size()), &pieces);
    if (!status.ok()) return Error(ErrorCode::kInternal, name() + ": SentencePiece could not encode: " + status.ToString());
    ids.insert(ids.end(), pieces.begin(), pieces.end());
    if (add_eos) {
      if (eos_ids().empty()) return Error(ErrorCode::kNotSupported, name() + ": the model has no end-of-sequence piece");
      ids.push_back(eos_ids().front());
    }
    return ids;
  }

  Result<std::string> decode_bytes(std::span<const int64_t> ids) const override {
    ETSCOPE_TRY(check_ids(ids));
    std::vector<int> narrow(ids.begin(), ids.end());
    std::string text;
    const auto status = processor_.Decode(narrow, &text);
    if (!status.ok()) return Error(ErrorCode::kInternal, name() + ": SentencePiece could not decode: " + status.ToString());
    return text;
  }

  sentencepiece::SentencePieceProcessor processor_;
};

}  // namespace

bool sentencepiece_available() { return true; }

Result<std::unique_ptr<Tokenizer>> load_sentencepiece(std::string_view bytes, const std::string& name) {
  auto tok = std::make_unique<SentencePieceTokenizer>(name);
  const auto status = tok->processor_.LoadFromSerializedProto(absl::string_view(bytes.data(), bytes.size()));
  if (!status.ok()) {
    return Error(ErrorCode::kCorrupt, name + ": not a valid SentencePiece model (" + status.ToString() + ")");
  }
  return std::unique_ptr<Tokenizer>(std::move(tok));
}

#else

bool sentencepiece_available() { return false; }

Result<std::unique_ptr<Tokenizer>> load_sentencepiece(std::string_view, const std::string& name) {
  return Error(ErrorCode::kNotSupported, name + ": a SentencePiece model, but this etscope was built without libsentencepiece "
                                                "(install libsentencepiece-dev and reconfigure)");
}

#endif

}  // namespace etscope::tokenizer
