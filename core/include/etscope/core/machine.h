// What etscope knows about the machine it runs on.
#pragma once

#include <cstdint>

namespace etscope {

/// Physical memory in bytes, or UINT64_MAX when the system does not say. `etscope run` allows a
/// program this much by default (--max-memory), and `pte`/`memory` warn about programs that
/// declare more.
uint64_t machine_memory_bytes();

}  // namespace etscope
