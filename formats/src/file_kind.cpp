#include "etscope/formats/file_kind.h"

#include <cstring>

namespace etscope {
namespace {

bool id_at(std::span<const uint8_t> bytes, size_t offset, const char* id) {
  return bytes.size() >= offset + 4 && std::memcmp(bytes.data() + offset, id, 4) == 0;
}

}  // namespace

FileKind sniff_file_kind(std::span<const uint8_t> bytes) {
  if (bytes.size() >= 4 && bytes[0] == 'P' && bytes[1] == 'K' && bytes[2] == 3 && bytes[3] == 4) {
    return FileKind::kZip;
  }
  if (id_at(bytes, 4, "ET12")) return FileKind::kProgram;
  if (id_at(bytes, 4, "FT01")) return FileKind::kTensorData;
  if (id_at(bytes, 8, "ED00") || id_at(bytes, 4, "ED00")) return FileKind::kETDump;
  if (bytes.size() >= 8 && bytes[4] == 'B' && bytes[5] == 'P' && bytes[6] == '0') {
    return FileKind::kBundledProgram;
  }
  if (bytes.size() >= 8 && bytes[4] == 'E' && bytes[5] == 'T') return FileKind::kProgramOtherVersion;
  return FileKind::kUnknown;
}

std::string describe_file_kind(FileKind kind) {
  switch (kind) {
    case FileKind::kProgram: return "an ExecuTorch program (.pte, ET12)";
    case FileKind::kProgramOtherVersion: return "an ExecuTorch program of another format version";
    case FileKind::kTensorData: return "a tensor-data file (.ptd, FT01)";
    case FileKind::kBundledProgram: return "a bundled program (.bpte)";
    case FileKind::kETDump: return "an ETDump trace (.etdp, ED00)";
    case FileKind::kZip: return "a zip archive (an ETRecord?)";
    case FileKind::kUnknown: break;
  }
  return "not an ExecuTorch file";
}

std::string printable_identifier(std::span<const uint8_t> bytes, size_t offset) {
  std::string out;
  for (size_t i = offset; i < offset + 4 && i < bytes.size(); ++i) {
    uint8_t c = bytes[i];
    if (c >= 0x20 && c < 0x7f) {
      out.push_back(static_cast<char>(c));
    } else {
      static const char kHex[] = "0123456789abcdef";
      out += "\\x";
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 15]);
    }
  }
  return out;
}

}  // namespace etscope
