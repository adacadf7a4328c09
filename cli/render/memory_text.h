// Text rendering of memory plans for `etscope memory`: the arena table, the largest tensors,
// shared storage, debug-buffer sizing and a terminal arena map.
#pragma once

#include <ostream>

#include "etscope/inspect/debug_buffer_planner.h"
#include "etscope/inspect/memory_plan.h"

namespace etscope::cli {

/// Everything about one plan except the arena maps. `top` limits the largest-tensors list.
/// The plan's state across executions (mutable buffers; an LLM's KV caches per token of context);
/// nothing when it has none.
void print_state_summary(std::ostream& out, const inspect::StateSummary& state);

void print_memory_summary(std::ostream& out, const inspect::MemoryPlan& plan,
                          const inspect::DebugBufferPlan& debug, size_t top);

/// One arena as rows of `columns` characters, one row per step (several steps per row when
/// there are more than `max_rows`). A cell shows '#' when live tensors cover all of its bytes
/// at some step of the row, '+' when they cover part of them, '.' when none.
void print_arena_map(std::ostream& out, const inspect::MemoryPlan& plan, size_t arena_index, int columns = 64,
                     int max_rows = 40);

}  // namespace etscope::cli
