// ZipArchive over libzip. libzip reads the central directory; we add the limits that keep a
// hostile archive from making us allocate or inflate without bound, and check before inflating.
#include "zip_archive.h"

#include <zip.h>

#include <cinttypes>
#include <cstring>
#include <string>

#include "etscope/core/text.h"

namespace etscope::etrecord {
namespace {

constexpr uint64_t kRatioFloor = uint64_t{1} << 20;  // the ratio cap applies above 1 MiB

// libzip's error codes grouped into ours.
ErrorCode code_for(int ze) {
  switch (ze) {
    case ZIP_ER_NOZIP: return ErrorCode::kWrongKind;
    case ZIP_ER_EOF:
    case ZIP_ER_INCONS:
    case ZIP_ER_CRC:
    case ZIP_ER_ZLIB:
    case ZIP_ER_COMPRESSED_DATA: return ErrorCode::kCorrupt;
    case ZIP_ER_MEMORY: return ErrorCode::kOutOfResources;
    case ZIP_ER_COMPNOTSUPP:
    case ZIP_ER_ENCRNOTSUPP:
    case ZIP_ER_NOPASSWD: return ErrorCode::kNotSupported;
    default: return ErrorCode::kCorrupt;
  }
}

std::string one_line(std::string s) {
  for (char& c : s) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  return s;
}

}  // namespace

struct ZipArchive::Impl {
  zip_t* zip = nullptr;
  ~Impl() {
    if (zip != nullptr) zip_discard(zip);
  }
};

ZipArchive::~ZipArchive() = default;

Result<std::unique_ptr<ZipArchive>> ZipArchive::open(std::span<const uint8_t> bytes, std::string label,
                                                     const ReadLimits& limits, ReadBudget* budget) {
  // The end-of-central-directory record alone is 22 bytes.
  if (bytes.size() < 22) {
    if (bytes.empty()) return Error(ErrorCode::kWrongKind, label + ": empty file, not a zip archive");
    return Error(ErrorCode::kWrongKind, label + ": not a zip archive (" + std::to_string(bytes.size()) + " bytes)");
  }
  std::unique_ptr<ZipArchive> archive(new ZipArchive());
  archive->impl_ = std::make_unique<Impl>();
  archive->label_ = std::move(label);
  archive->limits_ = limits;
  archive->budget_ = budget;
  const std::string& name = archive->label_;

  zip_error_t error;
  zip_error_init(&error);
  zip_source_t* source = zip_source_buffer_create(bytes.data(), bytes.size(), 0, &error);
  if (source == nullptr) {
    std::string msg = zip_error_strerror(&error);
    zip_error_fini(&error);
    return Error(ErrorCode::kOutOfResources, name + ": " + one_line(msg));
  }
  zip_t* zip = zip_open_from_source(source, ZIP_RDONLY | ZIP_CHECKCONS, &error);
  if (zip == nullptr) {
    int ze = zip_error_code_zip(&error);
    std::string msg = zip_error_strerror(&error);
    zip_error_fini(&error);
    zip_source_free(source);
    if (ze == ZIP_ER_NOZIP) return Error(ErrorCode::kWrongKind, name + ": not a zip archive");
    return Error(code_for(ze), name + ": damaged zip archive: " + one_line(msg));
  }
  zip_error_fini(&error);
  archive->impl_->zip = zip;

  zip_int64_t count = zip_get_num_entries(zip, 0);
  if (count < 0) return Error(ErrorCode::kCorrupt, name + ": damaged zip archive: bad entry count");
  if (static_cast<uint64_t>(count) > limits.max_entries) {
    return Error(ErrorCode::kOutOfResources, name + ": " + std::to_string(count) + " zip entries exceed the limit of " +
                                                 std::to_string(limits.max_entries));
  }
  archive->entries_.reserve(static_cast<size_t>(count));
  for (zip_int64_t i = 0; i < count; ++i) {
    zip_stat_t st;
    zip_stat_init(&st);
    if (zip_stat_index(zip, static_cast<zip_uint64_t>(i), 0, &st) != 0) {
      return Error(ErrorCode::kCorrupt,
                   name + ": damaged zip archive: entry " + std::to_string(i) + ": " + one_line(zip_strerror(zip)));
    }
    ZipEntry e;
    if ((st.valid & ZIP_STAT_NAME) && st.name != nullptr) e.name = st.name;
    if (st.valid & ZIP_STAT_SIZE) e.size = st.size;
    if (st.valid & ZIP_STAT_COMP_SIZE) e.compressed_size = st.comp_size;
    if (st.valid & ZIP_STAT_COMP_METHOD) e.method = st.comp_method;
    archive->entries_.push_back(std::move(e));
  }
  return archive;
}

int64_t ZipArchive::find(const std::string& name) const {
  for (size_t i = 0; i < entries_.size(); ++i) {
    if (entries_[i].name == name) return static_cast<int64_t>(i);
  }
  return -1;
}

Result<std::vector<uint8_t>> ZipArchive::read(size_t index) {
  if (index >= entries_.size()) return Error(ErrorCode::kInternal, label_ + ": entry index out of range");
  const ZipEntry& e = entries_[index];
  const std::string where = label_ + ": entry '" + e.name + "'";
  // Every check uses the declared sizes, before a single byte is inflated.
  if (e.size > limits_.max_entry_bytes) {
    return Error(ErrorCode::kOutOfResources, where + ": declared size " + exact_bytes_text(e.size) +
                                                 " exceeds the per-entry limit of " + exact_bytes_text(limits_.max_entry_bytes));
  }
  if (e.size > kRatioFloor && e.method != ZIP_CM_STORE) {
    uint64_t allowed = e.compressed_size > UINT64_MAX / limits_.max_ratio ? UINT64_MAX : e.compressed_size * limits_.max_ratio;
    if (e.size > allowed) {
      return Error(ErrorCode::kOutOfResources, where + ": compression ratio above " + std::to_string(limits_.max_ratio) +
                                                   ":1 (" + exact_bytes_text(e.compressed_size) + " inflating to " +
                                                   exact_bytes_text(e.size) + ")");
    }
  }
  if (budget_ != nullptr) {
    if (e.size > limits_.max_total_bytes || budget_->used > limits_.max_total_bytes - e.size) {
      return Error(ErrorCode::kOutOfResources,
                   where + ": total uncompressed size read exceeds the limit of " + exact_bytes_text(limits_.max_total_bytes));
    }
    budget_->used += e.size;
  }

  zip_file_t* file = zip_fopen_index(impl_->zip, index, 0);
  if (file == nullptr) {
    int ze = zip_error_code_zip(zip_get_error(impl_->zip));
    return Error(code_for(ze), where + ": cannot open: " + one_line(zip_strerror(impl_->zip)));
  }
  std::vector<uint8_t> out(static_cast<size_t>(e.size));
  uint64_t got = 0;
  while (got < e.size) {
    zip_int64_t n = zip_fread(file, out.data() + got, e.size - got);
    if (n < 0) {
      int ze = zip_error_code_zip(zip_file_get_error(file));
      std::string msg = one_line(zip_file_strerror(file));
      zip_fclose(file);
      return Error(code_for(ze), where + ": " + msg);
    }
    if (n == 0) break;
    got += static_cast<uint64_t>(n);
  }
  // One more read reaches the end of the stream, where libzip checks the CRC.
  uint8_t extra = 0;
  zip_int64_t tail = got == e.size ? zip_fread(file, &extra, 1) : 0;
  if (tail < 0) {
    int ze = zip_error_code_zip(zip_file_get_error(file));
    std::string msg = one_line(zip_file_strerror(file));
    zip_fclose(file);
    return Error(code_for(ze), where + ": " + msg);
  }
  zip_fclose(file);
  if (got != e.size || tail != 0) {
    return Error(ErrorCode::kCorrupt, where + ": data does not match its declared size of " + exact_bytes_text(e.size));
  }
  return out;
}

}  // namespace etscope::etrecord
