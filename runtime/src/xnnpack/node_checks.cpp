// Load-time validation of XNNPACK nodes: the checks every node passes (element types, int32
// values), then its kind's check from the node table, which infers the node's output shapes from
// its inputs and attributes and sizes its scratch. Sections: [common checks] [elementwise]
// [convolution and matrix products] [pooling] [data movement]
#include <algorithm>
#include <cmath>
#include <optional>

#include "etscope/core/checked.h"
#include "kernels/util/broadcast_util.h"
#include "kernels/util/gemm.h"
#include "xnnpack/nhwc_windows.h"
#include "xnnpack/node_table.h"

namespace etscope::runtime::xnnpack {
namespace {

// ---------------------------------------------------------------------------------------------
// [common checks]

bool activation_type_ok(const xnn::TensorValue& v) {
  using Q = xnn::Quantization::Kind;
  switch (v.type) {
    case ElementType::kF32:
    case ElementType::kF16:
    case ElementType::kBF16: return v.quant.kind == Q::kNone;  // bf16: in the kinds check_bf16 allows
    case ElementType::kQInt8:
    case ElementType::kQUInt8: return v.quant.kind == Q::kPerTensor && v.quant.scale > 0 && std::isfinite(v.quant.scale);
    case ElementType::kQDInt8: return v.quant.kind == Q::kPerRowDynamic;
    case ElementType::kInt32: return v.quant.kind == Q::kNone;  // argmax pooling's indices, checked per node
    default: return false;
  }
}

bool constant_type_ok(ElementType t) {
  switch (t) {
    case ElementType::kF32: case ElementType::kF16: case ElementType::kBF16: case ElementType::kQInt8: case ElementType::kQUInt8:
    case ElementType::kQInt32: case ElementType::kQCInt8: case ElementType::kQCInt32: case ElementType::kQCInt4: case ElementType::kQBInt4:
      return true;
    default: return false;
  }
}

// bf16 values, held as floats and rounded to bf16 at each node output as f16 ones are. XNNPACK
// computes bf16 in its elementwise binary operators (in fp32, the result rounded to bf16) and in
// fully connected layers of bf16 inputs and filters, whose fp32 sums ExecuTorch's XNNPACK runtime
// converts to bf16 when the graph wants a bf16 output; bf16 programs from ExecuTorch's LLM
// exporter use those alone. Other kinds with bf16 values are refused.
Status check_bf16(const DelegateState& m, size_t i) {
  const Node& n = m.graph.nodes[i];
  auto is = [&](int32_t v, ElementType t) { return v >= 0 && m.value(v).type == t; };
  auto bf16 = [&](int32_t v) { return is(v, ElementType::kBF16); };
  if (std::none_of(n.inputs.begin(), n.inputs.end(), bf16) && std::none_of(n.outputs.begin(), n.outputs.end(), bf16)) {
    return ok_status();
  }
  switch (n.kind) {
    case NodeKind::kAdd: case NodeKind::kSubtract: case NodeKind::kMultiply: case NodeKind::kDivide:
    case NodeKind::kMinimum: case NodeKind::kMaximum:
      // XNNPACK's binary operators take one element type for both inputs and the output.
      if (std::all_of(n.inputs.begin(), n.inputs.end(), bf16) && std::all_of(n.outputs.begin(), n.outputs.end(), bf16)) return ok_status();
      return Error(ErrorCode::kNotSupported, m.node_where(i) + ": mixes bf16 with other element types, which XNNPACK's binary operators do not");
    case NodeKind::kFullyConnected:
      // bf16 input and filter, an f32 (or, through ExecuTorch's conversion, bf16) output, no
      // bias or an f32 one (bf16 too: etscope adds it in floats).
      if (bf16(n.inputs[0]) && bf16(n.inputs[1]) && (bf16(n.outputs[0]) || is(n.outputs[0], ElementType::kF32)) &&
          (n.inputs[2] < 0 || bf16(n.inputs[2]) || is(n.inputs[2], ElementType::kF32))) {
        return ok_status();
      }
      return Error(ErrorCode::kNotSupported, m.node_where(i) + ": a bf16 fully connected layer needs a bf16 input and filter and an "
                                                 "f32 or bf16 output, as XNNPACK's");
    default:
      return Error(ErrorCode::kNotSupported, m.node_where(i) + ": bf16 values; etscope computes bf16 in XNNPACK's Add, Subtract, "
                                                 "Multiply, Divide, Minimum, Maximum and FullyConnected nodes only so far");
  }
}

Error unsupported_flags(const DelegateState& m, size_t i) {
  return Error(ErrorCode::kNotSupported, m.node_where(i) + ": flags " + std::to_string(m.graph.nodes[i].flags) + " are not supported");
}

Status need_constant(const DelegateState& m, size_t i, int32_t v, const char* what) {
  if (v >= 0 && !m.value(v).is_constant) return m.bad(i, std::string(what) + " is not a constant");
  return ok_status();
}

// NumPy broadcasting of two shapes (aligned at the last dimension), or nullopt.
std::optional<Shape> broadcast(const Shape& a, const Shape& b) {
  std::array<int64_t, kMaxDims> d{};
  int rank = 0;
  if (!kernels::broadcast_shape({a.d, static_cast<size_t>(a.rank)}, {b.d, static_cast<size_t>(b.rank)}, &d, &rank)) {
    return std::nullopt;
  }
  Shape out;
  out.rank = rank;  // at most the larger input's rank
  std::copy_n(d.begin(), rank, out.d);
  return out;
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

}  // namespace

Status DelegateState::check_node(size_t i, Scratch* scratch) {
  const Node& n = graph.nodes[i];
  // Activations are f32, f16, bf16 or quantized per tensor (or per row, at run time); constants may be any
  // type etscope dequantizes at load. Quantized values are held as their dequantized floats.
  auto check_type = [&](int32_t v, const char* role) -> Status {
    const xnn::TensorValue& tv = value(v);
    if (tv.is_constant ? constant_type_ok(tv.type) : activation_type_ok(tv)) return ok_status();
    return Error(ErrorCode::kNotSupported, node_where(i) + ": " + role + " value " + std::to_string(tv.id) + " is " +
                                               xnn::to_string(tv.type) +
                                               " with these parameters; etscope does not execute it in XNNPACK graphs yet");
  };
  for (int32_t v : n.inputs) {
    if (v >= 0) ETSCOPE_TRY(check_type(v, "input"));
  }
  for (int32_t v : n.outputs) ETSCOPE_TRY(check_type(v, "output"));
  ETSCOPE_TRY(check_bf16(*this, i));
  for (int32_t v : n.outputs) {
    if (value(v).type == ElementType::kQDInt8 && n.kind != NodeKind::kConvert) {
      return bad(i, "only a Convert node may produce a dynamically quantized value");
    }
  }
  // int32 values are argmax pooling's indices (whole numbers a float holds exactly): written
  // there, then only moved (a layout transpose, a reshape, a copy, a slice, a concatenation),
  // all of whose inputs and outputs are int32 then.
  {
    const bool moves = has_trait(n.kind, kMovesElements);
    auto is_int32 = [&](int32_t v) { return v >= 0 && value(v).type == ElementType::kInt32; };
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
  const CheckFn check = node_ops(n.kind).check;
  if (check == nullptr) return Error(ErrorCode::kNotSupported, node_where(i) + ": etscope cannot execute this XNNPACK node kind yet");
  return check(*this, i, scratch);
}

Status DelegateState::set_out(size_t i, const Shape& want, size_t k) {
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

// ---------------------------------------------------------------------------------------------
// [elementwise]

Status check_unary(DelegateState& m, size_t i, Scratch*) {
  const Node& n = m.graph.nodes[i];
  const Shape& d = m.declared[static_cast<size_t>(n.outputs[0])];
  if (n.kind == NodeKind::kConvert || (m.dynamic && d.rank == m.in_shape(n, 0).rank)) return m.set_out(i, m.in_shape(n, 0));
  if (m.out_shape(n).numel() != m.in_shape(n, 0).numel()) return m.bad(i, "its output has another element count than its input");
  return ok_status();
}

Status check_binary(DelegateState& m, size_t i, Scratch*) {
  const Node& n = m.graph.nodes[i];
  std::optional<Shape> s = broadcast(m.in_shape(n, 0), m.in_shape(n, 1));
  if (!s) return m.bad(i, "cannot broadcast " + m.in_shape(n, 0).text() + " with " + m.in_shape(n, 1).text());
  return m.set_out(i, *s);
}

Status check_softmax(DelegateState& m, size_t i, Scratch*) {
  const Node& n = m.graph.nodes[i];
  if (m.in_shape(n, 0).rank == 0) return m.bad(i, "softmax of a scalar");
  return m.set_out(i, m.in_shape(n, 0));
}

Status refuse_attention(DelegateState& m, size_t i, Scratch*) {
  return Error(ErrorCode::kNotSupported, m.node_where(i) + ": ExecuTorch's XNNPACK runtime does not execute this node kind "
                                             "either (it refuses the program: unhandled node type), and neither does etscope");
}

// ---------------------------------------------------------------------------------------------
// [convolution and matrix products]

// Conv2d, DepthwiseConv2d and ConvTranspose2d.
Status check_conv(DelegateState& m, size_t i, Scratch* scratch) {
  const Node& n = m.graph.nodes[i];
  const xnn::ConvParams& c = n.conv;
  const Shape& x = m.in_shape(n, 0);
  const Shape& w = m.in_shape(n, 1);
  ETSCOPE_TRY(need_constant(m, i, n.inputs[1], "the filter"));
  ETSCOPE_TRY(need_constant(m, i, n.inputs[2], "the bias"));
  if (x.rank != 4 || w.rank != 4) return m.bad(i, "needs a 4-D input and filter");
  if (c.groups == 0 || c.group_in == 0 || c.group_out == 0 || c.kernel_h == 0 || c.kernel_w == 0 || c.stride_h == 0 ||
      c.stride_w == 0 || c.dilation_h == 0 || c.dilation_w == 0) {
    return m.bad(i, "has a zero group, channel, kernel, stride or dilation");
  }
  if (n.flags != 0) return unsupported_flags(m, i);
  const auto cin = checked::mul(c.groups, c.group_in), cout = checked::mul(c.groups, c.group_out);
  if (!cin || !cout || static_cast<int64_t>(*cin) != x.d[3]) {
    return m.bad(i, "input has " + std::to_string(x.d[3]) + " channels, groups x group inputs = " +
                        (cin ? std::to_string(*cin) : std::string("overflow")));
  }
  Shape want_w;
  want_w.rank = 4;
  if (n.kind == NodeKind::kDepthwiseConv2d) {
    want_w.d[0] = 1, want_w.d[1] = c.kernel_h, want_w.d[2] = c.kernel_w, want_w.d[3] = static_cast<int64_t>(*cout);
    if (c.group_in != 1) return m.bad(i, "a depthwise convolution has one input channel per group");
  } else {
    want_w.d[0] = static_cast<int64_t>(*cout), want_w.d[1] = c.kernel_h, want_w.d[2] = c.kernel_w, want_w.d[3] = c.group_in;
  }
  if (!(w == want_w)) return m.bad(i, "filter is " + w.text() + ", expected " + want_w.text());
  if (n.inputs[2] >= 0 && m.in_shape(n, 2).numel() != static_cast<int64_t>(*cout)) {
    return m.bad(i, "bias size differs from the output channels");
  }
  Shape want = x;
  want.d[3] = static_cast<int64_t>(*cout);
  if (n.kind == NodeKind::kConvTranspose2d) {
    want.d[1] = deconv_out(x.d[1], c.padding[0], c.padding[2], c.kernel_h, c.stride_h, c.dilation_h, c.adjustment_h);
    want.d[2] = deconv_out(x.d[2], c.padding[3], c.padding[1], c.kernel_w, c.stride_w, c.dilation_w, c.adjustment_w);
    if (want.d[1] < 1 || want.d[2] < 1) return m.bad(i, "has no output pixels");
  } else {
    want.d[1] = window_out(x.d[1], c.padding[0], c.padding[2], c.kernel_h, c.stride_h, c.dilation_h);
    want.d[2] = window_out(x.d[2], c.padding[3], c.padding[1], c.kernel_w, c.stride_w, c.dilation_w);
    if (want.d[1] < 1 || want.d[2] < 1) return m.bad(i, "its window does not fit the padded input");
  }
  ETSCOPE_TRY(m.set_out(i, want));
  // A packed deconvolution's taps outside the image read a zero row of a group's inputs.
  if (n.kind == NodeKind::kConvTranspose2d) scratch->floats = std::max<size_t>(scratch->floats, c.group_in);
  if (n.kind == NodeKind::kDepthwiseConv2d && m.integer_layer(n)) {
    // The image's integers as int16 and one output row's int32 sums (quantized_nodes.cpp).
    const auto elements = checked::mul(static_cast<uint64_t>(x.d[1] * x.d[2]), static_cast<uint64_t>(x.d[3]));
    const auto sums = checked::mul(static_cast<uint64_t>(want.d[2]), uint64_t{*cout});
    if (!elements || *elements > (uint64_t{1} << 58) || !sums || *sums > (uint64_t{1} << 58)) return m.bad(i, "its image size overflows");
    const uint64_t bytes = static_cast<uint64_t>(depthwise_acc_offset(static_cast<int64_t>(*elements))) + *sums * 4;
    scratch->bytes = std::max<size_t>(scratch->bytes, static_cast<size_t>(bytes));
  }
  if (n.kind == NodeKind::kConv2d && m.int8_gemm_layer(n)) {
    // The image's bytes (a row of kpad per pixel when pointwise), then the im2col matrix or the
    // image padded with its zero point (window rows, quantized_nodes.cpp), whichever is larger.
    // (A stem's channels padded to 4 in all three: int8_conv_channels.)
    const uint64_t pixels = static_cast<uint64_t>(want.d[1] * want.d[2]);
    const int64_t cg4 = int8_conv_channels(c), C4 = cg4 * c.groups;  // (groups x inputs = the input's channels: above)
    const uint64_t kpad = static_cast<uint64_t>(int8_kpad(int64_t{c.kernel_h} * c.kernel_w * cg4));
    const bool direct = pointwise_conv(c);
    const auto image = checked::mul(static_cast<uint64_t>(x.d[1] * x.d[2]), direct ? kpad : static_cast<uint64_t>(C4));
    const auto col = checked::mul(pixels, direct ? 0 : kpad);
    const auto padded_pixels = checked::mul(static_cast<uint64_t>(padded_extent(want.d[1], c.kernel_h, c.stride_h, c.dilation_h)),
                                            static_cast<uint64_t>(padded_extent(want.d[2], c.kernel_w, c.stride_w, c.dilation_w)));
    const auto padded = padded_pixels ? checked::mul(*padded_pixels, static_cast<uint64_t>(C4)) : std::nullopt;
    const auto total = image && col && padded ? checked::add(*image + 64, std::max(*col, *padded)) : std::nullopt;
    if (!total || *total > (uint64_t{1} << 60)) return m.bad(i, "its im2col buffer size overflows");
    scratch->bytes = std::max<size_t>(scratch->bytes, static_cast<size_t>(*total));
  }
  // (An emulating delegate may run an integer layer on floats: it sizes both.)
  if ((n.kind == NodeKind::kConv2d && (m.emulate || !m.int8_gemm_layer(n))) || (n.kind == NodeKind::kDepthwiseConv2d && m.packed_f32_layer(n))) {
    // The im2col matrix and a group's result: sizes come from the file, so overflow-checked.
    const uint64_t rows = static_cast<uint64_t>(want.d[1] * want.d[2]);
    const uint64_t k = uint64_t{c.kernel_h} * c.kernel_w * c.group_in;  // the filter's row: bytes in the file
    const auto col = checked::mul(rows, k), res = checked::mul(rows, c.group_out);
    const auto floats = col && res ? checked::add(*col, *res) : std::nullopt;
    if (!floats || *floats > (uint64_t{1} << 60)) return m.bad(i, "its im2col buffer size overflows");
    const bool exact = m.integer_layer(n);
    // An integer convolution also holds one image's integers.
    const auto total = exact ? checked::add(*floats, static_cast<uint64_t>(x.d[1] * x.d[2] * x.d[3])) : floats;
    if (!total || *total > (uint64_t{1} << 60)) return m.bad(i, "its im2col buffer size overflows");
    if (m.packed_f32_layer(n)) {  // f32_gemm reads the image or its im2col matrix, writes in place
      scratch->floats = std::max<size_t>(scratch->floats, static_cast<size_t>(*col));
      return ok_status();
    }
    // Integer layers run in floats or doubles (plan_quantized decides), so both are sized.
    scratch->floats = std::max<size_t>(scratch->floats, static_cast<size_t>(*total));
    if (exact) scratch->doubles = std::max<size_t>(scratch->doubles, static_cast<size_t>(*total));
    scratch->gemm = std::max(scratch->gemm, kernels::gemm_workspace_bytes(static_cast<int64_t>(rows), c.group_out,
                                                                           static_cast<int64_t>(k), exact ? 8 : 4));
  }
  return ok_status();
}

Status check_fully_connected(DelegateState& m, size_t i, Scratch* scratch) {
  const Node& n = m.graph.nodes[i];
  ETSCOPE_TRY(need_constant(m, i, n.inputs[1], "the weight"));
  ETSCOPE_TRY(need_constant(m, i, n.inputs[2], "the bias"));
  const Shape& x = m.in_shape(n, 0);
  const Shape& w = m.in_shape(n, 1);
  if (w.rank != 2 || x.rank < 1) return m.bad(i, "needs a 2-D weight and an input of rank 1 or more");
  if ((n.flags & ~kFlagTransposeB) != 0) return unsupported_flags(m, i);
  const bool t = (n.flags & kFlagTransposeB) != 0;
  const int64_t k = t ? w.d[0] : w.d[1], nout = t ? w.d[1] : w.d[0];
  if (x.d[x.rank - 1] != k) {
    return m.bad(i, "input's last dimension " + std::to_string(x.d[x.rank - 1]) + " differs from the weight's " + std::to_string(k));
  }
  if (n.inputs[2] >= 0 && m.in_shape(n, 2).numel() != nout) return m.bad(i, "bias size differs from the outputs");
  Shape want = x;
  want.d[want.rank - 1] = nout;
  ETSCOPE_TRY(m.set_out(i, want));
  const int64_t rows = x.numel() / std::max<int64_t>(k, 1);
  if (m.int8_gemm_layer(n)) {  // a row of kpad bytes per input row
    const auto bytes = checked::mul(static_cast<uint64_t>(rows), static_cast<uint64_t>(int8_kpad(k)));
    if (!bytes || *bytes > (uint64_t{1} << 60)) return m.bad(i, "its input rows' size overflows");
    scratch->bytes = std::max<size_t>(scratch->bytes, static_cast<size_t>(*bytes));
    if (!m.emulate) return ok_status();
  }
  if (m.packed_f32_layer(n)) return ok_status();  // f32_gemm needs no workspace
  if (m.qd8_layer(n) && !m.emulate) return ok_status();  // nor do qd8 layers, unless emulated on floats
  const bool exact = m.integer_layer(n);
  scratch->gemm = std::max(scratch->gemm, kernels::gemm_workspace_bytes(rows, nout, k, exact ? 8 : 4));
  if (exact) {  // in floats or doubles (plan_quantized decides)
    scratch->doubles = std::max<size_t>(scratch->doubles, static_cast<size_t>(x.numel() + want.numel()));
    scratch->floats = std::max<size_t>(scratch->floats, static_cast<size_t>(x.numel() + want.numel()));
  }
  return ok_status();
}

Status check_batch_matmul(DelegateState& m, size_t i, Scratch* scratch) {
  const Node& n = m.graph.nodes[i];
  const Shape& a = m.in_shape(n, 0);
  const Shape& b = m.in_shape(n, 1);
  if (a.rank < 2 || b.rank < 2) return m.bad(i, "needs inputs of rank 2 or more");
  if ((n.flags & ~kFlagTransposeB) != 0) return unsupported_flags(m, i);
  const bool tb = (n.flags & kFlagTransposeB) != 0;
  const int64_t rows = a.d[a.rank - 2], k = a.d[a.rank - 1];
  const int64_t kb = tb ? b.d[b.rank - 1] : b.d[b.rank - 2], cols = tb ? b.d[b.rank - 2] : b.d[b.rank - 1];
  if (k != kb) return m.bad(i, "inner dimensions differ: " + a.text() + " x " + b.text());
  Shape ba = a, bb = b;
  ba.rank -= 2;
  bb.rank -= 2;
  std::optional<Shape> batch = broadcast(ba, bb);
  if (!batch || batch->rank + 2 > kMaxRank) return m.bad(i, "batch dimensions do not broadcast");
  Shape want = *batch;
  want.d[want.rank++] = rows;
  want.d[want.rank++] = cols;
  ETSCOPE_TRY(m.set_out(i, want));
  // A transposed B is made k x cols in the workspace (run_batch_matmul): no more than B's bytes.
  if (tb) scratch->gemm = std::max(scratch->gemm, static_cast<size_t>(k * cols) * sizeof(float));
  return ok_status();
}

// ---------------------------------------------------------------------------------------------
// [pooling]

Status check_global_avg_pool(DelegateState& m, size_t i, Scratch* scratch) {
  const Node& n = m.graph.nodes[i];
  const Shape& x = m.in_shape(n, 0);
  if (x.rank != 4) return m.bad(i, "needs a 4-D input");
  if (m.integer_layer(n)) {  // a channel's int64 sum each (quantized_nodes.cpp)
    if (x.d[3] > (int64_t{1} << 56)) return m.bad(i, "has too many channels");
    scratch->bytes = std::max<size_t>(scratch->bytes, static_cast<size_t>(x.d[3]) * 8);
  }
  const Shape& d = m.declared[static_cast<size_t>(n.outputs[0])];
  if (m.dynamic && (d.rank == 4 || d.rank == 2)) {
    Shape want = d;
    want.d[0] = x.d[0];
    want.d[d.rank - 1] = x.d[3];
    return m.set_out(i, want);
  }
  if (m.out_shape(n).numel() != x.d[0] * x.d[3]) return m.bad(i, "output is not one value per image and channel");
  return ok_status();
}

// AvgPool2d and MaxPool2d.
Status check_pool(DelegateState& m, size_t i, Scratch* scratch) {
  const Node& n = m.graph.nodes[i];
  const Shape& x = m.in_shape(n, 0);
  const xnn::ConvParams& c = n.conv;
  if (x.rank != 4) return m.bad(i, "needs a 4-D input");
  if ((n.flags & ~kFlagKeepDims) != 0) return unsupported_flags(m, i);
  const uint32_t dh = n.kind == NodeKind::kMaxPool2d ? c.dilation_h : 1, dw = n.kind == NodeKind::kMaxPool2d ? c.dilation_w : 1;
  Shape want = x;
  want.d[1] = window_out(x.d[1], c.padding[0], c.padding[2], c.kernel_h, c.stride_h, dh);
  want.d[2] = window_out(x.d[2], c.padding[3], c.padding[1], c.kernel_w, c.stride_w, dw);
  if (want.d[1] < 1 || want.d[2] < 1) return m.bad(i, "its window does not fit the padded input");
  // An average pooling reads a zero row of C floats for its window's taps outside the image.
  if (n.kind == NodeKind::kAvgPool2d) scratch->floats = std::max<size_t>(scratch->floats, static_cast<size_t>(x.d[3]));
  return m.set_out(i, want);
}

Status check_argmax_pool(DelegateState& m, size_t i, Scratch*) {
  // XNNPACK's argmax pooling: f32 only, windows that tile the padded input (stride = window),
  // the output size is the padded size divided by the window, rounded down.
  const Node& n = m.graph.nodes[i];
  const Shape& x = m.in_shape(n, 0);
  const xnn::ConvParams& c = n.conv;
  if (x.rank != 4 || n.outputs.size() != 2) return m.bad(i, "needs a 4-D input and two outputs (values, indices)");
  if (n.flags != 0) return unsupported_flags(m, i);
  if (m.value(n.inputs[0]).type != ElementType::kF32 || m.value(n.outputs[0]).type != ElementType::kF32) {
    return m.bad(i, "takes and gives f32 values only");
  }
  if (uint64_t{c.kernel_h} * c.kernel_w < 2) return m.bad(i, "its window holds fewer than 2 elements (XNNPACK refuses 1x1)");
  if (x.d[1] < 1 || x.d[2] < 1 || x.d[3] < 1) return m.bad(i, "needs a non-empty input");
  Shape want = x;
  want.d[1] = (x.d[1] + int64_t{c.padding[0]} + c.padding[2]) / c.kernel_h;
  want.d[2] = (x.d[2] + int64_t{c.padding[3]} + c.padding[1]) / c.kernel_w;
  if (want.d[1] < 1 || want.d[2] < 1) return m.bad(i, "its window does not fit the padded input");
  // Bounds that keep hostile windows finite: an index a float holds exactly, padding that
  // leaves each window an input pixel, and at most 2^32 elements visited.
  if (uint64_t{c.kernel_h} * c.kernel_w > (uint64_t{1} << 24)) return m.bad(i, "its window holds more than 2^24 elements");
  if (c.padding[0] >= c.kernel_h || c.padding[2] >= c.kernel_h || c.padding[1] >= c.kernel_w || c.padding[3] >= c.kernel_w) {
    return m.bad(i, "its padding is not smaller than its window");
  }
  const auto work = checked::mul(static_cast<uint64_t>(want.numel()), uint64_t{c.kernel_h} * c.kernel_w);
  if (!work || *work > (uint64_t{1} << 32)) return m.bad(i, "its windows would visit more than 2^32 input elements");
  ETSCOPE_TRY(m.set_out(i, want, 0));
  return m.set_out(i, want, 1);
}

// ---------------------------------------------------------------------------------------------
// [data movement]

Status check_transpose(DelegateState& m, size_t i, Scratch*) {
  const Node& n = m.graph.nodes[i];
  const Shape& x = m.in_shape(n, 0);
  if (static_cast<int>(n.dims_a.size()) != x.rank) return m.bad(i, "permutation length differs from the input's rank");
  Shape want = x;
  uint32_t seen = 0;
  for (int d = 0; d < x.rank; ++d) {
    const uint32_t p = n.dims_a[static_cast<size_t>(d)];
    if (p >= static_cast<uint32_t>(x.rank) || (seen & (1u << p))) return m.bad(i, "is not a permutation");
    seen |= 1u << p;
    want.d[d] = x.d[p];
  }
  return m.set_out(i, want);
}

Status check_reshape(DelegateState& m, size_t i, Scratch*) {
  const Node& n = m.graph.nodes[i];
  const Shape& x = m.in_shape(n, 0);
  if (!m.dynamic) {
    if (m.out_shape(n).numel() != x.numel()) return m.bad(i, "changes the element count");
    return ok_status();
  }
  // The new shape, where one 0 stands for the dimension the element count leaves.
  const Shape& d = m.declared[static_cast<size_t>(n.outputs[0])];
  if (static_cast<int>(n.dims_a.size()) != d.rank) return m.bad(i, "its new shape's rank differs from its output's");
  Shape want = d;
  int infer = -1;
  int64_t known = 1;
  for (int k = 0; k < d.rank; ++k) {
    want.d[k] = n.dims_a[static_cast<size_t>(k)];
    if (want.d[k] == 0) {
      if (infer >= 0) return m.bad(i, "its new shape has two dimensions to infer");
      infer = k;
    } else {
      const std::optional<uint64_t> p = checked::mul(static_cast<uint64_t>(known), static_cast<uint64_t>(want.d[k]));
      if (!p || *p > (uint64_t{1} << 62)) return m.bad(i, "its new shape's element count overflows");
      known = static_cast<int64_t>(*p);
    }
  }
  if (infer >= 0) want.d[infer] = known > 0 ? x.numel() / known : 0;
  if (want.numel() != x.numel()) return m.bad(i, "cannot reshape " + x.text() + " to " + want.text());
  return m.set_out(i, want);
}

Status check_slice(DelegateState& m, size_t i, Scratch*) {
  const Node& n = m.graph.nodes[i];
  const Shape& x = m.in_shape(n, 0);
  if (static_cast<int>(n.dims_a.size()) != x.rank) return m.bad(i, "offsets differ from the input's rank");
  if (m.dynamic) {
    // Sizes from the node, where 0 stands for the rest of the dimension.
    if (static_cast<int>(n.dims_b.size()) != x.rank) return m.bad(i, "sizes differ from the input's rank");
    Shape want = x;
    for (int d = 0; d < x.rank; ++d) {
      const uint64_t off = n.dims_a[static_cast<size_t>(d)], size = n.dims_b[static_cast<size_t>(d)];
      if (off > static_cast<uint64_t>(x.d[d])) {
        return m.bad(i, "slice of dimension " + std::to_string(d) + " starts outside the input " + x.text());
      }
      want.d[d] = size == 0 ? x.d[d] - static_cast<int64_t>(off) : static_cast<int64_t>(size);
    }
    ETSCOPE_TRY(m.set_out(i, want));
  }
  const Shape& o = m.out_shape(n);
  if (o.rank != x.rank) return m.bad(i, "output rank differs from the input's");
  for (int d = 0; d < x.rank; ++d) {
    if (!checked::range_fits(n.dims_a[static_cast<size_t>(d)], static_cast<uint64_t>(o.d[d]), static_cast<uint64_t>(x.d[d]))) {
      return m.bad(i, "slice of dimension " + std::to_string(d) + " lies outside the input");
    }
  }
  return ok_status();
}

Status check_constant_pad(DelegateState& m, size_t i, Scratch*) {
  const Node& n = m.graph.nodes[i];
  const Shape& x = m.in_shape(n, 0);
  if (static_cast<int>(n.dims_a.size()) != x.rank || static_cast<int>(n.dims_b.size()) != x.rank) {
    return m.bad(i, "paddings differ from the input's rank");
  }
  Shape want = x;
  for (int d = 0; d < x.rank; ++d) want.d[d] = x.d[d] + n.dims_a[static_cast<size_t>(d)] + n.dims_b[static_cast<size_t>(d)];
  return m.set_out(i, want);
}

// Concat2 to Concat5.
Status check_concat(DelegateState& m, size_t i, Scratch*) {
  const Node& n = m.graph.nodes[i];
  Shape want = m.in_shape(n, 0);
  if (n.axis >= static_cast<uint32_t>(want.rank)) return m.bad(i, "axis is outside the inputs' rank");
  for (size_t k = 1; k < n.inputs.size(); ++k) {
    const Shape& s = m.in_shape(n, k);
    if (s.rank != want.rank) return m.bad(i, "inputs differ in rank");
    for (int d = 0; d < s.rank; ++d) {
      if (d != static_cast<int>(n.axis) && s.d[d] != want.d[d]) return m.bad(i, "inputs differ outside the axis");
    }
    want.d[n.axis] += s.d[n.axis];
  }
  return m.set_out(i, want);
}

Status check_resize_bilinear(DelegateState& m, size_t i, Scratch*) {
  const Node& n = m.graph.nodes[i];
  const Shape& x = m.in_shape(n, 0);
  if (x.rank != 4 || n.new_h == 0 || n.new_w == 0 || x.d[1] < 1 || x.d[2] < 1) {
    return m.bad(i, "needs a non-empty 4-D input and a non-empty size");
  }
  if ((n.flags & ~(kFlagAlignCorners | kFlagLegacyResize)) != 0) return unsupported_flags(m, i);
  Shape want = x;
  want.d[1] = n.new_h;
  want.d[2] = n.new_w;
  return m.set_out(i, want);
}

}  // namespace etscope::runtime::xnnpack
