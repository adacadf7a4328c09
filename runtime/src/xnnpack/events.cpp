// What an XNNPACK delegate call reports while it runs. Sections: [event names] [event grouping]
// [intermediate outputs]
#include <map>

#include <algorithm>
#include "xnnpack/nhwc_windows.h"
#include "xnnpack/node_table.h"

namespace etscope::runtime::xnnpack {
namespace {

// ---------------------------------------------------------------------------------------------
// [event names]

// The element width XNNPACK names data-movement operators by.
const char* bits(const xnn::TensorValue& v) {
  switch (v.type) {
    case ElementType::kF16: case ElementType::kBF16: return "X16";
    case ElementType::kQInt8: case ElementType::kQUInt8: case ElementType::kQDInt8: return "X8";
    default: return "X32";
  }
}

// The element type XNNPACK names computing operators by.
const char* real(const xnn::TensorValue& v) {
  switch (v.type) {
    case ElementType::kF16: return "F16";
    case ElementType::kBF16: return "BF16";
    case ElementType::kQInt8: return "S8";
    case ElementType::kQUInt8: return "U8";
    default: return "F32";
  }
}

bool quantized_input(const DelegateState& m, const Node& n) {
  const ElementType t = m.value(n.inputs[0]).type;
  return t == ElementType::kQInt8 || t == ElementType::kQUInt8;
}

// The filter's quantization, as XNNPACK names it ("" for a float filter).
std::string weights(const DelegateState& m, const Node& n) {
  if (n.inputs.size() < 2 || n.inputs[1] < 0) return "";
  switch (m.value(n.inputs[1]).type) {
    case ElementType::kQCInt8: return "QC8W";
    case ElementType::kQCInt4: return "QC4W";
    case ElementType::kQBInt4: return "QB4W";
    case ElementType::kQInt8: return "QS8W";
    default: return "";
  }
}

std::string conv_type(const DelegateState& m, const Node& n) {
  const xnn::TensorValue& in = m.value(n.inputs[0]);
  if (!quantized_input(m, n)) return real(in);
  return weights(m, n) == "QC8W" ? "QC8" : in.type == ElementType::kQUInt8 ? "QU8" : "QS8";
}

void replace(std::string* s, const std::string& from, const std::string& to) {
  const size_t at = s->find(from);
  if (at != std::string::npos) s->replace(at, from.size(), to);
}

}  // namespace

std::string conv2d_event(const DelegateState& m, const Node& n) {
  // XNNPACK runs 1x1 convolutions as the GEMMs of a fully connected operator, named as one
  // (int8 ones with their input and filter types).
  if (pointwise_conv(n.conv)) {
    if (!quantized_input(m, n)) return "Fully Connected (NC, " + conv_type(m, n) + ") GEMM";
    return "Fully Connected (NC, " + std::string(real(m.value(n.inputs[0])) == std::string("S8") ? "QS8" : "QU8") + ", " + weights(m, n) +
           ") GEMM";
  }
  return "Convolution (NHWC, " + conv_type(m, n) + ") IGEMM";
}

std::string depthwise_conv2d_event(const DelegateState& m, const Node& n) {
  // XNNPACK's depthwise kernels take one output per input channel; with a channel multiplier it
  // runs the convolution as a grouped one.
  if (n.conv.group_out != 1) return conv2d_event(m, n);
  return "Convolution (NHWC, " + conv_type(m, n) + ") DWConv";
}

std::string avg_pool_event(const DelegateState& m, const Node& n) {
  // XNNPACK pools a padded window over its pixels inside the image only, each output pixel with
  // its own divisor.
  const auto& p = n.conv.padding;
  const bool padded = p[0] != 0 || p[1] != 0 || p[2] != 0 || p[3] != 0;
  return "Average Pooling (NHWC, " + std::string(real(m.value(n.inputs[0]))) + (padded ? ") Pixelwise Average Pooling" : ") Average Pooling");
}

std::string global_avg_pool_event(const DelegateState& m, const Node& n) {
  return quantized_input(m, n) ? "Mean (ND)" : "Mean (ND) Reduce2";  // as XNNPACK 1.5.1's mean names them
}

std::string conv_transpose2d_event(const DelegateState& m, const Node& n) {
  // XNNPACK splits a strided deconvolution into subconvolutions unless it is dilated or its
  // stride exceeds its window.
  const xnn::ConvParams& c = n.conv;
  const bool subconv = (c.stride_h > 1 || c.stride_w > 1) && c.dilation_h == 1 && c.dilation_w == 1 && c.stride_h <= c.kernel_h && c.stride_w <= c.kernel_w;
  return "Deconvolution (NHWC, " + conv_type(m, n) + (subconv ? ") Subconv2D" : ") IGEMM");
}

std::string fully_connected_event(const DelegateState& m, const Node& n) {
  const xnn::TensorValue& in = m.value(n.inputs[0]);
  const xnn::TensorValue& out = m.value(n.outputs[0]);
  if (in.type == ElementType::kQDInt8) return "Fully Connected (NC, QDU8, " + std::string(real(out)) + ", " + weights(m, n) + ") GEMM";
  if (quantized_input(m, n)) {
    return "Fully Connected (NC, " + std::string(real(in) == std::string("S8") ? "QS8" : "QU8") + ", " + weights(m, n) + ") GEMM";
  }
  // bf16 layers are XNNPACK's bf16 x bf16 -> f32 operator (ExecuTorch converts a bf16 output
  // after it, an event etscope does not record).
  if (in.type == ElementType::kBF16) return "Fully Connected (NC, BF16, F32) GEMM";
  return "Fully Connected (NC, " + std::string(real(in)) + ") GEMM";
}

std::string multiply_event(const DelegateState&, const Node& n) {
  return n.inputs[0] == n.inputs[1] ? "Square (NC)" : "Multiply (ND)";  // XNNPACK rewrites x * x
}

// The operator names XNNPACK's profiler reports (as ExecuTorch 1.5.1's XNNPACK backend records
// them), so that dumps read alike; etscope records one event per node where XNNPACK may fuse
// nodes (two reshapes in a row) or split them.
std::string DelegateState::event_name(const Node& n) const {
  const NodeOps& ops = node_ops(n.kind);
  if (ops.event_fn != nullptr) return ops.event_fn(*this, n);
  if (ops.event == nullptr) return std::string(xnn::to_string(n.kind)) + " (NC)";
  std::string name = ops.event;
  const xnn::TensorValue& in = value(n.inputs[0]);
  replace(&name, "{bits}", bits(in));
  replace(&name, "{real}", real(in));
  return name;
}

// ---------------------------------------------------------------------------------------------
// [event grouping]

void DelegateState::group_events() {
  const size_t nn = graph.nodes.size();
  // Node i's only output feeds node j alone and is not a graph output.
  auto feeds_only = [&](size_t i, size_t j) {
    const Node& a = graph.nodes[i];
    const Node& b = graph.nodes[j];
    if (a.outputs.size() != 1) return false;
    const int32_t v = a.outputs[0];
    return consumers[static_cast<size_t>(v)] == 1 && (value(v).flags & xnn::kFlagExternalOutput) == 0 &&
           std::find(b.inputs.begin(), b.inputs.end(), v) != b.inputs.end();
  };
  // joins[i]: node i is timed within the event of node i + 1 (1) or of node i - 1 (-1).
  std::vector<int> joins(nn, 0);
  for (size_t i = 0; i < nn; ++i) {
    const Node& n = graph.nodes[i];
    const bool next = i + 1 < nn && feeds_only(i, i + 1);
    const NodeKind nk = next ? graph.nodes[i + 1].kind : n.kind;
    if (next && n.kind == NodeKind::kConvert && value(n.outputs[0]).type == ElementType::kQDInt8) joins[i] = 1;
    if (next && n.kind == NodeKind::kReshape && nk == NodeKind::kReshape) joins[i] = 1;
    // A transpose of the last two dimensions feeding a batched matrix product becomes the
    // product's transposed-operand flag.
    if (next && n.kind == NodeKind::kTranspose && nk == NodeKind::kBatchMatMul && n.dims_a.size() >= 2 &&
        n.dims_a[n.dims_a.size() - 1] == n.dims_a.size() - 2 && n.dims_a[n.dims_a.size() - 2] == n.dims_a.size() - 1 &&
        graph.nodes[i + 1].inputs.size() > 1 && graph.nodes[i + 1].inputs[1] == n.outputs[0]) {
      joins[i] = 1;
    }
    if (n.kind == NodeKind::kClamp && i > 0 && joins[i - 1] == 0 && has_trait(graph.nodes[i - 1].kind, kFusesClamp) &&
        feeds_only(i - 1, i)) {
      joins[i] = -1;
    }
  }
  // Chains XNNPACK runs as one lookup table (lookup_tables.cpp): one event each.
  lookup_chains.clear();
  std::vector<int32_t> chain_at(nn, -1);  // per node: the chain that starts there, or -1
  for (size_t i = 0; i < nn;) {
    const size_t end = lookup_chain_end(i, joins);
    if (end == i) {
      ++i;
      continue;
    }
    for (size_t k = i; k + 1 < end; ++k) joins[k] = 1;
    joins[end - 1] = 0;
    chain_at[i] = static_cast<int32_t>(lookup_chains.size());
    LookupChain c;
    c.first = static_cast<uint32_t>(i);
    c.last = static_cast<uint32_t>(end - 1);
    c.input = elementwise_input(graph.nodes[i]);
    c.output = graph.nodes[end - 1].outputs[0];
    lookup_chains.push_back(c);
    i = end;
  }
  std::map<std::string, int> counts;
  event_first.clear();
  event_names.clear();
  event_named.clear();
  lookup_of_event.clear();
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
    // XNNPACK 1.5.1's profiler names its lookup-table operator so.
    const std::string name = chain_at[i] >= 0 ? std::string("Invalid Unary Op") : event_name(graph.nodes[named]);
    lookup_of_event.push_back(chain_at[i]);
    event_first.push_back(static_cast<uint32_t>(i));
    event_names.push_back(name + " #" + std::to_string(++counts[name]));
    event_named.push_back(static_cast<uint32_t>(named));
    i = end;
  }
  event_first.push_back(static_cast<uint32_t>(nn));
}

// ---------------------------------------------------------------------------------------------
// [intermediate outputs]

namespace {

// Debug handles of nodes that stand for no edge-graph node: the layout conversions the
// partitioner inserts carry 65535 (and 0 is never a handle).
bool is_edge_handle(uint32_t h) { return h != 0 && h != 0xffff; }

}  // namespace

size_t DelegateState::plan_logging(std::span<EValue* const> args) {
  const size_t nv = graph.values.size();
  order.assign(nv, {});
  for (auto& o : order) {
    for (int d = 0; d < kMaxRank; ++d) o[static_cast<size_t>(d)] = static_cast<uint8_t>(d);
  }
  for (int32_t vi : graph.inputs) {
    const TensorImpl& t = *args[value(vi).external_id]->tensor;
    if (t.dim() != shapes[static_cast<size_t>(vi)].rank) continue;
    for (int d = 0; d < t.dim(); ++d) order[static_cast<size_t>(vi)][static_cast<size_t>(d)] = t.dim_order()[static_cast<size_t>(d)];
  }
  // An edge-graph permute keeps its input's memory format (the partitioner lowers it on the
  // channels-last data when its input is channels-last), so it keeps the order too; nodes with
  // a new layout (reshape, matrix products) do not.
  std::map<uint32_t, uint32_t> last_with_handle;
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    const Node& n = graph.nodes[i];
    const size_t out = static_cast<size_t>(n.outputs[0]);
    const Shape& so = shapes[out];
    if (n.kind == NodeKind::kTranspose && !is_edge_handle(n.debug_handle)) {
      // A layout conversion the partitioner inserted: same tensor, other memory order.
      const auto& in = order[static_cast<size_t>(n.inputs[0])];
      for (size_t d = 0; d < n.dims_a.size(); ++d) order[out][d] = in[n.dims_a[d]];
    } else if (!has_trait(n.kind, kNewLayout)) {
      for (int32_t v : n.inputs) {
        if (v >= 0 && shapes[static_cast<size_t>(v)].rank == so.rank && !value(v).is_constant) {
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
    for (int d = 0; d < so.rank; ++d) l.permute |= order[out][static_cast<size_t>(d)] != d;
    const Shape logical = logical_shape(out);
    // Room for the value's declared elements: a dynamic graph's shapes change from run to run.
    const size_t bytes = static_cast<size_t>(declared[out].numel()) * 4;
    if (!l.tensor.init(dtype, {logical.d, static_cast<size_t>(logical.rank)}, {}, dynamic, bytes).ok()) continue;
    if (l.permute) scratch_bytes = std::max(scratch_bytes, bytes);
    l.value.tag = Tag::kTensor;
    logged_of_node[node] = static_cast<int32_t>(logged.size());
    logged.push_back(l);
  }
  // Pointers into `logged` are taken only now that it no longer grows.
  for (Logged& l : logged) l.value.tensor = &l.tensor;
  return scratch_bytes;
}

Shape DelegateState::logical_shape(size_t v) const {
  const Shape& s = shapes[v];
  Shape logical;
  logical.rank = s.rank;
  for (int d = 0; d < s.rank; ++d) logical.d[order[v][static_cast<size_t>(d)]] = s.d[d];
  return logical;
}

void DelegateState::logical_steps(size_t v, int64_t* step) const {
  const Shape logical = logical_shape(v);
  int64_t lstride[kMaxRank] = {};
  strides_of(logical, lstride);
  for (int d = 0; d < logical.rank; ++d) step[d] = lstride[order[v][static_cast<size_t>(d)]];
}

// Points the logged tensor at the node's output in logical order (transposed into scratch when
// the node computed it in another memory order).
bool DelegateState::log_output(Logged& l) {
  const size_t out = static_cast<size_t>(graph.nodes[l.node].outputs[0]);
  const Shape& so = shapes[out];
  const float* src = data[out];
  TensorImpl& t = l.tensor;
  if (dynamic) {
    const Shape logical = logical_shape(out);
    if (!t.resize({logical.d, static_cast<size_t>(logical.rank)}).ok()) return false;  // never: shapes fit the declared ones
  }
  if (!l.permute) {
    t.set_data(const_cast<float*>(src));
    return true;
  }
  // Walk the value in memory order, writing it in logical order.
  int64_t step[kMaxRank] = {};
  logical_steps(out, step);
  float* dst = log_scratch.data();
  walk_strided(so, step, [&](int64_t i, int64_t at) { dst[at] = src[i]; });
  t.set_data(dst);
  return true;
}

bool DelegateState::overwrite_output(const Logged& l, std::span<const float> logical) {
  const size_t out = static_cast<size_t>(graph.nodes[l.node].outputs[0]);
  const Shape& so = shapes[out];
  float* dst = data[out];
  if (dst == nullptr || logical.size() != static_cast<size_t>(so.numel())) return false;
  if (!l.permute) {
    std::copy(logical.begin(), logical.end(), dst);
    return true;
  }
  int64_t step[kMaxRank] = {};
  logical_steps(out, step);
  walk_strided(so, step, [&](int64_t i, int64_t at) { dst[i] = logical[static_cast<size_t>(at)]; });
  return true;
}

}  // namespace etscope::runtime::xnnpack
