// etscope tokenize: encode and decode through the CLI, JSON output, and one-line failures.
#include <catch2/catch.hpp>

#include "etscope/core/json.h"
#include "testing/test_util.h"

using etscope::testing::run_etscope;

namespace {
std::string tokenizer_file(const std::string& name) { return etscope::testing::fixture_dir() + "/../tokenizers/" + name; }
}  // namespace

TEST_CASE("tokenize encodes text and decodes the ids back", "[cli][tokenize]") {
  auto enc = run_etscope("tokenize " + tokenizer_file("hf_bytelevel.json") + " --text 'Hello world' --bos --format json");
  REQUIRE(enc.exit_code == 0);
  auto j = etscope::parse_json(enc.out, 16, "out");
  REQUIRE(j.ok());
  CHECK((*j)["kind"] == "huggingface");
  const auto ids = (*j)["ids"].get<std::vector<int64_t>>();
  REQUIRE(ids.size() >= 2);
  CHECK(ids.front() == (*j)["bos_id"].get<int64_t>());
  CHECK((*j)["tokens"][0]["special"] == true);
  std::string list;
  for (int64_t id : ids) list += (list.empty() ? "" : ",") + std::to_string(id);
  auto dec = run_etscope("tokenize " + tokenizer_file("hf_bytelevel.json") + " --ids " + list);
  REQUIRE(dec.exit_code == 0);
  CHECK(dec.out.find("text: \"<|begin_of_text|>Hello world\"") != std::string::npos);
  CHECK(dec.out.find("ids:  " + list) != std::string::npos);
}

TEST_CASE("tokenize reports a bad file or id on one line", "[cli][tokenize]") {
  auto out_of_range = run_etscope("tokenize " + tokenizer_file("tiktoken.model") + " --ids 1,100000");
  CHECK(out_of_range.exit_code == 1);
  CHECK(out_of_range.err == "etscope: " + tokenizer_file("tiktoken.model") +
                                ": token id 100000 (position 1) is outside the vocabulary of 954 ids\n");
  auto wrong = run_etscope("tokenize " + tokenizer_file("expected.json") + " --text x");
  CHECK(wrong.exit_code == 1);
  CHECK(wrong.err.find("not a Hugging Face tokenizer.json") != std::string::npos);
  auto missing = run_etscope("tokenize /nonexistent/tokenizer.json --text x");
  CHECK(missing.exit_code == 1);
  CHECK(missing.err == "etscope: /nonexistent/tokenizer.json: cannot open for reading\n");
}
