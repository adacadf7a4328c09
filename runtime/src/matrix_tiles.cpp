#include "matrix_tiles.h"

#if ETSCOPE_MATRIX_TILES && defined(__linux__) && defined(__x86_64__)
#include <cpuid.h>
#include <sys/syscall.h>
#include <unistd.h>
#define ETSCOPE_HAVE_TILES 1
#else
#define ETSCOPE_HAVE_TILES 0
#endif

namespace etscope::runtime {

#if ETSCOPE_HAVE_TILES
namespace {

bool ask_for_tiles() {
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (__get_cpuid_count(7, 0, &a, &b, &c, &d) == 0) return false;
  const unsigned amx_tile = 1u << 24, amx_int8 = 1u << 25;
  if ((d & amx_tile) == 0 || (d & amx_int8) == 0) return false;
  if (__get_cpuid(1, &a, &b, &c, &d) == 0 || (c & (1u << 27)) == 0) return false;  // OSXSAVE: xgetbv works
  unsigned lo = 0, hi = 0;
  __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
  const unsigned tile_state = (1u << 17) | (1u << 18);  // XTILECFG, XTILEDATA
  if ((lo & tile_state) != tile_state) return false;
  constexpr long kReqXcompPerm = 0x1023, kXtiledata = 18;
  return syscall(SYS_arch_prctl, kReqXcompPerm, kXtiledata) == 0;
}

}  // namespace

bool matrix_tiles_available() {
  static const bool available = ask_for_tiles();
  return available;
}
#else
bool matrix_tiles_available() { return false; }
#endif

}  // namespace etscope::runtime
