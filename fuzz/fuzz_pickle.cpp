// The pickle virtual machine behind torch.save, on a bare pickle stream (an ETRecord's
// data.pkl without its zip), with a small operation limit so hostile loops end quickly.
#include <span>

#include "fuzz_target.h"
#include "etscope/etrecord/pickle_reader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  etscope::etrecord::ReadLimits limits;
  limits.max_pickle_ops = 1'000'000;
  etscope::etrecord::Unpickler unpickler(limits);
  (void)unpickler.load(std::span<const uint8_t>(data, size), "fuzz.pkl");
  return 0;
}
