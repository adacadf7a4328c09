#include "model/gap_model.h"

#include <cmath>
#include <limits>

#include "etscope/inspect/event_index.h"

namespace etscope::gui {
namespace {

std::string join(const std::vector<std::string>& parts, const char* sep) {
  std::string out;
  for (const std::string& p : parts) out += (out.empty() ? "" : sep) + p;
  return out;
}

std::string join_handles(const std::vector<int64_t>& handles) {
  std::string out;
  for (int64_t h : handles) out += (out.empty() ? "" : ",") + std::to_string(h);
  return out;
}

// The worst of a row's element gaps: the largest L1/MSE, the smallest SNR; NaN when none compared.
double worst(const std::vector<double>& gaps, inspect::GapMetric metric) {
  double out = std::numeric_limits<double>::quiet_NaN();
  for (double g : gaps) {
    if (std::isnan(g)) continue;
    if (std::isnan(out) || (metric == inspect::GapMetric::kSNR ? g < out : g > out)) out = g;
  }
  return out;
}

}  // namespace

Result<GapModel> GapModel::build(const inspect::Inspector& inspector, std::shared_ptr<const inspect::AotIntermediates> aot,
                                 const inspect::Inspector* forced) {
  GapModel m;
  m.aot_ = std::move(aot);
  m.reference_graph_ = m.aot_->reference_graph;
  for (int k = 0; k < 3; ++k) {
    const auto metric = static_cast<inspect::GapMetric>(k);
    ETSCOPE_ASSIGN_OR_RETURN(m.by_metric_[k], inspect::calculate_numeric_gap(inspector, *m.aot_, metric));
    if (forced != nullptr) {
      ETSCOPE_ASSIGN_OR_RETURN(std::vector<inspect::GapRow> forced_rows, inspect::calculate_numeric_gap(*forced, *m.aot_, metric));
      m.local_[k] = inspect::local_gaps(m.by_metric_[k], forced_rows);
    }
  }
  m.has_local_ = forced != nullptr;
  const auto& rows = m.by_metric_[0];
  for (int k = 1; k < 3; ++k) {
    if (m.by_metric_[k].size() != rows.size()) return Error(ErrorCode::kInternal, "numeric gap rows differ between metrics");
  }
  for (size_t i = 0; i < rows.size(); ++i) {
    const inspect::GapRow& r = rows[i];
    GapModelRow row;
    row.name = join(r.runtime_ops, ", ");
    row.aot_ops = join(r.aot_ops, ", ");
    row.handles = join_handles(r.aot_handles);
    row.aot_text = inspect::describe(r.aot_output);
    row.runtime_text = inspect::describe(r.runtime_output);
    // The event that logged the row: the instruction the program view and the timeline select.
    const inspect::Event* best = inspect::gap_row_event(inspector, r);
    if (best != nullptr) {
      row.instruction = {best->chain, best->instruction_id};
      row.module = inspect::innermost_module_text(*best);
    }
    for (int k = 0; k < 3; ++k) {
      row.elements[k] = m.by_metric_[k][i].gap;
      row.gap[k] = worst(row.elements[k], static_cast<inspect::GapMetric>(k));
      if (i < m.local_[k].size() && m.local_[k][i]) row.local[k] = worst(*m.local_[k][i], static_cast<inspect::GapMetric>(k));
    }
    m.rows_.push_back(std::move(row));
  }
  auto check = inspect::check_run_inputs(inspector);
  if (check.ok()) {
    m.input_check_ = std::move(check).value();
  } else {
    m.input_check_.outcome = inspect::InputCheck::Outcome::kNotRecorded;
    m.input_check_.message = check.error().message();
  }
  return m;
}

std::optional<size_t> GapModel::first_divergence(inspect::GapMetric metric, double threshold) const {
  return inspect::first_divergence(by_metric_[static_cast<int>(metric)], metric, threshold);
}

bool GapModel::passes(size_t row, inspect::GapMetric metric, double threshold) const {
  return row < rows_.size() && inspect::gap_passes(by_metric_[static_cast<int>(metric)][row], metric, threshold);
}

std::optional<size_t> GapModel::culprit(inspect::GapMetric metric, double threshold) const {
  if (!has_local_) return std::nullopt;
  return inspect::first_local_divergence(local_[static_cast<int>(metric)], metric, threshold);
}

std::optional<size_t> GapModel::row_of(const InstructionRef& ref) const {
  if (!ref.valid()) return std::nullopt;
  for (size_t i = 0; i < rows_.size(); ++i) {
    if (rows_[i].instruction == ref) return i;
  }
  return std::nullopt;
}

size_t GapModel::elements(size_t row) const { return row < rows_.size() ? std::max<size_t>(1, rows_[row].elements[0].size()) : 0; }

const inspect::GapStats* GapModel::stats(size_t row, size_t element) const {
  if (row >= rows_.size()) return nullptr;
  const std::vector<inspect::GapStats>& all = by_metric_[0][row].stats;
  return element < all.size() ? &all[element] : nullptr;
}

std::pair<const inspect::GapValue*, const inspect::GapValue*> GapModel::values(size_t row, size_t element) const {
  if (row >= rows_.size()) return {nullptr, nullptr};
  const inspect::GapRow& r = by_metric_[0][row];
  const inspect::GapValue* a = &r.aot_output;
  const inspect::GapValue* b = &r.runtime_output;
  if (a->is_list() && b->is_list()) {
    if (element >= a->items.size() || element >= b->items.size()) return {nullptr, nullptr};
    return {&a->items[element], &b->items[element]};
  }
  return {a, b};
}

const Result<inspect::GapDetail>& GapModel::detail(size_t row, size_t element) const {
  const std::pair<size_t, size_t> key{row, element};
  if (detail_key_ == key) return detail_;
  detail_key_ = key;
  auto [a, b] = values(row, element);
  if (a == nullptr) {
    detail_ = Error(ErrorCode::kInvalidArgument, "no such row or element");
  } else {
    detail_ = inspect::gap_detail(*a, *b);
  }
  return detail_;
}

}  // namespace etscope::gui
