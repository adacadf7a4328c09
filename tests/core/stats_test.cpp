// core/stats: percentiles and medians as numpy computes them.
#include <catch2/catch.hpp>

#include <vector>

#include "etscope/core/stats.h"

using namespace etscope;

TEST_CASE("percentiles interpolate linearly between sorted samples", "[core][stats]") {
  const std::vector<double> sorted{1, 2, 3, 4, 5};
  CHECK(percentile_sorted(sorted, 0) == 1);
  CHECK(percentile_sorted(sorted, 50) == 3);
  CHECK(percentile_sorted(sorted, 100) == 5);
  CHECK(percentile_sorted(sorted, 90) == Approx(4.6));
  CHECK(percentile_sorted(sorted, 10) == Approx(1.4));
  CHECK(percentile_sorted(std::vector<double>{7}, 90) == 7);
  CHECK(percentile_sorted(std::vector<double>{}, 50) == 0);
}

TEST_CASE("percentile sorts a copy of unordered samples", "[core][stats]") {
  const std::vector<double> samples{5, 1, 4, 2, 3};
  CHECK(percentile(samples, 50) == 3);
  CHECK(percentile(samples, 90) == Approx(4.6));
  CHECK(percentile({}, 90) == 0);
  CHECK(samples.front() == 5);
}

TEST_CASE("the median of an even count is the mean of the middle two", "[core][stats]") {
  CHECK(median({}) == 0);
  CHECK(median({3, 1, 2}) == 2);
  CHECK(median({4, 1, 3, 2}) == 2.5);
  CHECK(median({2, 2, 9, 1}) == 2);
  // numpy's median and 50th percentile agree.
  const std::vector<double> v{0.3, 1.7, 0.9, 2.2, 5.1, 0.4};
  CHECK(median(v) == Approx(percentile(v, 50)));
}

TEST_CASE("the trimmed mean leaves out as many of the largest as of the smallest samples (scipy's trim_mean)", "[core][stats]") {
  // scipy.stats.trim_mean([1, 2, 3, 4, 100], 0.2) == 3.0; with 0.1 nothing is cut from 5 samples.
  CHECK(etscope::trimmed_mean({100, 2, 4, 1, 3}, 0.2) == 3.0);
  CHECK(etscope::trimmed_mean({1, 2, 3, 4, 100}, 0.1) == 22.0);
  // Twenty executions, two preempted ten times over: 10% off each end drops them.
  std::vector<double> runs(18, 0.5);
  runs.push_back(5.0);
  runs.push_back(4.5);
  CHECK(etscope::trimmed_mean(runs, 0.1) == 0.5);
  CHECK(etscope::trimmed_mean({}, 0.1) == 0.0);
  CHECK(etscope::trimmed_mean({7}, 0.4) == 7.0);
}
