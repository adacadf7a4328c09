// Lifetime and ValueTimeline: when each value of an execution plan is live, in instruction steps.
//
// A .pte has no FX graph, so lifetimes are measured in instructions (semantics.md §5.3). All
// chains are flattened in order; step t is the t-th instruction. A value's lifetime is the
// inclusive range [first use, last use], where a use is any appearance as a KernelCall or
// DelegateCall argument (items of TensorList and OptionalTensorList arguments included), as either
// side of a MoveCall, or as a JumpFalseCall condition. A FreeCall is the value's last use.
// Following ExecuTorch's planner (§5.1), placeholders start at the beginning: method inputs and
// tensors with an initial value (trainable weights, mutable buffers) start at step -1, and method
// outputs stay live until step T, the instruction count.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "etscope/formats/program.h"

namespace etscope::inspect {

/// An inclusive range of instruction steps. Step -1 is "before the first instruction" (inputs)
/// and step T "after the last" (outputs). Empty when end < start.
struct Lifetime {
  int64_t start = 0;
  int64_t end = -1;

  bool empty() const { return end < start; }
  bool contains(int64_t step) const { return start <= step && step <= end; }
  /// True when both are non-empty and share at least one step (the planner's overlap test).
  bool overlaps(const Lifetime& other) const {
    return !empty() && !other.empty() && !(end < other.start || other.end < start);
  }
  /// Widens the range to include `step`.
  void extend(int64_t step) {
    if (empty()) {
      start = end = step;
    } else {
      start = std::min(start, step);
      end = std::max(end, step);
    }
  }
  /// The smallest range covering both.
  Lifetime merged(const Lifetime& other) const {
    if (empty()) return other;
    if (other.empty()) return *this;
    return Lifetime{std::min(start, other.start), std::max(end, other.end)};
  }
};

/// Per-value lifetimes and per-step labels of one plan.
struct ValueTimeline {
  int64_t instruction_count = 0;         ///< T: steps run -1..T.
  std::vector<Lifetime> lifetimes;       ///< Per value; empty when nothing uses the value.
  /// Per value: the step of the first KernelCall that writes it (an out argument), else the
  /// step of the first DelegateCall using it, else -1.
  std::vector<int64_t> producer;
  std::vector<const Instruction*> instructions;  ///< Flattened; borrowed from the plan.
  std::vector<std::string> labels;       ///< Per step: "aten::add.out", "delegate XnnpackBackend", ...
};

/// Computes the timeline of `plan`. The plan must outlive the result (it borrows instructions).
/// Never fails: the reader has range-checked every value index an instruction holds.
ValueTimeline build_value_timeline(const ExecutionPlan& plan);

}  // namespace etscope::inspect
