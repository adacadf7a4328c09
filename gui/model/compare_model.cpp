#include "model/compare_model.h"

#include <utility>

namespace etscope::gui {
namespace {

std::vector<inspect::RunSamples> one(inspect::RunSamples run) {
  std::vector<inspect::RunSamples> v;
  v.push_back(std::move(run));
  return v;
}

// Every run times the same operators at the same instructions as the baseline's first.
bool same_operators(const std::vector<inspect::RunSamples>& a, const std::vector<inspect::RunSamples>& b) {
  for (const auto* side : {&a, &b}) {
    for (const inspect::RunSamples& r : *side) {
      if (!inspect::same_operators(a.front(), r)) return false;
    }
  }
  return true;
}

}  // namespace

CompareModel::CompareModel(inspect::RunSamples baseline, std::string baseline_label, inspect::RunSamples candidate,
                           std::string candidate_label, inspect::EngineIdentity baseline_engine,
                           inspect::EngineIdentity candidate_engine)
    : CompareModel(one(std::move(baseline)), std::move(baseline_label), one(std::move(candidate)), std::move(candidate_label),
                   std::move(baseline_engine), std::move(candidate_engine)) {}

CompareModel::CompareModel(std::vector<inspect::RunSamples> baseline, std::string baseline_label,
                           std::vector<inspect::RunSamples> candidate, std::string candidate_label,
                           inspect::EngineIdentity baseline_engine, inspect::EngineIdentity candidate_engine)
    : baseline_(std::move(baseline)),
      candidate_(std::move(candidate)),
      baseline_label_(std::move(baseline_label)),
      candidate_label_(std::move(candidate_label)),
      baseline_engine_(std::move(baseline_engine)),
      candidate_engine_(std::move(candidate_engine)),
      engines_(inspect::check_engines(baseline_engine_, candidate_engine_)),
      same_program_(!baseline_.empty() && !candidate_.empty() && same_operators(baseline_, candidate_)) {}

const inspect::Comparison& CompareModel::comparison(double threshold, double alpha, double min_change_ms) const {
  if (!cached_ || threshold != threshold_ || alpha != alpha_ || min_change_ms != min_change_ms_) {
    inspect::CompareOptions o;
    o.threshold = threshold;
    o.alpha = alpha;
    o.min_change_ms = min_change_ms;
    o.same_program = same_program_;
    comparison_ = inspect::compare_run_sets(baseline_, candidate_, o);
    cached_ = true, threshold_ = threshold, alpha_ = alpha, min_change_ms_ = min_change_ms;
    ++recomputations_;
  }
  return comparison_;
}

}  // namespace etscope::gui
