// Cache-line aligned storage for buffers that vector code reads and writes a line at a time.
// std::vector's default allocator gives malloc's 16-byte alignment, so with it every 64-byte
// AVX-512 load or store of a packed filter, a workspace value or a scratch matrix spanned two
// cache lines.
#pragma once

#include <cstddef>
#include <new>
#include <vector>

namespace etscope::runtime::kernels {

template <typename T>
struct CacheAligned {
  using value_type = T;
  static constexpr std::align_val_t kAlign{64};
  CacheAligned() = default;
  template <typename U>
  CacheAligned(const CacheAligned<U>&) {}
  T* allocate(std::size_t n) { return static_cast<T*>(::operator new(n * sizeof(T), kAlign)); }
  void deallocate(T* p, std::size_t) { ::operator delete(p, kAlign); }
  template <typename U>
  bool operator==(const CacheAligned<U>&) const { return true; }
};

/// A std::vector whose elements start on a 64-byte boundary.
template <typename T>
using aligned_vector = std::vector<T, CacheAligned<T>>;

}  // namespace etscope::runtime::kernels
