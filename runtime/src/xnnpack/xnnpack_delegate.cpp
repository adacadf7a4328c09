// XNNPACK delegate execution. Sections: [shapes] [load: checks per node] [load] [kernels] [execute]
//
// Layout conventions are XNNPACK's: images are NHWC; convolution filters are OHWI (output
// channels, kernel rows, kernel columns, input channels of the group), depthwise filters 1HWO,
// fully connected filters [outputs, inputs] (transposed when flag 1 is set).
#include "xnnpack/xnnpack_delegate.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>

#include "etscope/core/checked.h"
#include "etscope/core/event_names.h"
#include "kernels/util/gemm.h"

namespace etscope::rt::xnnpack {
namespace {

using xnn::ElementType;
using xnn::Node;
using xnn::NodeKind;

constexpr uint32_t kFlagTransposeB = 1;  // fully connected: weights are [inputs, outputs]; bmm: b is [.., N, K]
constexpr uint32_t kFlagTransposeA = 2;
constexpr uint32_t kFlagAlignCorners = 8;
constexpr uint32_t kFlagLegacyResize = 4;
constexpr int kMaxRank = 6;

// ---------------------------------------------------------------------------------------------
// [shapes]

struct Shape {
  int rank = 0;
  int64_t d[kMaxRank] = {};
  int64_t numel() const {
    int64_t n = 1;
    for (int i = 0; i < rank; ++i) n *= d[i];
    return n;
  }
  bool operator==(const Shape& o) const { return rank == o.rank && std::equal(d, d + rank, o.d); }
  std::string text() const {
    std::string s = "[";
    for (int i = 0; i < rank; ++i) s += (i ? ", " : "") + std::to_string(d[i]);
    return s + "]";
  }
};

Shape shape_of(const xnn::TensorValue& v) {
  Shape s;
  s.rank = static_cast<int>(v.shape.size());
  for (int i = 0; i < s.rank; ++i) s.d[i] = v.shape[static_cast<size_t>(i)];
  return s;
}

// Output size of a windowed dimension (convolution or pooling), or -1 when the window does not
// fit the padded input.
int64_t window_out(int64_t in, uint32_t pad_a, uint32_t pad_b, uint32_t kernel, uint32_t stride, uint32_t dilation) {
  const int64_t padded = in + pad_a + pad_b;
  const int64_t extent = (static_cast<int64_t>(kernel) - 1) * dilation + 1;
  if (stride == 0 || kernel == 0 || dilation == 0 || padded < extent) return -1;
  return (padded - extent) / stride + 1;
}

struct Scratch {
  size_t floats = 0;  // im2col / temporaries
  size_t gemm = 0;    // bytes of GEMM workspace
};

}  // namespace

struct XnnpackDelegate::Impl {
  xnn::Graph graph;
  std::string where;
  std::vector<Shape> shapes;
  std::vector<std::vector<float>> owned;  // per value: internal buffers and float constants
  std::vector<float*> data;               // per value, external ones set per execution
  std::vector<std::string> event_names;   // per node
  std::vector<uint32_t> reads, writes;    // DelegateCall argument positions
  std::vector<float> scratch;
  std::vector<uint8_t> gemm_workspace;

  std::string node_where(size_t i) const {
    return where + ": XNNPACK node " + std::to_string(i) + " (" + xnn::to_string(graph.nodes[i].kind) + ")";
  }
  Error bad(size_t node, const std::string& text) const { return Error(ErrorCode::kCorrupt, node_where(node) + ": " + text); }
  const Shape& in_shape(const Node& n, size_t k) const { return shapes[static_cast<size_t>(n.inputs[k])]; }
  const Shape& out_shape(const Node& n, size_t k = 0) const { return shapes[static_cast<size_t>(n.outputs[k])]; }
  Status check_node(size_t i, Scratch* scratch);
  std::string event_name(const Node& n) const;
  void run_node(const Node& n);
};

namespace {

// ---------------------------------------------------------------------------------------------
// [load: checks per node]

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
  for (int32_t v : n.inputs) {
    if (v >= 0 && graph.values[static_cast<size_t>(v)].type != ElementType::kF32) {
      return Error(ErrorCode::kNotSupported, node_where(i) + ": input value " + std::to_string(graph.values[static_cast<size_t>(v)].id) +
                                                 " is " + xnn::to_string(graph.values[static_cast<size_t>(v)].type) +
                                                 "; etscope executes XNNPACK nodes on f32 values only so far");
    }
  }
  for (int32_t v : n.outputs) {
    if (graph.values[static_cast<size_t>(v)].type != ElementType::kF32) {
      return Error(ErrorCode::kNotSupported, node_where(i) + ": output value " + std::to_string(graph.values[static_cast<size_t>(v)].id) +
                                                 " is " + xnn::to_string(graph.values[static_cast<size_t>(v)].type) +
                                                 "; etscope executes XNNPACK nodes on f32 values only so far");
    }
  }
  auto expect_out = [&](const Shape& want) -> Status {
    if (!(out_shape(n) == want)) {
      return bad(i, "its output is declared " + out_shape(n).text() + ", its inputs give " + want.text());
    }
    return ok_status();
  };
  auto need_constant = [&](int32_t v, const char* what) -> Status {
    if (v >= 0 && !graph.values[static_cast<size_t>(v)].is_constant) return bad(i, std::string(what) + " is not a constant");
    return ok_status();
  };
  if (is_unary_elementwise(n.kind)) {
    if (n.kind == NodeKind::kConvert && !(out_shape(n) == in_shape(n, 0))) return bad(i, "converts between shapes");
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
        for (int d = 0; d < 2; ++d) {
          const int64_t in = x.d[1 + d];
          const uint32_t k = d == 0 ? c.kernel_h : c.kernel_w, s = d == 0 ? c.stride_h : c.stride_w;
          const uint32_t dil = d == 0 ? c.dilation_h : c.dilation_w, adj = d == 0 ? c.adjustment_h : c.adjustment_w;
          const int64_t pads = d == 0 ? int64_t{c.padding[0]} + c.padding[2] : int64_t{c.padding[1]} + c.padding[3];
          const int64_t o = static_cast<int64_t>(s) * (in - 1) + adj + (static_cast<int64_t>(k) - 1) * dil + 1 - pads;
          if (in < 1 || o < 1) return bad(i, "has no output pixels");
          want.d[1 + d] = o;
        }
      } else {
        want.d[1] = window_out(x.d[1], c.padding[0], c.padding[2], c.kernel_h, c.stride_h, c.dilation_h);
        want.d[2] = window_out(x.d[2], c.padding[3], c.padding[1], c.kernel_w, c.stride_w, c.dilation_w);
        if (want.d[1] < 1 || want.d[2] < 1) return bad(i, "its window does not fit the padded input");
      }
      ETSCOPE_TRY(expect_out(want));
      if (n.kind == NodeKind::kConv2d) {
        const uint64_t m = static_cast<uint64_t>(want.d[1] * want.d[2]);
        const uint64_t k = uint64_t{c.kernel_h} * c.kernel_w * c.group_in;
        scratch->floats = std::max<size_t>(scratch->floats, m * k + m * c.group_out);
        scratch->gemm = std::max(scratch->gemm, kernels::gemm_workspace_bytes(static_cast<int64_t>(m), c.group_out,
                                                                               static_cast<int64_t>(k), 4));
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
      scratch->gemm = std::max(scratch->gemm, kernels::gemm_workspace_bytes(x.numel() / std::max<int64_t>(k, 1), nout, k, 4));
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
      if (out_shape(n).numel() != x.d[0] * x.d[3]) return bad(i, "output is not one value per image and channel");
      return ok_status();
    }
    case NodeKind::kAvgPool2d:
    case NodeKind::kMaxPool2d: {
      const Shape& x = in_shape(n, 0);
      const xnn::ConvParams& c = n.conv;
      if (x.rank != 4) return bad(i, "needs a 4-D input");
      if (n.flags != 0) return Error(ErrorCode::kNotSupported, node_where(i) + ": flags " + std::to_string(n.flags) + " are not supported");
      const uint32_t dh = n.kind == NodeKind::kMaxPool2d ? c.dilation_h : 1, dw = n.kind == NodeKind::kMaxPool2d ? c.dilation_w : 1;
      Shape want = x;
      want.d[1] = window_out(x.d[1], c.padding[0], c.padding[2], c.kernel_h, c.stride_h, dh);
      want.d[2] = window_out(x.d[2], c.padding[3], c.padding[1], c.kernel_w, c.stride_w, dw);
      if (want.d[1] < 1 || want.d[2] < 1) return bad(i, "its window does not fit the padded input");
      return expect_out(want);
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
    case NodeKind::kReshape:
      if (out_shape(n).numel() != in_shape(n, 0).numel()) return bad(i, "changes the element count");
      return ok_status();
    case NodeKind::kSlice: {
      const Shape& x = in_shape(n, 0);
      if (static_cast<int>(n.dims_a.size()) != x.rank) return bad(i, "offsets differ from the input's rank");
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
      if (x.rank != 4 || n.new_h == 0 || n.new_w == 0) return bad(i, "needs a 4-D input and a non-empty size");
      if ((n.flags & ~(kFlagAlignCorners | kFlagLegacyResize)) != 0) {
        return Error(ErrorCode::kNotSupported, node_where(i) + ": flags " + std::to_string(n.flags) + " are not supported");
      }
      Shape want = x;
      want.d[1] = n.new_h;
      want.d[2] = n.new_w;
      return expect_out(want);
    }
    default:
      return Error(ErrorCode::kNotSupported, node_where(i) + ": etscope cannot execute this XNNPACK node kind yet");
  }
}

std::string XnnpackDelegate::Impl::event_name(const Node& n) const {
  switch (n.kind) {
    case NodeKind::kConv2d: {
      const bool pointwise = n.conv.kernel_h == 1 && n.conv.kernel_w == 1 && n.conv.stride_h == 1 && n.conv.stride_w == 1 &&
                             n.conv.padding == std::array<uint32_t, 4>{} && n.conv.groups == 1;
      return pointwise ? "Convolution (NHWC, F32) GEMM" : "Convolution (NHWC, F32) IGEMM";
    }
    case NodeKind::kDepthwiseConv2d: return "Convolution (NHWC, F32) DWConv";
    case NodeKind::kConvTranspose2d: return "Deconvolution (NHWC, F32)";
    case NodeKind::kFullyConnected: return "Fully Connected (NC, F32) GEMM";
    case NodeKind::kBatchMatMul: return "Batch Matrix Multiply (NC, F32) GEMM";
    case NodeKind::kTranspose: return "Transpose (ND, X32)";
    case NodeKind::kReshape:
    case NodeKind::kCopy: return "Copy (NC, X32)";
    case NodeKind::kSlice: return "Slice (ND, X32)";
    case NodeKind::kConstantPad: return "Constant Pad (ND, X32)";
    case NodeKind::kConcat2:
    case NodeKind::kConcat3:
    case NodeKind::kConcat4:
    case NodeKind::kConcat5: return "Concatenate (ND, X32)";
    case NodeKind::kAvgPool2d: return "Average Pooling (NHWC, F32)";
    case NodeKind::kMaxPool2d: return "Max Pooling (NHWC, F32)";
    case NodeKind::kGlobalAvgPool2d: return "Global Average Pooling (NWC, F32)";
    case NodeKind::kResizeBilinear2d: return "Resize Bilinear (NHWC, F32)";
    case NodeKind::kSoftmax: return "Softmax (NC, F32)";
    case NodeKind::kAdd: return "Add (ND, F32)";
    case NodeKind::kSubtract: return "Subtract (ND, F32)";
    case NodeKind::kMultiply: return "Multiply (ND, F32)";
    case NodeKind::kDivide: return "Divide (ND, F32)";
    case NodeKind::kMinimum: return "Minimum (ND, F32)";
    case NodeKind::kMaximum: return "Maximum (ND, F32)";
    case NodeKind::kPRelu: return "PReLU (NC, F32)";
    case NodeKind::kClamp: return "Clamp (NC, F32)";
    case NodeKind::kHardSwish: return "HardSwish (NC, F32)";
    case NodeKind::kSigmoid: return "Sigmoid (NC, F32)";
    case NodeKind::kTanh: return "Tanh (NC, F32)";
    case NodeKind::kGelu: return "GELU (NC, F32)";
    case NodeKind::kElu: return "ELU (NC, F32)";
    case NodeKind::kLeakyRelu: return "Leaky ReLU (NC, F32)";
    case NodeKind::kConvert: return "Convert (NC, F32)";
    default: return std::string(xnn::to_string(n.kind)) + " (NC, F32)";
  }
}

// ---------------------------------------------------------------------------------------------
// [load]

XnnpackDelegate::XnnpackDelegate(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
XnnpackDelegate::~XnnpackDelegate() = default;
const std::vector<uint32_t>& XnnpackDelegate::read_args() const { return impl_->reads; }
const std::vector<uint32_t>& XnnpackDelegate::written_args() const { return impl_->writes; }
const xnn::Graph& XnnpackDelegate::graph() const { return impl_->graph; }

Result<std::unique_ptr<XnnpackDelegate>> XnnpackDelegate::load(const Program& program, const Delegate& delegate,
                                                               std::span<EValue* const> args, const Reserve& reserve,
                                                               const std::string& where) {
  auto impl = std::make_unique<Impl>();
  impl->where = where;
  ETSCOPE_ASSIGN_OR_RETURN(impl->graph, xnn::parse_xnnpack_delegate(program, delegate, where + ": XNNPACK payload"));
  const xnn::Graph& g = impl->graph;
  const size_t nv = g.values.size();
  impl->shapes.resize(nv);
  impl->owned.resize(nv);
  impl->data.assign(nv, nullptr);
  // Which values hold data before the first node: graph inputs and constants.
  std::vector<uint8_t> ready(nv, 0);
  for (size_t v = 0; v < nv; ++v) {
    impl->shapes[v] = shape_of(g.values[v]);
    ready[v] = g.values[v].is_constant || (g.values[v].flags & xnn::kFlagExternalInput) != 0;
  }
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
      if (v.type != ElementType::kF32 || t.dtype() != ScalarType::kFloat) {
        return Error(ErrorCode::kNotSupported, what + ": " + xnn::to_string(v.type) + " graph value for a " + scalar_type_name(t.dtype()) +
                                                   " tensor; etscope passes f32 tensors to XNNPACK graphs only so far");
      }
      Shape physical;
      physical.rank = t.dim();
      if (t.dim() > kMaxRank) return Error(ErrorCode::kCorrupt, what + ": rank above 6");
      for (int d = 0; d < t.dim(); ++d) physical.d[d] = t.size(t.dim_order()[static_cast<size_t>(d)]);
      if (!(physical == impl->shapes[static_cast<size_t>(vi)])) {
        return Error(ErrorCode::kNotSupported, what + ": the tensor is " + physical.text() + " in memory order, the graph expects " +
                                                   impl->shapes[static_cast<size_t>(vi)].text());
      }
      (output ? impl->writes : impl->reads).push_back(v.external_id);
    }
  }
  // Nodes in order: what they read must exist, what they write must be internal or an output.
  Scratch scratch;
  std::vector<uint8_t> written(nv, 0);
  std::map<std::string, int> counts;
  uint64_t bytes = 0;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& n = g.nodes[i];
    if (n.outputs.empty() || n.inputs.empty()) return impl->bad(i, "has no input or no output");
    for (int32_t v : n.inputs) {
      if (v >= 0 && !ready[static_cast<size_t>(v)]) {
        return impl->bad(i, "reads value id " + std::to_string(g.values[static_cast<size_t>(v)].id) + " before any node writes it");
      }
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
    std::string name = impl->event_name(n);
    impl->event_names.push_back(name + " #" + std::to_string(++counts[name]));
  }
  for (int32_t vi : g.outputs) {
    if (!written[static_cast<size_t>(vi)]) {
      return Error(ErrorCode::kCorrupt, where + ": XNNPACK graph output value id " + std::to_string(g.values[static_cast<size_t>(vi)].id) +
                                            " is never written");
    }
  }
  // Memory: float copies of constants (aligned, whatever their offset in the file) and one
  // buffer per internal value; all within the method's budget.
  for (size_t v = 0; v < nv; ++v) {
    const xnn::TensorValue& tv = g.values[v];
    if ((tv.flags & (xnn::kFlagExternalInput | xnn::kFlagExternalOutput)) != 0) continue;
    if (!tv.is_constant && !written[v]) continue;
    bytes += tv.numel * 4;
  }
  bytes += scratch.floats * 4 + scratch.gemm;
  ETSCOPE_TRY(reserve(bytes, where + ": XNNPACK delegate buffers"));
  for (size_t v = 0; v < nv; ++v) {
    const xnn::TensorValue& tv = g.values[v];
    if ((tv.flags & (xnn::kFlagExternalInput | xnn::kFlagExternalOutput)) != 0) continue;
    if (!tv.is_constant && !written[v]) continue;
    impl->owned[v].resize(static_cast<size_t>(tv.numel));
    if (tv.is_constant && tv.type == ElementType::kF32 && tv.numel > 0) {
      std::memcpy(impl->owned[v].data(), tv.constant.data(), static_cast<size_t>(tv.numel) * 4);
    }
    impl->data[v] = impl->owned[v].data();
  }
  impl->scratch.resize(scratch.floats);
  impl->gemm_workspace.resize(scratch.gemm);
  return std::unique_ptr<XnnpackDelegate>(new XnnpackDelegate(std::move(impl)));
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
      if (out != x) std::memcpy(out, x, static_cast<size_t>(count) * 4);
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
      const int64_t cg = c.group_in, og = c.group_out;
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
            for (int64_t oy = 0; oy < OH; ++oy) {
              for (int64_t ox = 0; ox < OW; ++ox) {
                float* row = col + (oy * OW + ox) * kk;
                for (uint32_t ky = 0; ky < c.kernel_h; ++ky) {
                  const int64_t iy = oy * c.stride_h - c.padding[0] + int64_t{ky} * c.dilation_h;
                  for (uint32_t kx = 0; kx < c.kernel_w; ++kx) {
                    const int64_t ix = ox * c.stride_w - c.padding[3] + int64_t{kx} * c.dilation_w;
                    float* cell = row + (int64_t{ky} * c.kernel_w + kx) * cg;
                    if (iy < 0 || iy >= H || ix < 0 || ix >= W) {
                      std::fill(cell, cell + cg, 0.0f);
                    } else {
                      std::memcpy(cell, img + (iy * W + ix) * C + g * cg, static_cast<size_t>(cg) * 4);
                    }
                  }
                }
              }
            }
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
            for (uint32_t ky = 0; ky < c.kernel_h; ++ky) {
              const int64_t iy = oy * c.stride_h - c.padding[0] + int64_t{ky} * c.dilation_h;
              if (iy < 0 || iy >= H) continue;
              for (uint32_t kx = 0; kx < c.kernel_w; ++kx) {
                const int64_t ix = ox * c.stride_w - c.padding[3] + int64_t{kx} * c.dilation_w;
                if (ix < 0 || ix >= W) continue;
                const float* in = x + ((b * H + iy) * W + ix) * C;
                const float* wk = w + (int64_t{ky} * c.kernel_w + kx) * CO;
                for (int64_t o = 0; o < CO; ++o) px[o] += in[o / mult] * wk[o];
              }
            }
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
          std::memcpy(out + o * so.d[n.axis] * inner + at, src + o * len, static_cast<size_t>(len) * 4);
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

// ---------------------------------------------------------------------------------------------
// [execute]

Status XnnpackDelegate::execute(std::span<EValue* const> args, EventTracer* tracer) {
  Impl& m = *impl_;
  const xnn::Graph& g = m.graph;
  for (const std::vector<int32_t>* list : {&g.inputs, &g.outputs}) {
    for (int32_t vi : *list) {
      const xnn::TensorValue& v = g.values[static_cast<size_t>(vi)];
      TensorImpl& t = *args[v.external_id]->tensor;
      // Shapes were checked at load; a dynamic tensor may have been resized since.
      Shape physical;
      physical.rank = t.dim();
      for (int d = 0; d < t.dim(); ++d) physical.d[d] = t.size(t.dim_order()[static_cast<size_t>(d)]);
      if (!(physical == m.shapes[static_cast<size_t>(vi)]) || t.data() == nullptr) {
        return Error(ErrorCode::kNotSupported, m.where + ": XNNPACK graph argument " + std::to_string(v.external_id) + " is " +
                                                   physical.text() + ", the graph was built for " +
                                                   m.shapes[static_cast<size_t>(vi)].text() +
                                                   " (etscope runs XNNPACK graphs at their exported shapes only so far)");
      }
      m.data[static_cast<size_t>(vi)] = t.data_as<float>();
    }
  }
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const EventHandle h = tracer != nullptr && tracer->profiling_level() == ProfilingLevel::kAllEvents
                              ? tracer->start_delegate_event(m.event_names[i].c_str())
                              : kNoEvent;
    m.run_node(g.nodes[i]);
    if (h != kNoEvent) tracer->end_profiling(h);
  }
  return ok_status();
}

}  // namespace etscope::rt::xnnpack
