// Sniffing which ExecuTorch file a run of bytes is, from its identifiers alone.
#pragma once

#include <cstdint>
#include <span>
#include <string>

namespace etscope {

enum class FileKind : uint8_t {
  kUnknown,
  kProgram,          ///< "ET12" at bytes 4..7.
  kProgramOtherVersion,  ///< "ET" + two other characters.
  kTensorData,       ///< "FT01".
  kBundledProgram,   ///< "BP0x".
  kETDump,           ///< "ED00" at bytes 8..11 (size-prefixed) or 4..7.
  kZip,              ///< "PK\3\4": an ETRecord or another zip.
};

FileKind sniff_file_kind(std::span<const uint8_t> bytes);

/// Human description, e.g. "a .ptd tensor-data file (FT01)".
std::string describe_file_kind(FileKind kind);

/// The 4 identifier bytes at `offset` rendered printable ("ET12", "\x00\x01..").
std::string printable_identifier(std::span<const uint8_t> bytes, size_t offset);

}  // namespace etscope
