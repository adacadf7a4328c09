// Program description: what a .pte holds, as text both front ends print.
//
// `etscope pte` (text and JSON), `etscope bpte` and the viewer's Program view all describe a
// program the same way: instruction arguments ("%4 const f32[16,3,3,3]"), where each tensor's
// data lives ("arena 1 @ 320"), operator call counts, inputs and outputs, delegates and arenas.
// Every such text and count is defined here once; the front ends only lay the pieces out.
//
// Shapes follow the tensor's TensorShapeDynamism: static sizes print as they are
// ("f32[1,32,16]"); a DYNAMIC_BOUND tensor's sizes are upper bounds and print as
// "f32[<=1,<=32,<=16]" (the file marks the tensor, not which dimension varies); a
// DYNAMIC_UNBOUND tensor's sizes are set at run time and print as "f32[?,?,?]" rather than
// the placeholder numbers the file holds. Byte sizes follow the same rule ("<=2048 B",
// "set at run time").
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "etscope/formats/program.h"
#include "etscope/core/result.h"
#include "etscope/core/text.h"

namespace etscope::xnn {
struct Graph;
}  // namespace etscope::xnn

namespace etscope::inspect {

// ---- text pieces -------------------------------------------------------------------------

// Shapes without dynamism marks, byte counts and numbers: etscope/core/text.h.

/// A tensor's dtype and shape with its dynamism marked: "f32[1,32]", "f32[<=1,<=32]", "f32[?,?]".
std::string tensor_type_text(const TensorInfo& tensor);
std::string tensor_type_text(ScalarType dtype, const std::vector<int32_t>& sizes, ShapeDynamism dynamism);

/// A tensor's exact byte size: "80 B", "<=2048 B" (bounded), "set at run time" (unbounded).
std::string tensor_bytes_text(const TensorInfo& tensor);

/// "static", "dynamic_bound", "dynamic_unbound".
const char* dynamism_name(ShapeDynamism dynamism);

/// The integers an IntList value refers to; nullopt for an item that is not an Int value.
std::vector<std::optional<int64_t>> resolve_int_list(const ExecutionPlan& plan, const Value& list);

/// One value as an instruction argument: "%3 f32[1,3,32,32]", "%4 const f32[16,3,3,3]",
/// "%5 =1", "%8 =[3,3]" ("?" for an item that is not an Int), "%2 =None", "%9 [%1,None]";
/// "%99 ?" for an index the plan does not have.
std::string argument_text(const ExecutionPlan& plan, int32_t value_index);

/// A value's contents without its index: the tensor type for tensors, else the value itself
/// ("3", "[3,3]", "None", "true", "[%1,None]").
std::string value_text(const ExecutionPlan& plan, int32_t value_index);

/// Where a tensor's data lives: "constant #1 @ file 0x90", "arena 1 @ 320",
/// "arena 1 @ 320, init from file 0x4c0", "arena 1 @ 320, init from external 'net.linear.weight'",
/// "external 'w'", "unplanned (set at run time)".
std::string location_text(const TensorInfo& tensor);

/// Notes on a tensor beyond type and location: "fqn 'w'" (planned tensors with a name),
/// "requires_grad", "dynamic (bounded)", "dynamic (unbounded)".
std::vector<std::string> tensor_notes(const TensorInfo& tensor);

/// An instruction with its arguments:
/// "aten::add.out(%0 f32[2], %1 f32[2], %3 =1) -> %2 f32[2]", "delegate #0 XnnpackBackend(%0, %1)",
/// "move %3 f32[2] -> %4", "jump to 7 if not %2 =false", "free %5 f32[2]".
std::string instruction_text(const ExecutionPlan& plan, const Instruction& instruction);

/// "kernel", "delegate", "move", "jump", "free".
const char* instruction_kind_word(InstructionKind kind);

/// A stack frame as "file:line in fn".
std::string frame_text(const Frame& frame);

// ---- counts ------------------------------------------------------------------------------

/// What each segment of the program holds, e.g. "constants", "mutable data",
/// "delegate XnnpackBackend", "named data 'key'", or "unreferenced".
std::vector<std::string> segment_roles(const Program& program);

/// Constants the program stores (entry 0 of either storage is a placeholder, not counted).
size_t constant_count(const Program& program);

struct OperatorCalls {
  std::string name;  ///< "aten::convolution.out".
  size_t calls = 0;  ///< KernelCalls using it.
};

/// Every operator with its KernelCall count, in the file's operator order.
std::vector<OperatorCalls> operator_call_counts(const ExecutionPlan& plan);

struct DelegateCalls {
  std::string backend;   ///< "XnnpackBackend".
  size_t delegates = 0;  ///< The plan's delegates with this backend.
  size_t calls = 0;      ///< DelegateCalls to any of them.
};

/// Delegate calls per backend, in order of each backend's first delegate: a plan lowered to
/// XNNPACK in 24 pieces is one row "XnnpackBackend, 24 delegates, 24 calls".
std::vector<DelegateCalls> delegate_call_counts(const ExecutionPlan& plan);

/// Values per kind name ("Int", "Tensor", ...), in name order.
std::vector<std::pair<std::string, size_t>> value_kind_counts(const ExecutionPlan& plan);

/// Bytes of all arenas together.
uint64_t planned_bytes(const ExecutionPlan& plan);

// ---- whole descriptions ------------------------------------------------------------------

/// The file-level facts of a program.
struct ProgramDescription {
  struct Segment {
    uint64_t offset = 0;  ///< Relative to the segment base, as stored.
    uint64_t size = 0;
    std::string role;     ///< See segment_roles().
    /// The segment holds named data and nothing else (its key is in `named_data`), so a summary
    /// can fold it into the named-data line instead of repeating the key.
    bool named_data_only = false;
  };
  struct NamedData {
    std::string key;
    uint32_t segment = 0;
    uint64_t size = 0;
  };
  std::string file;         ///< The program's name (its path).
  /// "eh00, 32-byte: program 1234 B, segments at 1280, segment data 456 B", or
  /// "none (flat FlatBuffer), root table at 0x1c".
  std::string header;
  /// "3 in constant_segment, 1.2 KiB", "2 in constant_buffer, 48 B (legacy inline layout)", or "none".
  std::string constants;
  /// "2 initial values in segment 1", or "" without mutable data.
  std::string mutable_data;
  std::vector<Segment> segments;
  std::vector<NamedData> named_data;
  /// Bytes of all named-data entries together.
  uint64_t named_data_bytes = 0;
  /// "42 keys, 11.2 MiB", or "none".
  std::string named_data_totals;
  /// Named data at a glance, each key at most once: "none", or "42 keys, 11.2 MiB, e.g. 'a1b2...',
  /// 'c3d4...', 'e5f6...'" (the first three keys in file order; `etscope pte --named-data` lists all).
  std::string named_data_summary;
  std::vector<std::string> methods;

  static ProgramDescription describe(const Program& program);
};

struct IoDescription {
  int32_t value = 0;
  std::string text;      ///< argument_text().
  std::string location;  ///< location_text() for tensors, "" otherwise.
};

struct DelegateDescription {
  std::string backend;
  /// "#0 XnnpackBackend: 12.3 KiB inline, compile specs: key (4 B)" / "... in segment 2, compile specs: none".
  std::string text;
};

/// One node of a delegate's graph (XNNPACK payloads), as `etscope pte --delegates` and the
/// viewer's program view list it.
struct DelegateNodeRow {
  size_t index = 0;
  std::string kind;                  ///< "Conv2d"
  uint32_t debug_handle = 0;         ///< The edge node's handle; 65535 for layout conversions.
  std::vector<std::string> inputs;   ///< "v1 f32[1,32,32,3]", "v2 qcint8[16,3,3,3] const per-channel(axis 0, 16 scales)", "-"
  std::vector<std::string> outputs;  ///< "v5 f32[1,16,32,32] out#1"
  std::string attributes;            ///< "kernel 3x3 stride 1x1 pad [1,1,1,1] ... range [0, inf]"
};

/// The graph inside one delegate payload.
struct DelegateGraphDescription {
  size_t index = 0;
  std::string backend;
  /// "XNNPACK graph version 0, 3 nodes, 6 values" (+ ", dynamic shapes (values declared at their
  /// upper bounds)" when a call passes dynamic tensors); empty when the payload is not read.
  std::string summary;
  /// The payload's one-line error, or "etscope does not read this backend's payload".
  std::string error;
  std::vector<DelegateNodeRow> nodes;
};

/// Reads and describes delegate `delegate_index` of `plan` (formats' xnn::Graph for XNNPACK).
/// With `graph`, the graph read is handed back too (for callers that print more of it).
DelegateGraphDescription describe_delegate_graph(const Program& program, const ExecutionPlan& plan, size_t delegate_index,
                                                 xnn::Graph* graph = nullptr);

struct ArenaDescription {
  uint32_t memory_id = 0;  ///< 1-based.
  uint64_t size = 0;
  std::string text;        ///< "65536 B (64.0 KiB)", "48 B".
};

struct InstructionDescription {
  int32_t chain = 0;
  int32_t index = 0;       ///< Within the chain.
  int64_t step = 0;        ///< Position over all chains.
  std::string kind;        ///< instruction_kind_word().
  std::string op;          ///< "aten::convolution.out", "delegate XnnpackBackend", "move", ...
  std::string text;        ///< instruction_text().
  std::string source;      ///< Innermost stack frame as frame_text(), or "".
  std::string stack;       ///< Every frame, one per line (with its context indented), or "".
};

struct ValueDescription {
  int32_t index = 0;
  std::string kind;        ///< "Tensor", "Int", "IntList", ...
  std::string type;        ///< value_text(): tensor type, or the value itself.
  bool is_tensor = false;
  uint64_t nbytes = 0;     ///< Tensors: the file's byte size (a bound or placeholder when dynamic).
  std::string bytes;       ///< Tensors: tensor_bytes_text(); "" otherwise.
  std::string location;    ///< Tensors: location_text(); "" otherwise.
  std::vector<std::string> notes;  ///< Tensors: tensor_notes().
};

/// One execution plan, described.
struct PlanDescription {
  std::string name;
  /// "12 (3 Int, 9 Tensor)".
  std::string values_summary;
  /// "66", or "66 in 2 chains".
  std::string instructions_summary;
  std::vector<IoDescription> inputs, outputs;
  std::vector<OperatorCalls> operators;
  std::vector<DelegateDescription> delegates;
  std::vector<ArenaDescription> arenas;
  uint64_t planned_bytes = 0;
  size_t chain_count = 0;
  std::vector<InstructionDescription> instructions;  ///< In step order.
  std::vector<ValueDescription> values;
  bool has_sources = false;  ///< Some instruction has a stack trace.

  static PlanDescription describe(const ExecutionPlan& plan);
};

// ---- loading -----------------------------------------------------------------------------

/// Reads a program (.pte), or the program embedded in a bundled program (.bpte); errors as
/// PteReader::open and BpteReader::open give them.
Result<Program> load_program(const std::string& path);

}  // namespace etscope::inspect
