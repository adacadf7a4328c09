// NumPy .npy files (format versions 1.0-3.0): what `etscope run` reads inputs from and writes
// outputs to. Little-endian, C-order arrays of bool, (u)int8-64, float16/32/64 only.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "etscope/core/result.h"
#include "etscope/core/scalar_type.h"

namespace etscope {

struct NpyArray {
  ScalarType dtype = ScalarType::kFloat;
  std::vector<int64_t> shape;
  std::vector<uint8_t> data;  ///< numel * element size bytes, C order.
};

/// Parses .npy bytes. `name` is used in messages. Errors: kWrongKind (no magic), kTruncated,
/// kNotSupported (big-endian, Fortran order, object or structured dtypes), kCorrupt.
Result<NpyArray> parse_npy(std::span<const uint8_t> bytes, const std::string& name);
Result<NpyArray> read_npy(const std::string& path);

/// Serializes a C-order array as .npy version 1.0. Fails for dtypes NumPy has no code for.
Result<std::vector<uint8_t>> encode_npy(ScalarType dtype, std::span<const int64_t> shape, std::span<const uint8_t> data);
Status write_npy(const std::string& path, ScalarType dtype, std::span<const int64_t> shape, std::span<const uint8_t> data);

}  // namespace etscope
