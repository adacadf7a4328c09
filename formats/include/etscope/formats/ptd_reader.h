// PtdReader: reads .ptd tensor-data files (FlatTensor, both the current layout and ExecuTorch
// 0.6's) into a TensorDataFile.
#pragma once

#include <memory>
#include <string>

#include "etscope/core/result.h"
#include "etscope/formats/blob.h"
#include "etscope/formats/tensor_data_file.h"

namespace etscope {

class PtdReader {
 public:
  /// Parses `blob` as a .ptd. Errors as PteReader::read (wrong kind, truncated, corrupt).
  static Result<TensorDataFile> read(std::shared_ptr<const Blob> blob);
  static Result<TensorDataFile> open(const std::string& path);
};

}  // namespace etscope
