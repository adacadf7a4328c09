// etscope tokenize: what a tokenizer file makes of a text (its ids, one token per line), or the
// text of a list of ids: the debugging companion of `etscope generate --tokenizer`.
#include <iostream>

#include "commands/command.h"
#include "etscope/core/json.h"
#include "etscope/tokenizer/tokenizer.h"
#include "render/json_output.h"

namespace etscope::cli {
namespace {

// One token's text for a terminal: quoted, control characters escaped; bytes that are not a
// whole character (a byte-level token cut inside one) as <0xNN>.
std::string token_display(const std::string& bytes) {
  const std::string repaired = tokenizer::repair_utf8(bytes);
  std::string out = "\"";
  if (repaired != bytes) {
    out = "";
    static const char* hex = "0123456789ABCDEF";
    for (unsigned char c : bytes) out += std::string("<0x") + hex[c >> 4] + hex[c & 15] + ">";
    return out;
  }
  for (char c : bytes) {
    switch (c) {
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof(buf), "\\x%02x", static_cast<unsigned char>(c));
          out += buf;
        } else {
          out += c;
        }
    }
  }
  return out + "\"";
}

Result<std::vector<int64_t>> parse_ids(const std::string& file, const std::string& list) {
  std::vector<int64_t> ids;
  size_t pos = 0;
  while (pos <= list.size()) {
    size_t end = list.find_first_of(", ", pos);
    if (end == std::string::npos) end = list.size();
    const std::string item = list.substr(pos, end - pos);
    pos = end + 1;
    if (item.empty()) continue;
    const auto id = parse_int(item);
    if (!id) return Error(ErrorCode::kInvalidArgument, file + ": --ids: '" + item + "' is not an integer token id");
    ids.push_back(*id);
  }
  return ids;
}

class TokenizeCommand final : public Command {
 public:
  CLI::App* add_to(CLI::App& app) override {
    CLI::App* sub = app.add_subcommand("tokenize", "Encode text into token ids, or decode ids, with a tokenizer file "
                                                   "(tokenizer.json, tiktoken, SentencePiece .model)");
    sub->add_option("file", file_, "Tokenizer file; its kind is read from its content")->required();
    text_option_ = sub->add_option("--text", text_, "Text to encode");
    ids_option_ = sub->add_option("--ids", ids_, "Token ids to decode, separated by commas or spaces");
    text_option_->excludes(ids_option_);
    sub->add_flag("--bos", bos_, "With --text: put the tokenizer's beginning-of-sequence id first");
    sub->add_flag("--eos", eos_, "With --text: put its end-of-sequence id last");
    report_format_.add_to(sub, "{file, kind, vocab_size, bos_id, eos_ids, ids, text, tokens: [{id, text, special}]}");
    return sub;
  }

  Result<int> run() override {
    if (text_option_->count() == 0 && ids_option_->count() == 0) {
      return Error(ErrorCode::kInvalidArgument, file_ + ": give --text TEXT to encode or --ids 1,2,3 to decode");
    }
    ETSCOPE_ASSIGN_OR_RETURN(auto tok, tokenizer::load_tokenizer(file_));
    std::vector<int64_t> ids;
    std::string text;
    if (ids_option_->count() > 0) {
      ETSCOPE_ASSIGN_OR_RETURN(ids, parse_ids(file_, ids_));
      ETSCOPE_ASSIGN_OR_RETURN(text, tok->decode(ids));
    } else {
      auto encoded = tok->encode(text_, bos_, eos_);
      if (!encoded.ok()) return encoded.error().message().starts_with(file_) ? encoded.error() : encoded.error().with_context(file_);
      ids = std::move(encoded).value();
      text = text_;
    }
    std::vector<std::string> pieces;
    for (int64_t id : ids) {
      ETSCOPE_ASSIGN_OR_RETURN(std::string bytes, tok->decode_bytes(std::span<const int64_t>(&id, 1)));
      pieces.push_back(std::move(bytes));
    }
    if (report_format_.json()) {
      Json tokens = Json::array();
      for (size_t i = 0; i < ids.size(); ++i) {
        tokens.push_back({{"id", ids[i]}, {"text", tokenizer::repair_utf8(pieces[i])}, {"special", tok->is_special(ids[i])}});
      }
      Json j{{"file", file_},
             {"kind", tokenizer::to_string(tok->kind())},
             {"vocab_size", tok->vocab_size()},
             {"bos_id", tok->bos_id() ? Json(*tok->bos_id()) : Json()},
             {"eos_ids", tok->eos_ids()},
             {"ids", ids},
             {"text", text},
             {"tokens", std::move(tokens)}};
      std::cout << dump_json(j) << "\n";
      return 0;
    }
    std::cout << file_ << ": " << tok->description() << "\n";
    std::cout << ids.size() << (ids.size() == 1 ? " token" : " tokens") << "\n";
    for (size_t i = 0; i < ids.size(); ++i) {
      std::string id = std::to_string(ids[i]);
      std::cout << "  " << std::string(id.size() < 8 ? 8 - id.size() : 0, ' ') << id << "  " << token_display(pieces[i])
                << (tok->is_special(ids[i]) ? "  (special)" : "") << "\n";
    }
    std::string list;
    for (int64_t id : ids) list += (list.empty() ? "" : ",") + std::to_string(id);
    std::cout << "ids:  " << list << "\n";
    std::cout << "text: " << token_display(text) << "\n";
    return 0;
  }

 private:
  std::string file_;
  std::string text_;
  std::string ids_;
  bool bos_ = false;
  bool eos_ = false;
  CLI::Option* text_option_ = nullptr;
  CLI::Option* ids_option_ = nullptr;
  ReportFormat report_format_;
};

}  // namespace

std::unique_ptr<Command> make_tokenize_command() { return std::make_unique<TokenizeCommand>(); }

}  // namespace etscope::cli
