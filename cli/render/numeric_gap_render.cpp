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

std::string compact(const nlohmann::ordered_json& j) { return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace); }

}  // namespace

void render_gap_table(const std::vector<GapRow>& rows, inspect::GapMetric metric, std::ostream& out) {
  const std::vector<std::string> headers{"aot handles", "aot ops", "runtime ops", "runtime handles", "shape",
                                         std::string("gap (") + inspect::to_string(metric) + ")"};
  std::vector<std::vector<std::string>> cells;
  for (const GapRow& r : rows) {
    std::string ops;
    for (size_t i = 0; i < r.aot_ops.size(); ++i) ops += (i ? ", " : "") + r.aot_ops[i];
    std::string rt;
    for (size_t i = 0; i < r.runtime_ops.size(); ++i) rt += (i ? ", " : "") + r.runtime_ops[i];
    std::string shape = inspect::describe(r.aot_output);
    if (const std::string other = inspect::describe(r.runtime_output); other != shape) shape += " vs " + other;
    cells.push_back({handles_text(r.aot_handles), ops, rt, handles_text(r.runtime_handles), shape, gaps_text(r.gap)});
  }
  std::vector<size_t> width(headers.size());
  for (size_t c = 0; c < headers.size(); ++c) width[c] = headers[c].size();
  for (const auto& row : cells)
    for (size_t c = 0; c < row.size(); ++c) width[c] = std::max(width[c], row[c].size());
  auto line = [&](const std::vector<std::string>& row) {
    std::string s = " ";
    for (size_t c = 0; c < row.size(); ++c) {
      const bool right = c + 1 == row.size();
      const std::string pad(width[c] - row[c].size(), ' ');
      s += right ? pad + row[c] : row[c] + pad;
      if (c + 1 < row.size()) s += "  ";
    }
    while (!s.empty() && s.back() == ' ') s.pop_back();
    out << s << "\n";
  };
  out << "numeric gap (" << inspect::to_string(metric) << "), AOT reference vs runtime: " << rows.size()
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
                           "runtime_intermediate_output", "gap", "stacktraces"};
  for (size_t i = 0; i < 8; ++i) out << (i ? std::string(1, sep) : "") << headers[i];
  out << "\n";
  for (const GapRow& r : rows) {
    nlohmann::ordered_json gaps = nlohmann::ordered_json::array();
    for (double g : r.gap) gaps.push_back(gap_json(g));
    const std::string fields[] = {compact(r.aot_handles), compact(r.aot_ops), inspect::describe(r.aot_output), compact(r.runtime_ops),
                                  compact(r.runtime_handles), inspect::describe(r.runtime_output), compact(gaps), compact(traces_json(r))};
    for (size_t i = 0; i < 8; ++i) out << (i ? std::string(1, sep) : "") << delimited_cell(fields[i], sep);
    out << "\n";
  }
}

nlohmann::ordered_json gap_json(const std::vector<GapRow>& rows, inspect::GapMetric metric) {
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
    row["stacktraces"] = traces_json(r);
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

void render_first_divergence(const std::vector<GapRow>& rows, inspect::GapMetric metric, double threshold, std::ostream& out) {
  const std::string test = std::string(inspect::to_string(metric)) + (metric == inspect::GapMetric::kSNR ? " < " : " > ") + gap_text(threshold);
  const std::optional<size_t> first = inspect::first_divergence(rows, metric, threshold);
  if (!first) {
    out << "first divergence (" << test << "): none of " << rows.size() << " operators\n";
    return;
  }
  const GapRow& r = rows[*first];
  std::string ops;
  for (size_t i = 0; i < r.aot_ops.size(); ++i) ops += (i ? ", " : "") + r.aot_ops[i];
  std::string rt;
  for (size_t i = 0; i < r.runtime_ops.size(); ++i) rt += (i ? ", " : "") + r.runtime_ops[i];
  out << "first divergence (" << test << "): row " << *first + 1 << " of " << rows.size() << ", aot handles "
      << handles_text(r.aot_handles) << " (" << ops << "), runtime " << rt << ", gap " << gaps_text(r.gap) << "\n";
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

}  // namespace etscope::cli
