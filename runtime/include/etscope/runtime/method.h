// Method: one loaded execution plan of a program, ready to execute repeatedly.
//
// Loading does all the work that may allocate or fail on bad data: values are built, arenas are
// allocated and sized from non_const_buffer_sizes (memory ids are 1-based), constants point into
// the program's bytes, external tensors into the .ptd files, initial values are copied into
// planned memory, kernels are resolved (every missing one reported at once), and each
// instruction's scratch space is reserved. execute() then runs without heap allocation.
#pragma once

#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "etscope/formats/tensor_data_file.h"
#include "etscope/formats/program.h"
#include "etscope/core/result.h"
#include "etscope/core/event_names.h"
#include "etscope/core/event_tracer.h"
#include "etscope/core/evalue.h"
#include "etscope/runtime/kernel.h"

namespace etscope::runtime {

/// Whether the etscope engine multiplies integer matrices on Intel AMX tiles
/// (MethodOptions::matrix_tiles): where the CPU and OS offer them (matrix_tiles_available),
/// kAuto for the XNNPACK delegate's dynamically quantized fully connected layers (an LLM's
/// linears) of several rows (a prefill; a decode step's single row streams its filter faster
/// with AVX-512), kOff never, kAlways for every such layer (tests). The sums are integers: the
/// outputs are the same bits whichever unit computes them.
enum class MatrixTiles : uint8_t { kAuto, kOff, kAlways };

/// Whether this build computes the XNNPACK delegate's float softmax and batch matrix products
/// with XNNPACK's own x86-64 AVX-512 arithmetic (the same bits as ExecuTorch's engine on a CPU
/// with AVX-512F): true when the runtime was compiled for AVX-512F; elsewhere they agree with
/// ExecuTorch's within float rounding.
bool xnnpack_float_kernels_as_xnnpack();

struct MethodOptions {
  /// Tensor-data files searched, in order, for external tensors. Must outlive the Method.
  std::vector<const TensorDataFile*> external_data;
  /// Receives the load and execution events; may be null. Must outlive the Method.
  EventTracer* tracer = nullptr;
  /// Kernels to resolve operators against; null means KernelRegistry::portable().
  const KernelRegistry* kernels = nullptr;
  /// Bytes the method may allocate at load (arenas, kernel scratch, buffers of unplanned inputs
  /// and outputs, aligned copies of misaligned constants); 0 means the machine's physical memory.
  /// A program that asks for more fails to load with kOutOfResources.
  uint64_t max_memory = 0;
  /// Load to check, not to run: every check below is made, but operators without an etscope
  /// kernel, delegates of other backends and XNNPACK graphs etscope cannot execute are accepted
  /// (another engine runs the program: ExecuTorch's runtime, after this validation); execute()
  /// refuses. Inputs can still be set (with the same checks), which is how such an engine learns
  /// the shapes its inputs take. No kernel scratch space is allocated.
  bool validate_only = false;
  /// Quantization emulation, for experiments on a quantized program's accuracy (etscope debug
  /// --sensitivity): each XNNPACK layer with a quantized output has a quantizer
  /// (quantizers(), set_quantizers()). A layer whose quantizer is off computes on floats (from
  /// its dequantized filter, or a float export's: set_float_filter) and leaves its output
  /// unrounded; the layers reading it compute on floats too. Everything else runs as without
  /// emulation, so with every quantizer on the outputs are the program's, bit for bit.
  bool emulate_quantization = false;
  /// Threads the method computes with: its own and threads - 1 workers, started at load and
  /// shared by the kernels that split their work (the XNNPACK delegate's convolutions and fully
  /// connected layers). Results are the same for any number of threads.
  uint32_t threads = 1;
  /// With threads: work of fewer operations (multiply-adds, or values converted) than this stays
  /// on the calling thread, where waking a worker (tens of microseconds) would cost more than it
  /// saves. Tests set 0 to split everything.
  int64_t min_split_ops = int64_t{1} << 21;
  MatrixTiles matrix_tiles = MatrixTiles::kAuto;
};

/// A quantizer of an emulating method (MethodOptions::emulate_quantization): the rounding of one
/// XNNPACK layer's quantized output to its grid. Outputs of nodes that only pass the layer's
/// values on (reshapes, clamps, max pooling...) are the same quantizer's.
struct QuantizerSite {
  size_t chain = 0, instruction = 0;  ///< The delegate call (ExecuTorch's instruction id).
  uint32_t node = 0;                  ///< The layer's node in the call's XNNPACK graph.
  int32_t delegate_debug_handle = 0;  ///< The node's debug handle.
  /// The debug handle of the node naming its profiling event (the operator the layer belongs to:
  /// a dynamic quantization's fully connected layer).
  int32_t event_debug_handle = 0;
  uint32_t event = 0;                 ///< The call's delegate profiling event that times the layer, in order.
  std::string op;                     ///< That event's name (XNNPACK's operator name).
  bool dynamic = false;               ///< Per-row dynamic quantization of a layer's input (qdint8), else static int8.
  uint64_t elements = 0;              ///< Of the quantized output, at its declared shape.
  /// A Convert of a float value (the quantization of a float tensor: no quantized layer makes it).
  bool from_float = false;
  /// Debug handles of the quantized layers that read the values (through reshapes, clamps...): a
  /// tensor stays quantized in an export while its producer or one of its readers is.
  std::vector<int32_t> reader_debug_handles;
  /// The quantized filter of its layer (itself, or the layer a dynamic quantization feeds):
  /// its shape, empty when there is none (set_float_filter gives it a float export's).
  std::vector<int64_t> filter_shape;
};

/// An f32 constant of one of a method's XNNPACK delegates (a float program's filters).
struct DelegateConstant {
  std::vector<int64_t> shape;
  std::vector<float> values;  ///< A copy of the file's floats.
};

class Method {
 public:
  /// Loads the plan called `name` of `program` (which must outlive the Method), and checks once
  /// everything kernels later trust: every tensor an instruction reads or writes has memory at
  /// that point (FreeCalls and MoveCalls followed in order), nothing writes a constant, nothing
  /// an instruction writes shares memory with another tensor it reads, inputs are not
  /// constants, planned offsets are aligned for their dtype (misaligned constants are copied),
  /// and all memory fits `max_memory`.
  /// XNNPACK delegate calls run on etscope's kernels (runtime/src/xnnpack/); other backends are refused.
  /// Errors: kNotFound (no such method), kNotSupported (a non-XNNPACK delegate call, an XNNPACK node
  /// kind or element type not executed yet, unbounded dynamic shapes,
  /// missing kernels: "missing kernels: a, b"), kCorrupt (invalid program, naming the
  /// instruction, operator and value), kInvalidArgument (external data missing or with another
  /// layout), kOutOfResources (memory beyond the limit). Messages name the program file.
  static Result<std::unique_ptr<Method>> load(const Program& program, const std::string& name,
                                              const MethodOptions& options = {});
  ~Method();
  Method(const Method&) = delete;
  Method& operator=(const Method&) = delete;

  const std::string& name() const;
  /// Threads it computes with (MethodOptions::threads).
  uint32_t threads() const;
  size_t num_inputs() const;
  size_t num_outputs() const;
  /// The input's value (its tensor's dtype and shape tell what set_input expects).
  const EValue& input(size_t i) const;
  const EValue& output(size_t i) const;

  /// Sets tensor input `i` from dense bytes in the input's dtype and `sizes` (empty: keep the
  /// planned sizes). The bytes are copied into the input's own memory (planned, or a buffer the
  /// method allocated for an unplanned input), so `data` need not outlive the call and a program
  /// that writes its input never writes the caller's memory. Errors: index out of range, not a
  /// tensor, wrong byte count or sizes not allowed by the tensor.
  ///
  /// As in ExecuTorch, an input stays "set" across executions, but the memory plan may reuse a
  /// planned input's bytes after its last use: set inputs again before each execute() unless
  /// the program is known not to (ExecuTorch's Module::forward does the same).
  Status set_input(size_t i, std::span<const uint8_t> data, std::span<const int64_t> sizes = {});
  /// Sets a scalar input (Int, Double or Bool); it must equal the value the program was traced with.
  Status set_scalar_input(size_t i, const EValue& value);

  /// Runs every chain once, recorded by the tracer (if any) in a run block named `block`:
  /// "Execute" as ExecuTorch names every execution, or events::kBlockWarmup for executions that
  /// reports should leave out. Fails if an input is unset or a kernel fails; the message names the
  /// instruction and operator.
  Status execute(const char* block = events::kBlockExecute.data());

  /// Number of instructions over all chains.
  size_t instruction_count() const;

  /// Called by execute() before each kernel or delegate call with its chain and instruction
  /// index (ExecuTorch's instruction id), outside the instruction's events; an error stops the
  /// execution. For glass-box experiments that change what an instruction reads (etscope debug's
  /// local gaps: inputs replaced by reference values, numerics/). An empty function removes it.
  using InstructionHook = std::function<Status(size_t chain, size_t instruction)>;
  void set_instruction_hook(InstructionHook hook);
  /// Inside an XNNPACK delegate call (chain, instruction): after the nodes of each operator ran,
  /// each output the debug buffer logs under a delegate debug handle is offered to the hook,
  /// which may fill `logical` (the output in the edge graph's dimension order, of `sizes`) with
  /// the value the next operators compute from, and returns whether it did. An empty function
  /// removes it.
  using DelegateValueHook = std::function<bool(size_t chain, size_t instruction, int32_t delegate_debug_handle,
                                               std::span<const int64_t> sizes, std::span<float> logical)>;
  void set_delegate_value_hook(DelegateValueHook hook);
  /// The quantizers of an emulating method, by delegate call then node; empty otherwise.
  std::vector<QuantizerSite> quantizers() const;
  /// Switches each quantizer on (non-zero) or off for the following executions, one flag per
  /// quantizers() entry. Errors (kInvalidArgument): not emulating, another number of flags.
  Status set_quantizers(std::span<const uint8_t> on);
  /// While quantizer k is off, its layer computes from `values` (a float export's filter of the
  /// same layer, in XNNPACK's layout) instead of its dequantized int8 filter. Errors
  /// (kInvalidArgument): not emulating, no such quantizer or filter, another size, a value not
  /// within half a quantization step of the int8 filter's (another layer, another model).
  Status set_float_filter(size_t quantizer, std::span<const float> values);
  /// The f32 constants of the method's XNNPACK delegates, by call then value.
  std::vector<DelegateConstant> delegate_float_constants() const;
  /// Bytes of each value the method's XNNPACK delegate calls log inside their graphs per
  /// execution at the intermediate level (every node's output under its debug handle, as floats
  /// at its declared shape), by call then value. The memory plan does not describe them.
  std::vector<uint64_t> delegate_logged_bytes() const;

  /// Overwrites the bytes of tensor value `value` (an index into the plan's values) with
  /// `bytes`, for instruction hooks. Refused (kInvalidArgument, naming the value) unless it is a
  /// tensor with writable memory of its own (planned or owned: never a constant), of row-major
  /// dim order and of exactly bytes.size() bytes at its current sizes.
  Status overwrite_tensor(int32_t value, std::span<const uint8_t> bytes);

 private:
  struct Impl;
  explicit Method(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace etscope::runtime
