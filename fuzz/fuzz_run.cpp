// run: loads a (mutated) program under a 64 MiB memory limit, sets every tensor input to bytes
// of one, and executes each method twice: what `etscope run --ones` does with a stranger's
// program. Programs that load must execute or fail with an error, never touch foreign memory.
#include <vector>

#include "etscope/formats/pte_reader.h"
#include "etscope/runtime/method.h"
#include "fuzz_target.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto program = etscope::PteReader::read(etscope::Blob::from_bytes("fuzz.pte", {data, size}));
  if (!program.ok()) return 0;
  for (const etscope::ExecutionPlan& plan : program->plans) {
    etscope::rt::MethodOptions options;
    options.max_memory = uint64_t{64} << 20;
    auto method = etscope::rt::Method::load(*program, plan.name, options);
    if (!method.ok()) continue;
    etscope::rt::Method& m = **method;
    bool ready = true;
    for (size_t i = 0; i < m.num_inputs() && ready; ++i) {
      const etscope::rt::EValue& v = m.input(i);
      if (v.tag != etscope::rt::Tag::kTensor || v.tensor == nullptr) continue;
      const std::vector<uint8_t> ones(v.tensor->nbytes(), 1);
      ready = m.set_input(i, ones).ok();
    }
    if (!ready) continue;
    for (int k = 0; k < 2; ++k) {
      if (!m.execute().ok()) break;
    }
  }
  return 0;
}
