// `etscope pte --delegates`: each delegate of a method; for XNNPACK ones, the graph the payload
// holds (xnn::Graph, read and validated by formats/) node by node.
#pragma once

#include <ostream>

#include "etscope/core/json.h"
#include "etscope/formats/program.h"

namespace etscope::cli {

/// Text: per delegate a header line, then one line per node (kind, debug handle, inputs and
/// outputs with element type, shape, constant/quantization, attributes). A payload that does not
/// read is shown as its one-line error; returns false if any did not.
bool print_delegates(std::ostream& out, const Program& program, const ExecutionPlan& plan);

/// The same as JSON (docs/json.md): {"method", "delegates": [{"index", "backend", "bytes",
/// "graph": {...} | "error"}]}.
Json delegates_json(const Program& program, const ExecutionPlan& plan);

}  // namespace etscope::cli
