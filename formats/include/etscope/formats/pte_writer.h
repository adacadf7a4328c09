// PteWriter: serializes a program model into .pte bytes laid out as ExecuTorch's exporter lays
// them out (formats.md §2.13): constants in a constant segment (or, on request, the legacy inline
// constant_buffer), an `eh00` extended header only when some segment holds data, segments
// aligned to `segment_alignment`.
//
// Used by tests to build programs with features no real sample exercises (named data, inline
// delegates, mutable-data segments, stack traces, deliberately bad allocation info) and by the
// benchmarks to synthesize programs of a chosen size.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "etscope/formats/program.h"
#include "etscope/core/result.h"

namespace etscope {

struct ProgramSpec {
  /// Plans as PteReader returns them. Tensors' data_buffer_idx is 1-based into `constants`
  /// (unplanned tensors) or `mutable_data` (planned ones); derived fields (numel, nbytes,
  /// data_kind, data) are ignored. A Delegate's `index` selects `delegate_blobs[index]`;
  /// `inline_data` chooses backend_delegate_data over a segment.
  std::vector<ExecutionPlan> plans;
  std::vector<std::vector<uint8_t>> constants;     ///< Constant 1, 2, ... (0 is the placeholder).
  std::vector<std::vector<uint8_t>> mutable_data;  ///< Initial value 1, 2, ...
  std::vector<std::vector<uint8_t>> delegate_blobs;
  std::vector<std::pair<std::string, std::vector<uint8_t>>> named_data;
};

struct PteWriterOptions {
  uint32_t header_length = 32;        ///< 32 (ExecuTorch 1.0+) or 24 (older files).
  uint64_t segment_alignment = 128;
  uint64_t constant_alignment = 16;
  bool legacy_constant_buffer = false;  ///< Constants inline in constant_buffer, no segment.
};

class PteWriter {
 public:
  /// Serializes `spec`. Fails with kInvalidArgument when an index in the spec points nowhere.
  static Result<std::vector<uint8_t>> write(const ProgramSpec& spec, const PteWriterOptions& options = {});
};

}  // namespace etscope
