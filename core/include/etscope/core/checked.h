// Overflow-checked arithmetic and bounds-checked slicing: the one place where etscope turns
// file-provided offsets and sizes into memory ranges. Every reader goes through these helpers.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>

namespace etscope::checked {

/// a + b, or nullopt on overflow.
inline std::optional<uint64_t> add(uint64_t a, uint64_t b) {
  uint64_t r;
  if (__builtin_add_overflow(a, b, &r)) return std::nullopt;
  return r;
}

/// a * b, or nullopt on overflow.
inline std::optional<uint64_t> mul(uint64_t a, uint64_t b) {
  uint64_t r;
  if (__builtin_mul_overflow(a, b, &r)) return std::nullopt;
  return r;
}

/// True when [offset, offset + length) lies inside [0, limit).
inline bool range_fits(uint64_t offset, uint64_t length, uint64_t limit) {
  auto end = add(offset, length);
  return end.has_value() && *end <= limit;
}

/// The sub-span [offset, offset + length) of `bytes`, or nullopt when it does not fit.
inline std::optional<std::span<const uint8_t>> slice(std::span<const uint8_t> bytes,
                                                     uint64_t offset, uint64_t length) {
  if (!range_fits(offset, length, bytes.size())) return std::nullopt;
  return bytes.subspan(static_cast<size_t>(offset), static_cast<size_t>(length));
}

/// Rounds `value` up to a multiple of `alignment` (a power of two), or nullopt on overflow.
inline std::optional<uint64_t> align_up(uint64_t value, uint64_t alignment) {
  auto bumped = add(value, alignment - 1);
  if (!bumped) return std::nullopt;
  return *bumped & ~(alignment - 1);
}

/// Little-endian loads from a span the caller has already bounds-checked.
inline uint32_t load_u32(const uint8_t* p) {
  return static_cast<uint32_t>(p[0]) | static_cast<uint32_t>(p[1]) << 8 |
         static_cast<uint32_t>(p[2]) << 16 | static_cast<uint32_t>(p[3]) << 24;
}
inline uint64_t load_u64(const uint8_t* p) {
  return static_cast<uint64_t>(load_u32(p)) | static_cast<uint64_t>(load_u32(p + 4)) << 32;
}

}  // namespace etscope::checked
