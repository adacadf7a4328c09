// run: loads a (mutated) program under a 64 MiB memory limit, sets every tensor input to bytes
// of one, and executes each method twice: what `etscope run --ones` does with a stranger's
// program; then once with NaN inputs; dynamic inputs are then shrunk and grown again. Programs that load must execute or fail with an error, never touch foreign memory.
// Each method is first loaded as the ExecuTorch engine loads it before handing it over
// (MethodOptions::validate_only).
#include <vector>

#include "etscope/formats/pte_reader.h"
#include "etscope/runtime/method.h"
#include "fuzz_target.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto program = etscope::PteReader::read(etscope::Blob::from_bytes("fuzz.pte", {data, size}));
  if (!program.ok()) return 0;
  for (const etscope::ExecutionPlan& plan : program->plans) {
    etscope::runtime::MethodOptions options;
    options.max_memory = uint64_t{64} << 20;
    {
      // The ExecuTorch engine's validation (kernels and delegates are ExecuTorch's): it must
      // refuse or accept without touching foreign memory, and a validated method refuses to run.
      etscope::runtime::MethodOptions check = options;
      check.validate_only = true;
      auto validated = etscope::runtime::Method::load(*program, plan.name, check);
      if (validated.ok()) (void)(*validated)->execute();
    }
    auto method = etscope::runtime::Method::load(*program, plan.name, options);
    if (!method.ok()) continue;
    etscope::runtime::Method& m = **method;
    bool ready = true;
    for (size_t i = 0; i < m.num_inputs() && ready; ++i) {
      const etscope::EValue& v = m.input(i);
      if (v.tag != etscope::Tag::kTensor || v.tensor == nullptr) continue;
      const std::vector<uint8_t> ones(v.tensor->nbytes(), 1);
      ready = m.set_input(i, ones).ok();
    }
    if (!ready) continue;
    for (int k = 0; k < 2; ++k) {
      if (!m.execute().ok()) break;
    }
    // Once more with every byte 0xff: NaN in every float input (-1 in integers), which kernels and
    // float-to-integer conversions must survive without undefined behaviour. Bool inputs keep
    // their ones (0xff is no bool and set_input refuses it).
    bool nan_ready = false;
    for (size_t i = 0; i < m.num_inputs(); ++i) {
      const etscope::EValue& v = m.input(i);
      if (v.tag != etscope::Tag::kTensor || v.tensor == nullptr) continue;
      const std::vector<uint8_t> nans(v.tensor->nbytes(), 0xff);
      nan_ready |= m.set_input(i, nans).ok();
    }
    if (nan_ready) (void)m.execute();
    // Dynamic inputs: run again with the first, then the last, dimension halved (the shapes a
    // delegate must propagate, or refuse), then at the full shape once more.
    std::vector<std::vector<int64_t>> full(m.num_inputs());
    for (size_t i = 0; i < m.num_inputs(); ++i) {
      const etscope::EValue& v = m.input(i);
      if (v.tag != etscope::Tag::kTensor || v.tensor == nullptr || !v.tensor->dynamic()) continue;
      full[i].assign(v.tensor->sizes().begin(), v.tensor->sizes().end());
    }
    for (int variant = 0; variant < 3; ++variant) {
      bool changed = false;
      for (size_t i = 0; i < m.num_inputs(); ++i) {
        if (full[i].empty()) continue;
        const etscope::EValue& v = m.input(i);
        std::vector<int64_t> sizes = full[i];
        if (variant < 2) {
          int64_t& d = variant == 0 ? sizes.front() : sizes.back();
          d = (d + 1) / 2;
        }
        int64_t n = 1;
        for (int64_t d : sizes) n *= d;
        const std::vector<uint8_t> ones(static_cast<size_t>(n) * v.tensor->element_size(), 1);
        changed |= m.set_input(i, ones, sizes).ok();
      }
      if (changed) (void)m.execute();
    }
  }
  return 0;
}
