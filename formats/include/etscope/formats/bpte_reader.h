// BpteReader: reads .bpte bundled programs (the program plus its test cases) into a
// BundledProgram.
#pragma once

#include <memory>
#include <string>

#include "etscope/core/result.h"
#include "etscope/formats/blob.h"
#include "etscope/formats/bundled_program.h"

namespace etscope {

class BpteReader {
 public:
  /// Parses `blob` as a bundled program, including its embedded program. Errors name the file;
  /// errors inside the embedded program read "<file>: embedded program: <problem>".
  /// BP04 and BP05 (pre-release 2023 layouts) give kNotSupported.
  static Result<BundledProgram> read(std::shared_ptr<const Blob> blob);
  static Result<BundledProgram> open(const std::string& path);
};

}  // namespace etscope
