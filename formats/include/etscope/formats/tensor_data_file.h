// TensorDataFile and PtdReader: ExecuTorch tensor-data files (.ptd, FlatTensor "FT01").
//
// Both layouts that share the FT01 identifier are read: the current one (named data with tensor
// layouts, ExecuTorch 0.7+) and the legacy one of ExecuTorch 0.6 (a tensor table plus one shared
// segment). They are told apart by the root table's vtable size (formats.md §3.3).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "etscope/formats/blob.h"
#include "etscope/formats/program.h"
#include "etscope/core/result.h"
#include "etscope/core/scalar_type.h"

namespace etscope {

struct TensorLayout {
  ScalarType dtype = ScalarType::kFloat;
  std::vector<int32_t> sizes;
  std::vector<uint8_t> dim_order;
  uint64_t numel = 1;
  uint64_t nbytes = 0;
};

struct TensorDataEntry {
  std::string key;                     ///< For tensors, the fully-qualified name used in a .pte.
  uint32_t segment_index = 0;
  FileRange data;                      ///< Absolute range in the file, bounds-checked.
  std::optional<TensorLayout> layout;  ///< Absent for opaque named blobs.
};

struct TensorDataFile {
  std::shared_ptr<const Blob> blob;
  bool legacy = false;                 ///< ExecuTorch 0.6 layout.
  uint32_t version = 0;
  uint32_t tensor_alignment = 0;       ///< Legacy layout only.
  uint64_t flatbuffer_offset = 0;      ///< Header field: padded header length.
  uint64_t flatbuffer_size = 0;        ///< Header field: FlatBuffer size before the header.
  uint64_t segment_base_offset = 0;
  uint64_t segment_data_size = 0;
  std::vector<FileRange> segments;     ///< Absolute ranges.
  std::vector<TensorDataEntry> entries;

  /// The entry for `key` (exact byte match), or nullptr.
  const TensorDataEntry* find(const std::string& key) const;
  std::span<const uint8_t> bytes(FileRange range) const {
    return blob->bytes().subspan(static_cast<size_t>(range.offset),
                                 static_cast<size_t>(range.size));
  }
  const std::string& name() const { return blob->name(); }
};


}  // namespace etscope
