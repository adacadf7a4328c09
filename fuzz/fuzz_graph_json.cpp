// The torch.export serde JSON inside an ETRecord: etscope's JSON parser (Python's NaN/Infinity
// included) and the ExportedProgram graph reader on top of it, without the zip around them.
#include <string>
#include <vector>

#include "etscope/core/json.h"
#include "fuzz_target.h"
#include "etscope/etrecord/graph_json.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  etscope::etrecord::ReadLimits limits;
  auto json = etscope::parse_json(std::span<const uint8_t>(data, size), 256, "fuzz.json");
  if (!json.ok()) return 0;
  std::vector<std::string> notes;
  (void)etscope::etrecord::parse_exported_program(*json, "forward", "fuzz.json", limits, 0, &notes);
  return 0;
}
