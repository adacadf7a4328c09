// XNNPACK delegate execution: loading a delegate call (payload, arguments, per-node checks,
// buffers) and executing it node by node. What each node kind does is in node_table.cpp.
// Sections: [shapes of arguments] [legacy dynamic quantization] [load] [execute]
#include "xnnpack/xnnpack_delegate.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <map>
#include <optional>

#include "etscope/core/checked.h"
#include "float_env.h"
#include "matrix_tiles.h"
#include "kernels/util/half.h"
#include "xnnpack/node_table.h"

namespace etscope::runtime::xnnpack {
namespace {

// ---------------------------------------------------------------------------------------------
// [shapes of arguments]

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

// The memory-order shape of an argument tensor (rank at most kMaxRank, checked at load).
Shape physical_shape(const TensorImpl& t) {
  Shape s;
  s.rank = t.dim();
  for (int d = 0; d < t.dim(); ++d) s.d[d] = t.size(t.dim_order()[static_cast<size_t>(d)]);
  return s;
}

// ---------------------------------------------------------------------------------------------
// [legacy dynamic quantization]

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

}  // namespace

// ---------------------------------------------------------------------------------------------
// [load]

XnnpackDelegate::XnnpackDelegate(std::unique_ptr<DelegateState> impl) : impl_(std::move(impl)) {}
XnnpackDelegate::~XnnpackDelegate() = default;
const std::vector<uint32_t>& XnnpackDelegate::read_args() const { return impl_->reads; }
const std::vector<uint32_t>& XnnpackDelegate::written_args() const { return impl_->writes; }

std::vector<XnnpackDelegate::Quantizer> XnnpackDelegate::quantizers() const {
  std::vector<Quantizer> out;
  for (const DelegateState::Quantizer& q : impl_->quantizers) {
    const Node& n = impl_->graph.nodes[q.node];
    const xnn::TensorValue& v = impl_->value(n.outputs[0]);
    const Node& named = impl_->graph.nodes[impl_->event_named[q.event]];
    std::vector<int32_t> readers;
    for (uint32_t r : q.readers) readers.push_back(static_cast<int32_t>(impl_->graph.nodes[r].debug_handle));
    std::vector<int64_t> filter;
    if (q.layer >= 0) filter = impl_->value(impl_->graph.nodes[static_cast<size_t>(q.layer)].inputs[1]).shape;
    out.push_back({q.node, static_cast<int32_t>(n.debug_handle), static_cast<int32_t>(named.debug_handle), q.event,
                   impl_->event_names[q.event], v.type == ElementType::kQDInt8, v.numel, q.from_float, std::move(readers),
                   std::move(filter)});
  }
  return out;
}

size_t XnnpackDelegate::quantizer_count() const { return impl_->quantizers.size(); }

Status XnnpackDelegate::set_float_filter(size_t k, std::span<const float> values) {
  if (k >= impl_->quantizers.size()) return Error(ErrorCode::kInvalidArgument, impl_->where + ": no quantizer " + std::to_string(k));
  return impl_->set_float_filter(k, values);
}

std::vector<uint64_t> XnnpackDelegate::logged_bytes() const {
  std::vector<uint64_t> bytes;
  for (const DelegateState::Logged& l : impl_->logged) bytes.push_back(l.tensor.capacity());
  return bytes;
}

std::vector<XnnpackDelegate::FloatConstant> XnnpackDelegate::float_constants() const {
  std::vector<FloatConstant> out;
  for (size_t v = 0; v < impl_->graph.values.size(); ++v) {
    const xnn::TensorValue& tv = impl_->graph.values[v];
    // From the file's bytes: packed layers keep no float copy.
    if (!tv.is_constant || tv.type != ElementType::kF32 || tv.constant.size() < tv.numel * 4) continue;
    std::vector<float> values(static_cast<size_t>(tv.numel));
    if (!values.empty()) std::memcpy(values.data(), tv.constant.data(), values.size() * 4);
    out.push_back({tv.shape, std::move(values)});
  }
  return out;
}

void XnnpackDelegate::set_quantizers(std::span<const uint8_t> on) {
  for (size_t k = 0; k < impl_->quantizers.size() && k < on.size(); ++k) impl_->quantizers[k].on = on[k] != 0;
}

Status Workspace::grow(uint64_t floats, const Reserve& reserve, const std::string& what) {
  if (floats <= buffer_.size()) return ok_status();
  ETSCOPE_TRY(reserve((floats - buffer_.size()) * 4, what));
  buffer_.resize(static_cast<size_t>(floats));
  return ok_status();
}

namespace {

// Workspace buffers placed by lifetime, as XNNPACK's runtime plans its memory: values whose
// buffers are in use at the same time get disjoint ranges, others may share one, so a layer
// writes into memory a recent layer used (still in cache) rather than into a range of its own
// of a workspace as large as all values together (resnet50's: 390 MB, each output a write to
// DRAM). On entry ws_offset holds provisional offsets, one range per buffer, values sharing a
// buffer (a copying Clamp, Convert or Reshape and its input) at the same offset; returns the
// workspace's size in floats, `sequential` (the provisional size) for graphs of more buffers than
// the placement's quadratic search is allowed.
// A buffer is in use from the event that first writes one of its values to the last event that
// reads one (events, not nodes: a logged output is read when its event ends), from before the
// first event for staged graph inputs and after the last for staged graph outputs.
uint64_t plan_workspace(DelegateState& m, uint64_t sequential) {
  const xnn::Graph& g = m.graph;
  const size_t nv = g.values.size(), ne = m.event_names.size();
  struct Buffer {
    int64_t first, last;
    uint64_t floats, offset = 0;
  };
  std::vector<Buffer> buffers;
  std::map<int64_t, size_t> of_offset;  // provisional offset -> buffer
  for (size_t v = 0; v < nv; ++v) {
    if (m.ws_offset[v] < 0) continue;
    auto [it, added] = of_offset.emplace(m.ws_offset[v], buffers.size());
    if (added) buffers.push_back({INT64_MAX, -1, 0});
    Buffer& b = buffers[it->second];
    b.floats = std::max(b.floats, (g.values[v].numel + 15) / 16 * 16);
    if ((g.values[v].flags & xnn::kFlagExternalInput) != 0) b.first = -1;
    if ((g.values[v].flags & xnn::kFlagExternalOutput) != 0) b.last = static_cast<int64_t>(ne);
  }
  constexpr size_t kMaxPlaced = 4096;
  if (buffers.size() > kMaxPlaced) return sequential;
  for (size_t e = 0; e < ne; ++e) {
    for (uint32_t i = m.event_first[e]; i < m.event_first[e + 1]; ++i) {
      const Node& n = g.nodes[i];
      for (const std::vector<int32_t>* list : {&n.inputs, &n.outputs}) {
        for (int32_t v : *list) {
          if (v < 0 || m.ws_offset[static_cast<size_t>(v)] < 0) continue;
          Buffer& b = buffers[of_offset.at(m.ws_offset[static_cast<size_t>(v)])];
          b.first = std::min(b.first, static_cast<int64_t>(e));
          b.last = std::max(b.last, static_cast<int64_t>(e));
        }
      }
    }
  }
  // Largest first, each at the lowest offset clear of every placed buffer in use at the same time.
  std::vector<size_t> order(buffers.size());
  for (size_t k = 0; k < order.size(); ++k) order[k] = k;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return buffers[a].floats > buffers[b].floats; });
  std::vector<size_t> placed;
  std::vector<std::pair<uint64_t, uint64_t>> taken;  // ranges of placed buffers alive with the current one
  uint64_t size = 0;
  for (size_t k : order) {
    Buffer& b = buffers[k];
    taken.clear();
    for (size_t p : placed) {
      const Buffer& o = buffers[p];
      if (o.first <= b.last && b.first <= o.last) taken.emplace_back(o.offset, o.offset + o.floats);
    }
    std::sort(taken.begin(), taken.end());
    uint64_t at = 0;
    for (const auto& [lo, hi] : taken) {
      if (at + b.floats <= lo) break;
      at = std::max(at, hi);
    }
    b.offset = at;
    size = std::max(size, at + b.floats);
    placed.push_back(k);
  }
  for (size_t v = 0; v < nv; ++v) {
    if (m.ws_offset[v] >= 0) m.ws_offset[v] = static_cast<int64_t>(buffers[of_offset.at(m.ws_offset[v])].offset);
  }
  return size;
}

}  // namespace

Result<std::unique_ptr<XnnpackDelegate>> XnnpackDelegate::load(const Program& program, const Delegate& delegate,
                                                               std::span<EValue* const> args, const Reserve& reserve,
                                                               const std::string& where, bool emulate_quantization,
                                                               const Parallel* parallel, std::shared_ptr<Workspace> workspace,
                                                               MatrixTiles tiles) {
  auto impl = std::make_unique<DelegateState>();
  impl->tiles = tiles == MatrixTiles::kOff || !matrix_tiles_available() ? MatrixTiles::kOff : tiles;
  impl->where = where;
  impl->workspace = workspace != nullptr ? std::move(workspace) : std::make_shared<Workspace>();
  impl->emulate = emulate_quantization;
  impl->parallel = parallel;
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
  std::vector<uint8_t> staged(nv, 0);  // f16, bf16 and int8 graph inputs and outputs: through float buffers
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
      const bool half = (v.type == ElementType::kF16 && t.dtype() == ScalarType::kHalf) ||
                        (v.type == ElementType::kBF16 && t.dtype() == ScalarType::kBFloat16);
      // Quantized tensors the program passes as they are (e.g. a quantized constant): int8 for
      // qint8, uint8 for quint8, with the value's per-tensor parameters.
      const bool q8 = v.quant.kind == xnn::Quantization::Kind::kPerTensor &&
                      ((v.type == ElementType::kQInt8 && t.dtype() == ScalarType::kChar) ||
                       (v.type == ElementType::kQUInt8 && t.dtype() == ScalarType::kByte));
      // int32 values (argmax indices) leave the graph as int32 or int64 tensors.
      const bool i32 = output && v.type == ElementType::kInt32 && (t.dtype() == ScalarType::kInt || t.dtype() == ScalarType::kLong);
      if (!f32 && !half && !q8 && !i32) {
        return Error(ErrorCode::kNotSupported, what + ": " + xnn::to_string(v.type) + " graph value for a " + scalar_type_name(t.dtype()) +
                                                   " tensor; etscope passes f32, f16, bf16 and per-tensor int8 tensors to XNNPACK graphs, and takes int32 indices from them, only so far");
      }
      if (half || q8 || i32) staged[static_cast<size_t>(vi)] = 1;
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
  impl->plan_quantizers();
  for (int32_t vi : g.outputs) {
    if (!written[static_cast<size_t>(vi)]) {
      return Error(ErrorCode::kCorrupt, where + ": XNNPACK graph output value id " + std::to_string(g.values[static_cast<size_t>(vi)].id) +
                                            " is never written");
    }
  }
  // Memory: float copies of constants (aligned, whatever their offset in the file) and one
  // buffer per internal value; all within the method's budget.
  // Constants that only layers holding their own integer form read need no float copy: the
  // filters of qd8 layers (packed by plan_qd8), the filters and biases of layers that run in
  // integers (plan_quantized reads the file's integers). An emulating delegate keeps the floats,
  // for the layers it computes on floats.
  std::vector<int> integer_reads(nv, 0);
  for (const Node& n : g.nodes) {
    if (!impl->qd8_layer(n)) continue;
    if (!impl->emulate) ++integer_reads[static_cast<size_t>(n.inputs[1])];
    const xnn::TensorValue& w = g.values[static_cast<size_t>(n.inputs[1])];
    // Packed integers (outputs and inputs padded to a tile) and per-output int32 / float terms.
    const auto b = checked::add(static_cast<uint64_t>(w.shape.at(0) + kQd8Tile) * static_cast<uint64_t>(w.shape.at(1) + 8),
                                (w.quant.scales.size() + static_cast<uint64_t>(w.shape.at(0) + w.shape.at(1) + kQd8Tile)) * 16);
    const auto sum = b ? checked::add(bytes, *b) : std::nullopt;
    if (!sum) return Error(ErrorCode::kCorrupt, where + ": XNNPACK delegate buffers: sizes overflow");
    bytes = *sum;
  }
  // Layers that run in integers keep their filters packed as bytes (int8_gemm: each output and
  // input padded to a tile and a group of 4, an int32 sum per output), as int16s (depthwise) or
  // as integer-valued doubles (or floats).
  for (const Node& n : g.nodes) {
    if (!impl->integer_layer(n) || n.kind == NodeKind::kAdd || n.kind == NodeKind::kGlobalAvgPool2d) continue;
    for (size_t k = 1; k < 3 && k < n.inputs.size() && !impl->emulate; ++k) {
      if (n.inputs[k] >= 0 && g.values[static_cast<size_t>(n.inputs[k])].is_constant) ++integer_reads[static_cast<size_t>(n.inputs[k])];
    }
    const xnn::TensorValue& w = g.values[static_cast<size_t>(n.inputs[1])];
    std::optional<uint64_t> b;
    if (impl->int8_gemm_layer(n)) {
      const uint64_t outputs = static_cast<uint64_t>(n.kind == NodeKind::kFullyConnected ? w.shape.at((n.flags & kFlagTransposeB) != 0 ? 1 : 0)
                                                                                        : w.shape.at(0));
      const uint64_t k = outputs > 0 ? w.numel / outputs : 0, groups = n.kind == NodeKind::kConv2d ? n.conv.groups : 1;
      const auto padded = checked::mul(outputs + kInt8Tile * groups, k + 4);
      b = padded ? checked::add(*padded, (outputs + kInt8Tile * groups) * 4) : std::nullopt;
    } else {
      b = checked::mul(w.numel, n.kind == NodeKind::kDepthwiseConv2d ? 2 : 8);
    }
    const auto sum = b ? checked::add(bytes, *b) : std::nullopt;
    if (!sum) return Error(ErrorCode::kCorrupt, where + ": XNNPACK delegate buffers: sizes overflow");
    bytes = *sum;
  }
  // Float layers keep their filter and bias packed for f32_gemm.
  for (const Node& n : g.nodes) {
    if (!impl->packed_f32_layer(n)) continue;
    for (size_t k = 1; k < 3 && !impl->emulate; ++k) {
      if (n.inputs[k] >= 0) ++integer_reads[static_cast<size_t>(n.inputs[k])];
    }
    const xnn::TensorValue& w = g.values[static_cast<size_t>(n.inputs[1])];
    const uint64_t outputs = static_cast<uint64_t>(n.kind == NodeKind::kFullyConnected     ? w.shape.at((n.flags & kFlagTransposeB) != 0 ? 1 : 0)
                                                   : n.kind == NodeKind::kDepthwiseConv2d ? w.shape.at(3)
                                                                                          : w.shape.at(0));
    const uint64_t groups = n.kind == NodeKind::kFullyConnected ? 1 : n.conv.groups;
    // A deconvolution's packings, one per group and output phase, hold its taps once in all.
    const uint64_t phases = n.kind == NodeKind::kConvTranspose2d ? uint64_t{n.conv.stride_h} * n.conv.stride_w : 1;
    const auto floats = checked::mul(outputs + kF32Panel * groups, (outputs > 0 ? w.numel / outputs : 0) + phases);
    // and a convolution reading its windows in place its row pointers (below 2^60: check_node)
    const uint64_t table = impl->conv_rows_size(n) * sizeof(const float*);
    const auto sum = floats && *floats < (uint64_t{1} << 60) ? checked::add(bytes, *floats * 4 + table) : std::nullopt;
    if (!sum) return Error(ErrorCode::kCorrupt, where + ": XNNPACK delegate buffers: sizes overflow");
    bytes = *sum;
  }
  auto needs_buffer = [&](size_t v) {
    const xnn::TensorValue& tv = g.values[v];
    if (integer_reads[v] > 0 && integer_reads[v] == impl->consumers[v] && (tv.flags & (xnn::kFlagExternalInput | xnn::kFlagExternalOutput)) == 0) return false;
    if ((tv.flags & (xnn::kFlagExternalInput | xnn::kFlagExternalOutput)) != 0) return staged[v] != 0;
    return tv.is_constant || written[v] != 0;
  };
  // Constants' floats are the delegate's; everything else that needs a buffer lives in the
  // workspace, each value at a multiple of 16 floats (64 bytes) from its start: one after the
  // other here, then (once the values that share a buffer are known) placed by their lifetimes
  // (plan_workspace).
  uint64_t ws_floats = 0;
  impl->ws_offset.assign(nv, -1);
  for (size_t v = 0; v < nv; ++v) {
    if (!needs_buffer(v)) continue;
    if (!g.values[v].is_constant) {
      impl->ws_offset[v] = static_cast<int64_t>(ws_floats);
      const auto end = checked::add(ws_floats, g.values[v].numel);
      if (!end || *end >= (uint64_t{1} << 60)) return Error(ErrorCode::kCorrupt, where + ": XNNPACK delegate buffers: sizes overflow");
      ws_floats = (*end + 15) / 16 * 16;
      continue;
    }
    const auto b = checked::mul(g.values[v].numel, 4);
    const auto sum = b ? checked::add(bytes, *b) : std::nullopt;
    if (!sum) return Error(ErrorCode::kCorrupt, where + ": XNNPACK delegate buffers: sizes overflow");
    bytes = *sum;
  }
  const auto total = checked::add(bytes, uint64_t{scratch.floats} * 4 + uint64_t{scratch.doubles} * 8 + scratch.gemm + scratch.bytes);
  if (!total) return Error(ErrorCode::kCorrupt, where + ": XNNPACK delegate buffers: sizes overflow");
  bytes = *total;
  ETSCOPE_TRY(reserve(bytes, where + ": XNNPACK delegate buffers"));
  for (size_t v = 0; v < nv; ++v) {
    const xnn::TensorValue& tv = g.values[v];
    if (!needs_buffer(v) || !tv.is_constant) continue;
    impl->owned[v].resize(static_cast<size_t>(tv.numel));
    if (tv.is_constant && tv.numel > 0) {
      ETSCOPE_TRY(dequantize_constant(tv, impl->owned[v].data(), where + ": XNNPACK value id " + std::to_string(tv.id)));
    }
    impl->data[v] = impl->owned[v].data();
  }
  impl->scratch.resize(scratch.floats);
  impl->qscratch.resize(scratch.doubles);
  impl->gemm_workspace.resize(scratch.gemm);
  impl->int8_scratch.resize(scratch.bytes);
  impl->f32_of_node.assign(g.nodes.size(), -1);
  impl->conv_rows.resize(g.nodes.size());
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    if (impl->packed_f32_layer(g.nodes[i])) ETSCOPE_TRY(impl->plan_f32(i));
    impl->conv_rows[i].at.resize(impl->conv_rows_size(g.nodes[i]));
  }
  impl->quantized_of_node.assign(g.nodes.size(), -1);
  impl->copy_clamp.assign(g.nodes.size(), 0);
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    if (impl->integer_layer(g.nodes[i])) ETSCOPE_TRY(impl->plan_quantized(i));
  }
  impl->dynamic_rows.resize(nv);
  impl->qd8_only.assign(nv, 0);
  std::vector<int> qd8_input_reads(nv, 0);
  for (const Node& n : g.nodes) {
    if (impl->qd8_layer(n)) ++qd8_input_reads[static_cast<size_t>(n.inputs[0])];
  }
  for (size_t v = 0; v < nv; ++v) {
    impl->qd8_only[v] = !impl->emulate && qd8_input_reads[v] > 0 && qd8_input_reads[v] == impl->consumers[v] && (g.values[v].flags & xnn::kFlagExternalOutput) == 0;
  }
  impl->qd8_of_node.assign(g.nodes.size(), -1);
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    if (impl->qd8_layer(g.nodes[i])) ETSCOPE_TRY(impl->plan_qd8(i));
  }
  const size_t log_bytes = impl->plan_logging(args);
  ETSCOPE_TRY(reserve(log_bytes, where + ": XNNPACK delegate logging scratch"));
  impl->log_scratch.resize(log_bytes / 4);
  // A Clamp that only copies (copy_clamp) shares its input's buffer instead, unless either is a
  // graph argument (the caller's buffer) or a constant, the Clamp is not the input's only reader,
  // or the delegate emulates (the producer may compute off the grid). The values are the same
  // either way: a logged producer logs them, and a hook that overwrites them overwrites what the
  // Clamp's readers read, as it would with a copy made after it. So does a Convert of a quantized
  // value to f32 with no output range: quantized values are held as the floats they stand for,
  // so it copies too; and a Reshape (XNNPACK's runs in place: a pixel shuffle's two reshapes of
  // a 51 MB tensor cost etscope 15 ms as copies).
  auto in_place_reshape = [&](const Node& n) {
    if (n.kind != NodeKind::kReshape || n.inputs.size() != 1 || n.outputs.size() != 1 || n.inputs[0] < 0 || !unbounded_range(n)) return false;
    const xnn::TensorValue& in = g.values[static_cast<size_t>(n.inputs[0])];
    const xnn::TensorValue& out = g.values[static_cast<size_t>(n.outputs[0])];
    return in.type == out.type && in.quant.kind == out.quant.kind && in.quant.scale == out.quant.scale && in.quant.zero_point == out.quant.zero_point &&
           in.numel == out.numel;
  };
  auto dequantizing_convert = [&](const Node& n) {
    const xnn::TensorValue& in = g.values[static_cast<size_t>(n.inputs[0])];
    return n.kind == NodeKind::kConvert && n.inputs.size() == 1 && n.outputs.size() == 1 &&
           (in.type == ElementType::kQInt8 || in.type == ElementType::kQUInt8) && in.quant.kind == xnn::Quantization::Kind::kPerTensor &&
           g.values[static_cast<size_t>(n.outputs[0])].type == ElementType::kF32 && unbounded_range(n);
  };
  // And an elementwise node on floats (a HardSwish, an Add) computes in place, into the buffer of
  // an operand of its output's dimensions that it alone reads, as XNNPACK's runtime lets its
  // elementwise operators do: one buffer read and written instead of two (every such kernel reads
  // an element before it writes that element's result). Not in a graph of dynamic shapes, and not
  // when the operand comes from the same event (an intermediate output logged when the event ends
  // must still hold its values).
  std::vector<uint32_t> event_of(g.nodes.size(), 0);
  for (size_t e = 0; e + 1 < impl->event_first.size(); ++e) {
    for (uint32_t i = impl->event_first[e]; i < impl->event_first[e + 1]; ++i) event_of[i] = static_cast<uint32_t>(e);
  }
  std::vector<int64_t> writer(nv, -1);
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    for (int32_t o : g.nodes[i].outputs) writer[static_cast<size_t>(o)] = static_cast<int64_t>(i);
  }
  constexpr uint32_t kExternal = xnn::kFlagExternalInput | xnn::kFlagExternalOutput;
  auto can_share = [&](size_t in, size_t out) {
    return (g.values[out].flags & kExternal) == 0 && (g.values[in].flags & kExternal) == 0 && !g.values[in].is_constant && impl->consumers[in] == 1 &&
           impl->ws_offset[in] >= 0;
  };
  auto in_place_operand = [&](size_t i) -> int32_t {
    const Node& n = g.nodes[i];
    const bool elementwise = (has_trait(n.kind, kUnaryElementwise) && n.inputs.size() == 1) || (has_trait(n.kind, kBinaryElementwise) && n.inputs.size() == 2);
    if (impl->dynamic || !elementwise || n.outputs.size() != 1 || impl->quantized_of_node[i] >= 0 || impl->qd8_of_node[i] >= 0) return -1;
    const xnn::TensorValue& out = g.values[static_cast<size_t>(n.outputs[0])];
    for (int32_t v : n.inputs) {
      if (v < 0) continue;
      const xnn::TensorValue& in = g.values[static_cast<size_t>(v)];
      const int64_t w = writer[static_cast<size_t>(v)];
      if (in.type == out.type && in.shape == out.shape && w >= 0 && event_of[static_cast<size_t>(w)] != event_of[i] &&
          can_share(static_cast<size_t>(v), static_cast<size_t>(n.outputs[0]))) {
        return v;
      }
    }
    return -1;
  };
  for (size_t i = 0; i < g.nodes.size() && !impl->emulate; ++i) {
    int32_t operand = -1;
    if (impl->copy_clamp[i] || dequantizing_convert(g.nodes[i]) || in_place_reshape(g.nodes[i])) {
      operand = g.nodes[i].inputs[0];
    } else {
      operand = in_place_operand(i);
    }
    if (operand < 0) continue;
    const size_t in = static_cast<size_t>(operand), out = static_cast<size_t>(g.nodes[i].outputs[0]);
    if (can_share(in, out)) impl->ws_offset[out] = impl->ws_offset[in];
  }
  ETSCOPE_TRY(impl->workspace->grow(plan_workspace(*impl, ws_floats), reserve, where + ": XNNPACK delegate workspace"));
  impl->plan_raw_values();
  impl->plan_lookup_tables();
  impl->plan_fused_clamps();
  return std::unique_ptr<XnnpackDelegate>(new XnnpackDelegate(std::move(impl)));
}

// ---------------------------------------------------------------------------------------------
// [execute]

void DelegateState::run_node(size_t i) {
  const Node& n = graph.nodes[i];
  const NodeOps& ops = node_ops(n.kind);
  // Emulating: a node whose quantizer is off computes on floats and leaves its outputs off the
  // grid; so does a node reading a value off the grid (which its integer kernel could not take).
  bool exact = true, round = true;
  if (emulate) {
    const int32_t q = quantizer_of_node[i];
    round = q < 0 || quantizers[static_cast<size_t>(q)].on;
    bool inputs_off = false;
    for (int32_t v : n.inputs) inputs_off |= v >= 0 && off_grid[static_cast<size_t>(v)] != 0;
    exact = round && !inputs_off;
    const bool passes = quantizer_passes_on(n);
    for (int32_t o : n.outputs) off_grid[static_cast<size_t>(o)] = !round && (inputs_off || !passes);
  }
  if (exact && qd8_of_node[i] >= 0) {
    run_fully_connected_qd8(*this, n);  // an f32 output: nothing to round
    return;
  }
  if (!emulate && copy_clamp[i]) {
    if (int8_t* r = raw_output(n)) {  // then its input holds raw integers too (plan_raw_values)
      if (r != raw_input(n, 0)) std::memcpy(r, raw_input(n, 0), static_cast<size_t>(out_shape(n).numel()));
      return;
    }
    if (output(n) != input(n, 0)) std::memcpy(output(n), input(n, 0), static_cast<size_t>(out_shape(n).numel()) * 4);
    return;
  }
  if (!emulate && (run_raw_move(i) || run_raw_binary(i))) return;
  if (exact && quantized_of_node[i] >= 0) {
    ops.run_integer(*this, n);  // every kind that plans an integer layer has an integer runner
    return;
  }
  // A layer whose quantizer is off computes from its float export's filter, when it has one.
  const int32_t lq = emulate ? quantizer_of_layer[i] : -1;
  Quantizer* fq = lq >= 0 && !quantizers[static_cast<size_t>(lq)].on && !quantizers[static_cast<size_t>(lq)].float_filter.empty()
                      ? &quantizers[static_cast<size_t>(lq)]
                      : nullptr;
  float* const kept = fq != nullptr ? data[static_cast<size_t>(n.inputs[1])] : nullptr;
  if (fq != nullptr) data[static_cast<size_t>(n.inputs[1])] = fq->float_filter.data();
  ops.run(*this, n);  // every kind whose check passes has a float runner
  if (fq != nullptr) data[static_cast<size_t>(n.inputs[1])] = kept;
  if (round) quantize_outputs(n);
}

void DelegateState::plan_fused_clamps() {
  fused_clamps.clear();
  fused_clamp_of_event.assign(event_names.size(), -1);
  if (emulate) return;
  auto is_f32 = [&](int32_t v) { return v >= 0 && value(v).type == ElementType::kF32; };
  for (size_t e = 0; e < event_names.size(); ++e) {
    const uint32_t i = event_first[e];
    if (event_first[e + 1] != i + 2 || lookup_of_event[e] >= 0) continue;
    const Node& p = graph.nodes[i];
    const Node& c = graph.nodes[i + 1];
    if (c.kind != NodeKind::kClamp || !has_trait(p.kind, kFusesClamp) || p.outputs.size() != 1 || c.inputs.size() != 1 || c.outputs.size() != 1 ||
        c.inputs[0] != p.outputs[0] || !is_f32(p.outputs[0]) || !is_f32(c.outputs[0]) || quantized_of_node[i] >= 0 || qd8_of_node[i] >= 0 ||
        !std::all_of(p.inputs.begin(), p.inputs.end(), [&](int32_t v) { return v < 0 || is_f32(v); })) {
      continue;
    }
    const float lo = std::max(p.output_min, c.output_min), hi = std::min(p.output_max, c.output_max);
    if (!(lo <= hi)) continue;
    fused_clamp_of_event[e] = static_cast<int32_t>(fused_clamps.size());
    fused_clamps.push_back({i, i + 1, lo, hi});
  }
}

bool DelegateState::run_fused_clamp(const FusedClamp& f) {
  Node& p = graph.nodes[f.producer];
  const Node& c = graph.nodes[f.clamp];
  const size_t pout = static_cast<size_t>(p.outputs[0]), cout = static_cast<size_t>(c.outputs[0]);
  float* dst = data[cout];
  const uint64_t bytes = static_cast<uint64_t>(shapes[cout].numel()) * 4;
  const auto at = reinterpret_cast<uintptr_t>(dst);
  for (int32_t v : p.inputs) {
    if (v < 0) continue;
    const auto from = reinterpret_cast<uintptr_t>(data[static_cast<size_t>(v)]);
    const uint64_t len = static_cast<uint64_t>(shapes[static_cast<size_t>(v)].numel()) * 4;
    if (from < at + bytes && at < from + len) return false;
  }
  float* const kept = data[pout];
  const float lo = p.output_min, hi = p.output_max;
  data[pout] = dst;
  p.output_min = f.lo;
  p.output_max = f.hi;
  run_node(f.producer);
  p.output_min = lo;
  p.output_max = hi;
  data[pout] = kept;
  return true;
}

Status DelegateState::reshape(std::span<EValue* const> args) {
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
  if (need.floats > scratch.size() || need.doubles > qscratch.size() || need.gemm > gemm_workspace.size() || need.bytes > int8_scratch.size()) {
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

Status XnnpackDelegate::execute(std::span<EValue* const> args, EventTracer* tracer, const ValueHook* hook) {
  DelegateState& m = *impl_;
  const xnn::Graph& g = m.graph;
  const FlushDenormals flush;  // as XNNPACK runs its operators (float_env.h)
  m.bind_workspace();
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
      } else if (v.type == ElementType::kBF16) {
        float* staged = m.data[static_cast<size_t>(vi)];
        if (list == &g.inputs) {
          const uint16_t* h = t.data_as<uint16_t>();
          for (uint64_t k = 0; k < count; ++k) staged[k] = kernels::bfloat16_to_float(h[k]);
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
  if (m.emulate) std::fill(m.off_grid.begin(), m.off_grid.end(), uint8_t{0});
  m.raw_active = !m.emulate && (tracer == nullptr || tracer->debug_level() < DebugLevel::kIntermediateOutputs) && (hook == nullptr || !*hook);
  const bool traced = tracer != nullptr && tracer->profiling_level() == ProfilingLevel::kAllEvents;
  for (size_t e = 0; e < m.event_names.size(); ++e) {
    const EventHandle h = traced ? tracer->start_delegate_event(m.event_names[e].c_str()) : kNoEvent;
    const int32_t lookup = m.raw_active ? m.lookup_of_event[e] : -1;
    const int32_t fused = m.raw_active ? m.fused_clamp_of_event[e] : -1;
    if (lookup >= 0 && m.lookup_chains[static_cast<size_t>(lookup)].ready) {
      m.run_lookup(m.lookup_chains[static_cast<size_t>(lookup)]);
    } else if (fused >= 0 && m.run_fused_clamp(m.fused_clamps[static_cast<size_t>(fused)])) {
      // the producer wrote the Clamp's output
    } else {
      for (uint32_t i = m.event_first[e]; i < m.event_first[e + 1]; ++i) m.run_node(i);
    }
    if (h != kNoEvent) tracer->end_profiling(h);
    if (tracer != nullptr && tracer->debug_level() >= DebugLevel::kIntermediateOutputs) {
      for (uint32_t i = m.event_first[e]; i < m.event_first[e + 1]; ++i) {
        if (m.logged_of_node[i] < 0) continue;
        DelegateState::Logged& l = m.logged[static_cast<size_t>(m.logged_of_node[i])];
        if (m.log_output(l)) tracer->log_delegate_output(l.value, l.handle);
      }
    }
    if (hook != nullptr && *hook) {
      // The logged outputs replaced by the hook's values: the next events compute from them.
      for (uint32_t i = m.event_first[e]; i < m.event_first[e + 1]; ++i) {
        if (m.logged_of_node[i] < 0) continue;
        const DelegateState::Logged& l = m.logged[static_cast<size_t>(m.logged_of_node[i])];
        const Shape logical = m.logical_shape(static_cast<size_t>(g.nodes[l.node].outputs[0]));
        // Only hooked (experimental) executions allocate here.
        m.force_scratch.resize(static_cast<size_t>(logical.numel()));
        if ((*hook)(l.handle, {logical.d, static_cast<size_t>(logical.rank)}, m.force_scratch)) m.overwrite_output(l, m.force_scratch);
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
    } else if (v.type == ElementType::kBF16) {
      // Already on the bf16 grid (rounded after the node that wrote them): exact.
      uint16_t* h = args[v.external_id]->tensor->data_as<uint16_t>();
      for (uint64_t k = 0; k < count; ++k) h[k] = kernels::float_to_bfloat16(f[k]);
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
