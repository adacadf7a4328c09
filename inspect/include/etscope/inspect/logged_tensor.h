// Logged tensors: the bytes and statistics of a tensor an ETDump logged into its debug buffer.
//
// An ETDump names each logged tensor's place in the separate debug buffer by offset and size.
// Both come from files and may be hostile, so every read of the buffer goes through
// logged_tensor_bytes(), which never returns bytes outside it. Front ends (`etscope inspect
// --format json`) show the statistics these functions return and nothing they compute.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>

#include "etscope/core/result.h"
#include "etscope/etdump/etdump_file.h"
#include "etscope/formats/blob.h"
#include "etscope/formats/tensor_stats.h"

namespace etscope::inspect {

/// The `nbytes` bytes of `tensor` in `buffer`, starting at its offset. Errors: kCorrupt, naming
/// the buffer, the offset and both sizes, when the tensor has no offset (-1) or the range lies
/// even partly outside the buffer.
Result<std::span<const uint8_t>> logged_tensor_bytes(const etdump::LoggedTensor& tensor, const Blob& buffer,
                                                     uint64_t nbytes);

/// What the debug buffer holds for one logged tensor.
struct LoggedTensorStats {
  /// False when the tensor's offset and byte size (as the ETDump records them) do not lie
  /// inside the buffer: nothing was read.
  bool in_buffer = false;
  /// Statistics of its elements (TensorStats::first_values holds up to `first_n` of them);
  /// absent when the buffer range does not hold the tensor's elements, its dtype is not
  /// numeric, or its sizes overflow (negative sizes count as 0).
  std::optional<TensorStats> stats;
};

/// Reads `tensor` from `buffer` (its recorded byte size at its recorded offset) and summarises
/// its elements. Never reads outside `buffer`; the buffer need not outlive the result.
LoggedTensorStats logged_tensor_stats(const etdump::LoggedTensor& tensor, const Blob& buffer, size_t first_n = 8);

}  // namespace etscope::inspect
