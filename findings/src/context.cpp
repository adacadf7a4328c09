#include "context.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <unordered_set>

#include "etscope/core/event_names.h"
#include "etscope/core/stats.h"
#include "etscope/core/text.h"
#include "etscope/formats/op_signatures.h"
#include "etscope/inspect/profile.h"

namespace etscope::findings {
namespace {

std::vector<Call> plan_calls(const ExecutionPlan& plan) {
  std::vector<Call> calls;
  std::unordered_set<int32_t> written(plan.inputs.begin(), plan.inputs.end());
  size_t step = 0;
  for (size_t c = 0; c < plan.chains.size(); ++c) {
    const Chain& chain = plan.chains[c];
    for (size_t i = 0; i < chain.instructions.size(); ++i, ++step) {
      const Instruction& in = chain.instructions[i];
      if (in.kind != InstructionKind::kKernelCall && in.kind != InstructionKind::kDelegateCall) {
        if (in.kind == InstructionKind::kMoveCall) written.insert(in.move_to);
        continue;
      }
      Call call;
      call.chain = static_cast<int32_t>(c);
      call.instruction = static_cast<int32_t>(i);
      call.step = step;
      if (in.kind == InstructionKind::kKernelCall) {
        call.op = plan.operators[static_cast<size_t>(in.op_index)].qualified_name();
        const KernelArgs args = split_kernel_args(plan, in);
        for (int32_t v : args.inputs) {
          const size_t before = call.inputs.size();
          append_tensor_values(plan, v, call.inputs);
          if (call.inputs.size() == before) call.scalars.push_back(v);
        }
        for (int32_t v : args.outputs) append_tensor_values(plan, v, call.outputs);
        call.writes_inputs = !args.mutated.empty();
      } else {
        call.delegate = true;
        call.op = plan.delegates[static_cast<size_t>(in.delegate_index)].id;
        DelegateTensors tensors = delegate_call_tensors(plan, in, [&](int32_t v) { return written.contains(v); });
        call.inputs = std::move(tensors.inputs);
        call.outputs = std::move(tensors.outputs);
      }
      for (int32_t v : call.outputs) written.insert(v);
      calls.push_back(std::move(call));
    }
  }
  return calls;
}

// The share of the smallest and of the largest samples a cost leaves out.
constexpr double kTrim = 0.1;

}  // namespace

Result<Context> Context::build(const Inputs& inputs) {
  if (!inputs.program && !inputs.inspector) {
    return Error(ErrorCode::kInvalidArgument, "findings need a program or a profile");
  }
  Context ctx;
  ctx.inputs_ = inputs;
  if (inputs.program) {
    ctx.method_ = inspect::profile_method(inputs.method, inputs.program, inputs.record);
    ctx.plan_ = inputs.program->find_plan(ctx.method_);
    if (!ctx.plan_) {
      return Error(ErrorCode::kInvalidArgument, inputs.program->name() + ": no method '" + ctx.method_ + "'");
    }
    ctx.calls_ = plan_calls(*ctx.plan_);
    ETSCOPE_ASSIGN_OR_RETURN(inspect::MemoryPlan memory, inspect::MemoryPlan::build(*inputs.program, *ctx.plan_));
    ctx.memory_ = std::move(memory);
    ctx.graph_ = inspect::build_program_graph(*ctx.plan_, inputs.record, inputs.program);
    ctx.node_of_call_.assign(ctx.calls_.size(), -1);
    for (size_t k = 0; k < ctx.calls_.size(); ++k) {
      const size_t step = ctx.calls_[k].step;
      if (step < ctx.graph_->node_of_step.size()) ctx.node_of_call_[k] = ctx.graph_->node_of_step[step];
    }
  } else {
    ctx.method_ = inputs.method.empty() ? "forward" : inputs.method;
  }

  if (inputs.inspector) {
    const inspect::Inspector& in = *inputs.inspector;
    ctx.ms_per_unit_ = 1000.0 / inspect::units_per_second(in.options().target);
    ctx.block_ = inspect::main_block(in);
    if (ctx.block_) {
      // Trimmed means (10% off each end, core/stats.h): what an execution is expected to cost,
      // without the spikes of the few a busy machine preempted. The run time is Method::execute's,
      // or the Inspector's run time when the dump has none.
      ctx.run_ms_ = in.run_time(*ctx.block_).value * ctx.ms_per_unit_;
      for (const inspect::Event& ev : in.blocks()[*ctx.block_].events) {
        if (ev.name == events::kMethodExecute && ev.perf) ctx.run_ms_ = trimmed_mean(ev.perf->raw, kTrim) * ctx.ms_per_unit_;
      }
      // Per instruction: OPERATOR_CALL, else its kernel event, else DELEGATE_CALL.
      std::map<std::pair<int32_t, int32_t>, double> op_call, native, delegate;
      for (const inspect::Event& ev : in.blocks()[*ctx.block_].events) {
        if (!ev.perf) continue;
        const std::pair<int32_t, int32_t> key{ev.chain, ev.instruction_id};
        switch (ev.kind()) {
          case events::EventClass::kOperatorCall: op_call[key] += trimmed_mean(ev.perf->raw, kTrim); break;
          case events::EventClass::kNativeCall: native[key] += trimmed_mean(ev.perf->raw, kTrim); break;
          case events::EventClass::kDelegateCall: delegate[key] += trimmed_mean(ev.perf->raw, kTrim); break;
          default: break;
        }
      }
      for (const auto* source : {&delegate, &native, &op_call}) {
        for (const auto& [key, cost] : *source) ctx.cost_[key] = cost * ctx.ms_per_unit_;
      }
    }
  }
  return ctx;
}

const Value* Context::value(int32_t v) const {
  if (!plan_ || v < 0 || static_cast<size_t>(v) >= plan_->values.size()) return nullptr;
  return &plan_->values[static_cast<size_t>(v)];
}

const TensorInfo* Context::tensor(int32_t v) const {
  const Value* value = this->value(v);
  return value && value->kind == ValueKind::kTensor ? &value->tensor : nullptr;
}

bool Context::is_constant(int32_t v) const {
  const TensorInfo* t = tensor(v);
  return t && (t->data_kind == TensorDataKind::kConstant || t->data_kind == TensorDataKind::kExternalConstant);
}

int32_t Context::writer(int32_t v, size_t before) const {
  for (size_t k = std::min(before, calls_.size()); k-- > 0;) {
    const Call& c = calls_[k];
    if (std::find(c.outputs.begin(), c.outputs.end(), v) != c.outputs.end()) return static_cast<int32_t>(k);
  }
  return -1;
}

std::vector<size_t> Context::readers(int32_t v, size_t after) const {
  std::vector<size_t> out;
  for (size_t k = after + 1; k < calls_.size(); ++k) {
    const Call& c = calls_[k];
    if (std::find(c.inputs.begin(), c.inputs.end(), v) != c.inputs.end()) out.push_back(k);
    if (std::find(c.outputs.begin(), c.outputs.end(), v) != c.outputs.end()) break;
  }
  return out;
}

std::optional<double> Context::cost_ms(const Call& call) const {
  const auto it = cost_.find({call.chain, call.instruction});
  if (it == cost_.end()) return std::nullopt;
  return it->second;
}

std::optional<double> Context::cost_ms(const std::vector<size_t>& calls) const {
  if (!timed()) return std::nullopt;
  double sum = 0;
  for (size_t k : calls) {
    if (k < calls_.size()) sum += cost_ms(calls_[k]).value_or(0.0);
  }
  return sum;
}

Place Context::place(const Call& call) const {
  Place p;
  p.method = method_;
  p.chain = call.chain;
  p.instruction = call.instruction;
  p.op = call.delegate ? "delegate " + call.op : call.op;
  const size_t k = static_cast<size_t>(&call - calls_.data());
  if (graph_ && k < node_of_call_.size() && node_of_call_[k] >= 0) {
    const inspect::ProgramGraphNode& node = graph_->nodes[static_cast<size_t>(node_of_call_[k])];
    if (!node.modules.empty()) p.module_path = node.modules.back().path;
    // The source line: the ETRecord's stack trace of the node's first graph node, else the
    // program's own stack trace of the instruction.
    if (inputs_.record) {
      if (const etrecord::Graph* g = inputs_.record->reference_graph(method_)) {
        for (int64_t h : node.debug_handles) {
          for (const etrecord::GraphNode* n : g->nodes_for_handle(h)) {
            if (auto frame = etrecord::user_frame(n->stack_trace)) {
              p.source = frame->file_name() + (frame->line.empty() ? "" : ":" + frame->line);
              break;
            }
          }
          if (!p.source.empty()) break;
        }
      }
    }
  }
  if (p.source.empty() && plan_ && static_cast<size_t>(call.chain) < plan_->chains.size()) {
    const Chain& chain = plan_->chains[static_cast<size_t>(call.chain)];
    if (static_cast<size_t>(call.instruction) < chain.stacktrace.size() && !chain.stacktrace[static_cast<size_t>(call.instruction)].empty()) {
      const Frame& f = chain.stacktrace[static_cast<size_t>(call.instruction)].back();
      std::string file = f.filename;
      const size_t slash = file.find_last_of('/');
      if (slash != std::string::npos) file = file.substr(slash + 1);
      p.source = file + ":" + std::to_string(f.lineno);
    }
  }
  return p;
}

Place Context::place_of(int32_t chain, int32_t instruction) const {
  for (const Call& c : calls_) {
    if (c.chain == chain && c.instruction == instruction) return place(c);
  }
  Place p = method_place();
  p.chain = chain;
  p.instruction = instruction;
  return p;
}

Place Context::method_place() const {
  Place p;
  p.method = method_;
  return p;
}

std::string Context::describe_value(int32_t v) const {
  std::string text = "%" + std::to_string(v);
  if (const TensorInfo* t = tensor(v)) {
    text += " " + shape_text(t->dtype, t->sizes);
    if (!t->fqn.empty()) text += " '" + t->fqn + "'";
  }
  return text;
}

Severity Context::severity_for(std::optional<double> time_ms) const {
  if (!time_ms) return Severity::kLow;
  if (run_ms_ <= 0) return *time_ms > 0 ? Severity::kLow : Severity::kInfo;
  const double share = *time_ms / run_ms_;
  if (share >= 0.10) return Severity::kHigh;
  if (share >= 0.02) return Severity::kMedium;
  if (share > 0) return Severity::kLow;
  return Severity::kInfo;
}

void Context::cost(Finding& f, const std::vector<size_t>& calls) const {
  f.time_ms = cost_ms(calls);
  if (f.time_ms && run_ms_ > 0) f.share = *f.time_ms / run_ms_;
  f.severity = severity_for(f.time_ms);
}

}  // namespace etscope::findings
