// CompareModel: the Compare view's data: two sides' per-operator samples (each run from an ETDump
// through inspect::run_samples, or from the run store; a side may be several runs, such as a
// `run --repeat` set) and libinspect's compare_run_sets over them (compare_runs for one run a
// side), recomputed only when the user changes the threshold or the significance level. It also holds
// which engine timed each run and libinspect's rule on comparing them (engine_identity.h).
#pragma once

#include <string>
#include <vector>

#include "etscope/inspect/compare.h"
#include "etscope/inspect/engine_identity.h"

namespace etscope::gui {

class CompareModel {
 public:
  /// One run a side.
  CompareModel(inspect::RunSamples baseline, std::string baseline_label, inspect::RunSamples candidate,
               std::string candidate_label, inspect::EngineIdentity baseline_engine = {},
               inspect::EngineIdentity candidate_engine = {});
  /// Several runs a side (`etscope compare A1,A2,A3,A4 B1,B2,B3,B4`); neither side empty.
  CompareModel(std::vector<inspect::RunSamples> baseline, std::string baseline_label, std::vector<inspect::RunSamples> candidate,
               std::string candidate_label, inspect::EngineIdentity baseline_engine = {},
               inspect::EngineIdentity candidate_engine = {});

  const std::string& baseline_label() const { return baseline_label_; }
  const std::string& candidate_label() const { return candidate_label_; }
  /// Each side's runs, at least one.
  const std::vector<inspect::RunSamples>& baseline() const { return baseline_; }
  const std::vector<inspect::RunSamples>& candidate() const { return candidate_; }
  /// inspect::same_operators of every run with the baseline's first: matched by position (same
  /// program) or by name and occurrence.
  bool same_program() const { return same_program_; }
  /// The engines that timed the baseline (A) and the candidate (B); unknown without a marker.
  const inspect::EngineIdentity& baseline_engine() const { return baseline_engine_; }
  const inspect::EngineIdentity& candidate_engine() const { return candidate_engine_; }
  /// inspect::check_engines(baseline, candidate): the view warns when they differ (the CLI
  /// refuses such a comparison unless --allow-engine-mismatch) and notes unknown engines.
  const inspect::EngineCheck& engines() const { return engines_; }

  /// compare_run_sets(baseline, candidate) with `threshold`, `alpha` and `min_change_ms` (the same
  /// verdicts `etscope compare` gives under the same options); cached under them.
  const inspect::Comparison& comparison(double threshold, double alpha,
                                        double min_change_ms = inspect::kDefaultMinChangeUs / 1000) const;
  size_t recomputations() const { return recomputations_; }

 private:
  std::vector<inspect::RunSamples> baseline_, candidate_;
  std::string baseline_label_, candidate_label_;
  inspect::EngineIdentity baseline_engine_, candidate_engine_;
  inspect::EngineCheck engines_;
  bool same_program_ = true;
  mutable bool cached_ = false;
  mutable double threshold_ = 0, alpha_ = 0, min_change_ms_ = 0;
  mutable inspect::Comparison comparison_;
  mutable size_t recomputations_ = 0;
};

}  // namespace etscope::gui
