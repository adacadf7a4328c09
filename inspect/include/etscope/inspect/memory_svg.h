// SVG picture of a memory plan: x = byte offset (arenas side by side), y = instruction step
// (time runs down), one rectangle per planned tensor spanning its bytes and its lifetime,
// coloured by role, with a <title> tooltip (value id, dtype, shape, bytes, offset, lifetime).
// Each arena's peak step is marked with a dashed line and a label; conflicting tensors are
// outlined in red. Sized for reading at 1200x800.
#pragma once

#include <string>

#include "etscope/inspect/memory_plan.h"

namespace etscope::inspect {

struct MemorySvgOptions {
  int width = 1200;
  int height = 800;
  std::string title;  ///< Shown at the top; e.g. the file name. Empty: the plan name only.
};

/// The SVG document. Never fails. Tensors with invalid allocation info or no lifetime are left
/// out; every other planned tensor gets exactly one <rect class="tensor">.
std::string memory_svg(const MemoryPlan& plan, const MemorySvgOptions& options = {});

/// Fill colour used for a role, "#rrggbb"; shared with the GUI so both agree.
const char* role_colour(TensorRole role);

}  // namespace etscope::inspect
