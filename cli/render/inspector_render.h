// Renderers for `etscope inspect`: the Inspector's event table as aligned text, CSV/TSV and JSON,
// the per-type summary and the module tree.
#pragma once

#include <cstddef>
#include <ostream>
#include <string>

#include <nlohmann/json.hpp>

#include "etscope/inspect/inspector.h"

namespace etscope::cli {

enum class EventSort { kOrder, kAvg, kTotal, kName };

struct InspectTableOptions {
  EventSort sort = EventSort::kOrder;
  size_t top = 0;                 ///< 0: every row.
  bool operator_calls = false;    ///< Keep OPERATOR_CALL rows (ExecuTorch's table drops them).
  std::string block;              ///< Only blocks with this name ("" = all).
  /// Keep, in the text table, debug events that carry no timing (n = 0: intermediate outputs
  /// logged under a delegate's debug identifier, rows named `1`, `3`, `4`). CSV, TSV and JSON
  /// always keep them, as ExecuTorch's to_dataframe does.
  bool debug_events = false;
};

/// "engine: etscope 0.1.0" (or "engine: unknown (no etscope engine marker)") and a blank line:
/// what the text reports of a dump open with, so that every timing says which engine made it.
void render_engine_line(const inspect::Inspector& in, std::ostream& out);

/// The event table, one section per block, columns aligned; untimed debug events are left out
/// (and counted under the table) unless opt.debug_events.
void render_event_table(const inspect::Inspector& in, const InspectTableOptions& opt, std::ostream& out);

/// One row per event with every column ExecuTorch's to_dataframe has (lists as JSON text),
/// separated by `sep` (',' with RFC 4180 quoting, or '\t').
void render_event_rows(const inspect::Inspector& in, const InspectTableOptions& opt, char sep, std::ostream& out);

/// Per-type summary of each selected block.
void render_type_summary(const inspect::Inspector& in, const InspectTableOptions& opt, std::ostream& out);

/// Module tree with totals, then find_total_for_module for the top-level modules.
void render_module_tree(const inspect::Inspector& in, const InspectTableOptions& opt, std::ostream& out);

/// Everything as one JSON object (docs/inspect.md).
/// --by-type as CSV/TSV: one row per block and operator type (shares as fractions 0..1).
void render_type_rows(const inspect::Inspector& in, const InspectTableOptions& opt, char sep, std::ostream& out);

/// --modules as CSV/TSV: one row per block and module, parents before children, each naming its
/// parent module ("" at the top); no rows without an ETRecord.
void render_module_rows(const inspect::Inspector& in, const InspectTableOptions& opt, char sep, std::ostream& out);

nlohmann::ordered_json inspector_json(const inspect::Inspector& in, const InspectTableOptions& opt);

}  // namespace etscope::cli
