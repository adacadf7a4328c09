// JSON rendering of memory plans for `etscope memory --json` (documented in docs/memory.md).
#pragma once

#include "etscope/inspect/debug_buffer_planner.h"
#include "etscope/inspect/memory_plan.h"
#include "render/json_output.h"

namespace etscope::cli {

/// One plan: steps, arenas, tensors, sharing groups, conflicts, largest, debug buffer, problems.
/// {buffers, bytes, context_len, kv_buffers, kv_bytes, kv_bytes_per_token} (docs/json.md).
Json state_json(const inspect::StateSummary& state);
Json memory_plan_json(const inspect::MemoryPlan& plan, const inspect::DebugBufferPlan& debug, size_t top);

}  // namespace etscope::cli
