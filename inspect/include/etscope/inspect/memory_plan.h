// MemoryPlan: the memory arenas of one execution plan, reconstructed from the .pte alone.
//
// For every planned tensor (a Tensor value with allocation info) it records the arena, byte
// range, lifetime in instruction steps (see lifetime.h) and role; for every arena the live bytes
// at each step, the peak, the bytes no tensor ever touches, and what ExecuTorch's greedy
// algorithm would need over the same lifetimes. It also finds conflicts: two tensors in the same
// arena whose bytes overlap while both are live, which means the plan is broken.
//
// Same storage. Tensors that start at the same (memory_id, offset) are treated as one storage:
// ExecuTorch gives views and in-place results the base tensor's offset, so such tensors may be
// live together legitimately and are never reported as conflicts. Same-start tensors whose
// lifetimes overlap are aliases; those whose lifetimes are disjoint are reuse of the slot. Both
// are listed in sharing_groups(). Tensors that overlap only partially, or start at different
// offsets, must not be live at the same step. A tensor no instruction writes, sharing the start
// of one written before it, is a view of it (PlannedTensor::view_of): the base stays live for as
// long as its views are, as ExecuTorch's planner keeps a view's base alive.
//
// Steps run from -1 (before the first instruction; inputs and initialised tensors are live) to
// T = instruction_count() (after the last; outputs are live). Per-step arrays are indexed by
// step + 1.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "etscope/formats/program.h"
#include "etscope/core/result.h"
#include "etscope/inspect/lifetime.h"

namespace etscope::inspect {

/// What a planned tensor is for; the GUI colours by it.
enum class TensorRole : uint8_t {
  kInput,       ///< A method input.
  kWeight,      ///< Planned with an initial value and trainable (requires_grad) or from a .ptd.
  /// A mutable buffer: state that lives across executions (a KV cache, batch norm's running
  /// statistics). Planned with an initial value and not trainable, or, with no initial value,
  /// read by an instruction before any writes it and no view of another tensor. Live over the
  /// whole method (steps -1..T), as ExecuTorch's planner keeps mutable buffers.
  kBuffer,
  kGradient,    ///< A training gradient output (between the __et_training_*_index markers).
  kOutput,      ///< Another method output.
  kActivation,  ///< Everything else: intermediate results.
};

/// "input", "weight", "buffer", "gradient", "output", "activation".
const char* to_string(TensorRole role);

struct PlannedTensor {
  int32_t value = -1;            ///< Value index in the plan.
  ScalarType dtype = ScalarType::kFloat;
  std::vector<int32_t> sizes;
  /// kDynamicBound: sizes (and nbytes, the slot) are the upper bound a run may use a prefix of.
  ShapeDynamism dynamism = ShapeDynamism::kStatic;
  uint64_t nbytes = 0;           ///< numel × element size.
  uint64_t reserved = 0;         ///< nbytes rounded up to 16, what the planner set aside.
  uint32_t memory_id = 0;        ///< 1-based arena id, as in the file.
  uint64_t offset = 0;           ///< Start of the bytes in the arena.
  bool placed = false;           ///< memory_id names an arena and [offset, +nbytes) fits in it.
  Lifetime lifetime;             ///< Empty when no instruction uses it and it is no input/output.
  TensorRole role = TensorRole::kActivation;
  TensorDataKind data_kind = TensorDataKind::kPlanned;
  bool requires_grad = false;
  std::string fqn;               ///< Fully-qualified name when the file records one.
  int64_t producer = -1;         ///< Step that writes it first, -1 if none.
  std::string name;              ///< "%12 aten::convolution.out", "input 0", "%0 net.linear.weight".
  std::string op_name;           ///< Producing operator, or "input", "weight", ...
  int32_t group = -1;            ///< Index into sharing_groups(), or -1.
  /// Value index of the tensor this one is a view of, or -1. A view is a planned tensor that no
  /// instruction writes and that is no input or initialised tensor, placed at the start of a
  /// tensor written earlier (ExecuTorch's memory.view emits no instruction). The base's
  /// lifetime is widened to cover its views.
  int32_t view_of = -1;

  uint64_t end() const { return offset + nbytes; }
};

struct Arena {
  uint32_t memory_id = 0;        ///< 1-based.
  uint64_t size = 0;             ///< From non_const_buffer_sizes.
  size_t tensor_count = 0;       ///< Placed tensors in this arena.
  /// Per step (index step + 1): bytes covered by live tensors, counting each tensor's 16-byte
  /// reservation and shared bytes once.
  std::vector<uint64_t> live_bytes;
  std::vector<uint64_t> live_data_bytes;  ///< The same over unaligned tensor bytes.
  uint64_t peak_bytes = 0;       ///< max(live_bytes).
  int64_t peak_step = -1;        ///< First step reaching the peak.
  uint64_t peak_data_bytes = 0;  ///< max(live_data_bytes).
  double utilisation = 0.0;      ///< peak_bytes / size (0 for an empty arena).
  uint64_t never_used_bytes = 0; ///< Bytes of the arena no planned tensor ever covers.
  /// What ExecuTorch's greedy algorithm needs for these lifetimes, plus the planner's 64 bytes
  /// of padding when the plan calls an XnnpackBackend delegate.
  uint64_t greedy_bytes = 0;
  /// size - greedy_bytes when positive: the most a better plan could save.
  uint64_t potential_saving() const { return size > greedy_bytes ? size - greedy_bytes : 0; }
};

/// Tensors starting at the same (memory_id, offset).
struct SharingGroup {
  uint32_t memory_id = 0;
  uint64_t offset = 0;
  std::vector<size_t> tensors;   ///< Indices into tensors(), by value index.
  bool aliases = false;          ///< Some members are live at the same step (views, in-place).
};

/// Two tensors whose bytes overlap while both are live, without being the same storage.
struct Conflict {
  size_t first = 0;              ///< Index into tensors().
  size_t second = 0;
  uint32_t memory_id = 0;
  uint64_t overlap_begin = 0;    ///< Overlapping byte range [begin, end).
  uint64_t overlap_end = 0;
  Lifetime steps;                ///< Steps where both are live.
  std::string message;           ///< One line naming both values, the bytes and the steps.
};

class MemoryPlan {
 public:
  /// Analyses `plan`, which must belong to `program`. Neither needs to outlive the result.
  /// Bad allocation info never fails the build: a tensor whose memory_id names no arena or whose
  /// bytes leave its arena is kept with placed = false and described in problems(); it takes no
  /// part in arena statistics or conflict checks. Fails only with kInvalidArgument when the
  /// plan is not one of the program's.
  static Result<MemoryPlan> build(const Program& program, const ExecutionPlan& plan);

  const std::string& plan_name() const { return plan_name_; }
  /// T. Steps run -1..T.
  int64_t instruction_count() const { return instruction_count_; }
  /// Per instruction step 0..T-1: what runs there ("aten::add.out", "delegate X", ...).
  const std::vector<std::string>& step_labels() const { return step_labels_; }

  const std::vector<Arena>& arenas() const { return arenas_; }
  /// Planned tensors in value order.
  const std::vector<PlannedTensor>& tensors() const { return tensors_; }
  const std::vector<SharingGroup>& sharing_groups() const { return groups_; }
  const std::vector<Conflict>& conflicts() const { return conflicts_; }
  /// Bad allocation info, one line each, worded as PteReader words Program::problems.
  const std::vector<std::string>& problems() const { return problems_; }
  /// Observations that are not errors (planned tensors nothing uses, dynamic-unbound tensors).
  const std::vector<std::string>& notes() const { return notes_; }

  /// The tensor of value `value`, or nullptr if that value is not a planned tensor.
  const PlannedTensor* find(int32_t value) const;
  /// Indices into tensors() of the `n` largest, by size then value index.
  std::vector<size_t> largest(size_t n) const;
  /// Indices into tensors() of the placed tensors live at `step`, by offset.
  std::vector<size_t> live_at(int64_t step) const;

 private:
  std::string plan_name_;
  int64_t instruction_count_ = 0;
  std::vector<std::string> step_labels_;
  std::vector<Arena> arenas_;
  std::vector<PlannedTensor> tensors_;
  std::vector<SharingGroup> groups_;
  std::vector<Conflict> conflicts_;
  std::vector<std::string> problems_;
  std::vector<std::string> notes_;
};

/// Bytes a method's planned arenas declare together (saturating at UINT64_MAX; a negative size
/// counts as UINT64_MAX, since no runtime can allocate it).
uint64_t declared_arena_bytes(const ExecutionPlan& plan);

/// One line per method whose planned arenas together declare more than `budget` bytes (what
/// `etscope run` may allocate: the machine's memory unless --max-memory says otherwise), saying
/// that run will refuse it. `pte` and `memory` print these as warnings; empty when all fit.
std::vector<std::string> declared_memory_warnings(const Program& program, uint64_t budget);

/// State that lives across executions: the plan's mutable buffers (an LLM's KV caches, a
/// training program's running statistics), which `memory` counts in the peak and never as waste.
struct StateSummary {
  size_t buffers = 0;
  uint64_t bytes = 0;
  /// The program's context length: the Int its constant method get_max_seq_len returns (an
  /// export of ExecuTorch's LLM exporter), 0 when it has none.
  int64_t context_len = 0;
  /// Buffers with a dimension of context_len (the KV caches: [batch, context, heads, head_dim]),
  /// their bytes, and those bytes per token of context (kv_bytes / context_len).
  size_t kv_buffers = 0;
  uint64_t kv_bytes = 0;
  double kv_bytes_per_token = 0;
};

/// The state of `plan` (built from `program`).
StateSummary state_summary(const MemoryPlan& plan, const Program& program);

}  // namespace etscope::inspect
