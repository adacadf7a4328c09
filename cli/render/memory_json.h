// JSON rendering of memory plans for `etscope memory --json` (documented in docs/memory.md).
#pragma once

#include "etscope/inspect/debug_buffer_planner.h"
#include "etscope/inspect/memory_plan.h"
#include "render/json_output.h"

namespace etscope::cli {

/// One plan: steps, arenas, tensors, sharing groups, conflicts, largest, debug buffer, problems.
Json memory_plan_json(const inspect::MemoryPlan& plan, const inspect::DebugBufferPlan& debug, size_t top);

}  // namespace etscope::cli
