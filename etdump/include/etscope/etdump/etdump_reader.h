// EtDumpReader: reads ETDump traces (.etdp) written by ExecuTorch or by EtDumpWriter into an
// EtDumpFile.
#pragma once

#include <memory>
#include <string>

#include "etscope/core/result.h"
#include "etscope/etdump/etdump_file.h"
#include "etscope/formats/blob.h"

namespace etscope::etdump {

class EtDumpReader {
 public:
  /// Parses an ETDump, size-prefixed or not. Errors: kWrongKind (another file kind),
  /// kNotSupported (the incompatible 2023 layout), kTruncated/kCorrupt (bad bytes).
  static Result<EtDumpFile> read(std::shared_ptr<const Blob> blob);
  static Result<EtDumpFile> open(const std::string& path);
};

}  // namespace etscope::etdump
