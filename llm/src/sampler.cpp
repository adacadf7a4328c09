#include "etscope/llm/sampler.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

namespace etscope::llm {

Sampler::Sampler(double temperature, double top_p, uint64_t seed)
    : temperature_(temperature), top_p_(top_p), state_(seed * 0x9E3779B97F4A7C15ull + 0x2545F4914F6CDD1Dull) {
  if (state_ == 0) state_ = 0x2545F4914F6CDD1Dull;
}

// xorshift64*: 53 random bits as a double in [0, 1).
double Sampler::next_uniform() {
  state_ ^= state_ >> 12;
  state_ ^= state_ << 25;
  state_ ^= state_ >> 27;
  const uint64_t r = state_ * 0x2545F4914F6CDD1Dull;
  return static_cast<double>(r >> 11) * (1.0 / 9007199254740992.0);
}

int64_t Sampler::sample(std::span<const float> logits) {
  const size_t n = logits.size();
  // Greedy: the first largest (NaN never compares larger).
  size_t best = n;
  for (size_t i = 0; i < n; ++i) {
    if (std::isnan(logits[i])) continue;
    if (best == n || logits[i] > logits[best]) best = i;
  }
  if (best == n) return 0;
  if (!(temperature_ > 0)) return static_cast<int64_t>(best);
  // Softmax at the temperature, in double.
  std::vector<double> p(n, 0.0);
  const double top = logits[best];
  double sum = 0;
  for (size_t i = 0; i < n; ++i) {
    if (std::isnan(logits[i])) continue;
    p[i] = std::exp((static_cast<double>(logits[i]) - top) / temperature_);
    sum += p[i];
  }
  for (double& v : p) v /= sum;
  std::vector<size_t> order(n);
  std::iota(order.begin(), order.end(), size_t{0});
  size_t keep = n;
  double mass = 1.0;
  if (top_p_ > 0 && top_p_ < 1) {
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return p[a] > p[b]; });
    double acc = 0;
    keep = 0;
    while (keep < n) {
      acc += p[order[keep]];
      ++keep;
      if (acc >= top_p_) break;
    }
    mass = acc;
  }
  const double coin = next_uniform() * mass;
  double acc = 0;
  for (size_t k = 0; k < keep; ++k) {
    acc += p[order[k]];
    if (coin < acc) return static_cast<int64_t>(order[k]);
  }
  return static_cast<int64_t>(order[keep - 1]);
}

}  // namespace etscope::llm
