// Renderers for `etscope inspect --aot-intermediates FILE --gap METRIC`: the rows of
// calculate_numeric_gap as an aligned table, CSV/TSV, or JSON (docs/inspect.md, "Numeric gap").
#pragma once

#include <ostream>
#include <vector>

#include <nlohmann/json.hpp>

#include "etscope/inspect/numeric_gap.h"

namespace etscope::cli {

/// Text table: AOT handles, AOT ops, runtime ops, runtime handles, shape, gap; then a summary line.
void render_gap_table(const std::vector<inspect::GapRow>& rows, inspect::GapMetric metric, std::ostream& out);

/// One line per row with ExecuTorch's DataFrame columns (lists and dicts as JSON text, tensors as
/// "f32[1,16,32,32]"), separated by `sep` (',' with RFC 4180 quoting, or '\t').
void render_gap_rows(const std::vector<inspect::GapRow>& rows, inspect::GapMetric metric, char sep, std::ostream& out);

/// {"metric": "L1", "rows": [...]}, tensors summarised with dtype, shape and statistics; non-finite
/// gaps as the strings "inf", "-inf", "nan".
nlohmann::ordered_json gap_json(const std::vector<inspect::GapRow>& rows, inspect::GapMetric metric);

/// The run's inputs against the AOT inputs (inspect::check_run_inputs): different inputs are an
/// error unless `force` (then a warning on stderr); unrecorded inputs a warning on stderr.
Status check_gap_inputs(const inspect::Inspector& in, bool force);

/// "first divergence (SNR < 40): ..." naming the first row whose gap passes `threshold`, or
/// "no operator's gap passes ..." when none does.
void render_first_divergence(const std::vector<inspect::GapRow>& rows, inspect::GapMetric metric, double threshold,
                             std::ostream& out);

}  // namespace etscope::cli
