// MemoryModel: the arena picture of one plan (x = byte offset, y = instruction step), laid out
// in unit coordinates so a view only scales it to pixels. Built from inspect::MemoryPlan, the
// analysis `etscope memory --svg` draws, so both pictures agree.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "etscope/formats/program.h"
#include "etscope/core/result.h"
#include "etscope/inspect/memory_plan.h"

namespace etscope::gui {

/// One planned tensor as a rectangle: bytes [begin, end) of an arena, live from first_step to
/// last_step inclusive (steps run -1 .. T).
struct MemoryRect {
  uint32_t tensor = 0;       ///< Index into MemoryPlan::tensors().
  uint32_t column = 0;       ///< Index into MemoryModel::columns().
  uint64_t begin = 0;
  uint64_t end = 0;
  int64_t first_step = 0;
  int64_t last_step = 0;
  inspect::TensorRole role = inspect::TensorRole::kActivation;
  bool conflict = false;     ///< Overlaps another tensor while both are live (a broken plan).
};

/// One arena, drawn as a column of the plot.
struct ArenaColumn {
  uint32_t arena = 0;        ///< Index into MemoryPlan::arenas() (its live bytes per step).
  uint32_t memory_id = 0;
  uint64_t size = 0;
  double x0 = 0, x1 = 1;     ///< Horizontal extent as a fraction of the plot width.
  uint64_t peak_bytes = 0;
  int64_t peak_step = -1;
  double utilisation = 0;
  std::vector<uint32_t> rects;  ///< Indices into MemoryModel::rects(), by begin offset.
};

class MemoryModel {
 public:
  /// Analyses plan `plan_index` of `program` (neither needs to outlive the model). Fails only
  /// when MemoryPlan::build does.
  static Result<MemoryModel> build(const Program& program, size_t plan_index);

  const inspect::MemoryPlan& plan() const { return plan_; }
  const std::vector<ArenaColumn>& columns() const { return columns_; }
  const std::vector<MemoryRect>& rects() const { return rects_; }
  /// Steps shown run from -1 (inputs) to instruction_count() (outputs).
  int64_t step_count() const { return plan_.instruction_count() + 2; }

  /// The rectangle of `column` covering byte offset `byte` at `step`, or -1. When several do
  /// (views sharing their base's bytes), the smallest wins: it is the one drawn on top. `slack`
  /// widens every tensor by that many bytes on both sides (a thin tensor is drawn wider than it
  /// is, and the mouse should find it where it is drawn).
  int64_t hit(size_t column, double byte, int64_t step, double slack = 0) const;
  /// Every rectangle, widest first: drawn in this order, thin tensors land on top of wide ones.
  const std::vector<uint32_t>& draw_order() const { return draw_order_; }

  /// Tooltip text of a rectangle: name, value id, role, dtype and shape, bytes, arena range,
  /// lifetime.
  std::string describe(size_t rect) const;

  /// Rectangles of the tensors instruction `step` reads or writes.
  const std::vector<uint32_t>& rects_at_step(int64_t step) const;

  /// Planned tensors of each role, indexed by TensorRole.
  const std::vector<size_t>& role_counts() const { return role_counts_; }

 private:
  explicit MemoryModel(inspect::MemoryPlan plan) : plan_(std::move(plan)) {}
  inspect::MemoryPlan plan_;
  std::vector<ArenaColumn> columns_;
  std::vector<uint32_t> draw_order_;
  std::vector<MemoryRect> rects_;
  std::vector<std::vector<uint32_t>> step_rects_;
  std::vector<size_t> role_counts_;
};

}  // namespace etscope::gui
