#include "etscope/worker/wire.h"

#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace etscope::worker {

void WireWriter::put(const void* p, size_t n) {
  if (n == 0) return;
  const auto* b = static_cast<const uint8_t*>(p);
  bytes_.insert(bytes_.end(), b, b + n);
}

bool WireReader::take(void* out, size_t n) {
  if (failed_ || n > bytes_.size() - pos_) {
    failed_ = true;
    std::memset(out, 0, n);
    return false;
  }
  std::memcpy(out, bytes_.data() + pos_, n);
  pos_ += n;
  return true;
}

uint8_t WireReader::u8() { return get<uint8_t>(); }
uint32_t WireReader::u32() { return get<uint32_t>(); }
int32_t WireReader::i32() { return get<int32_t>(); }
uint64_t WireReader::u64() { return get<uint64_t>(); }
int64_t WireReader::i64() { return get<int64_t>(); }
double WireReader::f64() { return get<double>(); }

std::span<const uint8_t> WireReader::blob() {
  const uint64_t n = u64();
  if (failed_ || n > bytes_.size() - pos_) {
    failed_ = true;
    return {};
  }
  std::span<const uint8_t> out = bytes_.subspan(pos_, static_cast<size_t>(n));
  pos_ += static_cast<size_t>(n);
  return out;
}

std::string_view WireReader::str() {
  const std::span<const uint8_t> b = blob();
  return {reinterpret_cast<const char*>(b.data()), b.size()};
}

namespace {

bool is_socket(int fd) {
  struct stat st {};
  return fstat(fd, &st) == 0 && S_ISSOCK(st.st_mode);
}

Status write_all(int fd, const uint8_t* p, size_t n, const std::string& peer) {
  const bool socket = is_socket(fd);
  while (n > 0) {
    const ssize_t k = socket ? ::send(fd, p, n, MSG_NOSIGNAL) : ::write(fd, p, n);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) return Error(ErrorCode::kIo, peer + ": cannot write to it: " + std::strerror(errno));
    p += k;
    n -= static_cast<size_t>(k);
  }
  return ok_status();
}

// kIo with "closed" when the peer ended before `n` bytes.
Status read_all(int fd, uint8_t* p, size_t n, const std::string& peer) {
  while (n > 0) {
    const ssize_t k = ::read(fd, p, n);
    if (k < 0 && errno == EINTR) continue;
    if (k == 0) return Error(ErrorCode::kIo, peer + ": closed");
    if (k < 0) return Error(ErrorCode::kIo, peer + ": cannot read from it: " + std::strerror(errno));
    p += k;
    n -= static_cast<size_t>(k);
  }
  return ok_status();
}

}  // namespace

Status write_frame(int fd, uint32_t type, std::span<const uint8_t> payload, const std::string& peer) {
  uint8_t header[12];
  const uint64_t n = payload.size();
  std::memcpy(header, &type, 4);
  std::memcpy(header + 4, &n, 8);
  ETSCOPE_TRY(write_all(fd, header, sizeof header, peer));
  return write_all(fd, payload.data(), payload.size(), peer);
}

Result<Frame> read_frame(int fd, uint64_t max_payload, const std::string& peer) {
  uint8_t header[12];
  ETSCOPE_TRY(read_all(fd, header, sizeof header, peer));
  Frame f;
  uint64_t n;
  std::memcpy(&f.type, header, 4);
  std::memcpy(&n, header + 4, 8);
  if (n > max_payload) {
    return Error(ErrorCode::kCorrupt, peer + ": a message of " + std::to_string(n) + " bytes, more than the " +
                                          std::to_string(max_payload) + " expected");
  }
  f.payload.resize(static_cast<size_t>(n));
  ETSCOPE_TRY(read_all(fd, f.payload.data(), f.payload.size(), peer));
  return f;
}

}  // namespace etscope::worker
