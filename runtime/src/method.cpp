// Method: loading (values, arenas, data sources, kernels, scratch) and execution.
// Sections: [buffers] [load: values] [load: instructions] [inputs] [execute]
#include "etscope/runtime/method.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstdio>
#include <cstring>
#include <map>
#include <optional>

#include <sys/mman.h>
#include <unistd.h>

#include "etscope/core/checked.h"
#include "etscope/core/event_names.h"
#include "etscope/core/machine.h"
#include "etscope/core/text.h"
#include "etscope/formats/bool_constants.h"
#include "etscope/formats/op_signatures.h"
#include "etscope/formats/xnnpack_payload.h"
#include "kernels/register.h"
#include "parallel.h"
#include "xnnpack/xnnpack_delegate.h"

namespace etscope::runtime {
namespace {

// ---------------------------------------------------------------------------------------------
// [buffers]

// A zero-filled, 64-byte-aligned block, allocated once at load. Large blocks are anonymous
// mappings: the kernel hands out zero pages and commits them only when touched, so an arena that
// a program declares far larger than it uses costs no time and no memory. (Under AddressSanitizer
// every block comes from the heap so that overflows stay visible.)
class AlignedBuffer {
 public:
  AlignedBuffer() = default;
  /// Allocates `size` bytes (plus padding); false when the size overflows or memory runs out,
  /// leaving the buffer empty.
  bool allocate(size_t size) {
    release();
    if (size > SIZE_MAX - 128) return false;
    const size_t capacity = (size + 63) / 64 * 64 + 64;
#if !defined(__SANITIZE_ADDRESS__)
    if (capacity >= kMapThreshold) {
      void* p = mmap(nullptr, capacity, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
      if (p == MAP_FAILED) return false;
      data_ = static_cast<uint8_t*>(p);
      mapped_ = capacity;
      size_ = size;
      return true;
    }
#endif
    data_ = static_cast<uint8_t*>(std::aligned_alloc(64, capacity));
    if (data_ == nullptr) return false;
    std::memset(data_, 0, capacity);
    size_ = size;
    return true;
  }
  AlignedBuffer(AlignedBuffer&& o) noexcept : data_(o.data_), size_(o.size_), mapped_(o.mapped_) {
    o.data_ = nullptr;
    o.size_ = 0;
    o.mapped_ = 0;
  }
  AlignedBuffer& operator=(AlignedBuffer&& o) noexcept {
    std::swap(data_, o.data_);
    std::swap(size_, o.size_);
    std::swap(mapped_, o.mapped_);
    return *this;
  }
  ~AlignedBuffer() { release(); }
  uint8_t* data() const { return data_; }
  size_t size() const { return size_; }

 private:
  static constexpr size_t kMapThreshold = size_t{1} << 20;
  void release() {
    if (mapped_ != 0) {
      munmap(data_, mapped_);
    } else {
      std::free(data_);
    }
    data_ = nullptr;
    size_ = 0;
    mapped_ = 0;
  }
  uint8_t* data_ = nullptr;
  size_t size_ = 0;
  size_t mapped_ = 0;  // bytes mapped, 0 for heap blocks
};

// Maximum instructions one execute() may run (ExecuTorch's ET_MAX_INSTRUCTIONS), so a program
// whose jumps loop forever fails instead of hanging.
constexpr uint64_t kMaxInstructions = 10'000'000;

// What a tensor value's bytes are, as far as load-time checks are concerned.
enum class Storage : uint8_t {
  kNone,      // no memory: an unplanned tensor that is not an input (or of zero bytes)
  kReadOnly,  // the program's or a .ptd's constant bytes (or an aligned copy of them)
  kWritable,  // planned arena memory or a buffer the method owns
};

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
  // A transpose folded into the matrix products that read it (Impl::fold_transposes): when
  // execute() folds, an elided step runs no kernel, and a step with a folded kernel runs it on
  // its folded arguments (arg_pool from folded_arg_offset, arg_count of them).
  bool elided = false;
  const Kernel* folded_kernel = nullptr;
  uint32_t folded_arg_offset = 0;
};

struct Method::Impl {
  const Program* program = nullptr;
  const ExecutionPlan* plan = nullptr;
  EventTracer* tracer = nullptr;
  bool validate_only = false;  // loaded to be checked, not run (MethodOptions::validate_only)
  bool emulate_quantization = false;  // MethodOptions::emulate_quantization
  MatrixTiles matrix_tiles = MatrixTiles::kAuto;  // MethodOptions::matrix_tiles
  std::unique_ptr<Parallel> parallel;  // MethodOptions::threads > 1
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
  std::vector<Storage> storage;          // per value: what a tensor value's bytes are
  std::vector<AlignedBuffer> owned;      // aligned copies of constants, buffers of unplanned inputs
  // What the XNNPACK delegates hold only during a call, shared by all of them (they run one at a time).
  std::shared_ptr<xnnpack::Workspace> xnn_workspace = std::make_shared<xnnpack::Workspace>();
  std::vector<std::unique_ptr<xnnpack::XnnpackDelegate>> delegates;  // per DelegateCall (Step::a)
  Method::InstructionHook hook;          // set_instruction_hook
  Method::DelegateValueHook delegate_hook;  // set_delegate_value_hook
  uint64_t memory_left = 0;              // of MethodOptions::max_memory

  std::string where() const { return program->name() + ": method '" + plan->name + "'"; }
  /// Takes `n` bytes from the memory budget, or explains why not.
  Status reserve(uint64_t n, const std::string& what);
  /// Allocates an owned buffer of `n` bytes within the budget.
  Result<uint8_t*> own(uint64_t n, const std::string& what);
  Status load_values(const MethodOptions& options);
  Status load_instructions(const KernelRegistry& kernels, bool validate_only);
  size_t fold_transposes();
  Status check_inputs() const;
  Status check_uses() const;
  /// Calls f(chain, instruction, delegate) for each XNNPACK delegate call etscope loaded.
  template <typename F>
  void for_each_delegate(F f) const;
};

Status Method::Impl::reserve(uint64_t n, const std::string& what) {
  if (n > memory_left) {
    return Error(ErrorCode::kOutOfResources,
                 what + " needs " + exact_bytes_text(n) + ", more than the memory limit allows (" + exact_bytes_text(memory_left) +
                     " left; raise it with --max-memory)");
  }
  memory_left -= n;
  return ok_status();
}

Result<uint8_t*> Method::Impl::own(uint64_t n, const std::string& what) {
  ETSCOPE_TRY(reserve(n, what));
  AlignedBuffer b;
  if (n > SIZE_MAX || !b.allocate(static_cast<size_t>(n))) {
    return Error(ErrorCode::kOutOfResources, what + ": cannot allocate " + exact_bytes_text(n));
  }
  uint8_t* data = b.data();
  owned.push_back(std::move(b));
  return data;
}

// ---------------------------------------------------------------------------------------------
// [load: values]

Status Method::Impl::load_values(const MethodOptions& options) {
  const auto& pv = plan->values;
  memory_left = options.max_memory != 0 ? options.max_memory : machine_memory_bytes();
  storage.assign(pv.size(), Storage::kNone);
  // Arenas first: planned tensors point into them. Their sizes come from the file: each is
  // checked against the memory limit before anything is allocated.
  for (size_t k = 1; k < plan->non_const_buffer_sizes.size(); ++k) {
    const int64_t size = plan->non_const_buffer_sizes[k];
    const std::string arena = where() + ": memory arena " + std::to_string(k);
    if (size < 0) return Error(ErrorCode::kCorrupt, arena + " has a negative size");
    ETSCOPE_TRY(reserve(static_cast<uint64_t>(size), arena));
  }
  arenas.resize(plan->non_const_buffer_sizes.empty() ? 0 : plan->non_const_buffer_sizes.size() - 1);
  for (size_t k = 0; k < arenas.size(); ++k) {
    const uint64_t size = static_cast<uint64_t>(plan->non_const_buffer_sizes[k + 1]);
    if (size > SIZE_MAX || !arenas[k].allocate(static_cast<size_t>(size))) {
      return Error(ErrorCode::kOutOfResources,
                   where() + ": memory arena " + std::to_string(k + 1) + ": cannot allocate " + exact_bytes_text(size));
    }
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
        const uint64_t align = ::etscope::element_size(ti.dtype).value_or(1);
        uint8_t* planned = nullptr;
        if (ti.allocation) {
          const Allocation& a = *ti.allocation;
          if (a.memory_id == 0 || a.memory_id > arenas.size() ||
              !checked::range_fits(a.offset, ti.nbytes, arenas[a.memory_id - 1].size())) {
            return Error(ErrorCode::kCorrupt, what + ": planned placement lies outside its arena");
          }
          // Arenas start 64-byte aligned; the offset must keep the element type aligned.
          if (a.offset % align != 0) {
            return Error(ErrorCode::kCorrupt, what + ": planned offset " + std::to_string(a.offset) + " is not aligned for " +
                                                  scalar_type_name(ti.dtype));
          }
          planned = arenas[a.memory_id - 1].data() + a.offset;
        }
        std::span<const uint8_t> source;  // initial or constant bytes
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
          source = file->bytes(entry->data);
        } else if (ti.data_kind == TensorDataKind::kConstant || ti.data_kind == TensorDataKind::kPlannedWithInit) {
          source = program->bytes(ti.data);
        }
        const bool has_source = ti.external || ti.data_kind == TensorDataKind::kConstant ||
                                ti.data_kind == TensorDataKind::kPlannedWithInit;
        if (has_source && source.size() < ti.nbytes) {
          return Error(ErrorCode::kCorrupt, what + ": its data holds " + std::to_string(source.size()) + " bytes, the tensor needs " +
                                                std::to_string(ti.nbytes));
        }
        // ExecuTorch's kernels read a bool byte as non-zero = true, and run programs whose bool
        // constants hold other bytes (the LLM exporter's attention mask). A C++ bool must hold
        // 0 or 1, so such bytes are read once here, into memory the method owns, as 0 or 1; the
        // front ends warn (formats/bool_constants.h).
        const bool non_binary_bool =
            has_source && ti.dtype == ScalarType::kBool &&
            !std::all_of(source.begin(), source.begin() + static_cast<std::ptrdiff_t>(ti.nbytes), is_binary_bool_byte);
        if (non_binary_bool && planned == nullptr) {
          ETSCOPE_ASSIGN_OR_RETURN(uint8_t* copy, own(ti.nbytes, what + " (a bool constant read as 0 or 1)"));
          for (size_t k = 0; k < ti.nbytes; ++k) copy[k] = source[k] != 0 ? 1 : 0;
          source = std::span<const uint8_t>(copy, ti.nbytes);
        }
        if (planned != nullptr) {
          if (has_source && ti.nbytes > 0) std::memcpy(planned, source.data(), ti.nbytes);
          if (non_binary_bool) {
            for (size_t k = 0; k < ti.nbytes; ++k) planned[k] = planned[k] != 0 ? 1 : 0;
          }
          t.set_data(planned);
          storage[i] = Storage::kWritable;
        } else if (has_source) {
          // Constants are used in place; kernels never write them (checked below). Offsets come
          // from the file, so a constant may sit at an address its element type cannot be loaded
          // from: such a constant is copied once into aligned memory.
          const uint8_t* data = source.data();
          if (reinterpret_cast<uintptr_t>(data) % align != 0) {
            ETSCOPE_ASSIGN_OR_RETURN(uint8_t* copy, own(ti.nbytes, what + " (an aligned copy of a misaligned constant)"));
            if (ti.nbytes > 0) std::memcpy(copy, data, ti.nbytes);
            data = copy;
          }
          t.set_data(const_cast<uint8_t*>(data));
          storage[i] = Storage::kReadOnly;
        } else if (std::find(plan->inputs.begin(), plan->inputs.end(), static_cast<int32_t>(i)) != plan->inputs.end() ||
                   std::find(plan->outputs.begin(), plan->outputs.end(), static_cast<int32_t>(i)) != plan->outputs.end()) {
          // An unplanned input or output (ExecuTorch lets the caller supply their memory): the
          // method owns a buffer of its (upper-bound) size. set_input copies into it, so a program
          // that writes its input never writes the caller's memory.
          ETSCOPE_ASSIGN_OR_RETURN(uint8_t* buffer, own(ti.nbytes, what + " (the buffer of an unplanned input or output)"));
          t.set_data(buffer);
          storage[i] = Storage::kWritable;
        } else if (ti.nbytes == 0) {
          storage[i] = Storage::kWritable;  // nothing to read or write
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

Status Method::Impl::load_instructions(const KernelRegistry& kernels, bool validate_only) {
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
  std::vector<std::string> delegate_calls;
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
          step.kernel = kernels.find(step.op_name);
          step.event_name = step.kernel != nullptr && step.kernel->named_by_operator ? step.op_name : native_call_name(op);
          if (step.kernel == nullptr) {
            if (validate_only) break;
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
        case InstructionKind::kDelegateCall: {
          const Delegate& d = plan->delegates[static_cast<size_t>(in.delegate_index)];
          step.a = -1;  // no delegate of etscope's: another engine executes it (validate_only)
          if (d.id != xnn::kBackendId && validate_only) break;
          if (d.id != xnn::kBackendId) {
            // Collected with the missing kernels: one refusal names everything the program lacks.
            delegate_calls.push_back("instruction " + std::to_string(ii) + " calls the '" + d.id + "' delegate");
            break;
          }
          step.op_name = d.id;
          const std::string at = where() + ": instruction " + std::to_string(ii) + " (delegate " +
                                 std::to_string(in.delegate_index) + ")";
          auto reserve_fn = [this](uint64_t n, const std::string& what) { return reserve(n, what); };
          // The delegate's initialisation, timed in the load block as the ExecuTorch engine times
          // ExecuTorch's (core/event_names.h kDelegateInit).
          const EventHandle init_event =
              tracer != nullptr ? tracer->start_profiling(events::kDelegateInit.data(), static_cast<int32_t>(ci),
                                                     static_cast<uint32_t>(events::delegate_init_instruction_id(static_cast<uint32_t>(ii))))
                                : kNoEvent;
          auto loaded = xnnpack::XnnpackDelegate::load(*program, d, {arg_pool.data() + step.arg_offset, step.arg_count}, reserve_fn, at,
                                                        emulate_quantization, parallel.get(), xnn_workspace, matrix_tiles);
          if (tracer != nullptr) tracer->end_profiling(init_event);
          // A graph etscope cannot execute yet is another engine's to run; a corrupt one is refused.
          if (!loaded.ok() && validate_only && loaded.error().code() == ErrorCode::kNotSupported) break;
          if (!loaded.ok()) return loaded.error();
          std::unique_ptr<xnnpack::XnnpackDelegate> x = std::move(loaded).value();
          step.a = static_cast<int32_t>(delegates.size());
          delegates.push_back(std::move(x));
          break;
        }
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
  if (!missing.empty() || !delegate_calls.empty()) {
    std::string text;
    if (!missing.empty()) {
      text = "missing kernels: ";
      for (size_t i = 0; i < missing.size(); ++i) text += (i ? ", " : "") + missing[i];
    }
    if (!delegate_calls.empty()) {
      text += text.empty() ? "" : "; ";
      for (size_t i = 0; i < delegate_calls.size(); ++i) text += (i ? ", " : "") + delegate_calls[i];
      text += "; etscope's runtime executes only XNNPACK delegates (export without that partitioner to run it here)";
    }
    return Error(ErrorCode::kNotSupported, where() + ": " + text);
  }
  if (validate_only) return ok_status();
  scratch_bytes = std::max(scratch_bytes, fold_transposes());
  ETSCOPE_TRY(reserve(scratch_bytes, where() + ": kernel scratch space"));
  if (!scratch.allocate(scratch_bytes)) {
    return Error(ErrorCode::kOutOfResources, where() + ": kernel scratch space: cannot allocate " + exact_bytes_text(scratch_bytes));
  }
  return ok_status();
}

// ---------------------------------------------------------------------------------------------
// [load: folded transposes] A 2-D transpose (permute_copy with dims [1, 0], t_copy,
// transpose_copy of the two dimensions) feeding matrix products (mm, addmm; float32/float64) is
// folded into them: each product reads the transpose's input through its kernel's transposed
// variant (kernels::transposed_product_kernel; after an even number of transposes, as stored),
// and a transpose nobody else reads is skipped. The exported training step transposes each
// linear weight twice per step and each activation gradient once, to feed mm; a portable
// program's linear transposes its weight on every call. Only where it changes no value: every
// transpose on the way is a kernel step of the product's chain before it, and no instruction from
// the first transpose up to the product (the product's own outputs included) writes bytes of the
// tensor the product now reads; a skipped transpose's result is read by nothing else (no other
// kernel, delegate, move, jump, free, program input or output). execute() takes the folded steps
// only when nothing looks inside (no instruction hook, no intermediate-output logging).
// Identity copies (alias_copy) fold the same way into any kernel that reads them (below).
// Returns the scratch bytes the folded kernels need.
size_t Method::Impl::fold_transposes() {
  struct Transpose {
    size_t chain = 0, step = 0;
    int32_t input = -1;
    int32_t reads = -1;  // the value it reads when folded: its input, or a source it copies
    bool moved = false;  // copies its input as it is, for the transpose after it (never skipped)
    bool identity = false;  // an alias_copy: a copy of its input, same dtype and shape
  };
  std::map<int32_t, Transpose> transposes;  // by output value (identity copies too)
  // Per chain and step, a kernel step's arguments split into what it reads, mutates and writes;
  // empty for other steps, which writes_between does not fold across anyway.
  std::vector<std::vector<KernelArgs>> splits(chains.size());
  std::vector<uint32_t> reads(values.size(), 0);
  std::vector<uint8_t> pinned(values.size(), 0);
  for (int32_t v : plan->inputs) pinned[static_cast<size_t>(v)] = 1;
  for (int32_t v : plan->outputs) pinned[static_cast<size_t>(v)] = 1;
  auto is_tensor = [&](int32_t v) {
    const EValue& e = values[static_cast<size_t>(v)];
    return e.tag == Tag::kTensor && e.tensor != nullptr;
  };
  auto is_2d = [&](int32_t v) { return is_tensor(v) && values[static_cast<size_t>(v)].tensor->dim() == 2; };
  auto int_at = [&](int32_t v, int64_t* out) {
    const EValue& e = values[static_cast<size_t>(v)];
    if (e.tag != Tag::kInt) return false;
    *out = e.scalar.i;
    return true;
  };
  for (size_t c = 0; c < chains.size(); ++c) {
    splits[c].resize(chains[c].size());
    for (size_t i = 0; i < chains[c].size(); ++i) {
      const Step& st = chains[c][i];
      const Instruction& in = plan->chains[c].instructions[i];
      if (st.kind != InstructionKind::kKernelCall || st.kernel == nullptr) {
        for (int32_t v : in.args) pinned[static_cast<size_t>(v)] = 1;
        if (st.a >= 0 && static_cast<size_t>(st.a) < values.size() && st.kind != InstructionKind::kDelegateCall) pinned[static_cast<size_t>(st.a)] = 1;
        if (st.b >= 0 && static_cast<size_t>(st.b) < values.size() && st.kind == InstructionKind::kMoveCall) pinned[static_cast<size_t>(st.b)] = 1;
        continue;
      }
      const KernelArgs& split = splits[c][i] = split_kernel_args(*plan, in);
      for (int32_t v : split.inputs) ++reads[static_cast<size_t>(v)];
      for (int32_t v : split.mutated) pinned[static_cast<size_t>(v)] = 1;
      // An identity copy (alias_copy of a tensor into one of its dtype and shape)?
      if (st.op_name == "aten::alias_copy.out" && split.outputs.size() == 1 && !in.args.empty() && is_tensor(in.args[0]) &&
          is_tensor(split.outputs[0])) {
        const TensorImpl* a = values[static_cast<size_t>(in.args[0])].tensor;
        const TensorImpl* b = values[static_cast<size_t>(split.outputs[0])].tensor;
        if (a->dtype() == b->dtype() && std::equal(a->sizes().begin(), a->sizes().end(), b->sizes().begin(), b->sizes().end())) {
          transposes[split.outputs[0]] = Transpose{c, i, in.args[0], in.args[0], false, true};
        }
        continue;
      }
      // Is this step a 2-D transpose? Its input and its single output.
      if (split.outputs.size() != 1 || in.args.empty() || !is_2d(in.args[0]) || !is_2d(split.outputs[0])) continue;
      bool swap = false;
      if (st.op_name == "aten::permute_copy.out" && in.args.size() >= 2) {
        const EValue& dims = values[static_cast<size_t>(in.args[1])];
        swap = dims.tag == Tag::kIntList && dims.int_list.size() == 2 && dims.int_list[0] != nullptr &&
               dims.int_list[1] != nullptr && dims.int_list[0]->scalar.i == 1 && dims.int_list[1]->scalar.i == 0;
      } else if (st.op_name == "aten::t_copy.out") {
        swap = true;
      } else if (st.op_name == "aten::transpose_copy.int_out" && in.args.size() >= 3) {
        int64_t d0 = 0, d1 = 0;
        swap = int_at(in.args[1], &d0) && int_at(in.args[2], &d1) && ((d0 + 2) % 2) != ((d1 + 2) % 2) &&
               d0 >= -2 && d0 <= 1 && d1 >= -2 && d1 <= 1;
      }
      if (swap) transposes[split.outputs[0]] = Transpose{c, i, in.args[0], in.args[0]};
    }
  }
  // The bytes a tensor value occupies, for the overlap test.
  auto extent = [&](int32_t v, uintptr_t* lo, uintptr_t* hi) {
    const EValue& e = values[static_cast<size_t>(v)];
    if (e.tag != Tag::kTensor || e.tensor == nullptr || e.tensor->data() == nullptr) return false;
    *lo = reinterpret_cast<uintptr_t>(e.tensor->data());
    *hi = *lo + std::max(e.tensor->capacity(), e.tensor->nbytes());
    return true;
  };
  auto writes_between = [&](size_t c, size_t first, size_t last, int32_t v) {
    uintptr_t lo = 0, hi = 0;
    if (!extent(v, &lo, &hi)) return true;
    for (size_t i = first; i <= last; ++i) {
      const Step& st = chains[c][i];
      if (st.kind != InstructionKind::kKernelCall) return true;  // moves, jumps, delegates: not folded across
      for (const std::vector<int32_t>* vs : {&splits[c][i].outputs, &splits[c][i].mutated}) {
        for (int32_t o : *vs) {
          uintptr_t olo = 0, ohi = 0;
          if (extent(o, &olo, &ohi) && olo < hi && lo < ohi) return true;
        }
      }
    }
    return false;
  };
  std::vector<uint32_t> folded_reads(values.size(), 0);  // reads a folded product no longer makes
  std::vector<uint32_t> new_reads(values.size(), 0);     // reads a folded product makes instead
  size_t scratch_bytes = 0;
  // Gives step (c, i) `kernel` on its arguments with those at `position` replaced by `value`, and
  // counts the reads that moves.
  auto fold = [&](size_t c, size_t i, const Kernel* kernel, const std::vector<std::pair<size_t, int32_t>>& replaced) {
    Step& st = chains[c][i];
    const Instruction& in = plan->chains[c].instructions[i];
    st.folded_kernel = kernel;
    st.folded_arg_offset = static_cast<uint32_t>(arg_pool.size());
    for (int32_t v : in.args) arg_pool.push_back(&values[static_cast<size_t>(v)]);
    for (const auto& [position, value] : replaced) {
      const int32_t old_value = in.args[position];
      if (value == old_value) continue;
      arg_pool[st.folded_arg_offset + position] = &values[static_cast<size_t>(value)];
      ++folded_reads[static_cast<size_t>(old_value)];
      ++new_reads[static_cast<size_t>(value)];
    }
    if (kernel->scratch != nullptr) {
      scratch_bytes = std::max(scratch_bytes, kernel->scratch({arg_pool.data() + st.folded_arg_offset, st.arg_count}));
    }
  };
  for (size_t c = 0; c < chains.size(); ++c) {
    for (size_t i = 0; i < chains[c].size(); ++i) {
      Step& st = chains[c][i];
      if (st.kind != InstructionKind::kKernelCall || st.kernel == nullptr) continue;
      const bool mm = st.op_name == "aten::mm.out", addmm = st.op_name == "aten::addmm.out";
      if (!mm && !addmm) continue;
      const Instruction& in = plan->chains[c].instructions[i];
      const size_t first_operand = addmm ? 1 : 0;
      if (in.args.size() < first_operand + 2) continue;
      int32_t operand[2];
      bool trans[2] = {false, false};
      bool changed = false;
      for (size_t k = 0; k < 2; ++k) {
        int32_t v = in.args[first_operand + k];
        operand[k] = v;
        size_t reader = i;  // the step that reads v
        for (int depth = 0; depth < 4; ++depth) {
          auto t = transposes.find(v);
          if (t == transposes.end() || t->second.identity || t->second.chain != c || t->second.step >= reader) break;
          // The transpose must be what v holds when it is read: nothing writes v in between.
          if (t->second.step + 1 < reader && writes_between(c, t->second.step + 1, reader - 1, v)) break;
          const int32_t base = t->second.input;
          const EValue& be = values[static_cast<size_t>(base)];
          if (be.tag != Tag::kTensor || (be.tensor->dtype() != ScalarType::kFloat && be.tensor->dtype() != ScalarType::kDouble)) break;
          if (writes_between(c, t->second.step + 1, i, base)) break;
          reader = t->second.step;
          v = base;
          trans[k] = !trans[k];
          changed = true;
          operand[k] = v;
        }
      }
      if (!changed) continue;
      const Kernel* kernel = kernels::transposed_product_kernel(st.op_name, trans[0], trans[1]);
      if (kernel == nullptr) continue;
      fold(c, i, kernel, {{first_operand, operand[0]}, {first_operand + 1, operand[1]}});
    }
  }
  // A transpose of a transpose copies the first one's input instead (a program output of the
  // exported backward: a weight gradient transposed twice).
  for (auto& [out, t2] : transposes) {
    if (t2.moved || t2.identity) continue;
    auto t1 = transposes.find(t2.input);
    if (t1 == transposes.end() || t1->second.identity || t1->second.chain != t2.chain || t1->second.step >= t2.step) continue;
    const int32_t source = t1->second.input;
    const EValue& se = values[static_cast<size_t>(source)];
    const EValue& oe = values[static_cast<size_t>(out)];
    if (se.tag != Tag::kTensor || oe.tag != Tag::kTensor || se.tensor->dtype() != oe.tensor->dtype()) continue;
    if (t1->second.step + 1 < t2.step && writes_between(t2.chain, t1->second.step + 1, t2.step - 1, t2.input)) continue;
    if (!writes_between(t2.chain, t1->second.step + 1, t2.step, source)) {
      fold(t2.chain, t2.step, kernels::transposed_twice_kernel(), {{0, source}});
      t2.reads = source;
      continue;
    }
    // The source's memory is reused before the second transpose (the planner gives a dead
    // tensor's bytes to the next ones): then the first transpose copies its input's bytes as they
    // are and the second copies them on, two copies instead of two transposes. Only when the
    // first's output is read by the second alone (no other step, no folded product, not pinned).
    const size_t mid = static_cast<size_t>(t2.input);
    Step& first = chains[t1->second.chain][t1->second.step];
    if (pinned[mid] || reads[mid] != 1 || new_reads[mid] != 0 || first.elided || first.folded_kernel != nullptr) continue;
    fold(t1->second.chain, t1->second.step, kernels::flat_copy_kernel(), {});
    fold(t2.chain, t2.step, kernels::flat_copy_kernel(), {});
    t1->second.moved = true;
  }
  // A kernel reading an identity copy (alias_copy, or a chain of them) reads the copied value
  // instead, under the products' rule: nothing writes the copy from its copy step to the reader,
  // nor the value it copies from that step to the reader (the reader's own outputs included).
  // The exported training step copies each activation twice before the ReLU backward's compare.
  for (size_t c = 0; c < chains.size(); ++c) {
    for (size_t i = 0; i < chains[c].size(); ++i) {
      Step& st = chains[c][i];
      if (st.kind != InstructionKind::kKernelCall || st.kernel == nullptr || st.folded_kernel != nullptr) continue;
      const Instruction& in = plan->chains[c].instructions[i];
      const KernelArgs& split = splits[c][i];
      std::vector<std::pair<size_t, int32_t>> replaced;
      for (size_t k = 0; k < in.args.size(); ++k) {
        int32_t v = in.args[k];
        if (std::find(split.inputs.begin(), split.inputs.end(), v) == split.inputs.end() ||
            std::find(split.mutated.begin(), split.mutated.end(), v) != split.mutated.end()) {
          continue;
        }
        const int32_t read_as = v;
        size_t reader = i;
        for (int depth = 0; depth < 4; ++depth) {
          auto t = transposes.find(v);
          if (t == transposes.end() || !t->second.identity || t->second.chain != c || t->second.step >= reader) break;
          if (t->second.step + 1 < reader && writes_between(c, t->second.step + 1, reader - 1, v)) break;
          if (writes_between(c, t->second.step + 1, i, t->second.input)) break;
          reader = t->second.step;
          v = t->second.input;
        }
        if (v != read_as) replaced.emplace_back(k, v);
      }
      if (replaced.empty()) continue;
      fold(c, i, st.kernel, replaced);
      // A copy that now copies from further up reads that value when it is skipped.
      if (split.outputs.size() == 1) {
        auto self = transposes.find(split.outputs[0]);
        if (self != transposes.end() && self->second.step == i && self->second.chain == c && replaced[0].first == 0) {
          self->second.reads = replaced[0].second;
        }
      }
    }
  }
  // Skip the transposes whose results nothing reads any more (a transpose read only by skipped
  // transposes is skipped too: repeat until nothing changes).
  for (bool again = true; again;) {
    again = false;
    for (auto& [out, t] : transposes) {
      Step& st = chains[t.chain][t.step];
      const size_t o = static_cast<size_t>(out);
      if (st.elided || t.moved || pinned[o] || reads[o] + new_reads[o] != folded_reads[o]) continue;
      st.elided = true;
      ++folded_reads[static_cast<size_t>(t.reads)];
      again = true;
    }
  }
  return scratch_bytes;
}

// ---------------------------------------------------------------------------------------------
// [load: checks] Everything a kernel will trust is checked here, once: a kernel can then
// assume that the tensors it reads have memory and the ones it writes are writable.

Status Method::Impl::check_inputs() const {
  for (size_t i = 0; i < plan->inputs.size(); ++i) {
    const size_t vi = static_cast<size_t>(plan->inputs[i]);
    if (values[vi].tag == Tag::kTensor && storage[vi] == Storage::kReadOnly) {
      return Error(ErrorCode::kCorrupt, where() + ": input " + std::to_string(i) + " is value " + std::to_string(vi) +
                                            ", a constant of the program; inputs must be writable");
    }
  }
  return ok_status();
}

Status Method::Impl::check_uses() const {
  // Walks each chain in order, following what MoveCalls alias and what FreeCalls release:
  // `alias[v]` is the value whose tensor v holds now.
  std::vector<int32_t> alias(values.size());
  for (size_t c = 0; c < plan->chains.size(); ++c) {
    for (size_t v = 0; v < alias.size(); ++v) alias[v] = static_cast<int32_t>(v);
    std::vector<uint8_t> freed(values.size(), 0);
    const auto& instructions = plan->chains[c].instructions;
    for (size_t ii = 0; ii < instructions.size(); ++ii) {
      const Instruction& in = instructions[ii];
      auto at = [&](const std::string& op) {
        return where() + ": instruction " + std::to_string(ii) + (op.empty() ? "" : " (" + op + ")");
      };
      // One tensor value used by the instruction, read or written.
      auto check_tensor = [&](int32_t value, bool write, const std::string& op) -> Status {
        const size_t owner = static_cast<size_t>(alias[static_cast<size_t>(value)]);
        const TensorImpl* t = values[owner].tag == Tag::kTensor ? values[owner].tensor : nullptr;
        if (t == nullptr) return ok_status();
        const std::string v = "value " + std::to_string(value);
        if (freed[owner]) return Error(ErrorCode::kCorrupt, at(op) + ": uses " + v + " after a FreeCall released it");
        if (storage[owner] == Storage::kNone && t->nbytes() > 0) {
          return Error(ErrorCode::kCorrupt,
                       at(op) + ": " + v + " has no memory (neither planned, nor constant, nor a method input)");
        }
        if (write && storage[owner] == Storage::kReadOnly) {
          return Error(ErrorCode::kCorrupt, at(op) + ": writes " + v + ", a constant of the program");
        }
        return ok_status();
      };
      auto check_value = [&](int32_t value, bool write, const std::string& op) -> Status {
        const EValue& ev = values[static_cast<size_t>(alias[static_cast<size_t>(value)])];
        if (ev.tag == Tag::kTensor) return check_tensor(value, write, op);
        if (ev.tag == Tag::kTensorList || ev.tag == Tag::kOptionalTensorList) {
          for (int32_t item : plan->values[static_cast<size_t>(value)].tensor_list) {
            if (item >= 0) ETSCOPE_TRY(check_tensor(item, write, op));
          }
        }
        return ok_status();
      };
      // The tensors (list items included) of a set of values, as what they alias now.
      auto tensors_of = [&](const auto& ids) {
        std::vector<int32_t> out;
        for (int32_t value : ids) {
          const int32_t owner = alias[static_cast<size_t>(value)];
          const EValue& ev = values[static_cast<size_t>(owner)];
          if (ev.tag == Tag::kTensor) out.push_back(value);
          if (ev.tag == Tag::kTensorList || ev.tag == Tag::kOptionalTensorList) {
            for (int32_t item : plan->values[static_cast<size_t>(value)].tensor_list) {
              if (item >= 0) out.push_back(item);
            }
          }
        }
        return out;
      };
      // What an instruction writes may not share memory with another tensor it reads: the plan
      // must keep tensors that are live together apart (a hostile plan placed a slice's output
      // inside its input). A tensor that is both read and written is the instruction's own
      // business: an out argument listed among the arguments, an in-place copy_ of a mutable
      // buffer, add(x, y, out=x); kernels copy such memory with memmove.
      auto check_apart = [&](const std::vector<int32_t>& reads, const std::vector<int32_t>& writes, const std::string& op) -> Status {
        for (int32_t w : writes) {
          const int32_t wo = alias[static_cast<size_t>(w)];
          const TensorImpl* tw = values[static_cast<size_t>(wo)].tensor;
          if (tw == nullptr || tw->data() == nullptr || tw->capacity() == 0) continue;
          const auto* w0 = static_cast<const uint8_t*>(tw->data());
          for (int32_t r : reads) {
            if (alias[static_cast<size_t>(r)] == wo) continue;
            const TensorImpl* tr = values[static_cast<size_t>(alias[static_cast<size_t>(r)])].tensor;
            if (tr == nullptr || tr->data() == nullptr || tr->capacity() == 0) continue;
            const auto* r0 = static_cast<const uint8_t*>(tr->data());
            if (w0 < r0 + tr->capacity() && r0 < w0 + tw->capacity()) {
              return Error(ErrorCode::kCorrupt, at(op) + ": writes value " + std::to_string(w) + " into the memory of value " +
                                                    std::to_string(r) + ", which it reads (the memory plan overlaps them)");
            }
          }
        }
        return ok_status();
      };
      switch (in.kind) {
        case InstructionKind::kKernelCall: {
          const std::string op = plan->operators[static_cast<size_t>(in.op_index)].qualified_name();
          const KernelArgs split = split_kernel_args(*plan, in);
          for (int32_t a : split.inputs) ETSCOPE_TRY(check_value(a, false, op));
          for (int32_t o : split.outputs) ETSCOPE_TRY(check_value(o, true, op));
          for (int32_t m : split.mutated) ETSCOPE_TRY(check_value(m, true, op));
          if (op == "executorch_prim::et_view.default") {
            // A view writes no bytes: its output becomes the input's memory, as after a MoveCall.
            if (split.inputs.size() >= 1 && split.outputs.size() == 1 &&
                values[static_cast<size_t>(alias[static_cast<size_t>(split.inputs[0])])].tag == Tag::kTensor) {
              alias[static_cast<size_t>(split.outputs[0])] = alias[static_cast<size_t>(split.inputs[0])];
            }
            break;
          }
          std::vector<int32_t> written = split.outputs;
          written.insert(written.end(), split.mutated.begin(), split.mutated.end());
          ETSCOPE_TRY(check_apart(tensors_of(split.inputs), tensors_of(written), op));
          break;
        }
        case InstructionKind::kMoveCall: {
          ETSCOPE_TRY(check_value(in.move_from, false, "MoveCall"));
          const Tag from = values[static_cast<size_t>(alias[static_cast<size_t>(in.move_from)])].tag;
          const Tag to = values[static_cast<size_t>(in.move_to)].tag;
          if (from != to) {
            return Error(ErrorCode::kCorrupt, at("MoveCall") + ": moves a " + to_string(from) + " into a " + to_string(to));
          }
          alias[static_cast<size_t>(in.move_to)] = alias[static_cast<size_t>(in.move_from)];
          break;
        }
        case InstructionKind::kFree: {
          const size_t owner = static_cast<size_t>(alias[static_cast<size_t>(in.free_value)]);
          if (storage[owner] == Storage::kReadOnly) {
            return Error(ErrorCode::kCorrupt, at("FreeCall") + ": frees value " + std::to_string(in.free_value) +
                                                  ", a constant of the program");
          }
          freed[owner] = 1;
          break;
        }
        case InstructionKind::kJumpFalse:
          ETSCOPE_TRY(check_value(in.cond_value, false, "JumpFalse"));
          break;
        case InstructionKind::kDelegateCall: {
          // A delegate etscope did not load (validate_only): its engine owns what it touches.
          if (chains[c][ii].a < 0) break;
          const xnnpack::XnnpackDelegate& d = *delegates[static_cast<size_t>(chains[c][ii].a)];
          for (uint32_t a : d.read_args()) ETSCOPE_TRY(check_value(in.args[a], false, "DELEGATE_CALL"));
          for (uint32_t a : d.written_args()) ETSCOPE_TRY(check_value(in.args[a], true, "DELEGATE_CALL"));
          std::vector<int32_t> reads, writes;
          for (uint32_t a : d.read_args()) reads.push_back(in.args[a]);
          for (uint32_t a : d.written_args()) writes.push_back(in.args[a]);
          ETSCOPE_TRY(check_apart(tensors_of(reads), tensors_of(writes), "DELEGATE_CALL"));
          break;
        }
      }
    }
  }
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
  impl->emulate_quantization = options.emulate_quantization;
  impl->matrix_tiles = options.matrix_tiles;
  if (options.threads > 1 && !options.validate_only) impl->parallel = std::make_unique<Parallel>(options.threads, options.min_split_ops);
  {
    MethodScope init_scope(tracer, events::kMethodInit.data());
    ETSCOPE_TRY(impl->load_values(options));
    ETSCOPE_TRY(impl->load_instructions(options.kernels ? *options.kernels : KernelRegistry::portable(), options.validate_only));
    impl->validate_only = options.validate_only;
    ETSCOPE_TRY(impl->check_inputs());
    ETSCOPE_TRY(impl->check_uses());
  }
  return std::unique_ptr<Method>(new Method(std::move(impl)));
}

const std::string& Method::name() const { return impl_->plan->name; }
uint32_t Method::threads() const { return impl_->parallel ? impl_->parallel->threads() : 1; }
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
  // A bool holds 0 or 1; any other byte would be undefined behaviour in every kernel that loads it.
  if (t.dtype() == ScalarType::kBool) {
    const auto* end = data.data() + t.nbytes();
    const auto* bad = std::find_if(data.data(), end, [](uint8_t b) { return b > 1; });
    if (bad != end) {
      return make_error(ErrorCode::kInvalidArgument, "%s: bool element %zu holds the byte %u (a bool must be 0 or 1)",
                        what.c_str(), static_cast<size_t>(bad - data.data()), static_cast<unsigned>(*bad));
    }
  }
  // Every tensor input has memory of its own by now (planned, or a buffer the method owns), and
  // the copy keeps the caller's bytes out of the program's reach.
  if (t.nbytes() > 0) {
    if (t.data() == nullptr) return Error(ErrorCode::kInvalidArgument, what + ": the tensor has no memory to hold it");
    std::memcpy(t.data(), data.data(), t.nbytes());
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

void Method::set_instruction_hook(InstructionHook hook) { impl_->hook = std::move(hook); }
void Method::set_delegate_value_hook(DelegateValueHook hook) { impl_->delegate_hook = std::move(hook); }

template <typename F>
void Method::Impl::for_each_delegate(F f) const {
  for (size_t c = 0; c < chains.size(); ++c) {
    for (size_t i = 0; i < chains[c].size(); ++i) {
      const Step& step = chains[c][i];
      if (step.kind == InstructionKind::kDelegateCall && step.a >= 0) f(c, i, *delegates[static_cast<size_t>(step.a)]);
    }
  }
}

std::vector<QuantizerSite> Method::quantizers() const {
  std::vector<QuantizerSite> out;
  if (!impl_->emulate_quantization) return out;
  impl_->for_each_delegate([&](size_t c, size_t i, const xnnpack::XnnpackDelegate& d) {
    for (auto& q : d.quantizers()) {
      out.push_back({c, i, q.node, q.debug_handle, q.event_debug_handle, q.event, std::move(q.op), q.dynamic, q.elements, q.from_float,
                     std::move(q.reader_debug_handles), std::move(q.filter_shape)});
    }
  });
  return out;
}

Status Method::set_float_filter(size_t quantizer, std::span<const float> values) {
  if (!impl_->emulate_quantization) {
    return Error(ErrorCode::kInvalidArgument, impl_->where() + ": float filters are set only in a method loaded to emulate quantization");
  }
  size_t first = 0;
  std::optional<Status> set;
  impl_->for_each_delegate([&](size_t, size_t, xnnpack::XnnpackDelegate& d) {
    const size_t n = d.quantizer_count();
    if (!set && quantizer < first + n) set = d.set_float_filter(quantizer - first, values);
    first += n;
  });
  if (!set) return Error(ErrorCode::kInvalidArgument, impl_->where() + ": no quantizer " + std::to_string(quantizer));
  return *set;
}

std::vector<DelegateConstant> Method::delegate_float_constants() const {
  std::vector<DelegateConstant> out;
  impl_->for_each_delegate([&](size_t, size_t, const xnnpack::XnnpackDelegate& d) {
    for (auto& c : d.float_constants()) out.push_back({std::move(c.shape), std::move(c.values)});
  });
  return out;
}

std::vector<uint64_t> Method::delegate_logged_bytes() const {
  std::vector<uint64_t> out;
  impl_->for_each_delegate([&](size_t, size_t, const xnnpack::XnnpackDelegate& d) {
    for (uint64_t b : d.logged_bytes()) out.push_back(b);
  });
  return out;
}

Status Method::set_quantizers(std::span<const uint8_t> on) {
  if (!impl_->emulate_quantization) {
    return Error(ErrorCode::kInvalidArgument, impl_->where() + ": quantizers are switched only in a method loaded to emulate quantization");
  }
  size_t total = 0;
  impl_->for_each_delegate([&](size_t, size_t, const xnnpack::XnnpackDelegate& d) { total += d.quantizer_count(); });
  if (on.size() != total) {
    return Error(ErrorCode::kInvalidArgument, impl_->where() + ": " + std::to_string(on.size()) + " quantizer flags for " +
                                                  std::to_string(total) + " quantizers");
  }
  size_t k = 0;
  impl_->for_each_delegate([&](size_t, size_t, xnnpack::XnnpackDelegate& d) {
    const size_t n = d.quantizer_count();
    d.set_quantizers(on.subspan(k, n));
    k += n;
  });
  return ok_status();
}

Status Method::overwrite_tensor(int32_t value, std::span<const uint8_t> bytes) {
  Impl& m = *impl_;
  const std::string what = m.where() + " value " + std::to_string(value);
  if (value < 0 || static_cast<size_t>(value) >= m.values.size()) return Error(ErrorCode::kInvalidArgument, what + ": out of range");
  const EValue& ev = m.values[static_cast<size_t>(value)];
  if (ev.tag != Tag::kTensor || ev.tensor == nullptr) return Error(ErrorCode::kInvalidArgument, what + ": not a tensor");
  if (m.storage[static_cast<size_t>(value)] != Storage::kWritable) {
    return Error(ErrorCode::kInvalidArgument, what + ": has no writable memory of its own (a constant, or no memory)");
  }
  TensorImpl& t = *ev.tensor;
  if (!t.contiguous()) return Error(ErrorCode::kInvalidArgument, what + ": is not in row-major dim order");
  if (t.nbytes() != bytes.size() || (t.nbytes() > 0 && t.data() == nullptr)) {
    return make_error(ErrorCode::kInvalidArgument, "%s: holds %zu bytes, not %zu", what.c_str(), static_cast<size_t>(t.nbytes()), bytes.size());
  }
  if (!bytes.empty()) std::memcpy(t.data(), bytes.data(), bytes.size());
  return ok_status();
}

// ---------------------------------------------------------------------------------------------
// [execute]

Status Method::execute(const char* block) {
  Impl& m = *impl_;
  if (m.validate_only) return Error(ErrorCode::kInvalidArgument, m.where() + ": loaded to be validated, not run");
  EventTracer* tracer = m.tracer;
  EventHandle exec_event = 0;
  if (tracer != nullptr) {
    tracer->create_event_block(block);
    exec_event = tracer->start_profiling(events::kMethodExecute.data(), -1, 0);
  }
  for (size_t i = 0; i < m.input_set.size(); ++i) {
    if (!m.input_set[i]) return make_error(ErrorCode::kInvalidArgument, "%s: input %zu has not been set", m.where().c_str(), i);
  }
  for (int32_t in : m.plan->inputs) log_program_input(tracer, m.values[static_cast<size_t>(in)]);
  uint64_t executed = 0;
  // Folded transposes (fold_transposes) only while nothing looks at the values in between.
  const bool fold = !m.hook && (tracer == nullptr || tracer->debug_level() < DebugLevel::kIntermediateOutputs);
  for (size_t c = 0; c < m.chains.size(); ++c) {
    const std::vector<Step>& steps = m.chains[c];
    size_t idx = 0;
    while (idx < steps.size()) {
      if (++executed > kMaxInstructions) {
        return Error(ErrorCode::kCorrupt, m.where() + ": more than 10,000,000 instructions in one execution (a jump loop?)");
      }
      const Step& step = steps[idx];
      if (m.hook && (step.kind == InstructionKind::kKernelCall || step.kind == InstructionKind::kDelegateCall)) {
        Status s = m.hook(c, idx);
        if (!s.ok()) return s;
      }
      InstructionScope instruction(tracer, static_cast<int32_t>(c), static_cast<uint32_t>(idx));
      size_t next = idx + 1;
      switch (step.kind) {
        case InstructionKind::kKernelCall: {
          OpScope op_scope(tracer, events::kOperatorCall.data());
          KernelContext ctx({m.scratch.data(), m.scratch.size()});
          const bool folded = fold && step.folded_kernel != nullptr;
          const Kernel& kernel = folded ? *step.folded_kernel : *step.kernel;
          const Args args{m.arg_pool.data() + (folded ? step.folded_arg_offset : step.arg_offset), step.arg_count};
          if (fold && step.elided) {
            // Folded into the products that read it: its events stay, with nothing inside.
            if (step.kernel->codegen_wrapped) {
              OpScope native_scope(tracer, step.event_name.c_str());
            }
          } else if (step.kernel->codegen_wrapped) {
            OpScope native_scope(tracer, step.event_name.c_str());
            kernel.run(ctx, args);
            if (!ctx.failed()) {
              for (uint32_t o = 0; o < step.output_count; ++o) log_intermediate(tracer, *m.output_pool[step.output_offset + o]);
            }
          } else {
            kernel.run(ctx, args);
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
          // Every tensor's memory belongs to the method for its whole life, and load proved that
          // nothing in this pass uses the value after its FreeCall. Releasing the pointer would
          // leave the next execution (or the next set_input) with a tensor without storage.
          OpScope scope(tracer, events::kFreeCall.data());
          break;
        }
        case InstructionKind::kDelegateCall: {
          OpScope scope(tracer, events::kDelegateCall.data());
          const Args args{m.arg_pool.data() + step.arg_offset, step.arg_count};
          xnnpack::XnnpackDelegate::ValueHook values;
          if (m.delegate_hook) {
            values = [&m, c, idx](int32_t handle, std::span<const int64_t> sizes, std::span<float> logical) {
              return m.delegate_hook(c, idx, handle, sizes, logical);
            };
          }
          Status s = m.delegates[static_cast<size_t>(step.a)]->execute(args, tracer, m.delegate_hook ? &values : nullptr);
          if (!s.ok()) return s;
          // As ExecuTorch: every argument is logged, inputs and outputs alike.
          for (EValue* a : args) log_intermediate(tracer, *a);
          break;
        }
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

}  // namespace etscope::runtime
