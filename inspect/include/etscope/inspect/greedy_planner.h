// GreedyPlanner: ExecuTorch's default memory-planning algorithm (semantics.md §5.1), re-run over
// the lifetimes etscope reconstructs from a .pte, to bound what a better plan could save.
//
// Specs are sorted by allocated size (rounded up to `alignment`), largest first, ties in input
// order. Each goes into the first shared object whose allocations are all disjoint from it in
// time, at offset 0; failing that, into the first object where the highest end offset among the
// time-overlapping allocations plus its size still fits the object; failing that, into a new
// object of its size. Objects are laid out back to back, so the arena needs their summed sizes.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "etscope/inspect/lifetime.h"

namespace etscope::inspect {

/// One tensor (or one group of tensors sharing storage) to place.
struct GreedyRequest {
  uint64_t bytes = 0;  ///< Unaligned size; the planner rounds it up.
  Lifetime lifetime;   ///< Must not be empty.
};

struct GreedyPlan {
  std::vector<uint64_t> offsets;       ///< Per request, in input order.
  std::vector<uint64_t> object_sizes;  ///< Shared objects in creation order.
  uint64_t total_bytes = 0;            ///< Arena size the plan needs (no backend padding).
};

/// Rounds `bytes` up to a multiple of `alignment` (which must be a power of two or 1).
uint64_t round_up(uint64_t bytes, uint64_t alignment);

class GreedyPlanner {
 public:
  /// Places every request; `alignment` is ExecuTorch's default of 16 unless told otherwise.
  /// Never fails. Requests with empty lifetimes are placed at offset 0 of the first object and
  /// need no space of their own.
  static GreedyPlan plan(std::span<const GreedyRequest> requests, uint64_t alignment = 16);
};

}  // namespace etscope::inspect
