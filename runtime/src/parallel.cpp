#include "parallel.h"

#include <algorithm>
#include <unsupported/Eigen/CXX11/ThreadPool>

#include "float_env.h"

namespace etscope::runtime {

Parallel::Parallel(uint32_t threads, int64_t min_split_ops)
    : threads_(std::max<uint32_t>(threads, 2)), min_split_ops_(min_split_ops), pool_(std::make_unique<Eigen::ThreadPool>(static_cast<int>(threads_ - 1))) {}

Parallel::~Parallel() = default;

void Parallel::for_ranges(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& f) const {
  if (n <= 0) return;
  grain = std::max<int64_t>(grain, 1);
  const int64_t units = (n + grain - 1) / grain;
  const int64_t parts = std::min<int64_t>(units, threads_);
  if (parts <= 1) {
    f(0, n);
    return;
  }
  // Range p is units [p * units / parts, (p + 1) * units / parts): as even as whole grains allow.
  auto range = [&](int64_t p) {
    const int64_t begin = std::min(n, p * units / parts * grain), end = std::min(n, (p + 1) * units / parts * grain);
    if (begin < end) f(begin, end);
  };
  // Workers compute in the caller's floating-point mode (its denormal handling, float_env.h).
  const uint64_t mode = float_mode();
  Eigen::Barrier done(static_cast<unsigned>(parts - 1));
  for (int64_t p = 1; p < parts; ++p) {
    pool_->Schedule([&range, &done, p, mode] {
      const uint64_t own = float_mode();
      set_float_mode(mode);
      range(p);
      set_float_mode(own);
      done.Notify();
    });
  }
  range(0);
  done.Wait();
}

}  // namespace etscope::runtime
