// A byte range of a file, shared by every reader that locates data inside a file.
#pragma once

#include <cstdint>

namespace etscope {

/// A byte range of the file: [offset, offset + size).
struct FileRange {
  uint64_t offset = 0;
  uint64_t size = 0;
};

}  // namespace etscope
