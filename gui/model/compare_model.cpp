#include "model/compare_model.h"

namespace etscope::gui {

CompareModel::CompareModel(inspect::RunSamples baseline, std::string baseline_label, inspect::RunSamples candidate,
                           std::string candidate_label, inspect::EngineIdentity baseline_engine,
                           inspect::EngineIdentity candidate_engine)
    : baseline_(std::move(baseline)),
      candidate_(std::move(candidate)),
      baseline_label_(std::move(baseline_label)),
      candidate_label_(std::move(candidate_label)),
      baseline_engine_(std::move(baseline_engine)),
      candidate_engine_(std::move(candidate_engine)),
      engines_(inspect::check_engines(baseline_engine_, candidate_engine_)),
      same_program_(inspect::same_operators(baseline_, candidate_)) {}

const inspect::Comparison& CompareModel::comparison(double threshold, double alpha, double min_change_ms) const {
  if (!cached_ || threshold != threshold_ || alpha != alpha_ || min_change_ms != min_change_ms_) {
    inspect::CompareOptions o;
    o.threshold = threshold;
    o.alpha = alpha;
    o.min_change_ms = min_change_ms;
    o.same_program = same_program_;
    comparison_ = inspect::compare_runs(baseline_, candidate_, o);
    cached_ = true, threshold_ = threshold, alpha_ = alpha, min_change_ms_ = min_change_ms;
    ++recomputations_;
  }
  return comparison_;
}

}  // namespace etscope::gui
