#include "etscope/formats/blob.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>

namespace etscope {
namespace {

constexpr size_t kAlignment = 64;

// Heap copy with 64-byte alignment: flatbuffers and the runtime want aligned roots, and the
// bytes of a copied-in program or a test buffer must behave like a mapped file.
class MemoryBlob final : public Blob {
 public:
  MemoryBlob(std::string name, std::span<const uint8_t> bytes) : Blob(std::move(name)) {
    size_t capacity = bytes.empty() ? kAlignment : (bytes.size() + kAlignment - 1) / kAlignment * kAlignment;
    storage_ = static_cast<uint8_t*>(std::aligned_alloc(kAlignment, capacity));
    if (storage_ == nullptr) std::abort();  // Allocation failure of an in-memory copy.
    if (!bytes.empty()) std::memcpy(storage_, bytes.data(), bytes.size());
    data_ = storage_;
    size_ = bytes.size();
  }
  ~MemoryBlob() override { std::free(storage_); }

 private:
  uint8_t* storage_ = nullptr;
};

// A read-only private mapping: pages load lazily, so opening a large program costs only what
// is read. Page alignment satisfies every alignment requirement.
class MappedBlob final : public Blob {
 public:
  MappedBlob(std::string name, void* base, size_t length) : Blob(std::move(name)), base_(base) {
    data_ = static_cast<const uint8_t*>(base);
    size_ = length;
  }
  ~MappedBlob() override {
    if (base_ != nullptr) munmap(base_, size_);
  }

 private:
  void* base_;
};

class EmptyBlob final : public Blob {
 public:
  explicit EmptyBlob(std::string name) : Blob(std::move(name)) {
    alignas(64) static const uint8_t kNothing[64] = {};
    data_ = kNothing;
    size_ = 0;
  }
};

Error errno_error(const std::string& path, const char* what, int err) {
  ErrorCode code = (err == ENOENT || err == ENOTDIR) ? ErrorCode::kNotFound : ErrorCode::kIo;
  if (err == ENOENT) return Error(code, path + ": no such file");
  return Error(code, path + ": " + what + ": " + std::strerror(err));
}

}  // namespace

Result<std::shared_ptr<const Blob>> Blob::open_file(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return errno_error(path, "cannot open", errno);
  struct stat st {};
  if (fstat(fd, &st) != 0) {
    int err = errno;
    ::close(fd);
    return errno_error(path, "cannot stat", err);
  }
  if (S_ISDIR(st.st_mode)) {
    ::close(fd);
    return Error(ErrorCode::kInvalidArgument, path + ": is a directory, not a file");
  }
  if (S_ISREG(st.st_mode)) {
    size_t length = static_cast<size_t>(st.st_size);
    if (length == 0) {
      ::close(fd);
      return std::shared_ptr<const Blob>(std::make_shared<EmptyBlob>(path));
    }
    void* base = mmap(nullptr, length, PROT_READ, MAP_PRIVATE, fd, 0);
    if (base != MAP_FAILED) {
      ::close(fd);
      return std::shared_ptr<const Blob>(std::make_shared<MappedBlob>(path, base, length));
    }
  }
  // Pipes, character devices, or a failed mapping: read it all.
  std::vector<uint8_t> bytes;
  uint8_t chunk[1 << 16];
  while (true) {
    ssize_t n = ::read(fd, chunk, sizeof(chunk));
    if (n < 0) {
      if (errno == EINTR) continue;
      int err = errno;
      ::close(fd);
      return errno_error(path, "read failed", err);
    }
    if (n == 0) break;
    bytes.insert(bytes.end(), chunk, chunk + n);
  }
  ::close(fd);
  return from_bytes(path, bytes);
}

std::shared_ptr<const Blob> Blob::from_bytes(std::string name, std::span<const uint8_t> bytes) {
  return std::make_shared<MemoryBlob>(std::move(name), bytes);
}

Result<std::vector<uint8_t>> read_file_bytes(const std::string& path) {
  ETSCOPE_ASSIGN_OR_RETURN(auto blob, Blob::open_file(path));
  return std::vector<uint8_t>(blob->data(), blob->data() + blob->size());
}

Status write_file_bytes(const std::string& path, std::span<const uint8_t> bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) return errno_error(path, "cannot create", errno);
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  out.close();
  if (!out) return errno_error(path, "write failed", errno);
  return ok_status();
}

}  // namespace etscope
