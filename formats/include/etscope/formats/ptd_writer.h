// PtdWriter: serializes named tensors into a .ptd (FlatTensor "FT01", current layout) laid out as
// ExecuTorch's FlatTensorSerializer lays it out: the FlatBuffer with a 40-byte "FH01" header
// (padded to 48) inserted after its identifier, then one segment per tensor, each starting at a
// multiple of the segment alignment (128 by default) from the segment base, which is itself
// aligned. Sizes, header fields and offsets equal those of ExecuTorch's writer for the same
// tensors; inside the flatbuffer the tables are ordered differently (ExecuTorch goes through
// flatc from JSON, etscope through the C++ builder), which no reader sees. ExecuTorch's runtime
// loads such a file as the external weights of a split program; PtdReader reads it back.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "etscope/core/result.h"
#include "etscope/core/scalar_type.h"

namespace etscope {

struct PtdTensor {
  std::string key;                 ///< Fully-qualified name, as the program refers to it.
  ScalarType dtype = ScalarType::kFloat;
  std::vector<int32_t> sizes;
  std::vector<uint8_t> dim_order;  ///< Empty: row-major.
  std::span<const uint8_t> data;   ///< numel × element size bytes, in dim order.
};

struct PtdWriterOptions {
  uint64_t segment_alignment = 128;  ///< ExecuTorch's FlatTensorConfig default.
};

class PtdWriter {
 public:
  /// Serializes `tensors` in the given order. Fails with kInvalidArgument on an empty or repeated
  /// key, a size or dim order that does not describe `data`, or an unknown dtype.
  static Result<std::vector<uint8_t>> write(const std::vector<PtdTensor>& tensors, const PtdWriterOptions& options = {});
};

}  // namespace etscope
