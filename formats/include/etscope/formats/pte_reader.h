// PteReader: reads and validates ExecuTorch programs (.pte).
//
// Accepts every layout ExecuTorch has written since 2023: flat files without an extended header,
// 24- and 32-byte `eh00` headers with appended segments, constants in the constant segment or in
// the legacy inline constant_buffer, external tensors, named data. Bytes are checked in this
// order: header sizes against the file size, the flatbuffers verifier over the FlatBuffer region,
// then every index and byte range the program holds. Nothing is read before it is checked.
#pragma once

#include <memory>
#include <string>

#include "etscope/formats/blob.h"
#include "etscope/formats/program.h"
#include "etscope/core/result.h"

namespace etscope {

class PteReader {
 public:
  /// Parses `blob` as a program. The returned Program keeps `blob` alive.
  /// Errors (messages start with the blob's name):
  ///  - kWrongKind: another kind of file (a .ptd, .bpte, ETDump, zip, or unknown bytes);
  ///  - kNotSupported: an `ET..` identifier other than ET12, or a FlatBuffer region over 2 GiB;
  ///  - kTruncated: the file ends before its header, FlatBuffer region or a segment;
  ///  - kCorrupt: verifier failure, an index out of range, an impossible size.
  static Result<Program> read(std::shared_ptr<const Blob> blob);

  /// Opens `path` and reads it; adds kNotFound / kIo for unreadable files.
  static Result<Program> open(const std::string& path);
};

/// Parses the `eh00` extended header of a program if there is one. `bytes` is the whole file.
/// Returns nullopt when there is none; an Error when there is one but it is malformed.
Result<std::optional<ExtendedHeader>> parse_extended_header(std::span<const uint8_t> bytes,
                                                            const std::string& name);

}  // namespace etscope
