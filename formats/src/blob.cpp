#include "etscope/formats/blob.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>

namespace etscope {
namespace {

constexpr size_t kAlignment = 64;
// What a pipe may deliver: regular files are mapped and have no limit here.
constexpr size_t kMaxStreamBytes = size_t{1} << 30;

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
  if (S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode) || S_ISSOCK(st.st_mode)) {
    // /dev/zero and friends never end: read only files and pipes.
    ::close(fd);
    return Error(ErrorCode::kInvalidArgument, path + ": is a device or socket, not a file");
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
    if (bytes.size() + static_cast<size_t>(n) > kMaxStreamBytes) {
      ::close(fd);
      return Error(ErrorCode::kOutOfResources,
                   path + ": more than " + std::to_string(kMaxStreamBytes >> 20) + " MiB from a pipe; save it to a file first");
    }
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
  // Written to a temporary file beside the target and renamed into place: a reader never sees a
  // half-written file, two writers never interleave (the last rename wins whole), and a full disk
  // leaves the old file as it was.
  std::string tmp = path + ".tmp.XXXXXX";
  int fd = ::mkstemp(tmp.data());
  if (fd < 0) return errno_error(path, "cannot create", errno);
  auto fail = [&](const char* what) {
    int err = errno;
    ::close(fd);
    ::unlink(tmp.c_str());
    return errno_error(path, what, err);
  };
  // mkstemp makes the file 0600; give it the permissions a plain create would have.
  const mode_t mask = ::umask(0);
  ::umask(mask);
  if (::fchmod(fd, 0666 & ~mask) != 0) return fail("cannot set permissions");
  size_t done = 0;
  while (done < bytes.size()) {
    ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      return fail("write failed");
    }
    done += static_cast<size_t>(n);
  }
  if (::fsync(fd) != 0) return fail("write failed");
  if (::close(fd) != 0) {
    int err = errno;
    ::unlink(tmp.c_str());
    return errno_error(path, "write failed", err);
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    int err = errno;
    ::unlink(tmp.c_str());
    return errno_error(path, "cannot replace", err);
  }
  return ok_status();
}

Status write_file_text(const std::string& path, std::string_view text) {
  return write_file_bytes(path, {reinterpret_cast<const uint8_t*>(text.data()), text.size()});
}

Status check_not_an_input(const std::string& output, const std::vector<std::string>& inputs) {
  for (const std::string& input : inputs) {
    std::error_code ec;
    if (!input.empty() && std::filesystem::equivalent(output, input, ec) && !ec) {
      return Error(ErrorCode::kInvalidArgument, output + ": is also an input of this command; refusing to overwrite it");
    }
  }
  return ok_status();
}

}  // namespace etscope
