#include "etscope/core/machine.h"

#include <unistd.h>

namespace etscope {

uint64_t machine_memory_bytes() {
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long page = sysconf(_SC_PAGE_SIZE);
  if (pages <= 0 || page <= 0) return UINT64_MAX;
  const uint64_t p = static_cast<uint64_t>(pages), s = static_cast<uint64_t>(page);
  return p > UINT64_MAX / s ? UINT64_MAX : p * s;
}

}  // namespace etscope
