// GapModel: the Numeric gaps view's data, computed once on the loading thread from an Inspector
// (ETDump + ETRecord + debug buffer) and the AOT intermediates: libinspect's numeric gap rows in
// all three metrics, each row joined to the instruction that produced it, and a cached detail
// (libinspect's gap_detail) of the row the user looks at.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "etscope/inspect/numeric_gap.h"
#include "model/instruction_ref.h"

namespace etscope::gui {

struct GapModelRow {
  std::string name;              ///< Runtime operator(s), e.g. "native_call_convolution.out".
  std::string aot_ops;           ///< AOT node names joined with ", ".
  std::string handles;           ///< "3" or "4,5".
  std::string aot_text, runtime_text;  ///< inspect::describe of the two values.
  InstructionRef instruction;    ///< The instruction that logged the runtime output, or invalid.
  std::string module;            ///< Innermost module path from the ETRecord, or "".
  /// The gap per metric (index = inspect::GapMetric); for sequence outputs the worst element
  /// (largest L1/MSE, smallest SNR). NaN when nothing was compared.
  std::array<double, 3> gap{};
  std::array<std::vector<double>, 3> elements;  ///< Every element's gap, per metric.
  /// The local gap per metric (inspect::local_gaps; worst element as `gap`), when the model has
  /// the local gaps' run and the row has one.
  std::array<std::optional<double>, 3> local{};
};

class GapModel {
 public:
  /// Needs the Inspector built with the ETRecord and debug buffer, and the AOT intermediates;
  /// both must outlive the model (rows view their bytes). Errors are libinspect's, one line.
  /// `forced`, when given, is the Inspector of the local gaps' run (`etscope debug --etdump`
  /// keeps it beside the run: inspect::local_run_paths): each row then has its local gap.
  static Result<GapModel> build(const inspect::Inspector& inspector, std::shared_ptr<const inspect::AotIntermediates> aot,
                                const inspect::Inspector* forced = nullptr);

  const std::vector<GapModelRow>& rows() const { return rows_; }
  /// libinspect's first_divergence for `metric` and `threshold`.
  std::optional<size_t> first_divergence(inspect::GapMetric metric, double threshold) const;
  bool passes(size_t row, inspect::GapMetric metric, double threshold) const;
  /// Whether the rows have local gaps (the model was built with the local gaps' run).
  bool has_local() const { return has_local_; }
  /// libinspect's first_local_divergence: the culprit, or nullopt.
  std::optional<size_t> culprit(inspect::GapMetric metric, double threshold) const;
  /// The first row produced by `ref`, or nullopt.
  std::optional<size_t> row_of(const InstructionRef& ref) const;
  /// Number of elements of row `row`'s output (1 unless it is a sequence).
  size_t elements(size_t row) const;

  /// The detail of element `element` of row `row`; cached for the last row asked.
  const Result<inspect::GapDetail>& detail(size_t row, size_t element) const;
  /// The two compared values of element `element` of row `row` (the AOT reference first).
  std::pair<const inspect::GapValue*, const inspect::GapValue*> values(size_t row, size_t element) const;

  /// libinspect's stats of element `element` of row `row` (max errors, cosine, worst channel,
  /// ULPs, exact matches, NaN/Inf), or nullptr.
  const inspect::GapStats* stats(size_t row, size_t element) const;

  /// Whether the run used the AOT intermediates' inputs (libinspect's check_run_inputs).
  const inspect::InputCheck& input_check() const { return input_check_; }
  const std::string& reference_graph() const { return reference_graph_; }

 private:
  std::shared_ptr<const inspect::AotIntermediates> aot_;
  /// calculate_numeric_gap's rows per metric (index = GapMetric); the same rows in the same order
  /// in each, only the gaps differ.
  std::array<std::vector<inspect::GapRow>, 3> by_metric_;
  std::array<inspect::LocalGaps, 3> local_;  ///< Per metric, per row.
  bool has_local_ = false;
  std::vector<GapModelRow> rows_;
  inspect::InputCheck input_check_;
  std::string reference_graph_;
  mutable std::optional<std::pair<size_t, size_t>> detail_key_;
  mutable Result<inspect::GapDetail> detail_ = Error(ErrorCode::kInvalidArgument, "no row");
};

}  // namespace etscope::gui
