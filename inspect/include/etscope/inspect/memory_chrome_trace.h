// Chrome-trace JSON of a memory plan in the convention of ExecuTorch's activation memory
// profiler (`generate_memory_trace(..., enable_memory_offsets=True)`, semantics.md §5.2), so the
// plan opens in Perfetto or chrome://tracing next to traces ExecuTorch wrote.
//
// {"traceEvents": [...]}, indented by 2. One "X" event per planned tensor per step it is live:
// pid = memory id, tid = ordinal of the step among steps where anything is live (empty steps do
// not advance it), ts = the tensor's offset in its arena, dur = its unaligned size in bytes,
// name = MemoryPlan's readable name, cat = "memory_allocation", args = {op_name, "Memory ID",
// fqn, source: "None", bytes}. Within a step, tensors appear in order of first use. Steps are
// instructions rather than FX nodes. Views (PlannedTensor::view_of) are left out, as the profiler
// skips memory.view nodes, and so are tensors whose allocation info is invalid.
#pragma once

#include <string>

#include "etscope/inspect/memory_plan.h"

namespace etscope::inspect {

/// The trace as text. Never fails.
std::string memory_chrome_trace(const MemoryPlan& plan);

/// Number of events memory_chrome_trace() writes: the sum over placed tensors that are not
/// views of their live steps.
size_t memory_chrome_trace_event_count(const MemoryPlan& plan);

}  // namespace etscope::inspect
