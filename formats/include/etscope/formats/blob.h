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
#include <vector>

#include "etscope/core/result.h"

namespace etscope {

class Blob {
 public:
  virtual ~Blob() = default;
  Blob(const Blob&) = delete;
  Blob& operator=(const Blob&) = delete;

  /// Maps (or, where mapping is impossible, reads) a whole file. Fails with kNotFound, kIo, or
  /// kInvalidArgument for a directory.
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

/// Writes bytes to a file, replacing it. Errors name the path.
Status write_file_bytes(const std::string& path, std::span<const uint8_t> bytes);

}  // namespace etscope
