// ETDump: the reader, then the Inspector's grouping and statistics over what it read.
#include <memory>

#include "etscope/etdump/etdump_reader.h"
#include "etscope/inspect/inspector.h"
#include "fuzz_target.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto dump = etscope::etdump::EtDumpReader::read(etscope::Blob::from_bytes("fuzz.etdp", {data, size}));
  if (!dump.ok()) return 0;
  auto in = etscope::inspect::Inspector::build(std::make_shared<const etscope::etdump::EtDumpFile>(std::move(dump).value()),
                                               nullptr, nullptr);
  if (!in.ok()) return 0;
  for (size_t b = 0; b < in->blocks().size(); ++b) {
    (void)in->run_time(b);
    (void)in->summary_by_type(b);
  }
  (void)in->recording_losses();
  return 0;
}
