// Method: loading (values, arenas, data sources, kernels, scratch) and execution.
// Sections: [buffers] [load: values] [load: instructions] [inputs] [execute]
#include "etscope/runtime/method.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>

#include "etscope/formats/checked.h"
#include "etscope/formats/event_names.h"
#include "etscope/formats/op_signatures.h"

namespace etscope::rt {
namespace {

// ---------------------------------------------------------------------------------------------
// [buffers]

// A zero-filled, 64-byte-aligned heap block, allocated once at load.
class AlignedBuffer {
 public:
  AlignedBuffer() = default;
  explicit AlignedBuffer(size_t size) : size_(size) {
    const size_t capacity = (size + 63) / 64 * 64 + 64;
    data_ = static_cast<uint8_t*>(std::aligned_alloc(64, capacity));
    if (data_ == nullptr) std::abort();
    std::memset(data_, 0, capacity);
  }
  AlignedBuffer(AlignedBuffer&& o) noexcept : data_(o.data_), size_(o.size_) { o.data_ = nullptr; }
  AlignedBuffer& operator=(AlignedBuffer&& o) noexcept {
    std::swap(data_, o.data_);
    std::swap(size_, o.size_);
    return *this;
  }
  ~AlignedBuffer() { std::free(data_); }
  uint8_t* data() const { return data_; }
  size_t size() const { return size_; }

 private:
  uint8_t* data_ = nullptr;
  size_t size_ = 0;
};

// Maximum instructions one execute() may run (ExecuTorch's ET_MAX_INSTRUCTIONS), so a program
// whose jumps loop forever fails instead of hanging.
constexpr uint64_t kMaxInstructions = 10'000'000;

std::string native_call_name(const Operator& op) { return events::native_call_name(op.name, op.overload); }

}  // namespace

struct Step {
  InstructionKind kind = InstructionKind::kKernelCall;
  const Kernel* kernel = nullptr;
  uint32_t arg_offset = 0;      // into Impl::arg_pool
  uint32_t arg_count = 0;
  uint32_t output_offset = 0;   // into Impl::output_pool: the out arguments, for logging
  uint32_t output_count = 0;
  std::string event_name;       // native_call_<op>.<overload>
  std::string op_name;          // ns::op.overload, for messages
  int32_t a = -1, b = -1;       // move from/to, jump cond/destination, freed value
};

struct Method::Impl {
  const Program* program = nullptr;
  const ExecutionPlan* plan = nullptr;
  EventTracer* tracer = nullptr;
  std::vector<AlignedBuffer> arenas;  // arena k (1-based id) is arenas[k - 1]
  std::vector<TensorImpl> tensors;
  std::vector<EValue> values;
  std::vector<EValue*> int_list_pool;
  std::vector<TensorImpl*> tensor_list_pool;
  std::vector<EValue*> arg_pool;
  std::vector<EValue*> output_pool;
  std::vector<std::vector<Step>> chains;
  std::vector<uint8_t> input_set;
  AlignedBuffer scratch;
  size_t instruction_count = 0;

  std::string where() const { return program->name() + ": method '" + plan->name + "'"; }
  Status load_values(const MethodOptions& options);
  Status load_instructions(const KernelRegistry& kernels);
};

// ---------------------------------------------------------------------------------------------
// [load: values]

Status Method::Impl::load_values(const MethodOptions& options) {
  const auto& pv = plan->values;
  // Arenas first: planned tensors point into them.
  for (size_t k = 1; k < plan->non_const_buffer_sizes.size(); ++k) {
    arenas.emplace_back(static_cast<size_t>(plan->non_const_buffer_sizes[k]));
  }
  std::vector<int32_t> tensor_index(pv.size(), -1);
  size_t ntensors = 0, nints = 0, nlist = 0;
  for (size_t i = 0; i < pv.size(); ++i) {
    if (pv[i].kind == ValueKind::kTensor) tensor_index[i] = static_cast<int32_t>(ntensors++);
    if (pv[i].kind == ValueKind::kIntList) nints += pv[i].int_list.size();
    if (pv[i].kind == ValueKind::kTensorList || pv[i].kind == ValueKind::kOptionalTensorList) nlist += pv[i].tensor_list.size();
  }
  // Reserve exactly: spans and pointers into these vectors must never move.
  tensors.resize(ntensors);
  values.resize(pv.size());
  int_list_pool.reserve(nints);
  tensor_list_pool.reserve(nlist);

  for (size_t i = 0; i < pv.size(); ++i) {
    const Value& v = pv[i];
    EValue& ev = values[i];
    const std::string what = where() + " value " + std::to_string(i);
    switch (v.kind) {
      case ValueKind::kNone: ev.tag = Tag::kNone; break;
      case ValueKind::kInt: ev.tag = Tag::kInt; ev.scalar.i = v.int_value; break;
      case ValueKind::kDouble: ev.tag = Tag::kDouble; ev.scalar.d = v.double_value; break;
      case ValueKind::kBool: ev.tag = Tag::kBool; ev.scalar.b = v.bool_value; break;
      case ValueKind::kString: ev.tag = Tag::kString; ev.str = v.string_value; break;
      case ValueKind::kDoubleList: ev.tag = Tag::kDoubleList; ev.double_list = v.double_list; break;
      case ValueKind::kBoolList: ev.tag = Tag::kBoolList; ev.bool_list = v.bool_list; break;
      case ValueKind::kIntList: {
        ev.tag = Tag::kIntList;
        const size_t start = int_list_pool.size();
        for (int64_t item : v.int_list) {
          if (pv[static_cast<size_t>(item)].kind != ValueKind::kInt) {
            return Error(ErrorCode::kCorrupt, what + ": IntList item refers to a non-Int value");
          }
          int_list_pool.push_back(&values[static_cast<size_t>(item)]);
        }
        ev.int_list = {int_list_pool.data() + start, v.int_list.size()};
        break;
      }
      case ValueKind::kTensorList:
      case ValueKind::kOptionalTensorList: {
        ev.tag = v.kind == ValueKind::kTensorList ? Tag::kTensorList : Tag::kOptionalTensorList;
        const size_t start = tensor_list_pool.size();
        for (int32_t item : v.tensor_list) {
          TensorImpl* t = nullptr;
          if (item >= 0 && tensor_index[static_cast<size_t>(item)] >= 0) {
            t = &tensors[static_cast<size_t>(tensor_index[static_cast<size_t>(item)])];
          } else if (item >= 0 && (v.kind == ValueKind::kTensorList || pv[static_cast<size_t>(item)].kind != ValueKind::kNone)) {
            return Error(ErrorCode::kCorrupt, what + ": tensor list item is not a tensor");
          }
          tensor_list_pool.push_back(t);
        }
        ev.tensor_list = {tensor_list_pool.data() + start, v.tensor_list.size()};
        break;
      }
      case ValueKind::kTensor: {
        const TensorInfo& ti = v.tensor;
        TensorImpl& t = tensors[static_cast<size_t>(tensor_index[i])];
        ev.tag = Tag::kTensor;
        ev.tensor = &t;
        if (ti.dynamism == ShapeDynamism::kDynamicUnbound) {
          return Error(ErrorCode::kNotSupported, what + ": dynamic tensors without an upper bound are not supported");
        }
        int64_t sizes[kMaxDims];
        if (ti.sizes.size() > static_cast<size_t>(kMaxDims)) {
          return Error(ErrorCode::kNotSupported, what + ": tensor rank above 16");
        }
        for (size_t d = 0; d < ti.sizes.size(); ++d) sizes[d] = ti.sizes[d];
        Status s = t.init(ti.dtype, {sizes, ti.sizes.size()}, ti.dim_order,
                          ti.dynamism == ShapeDynamism::kDynamicBound, ti.nbytes);
        if (!s.ok()) return s.error().with_context(what);
        uint8_t* planned = nullptr;
        if (ti.allocation) {
          const Allocation& a = *ti.allocation;
          if (a.memory_id == 0 || a.memory_id > arenas.size() ||
              !checked::range_fits(a.offset, ti.nbytes, arenas[a.memory_id - 1].size())) {
            return Error(ErrorCode::kCorrupt, what + ": planned placement lies outside its arena");
          }
          planned = arenas[a.memory_id - 1].data() + a.offset;
        }
        const uint8_t* source = nullptr;  // initial or constant bytes
        if (ti.external) {
          const TensorDataEntry* entry = nullptr;
          const TensorDataFile* file = nullptr;
          for (const TensorDataFile* f : options.external_data) {
            if ((entry = f->find(ti.fqn)) != nullptr) {
              file = f;
              break;
            }
          }
          if (entry == nullptr) {
            return Error(ErrorCode::kInvalidArgument,
                         what + ": external tensor '" + ti.fqn + "' not found" +
                             (options.external_data.empty() ? " (no .ptd given; pass one with --ptd)" : " in the given .ptd files"));
          }
          if (!entry->layout || entry->layout->dtype != ti.dtype || entry->layout->sizes != ti.sizes ||
              entry->layout->dim_order != ti.dim_order) {
            return Error(ErrorCode::kInvalidArgument, what + ": '" + ti.fqn + "' in " + file->name() +
                                                          " has another dtype, shape or dim order than the program expects");
          }
          source = file->bytes(entry->data).data();
        } else if (ti.data_kind == TensorDataKind::kConstant || ti.data_kind == TensorDataKind::kPlannedWithInit) {
          source = program->bytes(ti.data).data();
        }
        if (planned != nullptr) {
          if (source != nullptr) std::memcpy(planned, source, ti.nbytes);
          t.set_data(planned);
        } else {
          // Constants are used in place; kernels never write them.
          t.set_data(const_cast<uint8_t*>(source));
        }
        break;
      }
    }
  }
  input_set.assign(plan->inputs.size(), 0);
  return ok_status();
}

// ---------------------------------------------------------------------------------------------
// [load: instructions]

Status Method::Impl::load_instructions(const KernelRegistry& kernels) {
  std::vector<std::string> missing;
  size_t arg_total = 0, out_total = 0;
  for (const Chain& c : plan->chains) {
    for (const Instruction& in : c.instructions) {
      arg_total += in.args.size();
      out_total += in.args.size();
    }
  }
  arg_pool.reserve(arg_total);
  output_pool.reserve(out_total);
  size_t scratch_bytes = 0;
  for (size_t ci = 0; ci < plan->chains.size(); ++ci) {
    const Chain& chain = plan->chains[ci];
    std::vector<Step> steps(chain.instructions.size());
    for (size_t ii = 0; ii < chain.instructions.size(); ++ii) {
      const Instruction& in = chain.instructions[ii];
      Step& step = steps[ii];
      step.kind = in.kind;
      step.arg_offset = static_cast<uint32_t>(arg_pool.size());
      step.arg_count = static_cast<uint32_t>(in.args.size());
      for (int32_t a : in.args) arg_pool.push_back(&values[static_cast<size_t>(a)]);
      switch (in.kind) {
        case InstructionKind::kKernelCall: {
          const Operator& op = plan->operators[static_cast<size_t>(in.op_index)];
          step.op_name = op.qualified_name();
          step.event_name = native_call_name(op);
          step.kernel = kernels.find(step.op_name);
          if (step.kernel == nullptr) {
            if (std::find(missing.begin(), missing.end(), step.op_name) == missing.end()) missing.push_back(step.op_name);
            break;
          }
          KernelArgs split = split_kernel_args(*plan, in);
          step.output_offset = static_cast<uint32_t>(output_pool.size());
          step.output_count = static_cast<uint32_t>(split.outputs.size());
          for (int32_t o : split.outputs) output_pool.push_back(&values[static_cast<size_t>(o)]);
          if (step.kernel->scratch != nullptr) {
            scratch_bytes = std::max(scratch_bytes, step.kernel->scratch({arg_pool.data() + step.arg_offset, step.arg_count}));
          }
          break;
        }
        case InstructionKind::kDelegateCall:
          return Error(ErrorCode::kNotSupported,
                       where() + ": instruction " + std::to_string(ii) + " calls the '" +
                           plan->delegates[static_cast<size_t>(in.delegate_index)].id +
                           "' delegate; etscope's runtime executes no delegates (export without a partitioner to run it here)");
        case InstructionKind::kMoveCall:
          step.a = in.move_from;
          step.b = in.move_to;
          break;
        case InstructionKind::kJumpFalse:
          step.a = in.cond_value;
          step.b = in.destination;
          break;
        case InstructionKind::kFree:
          step.a = in.free_value;
          if (plan->values[static_cast<size_t>(in.free_value)].kind != ValueKind::kTensor) {
            return Error(ErrorCode::kCorrupt, where() + ": instruction " + std::to_string(ii) + " frees a non-tensor value");
          }
          break;
      }
    }
    instruction_count += steps.size();
    chains.push_back(std::move(steps));
  }
  if (!missing.empty()) {
    std::string list;
    for (const auto& m : missing) list += (list.empty() ? "" : ", ") + m;
    return Error(ErrorCode::kNotSupported, where() + ": missing kernels: " + list);
  }
  scratch = AlignedBuffer(scratch_bytes);
  return ok_status();
}

Method::Method(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Method::~Method() = default;

Result<std::unique_ptr<Method>> Method::load(const Program& program, const std::string& name,
                                             const MethodOptions& options) {
  const ExecutionPlan* plan = program.find_plan(name);
  if (plan == nullptr) {
    std::string names;
    for (const auto& p : program.plans) names += (names.empty() ? "" : ", ") + p.name;
    return Error(ErrorCode::kNotFound, program.name() + ": no method named '" + name + "' (methods: " + names + ")");
  }
  if (!program.problems.empty()) {
    return Error(ErrorCode::kCorrupt, program.name() + ": cannot run a program ExecuTorch would reject: " +
                                          program.problems.front());
  }
  EventTracer* tracer = options.tracer;
  if (tracer != nullptr) tracer->create_event_block(events::kBlockDefault.data());
  MethodScope load_scope(tracer, events::kProgramLoadMethod.data());
  auto impl = std::make_unique<Impl>();
  impl->program = &program;
  impl->plan = plan;
  impl->tracer = tracer;
  {
    MethodScope init_scope(tracer, events::kMethodInit.data());
    ETSCOPE_TRY(impl->load_values(options));
    ETSCOPE_TRY(impl->load_instructions(options.kernels ? *options.kernels : KernelRegistry::portable()));
  }
  return std::unique_ptr<Method>(new Method(std::move(impl)));
}

const std::string& Method::name() const { return impl_->plan->name; }
size_t Method::num_inputs() const { return impl_->plan->inputs.size(); }
size_t Method::num_outputs() const { return impl_->plan->outputs.size(); }
size_t Method::instruction_count() const { return impl_->instruction_count; }
const EValue& Method::input(size_t i) const { return impl_->values[static_cast<size_t>(impl_->plan->inputs.at(i))]; }
const EValue& Method::output(size_t i) const { return impl_->values[static_cast<size_t>(impl_->plan->outputs.at(i))]; }

// ---------------------------------------------------------------------------------------------
// [inputs]

Status Method::set_input(size_t i, std::span<const uint8_t> data, std::span<const int64_t> sizes) {
  const std::string what = impl_->where() + " input " + std::to_string(i);
  if (i >= num_inputs()) {
    return make_error(ErrorCode::kInvalidArgument, "%s: out of range (the method has %zu inputs)", what.c_str(), num_inputs());
  }
  const int32_t vi = impl_->plan->inputs[i];
  EValue& ev = impl_->values[static_cast<size_t>(vi)];
  if (ev.tag != Tag::kTensor) {
    return Error(ErrorCode::kInvalidArgument, what + " is a " + to_string(ev.tag) + ", not a tensor");
  }
  TensorImpl& t = *ev.tensor;
  if (!sizes.empty()) {
    Status s = t.resize(sizes);
    if (!s.ok()) return s.error().with_context(what);
  }
  if (data.size() != t.nbytes()) {
    return make_error(ErrorCode::kInvalidArgument, "%s: got %zu bytes, the tensor needs %zu", what.c_str(), data.size(),
                      t.nbytes());
  }
  const TensorInfo& info = impl_->plan->values[static_cast<size_t>(vi)].tensor;
  if (info.allocation || info.data_buffer_idx > 0) {
    if (t.nbytes() > 0) std::memcpy(t.data(), data.data(), t.nbytes());
  } else {
    t.set_data(const_cast<uint8_t*>(data.data()));  // borrowed, as ExecuTorch shares unplanned inputs
  }
  impl_->input_set[i] = 1;
  return ok_status();
}

Status Method::set_scalar_input(size_t i, const EValue& value) {
  const std::string what = impl_->where() + " input " + std::to_string(i);
  if (i >= num_inputs()) return Error(ErrorCode::kInvalidArgument, what + ": out of range");
  const EValue& ev = impl_->values[static_cast<size_t>(impl_->plan->inputs[i])];
  if (ev.tag != value.tag) {
    return Error(ErrorCode::kInvalidArgument, what + ": expected a " + to_string(ev.tag) + ", got a " + to_string(value.tag));
  }
  bool equal = true;
  if (ev.tag == Tag::kInt) equal = ev.scalar.i == value.scalar.i;
  if (ev.tag == Tag::kBool) equal = ev.scalar.b == value.scalar.b;
  if (ev.tag == Tag::kDouble) {
    const double a = ev.scalar.d, b = value.scalar.d;
    equal = (std::isnan(a) && std::isnan(b)) || a == b || std::abs(a - b) <= 1e-4 + 1e-5 * std::abs(a);
  }
  if (!equal) return Error(ErrorCode::kInvalidArgument, what + ": must equal the value the program was exported with");
  impl_->input_set[i] = 1;
  return ok_status();
}

// ---------------------------------------------------------------------------------------------
// [execute]

Status Method::execute() {
  Impl& m = *impl_;
  EventTracer* tracer = m.tracer;
  EventHandle exec_event = 0;
  if (tracer != nullptr) {
    tracer->create_event_block(events::kBlockExecute.data());
    exec_event = tracer->start_profiling(events::kMethodExecute.data(), -1, 0);
  }
  for (size_t i = 0; i < m.input_set.size(); ++i) {
    if (!m.input_set[i]) return make_error(ErrorCode::kInvalidArgument, "%s: input %zu has not been set", m.where().c_str(), i);
  }
  uint64_t executed = 0;
  for (size_t c = 0; c < m.chains.size(); ++c) {
    const std::vector<Step>& steps = m.chains[c];
    size_t idx = 0;
    while (idx < steps.size()) {
      if (++executed > kMaxInstructions) {
        return Error(ErrorCode::kCorrupt, m.where() + ": more than 10,000,000 instructions in one execution (a jump loop?)");
      }
      const Step& step = steps[idx];
      InstructionScope instruction(tracer, static_cast<int32_t>(c), static_cast<uint32_t>(idx));
      size_t next = idx + 1;
      switch (step.kind) {
        case InstructionKind::kKernelCall: {
          OpScope op_scope(tracer, events::kOperatorCall.data());
          KernelContext ctx({m.scratch.data(), m.scratch.size()});
          const Args args{m.arg_pool.data() + step.arg_offset, step.arg_count};
          if (step.kernel->codegen_wrapped) {
            OpScope native_scope(tracer, step.event_name.c_str());
            step.kernel->run(ctx, args);
            if (!ctx.failed()) {
              for (uint32_t o = 0; o < step.output_count; ++o) log_intermediate(tracer, *m.output_pool[step.output_offset + o]);
            }
          } else {
            step.kernel->run(ctx, args);
          }
          if (ctx.failed()) {
            return make_error(ctx.error_code(), "%s: instruction %zu (%s): %s", m.where().c_str(), idx, step.op_name.c_str(),
                              ctx.message());
          }
          break;
        }
        case InstructionKind::kMoveCall: {
          OpScope scope(tracer, events::kMoveCall.data());
          m.values[static_cast<size_t>(step.b)] = m.values[static_cast<size_t>(step.a)];
          break;
        }
        case InstructionKind::kJumpFalse: {
          OpScope scope(tracer, events::kJumpFalseCall.data());
          const EValue& cond = m.values[static_cast<size_t>(step.a)];
          bool value = false;
          if (cond.tag == Tag::kBool) {
            value = cond.scalar.b;
          } else if (cond.tag == Tag::kTensor && cond.tensor->dtype() == ScalarType::kBool) {
            if (cond.tensor->data() == nullptr) return Error(ErrorCode::kCorrupt, m.where() + ": jump condition has no data");
            value = true;
            const auto* p = cond.tensor->data_as<uint8_t>();
            for (int64_t k = 0; k < cond.tensor->numel(); ++k) value &= p[k] != 0;
          } else {
            return Error(ErrorCode::kCorrupt, m.where() + ": jump condition is neither a Bool nor a bool tensor");
          }
          if (!value) next = static_cast<size_t>(step.b);
          break;
        }
        case InstructionKind::kFree: {
          OpScope scope(tracer, events::kFreeCall.data());
          m.values[static_cast<size_t>(step.a)].tensor->set_data(nullptr);
          break;
        }
        case InstructionKind::kDelegateCall:
          return Error(ErrorCode::kInternal, m.where() + ": delegate call reached execution");
      }
      idx = next;
    }
  }
  if (tracer != nullptr) {
    tracer->end_profiling(exec_event);
    if (tracer->debug_level() >= DebugLevel::kProgramOutputs) {
      for (int32_t o : m.plan->outputs) tracer->log_evalue(m.values[static_cast<size_t>(o)], true);
    }
  }
  return ok_status();
}

}  // namespace etscope::rt
