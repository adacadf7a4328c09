// etscope::tokenizer against the Python libraries: every fixture tokenizer in
// tests/fixtures/tokenizers/ (trained offline by samples/export/make_tokenizer_fixtures.py) must
// give the ids the Python library gave for each string, decode them back to the Python library's
// text, and stream-decode to the same text; broken files must fail naming the problem.
#include <catch2/catch.hpp>

#include <fstream>
#include <sstream>

#include "etscope/core/json.h"
#include "etscope/tokenizer/tokenizer.h"
#include "testing/test_util.h"

using namespace etscope;
using namespace etscope::tokenizer;

namespace {

std::string tokenizers_dir() { return testing::fixture_dir() + "/../tokenizers"; }

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

const Json& expected() {
  static const Json j = [] {
    auto parsed = parse_json(read_text(tokenizers_dir() + "/expected.json"), 64, "expected.json");
    REQUIRE(parsed.ok());
    return std::move(parsed).value();
  }();
  return j;
}

std::unique_ptr<Tokenizer> load_fixture(const std::string& file) {
  auto tok = load_tokenizer(tokenizers_dir() + "/" + file);
  INFO(file << ": " << (tok.ok() ? "" : tok.error().message()));
  REQUIRE(tok.ok());
  return std::move(tok).value();
}

Result<std::unique_ptr<Tokenizer>> load_text(const std::string& text, const std::string& name) {
  return load_tokenizer_from_bytes({reinterpret_cast<const uint8_t*>(text.data()), text.size()}, name);
}

// Every case of one fixture file: ids, decode, streaming decode. `equal_score_ties` allows that
// many strings to segment differently into as many pieces with the same text: a unigram model's
// Viterbi search breaks exact score ties differently in Debian's libsentencepiece 0.1.97 and the
// Python sentencepiece 0.2.3 that made the fixture ("fff" is f+ff or ff+f, both scoring -10.1656).
void check_file(const std::string& file, int equal_score_ties = 0) {
  if (file.ends_with(".model") && file.starts_with("sp_") && !sentencepiece_available()) {
    {
    WARN("this build has no libsentencepiece");
    return;
  }
  }
  auto tok = load_fixture(file);
  const Json& spec = expected()["files"][file];
  CHECK(tok->vocab_size() == spec["vocab_size"].get<int64_t>());
  size_t checked = 0;
  for (const Json& c : spec["cases"]) {
    const std::string text = c["text"].get<std::string>();
    const std::vector<int64_t> want = c["ids"].get<std::vector<int64_t>>();
    const std::string decoded = c["decoded"].get<std::string>();
    INFO(file << " text: \"" << text << "\"");
    auto ids = tok->encode(text, false, false);
    REQUIRE(ids.ok());
    if (*ids != want && equal_score_ties > 0 && ids->size() == want.size()) {
      --equal_score_ties;
      auto ours = tok->decode(*ids);
      REQUIRE(ours.ok());
      CHECK(*ours == decoded);
    } else {
      CHECK(*ids == want);
    }
    auto back = tok->decode(want);
    REQUIRE(back.ok());
    CHECK(*back == decoded);
    StreamDecoder stream(*tok);
    std::string streamed;
    for (int64_t id : want) {
      auto piece = stream.next(id);
      REQUIRE(piece.ok());
      streamed += *piece;
    }
    streamed += stream.finish();
    CHECK(streamed == decoded);
    ++checked;
  }
  CHECK(checked >= 25);
}

}  // namespace

TEST_CASE("byte-level BPE tokenizer.json (Llama 3 split, merges as pairs) matches tokenizers", "[tokenizer]") {
  check_file("hf_bytelevel.json");
}

TEST_CASE("byte-level BPE tokenizer.json with merges as strings matches tokenizers", "[tokenizer]") {
  check_file("hf_bytelevel_str.json");
}

TEST_CASE("added tokens with lstrip, rstrip and single_word, special and not, match tokenizers", "[tokenizer]") {
  check_file("hf_added.json");
}

TEST_CASE("NFC and regex Replace normalizers, every Split behaviour and a ByteLevel prefix space match tokenizers", "[tokenizer]") {
  check_file("hf_variants.json");
}

TEST_CASE("GPT-2 style Digits and ByteLevel regex pre-tokenizer matches tokenizers", "[tokenizer]") {
  check_file("hf_gpt2.json");
}

TEST_CASE("Metaspace BPE with byte fallback matches tokenizers", "[tokenizer]") { check_file("hf_metaspace.json"); }

TEST_CASE("Llama 2 style Prepend and Replace normalizer with ByteFallback decoder matches tokenizers", "[tokenizer]") {
  check_file("hf_llama2.json");
}

TEST_CASE("tiktoken file with Llama 3 special tokens matches pytorch_tokenizers", "[tokenizer]") {
  check_file("tiktoken.model");
}

TEST_CASE("SentencePiece BPE model matches sentencepiece", "[tokenizer]") { check_file("sp_bpe.model"); }

TEST_CASE("SentencePiece unigram model matches sentencepiece", "[tokenizer]") { check_file("sp_unigram.model", 1); }

TEST_CASE("kinds are detected by content, not by extension", "[tokenizer]") {
  for (const auto& [file, kind] : {std::pair{"hf_bytelevel.json", TokenizerKind::kHuggingFace},
                                   std::pair{"tiktoken.model", TokenizerKind::kTiktoken}}) {
    auto tok = load_text(read_text(tokenizers_dir() + "/" + file), "renamed.bin");
    REQUIRE(tok.ok());
    CHECK((*tok)->kind() == kind);
  }
  if (sentencepiece_available()) {
    auto tok = load_text(read_text(tokenizers_dir() + "/sp_bpe.model"), "tokenizer.json");
    REQUIRE(tok.ok());
    CHECK((*tok)->kind() == TokenizerKind::kSentencePiece);
  }
}

TEST_CASE("special tokens: BOS and EOS, is_special, add_bos and add_eos", "[tokenizer]") {
  SECTION("tokenizer.json: BOS from the TemplateProcessing post-processor") {
    auto tok = load_fixture("hf_bytelevel.json");
    const std::vector<int64_t> with_special = expected()["files"]["hf_bytelevel.json"]["with_special"].get<std::vector<int64_t>>();
    REQUIRE(tok->bos_id().has_value());
    CHECK(*tok->bos_id() == with_special.front());
    CHECK(tok->eos_ids() == std::vector<int64_t>{1});
    CHECK(tok->is_special(0));
    CHECK_FALSE(tok->is_special(40));
    CHECK_FALSE(tok->is_special(-1));
    CHECK_FALSE(tok->is_special(tok->vocab_size()));
    auto ids = tok->encode("x", true, true);
    REQUIRE(ids.ok());
    CHECK(*ids == std::vector<int64_t>{with_special[0], with_special[1], 1});
  }
  SECTION("tokenizer.json without a template still knows its specials by name") {
    auto tok = load_fixture("hf_bytelevel_str.json");
    CHECK(tok->bos_id() == std::optional<int64_t>(0));
  }
  SECTION("a tokenizer.json naming no BOS refuses add_bos") {
    auto tok = load_fixture("hf_gpt2.json");
    CHECK_FALSE(tok->bos_id().has_value());
    auto ids = tok->encode("x", true, false);
    REQUIRE_FALSE(ids.ok());
    CHECK(ids.error().message().find("no beginning-of-sequence token") != std::string::npos);
  }
  SECTION("tiktoken: Llama 3's special tokens follow the ranks") {
    auto tok = load_fixture("tiktoken.model");
    const Json& spec = expected()["files"]["tiktoken.model"];
    CHECK(tok->bos_id() == std::optional<int64_t>(spec["bos_id"].get<int64_t>()));
    CHECK(tok->eos_ids() == std::vector<int64_t>{spec["eos_id"].get<int64_t>()});
    CHECK(tok->vocab_size() == *tok->bos_id() + 256);
    CHECK(tok->is_special(*tok->bos_id() + 255));
    CHECK_FALSE(tok->is_special(*tok->bos_id() - 1));
    auto eot = tok->encode("<|eot_id|>", false, false);
    REQUIRE(eot.ok());
    CHECK(*eot == std::vector<int64_t>{*tok->bos_id() + 9});
    auto text = tok->decode(*eot);
    REQUIRE(text.ok());
    CHECK(*text == "<|eot_id|>");
  }
  SECTION("SentencePiece: bos and eos pieces are control pieces") {
    if (!sentencepiece_available()) {
    WARN("this build has no libsentencepiece");
    return;
  }
    auto tok = load_fixture("sp_bpe.model");
    CHECK(tok->bos_id() == std::optional<int64_t>(1));
    CHECK(tok->eos_ids() == std::vector<int64_t>{2});
    CHECK(tok->is_special(1));
    CHECK(tok->is_special(0));  // <unk>
    auto ids = tok->encode("hello", true, true);
    REQUIRE(ids.ok());
    CHECK(ids->front() == 1);
    CHECK(ids->back() == 2);
  }
}

TEST_CASE("streaming decode holds back a character split across byte tokens", "[tokenizer]") {
  auto tok = load_fixture("hf_bytelevel.json");
  // A character of a script absent from the corpus stays as single bytes.
  auto ids = tok->encode("\xF0\x9F\xA6\x80", false, false);  // U+1F980
  REQUIRE(ids.ok());
  REQUIRE(ids->size() >= 2);
  StreamDecoder stream(*tok);
  for (size_t i = 0; i + 1 < ids->size(); ++i) {
    auto piece = stream.next((*ids)[i]);
    REQUIRE(piece.ok());
    CHECK(piece->empty());
  }
  auto last = stream.next(ids->back());
  REQUIRE(last.ok());
  CHECK(*last == "\xF0\x9F\xA6\x80");
  // Cut short, the held bytes come out of finish() as one U+FFFD, as decode() gives them.
  StreamDecoder cut(*tok);
  auto held = cut.next((*ids)[0]);
  REQUIRE(held.ok());
  CHECK(held->empty());
  CHECK(cut.finish() == "\xEF\xBF\xBD");
  auto partial = tok->decode(std::span<const int64_t>(ids->data(), 1));
  REQUIRE(partial.ok());
  CHECK(*partial == "\xEF\xBF\xBD");
}

TEST_CASE("UTF-8 repair replaces each invalid sequence as Python's errors=replace does", "[tokenizer]") {
  CHECK(repair_utf8("abc") == "abc");
  CHECK(repair_utf8("a\xE4\xB8") == "a\xEF\xBF\xBD");
  CHECK(repair_utf8("\xFF\xFE") == "\xEF\xBF\xBD\xEF\xBF\xBD");
  CHECK(repair_utf8("\xE4\xB8x") == "\xEF\xBF\xBDx");
  CHECK(settled_utf8_prefix("ab\xE4\xB8") == 2);
  CHECK(settled_utf8_prefix("ab\xE4\xB8\xAD") == 5);
  CHECK(settled_utf8_prefix("ab\xFF") == 3);
}

TEST_CASE("long words merge correctly and the text need not be in the corpus", "[tokenizer]") {
  auto tok = load_fixture("hf_bytelevel.json");
  std::string word;
  for (int i = 0; i < 2000; ++i) word += "tokenizers";
  auto ids = tok->encode(word, false, false);
  REQUIRE(ids.ok());
  CHECK(ids->size() < word.size() / 2);
  auto back = tok->decode(*ids);
  REQUIRE(back.ok());
  CHECK(*back == word);
}

TEST_CASE("half-megabyte runs of one character class are split and round-trip whole", "[tokenizer]") {
  // A regex engine giving up (a JIT stack or backtracking limit) must never drop text silently.
  for (const std::string file : {"hf_bytelevel.json", "hf_gpt2.json", "hf_llama2.json", "tiktoken.model"}) {
    auto tok = load_fixture(file);
    for (const std::string& unit : {std::string(" "), std::string("a"), std::string("!"), std::string("\n"), std::string("7"),
                                    std::string("\xE6\x97\xA5"), std::string(" \t")}) {
      std::string text;
      while (text.size() < (1u << 19)) text += unit;
      INFO(file << " unit '" << unit << "'");
      auto ids = tok->encode(text, false, false);
      REQUIRE(ids.ok());
      auto back = tok->decode(*ids);
      REQUIRE(back.ok());
      CHECK(*back == text);
    }
  }
}

TEST_CASE("bad input fails with a message naming the problem", "[tokenizer]") {
  auto error_of = [](const std::string& bytes, const std::string& name) {
    auto tok = load_text(bytes, name);
    REQUIRE_FALSE(tok.ok());
    return tok.error().message();
  };
  const std::string json = read_text(tokenizers_dir() + "/hf_bytelevel_str.json");
  const std::string tiktoken = read_text(tokenizers_dir() + "/tiktoken.model");

  SECTION("empty file") { CHECK(error_of("", "t.json") == "t.json: empty file (no tokenizer)"); }
  SECTION("not a tokenizer") { CHECK(error_of("hello world\n", "x.txt").find("x.txt: not a tokenizer") == 0); }
  SECTION("truncated JSON") {
    const std::string msg = error_of(json.substr(0, json.size() / 2), "t.json");
    CHECK(msg.find("t.json") == 0);
    CHECK(msg.find("truncated or not JSON") != std::string::npos);
  }
  SECTION("a merges entry naming an unknown token") {
    std::string broken = json;
    const size_t merges = broken.find("\"merges\"");
    REQUIRE(merges != std::string::npos);
    const size_t first = broken.find('"', broken.find('[', merges)) + 1;
    broken.insert(first, "NOSUCH");
    CHECK(error_of(broken, "t.json").find("t.json: merges entry 0 names unknown token 'NOSUCH") == 0);
  }
  SECTION("an unsupported model or normalizer is named") {
    CHECK(error_of(R"({"model": {"type": "WordPiece", "vocab": {}}})", "w.json").find("w.json: model 'WordPiece' is not supported") == 0);
    std::string nfkc = json;
    const size_t n = nfkc.find("\"normalizer\": null");
    REQUIRE(n != std::string::npos);
    nfkc.replace(n, 18, R"("normalizer": {"type": "NFKC"})");
    CHECK(error_of(nfkc, "n.json").find("n.json: normalizer 'NFKC' is not supported") == 0);
  }
  SECTION("invalid base64 in a tiktoken file") {
    std::string broken = tiktoken;
    const size_t line3 = broken.find('\n', broken.find('\n') + 1) + 1;
    broken.replace(line3, 1, "!");
    CHECK(error_of(broken, "t.model").find("t.model: line 3: invalid base64 '!") == 0);
  }
  SECTION("a tiktoken file with a gap in its ranks") {
    CHECK(error_of("IQ== 0\nIg== 5\n", "g.model").find("g.model: 2 ranks but the largest is 5") == 0);
  }
  SECTION("a corrupted SentencePiece model") {
    if (!sentencepiece_available()) {
    WARN("this build has no libsentencepiece");
    return;
  }
    std::string model = read_text(tokenizers_dir() + "/sp_bpe.model");
    model.resize(model.size() / 3);
    CHECK(error_of(model, "m.model").find("m.model: not a valid SentencePiece model") == 0);
  }
  SECTION("invalid UTF-8 text") {
    auto tok = load_fixture("hf_bytelevel.json");
    auto ids = tok->encode("ab\xFF", false, false);
    REQUIRE_FALSE(ids.ok());
    CHECK(ids.error().message().find("not valid UTF-8 (byte 2)") != std::string::npos);
  }
}

TEST_CASE("ids out of range fail to decode for every kind", "[tokenizer]") {
  std::vector<std::string> files = {"hf_bytelevel.json", "hf_metaspace.json", "tiktoken.model"};
  if (sentencepiece_available()) files.push_back("sp_unigram.model");
  for (const std::string& file : files) {
    auto tok = load_fixture(file);
    for (int64_t bad : {int64_t{-1}, tok->vocab_size()}) {
      const std::vector<int64_t> ids = {3, bad};
      auto text = tok->decode(ids);
      REQUIRE_FALSE(text.ok());
      CHECK(text.error().message() == tok->name() + ": token id " + std::to_string(bad) + " (position 1) is outside the vocabulary of " +
                                          std::to_string(tok->vocab_size()) + " ids");
      StreamDecoder stream(*tok);
      CHECK_FALSE(stream.next(bad).ok());
    }
  }
}

TEST_CASE("NFC normalizer composes before merging when ICU is available", "[tokenizer]") {
  std::string json = read_text(tokenizers_dir() + "/hf_bytelevel_str.json");
  const size_t n = json.find("\"normalizer\": null");
  REQUIRE(n != std::string::npos);
  json.replace(n, 18, R"("normalizer": {"type": "NFC"})");
  auto tok = load_text(json, "nfc.json");
  if (!tok.ok()) {
    CHECK(tok.error().message().find("normalizer 'NFC' is not supported") != std::string::npos);
    return;
  }
  auto composed = (*tok)->encode("caf\xC3\xA9", false, false);     // é as one code point
  auto decomposed = (*tok)->encode("cafe\xCC\x81", false, false);  // e + combining acute
  REQUIRE(composed.ok());
  REQUIRE(decomposed.ok());
  CHECK(*composed == *decomposed);
}
