#include "etscope/formats/tensor_stats.h"

#include <cmath>
#include <cstring>

namespace etscope {
namespace {

template <typename T>
T load(const uint8_t* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}

}  // namespace

float half_to_float(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000) << 16;
  uint32_t exponent = (h >> 10) & 0x1f;
  uint32_t mantissa = h & 0x3ff;
  uint32_t bits;
  if (exponent == 0) {
    if (mantissa == 0) {
      bits = sign;
    } else {  // subnormal: renormalise
      exponent = 127 - 15 + 1;
      while ((mantissa & 0x400) == 0) {
        mantissa <<= 1;
        --exponent;
      }
      mantissa &= 0x3ff;
      bits = sign | exponent << 23 | mantissa << 13;
    }
  } else if (exponent == 0x1f) {
    bits = sign | 0x7f800000u | mantissa << 13;
  } else {
    bits = sign | (exponent + 127 - 15) << 23 | mantissa << 13;
  }
  float f;
  std::memcpy(&f, &bits, sizeof(f));
  return f;
}

float bfloat16_to_float(uint16_t b) {
  uint32_t bits = static_cast<uint32_t>(b) << 16;
  float f;
  std::memcpy(&f, &bits, sizeof(f));
  return f;
}

bool is_floating_type(ScalarType type) {
  return type == ScalarType::kFloat || type == ScalarType::kDouble || type == ScalarType::kHalf || type == ScalarType::kBFloat16;
}

bool is_numeric(ScalarType type) {
  switch (type) {
    case ScalarType::kByte: case ScalarType::kChar: case ScalarType::kShort: case ScalarType::kInt:
    case ScalarType::kLong: case ScalarType::kHalf: case ScalarType::kFloat: case ScalarType::kDouble:
    case ScalarType::kBool: case ScalarType::kQInt8: case ScalarType::kQUInt8: case ScalarType::kQInt32:
    case ScalarType::kBFloat16: case ScalarType::kUInt16: case ScalarType::kUInt32: case ScalarType::kUInt64:
      return true;
    default:
      return false;
  }
}

double element_as_double(ScalarType type, const uint8_t* bytes, uint64_t i) {
  switch (type) {
    case ScalarType::kByte: case ScalarType::kQUInt8: return bytes[i];
    case ScalarType::kChar: case ScalarType::kQInt8: return static_cast<int8_t>(bytes[i]);
    case ScalarType::kBool: return bytes[i] != 0 ? 1.0 : 0.0;
    case ScalarType::kShort: return load<int16_t>(bytes + 2 * i);
    case ScalarType::kUInt16: return load<uint16_t>(bytes + 2 * i);
    case ScalarType::kInt: case ScalarType::kQInt32: return load<int32_t>(bytes + 4 * i);
    case ScalarType::kUInt32: return load<uint32_t>(bytes + 4 * i);
    case ScalarType::kLong: return static_cast<double>(load<int64_t>(bytes + 8 * i));
    case ScalarType::kUInt64: return static_cast<double>(load<uint64_t>(bytes + 8 * i));
    case ScalarType::kHalf: return half_to_float(load<uint16_t>(bytes + 2 * i));
    case ScalarType::kBFloat16: return bfloat16_to_float(load<uint16_t>(bytes + 2 * i));
    case ScalarType::kFloat: return load<float>(bytes + 4 * i);
    case ScalarType::kDouble: return load<double>(bytes + 8 * i);
    default: return 0.0;
  }
}

std::optional<TensorStats> compute_tensor_stats(ScalarType type, std::span<const uint8_t> bytes,
                                                uint64_t numel, size_t first_n) {
  auto elem = element_size(type);
  if (!is_numeric(type) || !elem || numel > bytes.size() / *elem) return std::nullopt;
  TensorStats s;
  s.count = numel;
  // Welford's update keeps the variance accurate for large tensors with a large mean.
  double mean = 0.0, m2 = 0.0;
  bool first = true;
  for (uint64_t i = 0; i < numel; ++i) {
    const double v = element_as_double(type, bytes.data(), i);
    if (i < first_n) s.first_values.push_back(v);
    if (std::isnan(v)) {
      ++s.nan_count;
      continue;
    }
    if (std::isinf(v)) {
      ++s.inf_count;
      continue;
    }
    ++s.finite_count;
    if (first) {
      s.min = s.max = v;
      first = false;
    } else {
      if (v < s.min) s.min = v;
      if (v > s.max) s.max = v;
    }
    const double delta = v - mean;
    mean += delta / static_cast<double>(s.finite_count);
    m2 += delta * (v - mean);
  }
  s.mean = mean;
  s.std = s.finite_count > 0 ? std::sqrt(m2 / static_cast<double>(s.finite_count)) : 0.0;
  return s;
}

}  // namespace etscope
