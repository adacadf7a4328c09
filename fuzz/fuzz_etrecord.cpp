// ETRecord: the zip archive, the torch.export graph JSON and the pickle reader behind it, with
// small limits so a hostile archive is refused quickly.
#include "etscope/etrecord/etrecord_reader.h"
#include "fuzz_target.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  etscope::etrecord::ReadLimits limits;
  limits.max_entry_bytes = uint64_t{64} << 20;
  limits.max_total_bytes = uint64_t{256} << 20;
  limits.max_pickle_ops = 1'000'000;
  (void)etscope::etrecord::EtRecordReader::read(etscope::Blob::from_bytes("fuzz.etrecord", {data, size}), limits);
  return 0;
}
