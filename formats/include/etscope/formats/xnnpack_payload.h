// The XNNPACK delegate payload: what ExecuTorch's XnnpackBackend stores for each lowered
// subgraph (docs/xnnpack.md). An optional "XH00" header gives the flatbuffer's and the constant
// region's place in the payload; the flatbuffer ("XN00") lists tensor values (shapes, element
// types, quantization, where constant bytes live) and nodes (one XNNPACK operator each).
//
// parse_xnnpack_payload validates everything once: every id a node names is a defined value of
// a kind the node can take, every constant's bytes lie inside the payload (or the program's named
// data) and hold its whole tensor, shapes multiply without overflow, inputs and outputs name
// graph values with their flags. Executors trust what it returns.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "etscope/core/result.h"
#include "etscope/formats/program.h"

namespace etscope::xnn {

/// Element types, with XNNPACK's codes.
enum class ElementType : uint8_t {
  kInvalid = 0, kF32 = 1, kF16 = 2, kQInt8 = 3, kQUInt8 = 4, kQInt32 = 5, kQCInt8 = 6, kQCInt32 = 7,
  kQCInt4 = 8, kQDInt8 = 9, kQBInt4 = 10, kQPInt8 = 11, kInt32 = 12, kPF32 = 13, kBF16 = 14,
};
const char* to_string(ElementType t);

/// Node kinds in the schema's order (the wire tag minus one).
enum class NodeKind : uint8_t {
  kAdd, kFullyConnected, kSoftmax, kSigmoid, kTranspose, kClamp, kConv2d, kDivide, kResizeBilinear2d,
  kConstantPad, kAvgPool2d, kMinimum, kDepthwiseConv2d, kMaxPool2d, kMultiply, kSubtract, kFloor, kConvert,
  kGlobalAvgPool2d, kReshape, kArgMaxPool2d, kSqrt, kCeil, kHardSwish, kLeakyRelu, kMaximum, kNegate,
  kSquare, kElu, kAbs, kPRelu, kConcat2, kConcat3, kConcat4, kSlice, kAttention, kBatchMatMul, kConcat5,
  kConvTranspose2d, kRSqrt, kLog, kGelu, kTanh, kExp, kSin, kCopy, kCos,
};
inline constexpr size_t kNodeKindCount = 47;
/// The schema's name of a node kind ("Conv2d", "FullyConnected", ...).
const char* to_string(NodeKind k);

/// XNNPACK's value flags.
inline constexpr uint32_t kFlagExternalInput = 1;
inline constexpr uint32_t kFlagExternalOutput = 2;
/// XNNPACK's id meaning "none" (e.g. a convolution without bias).
inline constexpr uint32_t kNoValue = std::numeric_limits<uint32_t>::max();

struct Quantization {
  enum class Kind : uint8_t { kNone, kPerTensor, kPerChannel, kPerRowDynamic, kPerBlock };
  Kind kind = Kind::kNone;
  float scale = 0;              ///< kPerTensor.
  int32_t zero_point = 0;       ///< kPerTensor; per-channel and per-block 4-bit values use 8.
  std::vector<float> scales;    ///< kPerChannel (one per channel), kPerBlock (channels x blocks).
  uint32_t axis = 0;            ///< kPerChannel, kPerBlock: the channel dimension.
  uint32_t block_size = 0;      ///< kPerBlock.
  uint32_t non_batch_dims = 0;  ///< kPerRowDynamic.
};

struct TensorValue {
  uint32_t id = 0;
  ElementType type = ElementType::kInvalid;
  std::vector<int64_t> shape;
  uint64_t numel = 1;
  /// Bytes of the whole tensor (4-bit types: two per byte, rounded up per row as XNNPACK packs).
  uint64_t nbytes = 0;
  uint32_t flags = 0;
  uint32_t external_id = kNoValue;  ///< Delegate argument index of a graph input or output.
  /// A graph input that XNNPACK quantizes when it arrives (legacy dynamic quantization).
  ElementType runtime_quantize_to = ElementType::kInvalid;
  Quantization quant;
  /// Constant bytes (inside the payload or the program's named data), empty for other values.
  std::span<const uint8_t> constant;
  std::string constant_key;  ///< The named-data key the constant came from, if any.
  bool is_constant = false;  ///< Its bytes come from the payload or the named data.
};

struct ConvParams {
  std::array<uint32_t, 4> padding{};  ///< top, right, bottom, left
  uint32_t kernel_h = 1, kernel_w = 1;
  uint32_t stride_h = 1, stride_w = 1;
  uint32_t dilation_h = 1, dilation_w = 1;
  uint32_t groups = 1, group_in = 0, group_out = 0;
  uint32_t adjustment_h = 0, adjustment_w = 0;
};

struct Node {
  NodeKind kind = NodeKind::kAdd;
  uint32_t debug_handle = 0;
  float output_min = -std::numeric_limits<float>::infinity();
  float output_max = std::numeric_limits<float>::infinity();
  uint32_t flags = 0;
  /// Value indices (into Graph::values, not ids) in the node's order: e.g. convolution (input,
  /// filter, bias or -1), concatenation (its 2..5 inputs), attention (q, k, v, scale, mask).
  std::vector<int32_t> inputs;
  std::vector<int32_t> outputs;
  ConvParams conv;               ///< Convolutions and pools (kernel = window).
  std::vector<uint32_t> dims_a;  ///< Permutation, new shape, slice offsets, pads before.
  std::vector<uint32_t> dims_b;  ///< Slice sizes, pads after.
  float alpha = 0;               ///< Pad value, leaky slope, ELU alpha.
  uint32_t axis = 0;             ///< Concatenation.
  uint32_t new_h = 0, new_w = 0; ///< Bilinear resize.
};

struct Graph {
  std::string version;
  bool has_header = false;
  uint64_t flatbuffer_offset = 0, flatbuffer_size = 0;
  uint64_t constant_offset = 0, constant_size = 0;
  uint32_t external_count = 0;
  std::vector<TensorValue> values;
  std::vector<Node> nodes;
  /// Value indices of graph inputs and outputs, ordered by external id (the delegate argument
  /// index: inputs come before outputs in a DelegateCall's arguments).
  std::vector<int32_t> inputs;
  std::vector<int32_t> outputs;
};

/// Finds constant bytes stored under a key in the program's named data; nullopt when absent.
using NamedDataLookup = std::function<std::optional<std::span<const uint8_t>>(std::string_view key)>;

/// Largest graph accepted (values and nodes each): far beyond real programs, it bounds what a
/// hostile payload can make a reader allocate.
inline constexpr size_t kMaxGraphItems = 1u << 20;

/// Parses and validates a payload. `where` prefixes messages (e.g. "m.pte: delegate 0"); errors
/// are kCorrupt (naming the node or value) or kNotSupported (a kind or type etscope cannot hold).
/// Constant spans point into `payload` or into what `named` returns: both must outlive the Graph.
Result<Graph> parse_xnnpack_payload(std::span<const uint8_t> payload, const NamedDataLookup& named,
                                    const std::string& where);

/// The payload of `delegate` (an "XnnpackBackend" delegate of `program`), with constants looked
/// up in the program's named data. Messages start with the program file and the delegate index.
Result<Graph> parse_xnnpack_delegate(const Program& program, const Delegate& delegate, const std::string& where);

/// ExecuTorch's id of the XNNPACK backend.
inline constexpr std::string_view kBackendId = "XnnpackBackend";

/// Bytes of `numel` elements of `type` laid out with `shape` (4-bit types pack two per byte).
std::optional<uint64_t> tensor_bytes(ElementType type, std::span<const int64_t> shape);

}  // namespace etscope::xnn
