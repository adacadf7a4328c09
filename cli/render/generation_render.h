// `etscope inspect --generation`: a generation's profile (inspect/generation_profile.h) as text
// tables or JSON (docs/json.md). Formatting only: every number comes from GenerationProfile.
#pragma once

#include <cstddef>
#include <ostream>

#include "etscope/inspect/generation_profile.h"
#include "render/json_output.h"

namespace etscope::cli {

/// The phases, the decode calls (position, time, attention, cache update) and each phase's
/// operator breakdown (at most `top` rows per phase; 0: all).
void render_generation_text(const inspect::GenerationProfile& profile, size_t top, std::ostream& out);

/// The same as one JSON object (operators cut to `top` rows when it is not 0).
Json generation_json(const inspect::GenerationProfile& profile, size_t top);

}  // namespace etscope::cli
