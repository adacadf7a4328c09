// XNNPACK delegate execution. Sections: [shapes] [load: checks per node] [load] [kernels]
// [integer layers] [execute]
//
// Layout conventions are XNNPACK's: images are NHWC; convolution filters are OHWI (output
// channels, kernel rows, kernel columns, input channels of the group), depthwise filters 1HWO,
// fully connected filters [outputs, inputs] (transposed when flag 1 is set).
#include "xnnpack/xnnpack_delegate.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <map>

#include "etscope/core/checked.h"
#include "etscope/core/event_names.h"
#include "kernels/util/gemm.h"
#include "kernels/util/half.h"

namespace etscope::runtime::xnnpack {
namespace {

using xnn::ElementType;
using xnn::Node;
using xnn::NodeKind;

constexpr uint32_t kFlagTransposeB = 1;  // fully connected: weights are [inputs, outputs]; bmm: b is [.., N, K]
constexpr uint32_t kFlagAlignCorners = 8;
constexpr uint32_t kFlagLegacyResize = 4;
constexpr int kMaxRank = 6;

// ---------------------------------------------------------------------------------------------
// [shapes]

struct Shape {
  int rank = 0;
  int64_t d[kMaxRank] = {};
  // Saturates at INT64_MAX: shapes propagated from a hostile graph's attributes may not fit, and
  // a saturated count never fits a value's declared elements.
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

// A tensor's memory-order shape against the graph's: equal, or one element either way (ExecuTorch
// hands a 0-D tensor to a graph value declared [1]).
bool same_elements(const Shape& tensor, const Shape& graph) {
  return tensor == graph || (tensor.numel() == 1 && graph.numel() == 1);
}

Shape shape_of(const xnn::TensorValue& v) {
  Shape s;
  s.rank = static_cast<int>(v.shape.size());
  for (int i = 0; i < s.rank; ++i) s.d[i] = v.shape[static_cast<size_t>(i)];
  return s;
}

// The first dynamically quantized linear layers ExecuTorch wrote have no Convert node: the graph
// input itself asks to be quantized to qint8 when it arrives (`dq_datatype`). ExecuTorch's
// runtime still reads them by building what today's exporter writes, and so does this: the float
// input, a Convert to per-row dynamic int8 (one non-batch dimension, a new internal value) placed
// before the first node that reads the input, and every reader pointed at the int8 value. Refused
// as ExecuTorch refuses them: another type than qint8, a value that is not a graph input, a
// constant. A quantized value's request is checked the same way and otherwise has no effect.
Status expand_legacy_dynamic_quantization(xnn::Graph& g, const std::string& where) {
  uint32_t next_id = 0;
  for (const xnn::TensorValue& v : g.values) next_id = std::max(next_id, v.id + 1);
  const size_t original = g.values.size();
  for (size_t vi = 0; vi < original; ++vi) {
    if (g.values[vi].runtime_quantize_to == ElementType::kInvalid) continue;
    const std::string what = where + ": XNNPACK value id " + std::to_string(g.values[vi].id) + " (dq_datatype " +
                             xnn::to_string(g.values[vi].runtime_quantize_to) + ")";
    if (g.values[vi].runtime_quantize_to != ElementType::kQInt8) {
      return Error(ErrorCode::kNotSupported, what + ": only qint8 is quantized at run time (as in ExecuTorch)");
    }
    if ((g.values[vi].flags & xnn::kFlagExternalInput) == 0 || g.values[vi].is_constant) {
      return Error(ErrorCode::kCorrupt, what + ": only a graph input can be quantized at run time");
    }
    g.values[vi].runtime_quantize_to = ElementType::kInvalid;
    if (g.values[vi].quant.kind != xnn::Quantization::Kind::kNone) continue;
    if (g.values[vi].type != ElementType::kF32 && g.values[vi].type != ElementType::kF16) {
      return Error(ErrorCode::kNotSupported, what + ": a " + std::string(xnn::to_string(g.values[vi].type)) + " value cannot be quantized at run time");
    }
    if (g.values.size() >= xnn::kMaxGraphItems || next_id == xnn::kNoValue) return Error(ErrorCode::kCorrupt, what + ": the graph is full");
    xnn::TensorValue q;
    q.id = next_id++;
    q.type = ElementType::kQDInt8;
    q.shape = g.values[vi].shape;
    q.numel = g.values[vi].numel;
    q.nbytes = g.values[vi].numel;
    q.quant.kind = xnn::Quantization::Kind::kPerRowDynamic;
    q.quant.non_batch_dims = 1;
    const auto qi = static_cast<int32_t>(g.values.size());
    g.values.push_back(std::move(q));
    size_t first = g.nodes.size();
    for (size_t ni = 0; ni < g.nodes.size(); ++ni) {
      for (int32_t& in : g.nodes[ni].inputs) {
        if (in != static_cast<int32_t>(vi)) continue;
        in = qi;
        first = std::min(first, ni);
      }
    }
    if (first == g.nodes.size()) continue;  // read by no node: nothing to quantize for
    xnn::Node convert;
    convert.kind = NodeKind::kConvert;
    convert.debug_handle = g.nodes[first].debug_handle;
    convert.inputs = {static_cast<int32_t>(vi)};
    convert.outputs = {qi};
    g.nodes.insert(g.nodes.begin() + static_cast<std::ptrdiff_t>(first), std::move(convert));
  }
  return ok_status();
}

// The memory-order shape of an argument tensor (rank at most kMaxRank, checked at load).
Shape physical_shape(const TensorImpl& t) {
  Shape s;
  s.rank = t.dim();
  for (int d = 0; d < t.dim(); ++d) s.d[d] = t.size(t.dim_order()[static_cast<size_t>(d)]);
  return s;
}

// Output size of a windowed dimension (convolution or pooling), or -1 when the window does not
// fit the padded input. Window, dilation and paddings are 32-bit values from the file: the extent
// is computed in 64 unsigned bits, where (2^32 - 1)^2 + 1 cannot overflow.
int64_t window_out(int64_t in, uint32_t pad_a, uint32_t pad_b, uint32_t kernel, uint32_t stride, uint32_t dilation) {
  if (in < 0 || stride == 0 || kernel == 0 || dilation == 0) return -1;
  const uint64_t padded = static_cast<uint64_t>(in) + pad_a + pad_b;  // in < 2^62 (its bytes fit)
  const uint64_t extent = uint64_t{kernel - 1} * dilation + 1;
  if (padded < extent) return -1;
  return static_cast<int64_t>((padded - extent) / stride + 1);
}

// Output size of a transposed convolution's dimension, or -1 when it has none or overflows:
// stride * (in - 1) + adjustment + dilated kernel extent - paddings.
int64_t deconv_out(int64_t in, uint32_t pad_a, uint32_t pad_b, uint32_t kernel, uint32_t stride, uint32_t dilation,
                   uint32_t adjustment) {
  if (in < 1) return -1;
  const auto strided = checked::mul(stride, static_cast<uint64_t>(in - 1));
  const auto span = strided ? checked::add(*strided, uint64_t{adjustment} + uint64_t{kernel - 1} * dilation + 1) : std::nullopt;
  const uint64_t pads = uint64_t{pad_a} + pad_b;
  if (!span || *span <= pads || *span - pads > static_cast<uint64_t>(INT64_MAX)) return -1;
  return static_cast<int64_t>(*span - pads);
}

struct Scratch {
  size_t floats = 0;   // im2col / temporaries
  size_t doubles = 0;  // the same for integer-exact quantized convolutions
  size_t gemm = 0;     // bytes of GEMM workspace
};

// A quantized convolution or fully connected layer computed as XNNPACK computes it: integer
// products summed exactly (in doubles, which hold any int8 x int8 sum of this size), plus the
// int32 bias, then requantized in float: acc * (input scale * filter scale / output scale),
// rounded to nearest even, clamped, plus the output zero point.
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
  std::vector<float> scale;            // requantization scale per output channel
  // Add: XNNPACK's fixed-point form, out = (rounding + a * a_mult + b * b_mult) >> shift
  // (a and b less their zero points), with multipliers of 21 bits at most.
  float a_scale = 1, b_scale = 1;
  int32_t a_mult = 0, b_mult = 0, rounding = 0;
  uint32_t shift = 0;
};

}  // namespace

struct XnnpackDelegate::Impl {
  xnn::Graph graph;
  std::string where;
  // Shapes in memory order. A graph whose DelegateCall arguments are dynamic tensors declares
  // its values at their upper bounds (as ExecuTorch serializes them): `declared` holds those,
  // and every value's buffer is sized for them. `shapes` are the current ones: propagated from
  // the arguments' shapes through every node (reshape()) whenever those change, each checked to
  // fit its value's declared elements. A static graph's inferred shapes must equal the declared.
  std::vector<Shape> declared;
  std::vector<Shape> shapes;
  bool dynamic = false;
  std::vector<Shape> last_inputs;  // the argument shapes `shapes` were propagated from
  std::vector<std::vector<float>> owned;  // per value: internal buffers and float constants
  std::vector<float*> data;               // per value, external ones set per execution
  // Profiling events: XNNPACK's runtime fuses some nodes into one operator (a Clamp into its
  // producer, a dynamic-quantization Convert into the layer it feeds, two reshapes in a row, a
  // transpose into the matrix product it feeds), so its dump has one event for them; etscope
  // does the same. Event e covers the nodes
  // event_first[e]..event_first[e + 1] - 1 and is named event_names[e].
  std::vector<std::string> event_names;
  std::vector<uint32_t> event_first;
  void group_events();
  std::vector<int> consumers;             // per value: how many node inputs read it
  std::vector<uint32_t> reads, writes;    // DelegateCall argument positions
  std::vector<float> scratch;
  std::vector<double> qscratch;
  std::vector<uint8_t> gemm_workspace;
  std::vector<int32_t> quantized_of_node;  // per node: index into quantized, or -1
  std::vector<QuantizedLayer> quantized;
  /// True when node n is a convolution or fully connected layer with int8 activations per tensor
  /// and int8 filters (per tensor or per channel): it runs in integers.
  bool integer_layer(const Node& n) const;
  Status plan_quantized(size_t i);
  /// The Clamp node that alone reads node i's only output (not a graph output), or null.
  const Node* sole_clamp_consumer(size_t i) const;
  void run_quantized(const Node& n, const QuantizedLayer& q);
  /// A quantized convolution or fully connected layer: exact integer sums in T (float or double).
  template <typename T, typename Requantize>
  void integer_gemm_layer(const Node& n, const QuantizedLayer& q, T* ds, const T* weights, const Requantize& requantize);

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
  void plan_logging(std::span<EValue* const> args);
  bool log_output(Logged& l);  // false when it cannot be logged

  std::string node_where(size_t i) const {
    return where + ": XNNPACK node " + std::to_string(i) + " (" + xnn::to_string(graph.nodes[i].kind) + ")";
  }
  Error bad(size_t node, const std::string& text) const { return Error(ErrorCode::kCorrupt, node_where(node) + ": " + text); }
  const Shape& in_shape(const Node& n, size_t k) const { return shapes[static_cast<size_t>(n.inputs[k])]; }
  const Shape& out_shape(const Node& n, size_t k = 0) const { return shapes[static_cast<size_t>(n.outputs[k])]; }
  Status check_node(size_t i, Scratch* scratch);
  /// Sets node i's output k to `want`: in a static graph it must be the declared shape, in a
  /// dynamic one of the declared rank and within the declared elements.
  Status set_out(size_t i, const Shape& want, size_t k = 0);
  /// Propagates the arguments' current shapes through the graph (dynamic graphs) and resizes
  /// the output arguments.
  Status reshape(std::span<EValue* const> args);
  std::string event_name(const Node& n) const;
  void run_node(const Node& n);
  /// Rounds the outputs of a node whose values are quantized (or f16) to their grid.
  void quantize_outputs(const Node& n);
};

namespace {

// ---------------------------------------------------------------------------------------------
// [load: checks per node]

constexpr uint32_t kFlagKeepDims = 0x40;  // pools: keep the reduced dimensions (a no-op for 4-D pools)

bool activation_type_ok(const xnn::TensorValue& v) {
  using K = xnn::Quantization::Kind;
  switch (v.type) {
    case ElementType::kF32:
    case ElementType::kF16: return v.quant.kind == K::kNone;
    case ElementType::kQInt8:
    case ElementType::kQUInt8: return v.quant.kind == K::kPerTensor && v.quant.scale > 0 && std::isfinite(v.quant.scale);
    case ElementType::kQDInt8: return v.quant.kind == K::kPerRowDynamic;
    case ElementType::kInt32: return v.quant.kind == K::kNone;  // argmax pooling's indices, checked per node
    default: return false;
  }
}

bool constant_type_ok(ElementType t) {
  switch (t) {
    case ElementType::kF32: case ElementType::kF16: case ElementType::kQInt8: case ElementType::kQUInt8: case ElementType::kQInt32:
    case ElementType::kQCInt8: case ElementType::kQCInt32: case ElementType::kQCInt4: case ElementType::kQBInt4:
      return true;
    default: return false;
  }
}

// Dequantizes a constant into `out` (numel floats). Quantization parameters were checked by the
// payload reader (channel axis inside the rank, one scale per channel or block).
Status dequantize_constant(const xnn::TensorValue& v, float* out, const std::string& what) {
  using K = xnn::Quantization::Kind;
  const uint8_t* b = v.constant.data();
  const int64_t n = static_cast<int64_t>(v.numel);
  const int64_t last = v.shape.empty() ? 1 : v.shape.back();
  // Index of element i's channel along the quantization axis.
  int64_t inner = 1;
  for (size_t d = v.quant.axis + 1; d < v.shape.size(); ++d) inner *= v.shape[d];
  const int64_t channels = v.shape.empty() ? 1 : v.shape[std::min<size_t>(v.quant.axis, v.shape.size() - 1)];
  auto channel = [&](int64_t i) { return static_cast<size_t>((i / inner) % channels); };
  auto scale_of = [&](int64_t i) -> float {
    if (v.quant.kind == K::kPerTensor) return v.quant.scale;
    if (v.quant.kind == K::kPerChannel) return v.quant.scales[channel(i)];
    if (v.quant.kind == K::kPerBlock) {
      const int64_t row = i / last, col = i % last;
      return v.quant.scales[static_cast<size_t>(row * (last / v.quant.block_size) + col / v.quant.block_size)];
    }
    return 1.0f;
  };
  const bool needs_params = v.type != ElementType::kF32 && v.type != ElementType::kF16;
  if (needs_params && v.quant.kind != K::kPerTensor && v.quant.kind != K::kPerChannel && v.quant.kind != K::kPerBlock) {
    return Error(ErrorCode::kCorrupt, what + ": a " + std::string(xnn::to_string(v.type)) + " constant without quantization parameters");
  }
  switch (v.type) {
    case ElementType::kF32: std::memcpy(out, b, static_cast<size_t>(n) * 4); break;
    case ElementType::kF16:
      for (int64_t i = 0; i < n; ++i) {
        uint16_t h;
        std::memcpy(&h, b + 2 * i, 2);
        out[i] = kernels::half_to_float(h);
      }
      break;
    case ElementType::kQInt8:
    case ElementType::kQCInt8:
      for (int64_t i = 0; i < n; ++i) out[i] = (static_cast<float>(static_cast<int8_t>(b[i])) - static_cast<float>(v.quant.zero_point)) * scale_of(i);
      break;
    case ElementType::kQUInt8:
      for (int64_t i = 0; i < n; ++i) out[i] = (static_cast<float>(b[i]) - static_cast<float>(v.quant.zero_point)) * scale_of(i);
      break;
    case ElementType::kQInt32:
    case ElementType::kQCInt32:
      for (int64_t i = 0; i < n; ++i) {
        int32_t q;
        std::memcpy(&q, b + 4 * i, 4);
        out[i] = static_cast<float>(q) * scale_of(i);
      }
      break;
    case ElementType::kQCInt4:
    case ElementType::kQBInt4: {
      // Two values a byte, the even column in the low nibble; each row starts on a byte.
      const int64_t row_bytes = (last + 1) / 2;
      for (int64_t i = 0; i < n; ++i) {
        const int64_t row = i / last, col = i % last;
        const uint8_t byte = b[row * row_bytes + col / 2];
        const int nibble = (col % 2 == 0) ? (byte & 0x0f) : (byte >> 4);
        out[i] = static_cast<float>(nibble - 8) * scale_of(i);
      }
      break;
    }
    default: return Error(ErrorCode::kNotSupported, what + ": constants of type " + std::string(xnn::to_string(v.type)));
  }
  return ok_status();
}

// The raw quantized value of `scaled` (a float already divided by the scale): rounded to nearest
// even, the zero point added, clamped to [qmin, qmax]. NaN has no integer and would pass a
// min/max clamp untouched into an undefined cast. It becomes qmax, as in XNNPACK's x86 kernels,
// whose clamp (minps against the upper bound) returns the bound for NaN: ExecuTorch's outputs
// for int8 programs fed NaN agree with this and with neither qmin nor the zero point.
float quantize_raw(float scaled, float zero_point, float qmin, float qmax) {
  if (std::isnan(scaled)) return qmax;
  return std::min(std::max(std::nearbyint(scaled) + zero_point, qmin), qmax);
}

// Rounds `x` to the grid of a per-tensor quantized type and back (XNNPACK rounds to nearest even).
float fake_quant(float x, float scale, int32_t zero_point, float qmin, float qmax) {
  const float zp = static_cast<float>(zero_point);
  return (quantize_raw(x / scale, zp, qmin, qmax) - zp) * scale;
}

// XNNPACK's dynamic quantization of one row to int8: the range includes 0, the zero point is
// nudged to an integer, values round to nearest even.
void quantize_row_dynamic(const float* x, float* out, int64_t n) {
  float lo = 0, hi = 0;
  for (int64_t i = 0; i < n; ++i) {
    lo = std::min(lo, x[i]);
    hi = std::max(hi, x[i]);
  }
  const float qmin = -128, qmax = 127;
  const float scale = lo == hi ? 1.0f : (hi - lo) / (qmax - qmin);
  const float from_min = qmin - lo / scale, from_max = qmax - hi / scale;
  const float error_min = qmin + lo / scale, error_max = qmax + hi / scale;
  float zp = error_min + error_max > 0 ? from_min : from_max;
  zp = std::min(std::max(std::nearbyint(zp), qmin), qmax);
  const float inv = 1.0f / scale;
  for (int64_t i = 0; i < n; ++i) {
    out[i] = (quantize_raw(x[i] * inv, zp, qmin, qmax) - zp) * scale;
  }
}

bool is_unary_elementwise(NodeKind k) {
  switch (k) {
    case NodeKind::kSigmoid: case NodeKind::kClamp: case NodeKind::kFloor: case NodeKind::kSqrt: case NodeKind::kCeil:
    case NodeKind::kHardSwish: case NodeKind::kLeakyRelu: case NodeKind::kNegate: case NodeKind::kSquare:
    case NodeKind::kElu: case NodeKind::kAbs: case NodeKind::kRSqrt: case NodeKind::kLog: case NodeKind::kGelu:
    case NodeKind::kTanh: case NodeKind::kExp: case NodeKind::kSin: case NodeKind::kCopy: case NodeKind::kCos:
    case NodeKind::kConvert:
      return true;
    default: return false;
  }
}

bool is_binary_elementwise(NodeKind k) {
  switch (k) {
    case NodeKind::kAdd: case NodeKind::kSubtract: case NodeKind::kMultiply: case NodeKind::kDivide:
    case NodeKind::kMinimum: case NodeKind::kMaximum: case NodeKind::kPRelu:
      return true;
    default: return false;
  }
}

// NumPy broadcasting of two shapes (aligned at the last dimension), or nullopt.
std::optional<Shape> broadcast(const Shape& a, const Shape& b) {
  Shape out;
  out.rank = std::max(a.rank, b.rank);
  for (int i = 0; i < out.rank; ++i) {
    const int ia = a.rank - out.rank + i, ib = b.rank - out.rank + i;
    const int64_t da = ia >= 0 ? a.d[ia] : 1, db = ib >= 0 ? b.d[ib] : 1;
    if (da != db && da != 1 && db != 1) return std::nullopt;
    out.d[i] = da == 1 ? db : da;
  }
  return out;
}

}  // namespace

Status XnnpackDelegate::Impl::check_node(size_t i, Scratch* scratch) {
  const Node& n = graph.nodes[i];
  // Activations are f32 or quantized per tensor (or per row, at run time); constants may be any
  // type etscope dequantizes at load. Quantized values are held as their dequantized floats.
  auto check_type = [&](int32_t v, const char* role) -> Status {
    const xnn::TensorValue& tv = graph.values[static_cast<size_t>(v)];
    if (tv.is_constant ? constant_type_ok(tv.type) : activation_type_ok(tv)) return ok_status();
    return Error(ErrorCode::kNotSupported, node_where(i) + ": " + role + " value " + std::to_string(tv.id) + " is " +
                                               xnn::to_string(tv.type) +
                                               " with these parameters; etscope does not execute it in XNNPACK graphs yet");
  };
  for (int32_t v : n.inputs) {
    if (v >= 0) ETSCOPE_TRY(check_type(v, "input"));
  }
  for (int32_t v : n.outputs) ETSCOPE_TRY(check_type(v, "output"));
  for (int32_t v : n.outputs) {
    if (graph.values[static_cast<size_t>(v)].type == ElementType::kQDInt8 && n.kind != NodeKind::kConvert) {
      return bad(i, "only a Convert node may produce a dynamically quantized value");
    }
  }
  // int32 values are argmax pooling's indices (whole numbers a float holds exactly): written
  // there, then only moved (a layout transpose, a reshape, a copy, a slice, a concatenation),
  // all of whose inputs and outputs are int32 then.
  {
    const bool moves = n.kind == NodeKind::kTranspose || n.kind == NodeKind::kReshape || n.kind == NodeKind::kCopy ||
                       n.kind == NodeKind::kSlice || n.kind == NodeKind::kConcat2 || n.kind == NodeKind::kConcat3 ||
                       n.kind == NodeKind::kConcat4 || n.kind == NodeKind::kConcat5;
    auto is_int32 = [&](int32_t v) { return v >= 0 && graph.values[static_cast<size_t>(v)].type == ElementType::kInt32; };
    const bool int32_in = std::any_of(n.inputs.begin(), n.inputs.end(), is_int32);
    if (int32_in && (!moves || !std::all_of(n.inputs.begin(), n.inputs.end(), is_int32))) {
      return Error(ErrorCode::kNotSupported, node_where(i) + ": reads int32 values; etscope moves int32 values (argmax indices) "
                                                 "in XNNPACK graphs but computes nothing with them");
    }
    for (size_t k = 0; k < n.outputs.size(); ++k) {
      const bool want = (n.kind == NodeKind::kArgMaxPool2d && k == 1) || int32_in;
      if (is_int32(n.outputs[k]) != want) {
        return bad(i, want ? "its output should be int32" : "writes an int32 value from other values");
      }
    }
  }
  auto expect_out = [&](const Shape& want) { return set_out(i, want); };
  auto need_constant = [&](int32_t v, const char* what) -> Status {
    if (v >= 0 && !graph.values[static_cast<size_t>(v)].is_constant) return bad(i, std::string(what) + " is not a constant");
    return ok_status();
  };
  if (is_unary_elementwise(n.kind)) {
    const Shape& d = declared[static_cast<size_t>(n.outputs[0])];
    if (n.kind == NodeKind::kConvert || (dynamic && d.rank == in_shape(n, 0).rank)) return expect_out(in_shape(n, 0));
    if (out_shape(n).numel() != in_shape(n, 0).numel()) return bad(i, "its output has another element count than its input");
    return ok_status();
  }
  if (is_binary_elementwise(n.kind)) {
    std::optional<Shape> s = broadcast(in_shape(n, 0), in_shape(n, 1));
    if (!s) return bad(i, "cannot broadcast " + in_shape(n, 0).text() + " with " + in_shape(n, 1).text());
    return expect_out(*s);
  }
  switch (n.kind) {
    case NodeKind::kSoftmax:
      if (in_shape(n, 0).rank == 0) return bad(i, "softmax of a scalar");
      return expect_out(in_shape(n, 0));
    case NodeKind::kConv2d:
    case NodeKind::kDepthwiseConv2d:
    case NodeKind::kConvTranspose2d: {
      const xnn::ConvParams& c = n.conv;
      const Shape& x = in_shape(n, 0);
      const Shape& w = in_shape(n, 1);
      ETSCOPE_TRY(need_constant(n.inputs[1], "the filter"));
      ETSCOPE_TRY(need_constant(n.inputs[2], "the bias"));
      if (x.rank != 4 || w.rank != 4) return bad(i, "needs a 4-D input and filter");
      if (c.groups == 0 || c.group_in == 0 || c.group_out == 0 || c.kernel_h == 0 || c.kernel_w == 0 || c.stride_h == 0 ||
          c.stride_w == 0 || c.dilation_h == 0 || c.dilation_w == 0) {
        return bad(i, "has a zero group, channel, kernel, stride or dilation");
      }
      if (n.flags != 0) return Error(ErrorCode::kNotSupported, node_where(i) + ": flags " + std::to_string(n.flags) + " are not supported");
      const auto cin = checked::mul(c.groups, c.group_in), cout = checked::mul(c.groups, c.group_out);
      if (!cin || !cout || static_cast<int64_t>(*cin) != x.d[3]) {
        return bad(i, "input has " + std::to_string(x.d[3]) + " channels, groups x group inputs = " +
                          (cin ? std::to_string(*cin) : std::string("overflow")));
      }
      Shape want_w;
      want_w.rank = 4;
      if (n.kind == NodeKind::kDepthwiseConv2d) {
        want_w.d[0] = 1, want_w.d[1] = c.kernel_h, want_w.d[2] = c.kernel_w, want_w.d[3] = static_cast<int64_t>(*cout);
        if (c.group_in != 1) return bad(i, "a depthwise convolution has one input channel per group");
      } else {
        want_w.d[0] = static_cast<int64_t>(*cout), want_w.d[1] = c.kernel_h, want_w.d[2] = c.kernel_w, want_w.d[3] = c.group_in;
      }
      if (!(w == want_w)) return bad(i, "filter is " + w.text() + ", expected " + want_w.text());
      if (n.inputs[2] >= 0 && in_shape(n, 2).numel() != static_cast<int64_t>(*cout)) return bad(i, "bias size differs from the output channels");
      Shape want = x;
      want.d[3] = static_cast<int64_t>(*cout);
      if (n.kind == NodeKind::kConvTranspose2d) {
        want.d[1] = deconv_out(x.d[1], c.padding[0], c.padding[2], c.kernel_h, c.stride_h, c.dilation_h, c.adjustment_h);
        want.d[2] = deconv_out(x.d[2], c.padding[3], c.padding[1], c.kernel_w, c.stride_w, c.dilation_w, c.adjustment_w);
        if (want.d[1] < 1 || want.d[2] < 1) return bad(i, "has no output pixels");
      } else {
        want.d[1] = window_out(x.d[1], c.padding[0], c.padding[2], c.kernel_h, c.stride_h, c.dilation_h);
        want.d[2] = window_out(x.d[2], c.padding[3], c.padding[1], c.kernel_w, c.stride_w, c.dilation_w);
        if (want.d[1] < 1 || want.d[2] < 1) return bad(i, "its window does not fit the padded input");
      }
      ETSCOPE_TRY(expect_out(want));
      if (n.kind == NodeKind::kDepthwiseConv2d && integer_layer(n)) scratch->doubles = std::max<size_t>(scratch->doubles, *cout);
      if (n.kind == NodeKind::kConv2d) {
        // The im2col matrix and a group's result: sizes come from the file, so overflow-checked.
        const uint64_t m = static_cast<uint64_t>(want.d[1] * want.d[2]);
        const uint64_t k = uint64_t{c.kernel_h} * c.kernel_w * c.group_in;  // the filter's row: bytes in the file
        const auto col = checked::mul(m, k), res = checked::mul(m, c.group_out);
        const auto floats = col && res ? checked::add(*col, *res) : std::nullopt;
        if (!floats || *floats > (uint64_t{1} << 60)) return bad(i, "its im2col buffer size overflows");
        const bool exact = integer_layer(n);
        // An integer convolution also holds one image's integers.
        const auto total = exact ? checked::add(*floats, static_cast<uint64_t>(x.d[1] * x.d[2] * x.d[3])) : floats;
        if (!total || *total > (uint64_t{1} << 60)) return bad(i, "its im2col buffer size overflows");
        // Integer layers run in floats or doubles (plan_quantized decides), so both are sized.
        scratch->floats = std::max<size_t>(scratch->floats, static_cast<size_t>(*total));
        if (exact) scratch->doubles = std::max<size_t>(scratch->doubles, static_cast<size_t>(*total));
        scratch->gemm = std::max(scratch->gemm, kernels::gemm_workspace_bytes(static_cast<int64_t>(m), c.group_out,
                                                                               static_cast<int64_t>(k), exact ? 8 : 4));
      }
      return ok_status();
    }
    case NodeKind::kFullyConnected: {
      ETSCOPE_TRY(need_constant(n.inputs[1], "the weight"));
      ETSCOPE_TRY(need_constant(n.inputs[2], "the bias"));
      const Shape& x = in_shape(n, 0);
      const Shape& w = in_shape(n, 1);
      if (w.rank != 2 || x.rank < 1) return bad(i, "needs a 2-D weight and an input of rank 1 or more");
      if ((n.flags & ~kFlagTransposeB) != 0) return Error(ErrorCode::kNotSupported, node_where(i) + ": flags " + std::to_string(n.flags) + " are not supported");
      const bool t = (n.flags & kFlagTransposeB) != 0;
      const int64_t k = t ? w.d[0] : w.d[1], nout = t ? w.d[1] : w.d[0];
      if (x.d[x.rank - 1] != k) return bad(i, "input's last dimension " + std::to_string(x.d[x.rank - 1]) + " differs from the weight's " + std::to_string(k));
      if (n.inputs[2] >= 0 && in_shape(n, 2).numel() != nout) return bad(i, "bias size differs from the outputs");
      Shape want = x;
      want.d[want.rank - 1] = nout;
      ETSCOPE_TRY(expect_out(want));
      const bool exact = integer_layer(n);
      const int64_t rows = x.numel() / std::max<int64_t>(k, 1);
      scratch->gemm = std::max(scratch->gemm, kernels::gemm_workspace_bytes(rows, nout, k, exact ? 8 : 4));
      if (exact) {  // in floats or doubles (plan_quantized decides)
        scratch->doubles = std::max<size_t>(scratch->doubles, static_cast<size_t>(x.numel() + want.numel()));
        scratch->floats = std::max<size_t>(scratch->floats, static_cast<size_t>(x.numel() + want.numel()));
      }
      return ok_status();
    }
    case NodeKind::kBatchMatMul: {
      const Shape& a = in_shape(n, 0);
      const Shape& b = in_shape(n, 1);
      if (a.rank < 2 || b.rank < 2) return bad(i, "needs inputs of rank 2 or more");
      if ((n.flags & ~kFlagTransposeB) != 0) return Error(ErrorCode::kNotSupported, node_where(i) + ": flags " + std::to_string(n.flags) + " are not supported");
      const bool tb = (n.flags & kFlagTransposeB) != 0;
      const int64_t m = a.d[a.rank - 2], k = a.d[a.rank - 1];
      const int64_t kb = tb ? b.d[b.rank - 1] : b.d[b.rank - 2], nn = tb ? b.d[b.rank - 2] : b.d[b.rank - 1];
      if (k != kb) return bad(i, "inner dimensions differ: " + a.text() + " x " + b.text());
      Shape ba = a, bb = b;
      ba.rank -= 2;
      bb.rank -= 2;
      std::optional<Shape> batch = broadcast(ba, bb);
      if (!batch || batch->rank + 2 > kMaxRank) return bad(i, "batch dimensions do not broadcast");
      Shape want = *batch;
      want.d[want.rank++] = m;
      want.d[want.rank++] = nn;
      ETSCOPE_TRY(expect_out(want));
      scratch->gemm = std::max(scratch->gemm, kernels::gemm_workspace_bytes(m, nn, k, 4));
      return ok_status();
    }
    case NodeKind::kGlobalAvgPool2d: {
      const Shape& x = in_shape(n, 0);
      if (x.rank != 4) return bad(i, "needs a 4-D input");
      const Shape& d = declared[static_cast<size_t>(n.outputs[0])];
      if (dynamic && (d.rank == 4 || d.rank == 2)) {
        Shape want = d;
        want.d[0] = x.d[0];
        want.d[d.rank - 1] = x.d[3];
        return expect_out(want);
      }
      if (out_shape(n).numel() != x.d[0] * x.d[3]) return bad(i, "output is not one value per image and channel");
      return ok_status();
    }
    case NodeKind::kAvgPool2d:
    case NodeKind::kMaxPool2d: {
      const Shape& x = in_shape(n, 0);
      const xnn::ConvParams& c = n.conv;
      if (x.rank != 4) return bad(i, "needs a 4-D input");
      if ((n.flags & ~kFlagKeepDims) != 0) return Error(ErrorCode::kNotSupported, node_where(i) + ": flags " + std::to_string(n.flags) + " are not supported");
      const uint32_t dh = n.kind == NodeKind::kMaxPool2d ? c.dilation_h : 1, dw = n.kind == NodeKind::kMaxPool2d ? c.dilation_w : 1;
      Shape want = x;
      want.d[1] = window_out(x.d[1], c.padding[0], c.padding[2], c.kernel_h, c.stride_h, dh);
      want.d[2] = window_out(x.d[2], c.padding[3], c.padding[1], c.kernel_w, c.stride_w, dw);
      if (want.d[1] < 1 || want.d[2] < 1) return bad(i, "its window does not fit the padded input");
      return expect_out(want);
    }
    case NodeKind::kArgMaxPool2d: {
      // XNNPACK's argmax pooling: f32 only, windows that tile the padded input (stride = window),
      // the output size is the padded size divided by the window, rounded down.
      const Shape& x = in_shape(n, 0);
      const xnn::ConvParams& c = n.conv;
      if (x.rank != 4 || n.outputs.size() != 2) return bad(i, "needs a 4-D input and two outputs (values, indices)");
      if (n.flags != 0) return Error(ErrorCode::kNotSupported, node_where(i) + ": flags " + std::to_string(n.flags) + " are not supported");
      if (graph.values[static_cast<size_t>(n.inputs[0])].type != ElementType::kF32 ||
          graph.values[static_cast<size_t>(n.outputs[0])].type != ElementType::kF32) {
        return bad(i, "takes and gives f32 values only");
      }
      if (uint64_t{c.kernel_h} * c.kernel_w < 2) return bad(i, "its window holds fewer than 2 elements (XNNPACK refuses 1x1)");
      if (x.d[1] < 1 || x.d[2] < 1 || x.d[3] < 1) return bad(i, "needs a non-empty input");
      Shape want = x;
      want.d[1] = (x.d[1] + int64_t{c.padding[0]} + c.padding[2]) / c.kernel_h;
      want.d[2] = (x.d[2] + int64_t{c.padding[3]} + c.padding[1]) / c.kernel_w;
      if (want.d[1] < 1 || want.d[2] < 1) return bad(i, "its window does not fit the padded input");
      // Bounds that keep hostile windows finite: an index a float holds exactly, padding that
      // leaves each window an input pixel, and at most 2^32 elements visited.
      if (uint64_t{c.kernel_h} * c.kernel_w > (uint64_t{1} << 24)) return bad(i, "its window holds more than 2^24 elements");
      if (c.padding[0] >= c.kernel_h || c.padding[2] >= c.kernel_h || c.padding[1] >= c.kernel_w || c.padding[3] >= c.kernel_w) {
        return bad(i, "its padding is not smaller than its window");
      }
      const auto work = checked::mul(static_cast<uint64_t>(want.numel()), uint64_t{c.kernel_h} * c.kernel_w);
      if (!work || *work > (uint64_t{1} << 32)) return bad(i, "its windows would visit more than 2^32 input elements");
      ETSCOPE_TRY(set_out(i, want, 0));
      return set_out(i, want, 1);
    }
    case NodeKind::kTranspose: {
      const Shape& x = in_shape(n, 0);
      if (static_cast<int>(n.dims_a.size()) != x.rank) return bad(i, "permutation length differs from the input's rank");
      Shape want = x;
      uint32_t seen = 0;
      for (int d = 0; d < x.rank; ++d) {
        const uint32_t p = n.dims_a[static_cast<size_t>(d)];
        if (p >= static_cast<uint32_t>(x.rank) || (seen & (1u << p))) return bad(i, "is not a permutation");
        seen |= 1u << p;
        want.d[d] = x.d[p];
      }
      return expect_out(want);
    }
    case NodeKind::kReshape: {
      const Shape& x = in_shape(n, 0);
      if (dynamic) {
        // The new shape, where one 0 stands for the dimension the element count leaves.
        const Shape& d = declared[static_cast<size_t>(n.outputs[0])];
        if (static_cast<int>(n.dims_a.size()) != d.rank) return bad(i, "its new shape's rank differs from its output's");
        Shape want = d;
        int infer = -1;
        int64_t known = 1;
        for (int k = 0; k < d.rank; ++k) {
          want.d[k] = n.dims_a[static_cast<size_t>(k)];
          if (want.d[k] == 0) {
            if (infer >= 0) return bad(i, "its new shape has two dimensions to infer");
            infer = k;
          } else {
            const std::optional<uint64_t> p = checked::mul(static_cast<uint64_t>(known), static_cast<uint64_t>(want.d[k]));
            if (!p || *p > (uint64_t{1} << 62)) return bad(i, "its new shape's element count overflows");
            known = static_cast<int64_t>(*p);
          }
        }
        if (infer >= 0) want.d[infer] = known > 0 ? x.numel() / known : 0;
        if (want.numel() != x.numel()) return bad(i, "cannot reshape " + x.text() + " to " + want.text());
        return expect_out(want);
      }
      if (out_shape(n).numel() != x.numel()) return bad(i, "changes the element count");
      return ok_status();
    }
    case NodeKind::kSlice: {
      const Shape& x = in_shape(n, 0);
      if (static_cast<int>(n.dims_a.size()) != x.rank) return bad(i, "offsets differ from the input's rank");
      if (dynamic) {
        // Sizes from the node, where 0 stands for the rest of the dimension.
        if (static_cast<int>(n.dims_b.size()) != x.rank) return bad(i, "sizes differ from the input's rank");
        Shape want = x;
        for (int d = 0; d < x.rank; ++d) {
          const uint64_t off = n.dims_a[static_cast<size_t>(d)], size = n.dims_b[static_cast<size_t>(d)];
          if (off > static_cast<uint64_t>(x.d[d])) return bad(i, "slice of dimension " + std::to_string(d) + " starts outside the input " + x.text());
          want.d[d] = size == 0 ? x.d[d] - static_cast<int64_t>(off) : static_cast<int64_t>(size);
        }
        ETSCOPE_TRY(expect_out(want));
      }
      const Shape& o = out_shape(n);
      if (o.rank != x.rank) return bad(i, "output rank differs from the input's");
      for (int d = 0; d < x.rank; ++d) {
        if (!checked::range_fits(n.dims_a[static_cast<size_t>(d)], static_cast<uint64_t>(o.d[d]), static_cast<uint64_t>(x.d[d]))) {
          return bad(i, "slice of dimension " + std::to_string(d) + " lies outside the input");
        }
      }
      return ok_status();
    }
    case NodeKind::kConstantPad: {
      const Shape& x = in_shape(n, 0);
      if (static_cast<int>(n.dims_a.size()) != x.rank || static_cast<int>(n.dims_b.size()) != x.rank) {
        return bad(i, "paddings differ from the input's rank");
      }
      Shape want = x;
      for (int d = 0; d < x.rank; ++d) want.d[d] = x.d[d] + n.dims_a[static_cast<size_t>(d)] + n.dims_b[static_cast<size_t>(d)];
      return expect_out(want);
    }
    case NodeKind::kConcat2:
    case NodeKind::kConcat3:
    case NodeKind::kConcat4:
    case NodeKind::kConcat5: {
      Shape want = in_shape(n, 0);
      if (n.axis >= static_cast<uint32_t>(want.rank)) return bad(i, "axis is outside the inputs' rank");
      for (size_t k = 1; k < n.inputs.size(); ++k) {
        const Shape& s = in_shape(n, k);
        if (s.rank != want.rank) return bad(i, "inputs differ in rank");
        for (int d = 0; d < s.rank; ++d) {
          if (d != static_cast<int>(n.axis) && s.d[d] != want.d[d]) return bad(i, "inputs differ outside the axis");
        }
        want.d[n.axis] += s.d[n.axis];
      }
      return expect_out(want);
    }
    case NodeKind::kResizeBilinear2d: {
      const Shape& x = in_shape(n, 0);
      if (x.rank != 4 || n.new_h == 0 || n.new_w == 0 || x.d[1] < 1 || x.d[2] < 1) {
        return bad(i, "needs a non-empty 4-D input and a non-empty size");
      }
      if ((n.flags & ~(kFlagAlignCorners | kFlagLegacyResize)) != 0) {
        return Error(ErrorCode::kNotSupported, node_where(i) + ": flags " + std::to_string(n.flags) + " are not supported");
      }
      Shape want = x;
      want.d[1] = n.new_h;
      want.d[2] = n.new_w;
      return expect_out(want);
    }
    case NodeKind::kAttention:
      return Error(ErrorCode::kNotSupported, node_where(i) + ": ExecuTorch's XNNPACK runtime does not execute this node kind "
                                                 "either (it refuses the program: unhandled node type), and neither does etscope");
    default:
      return Error(ErrorCode::kNotSupported, node_where(i) + ": etscope cannot execute this XNNPACK node kind yet");
  }
}

Status XnnpackDelegate::Impl::set_out(size_t i, const Shape& want, size_t k) {
  const size_t out = static_cast<size_t>(graph.nodes[i].outputs[k]);
  const Shape& d = declared[out];
  if (!dynamic) {
    if (!(d == want)) return bad(i, "its output is declared " + d.text() + ", its inputs give " + want.text());
    return ok_status();
  }
  if (want.rank != d.rank || want.numel() > d.numel()) {
    return bad(i, "its output would be " + want.text() + ", which does not fit the " + d.text() + " it is declared with");
  }
  shapes[out] = want;
  return ok_status();
}

// The operator names XNNPACK's profiler reports (as ExecuTorch 1.5.1's XNNPACK backend records
// them), so that dumps read alike; etscope records one event per node where XNNPACK may fuse
// nodes (two reshapes in a row) or split them.
std::string XnnpackDelegate::Impl::event_name(const Node& n) const {
  const xnn::TensorValue& in = graph.values[static_cast<size_t>(n.inputs[0])];
  const xnn::TensorValue& out = graph.values[static_cast<size_t>(n.outputs[0])];
  auto bits = [](const xnn::TensorValue& v) {
    switch (v.type) {
      case ElementType::kF16: case ElementType::kBF16: return "X16";
      case ElementType::kQInt8: case ElementType::kQUInt8: case ElementType::kQDInt8: return "X8";
      default: return "X32";
    }
  };
  auto real = [](const xnn::TensorValue& v) {
    switch (v.type) {
      case ElementType::kF16: return "F16";
      case ElementType::kQInt8: return "S8";
      case ElementType::kQUInt8: return "U8";
      default: return "F32";
    }
  };
  const bool quantized_in = in.type == ElementType::kQInt8 || in.type == ElementType::kQUInt8;
  auto weights = [&]() -> std::string {
    if (n.inputs.size() < 2 || n.inputs[1] < 0) return "";
    const xnn::TensorValue& w = graph.values[static_cast<size_t>(n.inputs[1])];
    switch (w.type) {
      case ElementType::kQCInt8: return "QC8W";
      case ElementType::kQCInt4: return "QC4W";
      case ElementType::kQBInt4: return "QB4W";
      case ElementType::kQInt8: return "QS8W";
      default: return "";
    }
  };
  auto conv_type = [&]() -> std::string {
    if (!quantized_in) return real(in);
    return weights() == "QC8W" ? "QC8" : in.type == ElementType::kQUInt8 ? "QU8" : "QS8";
  };
  switch (n.kind) {
    case NodeKind::kConv2d: {
      // XNNPACK runs 1x1 convolutions as the GEMMs of a fully connected operator.
      const bool pointwise = n.conv.kernel_h == 1 && n.conv.kernel_w == 1 && n.conv.stride_h == 1 && n.conv.stride_w == 1 &&
                             n.conv.padding == std::array<uint32_t, 4>{} && n.conv.groups == 1;
      return pointwise ? "Fully Connected (NC, " + conv_type() + ") GEMM" : "Convolution (NHWC, " + conv_type() + ") IGEMM";
    }
    case NodeKind::kDepthwiseConv2d: return "Convolution (NHWC, " + conv_type() + ") DWConv";
    case NodeKind::kConvTranspose2d:
      return "Deconvolution (NHWC, " + conv_type() + (n.conv.stride_h > 1 || n.conv.stride_w > 1 ? ") Subconv2D" : ") IGEMM");
    case NodeKind::kFullyConnected: {
      if (in.type == ElementType::kQDInt8) return "Fully Connected (NC, QDU8, " + std::string(real(out)) + ", " + weights() + ") GEMM";
      if (quantized_in) return "Fully Connected (NC, " + std::string(real(in) == std::string("S8") ? "QS8" : "QU8") + ", " + weights() + ") GEMM";
      return "Fully Connected (NC, " + std::string(real(in)) + ") GEMM";
    }
    case NodeKind::kBatchMatMul: return "Batch Matrix Multiply (NC, " + std::string(real(in)) + ") GEMM";
    case NodeKind::kTranspose: return "Transpose (ND, " + std::string(bits(in)) + ")";
    case NodeKind::kReshape: return "Static Reshape (NC)";
    case NodeKind::kCopy:
    case NodeKind::kConcat2:
    case NodeKind::kConcat3:
    case NodeKind::kConcat4:
    case NodeKind::kConcat5: return "Copy (NC, " + std::string(bits(in)) + ")";
    case NodeKind::kSlice: return "Slice (ND, " + std::string(bits(in)) + ")";
    case NodeKind::kConstantPad: return "Constant Pad (ND, " + std::string(bits(in)) + ")";
    case NodeKind::kAvgPool2d: return "Average Pooling (NHWC, " + std::string(real(in)) + ") Average Pooling";
    case NodeKind::kMaxPool2d: return "Max Pooling (NHWC, " + std::string(real(in)) + ")";
    case NodeKind::kArgMaxPool2d: return "ArgMax Pooling (NHWC, F32)";
    case NodeKind::kGlobalAvgPool2d: return "Mean (ND) Reduce2";
    case NodeKind::kResizeBilinear2d: return "Resize Bilinear (NHWC)";
    case NodeKind::kSoftmax: return "Softmax (NC, " + std::string(real(in)) + ")";
    case NodeKind::kAdd: return "Add (ND)";
    case NodeKind::kSubtract: return "Subtract (ND)";
    case NodeKind::kMultiply: return n.inputs[0] == n.inputs[1] ? "Square (NC)" : "Multiply (ND)";  // XNNPACK rewrites x * x
    case NodeKind::kDivide: return "Divide (ND)";
    case NodeKind::kMinimum: return "Minimum (ND)";
    case NodeKind::kMaximum: return "Maximum (ND)";
    case NodeKind::kPRelu: return "PReLU (ND)";
    case NodeKind::kClamp: return "Clamp (NC)";
    case NodeKind::kHardSwish: return "HardSwish (NC)";
    case NodeKind::kSigmoid: return "Sigmoid (NC)";
    case NodeKind::kTanh: return "TanH (NC)";
    case NodeKind::kGelu: return "GELU (NC)";
    case NodeKind::kElu: return "ELU (NC)";
    case NodeKind::kLeakyRelu: return "LeakyReLU (NC)";
    case NodeKind::kConvert: return "Convert (NC)";
    case NodeKind::kAbs: return "Abs (NC)";
    case NodeKind::kNegate: return "Negate (NC)";
    case NodeKind::kSquare: return "Square (NC)";
    case NodeKind::kSqrt: return "Square Root (NC)";
    case NodeKind::kRSqrt: return "Reciprocal Square Root (NC)";
    case NodeKind::kExp: return "Exp (NC)";
    case NodeKind::kLog: return "Log (NC)";
    case NodeKind::kFloor: return "Floor (NC)";
    case NodeKind::kCeil: return "Ceiling (NC)";
    case NodeKind::kSin: return "Sine (NC)";
    case NodeKind::kCos: return "Cosine (NC)";
    default: return std::string(xnn::to_string(n.kind)) + " (NC)";
  }
}

void XnnpackDelegate::Impl::group_events() {
  const size_t nn = graph.nodes.size();
  // Node i's only output feeds node j alone and is not a graph output.
  auto feeds_only = [&](size_t i, size_t j) {
    const Node& a = graph.nodes[i];
    const Node& b = graph.nodes[j];
    if (a.outputs.size() != 1) return false;
    const int32_t v = a.outputs[0];
    return consumers[static_cast<size_t>(v)] == 1 && (graph.values[static_cast<size_t>(v)].flags & xnn::kFlagExternalOutput) == 0 &&
           std::find(b.inputs.begin(), b.inputs.end(), v) != b.inputs.end();
  };
  auto takes_activation = [](NodeKind k) {
    switch (k) {
      case NodeKind::kConv2d: case NodeKind::kDepthwiseConv2d: case NodeKind::kConvTranspose2d: case NodeKind::kFullyConnected:
      case NodeKind::kAdd: case NodeKind::kSubtract: case NodeKind::kMultiply: case NodeKind::kDivide:
      case NodeKind::kAvgPool2d: case NodeKind::kMaxPool2d: case NodeKind::kGlobalAvgPool2d:
        return true;
      default: return false;
    }
  };
  // joins[i]: node i is timed within the event of node i + 1 (1) or of node i - 1 (-1).
  std::vector<int> joins(nn, 0);
  for (size_t i = 0; i < nn; ++i) {
    const Node& n = graph.nodes[i];
    const bool next = i + 1 < nn && feeds_only(i, i + 1);
    const NodeKind nk = next ? graph.nodes[i + 1].kind : n.kind;
    if (next && n.kind == NodeKind::kConvert && graph.values[static_cast<size_t>(n.outputs[0])].type == ElementType::kQDInt8) joins[i] = 1;
    if (next && n.kind == NodeKind::kReshape && nk == NodeKind::kReshape) joins[i] = 1;
    // A transpose of the last two dimensions feeding a batched matrix product becomes the
    // product's transposed-operand flag.
    if (next && n.kind == NodeKind::kTranspose && nk == NodeKind::kBatchMatMul && n.dims_a.size() >= 2 &&
        n.dims_a[n.dims_a.size() - 1] == n.dims_a.size() - 2 && n.dims_a[n.dims_a.size() - 2] == n.dims_a.size() - 1 &&
        graph.nodes[i + 1].inputs.size() > 1 && graph.nodes[i + 1].inputs[1] == n.outputs[0]) {
      joins[i] = 1;
    }
    if (n.kind == NodeKind::kClamp && i > 0 && joins[i - 1] == 0 && takes_activation(graph.nodes[i - 1].kind) && feeds_only(i - 1, i)) {
      joins[i] = -1;
    }
  }
  std::map<std::string, int> counts;
  event_first.clear();
  event_names.clear();
  for (size_t i = 0; i < nn;) {
    size_t end = i;
    while (end < nn && joins[end] == 1) ++end;            // nodes that join the next one
    if (end < nn) ++end;                                   // the node that names the event
    while (end < nn && joins[end] == -1) ++end;           // nodes that join the previous one
    // The named node: the last one that does not join another.
    size_t named = i;
    for (size_t k = i; k < end; ++k) {
      if (joins[k] == 0) named = k;
    }
    const Node& n = graph.nodes[named];
    const std::string name = event_name(n);
    event_first.push_back(static_cast<uint32_t>(i));
    event_names.push_back(name + " #" + std::to_string(++counts[name]));
    i = end;
  }
  event_first.push_back(static_cast<uint32_t>(nn));
}

// ---------------------------------------------------------------------------------------------
// [load]

XnnpackDelegate::XnnpackDelegate(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
XnnpackDelegate::~XnnpackDelegate() = default;
const std::vector<uint32_t>& XnnpackDelegate::read_args() const { return impl_->reads; }
const std::vector<uint32_t>& XnnpackDelegate::written_args() const { return impl_->writes; }

Result<std::unique_ptr<XnnpackDelegate>> XnnpackDelegate::load(const Program& program, const Delegate& delegate,
                                                               std::span<EValue* const> args, const Reserve& reserve,
                                                               const std::string& where) {
  auto impl = std::make_unique<Impl>();
  impl->where = where;
  ETSCOPE_ASSIGN_OR_RETURN(impl->graph, xnn::parse_xnnpack_delegate(program, delegate, where + ": XNNPACK payload"));
  ETSCOPE_TRY(expand_legacy_dynamic_quantization(impl->graph, where));
  const xnn::Graph& g = impl->graph;
  const size_t nv = g.values.size();
  impl->shapes.resize(nv);
  impl->declared.resize(nv);
  impl->owned.resize(nv);
  impl->data.assign(nv, nullptr);
  // Which values hold data before the first node: graph inputs and constants.
  std::vector<uint8_t> ready(nv, 0);
  for (size_t v = 0; v < nv; ++v) {
    impl->shapes[v] = impl->declared[v] = shape_of(g.values[v]);
    ready[v] = g.values[v].is_constant || (g.values[v].flags & xnn::kFlagExternalInput) != 0;
  }
  std::vector<uint8_t> staged(nv, 0);  // f16 and int8 graph inputs and outputs: through float buffers
  // The DelegateCall's arguments: each graph input or output is the argument its external id
  // names, a tensor with the graph's bytes (in its dim order, as XNNPACK receives it).
  for (const std::vector<int32_t>* list : {&g.inputs, &g.outputs}) {
    const bool output = list == &g.outputs;
    for (int32_t vi : *list) {
      const xnn::TensorValue& v = g.values[static_cast<size_t>(vi)];
      const std::string what = where + ": XNNPACK graph " + (output ? "output" : "input") + " (value id " + std::to_string(v.id) +
                               ", argument " + std::to_string(v.external_id) + ")";
      if (v.external_id >= args.size()) return Error(ErrorCode::kCorrupt, what + ": the call has only " + std::to_string(args.size()) + " arguments");
      const EValue* a = args[v.external_id];
      if (a->tag != Tag::kTensor || a->tensor == nullptr) return Error(ErrorCode::kCorrupt, what + ": the argument is not a tensor");
      const TensorImpl& t = *a->tensor;
      const bool f32 = v.type == ElementType::kF32 && t.dtype() == ScalarType::kFloat;
      const bool f16 = v.type == ElementType::kF16 && t.dtype() == ScalarType::kHalf;
      // Quantized tensors the program passes as they are (e.g. a quantized constant): int8 for
      // qint8, uint8 for quint8, with the value's per-tensor parameters.
      const bool q8 = v.quant.kind == xnn::Quantization::Kind::kPerTensor &&
                      ((v.type == ElementType::kQInt8 && t.dtype() == ScalarType::kChar) ||
                       (v.type == ElementType::kQUInt8 && t.dtype() == ScalarType::kByte));
      // int32 values (argmax indices) leave the graph as int32 or int64 tensors.
      const bool i32 = output && v.type == ElementType::kInt32 && (t.dtype() == ScalarType::kInt || t.dtype() == ScalarType::kLong);
      if (!f32 && !f16 && !q8 && !i32) {
        return Error(ErrorCode::kNotSupported, what + ": " + xnn::to_string(v.type) + " graph value for a " + scalar_type_name(t.dtype()) +
                                                   " tensor; etscope passes f32, f16 and per-tensor int8 tensors to XNNPACK graphs, and takes int32 indices from them, only so far");
      }
      if (f16 || q8 || i32) staged[static_cast<size_t>(vi)] = 1;
      if (t.dim() > kMaxRank) return Error(ErrorCode::kCorrupt, what + ": rank above 6");
      const Shape physical = physical_shape(t);
      if (!same_elements(physical, impl->shapes[static_cast<size_t>(vi)])) {
        return Error(ErrorCode::kNotSupported, what + ": the tensor is " + physical.text() + " in memory order, the graph expects " +
                                                   impl->shapes[static_cast<size_t>(vi)].text());
      }
      (output ? impl->writes : impl->reads).push_back(v.external_id);
      impl->dynamic |= t.dynamic();
    }
  }
  // Nodes in order: what they read must exist, what they write must be internal or an output.
  Scratch scratch;
  std::vector<uint8_t> written(nv, 0);
  impl->consumers.assign(nv, 0);
  uint64_t bytes = 0;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& n = g.nodes[i];
    if (n.outputs.empty() || n.inputs.empty()) return impl->bad(i, "has no input or no output");
    for (int32_t v : n.inputs) {
      if (v < 0) continue;
      if (!ready[static_cast<size_t>(v)]) {
        return impl->bad(i, "reads value id " + std::to_string(g.values[static_cast<size_t>(v)].id) + " before any node writes it");
      }
      ++impl->consumers[static_cast<size_t>(v)];
    }
    for (int32_t v : n.outputs) {
      const xnn::TensorValue& tv = g.values[static_cast<size_t>(v)];
      if (tv.is_constant || (tv.flags & xnn::kFlagExternalInput) != 0 || written[static_cast<size_t>(v)]) {
        return impl->bad(i, "writes value id " + std::to_string(tv.id) + ", a constant, a graph input or a value written before");
      }
      if (std::find(n.inputs.begin(), n.inputs.end(), v) != n.inputs.end()) return impl->bad(i, "writes its own input");
    }
    ETSCOPE_TRY(impl->check_node(i, &scratch));
    for (int32_t v : n.outputs) ready[static_cast<size_t>(v)] = written[static_cast<size_t>(v)] = 1;
  }
  impl->group_events();
  for (int32_t vi : g.outputs) {
    if (!written[static_cast<size_t>(vi)]) {
      return Error(ErrorCode::kCorrupt, where + ": XNNPACK graph output value id " + std::to_string(g.values[static_cast<size_t>(vi)].id) +
                                            " is never written");
    }
  }
  // Memory: float copies of constants (aligned, whatever their offset in the file) and one
  // buffer per internal value; all within the method's budget.
  auto needs_buffer = [&](size_t v) {
    const xnn::TensorValue& tv = g.values[v];
    if ((tv.flags & (xnn::kFlagExternalInput | xnn::kFlagExternalOutput)) != 0) return staged[v] != 0;
    return tv.is_constant || written[v] != 0;
  };
  for (size_t v = 0; v < nv; ++v) {
    if (!needs_buffer(v)) continue;
    const auto b = checked::mul(g.values[v].numel, 4);
    const auto sum = b ? checked::add(bytes, *b) : std::nullopt;
    if (!sum) return Error(ErrorCode::kCorrupt, where + ": XNNPACK delegate buffers: sizes overflow");
    bytes = *sum;
  }
  // Layers that run in integers keep their filters as integer-valued doubles too.
  for (const Node& n : g.nodes) {
    if (!impl->integer_layer(n) || n.kind == NodeKind::kAdd || n.kind == NodeKind::kGlobalAvgPool2d) continue;
    const auto b = checked::mul(g.values[static_cast<size_t>(n.inputs[1])].numel, 8);
    const auto sum = b ? checked::add(bytes, *b) : std::nullopt;
    if (!sum) return Error(ErrorCode::kCorrupt, where + ": XNNPACK delegate buffers: sizes overflow");
    bytes = *sum;
  }
  const auto total = checked::add(bytes, uint64_t{scratch.floats} * 4 + uint64_t{scratch.doubles} * 8 + scratch.gemm);
  if (!total) return Error(ErrorCode::kCorrupt, where + ": XNNPACK delegate buffers: sizes overflow");
  bytes = *total;
  ETSCOPE_TRY(reserve(bytes, where + ": XNNPACK delegate buffers"));
  for (size_t v = 0; v < nv; ++v) {
    const xnn::TensorValue& tv = g.values[v];
    if (!needs_buffer(v)) continue;
    impl->owned[v].resize(static_cast<size_t>(tv.numel));
    if (tv.is_constant && tv.numel > 0) {
      ETSCOPE_TRY(dequantize_constant(tv, impl->owned[v].data(), where + ": XNNPACK value id " + std::to_string(tv.id)));
    }
    impl->data[v] = impl->owned[v].data();
  }
  impl->scratch.resize(scratch.floats);
  impl->qscratch.resize(scratch.doubles);
  impl->gemm_workspace.resize(scratch.gemm);
  impl->quantized_of_node.assign(g.nodes.size(), -1);
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    if (impl->integer_layer(g.nodes[i])) ETSCOPE_TRY(impl->plan_quantized(i));
  }
  impl->plan_logging(args);
  return std::unique_ptr<XnnpackDelegate>(new XnnpackDelegate(std::move(impl)));
}

// Debug handles of nodes that stand for no edge-graph node: the layout conversions the
// partitioner inserts carry 65535 (and 0 is never a handle).
bool is_edge_handle(uint32_t h) { return h != 0 && h != 0xffff; }

void XnnpackDelegate::Impl::plan_logging(std::span<EValue* const> args) {
  const size_t nv = graph.values.size();
  order.assign(nv, {});
  for (auto& o : order) {
    for (int d = 0; d < kMaxRank; ++d) o[static_cast<size_t>(d)] = static_cast<uint8_t>(d);
  }
  for (int32_t vi : graph.inputs) {
    const TensorImpl& t = *args[graph.values[static_cast<size_t>(vi)].external_id]->tensor;
    if (t.dim() != shapes[static_cast<size_t>(vi)].rank) continue;
    for (int d = 0; d < t.dim(); ++d) order[static_cast<size_t>(vi)][static_cast<size_t>(d)] = t.dim_order()[static_cast<size_t>(d)];
  }
  // An edge-graph permute keeps its input's memory format (the partitioner lowers it on the
  // channels-last data when its input is channels-last), so it keeps the order too.
  auto keeps_layout = [](NodeKind k) {
    switch (k) {
      case NodeKind::kReshape: case NodeKind::kFullyConnected: case NodeKind::kBatchMatMul:
        return false;
      default: return true;
    }
  };
  std::map<uint32_t, uint32_t> last_with_handle;
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    const Node& n = graph.nodes[i];
    const size_t out = static_cast<size_t>(n.outputs[0]);
    const Shape& so = shapes[out];
    if (n.kind == NodeKind::kTranspose && !is_edge_handle(n.debug_handle)) {
      // A layout conversion the partitioner inserted: same tensor, other memory order.
      const auto& in = order[static_cast<size_t>(n.inputs[0])];
      for (size_t d = 0; d < n.dims_a.size(); ++d) order[out][d] = in[n.dims_a[d]];
    } else if (keeps_layout(n.kind)) {
      for (int32_t v : n.inputs) {
        if (v >= 0 && shapes[static_cast<size_t>(v)].rank == so.rank && !graph.values[static_cast<size_t>(v)].is_constant) {
          order[out] = order[static_cast<size_t>(v)];
          break;
        }
      }
    }
    if (is_edge_handle(n.debug_handle)) last_with_handle[n.debug_handle] = static_cast<uint32_t>(i);
  }
  logged_of_node.assign(graph.nodes.size(), -1);
  size_t scratch_bytes = 0;
  for (auto [handle, node] : last_with_handle) {
    // Layout conversions the partitioner put right after the node to undo its own (a transpose
    // back to the logical order, then reshapes that drop the dimension a 1-D convolution ran
    // with) belong to it: the edge graph's tensor is what comes out of them. Conversions that
    // prepare the next operator (to NHWC, adding a dimension) do not.
    while (node + 1 < graph.nodes.size()) {
      const Node& next = graph.nodes[node + 1];
      const int32_t v = graph.nodes[node].outputs[0];
      if (is_edge_handle(next.debug_handle) || next.inputs[0] != v || consumers[static_cast<size_t>(v)] != 1) break;
      const size_t to = static_cast<size_t>(next.outputs[0]);
      bool undoes = false;
      if (next.kind == NodeKind::kTranspose) {
        undoes = true;
        for (int d = 0; d < shapes[to].rank; ++d) undoes &= order[to][static_cast<size_t>(d)] == d;
      } else if (next.kind == NodeKind::kReshape) {
        undoes = shapes[to].rank < shapes[static_cast<size_t>(v)].rank;
      }
      if (!undoes) break;
      ++node;
    }
    const Node& n = graph.nodes[node];
    const size_t out = static_cast<size_t>(n.outputs[0]);
    const xnn::TensorValue& v = graph.values[out];
    // Quantized values are logged as the floats they stand for: the edge graph's tensor at such a
    // handle is the dequantize's output. Dynamically quantized rows are no edge-graph tensor.
    const ScalarType dtype = ScalarType::kFloat;
    if (v.type == ElementType::kQDInt8) continue;
    const Shape& so = shapes[out];
    Logged l;
    l.node = node;
    l.handle = static_cast<int32_t>(handle);
    int64_t logical[kMaxRank] = {};
    for (int d = 0; d < so.rank; ++d) {
      logical[order[out][static_cast<size_t>(d)]] = so.d[d];
      l.permute |= order[out][static_cast<size_t>(d)] != d;
    }
    // Room for the value's declared elements: a dynamic graph's shapes change from run to run.
    const size_t bytes = static_cast<size_t>(declared[out].numel()) * 4;
    if (!l.tensor.init(dtype, {logical, static_cast<size_t>(so.rank)}, {}, dynamic, bytes).ok()) continue;
    if (l.permute) scratch_bytes = std::max(scratch_bytes, bytes);
    l.value.tag = Tag::kTensor;
    logged_of_node[node] = static_cast<int32_t>(logged.size());
    logged.push_back(l);
  }
  // Pointers into `logged` are taken only now that it no longer grows.
  for (Logged& l : logged) l.value.tensor = &l.tensor;
  log_scratch.resize(scratch_bytes / 4);
}

// Points the logged tensor at the node's output in logical order (transposed into scratch when
// the node computed it in another memory order).
bool XnnpackDelegate::Impl::log_output(Logged& l) {
  const size_t out = static_cast<size_t>(graph.nodes[l.node].outputs[0]);
  const Shape& so = shapes[out];
  const float* src = data[out];
  TensorImpl& t = l.tensor;
  if (dynamic) {
    int64_t logical[kMaxRank] = {};
    for (int d = 0; d < so.rank; ++d) logical[order[out][static_cast<size_t>(d)]] = so.d[d];
    if (!t.resize({logical, static_cast<size_t>(so.rank)}).ok()) return false;  // never: shapes fit the declared ones
  }
  if (!l.permute) {
    t.set_data(const_cast<float*>(src));
    return true;
  }
  // Logical strides, then walk the value in memory order.
  int64_t lstride[kMaxRank] = {}, acc = 1;
  for (int d = so.rank - 1; d >= 0; --d) {
    lstride[d] = acc;
    acc *= t.size(d);
  }
  int64_t step[kMaxRank] = {}, idx[kMaxRank] = {};
  for (int d = 0; d < so.rank; ++d) step[d] = lstride[order[out][static_cast<size_t>(d)]];
  float* dst = log_scratch.data();
  int64_t at = 0;
  for (int64_t i = 0; i < so.numel(); ++i) {
    dst[at] = src[i];
    for (int d = so.rank - 1; d >= 0; --d) {
      at += step[d];
      if (++idx[d] < so.d[d]) break;
      at -= step[d] * so.d[d];
      idx[d] = 0;
    }
  }
  t.set_data(dst);
  return true;
}

// ---------------------------------------------------------------------------------------------
// [kernels]

namespace {

float clampf(float v, float lo, float hi) { return std::min(std::max(v, lo), hi); }

// Row-major strides of a shape.
void strides_of(const Shape& s, int64_t* st) {
  int64_t acc = 1;
  for (int d = s.rank - 1; d >= 0; --d) {
    st[d] = acc;
    acc *= s.d[d];
  }
}

template <typename F>
void binary_broadcast(const Shape& sa, const float* a, const Shape& sb, const float* b, const Shape& so, float* out, F f) {
  const int64_t n = so.numel();
  if (sa == so && sb == so) {
    for (int64_t i = 0; i < n; ++i) out[i] = f(a[i], b[i]);
    return;
  }
  if (sb.numel() == 1 && sa == so) {
    const float bv = b[0];
    for (int64_t i = 0; i < n; ++i) out[i] = f(a[i], bv);
    return;
  }
  // Strides of each input over the output's dimensions (0 where broadcast).
  int64_t sta[kMaxRank] = {}, stb[kMaxRank] = {}, ra[kMaxRank], rb[kMaxRank];
  strides_of(sa, ra);
  strides_of(sb, rb);
  for (int d = 0; d < so.rank; ++d) {
    const int ia = sa.rank - so.rank + d, ib = sb.rank - so.rank + d;
    sta[d] = (ia >= 0 && sa.d[ia] != 1) ? ra[ia] : 0;
    stb[d] = (ib >= 0 && sb.d[ib] != 1) ? rb[ib] : 0;
  }
  int64_t idx[kMaxRank] = {};
  int64_t oa = 0, ob = 0;
  const int last = so.rank - 1;
  for (int64_t i = 0; i < n;) {
    // Innermost dimension in one run.
    const int64_t len = last >= 0 ? so.d[last] : 1;
    const int64_t sa_l = last >= 0 ? sta[last] : 0, sb_l = last >= 0 ? stb[last] : 0;
    for (int64_t j = 0; j < len; ++j) out[i + j] = f(a[oa + j * sa_l], b[ob + j * sb_l]);
    i += len;
    for (int d = last - 1; d >= 0; --d) {
      oa += sta[d];
      ob += stb[d];
      if (++idx[d] < so.d[d]) break;
      oa -= sta[d] * so.d[d];
      ob -= stb[d] * so.d[d];
      idx[d] = 0;
    }
  }
}

float gelu(float x) { return 0.5f * x * (1.0f + std::erf(x * 0.70710678118654752f)); }

}  // namespace

// ---------------------------------------------------------------------------------------------
// [integer layers]

namespace {

bool per_tensor_int8(const xnn::TensorValue& v) {
  return (v.type == ElementType::kQInt8 || v.type == ElementType::kQUInt8) && v.quant.kind == xnn::Quantization::Kind::kPerTensor;
}

// The dimension of a layer's filter that indexes output channels.
size_t output_channel_axis(const Node& n) {
  if (n.kind == NodeKind::kDepthwiseConv2d) return 3;
  if (n.kind == NodeKind::kFullyConnected && (n.flags & kFlagTransposeB) != 0) return 1;
  return 0;
}

// XNNPACK's quantization of a float bound into an int8 (uint8) range.
float quantized_bound(float x, float scale, int32_t zero, float lo, float hi) {
  if (std::isnan(x)) return lo;
  const float q = x / scale + static_cast<float>(zero);
  return std::min(std::max(std::nearbyint(std::min(std::max(q, lo), hi)), lo), hi);
}

}  // namespace

namespace {

// One group's im2col matrix of an NHWC convolution over one image: a row per output pixel
// (oy, ox), a column per (ky, kx, channel of the group); taps in the padding are zero.
template <typename T>
void im2col(const T* img, const Shape& sx, const Shape& so, const xnn::ConvParams& c, uint32_t g, T* col) {
  const int64_t H = sx.d[1], W = sx.d[2], C = sx.d[3], OH = so.d[1], OW = so.d[2];
  const int64_t cg = c.group_in, kk = int64_t{c.kernel_h} * c.kernel_w * cg;
  for (int64_t oy = 0; oy < OH; ++oy) {
    for (int64_t ox = 0; ox < OW; ++ox) {
      T* row = col + (oy * OW + ox) * kk;
      for (uint32_t ky = 0; ky < c.kernel_h; ++ky) {
        const int64_t iy = oy * c.stride_h - c.padding[0] + int64_t{ky} * c.dilation_h;
        for (uint32_t kx = 0; kx < c.kernel_w; ++kx) {
          const int64_t ix = ox * c.stride_w - c.padding[3] + int64_t{kx} * c.dilation_w;
          T* cell = row + (int64_t{ky} * c.kernel_w + kx) * cg;
          if (iy < 0 || iy >= H || ix < 0 || ix >= W) {
            std::fill(cell, cell + cg, T{0});  // XNNPACK pads quantized inputs with their zero point
          } else {
            std::copy_n(img + (iy * W + ix) * C + g * cg, cg, cell);
          }
        }
      }
    }
  }
}

// Calls tap(pixel, k) for each window position of output pixel (oy, ox) inside the H x W image:
// `pixel` is the input pixel's index (iy * W + ix), `k` the filter tap's (ky * kernel_w + kx).
template <typename Tap>
void for_each_tap(const xnn::ConvParams& c, int64_t H, int64_t W, int64_t oy, int64_t ox, Tap tap) {
  for (uint32_t ky = 0; ky < c.kernel_h; ++ky) {
    const int64_t iy = oy * c.stride_h - c.padding[0] + int64_t{ky} * c.dilation_h;
    if (iy < 0 || iy >= H) continue;
    for (uint32_t kx = 0; kx < c.kernel_w; ++kx) {
      const int64_t ix = ox * c.stride_w - c.padding[3] + int64_t{kx} * c.dilation_w;
      if (ix < 0 || ix >= W) continue;
      tap(iy * W + ix, int64_t{ky} * c.kernel_w + kx);
    }
  }
}

}  // namespace

bool XnnpackDelegate::Impl::integer_layer(const Node& n) const {
  if (n.kind == NodeKind::kGlobalAvgPool2d) {
    if (n.inputs.size() != 1 || n.outputs.size() != 1) return false;
    const xnn::TensorValue& a = graph.values[static_cast<size_t>(n.inputs[0])];
    const xnn::TensorValue& o = graph.values[static_cast<size_t>(n.outputs[0])];
    return per_tensor_int8(a) && per_tensor_int8(o) && a.type == o.type;
  }
  if (n.kind == NodeKind::kAdd) {
    if (n.inputs.size() != 2 || n.outputs.size() != 1) return false;
    const xnn::TensorValue& a = graph.values[static_cast<size_t>(n.inputs[0])];
    const xnn::TensorValue& b = graph.values[static_cast<size_t>(n.inputs[1])];
    const xnn::TensorValue& o = graph.values[static_cast<size_t>(n.outputs[0])];
    if (!per_tensor_int8(a) || !per_tensor_int8(b) || !per_tensor_int8(o) || a.type != o.type || b.type != o.type) return false;
    // XNNPACK's fixed-point form needs input-to-output scale ratios in [2^-10, 2^8).
    for (const xnn::TensorValue* v : {&a, &b}) {
      const float r = v->quant.scale / o.quant.scale;
      if (!(r >= 0x1.0p-10f && r < 0x1.0p+8f)) return false;
    }
    return true;
  }
  if (n.kind != NodeKind::kConv2d && n.kind != NodeKind::kDepthwiseConv2d && n.kind != NodeKind::kFullyConnected) return false;
  if (n.inputs.size() < 3 || n.outputs.size() != 1 || n.inputs[1] < 0) return false;
  const xnn::TensorValue& in = graph.values[static_cast<size_t>(n.inputs[0])];
  const xnn::TensorValue& out = graph.values[static_cast<size_t>(n.outputs[0])];
  const xnn::TensorValue& w = graph.values[static_cast<size_t>(n.inputs[1])];
  if (!per_tensor_int8(in) || !per_tensor_int8(out) || in.type != out.type || !w.is_constant) return false;
  using K = xnn::Quantization::Kind;
  const bool weights_ok = (w.type == ElementType::kQInt8 && w.quant.kind == K::kPerTensor) ||
                          (w.type == ElementType::kQCInt8 && w.quant.kind == K::kPerChannel && w.quant.axis == output_channel_axis(n));
  if (!weights_ok) return false;
  if (n.inputs[2] >= 0) {
    const xnn::TensorValue& b = graph.values[static_cast<size_t>(n.inputs[2])];
    const bool bias_ok = b.is_constant && ((b.type == ElementType::kQInt32 && b.quant.kind == K::kPerTensor) ||
                                           (b.type == ElementType::kQCInt32 && b.quant.kind == K::kPerChannel));
    if (!bias_ok) return false;
  }
  return true;
}

// Integer filter and bias values and per-channel requantization scales of node i (checked by
// check_node and integer_layer: constants that hold their whole tensor, one scale per channel).
Status XnnpackDelegate::Impl::plan_quantized(size_t i) {
  const Node& n = graph.nodes[i];
  const xnn::TensorValue& in = graph.values[static_cast<size_t>(n.inputs[0])];
  const xnn::TensorValue& out = graph.values[static_cast<size_t>(n.outputs[0])];
  QuantizedLayer q;
  q.in_scale = in.quant.scale;
  q.in_zero = in.quant.zero_point;
  q.out_scale = out.quant.scale;
  q.out_zero = out.quant.zero_point;
  const bool u8 = out.type == ElementType::kQUInt8;
  const float lo = u8 ? 0.0f : -128.0f, hi = u8 ? 255.0f : 127.0f;
  q.qmin = quantized_bound(n.output_min, q.out_scale, q.out_zero, lo, hi);
  q.qmax = quantized_bound(n.output_max, q.out_scale, q.out_zero, lo, hi);
  if (n.kind == NodeKind::kGlobalAvgPool2d) {
    q.a_scale = in.quant.scale;
    quantized_of_node[i] = static_cast<int32_t>(quantized.size());
    quantized.push_back(std::move(q));
    return ok_status();
  }
  if (n.kind == NodeKind::kAdd) {
    const xnn::TensorValue& b = graph.values[static_cast<size_t>(n.inputs[1])];
    q.a_scale = in.quant.scale;
    q.b_scale = b.quant.scale;
    const float ra = in.quant.scale / q.out_scale, rb = b.quant.scale / q.out_scale;
    int exponent = 0;
    std::frexp(std::max(ra, rb), &exponent);  // max in [2^(exponent-1), 2^exponent)
    q.shift = static_cast<uint32_t>(20 - (exponent - 1));
    q.a_mult = static_cast<int32_t>(std::nearbyint(std::ldexp(ra, static_cast<int>(q.shift))));
    q.b_mult = static_cast<int32_t>(std::nearbyint(std::ldexp(rb, static_cast<int>(q.shift))));
    q.rounding = int32_t{1} << (q.shift - 1);
    quantized_of_node[i] = static_cast<int32_t>(quantized.size());
    quantized.push_back(std::move(q));
    return ok_status();
  }
  // XNNPACK fuses a Clamp that is the only reader of a layer's output into the layer (and a
  // Clamp after that one too): the layer then requantizes straight into the last Clamp's output,
  // with that value's scale and zero point and the intersection of the ranges. When the Clamp's
  // quantization differs from the layer's output, rounding once there differs from rounding
  // twice. The Clamps still run after the layer, on values already on their grid and in their
  // range, and leave them unchanged.
  {
    float fmin = n.output_min, fmax = n.output_max;
    const xnn::TensorValue* last = &out;
    for (size_t j = i; const Node* c = sole_clamp_consumer(j);) {
      const xnn::TensorValue& cv = graph.values[static_cast<size_t>(c->outputs[0])];
      if (!per_tensor_int8(cv) || cv.type != out.type) break;
      fmin = std::max(fmin, c->output_min);
      fmax = std::min(fmax, c->output_max);
      last = &cv;
      j = static_cast<size_t>(c - graph.nodes.data());
    }
    q.out_scale = last->quant.scale;
    q.out_zero = last->quant.zero_point;
    q.qmin = quantized_bound(fmin, q.out_scale, q.out_zero, lo, hi);
    q.qmax = quantized_bound(fmax, q.out_scale, q.out_zero, lo, hi);
  }
  const xnn::TensorValue& w = graph.values[static_cast<size_t>(n.inputs[1])];
  const size_t axis = output_channel_axis(n);
  const size_t channels = static_cast<size_t>(w.shape.at(axis));
  q.weights.resize(static_cast<size_t>(w.numel));
  const int32_t wzero = w.quant.kind == xnn::Quantization::Kind::kPerTensor ? w.quant.zero_point : 0;
  for (uint64_t k = 0; k < w.numel; ++k) {
    const int32_t raw = w.type == ElementType::kQUInt8 ? static_cast<int32_t>(w.constant[k]) : static_cast<int32_t>(static_cast<int8_t>(w.constant[k]));
    q.weights[k] = static_cast<double>(raw - wzero);
  }
  q.scale.resize(channels);
  q.bias.assign(channels, 0.0);
  for (size_t c = 0; c < channels; ++c) {
    const float ws = w.quant.kind == xnn::Quantization::Kind::kPerChannel ? w.quant.scales.at(c) : w.quant.scale;
    q.scale[c] = q.in_scale * ws / q.out_scale;
  }
  if (n.inputs[2] >= 0) {
    const xnn::TensorValue& b = graph.values[static_cast<size_t>(n.inputs[2])];
    if (b.numel != channels) return bad(i, "bias size differs from the output channels");
    for (size_t c = 0; c < channels; ++c) {
      int32_t v;
      std::memcpy(&v, b.constant.data() + 4 * c, 4);
      q.bias[c] = static_cast<double>(v);
    }
  }
  if (n.kind != NodeKind::kDepthwiseConv2d) {
    // The largest |input - zero point| times the largest per-channel sum of |filter| bounds every
    // partial sum of the GEMM, in any order.
    const bool u8in = in.type == ElementType::kQUInt8;
    const double max_in = std::max(std::abs((u8in ? 255.0 : 127.0) - q.in_zero), std::abs((u8in ? 0.0 : -128.0) - q.in_zero));
    const size_t per = channels > 0 ? q.weights.size() / channels : 0;
    const bool rows = n.kind == NodeKind::kConv2d || (n.flags & kFlagTransposeB) == 0;  // channel c's weights contiguous
    double worst = 0;
    for (size_t c = 0; c < channels; ++c) {
      double sum = 0;
      for (size_t j = 0; j < per; ++j) sum += std::abs(q.weights[rows ? c * per + j : j * channels + c]);
      worst = std::max(worst, sum);
    }
    if (worst * max_in < 0x1.0p24) {
      q.fweights.assign(q.weights.begin(), q.weights.end());
      q.weights = {};
    }
  }
  quantized_of_node[i] = static_cast<int32_t>(quantized.size());
  quantized.push_back(std::move(q));
  return ok_status();
}

const Node* XnnpackDelegate::Impl::sole_clamp_consumer(size_t i) const {
  const Node& n = graph.nodes[i];
  if (n.outputs.size() != 1) return nullptr;
  const int32_t v = n.outputs[0];
  if (consumers[static_cast<size_t>(v)] != 1 || (graph.values[static_cast<size_t>(v)].flags & xnn::kFlagExternalOutput) != 0) {
    return nullptr;
  }
  for (size_t j = i + 1; j < graph.nodes.size(); ++j) {
    const Node& c = graph.nodes[j];
    if (std::find(c.inputs.begin(), c.inputs.end(), v) == c.inputs.end()) continue;
    return c.kind == NodeKind::kClamp && c.inputs.size() == 1 && c.outputs.size() == 1 ? &c : nullptr;
  }
  return nullptr;
}

template <typename T, typename Requantize>
void XnnpackDelegate::Impl::integer_gemm_layer(const Node& n, const QuantizedLayer& q, T* ds, const T* weights,
                                               const Requantize& requantize) {
  const float* x = data[static_cast<size_t>(n.inputs[0])];
  float* out = data[static_cast<size_t>(n.outputs[0])];
  const Shape& sx = in_shape(n, 0);
  const Shape& so = out_shape(n);
  const float inv = 1.0f / q.in_scale;
  if (n.kind == NodeKind::kFullyConnected) {
    const int64_t nout = so.d[so.rank - 1], k = sx.d[sx.rank - 1];
    const int64_t rows = k > 0 ? sx.numel() / k : 0;
    T* xi = ds;
    T* acc = ds + sx.numel();
    for (int64_t e = 0; e < sx.numel(); ++e) xi[e] = static_cast<T>(std::nearbyint(x[e] * inv));
    const bool t = (n.flags & kFlagTransposeB) != 0;
    kernels::gemm(false, !t, rows, nout, k, T{1}, xi, weights, T{0}, acc, gemm_workspace.data());
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t o = 0; o < nout; ++o) {
        out[r * nout + o] = requantize(static_cast<double>(acc[r * nout + o]) + q.bias[static_cast<size_t>(o)], static_cast<size_t>(o));
      }
    }
    return;
  }
  const xnn::ConvParams& c = n.conv;
  const int64_t H = sx.d[1], W = sx.d[2], C = sx.d[3], OH = so.d[1], OW = so.d[2], CO = so.d[3];
  const int64_t kk = int64_t{c.kernel_h} * c.kernel_w * c.group_in, m = OH * OW;
  const int64_t og = c.group_out;
  // The image's integers once (not once per window tap), then im2col of those; a 1x1
  // convolution with stride 1, no padding and one group multiplies the image itself.
  const bool direct = c.kernel_h == 1 && c.kernel_w == 1 && c.stride_h == 1 && c.stride_w == 1 &&
                      c.padding == std::array<uint32_t, 4>{} && c.groups == 1;
  T* img = ds;
  T* col = img + H * W * C;
  T* res = col + (direct ? 0 : m * kk);
  for (int64_t b = 0; b < sx.d[0]; ++b) {
    const float* xb = x + b * H * W * C;
    for (int64_t e = 0; e < H * W * C; ++e) img[e] = static_cast<T>(std::nearbyint(xb[e] * inv));
    float* dst = out + b * m * CO;
    for (uint32_t g = 0; g < c.groups; ++g) {
      if (!direct) im2col(img, sx, so, c, g, col);
      kernels::gemm(false, true, m, og, kk, T{1}, direct ? img : col, weights + g * og * kk, T{0}, res, gemm_workspace.data());
      for (int64_t p = 0; p < m; ++p) {
        for (int64_t o = 0; o < og; ++o) {
          const size_t ch = static_cast<size_t>(g * og + o);
          dst[p * CO + static_cast<int64_t>(ch)] = requantize(static_cast<double>(res[p * og + o]) + q.bias[ch], ch);
        }
      }
    }
  }
}

void XnnpackDelegate::Impl::run_quantized(const Node& n, const QuantizedLayer& q) {
  const float* x = data[static_cast<size_t>(n.inputs[0])];
  float* out = data[static_cast<size_t>(n.outputs[0])];
  const Shape& sx = in_shape(n, 0);
  const Shape& so = out_shape(n);
  const float inv = 1.0f / q.in_scale;
  auto requantize = [&](double acc, size_t c) {
    float r = static_cast<float>(acc) * q.scale[c];
    r = std::min(std::max(r, q.qmin - static_cast<float>(q.out_zero)), q.qmax - static_cast<float>(q.out_zero));
    return std::nearbyint(r) * q.out_scale;  // (quantized - zero point) * scale, as fake_quant stores it
  };
  double* ds = qscratch.data();
  switch (n.kind) {
    case NodeKind::kGlobalAvgPool2d: {
      // XNNPACK's mean: the sum of the raw int8 values per image and channel, scaled in float
      // with the zero points folded into one offset, rounded to nearest even in the output's
      // raw range (ties fall where XNNPACK's do only there).
      const int64_t hw = sx.d[1] * sx.d[2], C = sx.d[3];
      const float ratio = q.a_scale / q.out_scale;
      const float scale = ratio / static_cast<float>(hw);
      const float offset = static_cast<float>(q.out_zero) - static_cast<float>(q.in_zero) * ratio;
      for (int64_t b = 0; b < sx.d[0]; ++b) {
        for (int64_t ch = 0; ch < C; ++ch) {
          int64_t acc = 0;
          for (int64_t p = 0; p < hw; ++p) acc += static_cast<int64_t>(std::nearbyint(x[(b * hw + p) * C + ch] * inv)) + q.in_zero;
          const float raw = std::min(std::max(std::nearbyint(static_cast<float>(acc) * scale + offset), q.qmin), q.qmax);
          out[b * C + ch] = (raw - static_cast<float>(q.out_zero)) * q.out_scale;
        }
      }
      return;
    }
    case NodeKind::kAdd: {
      const float ia = 1.0f / q.a_scale, ib = 1.0f / q.b_scale;
      const int32_t lo = static_cast<int32_t>(q.qmin) - q.out_zero, hi = static_cast<int32_t>(q.qmax) - q.out_zero;
      binary_broadcast(sx, x, in_shape(n, 1), data[static_cast<size_t>(n.inputs[1])], so, out, [&](float a, float b) {
        const int32_t acc = q.rounding + static_cast<int32_t>(std::nearbyint(a * ia)) * q.a_mult +
                            static_cast<int32_t>(std::nearbyint(b * ib)) * q.b_mult;
        const int32_t shifted = acc >= 0 ? acc >> q.shift : ~(~acc >> q.shift);  // arithmetic shift
        return static_cast<float>(std::min(std::max(shifted, lo), hi)) * q.out_scale;
      });
      return;
    }
    case NodeKind::kFullyConnected:
    case NodeKind::kConv2d: {
      // In floats where plan_quantized proved them exact, else in doubles.
      if (!q.fweights.empty()) {
        integer_gemm_layer(n, q, scratch.data(), q.fweights.data(), requantize);
      } else {
        integer_gemm_layer(n, q, ds, q.weights.data(), requantize);
      }
      return;
    }
    case NodeKind::kDepthwiseConv2d: {
      const xnn::ConvParams& c = n.conv;
      const int64_t H = sx.d[1], W = sx.d[2], C = sx.d[3], OH = so.d[1], OW = so.d[2], CO = so.d[3];
      const int64_t mult = c.group_out;
      double* acc = ds;
      for (int64_t b = 0; b < sx.d[0]; ++b) {
        for (int64_t oy = 0; oy < OH; ++oy) {
          for (int64_t ox = 0; ox < OW; ++ox) {
            for (int64_t o = 0; o < CO; ++o) acc[o] = q.bias[static_cast<size_t>(o)];
            for_each_tap(c, H, W, oy, ox, [&](int64_t pixel, int64_t k) {
              const float* in = x + (b * H * W + pixel) * C;
              const double* wk = q.weights.data() + k * CO;
              for (int64_t o = 0; o < CO; ++o) acc[o] += std::nearbyint(in[o / mult] * inv) * wk[o];
            });
            float* px = out + ((b * OH + oy) * OW + ox) * CO;
            for (int64_t o = 0; o < CO; ++o) px[o] = requantize(acc[o], static_cast<size_t>(o));
          }
        }
      }
      return;
    }
    default: return;
  }
}

void XnnpackDelegate::Impl::run_node(const Node& n) {
  const float lo = n.output_min, hi = n.output_max;
  const bool clamps = !(std::isinf(lo) && lo < 0 && std::isinf(hi) && hi > 0);
  float* out = data[static_cast<size_t>(n.outputs[0])];
  const Shape& so = out_shape(n);
  const float* x = data[static_cast<size_t>(n.inputs[0])];
  const int64_t count = so.numel();
  auto unary = [&](auto f) {
    for (int64_t i = 0; i < count; ++i) out[i] = f(x[i]);
  };
  auto binary = [&](auto f) {
    binary_broadcast(in_shape(n, 0), x, in_shape(n, 1), data[static_cast<size_t>(n.inputs[1])], so, out, f);
  };
  switch (n.kind) {
    case NodeKind::kAdd: binary([](float a, float b) { return a + b; }); break;
    case NodeKind::kSubtract: binary([](float a, float b) { return a - b; }); break;
    case NodeKind::kMultiply: binary([](float a, float b) { return a * b; }); break;
    case NodeKind::kDivide: binary([](float a, float b) { return a / b; }); break;
    case NodeKind::kMinimum: binary([](float a, float b) { return std::fmin(a, b); }); break;
    case NodeKind::kMaximum: binary([](float a, float b) { return std::fmax(a, b); }); break;
    case NodeKind::kPRelu: binary([](float a, float b) { return a < 0 ? a * b : a; }); break;
    case NodeKind::kClamp: unary([&](float v) { return clampf(v, lo, hi); }); return;
    case NodeKind::kCopy:
    case NodeKind::kConvert:
    case NodeKind::kReshape:
      if (out != x) std::memmove(out, x, static_cast<size_t>(count) * 4);
      break;
    case NodeKind::kSigmoid: unary([](float v) { return 1.0f / (1.0f + std::exp(-v)); }); break;
    case NodeKind::kTanh: unary([](float v) { return std::tanh(v); }); break;
    case NodeKind::kHardSwish: unary([](float v) { return v * std::min(std::max(v + 3.0f, 0.0f), 6.0f) / 6.0f; }); break;
    case NodeKind::kGelu: unary(gelu); break;
    case NodeKind::kAbs: unary([](float v) { return std::fabs(v); }); break;
    case NodeKind::kNegate: unary([](float v) { return -v; }); break;
    case NodeKind::kSquare: unary([](float v) { return v * v; }); break;
    case NodeKind::kSqrt: unary([](float v) { return std::sqrt(v); }); break;
    case NodeKind::kRSqrt: unary([](float v) { return 1.0f / std::sqrt(v); }); break;
    case NodeKind::kExp: unary([](float v) { return std::exp(v); }); break;
    case NodeKind::kLog: unary([](float v) { return std::log(v); }); break;
    case NodeKind::kFloor: unary([](float v) { return std::floor(v); }); break;
    case NodeKind::kCeil: unary([](float v) { return std::ceil(v); }); break;
    case NodeKind::kSin: unary([](float v) { return std::sin(v); }); break;
    case NodeKind::kCos: unary([](float v) { return std::cos(v); }); break;
    case NodeKind::kElu: {
      const float alpha = n.alpha;
      unary([alpha](float v) { return v < 0 ? alpha * std::expm1(v) : v; });
      break;
    }
    case NodeKind::kLeakyRelu: {
      const float slope = n.alpha;
      unary([slope](float v) { return v < 0 ? v * slope : v; });
      break;
    }
    case NodeKind::kSoftmax: {
      const int64_t c = so.d[so.rank - 1];
      for (int64_t r = 0; r + c <= count && c > 0; r += c) {
        float m = x[r];
        for (int64_t j = 1; j < c; ++j) m = std::max(m, x[r + j]);
        float sum = 0;
        for (int64_t j = 0; j < c; ++j) sum += (out[r + j] = std::exp(x[r + j] - m));
        for (int64_t j = 0; j < c; ++j) out[r + j] /= sum;
      }
      break;
    }
    case NodeKind::kConv2d: {
      const xnn::ConvParams& c = n.conv;
      const Shape& sx = in_shape(n, 0);
      const float* w = data[static_cast<size_t>(n.inputs[1])];
      const float* bias = n.inputs[2] >= 0 ? data[static_cast<size_t>(n.inputs[2])] : nullptr;
      const int64_t H = sx.d[1], W = sx.d[2], C = sx.d[3], OH = so.d[1], OW = so.d[2], CO = so.d[3];
      const int64_t kk = int64_t{c.kernel_h} * c.kernel_w * c.group_in, m = OH * OW;
      const int64_t og = c.group_out;
      float* col = scratch.data();
      float* tmp = col + m * kk;
      const bool direct = c.kernel_h == 1 && c.kernel_w == 1 && c.stride_h == 1 && c.stride_w == 1 &&
                          c.padding == std::array<uint32_t, 4>{} && c.groups == 1;
      for (int64_t b = 0; b < sx.d[0]; ++b) {
        const float* img = x + b * H * W * C;
        float* dst = out + b * m * CO;
        for (uint32_t g = 0; g < c.groups; ++g) {
          const float* a = img;
          if (!direct) {
            im2col(img, sx, so, c, g, col);
            a = col;
          }
          float* c_out = c.groups == 1 ? dst : tmp;
          kernels::gemm(false, true, m, og, kk, 1.0f, a, w + g * og * kk, 0.0f, c_out, gemm_workspace.data());
          if (c.groups != 1) {
            for (int64_t p = 0; p < m; ++p) std::memcpy(dst + p * CO + g * og, tmp + p * og, static_cast<size_t>(og) * 4);
          }
        }
        for (int64_t p = 0; p < m; ++p) {
          float* px = dst + p * CO;
          for (int64_t o = 0; o < CO; ++o) px[o] = clampf(px[o] + (bias ? bias[o] : 0.0f), lo, hi);
        }
      }
      return;
    }
    case NodeKind::kDepthwiseConv2d: {
      const xnn::ConvParams& c = n.conv;
      const Shape& sx = in_shape(n, 0);
      const float* w = data[static_cast<size_t>(n.inputs[1])];
      const float* bias = n.inputs[2] >= 0 ? data[static_cast<size_t>(n.inputs[2])] : nullptr;
      const int64_t H = sx.d[1], W = sx.d[2], C = sx.d[3], OH = so.d[1], OW = so.d[2], CO = so.d[3];
      const int64_t mult = c.group_out;
      for (int64_t b = 0; b < sx.d[0]; ++b) {
        for (int64_t oy = 0; oy < OH; ++oy) {
          for (int64_t ox = 0; ox < OW; ++ox) {
            float* px = out + ((b * OH + oy) * OW + ox) * CO;
            for (int64_t o = 0; o < CO; ++o) px[o] = bias ? bias[o] : 0.0f;
            for_each_tap(c, H, W, oy, ox, [&](int64_t pixel, int64_t k) {
              const float* in = x + (b * H * W + pixel) * C;
              const float* wk = w + k * CO;
              if (mult == 1) {
                for (int64_t o = 0; o < CO; ++o) px[o] += in[o] * wk[o];  // the common case, vectorised
              } else {
                for (int64_t o = 0; o < CO; ++o) px[o] += in[o / mult] * wk[o];
              }
            });
            for (int64_t o = 0; o < CO; ++o) px[o] = clampf(px[o], lo, hi);
          }
        }
      }
      return;
    }
    case NodeKind::kConvTranspose2d: {
      const xnn::ConvParams& c = n.conv;
      const Shape& sx = in_shape(n, 0);
      const float* w = data[static_cast<size_t>(n.inputs[1])];
      const float* bias = n.inputs[2] >= 0 ? data[static_cast<size_t>(n.inputs[2])] : nullptr;
      const int64_t H = sx.d[1], W = sx.d[2], C = sx.d[3], OH = so.d[1], OW = so.d[2], CO = so.d[3];
      const int64_t cg = c.group_in, og = c.group_out;
      for (int64_t p = 0; p < so.numel(); ++p) out[p] = bias ? bias[p % CO] : 0.0f;
      for (int64_t b = 0; b < sx.d[0]; ++b) {
        for (int64_t iy = 0; iy < H; ++iy) {
          for (int64_t ix = 0; ix < W; ++ix) {
            const float* in = x + ((b * H + iy) * W + ix) * C;
            for (uint32_t ky = 0; ky < c.kernel_h; ++ky) {
              const int64_t oy = iy * c.stride_h - c.padding[0] + int64_t{ky} * c.dilation_h;
              if (oy < 0 || oy >= OH) continue;
              for (uint32_t kx = 0; kx < c.kernel_w; ++kx) {
                const int64_t ox = ix * c.stride_w - c.padding[3] + int64_t{kx} * c.dilation_w;
                if (ox < 0 || ox >= OW) continue;
                float* px = out + ((b * OH + oy) * OW + ox) * CO;
                for (uint32_t g = 0; g < c.groups; ++g) {
                  for (int64_t o = 0; o < og; ++o) {
                    const float* wr = w + (((g * og + o) * c.kernel_h + ky) * c.kernel_w + kx) * cg;
                    float acc = 0;
                    for (int64_t ci = 0; ci < cg; ++ci) acc += in[g * cg + ci] * wr[ci];
                    px[g * og + o] += acc;
                  }
                }
              }
            }
          }
        }
      }
      for (int64_t p = 0; p < so.numel(); ++p) out[p] = clampf(out[p], lo, hi);
      return;
    }
    case NodeKind::kFullyConnected: {
      const Shape& sw = in_shape(n, 1);
      const bool t = (n.flags & kFlagTransposeB) != 0;
      const int64_t k = t ? sw.d[0] : sw.d[1], nout = t ? sw.d[1] : sw.d[0];
      const int64_t m = k > 0 ? in_shape(n, 0).numel() / k : 0;
      const float* bias = n.inputs[2] >= 0 ? data[static_cast<size_t>(n.inputs[2])] : nullptr;
      kernels::gemm(false, !t, m, nout, k, 1.0f, x, data[static_cast<size_t>(n.inputs[1])], 0.0f, out, gemm_workspace.data());
      for (int64_t r = 0; r < m; ++r) {
        for (int64_t o = 0; o < nout; ++o) out[r * nout + o] = clampf(out[r * nout + o] + (bias ? bias[o] : 0.0f), lo, hi);
      }
      return;
    }
    case NodeKind::kBatchMatMul: {
      const Shape& sa = in_shape(n, 0);
      const Shape& sb = in_shape(n, 1);
      const bool tb = (n.flags & kFlagTransposeB) != 0;
      const int64_t m = sa.d[sa.rank - 2], k = sa.d[sa.rank - 1], nn = so.d[so.rank - 1];
      const float* b = data[static_cast<size_t>(n.inputs[1])];
      Shape batch = so, ba = sa, bb = sb;
      batch.rank -= 2;
      ba.rank -= 2;
      bb.rank -= 2;
      const int64_t batches = batch.numel();
      for (int64_t bi = 0; bi < batches; ++bi) {
        // The batch index of each input (broadcast dimensions stay at 0).
        int64_t idx[kMaxRank] = {}, rem = bi;
        for (int d = batch.rank - 1; d >= 0; --d) {
          idx[d] = rem % batch.d[d];
          rem /= batch.d[d];
        }
        int64_t ia = 0, ib = 0;
        for (int d = 0; d < batch.rank; ++d) {
          const int da = ba.rank - batch.rank + d, db = bb.rank - batch.rank + d;
          if (da >= 0) ia = ia * ba.d[da] + (ba.d[da] == 1 ? 0 : idx[d]);
          if (db >= 0) ib = ib * bb.d[db] + (bb.d[db] == 1 ? 0 : idx[d]);
        }
        kernels::gemm(false, tb, m, nn, k, 1.0f, x + ia * m * k, b + ib * k * nn, 0.0f, out + bi * m * nn, gemm_workspace.data());
      }
      break;
    }
    case NodeKind::kGlobalAvgPool2d: {
      const Shape& sx = in_shape(n, 0);
      const int64_t hw = sx.d[1] * sx.d[2], C = sx.d[3];
      for (int64_t b = 0; b < sx.d[0]; ++b) {
        float* o = out + b * C;
        std::fill(o, o + C, 0.0f);
        for (int64_t p = 0; p < hw; ++p) {
          const float* in = x + (b * hw + p) * C;
          for (int64_t ch = 0; ch < C; ++ch) o[ch] += in[ch];
        }
        for (int64_t ch = 0; ch < C; ++ch) o[ch] = clampf(hw > 0 ? o[ch] / static_cast<float>(hw) : 0.0f, lo, hi);
      }
      return;
    }
    case NodeKind::kAvgPool2d:
    case NodeKind::kMaxPool2d: {
      const xnn::ConvParams& c = n.conv;
      const bool is_max = n.kind == NodeKind::kMaxPool2d;
      const uint32_t dh = is_max ? c.dilation_h : 1, dw = is_max ? c.dilation_w : 1;
      const Shape& sx = in_shape(n, 0);
      const int64_t H = sx.d[1], W = sx.d[2], C = sx.d[3], OH = so.d[1], OW = so.d[2];
      for (int64_t b = 0; b < sx.d[0]; ++b) {
        for (int64_t oy = 0; oy < OH; ++oy) {
          for (int64_t ox = 0; ox < OW; ++ox) {
            float* px = out + ((b * OH + oy) * OW + ox) * C;
            std::fill(px, px + C, is_max ? -std::numeric_limits<float>::infinity() : 0.0f);
            int64_t cells = 0;
            for (uint32_t ky = 0; ky < c.kernel_h; ++ky) {
              const int64_t iy = oy * c.stride_h - c.padding[0] + int64_t{ky} * dh;
              if (iy < 0 || iy >= H) continue;
              for (uint32_t kx = 0; kx < c.kernel_w; ++kx) {
                const int64_t ix = ox * c.stride_w - c.padding[3] + int64_t{kx} * dw;
                if (ix < 0 || ix >= W) continue;
                const float* in = x + ((b * H + iy) * W + ix) * C;
                ++cells;
                for (int64_t ch = 0; ch < C; ++ch) px[ch] = is_max ? std::max(px[ch], in[ch]) : px[ch] + in[ch];
              }
            }
            for (int64_t ch = 0; ch < C; ++ch) {
              px[ch] = clampf(is_max ? px[ch] : (cells > 0 ? px[ch] / static_cast<float>(cells) : 0.0f), lo, hi);
            }
          }
        }
      }
      return;
    }
    case NodeKind::kArgMaxPool2d: {
      // As XNNPACK's kernels: a padded position reads the nearest input pixel (the window is
      // clamped to the image); window positions are visited column by column (index = x * window
      // height + y, XNNPACK's indirection order); the first maximum wins (a later value must be
      // greater), so a NaN counts only in the first position.
      const xnn::ConvParams& c = n.conv;
      const Shape& sx = in_shape(n, 0);
      float* index = data[static_cast<size_t>(n.outputs[1])];
      const int64_t H = sx.d[1], W = sx.d[2], C = sx.d[3], OH = so.d[1], OW = so.d[2];
      const int64_t kh = c.kernel_h, kw = c.kernel_w;
      for (int64_t b = 0; b < sx.d[0]; ++b) {
        for (int64_t oy = 0; oy < OH; ++oy) {
          for (int64_t ox = 0; ox < OW; ++ox) {
            const int64_t o = ((b * OH + oy) * OW + ox) * C;
            for (int64_t kx = 0; kx < kw; ++kx) {
              const int64_t ix = std::min(std::max<int64_t>(ox * kw + kx - c.padding[3], 0), W - 1);
              for (int64_t ky = 0; ky < kh; ++ky) {
                const int64_t iy = std::min(std::max<int64_t>(oy * kh + ky - c.padding[0], 0), H - 1);
                const float* in = x + ((b * H + iy) * W + ix) * C;
                const int64_t k = kx * kh + ky;
                for (int64_t ch = 0; ch < C; ++ch) {
                  if (k == 0 || in[ch] > out[o + ch]) {
                    out[o + ch] = in[ch];
                    index[o + ch] = static_cast<float>(k);
                  }
                }
              }
            }
          }
        }
      }
      return;
    }
    case NodeKind::kTranspose: {
      const Shape& sx = in_shape(n, 0);
      int64_t sti[kMaxRank], st[kMaxRank], idx[kMaxRank] = {};
      strides_of(sx, sti);
      for (int d = 0; d < so.rank; ++d) st[d] = sti[n.dims_a[static_cast<size_t>(d)]];
      int64_t off = 0;
      for (int64_t i = 0; i < count; ++i) {
        out[i] = x[off];
        for (int d = so.rank - 1; d >= 0; --d) {
          off += st[d];
          if (++idx[d] < so.d[d]) break;
          off -= st[d] * so.d[d];
          idx[d] = 0;
        }
      }
      break;
    }
    case NodeKind::kSlice:
    case NodeKind::kConstantPad: {
      const Shape& sx = in_shape(n, 0);
      const bool pad = n.kind == NodeKind::kConstantPad;
      int64_t sti[kMaxRank], idx[kMaxRank] = {};
      strides_of(sx, sti);
      for (int64_t i = 0; i < count; ++i) {
        int64_t off = 0;
        bool inside = true;
        for (int d = 0; d < so.rank; ++d) {
          const int64_t pos = pad ? idx[d] - n.dims_a[static_cast<size_t>(d)] : idx[d] + n.dims_a[static_cast<size_t>(d)];
          if (pos < 0 || pos >= sx.d[d]) inside = false;
          off += pos * sti[d];
        }
        out[i] = inside ? x[off] : n.alpha;
        for (int d = so.rank - 1; d >= 0; --d) {
          if (++idx[d] < so.d[d]) break;
          idx[d] = 0;
        }
      }
      break;
    }
    case NodeKind::kConcat2:
    case NodeKind::kConcat3:
    case NodeKind::kConcat4:
    case NodeKind::kConcat5: {
      int64_t outer = 1, inner = 1;
      for (uint32_t d = 0; d < n.axis; ++d) outer *= so.d[d];
      for (int d = static_cast<int>(n.axis) + 1; d < so.rank; ++d) inner *= so.d[d];
      int64_t at = 0;
      for (size_t k = 0; k < n.inputs.size(); ++k) {
        const int64_t len = in_shape(n, k).d[n.axis] * inner;
        const float* src = data[static_cast<size_t>(n.inputs[k])];
        for (int64_t o = 0; o < outer; ++o) {
          std::memmove(out + o * so.d[n.axis] * inner + at, src + o * len, static_cast<size_t>(len) * 4);
        }
        at += len;
      }
      break;
    }
    case NodeKind::kResizeBilinear2d: {
      const Shape& sx = in_shape(n, 0);
      const int64_t H = sx.d[1], W = sx.d[2], C = sx.d[3], OH = so.d[1], OW = so.d[2];
      const bool corners = (n.flags & kFlagAlignCorners) != 0, legacy = (n.flags & kFlagLegacyResize) != 0;
      auto scale = [&](int64_t in, int64_t o) {
        return corners && o > 1 ? static_cast<float>(in - 1) / static_cast<float>(o - 1) : static_cast<float>(in) / static_cast<float>(o);
      };
      const float sh = scale(H, OH), sw = scale(W, OW);
      auto source = [&](int64_t o, float s, int64_t in, int64_t* i0, int64_t* i1, float* frac) {
        float f = corners || legacy ? static_cast<float>(o) * s : (static_cast<float>(o) + 0.5f) * s - 0.5f;
        f = std::max(f, 0.0f);
        *i0 = std::min<int64_t>(static_cast<int64_t>(f), in - 1);
        *i1 = std::min<int64_t>(*i0 + 1, in - 1);
        *frac = f - static_cast<float>(*i0);
      };
      for (int64_t b = 0; b < sx.d[0]; ++b) {
        for (int64_t oy = 0; oy < OH; ++oy) {
          int64_t y0, y1;
          float fy;
          source(oy, sh, H, &y0, &y1, &fy);
          for (int64_t ox = 0; ox < OW; ++ox) {
            int64_t x0, x1;
            float fx;
            source(ox, sw, W, &x0, &x1, &fx);
            const float* p00 = x + ((b * H + y0) * W + x0) * C;
            const float* p01 = x + ((b * H + y0) * W + x1) * C;
            const float* p10 = x + ((b * H + y1) * W + x0) * C;
            const float* p11 = x + ((b * H + y1) * W + x1) * C;
            float* px = out + ((b * OH + oy) * OW + ox) * C;
            for (int64_t ch = 0; ch < C; ++ch) {
              const float top = p00[ch] + (p01[ch] - p00[ch]) * fx;
              const float bottom = p10[ch] + (p11[ch] - p10[ch]) * fx;
              px[ch] = top + (bottom - top) * fy;
            }
          }
        }
      }
      break;
    }
    default: break;  // refused at load
  }
  if (clamps) {
    for (int64_t i = 0; i < count; ++i) out[i] = clampf(out[i], lo, hi);
  }
}

void XnnpackDelegate::Impl::quantize_outputs(const Node& n) {
  for (int32_t o : n.outputs) {
    const xnn::TensorValue& v = graph.values[static_cast<size_t>(o)];
    float* out = data[static_cast<size_t>(o)];
    const int64_t count = shapes[static_cast<size_t>(o)].numel();
    if (v.type == ElementType::kQInt8 || v.type == ElementType::kQUInt8) {
      const float qmin = v.type == ElementType::kQInt8 ? -128.0f : 0.0f, qmax = v.type == ElementType::kQInt8 ? 127.0f : 255.0f;
      if (n.kind == NodeKind::kConvert) {
        // XNNPACK converts floats by multiplying with the scale's inverse (not dividing).
        const float inv = 1.0f / v.quant.scale, zp = static_cast<float>(v.quant.zero_point);
        for (int64_t i = 0; i < count; ++i) {
          out[i] = (quantize_raw(out[i] * inv, zp, qmin, qmax) - zp) * v.quant.scale;
        }
        continue;
      }
      for (int64_t i = 0; i < count; ++i) out[i] = fake_quant(out[i], v.quant.scale, v.quant.zero_point, qmin, qmax);
    } else if (v.type == ElementType::kF16) {
      for (int64_t i = 0; i < count; ++i) out[i] = kernels::half_to_float(kernels::float_to_half(out[i]));
    } else if (v.type == ElementType::kQDInt8) {
      // Rows are what the last `non_batch_dims` dimensions span.
      const Shape& s = shapes[static_cast<size_t>(o)];
      int64_t row = 1;
      for (int d = s.rank - static_cast<int>(v.quant.non_batch_dims); d < s.rank; ++d) row *= s.d[d];
      if (row <= 0) continue;
      for (int64_t r = 0; r + row <= count; r += row) quantize_row_dynamic(out + r, out + r, row);
    }
  }
}

// ---------------------------------------------------------------------------------------------
// [execute]

Status XnnpackDelegate::Impl::reshape(std::span<EValue* const> args) {
  bool changed = last_inputs.empty();
  last_inputs.resize(graph.inputs.size());
  for (size_t k = 0; k < graph.inputs.size(); ++k) {
    const size_t vi = static_cast<size_t>(graph.inputs[k]);
    const TensorImpl& t = *args[graph.values[vi].external_id]->tensor;
    Shape s = physical_shape(t);
    if (s.rank != declared[vi].rank) s = declared[vi];  // a 0-D tensor for a [1] value (checked at load)
    if (!(s == last_inputs[k])) changed = true;
    last_inputs[k] = s;
  }
  if (!changed) return ok_status();
  for (size_t k = 0; k < graph.inputs.size(); ++k) {
    const size_t vi = static_cast<size_t>(graph.inputs[k]);
    if (last_inputs[k].numel() > declared[vi].numel()) {
      last_inputs.clear();
      return Error(ErrorCode::kInvalidArgument, where + ": XNNPACK graph input (argument " + std::to_string(graph.values[vi].external_id) +
                                                    ") is " + last_inputs[k].text() + ", above the " + declared[vi].text() +
                                                    " the graph was built for");
    }
    shapes[vi] = last_inputs[k];
  }
  Scratch need;
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    Status st = check_node(i, &need);
    if (!st.ok()) {
      last_inputs.clear();
      return st;
    }
  }
  if (need.floats > scratch.size() || need.doubles > qscratch.size() || need.gemm > gemm_workspace.size()) {
    last_inputs.clear();
    return Error(ErrorCode::kInvalidArgument, where + ": XNNPACK graph at these input shapes needs more scratch than at its upper bounds");
  }
  for (int32_t vo : graph.outputs) {
    TensorImpl& t = *args[graph.values[static_cast<size_t>(vo)].external_id]->tensor;
    const Shape& s = shapes[static_cast<size_t>(vo)];
    if (t.dim() != s.rank) continue;  // a 0-D tensor for a [1] value
    int64_t logical[kMaxDims] = {};
    for (int d = 0; d < s.rank; ++d) logical[t.dim_order()[static_cast<size_t>(d)]] = s.d[d];
    Status st = t.resize({logical, static_cast<size_t>(s.rank)});
    if (!st.ok()) {
      last_inputs.clear();
      return Error(ErrorCode::kInvalidArgument, where + ": XNNPACK graph output (argument " + std::to_string(graph.values[static_cast<size_t>(vo)].external_id) +
                                                    ") cannot take the shape " + s.text() + ": " + st.error().message());
    }
  }
  return ok_status();
}

Status XnnpackDelegate::execute(std::span<EValue* const> args, EventTracer* tracer) {
  Impl& m = *impl_;
  const xnn::Graph& g = m.graph;
  if (m.dynamic) ETSCOPE_TRY(m.reshape(args));
  for (const std::vector<int32_t>* list : {&g.inputs, &g.outputs}) {
    for (int32_t vi : *list) {
      const xnn::TensorValue& v = g.values[static_cast<size_t>(vi)];
      TensorImpl& t = *args[v.external_id]->tensor;
      // A static graph's arguments were checked at load, a dynamic one's just now; check again
      // that nothing resized them since.
      const Shape physical = physical_shape(t);
      const Shape& want = m.shapes[static_cast<size_t>(vi)];
      if (!same_elements(physical, want) || t.data() == nullptr) {
        return Error(ErrorCode::kInvalidArgument, m.where + ": XNNPACK graph argument " + std::to_string(v.external_id) + " is " +
                                                      physical.text() + ", the graph " + (m.dynamic ? "computed " : "was built for ") +
                                                      want.text());
      }
      const uint64_t count = static_cast<uint64_t>(want.numel());
      if (v.type == ElementType::kF16) {
        float* staged = m.data[static_cast<size_t>(vi)];
        if (list == &g.inputs) {
          const uint16_t* h = t.data_as<uint16_t>();
          for (uint64_t k = 0; k < count; ++k) staged[k] = kernels::half_to_float(h[k]);
        }
      } else if (v.type == ElementType::kQInt8 || v.type == ElementType::kQUInt8) {
        // Held as the floats they stand for, as every quantized value inside the graph.
        float* staged = m.data[static_cast<size_t>(vi)];
        if (list == &g.inputs) {
          const uint8_t* raw = t.data_as<uint8_t>();
          const float zp = static_cast<float>(v.quant.zero_point);
          for (uint64_t k = 0; k < count; ++k) {
            const float q = v.type == ElementType::kQInt8 ? static_cast<float>(static_cast<int8_t>(raw[k])) : static_cast<float>(raw[k]);
            staged[k] = (q - zp) * v.quant.scale;
          }
        }
      } else if (v.type != ElementType::kInt32) {  // int32 outputs: through a float buffer, converted after
        m.data[static_cast<size_t>(vi)] = t.data_as<float>();
      }
    }
  }
  const bool traced = tracer != nullptr && tracer->profiling_level() == ProfilingLevel::kAllEvents;
  for (size_t e = 0; e < m.event_names.size(); ++e) {
    const EventHandle h = traced ? tracer->start_delegate_event(m.event_names[e].c_str()) : kNoEvent;
    for (uint32_t i = m.event_first[e]; i < m.event_first[e + 1]; ++i) {
      if (m.quantized_of_node[i] >= 0) {
        m.run_quantized(g.nodes[i], m.quantized[static_cast<size_t>(m.quantized_of_node[i])]);
      } else {
        m.run_node(g.nodes[i]);
        m.quantize_outputs(g.nodes[i]);
      }
    }
    if (h != kNoEvent) tracer->end_profiling(h);
    if (tracer != nullptr && tracer->debug_level() >= DebugLevel::kIntermediateOutputs) {
      for (uint32_t i = m.event_first[e]; i < m.event_first[e + 1]; ++i) {
        if (m.logged_of_node[i] < 0) continue;
        Impl::Logged& l = m.logged[static_cast<size_t>(m.logged_of_node[i])];
        if (m.log_output(l)) tracer->log_delegate_output(l.value, l.handle);
      }
    }
  }
  for (int32_t vi : g.outputs) {
    const xnn::TensorValue& v = g.values[static_cast<size_t>(vi)];
    const float* f = m.data[static_cast<size_t>(vi)];
    const uint64_t count = static_cast<uint64_t>(m.shapes[static_cast<size_t>(vi)].numel());
    if (v.type == ElementType::kF16) {
      uint16_t* h = args[v.external_id]->tensor->data_as<uint16_t>();
      for (uint64_t k = 0; k < count; ++k) h[k] = kernels::float_to_half(f[k]);
    } else if (v.type == ElementType::kQInt8 || v.type == ElementType::kQUInt8) {
      // Values on the output's grid (rounded after the node that wrote them): back to integers.
      uint8_t* raw = args[v.external_id]->tensor->data_as<uint8_t>();
      const bool s8 = v.type == ElementType::kQInt8;
      const float lo = s8 ? -128.0f : 0.0f, hi = s8 ? 127.0f : 255.0f, zp = static_cast<float>(v.quant.zero_point);
      for (uint64_t k = 0; k < count; ++k) {
        const float q = quantize_raw(f[k] / v.quant.scale, zp, lo, hi);
        raw[k] = s8 ? static_cast<uint8_t>(static_cast<int8_t>(q)) : static_cast<uint8_t>(q);
      }
    } else if (v.type == ElementType::kInt32) {
      // Argmax indices (whole numbers below 2^24, checked at load), as int32 or, for an int64
      // tensor, widened as ExecuTorch's executor widens them.
      TensorImpl& t = *args[v.external_id]->tensor;
      if (t.dtype() == ScalarType::kLong) {
        for (uint64_t k = 0; k < count; ++k) t.data_as<int64_t>()[k] = static_cast<int64_t>(f[k]);
      } else {
        for (uint64_t k = 0; k < count; ++k) t.data_as<int32_t>()[k] = static_cast<int32_t>(f[k]);
      }
    }
  }
  return ok_status();
}

}  // namespace etscope::runtime::xnnpack
