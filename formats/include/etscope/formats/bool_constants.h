// Bool tensors whose stored bytes are neither 0 nor 1.
//
// ExecuTorch's kernels read a bool element as a byte and treat any non-zero byte as true, so a
// program whose bool constant holds other bytes (ExecuTorch 1.5.1's LLM exporter writes the
// attention mask that way without use_sdpa_with_kv_cache) runs there. etscope reads such bytes the
// same way: the runtime turns them into 0/1 when it loads the tensor (a C++ bool must never hold
// another byte), and the front ends warn, since the export looks broken.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "etscope/formats/program.h"

namespace etscope {

/// True for bytes a bool element may hold as a C++ bool: 0 and 1.
inline bool is_binary_bool_byte(uint8_t b) { return b <= 1; }

/// One bool tensor of a plan whose bytes in the file are not all 0 or 1.
struct NonBinaryBool {
  std::string plan;                  ///< Method name.
  int32_t value = -1;                ///< Value index.
  TensorDataKind data_kind = TensorDataKind::kConstant;
  size_t bad_bytes = 0;              ///< Elements whose byte is neither 0 nor 1.
  size_t first_bad = 0;              ///< Index of the first such element.
  uint8_t first_bad_byte = 0;        ///< Its byte.
  /// Instructions that read the tensor, as "instruction 12 aten::where.self_out" (kernel and
  /// delegate calls, lists holding it included), in instruction order.
  std::vector<std::string> readers;
  std::string message;               ///< One line naming the method, value, bytes and readers.
};

/// The bool tensors of every plan of `program` whose initial bytes (constants and planned tensors
/// with an initial value in the .pte; external tensors live in a .ptd and are not looked at) hold
/// bytes other than 0 or 1. Never fails: the reader has checked every data range.
std::vector<NonBinaryBool> non_binary_bool_tensors(const Program& program);

}  // namespace etscope
