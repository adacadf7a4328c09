// Renderers of the numeric gap rows. Presentation only: the rows come from libinspect.
#include "render/numeric_gap_render.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <optional>
#include <string>

#include "etscope/formats/tensor_stats.h"
#include "etscope/inspect/event_index.h"
#include "render/format.h"
#include "render/json_output.h"
#include "render/table.h"

namespace etscope::cli {
namespace {

using inspect::GapRow;
using inspect::GapValue;

std::string handles_text(const std::vector<int64_t>& h) {
  std::string s;
  for (size_t i = 0; i < h.size(); ++i) s += (i ? "," : "") + std::to_string(h[i]);
  return s;
}

std::string gap_text(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

std::string gaps_text(const std::vector<double>& gaps) {
  std::string s;
  for (size_t i = 0; i < gaps.size(); ++i) s += (i ? " " : "") + gap_text(gaps[i]);
  return s;
}

nlohmann::ordered_json gap_json(double v) {
  if (std::isfinite(v)) return v;
  return gap_text(v);
}

nlohmann::ordered_json value_json(const GapValue& v) {
  switch (v.kind) {
    case GapValue::Kind::kNone:
      return nullptr;
    case GapValue::Kind::kScalar:
      return gap_json(v.scalar);
    case GapValue::Kind::kTensor: {
      nlohmann::ordered_json j;
      j["dtype"] = scalar_type_name(v.tensor.dtype);
      j["shape"] = v.tensor.shape;
      j["numel"] = v.tensor.numel();
      if (auto stats = compute_tensor_stats(v.tensor.dtype, v.tensor.bytes, v.tensor.numel())) j["stats"] = tensor_stats_json(*stats);
      return j;
    }
    case GapValue::Kind::kList: {
      nlohmann::ordered_json j = nlohmann::ordered_json::array();
      for (const GapValue& item : v.items) j.push_back(value_json(item));
      return j;
    }
  }
  return nullptr;
}

nlohmann::ordered_json traces_json(const GapRow& r) {
  nlohmann::ordered_json j = nlohmann::ordered_json::object();
  for (const auto& [op, trace] : r.stack_traces) j[op] = trace ? nlohmann::ordered_json(*trace) : nlohmann::ordered_json(nullptr);
  return j;
}

nlohmann::ordered_json stats_json(const inspect::GapStats& st) {
  nlohmann::ordered_json j;
  j["compared"] = st.compared;
  j["exact"] = st.exact;
  j["max_abs"] = gap_json(st.max_abs);
  j["max_rel"] = st.max_rel ? gap_json(*st.max_rel) : nlohmann::ordered_json(nullptr);
  j["cosine"] = st.cosine ? gap_json(*st.cosine) : nlohmann::ordered_json(nullptr);
  j["worst_channel_sqnr_db"] = st.worst_channel_sqnr_db ? gap_json(*st.worst_channel_sqnr_db) : nlohmann::ordered_json(nullptr);
  j["worst_channel"] = st.worst_channel_sqnr_db ? nlohmann::ordered_json(st.worst_channel) : nlohmann::ordered_json(nullptr);
  j["channel_dim"] = st.channel_dim >= 0 ? nlohmann::ordered_json(st.channel_dim) : nlohmann::ordered_json(nullptr);
  j["max_ulp"] = st.max_ulp ? nlohmann::ordered_json(*st.max_ulp) : nlohmann::ordered_json(nullptr);
  j["aot_nan"] = st.aot_nan;
  j["aot_inf"] = st.aot_inf;
  j["runtime_nan"] = st.runtime_nan;
  j["runtime_inf"] = st.runtime_inf;
  return j;
}

nlohmann::ordered_json stats_json(const GapRow& r) {
  nlohmann::ordered_json j = nlohmann::ordered_json::array();
  for (const inspect::GapStats& st : r.stats) j.push_back(stats_json(st));
  return j;
}

std::string compact(const nlohmann::ordered_json& j) { return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace); }

// Op names joined with ", ".
std::string ops_text(const std::vector<std::string>& ops) {
  std::string s;
  for (size_t i = 0; i < ops.size(); ++i) s += (i ? ", " : "") + ops[i];
  return s;
}

// "row 3 of 12, aot handles 4 (conv2d), runtime native_call_convolution.out".
void render_row_place(const std::vector<GapRow>& rows, size_t k, std::ostream& out) {
  const GapRow& r = rows[k];
  out << "row " << k + 1 << " of " << rows.size() << ", aot handles " << handles_text(r.aot_handles) << " (" << ops_text(r.aot_ops)
      << "), runtime " << ops_text(r.runtime_ops);
}

// "  module features.3 (Conv2d)" for the event that logged the row, when known.
void render_row_module(const GapRow& r, const inspect::Inspector* inspector, std::ostream& out) {
  if (inspector == nullptr) return;
  const inspect::Event* e = inspect::gap_row_event(*inspector, r);
  if (e == nullptr) return;
  const std::string module = inspect::innermost_module_text(*e);
  if (!module.empty()) out << "  module " << module << "\n";
}

// The user's frames of each AOT op's stack trace, indented.
void render_row_traces(const GapRow& r, std::ostream& out) {
  for (const auto& [op, trace] : r.stack_traces) {
    if (!trace) continue;
    out << "  " << op << " at:\n";
    const std::string frames = inspect::user_stack_frames(*trace, 2);
    for (size_t start = 0; start < frames.size();) {
      const size_t end = std::min(frames.find('\n', start), frames.size());
      out << "    " << frames.substr(start, end - start) << "\n";
      start = end + 1;
    }
  }
}

}  // namespace

void render_gap_table(const std::vector<GapRow>& rows, inspect::GapMetric metric, std::ostream& out, const LocalGapColumn* local,
                      bool stats, const std::string& reference) {
  std::vector<std::string> headers{"aot handles", "aot ops", "runtime ops", "runtime handles", "shape",
                                   std::string("gap (") + inspect::to_string(metric) + ")"};
  if (local) headers.push_back("local");
  // The stats' columns (inspect::gap_stats_text), each element's text joined like the gaps;
  // NaN/Inf only when some row has any.
  const size_t first_stat = headers.size();
  if (stats) {
    for (const auto& [label, text] : inspect::gap_stats_text({})) headers.push_back(label);
  }
  std::vector<std::vector<std::string>> cells;
  bool any_special = false;
  for (const GapRow& r : rows) {
    std::string shape = inspect::describe(r.aot_output);
    if (const std::string other = inspect::describe(r.runtime_output); other != shape) shape += " vs " + other;
    cells.push_back({handles_text(r.aot_handles), ops_text(r.aot_ops), ops_text(r.runtime_ops), handles_text(r.runtime_handles), shape,
                     gaps_text(r.gap)});
    if (local) {
      const size_t k = cells.size() - 1;
      cells.back().push_back(k < local->size() && (*local)[k] ? gaps_text(*(*local)[k]) : "-");
    }
    cells.back().resize(headers.size());
    if (!stats) continue;
    for (const inspect::GapStats& st : r.stats) {
      const auto fields = inspect::gap_stats_text(st);
      for (size_t k = 0; k < fields.size(); ++k) {
        std::string& cell = cells.back()[first_stat + k];
        cell += (cell.empty() ? "" : " ") + fields[k].second;
      }
      any_special |= st.aot_nan + st.aot_inf + st.runtime_nan + st.runtime_inf > 0;
    }
  }
  if (stats && !any_special) {
    headers.pop_back();
    for (auto& row : cells) row.pop_back();
  }
  const size_t gap_column = local ? first_stat - 2 : first_stat - 1;
  std::vector<size_t> width(headers.size());
  for (size_t c = 0; c < headers.size(); ++c) width[c] = headers[c].size();
  for (const auto& row : cells)
    for (size_t c = 0; c < row.size(); ++c) width[c] = std::max(width[c], row[c].size());
  auto line = [&](const std::vector<std::string>& row) {
    std::string s = " ";
    for (size_t c = 0; c < row.size(); ++c) {
      const bool right = c >= gap_column;
      const std::string pad(width[c] - row[c].size(), ' ');
      s += right ? pad + row[c] : row[c] + pad;
      if (c + 1 < row.size()) s += "  ";
    }
    while (!s.empty() && s.back() == ' ') s.pop_back();
    out << s << "\n";
  };
  out << "numeric gap (" << inspect::to_string(metric) << "), " << reference << " vs runtime: " << rows.size()
      << (rows.size() == 1 ? " row\n" : " rows\n");
  line(headers);
  std::vector<std::string> rule;
  for (size_t w : width) rule.push_back(std::string(w, '-'));
  line(rule);
  for (const auto& row : cells) line(row);
}

void render_gap_rows(const std::vector<GapRow>& rows, inspect::GapMetric metric, char sep, std::ostream& out) {
  (void)metric;
  const char* headers[] = {"aot_debug_handle", "aot_ops", "aot_intermediate_output", "runtime_ops", "runtime_debug_handle",
                           "runtime_intermediate_output", "gap", "stacktraces", "stats"};
  for (size_t i = 0; i < 9; ++i) out << (i ? std::string(1, sep) : "") << headers[i];
  out << "\n";
  for (const GapRow& r : rows) {
    nlohmann::ordered_json gaps = nlohmann::ordered_json::array();
    for (double g : r.gap) gaps.push_back(gap_json(g));
    const std::string fields[] = {compact(r.aot_handles), compact(r.aot_ops), inspect::describe(r.aot_output), compact(r.runtime_ops),
                                  compact(r.runtime_handles), inspect::describe(r.runtime_output), compact(gaps), compact(traces_json(r)),
                                  compact(stats_json(r))};
    for (size_t i = 0; i < 9; ++i) out << (i ? std::string(1, sep) : "") << delimited_cell(fields[i], sep);
    out << "\n";
  }
}

nlohmann::ordered_json gap_json(const std::vector<GapRow>& rows, inspect::GapMetric metric, const LocalGapColumn* local) {
  nlohmann::ordered_json j;
  j["metric"] = inspect::to_string(metric);
  j["rows"] = nlohmann::ordered_json::array();
  for (const GapRow& r : rows) {
    nlohmann::ordered_json row;
    row["aot_debug_handle"] = r.aot_handles;
    row["aot_ops"] = r.aot_ops;
    row["aot_intermediate_output"] = value_json(r.aot_output);
    row["runtime_ops"] = r.runtime_ops;
    row["runtime_debug_handle"] = r.runtime_handles;
    row["runtime_intermediate_output"] = value_json(r.runtime_output);
    nlohmann::ordered_json gaps = nlohmann::ordered_json::array();
    for (double g : r.gap) gaps.push_back(gap_json(g));
    row["gap"] = gaps;
    if (local) {
      const size_t k = j["rows"].size();
      nlohmann::ordered_json own = nullptr;
      if (k < local->size() && (*local)[k]) {
        own = nlohmann::ordered_json::array();
        for (double g : *(*local)[k]) own.push_back(gap_json(g));
      }
      row["local_gap"] = std::move(own);
    }
    row["stacktraces"] = traces_json(r);
    row["stats"] = stats_json(r);
    j["rows"].push_back(std::move(row));
  }
  return j;
}

Status check_gap_inputs(const inspect::Inspector& in, bool force) {
  ETSCOPE_ASSIGN_OR_RETURN(inspect::InputCheck check, inspect::check_run_inputs(in));
  using Outcome = inspect::InputCheck::Outcome;
  if (check.outcome == Outcome::kDifferent && !force) return Error(ErrorCode::kInvalidArgument, check.message + " (--force compares anyway)");
  if (check.outcome == Outcome::kDifferent) std::fprintf(stderr, "etscope: warning: %s (compared anyway: --force)\n", check.message.c_str());
  if (check.outcome == Outcome::kNotRecorded) std::fprintf(stderr, "etscope: warning: %s\n", check.message.c_str());
  return ok_status();
}

void render_first_divergence(const std::vector<GapRow>& rows, inspect::GapMetric metric, double threshold, std::ostream& out,
                             const inspect::Inspector* inspector) {
  const std::string test = std::string(inspect::to_string(metric)) + (metric == inspect::GapMetric::kSNR ? " < " : " > ") + gap_text(threshold);
  const std::optional<size_t> first = inspect::first_divergence(rows, metric, threshold);
  if (!first) {
    out << "first divergence (" << test << "): none of " << rows.size() << " operators\n";
    return;
  }
  out << "first divergence (" << test << "): ";
  render_row_place(rows, *first, out);
  out << ", gap " << gaps_text(rows[*first].gap) << "\n";
  render_row_module(rows[*first], inspector, out);
  render_row_traces(rows[*first], out);
}

void render_culprit(const std::vector<GapRow>& rows, const LocalGapColumn& local, inspect::GapMetric metric, double threshold,
                    std::ostream& out, const inspect::Inspector* inspector) {
  const std::string test = "local " + std::string(inspect::to_string(metric)) + (metric == inspect::GapMetric::kSNR ? " < " : " > ") +
                           gap_text(threshold);
  const std::optional<size_t> culprit = inspect::first_local_divergence(local, metric, threshold);
  const std::optional<size_t> first = inspect::first_divergence(rows, metric, threshold);
  const size_t with_local = static_cast<size_t>(std::count_if(local.begin(), local.end(), [](const auto& l) { return l.has_value(); }));
  if (with_local == 0) {
    out << "culprit (" << test << "): no row has a local gap (the forced run compared none of them)\n";
    return;
  }
  if (!culprit) {
    out << "culprit (" << test << "): none of " << with_local << " operators adds that error by itself";
    out << (first ? ": the divergence builds up from operators each under the threshold\n" : "\n");
    return;
  }
  out << "culprit (" << test << "): ";
  render_row_place(rows, *culprit, out);
  out << ", its own gap " << gaps_text(*local[*culprit]) << " (accumulated " << gaps_text(rows[*culprit].gap) << ")\n";
  if (first && *first != *culprit && *first < local.size()) {
    out << "  the first divergence (row " << *first + 1 << ") "
        << (local[*first] && inspect::gaps_pass(*local[*first], metric, threshold) ? "adds its own error too"
                                                                                  : "only inherits its error from the rows before it")
        << "\n";
  }
  render_row_module(rows[*culprit], inspector, out);
  render_row_traces(rows[*culprit], out);
}

void render_gaps_over_inputs(const std::vector<inspect::GapOverInputs>& rows, const std::vector<std::string>& inputs,
                             inspect::GapMetric metric, std::ostream& out) {
  out << "gap (" << inspect::to_string(metric) << ") over " << inputs.size() << " input sets (mean over the sets that compared the row; worst: "
      << (metric == inspect::GapMetric::kSNR ? "lowest" : "largest") << ")\n";
  for (size_t k = 0; k < inputs.size(); ++k) out << "  set " << k << ": " << inputs[k] << "\n";
  TextTable t;
  t.columns = {"runtime handles", "module: other op", "mean", "worst", "worst set"};
  for (size_t k = 0; k < inputs.size(); ++k) t.columns.push_back("set " + std::to_string(k));
  t.numeric.assign(t.columns.size(), true);
  t.numeric[0] = t.numeric[1] = false;
  for (const inspect::GapOverInputs& r : rows) {
    std::vector<std::optional<std::string>> row{handles_text(r.runtime_handles), r.aot_ops.empty() ? std::string() : r.aot_ops.front(),
                                                gap_text(r.mean), gap_text(r.worst), std::to_string(r.worst_input)};
    for (const auto& v : r.per_input) row.push_back(v ? std::optional<std::string>(gap_text(*v)) : std::nullopt);
    t.rows.push_back(std::move(row));
  }
  out << render_table(t, "table");
}

nlohmann::ordered_json gaps_over_inputs_json(const std::vector<inspect::GapOverInputs>& rows, const std::vector<std::string>& inputs,
                                             inspect::GapMetric metric) {
  using Json = nlohmann::ordered_json;
  auto number = [](double v) { return std::isfinite(v) ? Json(v) : Json(gap_text(v)); };
  Json out_rows = Json::array();
  for (const inspect::GapOverInputs& r : rows) {
    Json per = Json::array();
    for (const auto& v : r.per_input) per.push_back(v ? number(*v) : Json());
    out_rows.push_back(Json{{"runtime_handles", r.runtime_handles}, {"aot_ops", r.aot_ops}, {"mean", number(r.mean)},
                            {"worst", number(r.worst)}, {"worst_input", r.worst_input}, {"per_input", std::move(per)}});
  }
  return Json{{"metric", inspect::to_string(metric)}, {"inputs", inputs}, {"rows", std::move(out_rows)}};
}

}  // namespace etscope::cli
