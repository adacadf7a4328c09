// .bpte: the bundled-program reader (and the program inside it).
#include "etscope/formats/bpte_reader.h"
#include "fuzz_target.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  (void)etscope::BpteReader::read(etscope::Blob::from_bytes("fuzz.bpte", {data, size}));
  return 0;
}
