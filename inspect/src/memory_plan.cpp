// MemoryPlan::build, in stages: collect planned tensors and check their placement, give each a
// lifetime and a role, group same-start tensors, find conflicts, then measure every arena.
#include "etscope/inspect/memory_plan.h"

#include <algorithm>
#include <map>
#include <numeric>
#include <tuple>

#include "etscope/core/checked.h"
#include "etscope/formats/op_signatures.h"
#include "etscope/formats/training.h"
#include "etscope/inspect/greedy_planner.h"
#include "etscope/inspect/program_description.h"

namespace etscope::inspect {
namespace {

constexpr uint64_t kPlannerAlignment = 16;
constexpr uint64_t kXnnpackPadding = 64;

// Byte count of the union of [begin, end) intervals.
uint64_t union_bytes(std::vector<std::pair<uint64_t, uint64_t>>& intervals) {
  std::sort(intervals.begin(), intervals.end());
  uint64_t total = 0, cur_begin = 0, cur_end = 0;
  bool open = false;
  for (const auto& [b, e] : intervals) {
    if (e <= b) continue;
    if (!open || b > cur_end) {
      if (open) total += cur_end - cur_begin;
      cur_begin = b;
      cur_end = e;
      open = true;
    } else {
      cur_end = std::max(cur_end, e);
    }
  }
  if (open) total += cur_end - cur_begin;
  return total;
}

std::string lifetime_text(const Lifetime& l) {
  return std::to_string(l.start) + ".." + std::to_string(l.end);
}

// True when instruction `in` reads value `v` (directly or as an item of a list it reads), as a
// kernel input, a move's source or a jump's condition. Delegate calls do not say which of their
// arguments they read, so they never count.
bool reads_before_writing(const ExecutionPlan& plan, const Instruction& in, int32_t v) {
  auto holds = [&](int32_t a) {
    if (a == v) return true;
    if (a < 0 || static_cast<size_t>(a) >= plan.values.size()) return false;
    const Value& value = plan.values[static_cast<size_t>(a)];
    const bool list = value.kind == ValueKind::kTensorList || value.kind == ValueKind::kOptionalTensorList;
    return list && std::find(value.tensor_list.begin(), value.tensor_list.end(), v) != value.tensor_list.end();
  };
  switch (in.kind) {
    case InstructionKind::kKernelCall: {
      const KernelArgs args = split_kernel_args(plan, in);
      return std::any_of(args.inputs.begin(), args.inputs.end(), holds);
    }
    case InstructionKind::kMoveCall: return holds(in.move_from);
    case InstructionKind::kJumpFalse: return in.cond_value == v;
    case InstructionKind::kDelegateCall:
    case InstructionKind::kFree: return false;
  }
  return false;
}

}  // namespace

const char* to_string(TensorRole role) {
  switch (role) {
    case TensorRole::kInput: return "input";
    case TensorRole::kWeight: return "weight";
    case TensorRole::kBuffer: return "buffer";
    case TensorRole::kGradient: return "gradient";
    case TensorRole::kOutput: return "output";
    case TensorRole::kActivation: return "activation";
  }
  return "activation";
}

Result<MemoryPlan> MemoryPlan::build(const Program& program, const ExecutionPlan& plan) {
  const bool belongs = std::any_of(program.plans.begin(), program.plans.end(),
                                   [&](const ExecutionPlan& p) { return &p == &plan; });
  if (!belongs) {
    return Error(ErrorCode::kInvalidArgument,
                 program.name() + ": method '" + plan.name + "' is not one of the program's plans");
  }
  MemoryPlan m;
  m.plan_name_ = plan.name;
  const ValueTimeline timeline = build_value_timeline(plan);
  m.instruction_count_ = timeline.instruction_count;
  m.step_labels_ = timeline.labels;
  const int64_t T = m.instruction_count_;
  const std::string what = "plan '" + plan.name + "'";

  // Roles need the positions of inputs and outputs, and the gradient span of a training plan.
  std::map<int32_t, size_t> input_pos, output_pos;
  for (size_t i = 0; i < plan.inputs.size(); ++i) input_pos.emplace(plan.inputs[i], i);
  for (size_t i = 0; i < plan.outputs.size(); ++i) output_pos.emplace(plan.outputs[i], i);
  const auto training = training_layout(program, plan.name);
  // Output positions [grad_begin, grad_end) are gradients; an empty range for inference plans.
  const size_t grad_begin = training ? training->gradients_begin : 0;
  const size_t grad_end = training ? training->parameters_begin : 0;

  const size_t arena_count = plan.arena_count();
  for (size_t v = 0; v < plan.values.size(); ++v) {
    const Value& value = plan.values[v];
    if (value.kind != ValueKind::kTensor || !value.tensor.allocation) continue;
    const TensorInfo& t = value.tensor;
    PlannedTensor pt;
    pt.value = static_cast<int32_t>(v);
    pt.dtype = t.dtype;
    pt.sizes = t.sizes;
    pt.dynamism = t.dynamism;
    pt.nbytes = t.nbytes;
    pt.reserved = round_up(t.nbytes, kPlannerAlignment);
    pt.memory_id = t.allocation->memory_id;
    pt.offset = t.allocation->offset;
    pt.data_kind = t.data_kind;
    pt.requires_grad = t.requires_grad;
    pt.fqn = t.fqn;
    pt.lifetime = timeline.lifetimes[v];
    pt.producer = timeline.producer[v];

    const std::string vwhat = what + " value " + std::to_string(v);
    if (pt.memory_id == 0 || pt.memory_id > arena_count) {
      m.problems_.push_back(vwhat + ": memory_id " + std::to_string(pt.memory_id) +
                            " is not a valid arena id (the plan has arenas 1.." + std::to_string(arena_count) + ")");
    } else {
      const int64_t size = plan.non_const_buffer_sizes[pt.memory_id];
      if (size < 0 || !checked::range_fits(pt.offset, pt.nbytes, static_cast<uint64_t>(size))) {
        m.problems_.push_back(vwhat + ": planned bytes [" + std::to_string(pt.offset) + ", +" +
                              std::to_string(pt.nbytes) + ") extend beyond arena " + std::to_string(pt.memory_id) +
                              " (" + std::to_string(size) + " bytes)");
      } else {
        pt.placed = true;
      }
    }

    const auto in = input_pos.find(pt.value);
    const auto out = output_pos.find(pt.value);
    const bool initialised =
        t.data_kind == TensorDataKind::kPlannedWithInit || t.data_kind == TensorDataKind::kExternalMutable;
    const std::string id = "%" + std::to_string(v);
    if (in != input_pos.end()) {
      pt.role = TensorRole::kInput;
      pt.name = id + " input " + std::to_string(in->second);
      pt.op_name = "input";
    } else if (initialised) {
      pt.role = (t.requires_grad || t.external) ? TensorRole::kWeight : TensorRole::kBuffer;
      pt.name = id + " " + (t.fqn.empty() ? std::string(to_string(pt.role)) : t.fqn);
      pt.op_name = to_string(pt.role);
    } else {
      if (out != output_pos.end()) {
        const size_t pos = out->second;
        const bool gradient = pos >= grad_begin && pos < grad_end;
        pt.role = gradient ? TensorRole::kGradient : TensorRole::kOutput;
      }
      if (pt.producer >= 0) {
        pt.op_name = timeline.labels[static_cast<size_t>(pt.producer)];
      } else if (!pt.lifetime.empty() && pt.lifetime.start >= 0 && pt.lifetime.start < T) {
        pt.op_name = timeline.labels[static_cast<size_t>(pt.lifetime.start)];
      } else {
        pt.op_name = to_string(pt.role);
      }
      pt.name = id + " " + pt.op_name;
    }

    if (t.dynamism == ShapeDynamism::kDynamicUnbound) {
      m.notes_.push_back(vwhat + ": dynamic-unbound tensor; its size here is the recorded shape");
    }
    if (pt.lifetime.empty()) {
      m.notes_.push_back(vwhat + ": planned, but no instruction uses it and it is no input or output");
    }
    m.tensors_.push_back(std::move(pt));
  }
  const auto bounded = std::count_if(m.tensors_.begin(), m.tensors_.end(), [](const PlannedTensor& pt) {
    return pt.dynamism == ShapeDynamism::kDynamicBound;
  });
  if (bounded > 0) {
    m.notes_.insert(m.notes_.begin(),
                    std::to_string(bounded) + (bounded == 1 ? " planned tensor has a bounded-dynamic shape"
                                                               : " planned tensors have bounded-dynamic shapes") +
                        " (<=): the plan (arena sizes, byte ranges, peaks) is for the upper "
                        "bounds; a run with smaller shapes uses the start of each slot");
  }

  // Views: written by nobody, at the start of a tensor written earlier. The most recent such
  // writer is the base; it lives as long as its views. Visit views by first use so a view of a
  // view widens the root as well.
  {
    std::map<std::pair<uint32_t, uint64_t>, std::vector<size_t>> slots;
    std::vector<size_t> candidates;
    for (size_t i = 0; i < m.tensors_.size(); ++i) {
      const PlannedTensor& t = m.tensors_[i];
      if (!t.placed) continue;
      slots[{t.memory_id, t.offset}].push_back(i);
      const bool has_content = t.role == TensorRole::kInput || t.role == TensorRole::kWeight ||
                               t.role == TensorRole::kBuffer || t.producer >= 0;
      if (!has_content && !t.lifetime.empty()) candidates.push_back(i);
    }
    std::stable_sort(candidates.begin(), candidates.end(), [&](size_t a, size_t b) {
      return m.tensors_[a].lifetime.start < m.tensors_[b].lifetime.start;
    });
    std::vector<int32_t> base_of(m.tensors_.size(), -1);
    for (size_t v : candidates) {
      PlannedTensor& view = m.tensors_[v];
      int64_t best = -1;
      for (size_t b : slots[{view.memory_id, view.offset}]) {
        const PlannedTensor& base = m.tensors_[b];
        if (b == v || base.lifetime.empty() || base.lifetime.start > view.lifetime.start) continue;
        if (base_of[b] < 0 && base.producer < 0 && base.role != TensorRole::kInput &&
            base.role != TensorRole::kWeight && base.role != TensorRole::kBuffer) {
          continue;  // Another tensor nobody writes and that is no view: no content to share.
        }
        if (best < 0 || base.lifetime.start > m.tensors_[static_cast<size_t>(best)].lifetime.start) {
          best = static_cast<int64_t>(b);
        }
      }
      if (best < 0) continue;
      size_t root = static_cast<size_t>(best);
      while (base_of[root] >= 0) root = static_cast<size_t>(base_of[root]);
      base_of[v] = static_cast<int32_t>(root);
      view.view_of = m.tensors_[root].value;
      view.op_name = "memory.view";
      view.name = "%" + std::to_string(view.value) + " view of %" + std::to_string(m.tensors_[root].value);
      m.tensors_[root].lifetime = m.tensors_[root].lifetime.merged(view.lifetime);
    }
  }

  // Mutable buffers without an initial value (ExecuTorch's KV caches): a planned tensor that is no
  // input and no view, and that its first instruction reads (index_put.out or update_cache.out
  // reading the cache; copy_ writes it back later, if at all), holds what the previous execution
  // left there. Buffers of either kind are state that lives across executions, so,
  // as in ExecuTorch's planner, they are live over the whole method: in every step's live bytes,
  // in the peak, and never space a better plan could reuse.
  size_t uninitialised_buffers = 0;
  for (PlannedTensor& t : m.tensors_) {
    if (t.role == TensorRole::kActivation && t.view_of < 0 && !t.lifetime.empty() &&
        t.lifetime.start >= 0 && t.lifetime.start < T &&
        reads_before_writing(plan, *timeline.instructions[static_cast<size_t>(t.lifetime.start)], t.value)) {
      t.role = TensorRole::kBuffer;
      t.op_name = to_string(t.role);
      t.name = "%" + std::to_string(t.value) + " " + (t.fqn.empty() ? std::string("mutable buffer") : t.fqn);
      ++uninitialised_buffers;
    }
    if (t.role == TensorRole::kBuffer) t.lifetime = t.lifetime.merged(Lifetime{-1, T});
  }
  if (uninitialised_buffers > 0) {
    m.notes_.push_back(std::to_string(uninitialised_buffers) +
                       (uninitialised_buffers == 1 ? " planned tensor is read before any instruction writes it"
                                                   : " planned tensors are read before any instruction writes them") +
                       ": mutable buffers (a KV cache) holding what the previous execution left, live over the "
                       "whole method");
  }

  // Same-start groups.
  std::map<std::pair<uint32_t, uint64_t>, std::vector<size_t>> by_start;
  for (size_t i = 0; i < m.tensors_.size(); ++i) {
    const PlannedTensor& t = m.tensors_[i];
    if (t.placed) by_start[{t.memory_id, t.offset}].push_back(i);
  }
  for (const auto& [key, members] : by_start) {
    if (members.size() < 2) continue;
    SharingGroup g;
    g.memory_id = key.first;
    g.offset = key.second;
    g.tensors = members;
    for (size_t i : members) g.aliases = g.aliases || m.tensors_[i].view_of >= 0;
    for (size_t a = 0; a < members.size() && !g.aliases; ++a) {
      for (size_t b = a + 1; b < members.size(); ++b) {
        if (m.tensors_[members[a]].lifetime.overlaps(m.tensors_[members[b]].lifetime)) {
          g.aliases = true;
          break;
        }
      }
    }
    for (size_t i : members) m.tensors_[i].group = static_cast<int32_t>(m.groups_.size());
    m.groups_.push_back(std::move(g));
  }

  // Conflicts: in each arena, tensors sorted by offset; only neighbours whose ranges reach each
  // other need comparing.
  std::vector<size_t> order;
  for (size_t i = 0; i < m.tensors_.size(); ++i) {
    if (m.tensors_[i].placed && m.tensors_[i].nbytes > 0) order.push_back(i);
  }
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    const PlannedTensor &x = m.tensors_[a], &y = m.tensors_[b];
    return std::tie(x.memory_id, x.offset, x.value) < std::tie(y.memory_id, y.offset, y.value);
  });
  for (size_t i = 0; i < order.size(); ++i) {
    const PlannedTensor& a = m.tensors_[order[i]];
    for (size_t j = i + 1; j < order.size(); ++j) {
      const PlannedTensor& b = m.tensors_[order[j]];
      if (b.memory_id != a.memory_id || b.offset >= a.end()) break;
      if (b.offset == a.offset) continue;  // Same storage: views, in-place results, reuse.
      if (!a.lifetime.overlaps(b.lifetime)) continue;
      Conflict c;
      c.first = order[i];
      c.second = order[j];
      c.memory_id = a.memory_id;
      c.overlap_begin = b.offset;
      c.overlap_end = std::min(a.end(), b.end());
      c.steps = Lifetime{std::max(a.lifetime.start, b.lifetime.start), std::min(a.lifetime.end, b.lifetime.end)};
      c.message = what + ": values " + std::to_string(a.value) + " and " + std::to_string(b.value) +
                  " overlap on bytes [" + std::to_string(c.overlap_begin) + ", " + std::to_string(c.overlap_end) +
                  ") of arena " + std::to_string(c.memory_id) + " while both are live (steps " +
                  lifetime_text(c.steps) + "; %" + std::to_string(a.value) + " [" + std::to_string(a.offset) + ", " +
                  std::to_string(a.end()) + ") live " + lifetime_text(a.lifetime) + ", %" + std::to_string(b.value) +
                  " [" + std::to_string(b.offset) + ", " + std::to_string(b.end()) + ") live " +
                  lifetime_text(b.lifetime) + ")";
      m.conflicts_.push_back(std::move(c));
    }
  }

  // Arenas.
  const size_t steps = static_cast<size_t>(T + 2);
  for (size_t k = 1; k <= arena_count; ++k) {
    Arena arena;
    arena.memory_id = static_cast<uint32_t>(k);
    arena.size = static_cast<uint64_t>(std::max<int64_t>(0, plan.non_const_buffer_sizes[k]));
    std::vector<std::vector<std::pair<uint64_t, uint64_t>>> reserved(steps), data(steps);
    std::vector<std::pair<uint64_t, uint64_t>> ever;
    std::vector<size_t> members;
    for (size_t i = 0; i < m.tensors_.size(); ++i) {
      const PlannedTensor& t = m.tensors_[i];
      if (!t.placed || t.memory_id != k) continue;
      ++arena.tensor_count;
      members.push_back(i);
      ever.emplace_back(t.offset, t.end());
      if (t.lifetime.empty()) continue;
      const uint64_t reserved_end = std::min(arena.size, t.offset + t.reserved);
      const int64_t first = std::max<int64_t>(-1, t.lifetime.start), last = std::min<int64_t>(T, t.lifetime.end);
      for (int64_t s = first; s <= last; ++s) {
        reserved[static_cast<size_t>(s + 1)].emplace_back(t.offset, reserved_end);
        data[static_cast<size_t>(s + 1)].emplace_back(t.offset, t.end());
      }
    }
    arena.live_bytes.resize(steps);
    arena.live_data_bytes.resize(steps);
    for (size_t s = 0; s < steps; ++s) {
      arena.live_bytes[s] = union_bytes(reserved[s]);
      arena.live_data_bytes[s] = union_bytes(data[s]);
      if (arena.live_bytes[s] > arena.peak_bytes) {
        arena.peak_bytes = arena.live_bytes[s];
        arena.peak_step = static_cast<int64_t>(s) - 1;
      }
      arena.peak_data_bytes = std::max(arena.peak_data_bytes, arena.live_data_bytes[s]);
    }
    arena.utilisation = arena.size == 0 ? 0.0 : static_cast<double>(arena.peak_bytes) / static_cast<double>(arena.size);
    const uint64_t covered = union_bytes(ever);
    arena.never_used_bytes = arena.size > covered ? arena.size - covered : 0;

    // The greedy bound: each alias set (same start, chained by overlapping lifetimes) is one spec
    // with the union of the members' lifetimes, as the planner sees one spec for a view and its
    // base. Specs are offered in order of first use, the closest we get to graph order.
    std::vector<size_t> live_members;
    for (size_t i : members) {
      if (!m.tensors_[i].lifetime.empty()) live_members.push_back(i);
    }
    std::sort(live_members.begin(), live_members.end(), [&](size_t a, size_t b) {
      const PlannedTensor &x = m.tensors_[a], &y = m.tensors_[b];
      return std::tie(x.memory_id, x.offset, x.lifetime.start, x.value) <
             std::tie(y.memory_id, y.offset, y.lifetime.start, y.value);
    });
    std::vector<std::pair<GreedyRequest, int64_t>> specs;  // request, ordering key
    for (size_t i = 0; i < live_members.size(); ++i) {
      const PlannedTensor& t = m.tensors_[live_members[i]];
      if (!specs.empty() && i > 0) {
        const PlannedTensor& prev = m.tensors_[live_members[i - 1]];
        GreedyRequest& last = specs.back().first;
        if (prev.offset == t.offset && last.lifetime.overlaps(t.lifetime)) {
          last.bytes = std::max(last.bytes, t.nbytes);
          last.lifetime = last.lifetime.merged(t.lifetime);
          continue;
        }
      }
      specs.push_back({GreedyRequest{t.nbytes, t.lifetime}, t.lifetime.start * 1'000'000'000LL + t.value});
    }
    std::stable_sort(specs.begin(), specs.end(), [](const auto& a, const auto& b) { return a.second < b.second; });
    std::vector<GreedyRequest> requests;
    for (const auto& s : specs) requests.push_back(s.first);
    arena.greedy_bytes = GreedyPlanner::plan(requests, kPlannerAlignment).total_bytes;
    // The planner pads every arena of a graph holding an XNNPACK delegate by 64 bytes.
    const bool xnnpack = std::any_of(plan.delegates.begin(), plan.delegates.end(),
                                     [](const Delegate& d) { return d.id == "XnnpackBackend"; });
    if (xnnpack) arena.greedy_bytes += kXnnpackPadding;
    m.arenas_.push_back(std::move(arena));
  }
  return m;
}

const PlannedTensor* MemoryPlan::find(int32_t value) const {
  auto it = std::lower_bound(tensors_.begin(), tensors_.end(), value,
                             [](const PlannedTensor& t, int32_t v) { return t.value < v; });
  return it != tensors_.end() && it->value == value ? &*it : nullptr;
}

std::vector<size_t> MemoryPlan::largest(size_t n) const {
  std::vector<size_t> order(tensors_.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return tensors_[a].nbytes > tensors_[b].nbytes; });
  if (order.size() > n) order.resize(n);
  return order;
}

std::vector<size_t> MemoryPlan::live_at(int64_t step) const {
  std::vector<size_t> out;
  for (size_t i = 0; i < tensors_.size(); ++i) {
    if (tensors_[i].placed && tensors_[i].lifetime.contains(step)) out.push_back(i);
  }
  std::stable_sort(out.begin(), out.end(), [&](size_t a, size_t b) {
    const PlannedTensor &x = tensors_[a], &y = tensors_[b];
    return std::tie(x.memory_id, x.offset) < std::tie(y.memory_id, y.offset);
  });
  return out;
}

uint64_t declared_arena_bytes(const ExecutionPlan& plan) {
  uint64_t total = 0;
  for (size_t k = 1; k < plan.non_const_buffer_sizes.size(); ++k) {
    const int64_t size = plan.non_const_buffer_sizes[k];
    if (size < 0) return UINT64_MAX;
    total = checked::add(total, static_cast<uint64_t>(size)).value_or(UINT64_MAX);
  }
  return total;
}

std::vector<std::string> declared_memory_warnings(const Program& program, uint64_t budget) {
  std::vector<std::string> out;
  for (const ExecutionPlan& plan : program.plans) {
    const uint64_t need = declared_arena_bytes(plan);
    if (need <= budget) continue;
    out.push_back("method '" + plan.name + "' declares " +
                  (need == UINT64_MAX ? std::string("2^64 bytes or more")
                                       : std::to_string(need) + " bytes (" + bytes_text(need) + ")") +
                  " of planned memory, more than the " + bytes_text(budget) +
                  " etscope run may allocate: run will refuse it (see --max-memory)");
  }
  return out;
}

StateSummary state_summary(const MemoryPlan& plan, const Program& program) {
  StateSummary s;
  if (const ExecutionPlan* m = program.find_plan("get_max_seq_len"); m != nullptr && m->outputs.size() == 1) {
    const int32_t out = m->outputs.front();
    if (out >= 0 && static_cast<size_t>(out) < m->values.size() && m->values[static_cast<size_t>(out)].kind == ValueKind::kInt &&
        !m->values[static_cast<size_t>(out)].written_at_run_time && m->values[static_cast<size_t>(out)].int_value > 0) {
      s.context_len = m->values[static_cast<size_t>(out)].int_value;
    }
  }
  for (const PlannedTensor& t : plan.tensors()) {
    if (t.role != TensorRole::kBuffer) continue;
    ++s.buffers;
    s.bytes += t.nbytes;
    if (s.context_len > 0 && std::find(t.sizes.begin(), t.sizes.end(), s.context_len) != t.sizes.end()) {
      ++s.kv_buffers;
      s.kv_bytes += t.nbytes;
    }
  }
  if (s.context_len > 0 && s.kv_buffers > 0) s.kv_bytes_per_token = static_cast<double>(s.kv_bytes) / static_cast<double>(s.context_len);
  return s;
}

}  // namespace etscope::inspect
