// Program: a parsed, validated ExecuTorch program (.pte), independent of the flatbuffers code.
//
// PteReader builds it; the runtime, the memory planner, the inspector and the viewer read it.
// Everything an index refers to has been range-checked by the reader, so consumers may index
// `values`, `operators`, `delegates` and `segments` with the numbers stored here without
// checking again. Tensor bytes are not copied: constants are described by absolute ranges
// into the Blob the program was read from, which the Program keeps alive.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "etscope/formats/blob.h"
#include "etscope/core/file_range.h"
#include "etscope/core/result.h"
#include "etscope/core/scalar_type.h"

namespace etscope {

/// The optional `eh00` header that precedes segment data (formats.md §2.3).
struct ExtendedHeader {
  uint32_t length = 0;               ///< 24 (before ExecuTorch 1.0) or 32.
  uint64_t program_size = 0;         ///< End of the FlatBuffer region.
  uint64_t segment_base_offset = 0;  ///< Absolute offset of segment 0's base.
  uint64_t segment_data_size = 0;    ///< 0 when unknown (24-byte header).
};

enum class ShapeDynamism : uint8_t { kStatic = 0, kDynamicBound = 1, kDynamicUnbound = 2 };

/// Where a tensor's data comes from, following the runtime's rules in order (formats.md §2.8).
enum class TensorDataKind : uint8_t {
  kConstant,          ///< Constant segment or legacy constant_buffer; `constant` is its range.
  kExternalConstant,  ///< Lives in a .ptd under `fqn`, used in place.
  kExternalMutable,   ///< Planned; initial value copied from a .ptd under `fqn`.
  kPlannedWithInit,   ///< Planned; initial value copied from the mutable-data segment.
  kPlanned,           ///< Planned; no initial value.
  kRuntimeSupplied,   ///< Neither planned nor constant: set at run time (unplanned inputs).
};

const char* to_string(TensorDataKind kind);

/// Placement of a memory-planned tensor.
struct Allocation {
  uint32_t memory_id = 0;  ///< 1-based arena id, as in the file.
  uint64_t offset = 0;     ///< Byte offset inside the arena.
};

struct TensorInfo {
  ScalarType dtype = ScalarType::kFloat;
  std::vector<int32_t> sizes;
  std::vector<uint8_t> dim_order;
  bool requires_grad = false;
  uint32_t data_buffer_idx = 0;
  ShapeDynamism dynamism = ShapeDynamism::kStatic;
  std::optional<Allocation> allocation;
  std::string fqn;          ///< extra_tensor_info.fully_qualified_name, may be empty.
  bool external = false;    ///< extra_tensor_info.location == EXTERNAL.
  uint8_t device_type = 0;  ///< 0 CPU, 1 CUDA.
  uint8_t device_index = 0;

  uint64_t numel = 1;
  uint64_t nbytes = 0;      ///< numel * element size, overflow-checked by the reader.
  TensorDataKind data_kind = TensorDataKind::kRuntimeSupplied;
  /// Absolute file range of the data for kConstant and kPlannedWithInit; empty otherwise.
  FileRange data;
};

enum class ValueKind : uint8_t {
  kNone, kInt, kBool, kDouble, kTensor, kString, kIntList, kDoubleList, kBoolList,
  kTensorList, kOptionalTensorList,
};

const char* to_string(ValueKind kind);

/// One EValue of an execution plan. Only the member matching `kind` is meaningful.
struct Value {
  ValueKind kind = ValueKind::kNone;
  int64_t int_value = 0;
  bool bool_value = false;
  double double_value = 0.0;
  std::string string_value;
  std::vector<int64_t> int_list;     ///< kIntList: value indices of Int values.
  std::vector<double> double_list;
  std::vector<uint8_t> bool_list;
  std::vector<int32_t> tensor_list;  ///< kTensorList / kOptionalTensorList: value indices, -1 = none.
  TensorInfo tensor;                 ///< kTensor.
  /// An instruction writes this value (a kernel's out or return argument, a MoveCall target):
  /// for a scalar, what the file stores is a placeholder (sym_size.int's result is 0 there).
  bool written_at_run_time = false;
};

enum class InstructionKind : uint8_t { kKernelCall, kDelegateCall, kMoveCall, kJumpFalse, kFree };

const char* to_string(InstructionKind kind);

struct Instruction {
  InstructionKind kind = InstructionKind::kKernelCall;
  int32_t op_index = -1;        ///< kKernelCall: index into ExecutionPlan::operators.
  int32_t delegate_index = -1;  ///< kDelegateCall: index into ExecutionPlan::delegates.
  std::vector<int32_t> args;    ///< Kernel or delegate call arguments (value indices).
  int32_t move_from = -1;       ///< kMoveCall.
  int32_t move_to = -1;         ///< kMoveCall.
  int32_t cond_value = -1;      ///< kJumpFalse.
  int32_t destination = -1;     ///< kJumpFalse: instruction index in the same chain.
  int32_t free_value = -1;      ///< kFree.
};

struct Frame {
  std::string filename;
  int32_t lineno = 0;
  std::string name;
  std::string context;
};

struct Chain {
  std::vector<int32_t> inputs;
  std::vector<int32_t> outputs;
  std::vector<Instruction> instructions;
  /// Empty, or one frame list per instruction when exported with stack traces.
  std::vector<std::vector<Frame>> stacktrace;
};

struct Operator {
  std::string name;      ///< e.g. "aten::add".
  std::string overload;  ///< e.g. "out"; may be empty.
  /// The kernel lookup key: "name.overload", or "name" when the overload is empty.
  std::string qualified_name() const { return overload.empty() ? name : name + "." + overload; }
};

struct CompileSpec {
  std::string key;
  std::vector<uint8_t> value;
};

struct Delegate {
  std::string id;          ///< Backend name, e.g. "XnnpackBackend".
  bool inline_data = false;
  uint32_t index = 0;      ///< Into backend_delegate_data (inline) or segments.
  FileRange data;          ///< Absolute range of the processed blob.
  std::vector<CompileSpec> compile_specs;
};

struct ExecutionPlan {
  std::string name;
  std::string encoded_inputs;   ///< Container metadata (pytree spec) of the inputs.
  std::string encoded_outputs;
  std::vector<Value> values;
  std::vector<int32_t> inputs;
  std::vector<int32_t> outputs;
  std::vector<Chain> chains;
  std::vector<Operator> operators;
  std::vector<Delegate> delegates;
  std::vector<int64_t> non_const_buffer_sizes;  ///< Entry 0 is a placeholder.
  struct BufferDevice {
    int32_t buffer_idx = 0;
    uint8_t device_type = 0;
    uint8_t device_index = 0;
  };
  std::vector<BufferDevice> non_const_buffer_devices;

  /// Total instructions over all chains.
  size_t instruction_count() const;
  /// Arenas, 1-based as memory ids: arena k has non_const_buffer_sizes[k].
  size_t arena_count() const {
    return non_const_buffer_sizes.empty() ? 0 : non_const_buffer_sizes.size() - 1;
  }
};

enum class ConstantStorage : uint8_t {
  kNone,            ///< The program has no constants.
  kSegment,         ///< constant_segment (ExecuTorch 0.2 and later).
  kInlineBuffer,    ///< Legacy constant_buffer inside the FlatBuffer.
};

const char* to_string(ConstantStorage storage);

struct NamedDataEntry {
  std::string key;
  uint32_t segment_index = 0;
};

struct Program {
  std::shared_ptr<const Blob> blob;  ///< The bytes everything here points into.
  uint64_t file_size = 0;
  std::string file_identifier;       ///< "ET12".
  uint32_t root_offset = 0;
  std::optional<ExtendedHeader> header;
  uint64_t flatbuffer_size = 0;      ///< Size of the FlatBuffer region.
  uint32_t version = 0;
  std::vector<ExecutionPlan> plans;
  std::vector<FileRange> segments;   ///< Absolute ranges (segment_base_offset applied).
  std::vector<FileRange> segments_relative;  ///< As stored: relative to segment_base_offset.

  ConstantStorage constant_storage = ConstantStorage::kNone;
  uint32_t constant_segment_index = 0;
  std::vector<uint64_t> constant_offsets;      ///< constant_segment.offsets as stored.
  std::vector<FileRange> constant_buffers;     ///< Legacy constant_buffer storages (absolute).
  uint64_t constant_bytes = 0;                 ///< Bytes of constant storage in the file.
  struct MutableSegment {
    uint32_t segment_index = 0;
    std::vector<uint64_t> offsets;
  };
  std::vector<MutableSegment> mutable_data_segments;
  std::vector<FileRange> inline_delegate_data;
  std::vector<NamedDataEntry> named_data;
  /// Problems that make the program unrunnable by ExecuTorch's runtime but leave it safe to
  /// display (a memory_id of 0, a planned range beyond its arena, a missing required vector).
  /// Each names the plan and value or instruction. Empty for a sound program.
  std::vector<std::string> problems;

  /// The plan called `name`, or nullptr.
  const ExecutionPlan* find_plan(const std::string& name) const;

  /// Bytes of `range` (relative to the file start), already validated by the reader.
  std::span<const uint8_t> bytes(FileRange range) const {
    return blob->bytes().subspan(static_cast<size_t>(range.offset),
                                 static_cast<size_t>(range.size));
  }
  /// The file name used in messages.
  const std::string& name() const { return blob->name(); }
};

}  // namespace etscope
