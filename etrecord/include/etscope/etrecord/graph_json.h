// The torch.export serde JSON of one exported program (formats.md §6.3), current and 2023
// layouts, turned into an etrecord::Graph.
#pragma once

#include <string>
#include <vector>

#include "etscope/etrecord/etrecord_reader.h"
#include "etscope/core/result.h"
#include "etscope/core/json.h"

namespace etscope::etrecord {

/// Parses a serialized ExportedProgram object. `name` becomes Graph::name; `where` starts
/// messages. Fails (kCorrupt) only when the object has no `graph_module.graph`; parts that do not
/// parse (a lowered module's JSON, a malformed `from_node`) are skipped with a line in `notes`.
/// `nesting` counts lowered modules around this program (bounded to keep recursion shallow).
Result<Graph> parse_exported_program(const Json& root, const std::string& name, const std::string& where,
                                     const ReadLimits& limits, int nesting, std::vector<std::string>* notes);

}  // namespace etscope::etrecord
