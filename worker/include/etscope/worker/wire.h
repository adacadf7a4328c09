// Wire: the bytes two etscope processes exchange, and the one place that frames, encodes and
// decodes them. A frame is a 4-byte message type, an 8-byte payload length and the payload;
// payloads are little-endian integers, IEEE doubles, length-prefixed strings and byte blocks.
//
// The reader never trusts what it reads: every read is bounds-checked, a read past the end
// yields zero or empty and marks the reader failed, and decoders check sizes against dtypes.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "etscope/core/result.h"

namespace etscope::worker {

/// Appends values to a payload.
class WireWriter {
 public:
  void u8(uint8_t v) { bytes_.push_back(v); }
  void u32(uint32_t v) { put(&v, sizeof v); }
  void i32(int32_t v) { put(&v, sizeof v); }
  void u64(uint64_t v) { put(&v, sizeof v); }
  void i64(int64_t v) { put(&v, sizeof v); }
  void f64(double v) { put(&v, sizeof v); }
  void str(std::string_view s) {
    u64(s.size());
    put(s.data(), s.size());
  }
  void blob(std::span<const uint8_t> b) {
    u64(b.size());
    put(b.data(), b.size());
  }
  const std::vector<uint8_t>& bytes() const { return bytes_; }
  std::vector<uint8_t>& bytes() { return bytes_; }
  void clear() { bytes_.clear(); }

 private:
  void put(const void* p, size_t n);
  std::vector<uint8_t> bytes_;
};

/// Reads values from a payload it does not own.
class WireReader {
 public:
  explicit WireReader(std::span<const uint8_t> bytes) : bytes_(bytes) {}
  uint8_t u8();
  uint32_t u32();
  int32_t i32();
  uint64_t u64();
  int64_t i64();
  double f64();
  std::string_view str();
  std::span<const uint8_t> blob();
  /// True once a read went past the end.
  bool failed() const { return failed_; }
  bool at_end() const { return pos_ == bytes_.size(); }

 private:
  bool take(void* out, size_t n);
  template <typename T>
  T get() {
    T v;
    take(&v, sizeof v);
    return v;
  }
  std::span<const uint8_t> bytes_;
  size_t pos_ = 0;
  bool failed_ = false;
};

struct Frame {
  uint32_t type = 0;
  std::vector<uint8_t> payload;
};

/// Writes one frame to `fd` (a socket: a closed peer is an error, never SIGPIPE; a pipe is
/// written with write()). kIo naming `peer` when the other end is gone.
Status write_frame(int fd, uint32_t type, std::span<const uint8_t> payload, const std::string& peer);
/// Reads one frame from `fd`, blocking; kIo naming `peer` on end of file or error, kCorrupt
/// when the declared length exceeds `max_payload`.
Result<Frame> read_frame(int fd, uint64_t max_payload, const std::string& peer);

}  // namespace etscope::worker
