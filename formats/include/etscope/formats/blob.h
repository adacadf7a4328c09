// Blob: an immutable, aligned run of bytes with a name, the input of every etscope reader.
//
// Readers never open files themselves; they take a Blob, so tests and fuzzers can feed bytes
// from memory and production code maps files. The name is what error messages show (usually the
// path). Data is aligned to at least 64 bytes, as the flatbuffers readers require.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "etscope/core/result.h"

namespace etscope {

class Blob {
 public:
  virtual ~Blob() = default;
  Blob(const Blob&) = delete;
  Blob& operator=(const Blob&) = delete;

  /// Maps (or, where mapping is impossible, reads) a whole file. Fails with kNotFound, kIo,
  /// kInvalidArgument for a directory, device or socket, kOutOfResources for a pipe delivering
  /// more than 1 GiB.
  static Result<std::shared_ptr<const Blob>> open_file(const std::string& path);

  /// Copies bytes into a new aligned blob named `name`.
  static std::shared_ptr<const Blob> from_bytes(std::string name, std::span<const uint8_t> bytes);

  const uint8_t* data() const { return data_; }
  size_t size() const { return size_; }
  std::span<const uint8_t> bytes() const { return {data_, size_}; }
  const std::string& name() const { return name_; }

 protected:
  explicit Blob(std::string name) : name_(std::move(name)) {}
  const uint8_t* data_ = nullptr;
  size_t size_ = 0;

 private:
  std::string name_;
};

/// Reads a whole file into a byte vector (for small side files). Errors name the path.
Result<std::vector<uint8_t>> read_file_bytes(const std::string& path);

/// Writes bytes to a file, replacing it whole: through a temporary file in the same directory,
/// synced and renamed into place, so no reader ever sees a torn file and a failed write leaves
/// the old one. Errors name the path.
Status write_file_bytes(const std::string& path, std::span<const uint8_t> bytes);
Status write_file_text(const std::string& path, std::string_view text);

/// kInvalidArgument when `output` is the same file as one of `inputs` (an output that would
/// destroy what the command reads). Paths that do not exist yet never match.
Status check_not_an_input(const std::string& output, const std::vector<std::string>& inputs);

}  // namespace etscope
