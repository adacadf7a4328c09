// The runtime's one random stream, used by dropout, rand and randn: SplitMix64 over a
// process-wide counter that every drawn number advances. The counter starts at the seed in the
// environment variable ETSCOPE_SEED (decimal or 0x-hex; ETSCOPE_DROPOUT_SEED is read when it is
// unset) or at 0x5EED, so a process's sequence of runs is reproducible. It does not (and cannot)
// reproduce ExecuTorch's streams, which are seeded from std::random_device, nor PyTorch's.
#pragma once

#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstdlib>

namespace etscope::runtime::kernels {

inline std::atomic<uint64_t>& random_state() {
  static std::atomic<uint64_t> state{[] {
    const char* env = std::getenv("ETSCOPE_SEED");
    if (env == nullptr) env = std::getenv("ETSCOPE_DROPOUT_SEED");
    return env != nullptr ? static_cast<uint64_t>(std::strtoull(env, nullptr, 0)) : uint64_t{0x5EED};
  }()};
  return state;
}

/// `n` consecutive draws reserved from the stream: draw(i) for i in [0, n) are independent
/// uniform numbers in [0, 1), with 53 random bits each.
class RandomDraws {
 public:
  explicit RandomDraws(uint64_t n) : start_(random_state().fetch_add(n * kGamma)) {}

  double uniform(uint64_t i) const {
    return static_cast<double>(mix(start_ + i * kGamma) >> 11) * (1.0 / 9007199254740992.0);
  }

  /// A standard normal number from draws 2i and 2i + 1 (Box-Muller; the first draw is moved
  /// into (0, 1] so that its logarithm is finite).
  double normal(uint64_t i) const {
    const double u1 = 1.0 - uniform(2 * i);
    const double u2 = uniform(2 * i + 1);
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
  }

 private:
  static constexpr uint64_t kGamma = 0x9E3779B97F4A7C15ull;
  static uint64_t mix(uint64_t x) {
    x += kGamma;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
  }
  uint64_t start_;
};

}  // namespace etscope::runtime::kernels
