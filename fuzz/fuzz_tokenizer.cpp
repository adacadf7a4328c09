// Tokenizer files (tokenizer.json, tiktoken, SentencePiece .model): load, then encode and decode
// a short text and every id, as `etscope tokenize` and `etscope generate` would.
#include "etscope/tokenizer/tokenizer.h"
#include "fuzz_target.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto tok = etscope::tokenizer::load_tokenizer_from_bytes({data, size}, "fuzz.tokenizer");
  if (!tok.ok()) return 0;
  auto ids = (*tok)->encode("Hello, world! 123 caf\xC3\xA9 \xF0\x9F\xA6\x80<|end_of_text|>", true, false);
  if (ids.ok()) (void)(*tok)->decode(*ids);
  etscope::tokenizer::StreamDecoder stream(**tok);
  const int64_t n = std::min<int64_t>((*tok)->vocab_size(), 4096);
  for (int64_t id = 0; id < n; ++id) (void)stream.next(id);
  (void)stream.finish();
  return 0;
}
