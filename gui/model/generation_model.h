// GenerationModel: the Generation view's data, the profile of a generation (`etscope generate
// --etdump`) grouped by phase, inspect::generation_profile's numbers unchanged. The prompt's token
// count is not in the dump: the view may give one, and the profile for it is made once and cached.
#pragma once

#include <cstdint>
#include <optional>

#include "etscope/inspect/generation_profile.h"
#include "etscope/inspect/inspector.h"

namespace etscope::gui {

class GenerationModel {
 public:
  /// The model of `inspector`'s Prefill and Decode blocks (times in its target unit, microseconds
  /// as load_session opens profiles); nullopt when it has none. Borrows `inspector`, which must
  /// outlive the model (the Session owns both).
  static std::optional<GenerationModel> build(const inspect::Inspector& inspector);

  /// The profile with `prompt_tokens` (0: unknown): decode positions and prefill tokens per second.
  /// Cached: asking again with the same count returns the same object unchanged.
  const inspect::GenerationProfile& profile(int64_t prompt_tokens) const;
  /// The largest decode call's time (0 without decode calls): the top of the latency plot.
  double decode_time_max() const { return decode_time_max_; }
  /// How many times profile() computed a profile (for tests).
  size_t recomputations() const { return recomputations_; }

 private:
  GenerationModel(const inspect::Inspector& inspector, inspect::GenerationProfile profile);
  const inspect::Inspector* inspector_ = nullptr;
  inspect::GenerationProfile unknown_;  ///< The profile without a prompt length.
  double decode_time_max_ = 0;
  mutable int64_t cached_tokens_ = 0;
  mutable inspect::GenerationProfile cached_;
  mutable size_t recomputations_ = 0;
};

}  // namespace etscope::gui
