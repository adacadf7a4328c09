// EtRecordReader: reads ETRecord archives (zip + torch.export serde JSON + torch.save
// pickles) into an EtRecord, within limits that hold off hostile archives.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "etscope/core/result.h"
#include "etscope/etrecord/etrecord.h"
#include "etscope/formats/blob.h"

namespace etscope::etrecord {

/// Safety limits against hostile archives. The defaults suit every real ETRecord.
struct ReadLimits {
  uint64_t max_entries = 10000;
  uint64_t max_entry_bytes = uint64_t{1} << 30;      ///< Uncompressed, per member.
  uint64_t max_total_bytes = uint64_t{4} << 30;      ///< Uncompressed, all members read.
  uint64_t max_ratio = 1000;            ///< Compression ratio cap for members over 1 MiB.
  uint64_t max_json_depth = 256;        ///< Nesting of JSON objects and arrays.
  uint64_t max_pickle_ops = 10'000'000; ///< Opcodes executed per pickle.
  uint64_t max_pickle_depth = 1000;     ///< Container nesting in a pickle.
  uint64_t max_nested_zip_depth = 2;    ///< torch.save zips inside the ETRecord zip.
};

class EtRecordReader {
 public:
  /// Reads the file at `path`. Errors: kNotFound / kIo for the file, kWrongKind when it is not
  /// a zip or has no `ETRECORD_V0`, kTruncated / kCorrupt for a damaged zip, kOutOfResources
  /// when a limit is breached. Messages start with `path`.
  static Result<EtRecord> open(const std::string& path, const ReadLimits& limits = {});
  /// Reads an archive from memory; the blob's name is used in messages and as EtRecord::path.
  /// The blob is only borrowed for the call.
  static Result<EtRecord> read(std::shared_ptr<const Blob> blob, const ReadLimits& limits = {});
};

}  // namespace etscope::etrecord
