// ZipArchive: a read-only zip held in memory, behind libzip, with etscope's safety limits.
//
// Used twice: for the ETRecord itself and for the torch.save archives stored inside it. Every
// error message starts with the label given at open() ("model.etrecord" or
// "model.etrecord: entry 'reference_outputs'"), so it reaches the user unchanged.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "etscope/etrecord/etrecord_reader.h"
#include "etscope/core/result.h"

namespace etscope::etrecord {

struct ZipEntry {
  std::string name;
  uint64_t size = 0;             ///< Declared uncompressed size.
  uint64_t compressed_size = 0;
  uint16_t method = 0;           ///< 0 stored, 8 deflate, ...
};

/// Running total of uncompressed bytes read, shared by an archive and the archives inside it.
struct ReadBudget {
  uint64_t used = 0;
};

class ZipArchive {
 public:
  /// Opens `bytes` (borrowed: they must outlive the archive). Fails with kWrongKind when the
  /// bytes are no zip, kTruncated / kCorrupt for a damaged one, kOutOfResources when it has more
  /// than limits.max_entries entries.
  static Result<std::unique_ptr<ZipArchive>> open(std::span<const uint8_t> bytes, std::string label,
                                                  const ReadLimits& limits, ReadBudget* budget);
  ~ZipArchive();
  ZipArchive(const ZipArchive&) = delete;
  ZipArchive& operator=(const ZipArchive&) = delete;

  const std::vector<ZipEntry>& entries() const { return entries_; }
  /// Index of the entry named `name`, or -1.
  int64_t find(const std::string& name) const;
  /// Inflates entry `index` after checking its declared size against the limits (per entry,
  /// total, compression ratio). Errors name the label and the entry.
  Result<std::vector<uint8_t>> read(size_t index);
  const std::string& label() const { return label_; }

 private:
  ZipArchive() = default;
  struct Impl;
  std::unique_ptr<Impl> impl_;
  std::vector<ZipEntry> entries_;
  std::string label_;
  ReadLimits limits_;
  ReadBudget* budget_ = nullptr;
};

}  // namespace etscope::etrecord
