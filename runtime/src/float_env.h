// The floating-point environment's treatment of denormal (subnormal) numbers, as the kernels run.
//
// XNNPACK runs every operator with denormal inputs read as zero and denormal results flushed to
// zero (its threadpool's PTHREADPOOL_FLAG_DISABLE_DENORMALS: MXCSR's DAZ and FTZ bits on x86-64,
// FPCR's FZ and FZ16 on AArch64), on the calling thread and on every worker. etscope's XNNPACK
// delegate computes the same way, so its numbers are XNNPACK's where denormals appear (and it
// does not pay the processor's slow path for them); portable kernels keep the IEEE default.
#pragma once

#include <cstdint>
#if defined(__x86_64__) || defined(__SSE__)
#include <xmmintrin.h>
#endif

namespace etscope::runtime {

/// The current thread's floating-point control word (MXCSR or FPCR; 0 where neither exists).
inline uint64_t float_mode() {
#if defined(__x86_64__) || defined(__SSE__)
  return _mm_getcsr();
#elif defined(__aarch64__)
  uint64_t fpcr;
  __asm__ __volatile__("mrs %0, fpcr" : "=r"(fpcr));
  return fpcr;
#else
  return 0;
#endif
}

inline void set_float_mode([[maybe_unused]] uint64_t mode) {
#if defined(__x86_64__) || defined(__SSE__)
  _mm_setcsr(static_cast<unsigned>(mode));
#elif defined(__aarch64__)
  __asm__ __volatile__("msr fpcr, %0" : : "r"(mode));
#endif
}

/// `mode` with denormals flushed: inputs read as zero and results flushed to zero.
inline uint64_t without_denormals(uint64_t mode) {
#if defined(__x86_64__) || defined(__SSE__)
  return mode | 0x8040;  // FTZ | DAZ
#elif defined(__aarch64__)
  return mode | 0x1080000;  // FZ | FZ16
#else
  return mode;
#endif
}

/// Flushes denormals on this thread for its lifetime, then restores the mode it found.
class FlushDenormals {
 public:
  FlushDenormals() : saved_(float_mode()) { set_float_mode(without_denormals(saved_)); }
  ~FlushDenormals() { set_float_mode(saved_); }
  FlushDenormals(const FlushDenormals&) = delete;
  FlushDenormals& operator=(const FlushDenormals&) = delete;

 private:
  uint64_t saved_;
};

}  // namespace etscope::runtime
