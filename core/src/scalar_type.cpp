#include "etscope/core/scalar_type.h"

namespace etscope {
namespace {

struct TypeFacts {
  const char* name;
  const char* short_name;
  uint32_t size;
};

// Indexed by code. Names follow ExecuTorch's ScalarType spelling.
constexpr TypeFacts kFacts[] = {
    {"Byte", "u8", 1},          {"Char", "i8", 1},          {"Short", "i16", 2},
    {"Int", "i32", 4},          {"Long", "i64", 8},         {"Half", "f16", 2},
    {"Float", "f32", 4},        {"Double", "f64", 8},       {"ComplexHalf", "c32", 4},
    {"ComplexFloat", "c64", 8}, {"ComplexDouble", "c128", 16}, {"Bool", "bool", 1},
    {"QInt8", "qi8", 1},        {"QUInt8", "qu8", 1},       {"QInt32", "qi32", 4},
    {"BFloat16", "bf16", 2},    {"QUInt4x2", "qu4x2", 1},   {"QUInt2x4", "qu2x4", 1},
    {"Bits1x8", "bits1x8", 1},  {"Bits2x4", "bits2x4", 1},  {"Bits4x2", "bits4x2", 1},
    {"Bits8", "bits8", 1},      {"Bits16", "bits16", 2},    {"Float8_e5m2", "f8e5m2", 1},
    {"Float8_e4m3fn", "f8e4m3fn", 1}, {"Float8_e5m2fnuz", "f8e5m2fnuz", 1},
    {"Float8_e4m3fnuz", "f8e4m3fnuz", 1}, {"UInt16", "u16", 2}, {"UInt32", "u32", 4},
    {"UInt64", "u64", 8},
};
constexpr int kCount = static_cast<int>(sizeof(kFacts) / sizeof(kFacts[0]));

}  // namespace

bool is_known(ScalarType type) {
  int code = static_cast<int>(type);
  return code >= 0 && code < kCount;
}

std::optional<uint32_t> element_size(ScalarType type) {
  if (!is_known(type)) return std::nullopt;
  return kFacts[static_cast<int>(type)].size;
}

std::string scalar_type_name(ScalarType type) {
  if (!is_known(type)) return "unknown(" + std::to_string(static_cast<int>(type)) + ")";
  return kFacts[static_cast<int>(type)].name;
}

std::string scalar_type_short_name(ScalarType type) {
  if (!is_known(type)) return "?" + std::to_string(static_cast<int>(type));
  return kFacts[static_cast<int>(type)].short_name;
}

}  // namespace etscope
