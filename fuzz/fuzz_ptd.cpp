// .ptd: the tensor-data (FlatTensor) reader.
#include "etscope/formats/ptd_reader.h"
#include "fuzz_target.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  (void)etscope::PtdReader::read(etscope::Blob::from_bytes("fuzz.ptd", {data, size}));
  return 0;
}
