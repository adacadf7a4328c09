// ScalarType: ExecuTorch's element-type codes (ATen numbering) and what etscope knows of each.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace etscope {

/// Element type codes as stored in .pte, .ptd, ETDump and bundled programs. Files may carry codes
/// this enum does not name; keep them as their raw value and ask is_known().
enum class ScalarType : int8_t {
  kByte = 0, kChar = 1, kShort = 2, kInt = 3, kLong = 4, kHalf = 5, kFloat = 6, kDouble = 7,
  kComplexHalf = 8, kComplexFloat = 9, kComplexDouble = 10, kBool = 11, kQInt8 = 12,
  kQUInt8 = 13, kQInt32 = 14, kBFloat16 = 15, kQUInt4x2 = 16, kQUInt2x4 = 17, kBits1x8 = 18,
  kBits2x4 = 19, kBits4x2 = 20, kBits8 = 21, kBits16 = 22, kFloat8e5m2 = 23,
  kFloat8e4m3fn = 24, kFloat8e5m2fnuz = 25, kFloat8e4m3fnuz = 26, kUInt16 = 27, kUInt32 = 28,
  kUInt64 = 29,
};

/// True for codes 0..29, the ones ExecuTorch's runtime accepts.
bool is_known(ScalarType type);

/// Bytes per element as ExecuTorch counts them, or nullopt for an unknown code.
std::optional<uint32_t> element_size(ScalarType type);

/// ExecuTorch's name, e.g. "Float", "Long"; "unknown(42)" for other codes.
std::string scalar_type_name(ScalarType type);

/// Short name used in compact listings, e.g. "f32", "i64", "bool", "bf16".
std::string scalar_type_short_name(ScalarType type);

}  // namespace etscope
