// XnnpackDelegate: executes one XNNPACK delegate call of a method with etscope's own kernels,
// node by node, so that each node can be timed (and, later, its output logged) under the names
// XNNPACK's profiler gives its operators.
//
// Everything a node will trust is checked at load, once: element types, shapes (each node's
// output shape is recomputed from its inputs and attributes and must equal the declared one),
// that every value a node reads has been written before (or is a constant or a graph input),
// that graph inputs are never written, and that the DelegateCall's arguments are tensors whose
// bytes match the graph's inputs and outputs. Buffers for internal values, float copies of
// constants and scratch are allocated at load; execute() does not allocate.
#pragma once

#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "etscope/core/event_tracer.h"
#include "etscope/core/evalue.h"
#include "etscope/core/result.h"
#include "etscope/formats/program.h"
#include "etscope/formats/xnnpack_payload.h"
#include "etscope/runtime/method.h"
#include "kernels/util/aligned.h"

namespace etscope::runtime {
class Parallel;  // parallel.h
}

namespace etscope::runtime::xnnpack {

struct DelegateState;  // delegate_state.h, private to runtime/src/xnnpack/

/// Takes bytes from the method's memory budget, or explains why it cannot.
using Reserve = std::function<Status(uint64_t bytes, const std::string& what)>;

/// Memory the XNNPACK delegates of one method share for what lives only during a call: the
/// values inside their graphs and the staging buffers of f16, bf16 and int8 arguments. A method
/// runs its delegates one at a time, so the largest one's need is enough for all (ExecuTorch's
/// XNNPACK backend shares one workspace between a method's delegates the same way). Grown only
/// while delegates load; each delegate points its values into it when a call starts.
class Workspace {
 public:
  /// Makes room for `floats` floats, taking what it grows by from `reserve`.
  Status grow(uint64_t floats, const Reserve& reserve, const std::string& what);
  float* data() { return buffer_.data(); }

 private:
  kernels::aligned_vector<float> buffer_;
};

class XnnpackDelegate {
 public:
  /// `args` are the DelegateCall's argument values (graph inputs first, by external id, then
  /// outputs). Errors name `where` (the method and instruction), the node and the value.
  static Result<std::unique_ptr<XnnpackDelegate>> load(const Program& program, const Delegate& delegate,
                                                       std::span<EValue* const> args, const Reserve& reserve,
                                                       const std::string& where, bool emulate_quantization = false,
                                                       const Parallel* parallel = nullptr, std::shared_ptr<Workspace> workspace = nullptr,
                                                       MatrixTiles tiles = MatrixTiles::kAuto);
  ~XnnpackDelegate();

  /// Argument positions the delegate reads and writes (for the method's use checks).
  const std::vector<uint32_t>& read_args() const;
  const std::vector<uint32_t>& written_args() const;

  /// A quantizer of an emulating delegate (load's `emulate_quantization`: every node computes on
  /// floats from dequantized constants, and a layer's quantized output is rounded to its grid
  /// only while its quantizer is on): the layer that computes the output, in graph order.
  struct Quantizer {
    uint32_t node = 0;
    int32_t debug_handle = 0;  ///< The node's (the debug buffer logs its output under it).
    int32_t event_debug_handle = 0;  ///< That of the node naming its event (the operator's output).
    uint32_t event = 0;        ///< The delegate profiling event that times it, in order within a call.
    std::string op;            ///< That event's name.
    bool dynamic = false;      ///< Per-row dynamic quantization (qdint8) instead of static int8.
    uint64_t elements = 0;     ///< Of its output at the declared shape.
    bool from_float = false;   ///< A Convert of a float value: no quantized layer produces it.
    /// Debug handles of the quantized layers that read its values (through reshapes, clamps...).
    std::vector<int32_t> reader_debug_handles;
    /// The shape of the quantized filter of its layer (itself, or the layer a dynamic
    /// quantization feeds); empty when it has none.
    std::vector<int64_t> filter_shape;
  };
  std::vector<Quantizer> quantizers() const;
  size_t quantizer_count() const;
  /// Switches quantizer k on or off (on[k] != 0) for the following executions; all are on after load.
  void set_quantizers(std::span<const uint8_t> on);
  /// While quantizer k is off, its layer computes from `values` (the filter of a float export of
  /// the same model, in this graph's layout) instead of its dequantized int8 filter. Refused
  /// (kInvalidArgument) unless every value is within half a quantization step of the int8 one.
  Status set_float_filter(size_t k, std::span<const float> values);
  /// The delegate's f32 constants (a float program's filters and biases), in value order.
  struct FloatConstant {
    std::vector<int64_t> shape;
    std::vector<float> values;
  };
  std::vector<FloatConstant> float_constants() const;
  /// Bytes of each node output an execution logs at the intermediate level (as floats, at the
  /// declared shapes: the most a dynamic graph's value logs), in the order they are logged.
  std::vector<uint64_t> logged_bytes() const;

  /// Fills `logical` (the node's output in the edge graph's dimension order, of `sizes`) with the
  /// value to continue from, or returns false to keep the computed one. For glass-box
  /// experiments (runtime::Method::DelegateValueHook).
  using ValueHook = std::function<bool(int32_t delegate_debug_handle, std::span<const int64_t> sizes, std::span<float> logical)>;

  /// Runs every node in order; each is one delegate profiling event when `tracer` records.
  /// Delegates sharing a Workspace must not execute at the same time.
  /// With `hook`, after each event's nodes ran (and logged their outputs), every output the
  /// debug buffer logs under a delegate debug handle is replaced by what the hook gives.
  Status execute(std::span<EValue* const> args, EventTracer* tracer, const ValueHook* hook = nullptr);

 private:
  explicit XnnpackDelegate(std::unique_ptr<DelegateState> impl);
  std::unique_ptr<DelegateState> impl_;
};

}  // namespace etscope::runtime::xnnpack
