// .npy: the input-array parser `etscope run --input` uses.
#include "etscope/formats/npy.h"
#include "fuzz_target.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  (void)etscope::parse_npy({data, size}, "fuzz.npy");
  return 0;
}
