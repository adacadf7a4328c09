// Renderers for `etscope inspect --aot-intermediates FILE --gap METRIC`: the rows of
// calculate_numeric_gap as an aligned table, CSV/TSV, or JSON (docs/inspect.md, "Numeric gap").
#pragma once

#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "etscope/inspect/numeric_gap.h"

namespace etscope::cli {

/// Each row's local gap (inspect::local_gaps); null when there are none.
using LocalGapColumn = inspect::LocalGaps;

/// Text table: AOT handles, AOT ops, runtime ops, runtime handles, shape, gap, the local gap when
/// `local` is given ("-" for rows without one), then with `stats` the stats of
/// inspect::gap_stats_text (NaN/Inf only when some row has any).
/// `reference` names what the AOT columns hold ("AOT reference", or the other program of
/// `debug --against`).
void render_gap_table(const std::vector<inspect::GapRow>& rows, inspect::GapMetric metric, std::ostream& out,
                      const LocalGapColumn* local = nullptr, bool stats = false, const std::string& reference = "AOT reference");

/// One line per row with ExecuTorch's DataFrame columns (lists and dicts as JSON text, tensors as
/// "f32[1,16,32,32]"), separated by `sep` (',' with RFC 4180 quoting, or '\t').
void render_gap_rows(const std::vector<inspect::GapRow>& rows, inspect::GapMetric metric, char sep, std::ostream& out);

/// {"metric": "L1", "rows": [...]}, tensors summarised with dtype, shape and statistics; non-finite
/// gaps as the strings "inf", "-inf", "nan".
/// With `local`, each row has "local_gap" (like "gap", or null).
nlohmann::ordered_json gap_json(const std::vector<inspect::GapRow>& rows, inspect::GapMetric metric,
                                const LocalGapColumn* local = nullptr);

/// The run's inputs against the AOT inputs (inspect::check_run_inputs): different inputs are an
/// error unless `force` (then a warning on stderr); unrecorded inputs a warning on stderr.
Status check_gap_inputs(const inspect::Inspector& in, bool force);

/// "first divergence (SNR < 40): ..." naming the first row whose gap passes `threshold`, or
/// "no operator's gap passes ..." when none does.
void render_first_divergence(const std::vector<inspect::GapRow>& rows, inspect::GapMetric metric, double threshold,
                             std::ostream& out, const inspect::Inspector* inspector = nullptr);

/// "culprit (local SNR < 40): ..." naming the first row whose *local* gap passes `threshold`
/// (inspect::first_local_divergence) with its module (from `inspector`'s event that logged it,
/// inspect::gap_row_event) and source lines (stack traces), and whether the first divergence's
/// gap is its own or inherited; "no operator's own gap passes ..." when none. Both renderers name
/// the row's module when `inspector` is given.
void render_culprit(const std::vector<inspect::GapRow>& rows, const LocalGapColumn& local, inspect::GapMetric metric,
                    double threshold, std::ostream& out, const inspect::Inspector* inspector = nullptr);

/// `debug --against` over several input sets: one line per row (runtime handles, module and other
/// operator, mean, worst and which set, then each set's gap), `inputs` naming the sets.
void render_gaps_over_inputs(const std::vector<inspect::GapOverInputs>& rows, const std::vector<std::string>& inputs,
                             inspect::GapMetric metric, std::ostream& out);
nlohmann::ordered_json gaps_over_inputs_json(const std::vector<inspect::GapOverInputs>& rows, const std::vector<std::string>& inputs,
                                             inspect::GapMetric metric);

}  // namespace etscope::cli
