#include "model/generation_model.h"

#include <algorithm>
#include <utility>

namespace etscope::gui {

GenerationModel::GenerationModel(const inspect::Inspector& inspector, inspect::GenerationProfile profile)
    : inspector_(&inspector), unknown_(std::move(profile)) {
  for (const inspect::GenerationCall& c : unknown_.decode.calls) decode_time_max_ = std::max(decode_time_max_, c.time);
}

std::optional<GenerationModel> GenerationModel::build(const inspect::Inspector& inspector) {
  if (!inspect::has_generation_blocks(inspector)) return std::nullopt;
  auto profile = inspect::generation_profile(inspector);
  if (!profile.ok()) return std::nullopt;
  return GenerationModel(inspector, std::move(profile).value());
}

const inspect::GenerationProfile& GenerationModel::profile(int64_t prompt_tokens) const {
  if (prompt_tokens <= 0) return unknown_;
  if (cached_tokens_ != prompt_tokens) {
    auto made = inspect::generation_profile(*inspector_, inspect::GenerationOptions{prompt_tokens});
    // The blocks were read once already (build): only a negative count could fail, and it cannot.
    cached_ = made.ok() ? std::move(made).value() : unknown_;
    cached_tokens_ = prompt_tokens;
    ++recomputations_;
  }
  return cached_;
}

}  // namespace etscope::gui
