// XNNPACK delegate payload: header, graph flatbuffer, constants (named data resolves to a fixed
// block, so that constants by key are exercised too), then a summary walk over what parsed.
#include "etscope/formats/xnnpack_payload.h"
#include "fuzz_target.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::vector<uint8_t> named_block(4096, 1);
  etscope::xnn::NamedDataLookup named = [](std::string_view key) -> std::optional<std::span<const uint8_t>> {
    if (key.empty() || key[0] == '!') return std::nullopt;
    return std::span<const uint8_t>(named_block);
  };
  auto g = etscope::xnn::parse_xnnpack_payload({data, size}, named, "fuzz.xnn");
  if (!g.ok()) return 0;
  // Every index the reader hands out must be inside the graph.
  size_t sum = 0;
  for (const auto& n : g->nodes) {
    for (int32_t v : n.inputs) sum += v < 0 ? 0 : g->values.at(static_cast<size_t>(v)).shape.size();
    for (int32_t v : n.outputs) sum += g->values.at(static_cast<size_t>(v)).constant.size();
  }
  for (int32_t v : g->inputs) sum += g->values.at(static_cast<size_t>(v)).numel;
  for (int32_t v : g->outputs) sum += g->values.at(static_cast<size_t>(v)).numel;
  for (const auto& v : g->values) {
    for (uint8_t b : v.constant) sum += b;
  }
  // Keep the walk from being optimised away.
  asm volatile("" : : "r"(sum) : "memory");
  return 0;
}
