// Chrome trace event JSON of a profiled run (an ETDump joined by the Inspector), for Perfetto
// and chrome://tracing.
//
// One process. By default one track (tid) per block name ("Default", "Warmup", "Execute"), the
// runs laid end to end as they ran, each under a parent slice "<block> #<n>" spanning its events
// (1,000 runs stay one track); with per_run_tracks, one track per ETDump run block named
// "<block> #<n>", in file order. Every profile event becomes a complete ("X") event: ts and dur in microseconds
// from the earliest timestamp of the dump (converted with the Inspector's source time scale;
// with cycles, one cycle is drawn as one microsecond), cat from events::classify: "framework",
// "operator" (OPERATOR_CALL), "kernel" (native_call_*), "delegate" (DELEGATE_CALL and
// delegate-raised events) or "other" (Method::step, JF_CALL, custom names). args carry the
// instruction id, chain, delegate identifier and backend, and, when the Inspector linked an
// ETRecord, debug handles, op types, the module hierarchy (outermost first, "path (type)") and
// the stack trace of the first graph node. otherData and the process's name say which engine
// made the timings (engine_identity.h; null and "unknown" without an engine marker); etscope's
// markers are never drawn. Events nest as they ran (OPERATOR_CALL around its
// kernel), which both viewers draw as a flame chart.
#pragma once

#include <ostream>

#include "etscope/inspect/inspector.h"

namespace etscope::inspect {

struct RunTraceOptions {
  /// One track per run block instead of one per block name.
  bool per_run_tracks = false;
};

/// Writes the trace. Never fails on a built Inspector; stream errors are the caller's to check.
/// Each event's args also hold its duration in the Inspector's target time scale
/// ("duration_<unit>"), the unit the CLI's tables use.
void write_run_trace(const Inspector& inspector, std::ostream& out, const RunTraceOptions& options = {});

}  // namespace etscope::inspect
