// Order statistics of timing samples, computed the way numpy computes them so that etscope's
// numbers agree with ExecuTorch's Inspector and with a notebook to the last bit. The Inspector,
// the runner's latency summary, the training loop, the run store, `etscope compare` and the
// viewer all use these. Empty inputs give 0, never an error.
#pragma once

#include <vector>

namespace etscope {

/// Percentile p in [0, 100] of samples already sorted ascending, with numpy's default linear
/// interpolation (evaluated as numpy does, so results match to the ulp); 0 for none.
double percentile_sorted(const std::vector<double>& sorted, double p);

/// percentile_sorted of a sorted copy of `samples` (any order); 0 for none.
double percentile(std::vector<double> samples, double p);

/// Median with numpy's rule (the mean of the middle two for an even count); 0 for none.
double median(std::vector<double> samples);

/// The mean after leaving out floor(n * fraction) of the smallest and as many of the largest
/// samples (scipy.stats.trim_mean's rule), fraction in [0, 0.5); 0 for none. What an execution
/// is expected to cost when a few were preempted: unlike the median it keeps a skewed
/// distribution's weight, unlike the mean it drops the rare spikes of a busy machine.
double trimmed_mean(std::vector<double> samples, double fraction);

}  // namespace etscope
