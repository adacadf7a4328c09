#include "etscope/core/stats.h"

#include <algorithm>
#include <cmath>

namespace etscope {

double percentile_sorted(const std::vector<double>& sorted, double p) {
  if (sorted.empty()) return 0.0;
  const double rank = p / 100.0 * static_cast<double>(sorted.size() - 1);
  const size_t lo = static_cast<size_t>(std::floor(rank));
  if (lo + 1 >= sorted.size()) return sorted.back();
  const double frac = rank - static_cast<double>(lo);
  // numpy's linear method is a lerp that starts from the nearer end, so the two halves are
  // written differently; doing the same keeps results identical to numpy's.
  const double a = sorted[lo], b = sorted[lo + 1];
  const double diff = b - a;
  return frac >= 0.5 ? b - diff * (1.0 - frac) : a + diff * frac;
}

double percentile(std::vector<double> samples, double p) {
  std::sort(samples.begin(), samples.end());
  return percentile_sorted(samples, p);
}

double median(std::vector<double> samples) {
  if (samples.empty()) return 0;
  // Selection instead of a full sort: the upper middle, then the largest value below it.
  const size_t mid = samples.size() / 2;
  const auto middle = samples.begin() + static_cast<std::ptrdiff_t>(mid);
  std::nth_element(samples.begin(), middle, samples.end());
  const double hi = *middle;
  if (samples.size() % 2 == 1) return hi;
  const double lo = *std::max_element(samples.begin(), middle);
  return (lo + hi) / 2;
}

double trimmed_mean(std::vector<double> samples, double fraction) {
  if (samples.empty()) return 0.0;
  std::sort(samples.begin(), samples.end());
  const double f = std::clamp(fraction, 0.0, 0.4999);
  const size_t cut = static_cast<size_t>(std::floor(static_cast<double>(samples.size()) * f));
  double sum = 0.0;
  for (size_t i = cut; i < samples.size() - cut; ++i) sum += samples[i];
  return sum / static_cast<double>(samples.size() - 2 * cut);
}

}  // namespace etscope
