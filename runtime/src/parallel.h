// Parallel: the threads of etscope's engine (MethodOptions::threads), shared by the kernels of a
// method that split their work (the XNNPACK delegate's GEMMs). Work is split into contiguous
// ranges of independent outputs, each computed exactly as on one thread, so results do not
// depend on the number of threads. The calling thread computes a range itself; the others run
// on Eigen's thread pool (unsupported/Eigen/CXX11/ThreadPool), started once at load.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>

namespace Eigen {
template <typename Environment>
class ThreadPoolTempl;
struct StlThreadEnvironment;
}  // namespace Eigen

namespace etscope::runtime {

class Parallel {
 public:
  /// `threads` (at least 2) threads in all: the caller's and threads - 1 workers; work of fewer
  /// than `min_split_ops` operations is not split (worth_splitting).
  Parallel(uint32_t threads, int64_t min_split_ops);
  ~Parallel();
  Parallel(const Parallel&) = delete;
  Parallel& operator=(const Parallel&) = delete;

  uint32_t threads() const { return threads_; }
  int64_t min_split_ops() const { return min_split_ops_; }

  /// Calls f(begin, end) for contiguous ranges covering [0, n), each (but the last) a multiple of
  /// `grain` long, at most one per thread, and returns when all have returned. f must not throw.
  void for_ranges(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& f) const;

 private:
  uint32_t threads_;
  int64_t min_split_ops_;
  std::unique_ptr<Eigen::ThreadPoolTempl<Eigen::StlThreadEnvironment>> pool_;
};

/// `parallel` for work of `ops` operations (multiply-adds, or values converted) worth splitting,
/// else null (the calling thread).
inline const Parallel* worth_splitting(const Parallel* parallel, int64_t ops) {
  return parallel != nullptr && ops >= parallel->min_split_ops() ? parallel : nullptr;
}

/// f(begin, end) over [0, n): split on `parallel` when there is one, else one call.
template <typename F>
void for_ranges(const Parallel* parallel, int64_t n, int64_t grain, F&& f) {
  if (parallel == nullptr || n <= grain) {
    if (n > 0) f(int64_t{0}, n);
    return;
  }
  parallel->for_ranges(n, grain, std::function<void(int64_t, int64_t)>(std::ref(f)));
}

/// f(r0, r1, c0, c1) over the blocks of a rows x cols grid of independent outputs: split by rows
/// (multiples of `row_grain`) when there are enough for every thread, else by columns
/// (multiples of `col_grain`: a matrix-vector product splits its outputs).
template <typename F>
void for_blocks(const Parallel* parallel, int64_t rows, int64_t row_grain, int64_t cols, int64_t col_grain, F&& f) {
  const int64_t threads = parallel != nullptr ? parallel->threads() : 1;
  if (rows >= threads * row_grain) {
    for_ranges(parallel, rows, row_grain, [&](int64_t r0, int64_t r1) { f(r0, r1, int64_t{0}, cols); });
  } else {
    for_ranges(parallel, cols, col_grain, [&](int64_t c0, int64_t c1) { f(int64_t{0}, rows, c0, c1); });
  }
}

}  // namespace etscope::runtime
