// What every rule reads, prepared once per analyse(): the plan as a dataflow graph (who writes
// and who reads each value), its memory plan, and the profile's per-instruction cost.
// Private to the findings library.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "etscope/findings/findings.h"
#include "etscope/findings/findings_text.h"
#include "etscope/inspect/memory_plan.h"
#include "etscope/inspect/program_graph.h"

namespace etscope::findings {

/// One kernel or delegate call of the plan, in plan order.
struct Call {
  int32_t chain = 0, instruction = 0;
  size_t step = 0;          ///< Flattened instruction step.
  bool delegate = false;
  std::string op;           ///< "aten::mm.out", or the delegate's backend id.
  std::vector<int32_t> inputs;   ///< Tensor values read (lists expanded), in argument order.
  std::vector<int32_t> outputs;  ///< Tensor values written.
  std::vector<int32_t> scalars;  ///< Non-tensor argument values (before the outputs), in order.
  bool writes_inputs = false;    ///< Writes one of its inputs in place (a KV cache update).
};

class Context {
 public:
  static Result<Context> build(const Inputs& inputs);

  const Inputs& inputs() const { return inputs_; }
  const Program* program() const { return inputs_.program; }
  const ExecutionPlan* plan() const { return plan_; }
  const std::string& method() const { return method_; }
  const inspect::Inspector* inspector() const { return inputs_.inspector; }
  /// The profile's main block, when there is a profile.
  std::optional<size_t> block() const { return block_; }
  /// Milliseconds per unit of the Inspector's target time scale.
  double ms_per_unit() const { return ms_per_unit_; }
  double run_ms() const { return run_ms_; }
  bool timed() const { return block_.has_value(); }

  const std::vector<Call>& calls() const { return calls_; }
  const inspect::MemoryPlan* memory() const { return memory_ ? &*memory_ : nullptr; }

  /// The tensor of value `v`, or nullptr.
  const TensorInfo* tensor(int32_t v) const;
  const Value* value(int32_t v) const;
  /// A constant (in the program or a .ptd): the same bytes every run.
  bool is_constant(int32_t v) const;
  /// The call that writes `v` last before call `before` (index into calls()), or -1.
  int32_t writer(int32_t v, size_t before) const;
  /// Indices of the calls after `after` that read `v` before anything writes it again.
  std::vector<size_t> readers(int32_t v, size_t after) const;

  /// The cost of a call per run (see findings.h), milliseconds; nullopt without a profile or
  /// when the profile has no event for it.
  std::optional<double> cost_ms(const Call& call) const;
  /// The sum of cost_ms over `calls` (indices), nullopt without a profile.
  std::optional<double> cost_ms(const std::vector<size_t>& calls) const;

  Place place(const Call& call) const;
  /// The place of an instruction, found among the calls (the method's place with the instruction
  /// when it is none of them).
  Place place_of(int32_t chain, int32_t instruction) const;
  Place method_place() const;
  /// "%12 f32[64,512]" with the value's name when the file records one.
  std::string describe_value(int32_t v) const;

  /// Severity of a finding that costs `time_ms` (nullopt: untimed).
  Severity severity_for(std::optional<double> time_ms) const;
  /// Fills time_ms, share and severity of `f` from the calls it costs.
  void cost(Finding& f, const std::vector<size_t>& calls) const;

 private:
  Inputs inputs_;
  const ExecutionPlan* plan_ = nullptr;
  std::string method_;
  std::optional<size_t> block_;
  double ms_per_unit_ = 1.0;
  double run_ms_ = 0;
  std::vector<Call> calls_;
  std::optional<inspect::MemoryPlan> memory_;
  std::optional<inspect::ProgramGraph> graph_;
  std::vector<int32_t> node_of_call_;  ///< Graph node of each call.
  std::map<std::pair<int32_t, int32_t>, double> cost_;  ///< (chain, instruction) -> ms.
};


}  // namespace etscope::findings
