// DelegateState: what one loaded XNNPACK delegate call holds (its graph, value shapes and
// buffers, scratch, integer layers, profiling events, logged outputs), shared by the files of
// runtime/src/xnnpack/ and private to them:
//   xnnpack_delegate.cpp  load and execute
//   node_table.cpp        one row per node kind: its check, its run functions, its event name
//   node_checks.cpp       load-time validation and shape inference, per node kind
//   float_nodes.cpp       nodes computed on floats
//   quantized_nodes.cpp   int8 layers computed in integers, constants, rounding to a value's grid
//   events.cpp            profiling event names and grouping, intermediate-output logging
//
// Layout conventions are XNNPACK's: images are NHWC; convolution filters are OHWI (output
// channels, kernel rows, kernel columns, input channels of the group), depthwise filters 1HWO,
// fully connected filters [outputs, inputs] (transposed when flag 1 is set).
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "etscope/core/evalue.h"
#include "etscope/core/result.h"
#include "etscope/formats/xnnpack_payload.h"
#include "kernels/util/aligned.h"
#include "kernels/util/broadcast_util.h"
#include "parallel.h"
#include "xnnpack/f32_gemm.h"
#include "xnnpack/int8_gemm.h"
#include "xnnpack/xnnpack_delegate.h"

namespace etscope::runtime::xnnpack {

using xnn::ElementType;
using xnn::Node;
using xnn::NodeKind;

constexpr uint32_t kFlagTransposeB = 1;  // fully connected: weights are [inputs, outputs]; bmm: b is [.., N, K]
constexpr uint32_t kFlagLegacyResize = 4;
constexpr uint32_t kFlagAlignCorners = 8;
constexpr uint32_t kFlagKeepDims = 0x40;  // pools: keep the reduced dimensions (a no-op for 4-D pools)
constexpr int kMaxRank = 6;

/// A value's shape in memory order. XNNPACK's values have at most 6 dimensions, so a shape lives
/// inline (no allocation while shapes are propagated at run time).
struct Shape {
  int rank = 0;
  int64_t d[kMaxRank] = {};
  /// Saturates at INT64_MAX: shapes propagated from a hostile graph's attributes may not fit, and
  /// a saturated count never fits a value's declared elements.
  int64_t numel() const {
    int64_t n = 1;
    for (int i = 0; i < rank; ++i) {
      if (__builtin_mul_overflow(n, d[i], &n)) return INT64_MAX;
    }
    return n;
  }
  bool operator==(const Shape& o) const { return rank == o.rank && std::equal(d, d + rank, o.d); }
  std::string text() const {
    std::string s = "[";
    for (int i = 0; i < rank; ++i) s += (i ? ", " : "") + std::to_string(d[i]);
    return s + "]";
  }
};

/// Scratch the nodes need, found while checking them (the largest of any node).
struct Scratch {
  size_t floats = 0;   // im2col / temporaries
  size_t doubles = 0;  // the same for integer-exact quantized convolutions
  size_t gemm = 0;     // bytes of GEMM workspace
  size_t bytes = 0;    // integer layers' rows, im2col matrices and sums (int8_scratch)
};

/// A quantized convolution or fully connected layer computed as XNNPACK computes it: integer
/// products summed exactly (in doubles, which hold any int8 x int8 sum of this size), plus the
/// int32 bias, then requantized in float: acc * (input scale * filter scale / output scale),
/// rounded to nearest even, clamped, plus the output zero point.
struct QuantizedLayer {
  float in_scale = 1;
  int32_t in_zero = 0;
  float out_scale = 1;
  int32_t out_zero = 0;
  float qmin = -128, qmax = 127;       // the output range, fused activation included
  std::vector<double> weights;         // integer filter values, the float filter's layout
  // The same as floats instead (weights then empty) when no sum of products can leave the range
  // where floats hold every integer (2^24), whatever the input: the float GEMM is then exact too.
  std::vector<float> fweights;
  std::vector<double> bias;            // integer bias per output channel (0 without one)
  // Or, for layers DelegateState::int8_gemm_layer accepts, the filter packed for int8_gemm (one
  // packing per group), weights and fweights then empty; the input's offset zu (int8_gemm.h).
  std::vector<PackedInt8> packed;
  int32_t zu = 0;
  std::vector<int32_t> sum_offset;  // per output channel: bias - zu x the filter's sum (int32, wrapping)
  // Depthwise convolutions: the filter integers [taps][channels] and the bias, in int32 sums.
  std::vector<int16_t> dw_filter;
  std::vector<int32_t> dw_bias;
  bool dw_narrow = false;  // every filter integer within +-128: products with inputs (+-255) fit 16 bits
  std::vector<float> scale;            // requantization scale per output channel
  // Add: XNNPACK's fixed-point form, out = (rounding + a * a_mult + b * b_mult) >> shift
  // (a and b less their zero points), with multipliers of 21 bits at most.
  float a_scale = 1, b_scale = 1;
  int32_t b_zero = 0;  // Add: the second input's zero point (the first's is in_zero)
  int32_t a_mult = 0, b_mult = 0, rounding = 0;
  uint32_t shift = 0;
};

/// A dynamically quantized value's rows as XNNPACK holds them (qdint8): the int8 values, and per
/// row its zero point and scale (the dequantization scale, 1 / the quantization multiplier).
struct DynamicRows {
  std::vector<int8_t> q;
  std::vector<int32_t> zero;
  std::vector<float> scale;
};

/// A fully connected layer with dynamically quantized int8 input rows (qdint8) and int8 or 4-bit
/// filters, packed at load for qd8_layers.cpp. Outputs come in tiles of kQd8Tile (the last one
/// padded with zero filters); a tile's filter integers are laid out input by input in groups of 4
/// (8-bit: [inputs / 4][tile][4] bytes) or of 8 (4-bit: [inputs / 8][tile][4] bytes, each byte
/// input i in its low nibble and i + 4 in its high one), inputs padded with zeros to a multiple of
/// 8. Per-output arrays are tile-major: [tile][block][kQd8Tile].
constexpr int64_t kQd8Tile = 16;
struct Qd8Layer {
  enum class Weights : uint8_t { kPerChannel, kPerBlock };  // qcint8 / qcint4, or qbint4
  Weights kind = Weights::kPerChannel;
  bool nibbles = false;              // 4-bit filters
  int64_t k = 0, n = 0;
  int64_t kpad = 0;                  // inputs padded to a multiple of 8
  int64_t block = 0, blocks = 1;     // inputs per block (kPerChannel: one block of kpad)
  int64_t tiles = 0;
  std::vector<uint8_t> packed;       // tiles x tile_bytes()
  std::vector<int32_t> wsum;         // sums of the filter integers, per tile, block and output
  std::vector<float> scale;          // kPerChannel: per output; kPerBlock: bf16 block scale / 16
  std::vector<float> ksum;           // kPerBlock: packed float term -sum(filter * scale), per output
  std::vector<float> bias;           // per output (zeros without a bias)
  float lo = -INFINITY, hi = INFINITY;
  int64_t tile_bytes() const { return nibbles ? kpad * kQd8Tile / 2 : kpad * kQd8Tile; }
};

struct DelegateState {
  xnn::Graph graph;
  std::string where;
  const Parallel* parallel = nullptr;  // the method's threads (MethodOptions::threads), or none
  // Shapes in memory order. A graph whose DelegateCall arguments are dynamic tensors declares
  // its values at their upper bounds (as ExecuTorch serializes them): `declared` holds those,
  // and every value's buffer is sized for them. `shapes` are the current ones: propagated from
  // the arguments' shapes through every node (reshape()) whenever those change, each checked to
  // fit its value's declared elements. A static graph's inferred shapes must equal the declared.
  std::vector<Shape> declared;
  std::vector<Shape> shapes;
  bool dynamic = false;
  std::vector<Shape> last_inputs;  // the argument shapes `shapes` were propagated from
  std::vector<kernels::aligned_vector<float>> owned;  // per value: float constants (64-byte aligned, as every buffer below)
  std::vector<float*> data;               // per value, external ones set per execution
  // Internal values and staging buffers live in the method's workspace, shared with its other
  // delegates: per value its offset in floats there (or -1), pointed at when a call starts
  // (bind_workspace; `bound` is the base the pointers were made from).
  std::shared_ptr<Workspace> workspace;
  std::vector<int64_t> ws_offset;
  const float* bound = nullptr;
  void bind_workspace() {
    float* base = workspace->data();
    if (base == bound) return;
    for (size_t v = 0; v < ws_offset.size(); ++v) {
      if (ws_offset[v] >= 0) data[v] = base + ws_offset[v];
    }
    bound = base;
  }
  // Profiling events: XNNPACK's runtime fuses some nodes into one operator (a Clamp into its
  // producer, a dynamic-quantization Convert into the layer it feeds, two reshapes in a row, a
  // transpose into the matrix product it feeds), so its dump has one event for them; etscope
  // does the same. Event e covers the nodes
  // event_first[e]..event_first[e + 1] - 1 and is named event_names[e].
  std::vector<std::string> event_names;
  std::vector<uint32_t> event_first;
  std::vector<uint32_t> event_named;  // per event: the node that names it
  void group_events();
  std::vector<int> consumers;             // per value: how many node inputs read it
  std::vector<uint32_t> reads, writes;    // DelegateCall argument positions
  kernels::aligned_vector<float> scratch;
  std::vector<double> qscratch;
  std::vector<uint8_t> gemm_workspace;
  kernels::aligned_vector<uint8_t> int8_scratch;  // Scratch::bytes
  std::vector<int32_t> f32_of_node;                // per node: index into f32_layers, or -1
  std::vector<std::vector<PackedF32>> f32_layers;  // per layer, one packing per group
  /// True when node n is a float convolution or fully connected layer with a constant f32 filter
  /// (and bias, if any) that f32_gemm computes from a packing made at load.
  bool packed_f32_layer(const Node& n) const;
  Status plan_f32(size_t i);
  /// A packed convolution that reads its windows where they are in the image (run_conv2d): the
  /// row pointers of every output pixel's taps, kept from run to run (XNNPACK's indirection
  /// buffer) and built again only when the image, the zero row or the shapes move. Sized at load
  /// at the graph's upper-bound shapes (conv_rows_size), so a run allocates nothing.
  struct ConvRows {
    const float* image = nullptr;
    const float* zeros = nullptr;
    int64_t H = 0, W = 0, OH = 0, OW = 0;
    std::vector<const float*> at;
    /// True when the pointers were built for another image, zero row or shapes than these (the
    /// caller builds them now): remembers these.
    bool renew(const float* image_now, const float* zeros_now, int64_t h, int64_t w, int64_t oh, int64_t ow) {
      if (image == image_now && zeros == zeros_now && H == h && W == w && OH == oh && OW == ow) return false;
      image = image_now, zeros = zeros_now, H = h, W = w, OH = oh, OW = ow;
      return true;
    }
  };
  std::vector<ConvRows> conv_rows;  // per node
  /// Row pointers node n's table holds at the current shapes (pixels x taps), or 0 when it does
  /// not read its windows in place.
  uint64_t conv_rows_size(const Node& n) const;
  std::vector<int32_t> quantized_of_node;  // per node: index into quantized, or -1
  // Per node: a Clamp that an integer layer before it requantized into (plan_quantized): its
  // input is on its grid and in its range, and it copies it (unless emulating).
  std::vector<uint8_t> copy_clamp;
  std::vector<QuantizedLayer> quantized;
  std::vector<DynamicRows> dynamic_rows;   // per value: qdint8 values' integers (else empty)
  std::vector<uint8_t> qd8_only;           // per value: read by qd8 layers only (no floats kept)
  std::vector<int32_t> qd8_of_node;        // per node: index into qd8_layers, or -1
  std::vector<Qd8Layer> qd8_layers;
  kernels::aligned_vector<uint8_t> qd8_rows;  // a qd8 layer's input rows as its kernel reads them
  MatrixTiles tiles = MatrixTiles::kOff;   // qd8 layers on AMX tiles (kOff where unavailable)
  /// True when node n is a fully connected layer XNNPACK computes in integers from
  /// dynamically quantized rows (qd8): a qdint8 input of per-row parameters over its last
  /// dimension, constant qcint8 / qcint4 (per channel) or qbint4 (per block) filters, an f32
  /// output and an optional f32 constant bias.
  bool qd8_layer(const Node& n) const;
  /// Packs node i's filter for run_fully_connected_qd8 (qd8_layer(node i) holds).
  Status plan_qd8(size_t i);
  /// True when node n is a convolution or fully connected layer with int8 activations per tensor
  /// and int8 filters (per tensor or per channel), an int8 Add or an int8 mean: it runs in integers.
  bool integer_layer(const Node& n) const;
  /// True when integer layer n is a convolution or fully connected layer whose sums int8_gemm
  /// computes: int8 filters with zero point 0 (per tensor or per channel), at most
  /// kInt8MaxInputs inputs per output.
  bool int8_gemm_layer(const Node& n) const;
  Status plan_quantized(size_t i);
  /// The Clamp node that alone reads node i's only output (not a graph output), or null.
  const Node* sole_clamp_consumer(size_t i) const;
  // Raw integers between integer layers (plan_raw_values): a qint8 value whose writer can give
  // raw integers (a convolution or fully connected layer int8_gemm computes, a depthwise
  // convolution, an Add, a global average pooling, a Convert from f32, a raw_binary node, or a
  // node that only moves raw integers: a Transpose, Reshape, Copy or copying Clamp of a raw value
  // on the same grid) and whose readers can all take them (those layers as their input, a Convert
  // to f32, a raw_binary node, a mover whose output is raw too) holds its raw int8 integers in
  // `raw` (per value; null for others)
  // instead of floats, while nothing observes it: in an execution without intermediate-output
  // logging or a value hook (`raw_active`). Observed executions compute through the floats as
  // before, with the same integers.
  std::vector<kernels::aligned_vector<int8_t>> raw_owned;
  std::vector<int8_t*> raw;
  bool raw_active = false;
  void plan_raw_values();
  /// Runs node i when it only moves, converts or copies raw integers (plan_raw_values) in this
  /// execution: a Transpose, Reshape, Copy or copying Clamp between raw values, a Convert to a
  /// raw value or from one. False (nothing done) otherwise.
  bool run_raw_move(size_t i);
  /// True when node i is a binary elementwise node on int8 values that computes on floats (a
  /// Multiply, Subtract, Divide, Minimum or Maximum: two per-tensor qint8 inputs and output) and
  /// so can read and write raw integers (plan_raw_values): each raw operand as the float it stands
  /// for, the result rounded to the output's grid as quantize_outputs rounds it.
  bool raw_binary(size_t i) const;
  /// Runs node i (raw_binary) when an operand or its output holds raw integers in this execution;
  /// false (nothing done) otherwise.
  bool run_raw_binary(size_t i);
  int8_t* raw_output(const Node& n) const { return raw_active ? raw[static_cast<size_t>(n.outputs[0])] : nullptr; }
  const int8_t* raw_input(const Node& n, size_t k) const { return raw_active ? raw[static_cast<size_t>(n.inputs[k])] : nullptr; }

  // Lookup tables (lookup_tables.cpp). XNNPACK's runtime fuses a chain of elementwise nodes
  // from one 8-bit quantized value to another (dequantize, HardSwish, quantize: what pt2e leaves
  // around a float activation) into one operator that maps each of the 256 input integers
  // through a table made at load; its profiler names it "Invalid Unary Op". group_events finds
  // the chains as XNNPACK does and gives each one event; plan_lookup_tables fills the table of
  // each chain whose input holds raw integers (plan_raw_values) by running the chain's own nodes
  // on the 256 integers, so the table gives what the nodes give: raw integers when the output
  // holds them, else the floats the output's integers stand for. It replaces the nodes in
  // executions with raw values active; observed executions run them one by one.
  struct LookupChain {
    uint32_t first = 0, last = 0;     // its nodes: first..last
    int32_t input = -1, output = -1;  // values
    bool ready = false;               // a table is filled (the input is raw)
    bool raw_output = false;          // `table` (else `floats`)
    std::array<int8_t, 256> table{};  // indexed by the input integer's byte
    std::array<float, 256> floats{};
  };
  std::vector<LookupChain> lookup_chains;
  std::vector<int32_t> lookup_of_event;  // per event: index into lookup_chains, or -1
  /// The value node n computes elementwise from as XNNPACK's lookup-table fusion sees it (a
  /// unary node's input; a binary node's operand beside a one-element constant), or -1.
  int32_t elementwise_input(const Node& n) const;
  /// One past the last node of the lookup-table chain that starts at node i, or i when none
  /// does; `joins` is group_events' grouping before chains (a Clamp fused into its producer is
  /// not a node of XNNPACK's graph).
  size_t lookup_chain_end(size_t i, const std::vector<int>& joins) const;
  void plan_lookup_tables();
  void run_lookup(const LookupChain& c);

  // Clamps fused into their producers. XNNPACK's runtime fuses a Clamp into the node that
  // produces its input (group_events' joins: one event of the two) and that node writes the
  // Clamp's output, bounded by both ranges, in one pass. etscope does the same for float nodes in
  // executions with raw values active (raw_active: nothing logs or hooks the producer's own
  // output, which an observed execution keeps, unclamped, as before): plan_fused_clamps finds the
  // events, run_fused_clamp runs one. Bit for bit the two passes' result: a range inside both
  // ranges clamps as the two in turn (pairs whose ranges do not meet keep the two passes).
  struct FusedClamp {
    uint32_t producer = 0, clamp = 0;  // nodes
    float lo = 0, hi = 0;              // the combined range
  };
  std::vector<FusedClamp> fused_clamps;
  std::vector<int32_t> fused_clamp_of_event;  // per event: index into fused_clamps, or -1
  void plan_fused_clamps();
  /// Runs the two nodes of `f`'s event as one (the producer with the combined range, writing the
  /// Clamp's output); false (nothing done) when the Clamp's output buffer overlaps one of the
  /// producer's inputs, which then run one by one.
  bool run_fused_clamp(const FusedClamp& f);

  // Quantization emulation (XnnpackDelegate::load's `emulate_quantization`): float copies of
  // every constant are kept, and a node whose quantizer is switched off computes on floats and
  // leaves its outputs unrounded, off the grid (`off_grid`, per value, per execution); a node
  // that reads a value off the grid computes on floats too (then rounds, unless its own quantizer
  // is off). Every other node computes as without emulation (integer kernels included), so that
  // with every quantizer on the outputs are the program's, bit for bit. A quantizer belongs to a
  // node that computes a quantized output; nodes that only pass its values on
  // (quantizer_passes_on) round with their input's producer, or always when that is no
  // quantizer's.
  bool emulate = false;
  struct Quantizer {
    uint32_t node = 0;
    uint32_t event = 0;  // index into event_names
    bool on = true;
    bool from_float = false;        // a Convert of a float value (a quantize: no quantized producer)
    std::vector<uint32_t> readers;  // quantized layers reading the output (through nodes passing it on)
    // The layer with a quantized constant filter the quantizer belongs to (itself, or the layer a
    // dynamic quantization feeds), or -1; while the quantizer is off it computes from
    // `float_filter` when one was set (a float export's filter, set_float_filter).
    int32_t layer = -1;
    std::vector<float> float_filter;
  };
  std::vector<Quantizer> quantizers;
  std::vector<int32_t> quantizer_of_node;  // per node: index into quantizers, or -1
  std::vector<uint8_t> off_grid;           // per value: holds unrounded values this execution
  std::vector<int32_t> quantizer_of_layer;  // per node: the quantizer whose `layer` it is, or -1
  void plan_quantizers();
  /// The value of node n's quantized constant filter (convolutions, fully connected), or -1.
  int32_t filter_of(const Node& n) const;
  /// Checks and keeps quantizer k's float filter (kInvalidArgument: no filter, another size, a
  /// value that does not round to the int8 one).
  Status set_float_filter(size_t k, std::span<const float> values);

  // Intermediate outputs for the debug buffer: the last node carrying each edge-graph debug handle
  // logs its output under that handle, in the edge graph's (logical) dimension order: `order[v]`
  // maps value v's memory dimensions to logical ones (NHWC values inside the graph are
  // channels-last views of NCHW tensors), quantized values as the floats they stand for.
  struct Logged {
    uint32_t node = 0;
    int32_t handle = 0;
    bool permute = false;
    TensorImpl tensor;
    EValue value;
  };
  std::vector<std::array<uint8_t, kMaxRank>> order;
  std::vector<Logged> logged;
  std::vector<int32_t> logged_of_node;  // per node: index into logged, or -1
  std::vector<float> log_scratch;
  std::vector<float> force_scratch;  // a hooked execution's replacement values (XnnpackDelegate::ValueHook)
  /// Returns the bytes log_scratch needs (a logged value computed in another memory order is
  /// transposed there), for the caller to take from the memory limit and allocate.
  size_t plan_logging(std::span<EValue* const> args);
  /// Value v's current shape in the edge graph's (logical) dimension order.
  Shape logical_shape(size_t v) const;
  /// Per memory dimension of value v, how far one step moves in a row-major buffer of its
  /// logical shape (walk_strided over its memory-order shape converts between the two).
  void logical_steps(size_t v, int64_t* step) const;
  bool log_output(Logged& l);  // false when it cannot be logged
  /// Writes `logical` (l's tensor in logical order) into the node's output in memory order;
  /// false when the output keeps no floats.
  bool overwrite_output(const Logged& l, std::span<const float> logical);

  std::string node_where(size_t i) const {
    return where + ": XNNPACK node " + std::to_string(i) + " (" + xnn::to_string(graph.nodes[i].kind) + ")";
  }
  Error bad(size_t node, const std::string& text) const { return Error(ErrorCode::kCorrupt, node_where(node) + ": " + text); }
  const Shape& in_shape(const Node& n, size_t k) const { return shapes[static_cast<size_t>(n.inputs[k])]; }
  const Shape& out_shape(const Node& n, size_t k = 0) const { return shapes[static_cast<size_t>(n.outputs[k])]; }
  const xnn::TensorValue& value(int32_t v) const { return graph.values[static_cast<size_t>(v)]; }
  const float* input(const Node& n, size_t k) const { return data[static_cast<size_t>(n.inputs[k])]; }
  float* output(const Node& n, size_t k = 0) const { return data[static_cast<size_t>(n.outputs[k])]; }
  /// Checks node i's types and attributes and infers its outputs' shapes; grows `scratch` to
  /// what the node needs. Run at load and, in a dynamic graph, whenever input shapes change.
  Status check_node(size_t i, Scratch* scratch);
  /// Sets node i's output k to `want`: in a static graph it must be the declared shape, in a
  /// dynamic one of the declared rank and within the declared elements.
  Status set_out(size_t i, const Shape& want, size_t k = 0);
  /// Propagates the arguments' current shapes through the graph (dynamic graphs) and resizes
  /// the output arguments.
  Status reshape(std::span<EValue* const> args);
  std::string event_name(const Node& n) const;
  /// Computes node i: in integers when it is an integer layer, else on floats, then rounds its
  /// outputs to their values' grids.
  void run_node(size_t i);
  /// Rounds the outputs of a node whose values are quantized (or f16 or bf16) to their grid.
  void quantize_outputs(const Node& n);
};

/// Moves, clamps, max pooling and padding: a quantized output holding its input's values, on its
/// input's grid (an emulated quantizer's values pass through them).
bool quantizer_passes_on(const Node& n);

/// What most nodes read and write: input 0 and output 0, with their current shapes.
struct NodeOperands {
  const Shape& sx;
  const Shape& so;
  const float* x;
  float* out;
};
inline NodeOperands operands(const DelegateState& m, const Node& n) {
  return {m.in_shape(n, 0), m.out_shape(n), m.input(n, 0), m.output(n)};
}

/// A concatenation's output (of shape `so`) as `outer` rows along dimension `axis`: row o holds
/// each input's row o in turn, input k's being its extent along the axis times `inner` elements.
struct ConcatRows {
  int64_t outer = 1, inner = 1;
};
inline ConcatRows concat_rows(const Shape& so, uint32_t axis) {
  ConcatRows r;
  for (uint32_t d = 0; d < axis; ++d) r.outer *= so.d[d];
  for (int d = static_cast<int>(axis) + 1; d < so.rank; ++d) r.inner *= so.d[d];
  return r;
}

// ---------------------------------------------------------------------------------------------
// Arithmetic shared by float and integer nodes.

inline float clampf(float v, float lo, float hi) { return std::min(std::max(v, lo), hi); }

/// True when node n's output range clamps nothing.
inline bool unbounded_range(const Node& n) { return std::isinf(n.output_min) && n.output_min < 0 && std::isinf(n.output_max) && n.output_max > 0; }

/// Row-major strides of a shape.
inline void strides_of(const Shape& s, int64_t* st) {
  int64_t acc = 1;
  for (int d = s.rank - 1; d >= 0; --d) {
    st[d] = acc;
    acc *= s.d[d];
  }
}

/// Visits the elements of shape `s` in row-major order, calling f(i, offset) for the i-th, where
/// `offset` moves by step[d] along dimension d (a permuted or strided view of another buffer).
template <typename F>
void walk_strided(const Shape& s, const int64_t* step, F f) {
  int64_t idx[kMaxRank] = {};
  int64_t off = 0;
  const int64_t count = s.numel();
  for (int64_t i = 0; i < count; ++i) {
    f(i, off);
    for (int d = s.rank - 1; d >= 0; --d) {
      off += step[d];
      if (++idx[d] < s.d[d]) break;
      off -= step[d] * s.d[d];
      idx[d] = 0;
    }
  }
}

/// binary_broadcast's general case: the output in runs along which each operand steps by one
/// element or stays on one (kernels::for_each_broadcast_run), each run a loop of the four forms.
template <typename A, typename B, typename O, typename F>
[[gnu::noinline]] void binary_broadcast_runs(const Shape& sa, const A* a, const Shape& sb, const B* b, const Shape& so, O* out, F f) {
  const std::span<const int64_t> out_sizes{so.d, static_cast<size_t>(so.rank)};
  const std::array<std::span<const int64_t>, 2> in_sizes{std::span<const int64_t>{sa.d, static_cast<size_t>(sa.rank)},
                                                         std::span<const int64_t>{sb.d, static_cast<size_t>(sb.rank)}};
  kernels::for_each_broadcast_run<2>(out_sizes, in_sizes, [&](int64_t o, int64_t len, const std::array<int64_t, 2>& at, const std::array<int64_t, 2>& step) {
    const A* x = a + at[0];
    const B* y = b + at[1];
    O* to = out + o;
    if (step[0] && step[1]) {
      for (int64_t j = 0; j < len; ++j) to[j] = f(x[j], y[j]);
    } else if (step[0]) {
      const B yv = y[0];
      for (int64_t j = 0; j < len; ++j) to[j] = f(x[j], yv);
    } else if (step[1]) {
      const A xv = x[0];
      for (int64_t j = 0; j < len; ++j) to[j] = f(xv, y[j]);
    } else {
      const O v = f(x[0], y[0]);
      for (int64_t j = 0; j < len; ++j) to[j] = v;
    }
  });
}

/// out[i] = f(a[...], b[...]) over the broadcast output `so`, with the kernels' broadcast walk
/// (kernels/util/broadcast_util.h) for shapes that differ in more than a scalar operand.
template <typename A, typename B, typename O, typename F>
void binary_broadcast(const Shape& sa, const A* a, const Shape& sb, const B* b, const Shape& so, O* out, F f) {
  const int64_t n = so.numel();
  if (sa == so && sb == so) {
    for (int64_t i = 0; i < n; ++i) out[i] = f(a[i], b[i]);
    return;
  }
  if (sb.numel() == 1 && sa == so) {
    const B bv = b[0];
    for (int64_t i = 0; i < n; ++i) out[i] = f(a[i], bv);
    return;
  }
  // One operand whole, the other repeating along the leading dimensions (a per-channel scale of
  // an NHWC image, a bias row): rows of the repeating one's length.
  auto repeats = [&](const Shape& small) {
    const int64_t m = small.numel();
    if (m <= 0 || n % m != 0) return false;
    for (int k = 1; k <= small.rank; ++k) {  // right-aligned: equal trailing dims, ones before them
      const int64_t d = small.d[small.rank - k];
      if (k > so.rank) {
        if (d != 1) return false;
        continue;
      }
      if (d != so.d[so.rank - k]) {
        for (int j = k; j <= small.rank; ++j) {
          if (small.d[small.rank - j] != 1) return false;
        }
        return true;
      }
    }
    return true;
  };
  if (sa == so && repeats(sb)) {
    const int64_t m = sb.numel();
    for (int64_t r = 0; r < n; r += m) {
      for (int64_t j = 0; j < m; ++j) out[r + j] = f(a[r + j], b[j]);
    }
    return;
  }
  if (sb == so && repeats(sa)) {
    const int64_t m = sa.numel();
    for (int64_t r = 0; r < n; r += m) {
      for (int64_t j = 0; j < m; ++j) out[r + j] = f(a[j], b[r + j]);
    }
    return;
  }
  // One operand whole, the other one value per row of the trailing dimensions it has as 1 (an
  // RMSNorm's x * rsqrt(mean), [1, T, D] by [1, T, 1]): that value over each row.
  auto per_row = [&](const Shape& small) -> int64_t {  // the row length, or 0
    if (small.rank != so.rank) return 0;
    int split = so.rank;
    while (split > 0 && small.d[split - 1] == 1) --split;
    if (split == so.rank) return 0;
    for (int i = 0; i < split; ++i) {
      if (small.d[i] != so.d[i]) return 0;
    }
    int64_t m = 1;
    for (int i = split; i < so.rank; ++i) m *= so.d[i];
    return m;
  };
  if (const int64_t m = sa == so ? per_row(sb) : 0; m > 0) {
    for (int64_t r = 0; r < n / m; ++r) {
      const B bv = b[r];
      for (int64_t j = 0; j < m; ++j) out[r * m + j] = f(a[r * m + j], bv);
    }
    return;
  }
  if (const int64_t m = sb == so ? per_row(sa) : 0; m > 0) {
    for (int64_t r = 0; r < n / m; ++r) {
      const A av = a[r];
      for (int64_t j = 0; j < m; ++j) out[r * m + j] = f(av, b[r * m + j]);
    }
    return;
  }
  // Otherwise in runs along which each operand steps or stays (a rope table [1, T, 1, D] against
  // [1, T, H, D]: runs of D), in a function of its own.
  binary_broadcast_runs(sa, a, sb, b, so, out, f);
}

/// The raw quantized value of `scaled` (a float already divided by the scale): rounded to nearest
/// even, the zero point added, clamped to [qmin, qmax]. NaN has no integer and would pass a
/// min/max clamp untouched into an undefined cast. It becomes qmax, as in XNNPACK's x86 kernels,
/// whose clamp (minps against the upper bound) returns the bound for NaN: ExecuTorch's outputs
/// for int8 programs fed NaN agree with this and with neither qmin nor the zero point.
inline float quantize_raw(float scaled, float zero_point, float qmin, float qmax) {
  if (std::isnan(scaled)) return qmax;
  return std::min(std::max(std::nearbyint(scaled) + zero_point, qmin), qmax);
}

/// XNNPACK's dynamic quantization of `rows` rows of `n` floats (f32 -> qdint8): each row's range
/// widened to include 0, its multiplier 255 / range, zero point nudged to an integer, values
/// rounded to nearest even. `out` (may be null) receives the floats the integers stand for; `ints`
/// (may be null) the integers and each row's zero point and scale.
void quantize_rows_qd8(const float* x, float* out, int64_t rows, int64_t n, DynamicRows* ints);

/// The quantization scale of a quantized constant's element i (per tensor, channel or block).
float constant_scale(const xnn::TensorValue& v, int64_t i);

/// Dequantizes a constant into `out` (numel floats). Quantization parameters were checked by the
/// payload reader (channel axis inside the rank, one scale per channel or block).
Status dequantize_constant(const xnn::TensorValue& v, float* out, const std::string& what);

}  // namespace etscope::runtime::xnnpack
