// Quantized values in XNNPACK graphs. Sections: [constants] [rounding to a value's grid]
// [integer layers: planning] [integer layers: running]
//
// Quantized values are held as the floats they stand for. Most nodes compute on those floats and
// round their outputs to the output's grid (quantize_outputs). Convolutions, fully connected
// layers, Add and the mean with int8 activations run in integers instead, because XNNPACK's
// results for them are reproduced bit for bit (and tested so against ExecuTorch) only with its
// own arithmetic: exact integer sums, requantization in float with round-to-nearest-even, Add's
// fixed-point multipliers. That arithmetic is XNNPACK's, not the ATen kernels' (whose quantized
// ops dequantize, compute in float and quantize), so it stays here.
#include <cmath>
#include <cstring>
#include <type_traits>
#if defined(__SSE2__)
#include <immintrin.h>
#endif

#include "kernels/util/gemm.h"
#include "kernels/util/half.h"
#include "kernels/util/lanes.h"
#include "kernels/util/permute_util.h"
#include "xnnpack/elementwise_ops.h"
#include "xnnpack/nhwc_windows.h"
#include "xnnpack/node_table.h"

namespace etscope::runtime::xnnpack {
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


// Rounds `count` floats in place to the grid of a per-tensor quantized type and back (XNNPACK
// rounds to nearest even), `scaled` giving x / scale (or x times its inverse): quantize_raw's
// arithmetic as one branch-free loop the compiler vectorizes.
template <typename Scaled>
void round_to_grid(float* __restrict out, int64_t count, Scaled scaled, float scale, int32_t zero_point, float qmin, float qmax) {
  const float zp = static_cast<float>(zero_point);
  for (int64_t i = 0; i < count; ++i) {
    const float sv = scaled(out[i]);
    float r = std::min(std::max(std::nearbyint(sv) + zp, qmin), qmax);
    r = sv != sv ? qmax : r;  // NaN: the top of the range, as quantize_raw
    out[i] = (r - zp) * scale;
  }
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// [constants]

float constant_scale(const xnn::TensorValue& v, int64_t i) {
  using Q = xnn::Quantization::Kind;
  if (v.quant.kind == Q::kPerTensor) return v.quant.scale;
  const int64_t last = v.shape.empty() ? 1 : v.shape.back();
  if (v.quant.kind == Q::kPerChannel) {
    // Index of element i's channel along the quantization axis.
    int64_t inner = 1;
    for (size_t d = v.quant.axis + 1; d < v.shape.size(); ++d) inner *= v.shape[d];
    const int64_t channels = v.shape.empty() ? 1 : v.shape[std::min<size_t>(v.quant.axis, v.shape.size() - 1)];
    return v.quant.scales[static_cast<size_t>((i / inner) % channels)];
  }
  if (v.quant.kind == Q::kPerBlock) {
    const int64_t row = i / last, col = i % last;
    return v.quant.scales[static_cast<size_t>(row * (last / v.quant.block_size) + col / v.quant.block_size)];
  }
  return 1.0f;
}

Status dequantize_constant(const xnn::TensorValue& v, float* out, const std::string& what) {
  using Q = xnn::Quantization::Kind;
  const uint8_t* b = v.constant.data();
  const int64_t n = static_cast<int64_t>(v.numel);
  const int64_t last = v.shape.empty() ? 1 : v.shape.back();
  auto scale_of = [&](int64_t i) { return constant_scale(v, i); };
  const bool needs_params = v.type != ElementType::kF32 && v.type != ElementType::kF16 && v.type != ElementType::kBF16;
  if (needs_params && v.quant.kind != Q::kPerTensor && v.quant.kind != Q::kPerChannel && v.quant.kind != Q::kPerBlock) {
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
    case ElementType::kBF16:
      for (int64_t i = 0; i < n; ++i) {
        uint16_t h;
        std::memcpy(&h, b + 2 * i, 2);
        out[i] = kernels::bfloat16_to_float(h);
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

// ---------------------------------------------------------------------------------------------
// [rounding to a value's grid]

void DelegateState::quantize_outputs(const Node& n) {
  for (int32_t o : n.outputs) {
    const xnn::TensorValue& v = value(o);
    float* out = data[static_cast<size_t>(o)];
    const int64_t count = shapes[static_cast<size_t>(o)].numel();
    if (v.type == ElementType::kQInt8 || v.type == ElementType::kQUInt8) {
      const float qmin = v.type == ElementType::kQInt8 ? -128.0f : 0.0f, qmax = v.type == ElementType::kQInt8 ? 127.0f : 255.0f;
      if (n.kind == NodeKind::kConvert) {
        // XNNPACK converts floats by multiplying with the scale's inverse (not dividing).
        const float inv = 1.0f / v.quant.scale;
        round_to_grid(out, count, [inv](float x) { return x * inv; }, v.quant.scale, v.quant.zero_point, qmin, qmax);
        continue;
      }
      const float scale = v.quant.scale;
      round_to_grid(out, count, [scale](float x) { return x / scale; }, scale, v.quant.zero_point, qmin, qmax);
    } else if (v.type == ElementType::kF16) {
      for (int64_t i = 0; i < count; ++i) out[i] = kernels::half_to_float(kernels::float_to_half(out[i]));
    } else if (v.type == ElementType::kBF16) {
      // As XNNPACK's bf16 operators: computed in fp32, rounded to nearest even.
      for (int64_t i = 0; i < count; ++i) out[i] = kernels::bfloat16_to_float(kernels::float_to_bfloat16(out[i]));
    } else if (v.type == ElementType::kQDInt8) {
      // Rows are what the last `non_batch_dims` dimensions span.
      const Shape& s = shapes[static_cast<size_t>(o)];
      int64_t row = 1;
      for (int d = s.rank - static_cast<int>(v.quant.non_batch_dims); d < s.rank; ++d) row *= s.d[d];
      if (row <= 0) continue;
      // Values only qd8 layers read need no floats.
      const bool floats = !qd8_only[static_cast<size_t>(o)];
      quantize_rows_qd8(out, floats ? out : nullptr, count / row, row, &dynamic_rows[static_cast<size_t>(o)]);
    }
  }
}

namespace {

bool quantized_type(ElementType t) { return t == ElementType::kQInt8 || t == ElementType::kQUInt8 || t == ElementType::kQDInt8; }

}  // namespace

bool quantizer_passes_on(const Node& n) {
  return has_trait(n.kind, kMovesElements) || n.kind == NodeKind::kClamp || n.kind == NodeKind::kMaxPool2d || n.kind == NodeKind::kConstantPad;
}

void DelegateState::plan_quantizers() {
  quantizers.clear();
  quantizer_of_node.assign(graph.nodes.size(), -1);
  if (!emulate) return;
  off_grid.assign(graph.values.size(), 0);
  std::vector<int32_t> writer(graph.values.size(), -1);
  std::vector<std::vector<uint32_t>> reading(graph.values.size());
  uint32_t e = 0;
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    while (e + 1 < event_first.size() - 1 && event_first[e + 1] <= i) ++e;
    const Node& n = graph.nodes[i];
    for (int32_t v : n.inputs) {
      if (v >= 0) reading[static_cast<size_t>(v)].push_back(static_cast<uint32_t>(i));
    }
    for (int32_t o : n.outputs) writer[static_cast<size_t>(o)] = static_cast<int32_t>(i);
    if (!quantized_type(value(n.outputs[0]).type)) continue;
    if (quantizer_passes_on(n)) {
      const int32_t w = n.inputs[0] >= 0 ? writer[static_cast<size_t>(n.inputs[0])] : -1;
      quantizer_of_node[i] = w >= 0 ? quantizer_of_node[static_cast<size_t>(w)] : -1;
      continue;
    }
    quantizer_of_node[i] = static_cast<int32_t>(quantizers.size());
    Quantizer q;
    q.node = static_cast<uint32_t>(i);
    q.event = e;
    q.from_float = n.kind == NodeKind::kConvert && n.inputs[0] >= 0 && !quantized_type(value(n.inputs[0]).type);
    if (filter_of(n) >= 0) q.layer = static_cast<int32_t>(i);
    quantizers.push_back(std::move(q));
  }
  // The layers reading each quantizer's values: through the nodes that pass them on, up to the
  // first node that computes from them on the quantized grid (a dequantizing Convert is a float
  // reader, not a layer).
  for (Quantizer& q : quantizers) {
    std::vector<int32_t> pending(graph.nodes[q.node].outputs.begin(), graph.nodes[q.node].outputs.end());
    std::vector<uint8_t> seen(graph.nodes.size(), 0);
    while (!pending.empty()) {
      const int32_t v = pending.back();
      pending.pop_back();
      for (uint32_t j : reading[static_cast<size_t>(v)]) {
        if (seen[j]) continue;
        seen[j] = 1;
        const Node& r = graph.nodes[j];
        if (r.kind == NodeKind::kConvert && !quantized_type(value(r.outputs[0]).type)) continue;  // a dequantize
        if (quantizer_passes_on(r) && quantized_type(value(r.outputs[0]).type)) {
          pending.insert(pending.end(), r.outputs.begin(), r.outputs.end());
          continue;
        }
        q.readers.push_back(j);
      }
    }
    // A dynamic quantization's layer is the one layer it feeds.
    if (q.layer < 0 && value(graph.nodes[q.node].outputs[0]).type == ElementType::kQDInt8 && q.readers.size() == 1 &&
        filter_of(graph.nodes[q.readers[0]]) >= 0) {
      q.layer = static_cast<int32_t>(q.readers[0]);
    }
  }
  quantizer_of_layer.assign(graph.nodes.size(), -1);
  for (size_t k = 0; k < quantizers.size(); ++k) {
    if (quantizers[k].layer >= 0) quantizer_of_layer[static_cast<size_t>(quantizers[k].layer)] = static_cast<int32_t>(k);
  }
}

int32_t DelegateState::filter_of(const Node& n) const {
  const bool weighted = n.kind == NodeKind::kConv2d || n.kind == NodeKind::kDepthwiseConv2d || n.kind == NodeKind::kConvTranspose2d ||
                        n.kind == NodeKind::kFullyConnected;
  if (!weighted || n.inputs.size() < 2 || n.inputs[1] < 0) return -1;
  const xnn::TensorValue& w = value(n.inputs[1]);
  const bool quantized = w.type != ElementType::kF32 && w.type != ElementType::kF16 && w.type != ElementType::kBF16;
  return w.is_constant && quantized ? n.inputs[1] : -1;
}

Status DelegateState::set_float_filter(size_t k, std::span<const float> values) {
  Quantizer& q = quantizers[k];
  if (q.layer < 0) return Error(ErrorCode::kInvalidArgument, where + ": quantizer " + std::to_string(k) + " has no quantized filter");
  const size_t w = static_cast<size_t>(graph.nodes[static_cast<size_t>(q.layer)].inputs[1]);
  const xnn::TensorValue& v = graph.values[w];
  if (values.size() != v.numel) {
    return Error(ErrorCode::kInvalidArgument, node_where(static_cast<size_t>(q.layer)) + ": a float filter of " + std::to_string(values.size()) +
                                                  " values for " + std::to_string(v.numel));
  }
  // The float filter must be the one the int8 filter was rounded from: every value within half
  // a quantization step (plus float slack) of what the integers stand for.
  const float* deq = data[w];
  for (size_t i = 0; i < values.size(); ++i) {
    const double half = 0.5 * std::fabs(static_cast<double>(constant_scale(v, static_cast<int64_t>(i))));
    if (!(std::fabs(static_cast<double>(values[i]) - deq[i]) <= half * 1.001 + 1e-7)) {
      return Error(ErrorCode::kInvalidArgument, node_where(static_cast<size_t>(q.layer)) + ": filter value " + std::to_string(i) + " (" +
                                                    std::to_string(values[i]) + ") does not round to the int8 filter's " + std::to_string(deq[i]));
    }
  }
  q.float_filter.assign(values.begin(), values.end());
  return ok_status();
}

// ---------------------------------------------------------------------------------------------
// [integer layers: planning]

bool DelegateState::integer_layer(const Node& n) const {
  if (n.kind == NodeKind::kGlobalAvgPool2d) {
    if (n.inputs.size() != 1 || n.outputs.size() != 1) return false;
    const xnn::TensorValue& a = value(n.inputs[0]);
    const xnn::TensorValue& o = value(n.outputs[0]);
    return per_tensor_int8(a) && per_tensor_int8(o) && a.type == o.type;
  }
  if (n.kind == NodeKind::kAdd) {
    if (n.inputs.size() != 2 || n.outputs.size() != 1) return false;
    const xnn::TensorValue& a = value(n.inputs[0]);
    const xnn::TensorValue& b = value(n.inputs[1]);
    const xnn::TensorValue& o = value(n.outputs[0]);
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
  const xnn::TensorValue& in = value(n.inputs[0]);
  const xnn::TensorValue& out = value(n.outputs[0]);
  const xnn::TensorValue& w = value(n.inputs[1]);
  if (!per_tensor_int8(in) || !per_tensor_int8(out) || in.type != out.type || !w.is_constant) return false;
  using Q = xnn::Quantization::Kind;
  const bool weights_ok = (w.type == ElementType::kQInt8 && w.quant.kind == Q::kPerTensor) ||
                          (w.type == ElementType::kQCInt8 && w.quant.kind == Q::kPerChannel && w.quant.axis == output_channel_axis(n));
  if (!weights_ok) return false;
  if (n.inputs[2] >= 0) {
    const xnn::TensorValue& b = value(n.inputs[2]);
    const bool bias_ok = b.is_constant && ((b.type == ElementType::kQInt32 && b.quant.kind == Q::kPerTensor) ||
                                           (b.type == ElementType::kQCInt32 && b.quant.kind == Q::kPerChannel));
    if (!bias_ok) return false;
  }
  return true;
}

bool DelegateState::int8_gemm_layer(const Node& n) const {
  if (!integer_layer(n) || (n.kind != NodeKind::kConv2d && n.kind != NodeKind::kFullyConnected)) return false;
  const xnn::TensorValue& w = value(n.inputs[1]);
  if (w.quant.kind == xnn::Quantization::Kind::kPerTensor && w.quant.zero_point != 0) return false;
  if (w.type != ElementType::kQInt8 && w.type != ElementType::kQCInt8) return false;
  const int64_t k = n.kind == NodeKind::kConv2d ? int64_t{n.conv.kernel_h} * n.conv.kernel_w * n.conv.group_in
                                                : w.shape.at((n.flags & kFlagTransposeB) != 0 ? 0 : 1);
  return k <= kInt8MaxInputs;
}

// Integer filter and bias values and per-channel requantization scales of node i (checked by
// check_node and integer_layer: constants that hold their whole tensor, one scale per channel).
Status DelegateState::plan_quantized(size_t i) {
  const Node& n = graph.nodes[i];
  const xnn::TensorValue& in = value(n.inputs[0]);
  const xnn::TensorValue& out = value(n.outputs[0]);
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
    const xnn::TensorValue& b = value(n.inputs[1]);
    q.a_scale = in.quant.scale;
    q.b_scale = b.quant.scale;
    q.b_zero = b.quant.zero_point;
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
      const xnn::TensorValue& cv = value(c->outputs[0]);
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
    // Clamps of the chain on the last one's grid leave the values as they are: they only copy.
    for (size_t j = i; const Node* c = sole_clamp_consumer(j);) {
      const xnn::TensorValue& cv = value(c->outputs[0]);
      if (!per_tensor_int8(cv) || cv.type != out.type) break;
      j = static_cast<size_t>(c - graph.nodes.data());
      copy_clamp[j] = cv.quant.scale == last->quant.scale && cv.quant.zero_point == last->quant.zero_point;
    }
  }
  const xnn::TensorValue& w = value(n.inputs[1]);
  const size_t axis = output_channel_axis(n);
  const size_t channels = static_cast<size_t>(w.shape.at(axis));
  const int32_t wzero = w.quant.kind == xnn::Quantization::Kind::kPerTensor ? w.quant.zero_point : 0;
  auto filter = [&](uint64_t k) {
    const int32_t raw = w.type == ElementType::kQUInt8 ? static_cast<int32_t>(w.constant[k]) : static_cast<int32_t>(static_cast<int8_t>(w.constant[k]));
    return raw - wzero;
  };
  q.scale.resize(channels);
  q.bias.assign(channels, 0.0);
  for (size_t c = 0; c < channels; ++c) {
    const float ws = w.quant.kind == xnn::Quantization::Kind::kPerChannel ? w.quant.scales.at(c) : w.quant.scale;
    q.scale[c] = q.in_scale * ws / q.out_scale;
  }
  if (n.inputs[2] >= 0) {
    const xnn::TensorValue& b = value(n.inputs[2]);
    if (b.numel != channels) return bad(i, "bias size differs from the output channels");
    for (size_t c = 0; c < channels; ++c) {
      int32_t v;
      std::memcpy(&v, b.constant.data() + 4 * c, 4);
      q.bias[c] = static_cast<double>(v);
    }
  }
  q.zu = q.in_zero + (in.type == ElementType::kQUInt8 ? 0 : 128);
  if (int8_gemm_layer(n)) {
    if (n.kind == NodeKind::kFullyConnected) {
      const bool t = (n.flags & kFlagTransposeB) != 0;
      const int64_t k = static_cast<int64_t>(w.numel / channels), nout = static_cast<int64_t>(channels);
      q.packed.resize(1);
      pack_int8(q.packed[0], nout, k, [&](int64_t o, int64_t j) { return filter(static_cast<uint64_t>(t ? j * nout + o : o * k + j)); });
    } else {
      const xnn::ConvParams& c = n.conv;
      const int64_t og = c.group_out, cg = c.group_in, kk = int64_t{c.kernel_h} * c.kernel_w * cg;
      // A stem's taps padded to 4 channels (int8_conv_channels): zeros on the padding.
      const int64_t cg4 = int8_conv_channels(c), kk4 = kk / cg * cg4;
      q.packed.resize(c.groups);
      for (uint32_t g = 0; g < c.groups; ++g) {
        pack_int8(q.packed[g], og, kk4, [&](int64_t o, int64_t j) {
          const int64_t ch = j % cg4;
          return ch < cg ? filter(static_cast<uint64_t>((g * og + o) * kk + j / cg4 * cg + ch)) : 0;
        });
      }
    }
    // What each output's sum gets added in int32: the bias less zu times the filter's sum.
    q.sum_offset.resize(channels);
    const int64_t og = static_cast<int64_t>(channels / q.packed.size());
    for (size_t c = 0; c < channels; ++c) {
      const uint32_t wsum = static_cast<uint32_t>(q.packed[c / static_cast<size_t>(og)].wsum[c % static_cast<size_t>(og)]);
      q.sum_offset[c] = static_cast<int32_t>(static_cast<uint32_t>(static_cast<int32_t>(q.bias[c])) - static_cast<uint32_t>(q.zu) * wsum);
    }
    quantized_of_node[i] = static_cast<int32_t>(quantized.size());
    quantized.push_back(std::move(q));
    return ok_status();
  }
  if (n.kind == NodeKind::kDepthwiseConv2d) {
    // Filter integers of int8 (or uint8 less the zero point) fit int16; the bias stays int32.
    q.dw_filter.resize(static_cast<size_t>(w.numel));
    q.dw_narrow = true;
    for (uint64_t k = 0; k < w.numel; ++k) {
      q.dw_filter[k] = static_cast<int16_t>(filter(k));
      q.dw_narrow = q.dw_narrow && std::abs(filter(k)) <= 128;
    }
    q.dw_bias.resize(channels);
    for (size_t c = 0; c < channels; ++c) q.dw_bias[c] = static_cast<int32_t>(q.bias[c]);
    quantized_of_node[i] = static_cast<int32_t>(quantized.size());
    quantized.push_back(std::move(q));
    return ok_status();
  }
  bool floats = false;
  {
    // The largest |input - zero point| times the largest per-channel sum of |filter| bounds every
    // partial sum of the GEMM, in any order.
    const bool u8in = in.type == ElementType::kQUInt8;
    const double max_in = std::max(std::abs((u8in ? 255.0 : 127.0) - q.in_zero), std::abs((u8in ? 0.0 : -128.0) - q.in_zero));
    const uint64_t per = channels > 0 ? w.numel / channels : 0;
    const bool rows = n.kind == NodeKind::kConv2d || (n.flags & kFlagTransposeB) == 0;  // channel c's weights contiguous
    double worst = 0;
    for (size_t c = 0; c < channels; ++c) {
      int64_t sum = 0;
      for (uint64_t j = 0; j < per; ++j) sum += std::abs(filter(rows ? c * per + j : j * channels + c));
      worst = std::max(worst, static_cast<double>(sum));
    }
    floats = worst * max_in < 0x1.0p24;
  }
  // The integers as floats when every sum stays exact in them, else as doubles.
  if (floats) {
    q.fweights.resize(static_cast<size_t>(w.numel));
    for (uint64_t k = 0; k < w.numel; ++k) q.fweights[k] = static_cast<float>(filter(k));
  } else {
    q.weights.resize(static_cast<size_t>(w.numel));
    for (uint64_t k = 0; k < w.numel; ++k) q.weights[k] = static_cast<double>(filter(k));
  }
  quantized_of_node[i] = static_cast<int32_t>(quantized.size());
  quantized.push_back(std::move(q));
  return ok_status();
}

const Node* DelegateState::sole_clamp_consumer(size_t i) const {
  const Node& n = graph.nodes[i];
  if (n.outputs.size() != 1) return nullptr;
  const int32_t v = n.outputs[0];
  if (consumers[static_cast<size_t>(v)] != 1 || (value(v).flags & xnn::kFlagExternalOutput) != 0) return nullptr;
  for (size_t j = i + 1; j < graph.nodes.size(); ++j) {
    const Node& c = graph.nodes[j];
    if (std::find(c.inputs.begin(), c.inputs.end(), v) == c.inputs.end()) continue;
    return c.kind == NodeKind::kClamp && c.inputs.size() == 1 && c.outputs.size() == 1 ? &c : nullptr;
  }
  return nullptr;
}

namespace {

// A per-tensor qint8 value.
bool raw_type(const xnn::TensorValue& v) { return v.type == ElementType::kQInt8 && v.quant.kind == xnn::Quantization::Kind::kPerTensor; }

bool same_grid(const xnn::TensorValue& a, const xnn::TensorValue& b) {
  return a.quant.scale == b.quant.scale && a.quant.zero_point == b.quant.zero_point;
}

}  // namespace

void DelegateState::plan_raw_values() {
  const size_t nv = graph.values.size();
  raw_owned.assign(nv, {});
  raw.assign(nv, nullptr);
  if (emulate) return;
  auto single = [&](const Node& n) { return n.outputs.size() == 1 && !n.inputs.empty() && n.inputs[0] >= 0; };
  // Kernels that take raw integers for input slot k, and give them for their output, whatever
  // the other operands' forms: the integer layers (input 0; an Add both inputs) and Converts.
  auto raw_layer = [&](size_t i) {
    const int32_t l = quantized_of_node[i];
    if (l < 0) return false;
    const NodeKind k = graph.nodes[i].kind;
    const bool gemm = (k == NodeKind::kConv2d || k == NodeKind::kFullyConnected) && !quantized[static_cast<size_t>(l)].packed.empty();
    return gemm || k == NodeKind::kDepthwiseConv2d || k == NodeKind::kAdd || k == NodeKind::kGlobalAvgPool2d;
  };
  auto reads_raw = [&](size_t i, size_t k) {
    const Node& n = graph.nodes[i];
    if (raw_layer(i)) return k == 0 || (n.kind == NodeKind::kAdd && k == 1);
    if (raw_binary(i)) return k < 2;
    return k == 0 && n.kind == NodeKind::kConvert && single(n) && unbounded_range(n) && value(n.outputs[0]).type == ElementType::kF32;
  };
  auto writes_raw = [&](size_t i) {
    const Node& n = graph.nodes[i];
    if (raw_layer(i)) {
      const QuantizedLayer& q = quantized[static_cast<size_t>(quantized_of_node[i])];
      const xnn::TensorValue& o = value(n.outputs[0]);
      return o.quant.scale == q.out_scale && o.quant.zero_point == q.out_zero;  // not a fused Clamp's grid
    }
    if (raw_binary(i)) return true;
    return n.kind == NodeKind::kConvert && single(n) && unbounded_range(n) && value(n.inputs[0]).type == ElementType::kF32;
  };
  // Nodes whose output holds raw integers exactly when their input 0 does: they move them.
  auto mover = [&](size_t i) {
    const Node& n = graph.nodes[i];
    if (copy_clamp[i]) return true;
    // (a max pooling on one grid picks integers: the largest of a window's is the largest value)
    const bool moves = n.kind == NodeKind::kTranspose || n.kind == NodeKind::kReshape || n.kind == NodeKind::kCopy || n.kind == NodeKind::kMaxPool2d;
    return moves && single(n) && n.inputs.size() == 1 && unbounded_range(n) && raw_type(value(n.inputs[0])) && raw_type(value(n.outputs[0])) &&
           same_grid(value(n.inputs[0]), value(n.outputs[0]));
  };
  // A concatenation of values on its output's grid: raw integers copied as bytes (XNNPACK's
  // "Copy (NC, X8)"), when every input holds them.
  auto concat = [&](size_t i) {
    const Node& n = graph.nodes[i];
    if (!concatenation(n.kind) || n.outputs.size() != 1 || n.inputs.empty() || !unbounded_range(n) || !raw_type(value(n.outputs[0]))) return false;
    for (int32_t v : n.inputs) {
      if (v < 0 || !raw_type(value(v)) || !same_grid(value(v), value(n.outputs[0]))) return false;
    }
    return true;
  };
  std::vector<int32_t> writer(nv, -1);
  std::vector<std::vector<std::pair<size_t, size_t>>> readers(nv);  // (node, input slot)
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    const Node& n = graph.nodes[i];
    for (size_t k = 0; k < n.inputs.size(); ++k) {
      if (n.inputs[k] >= 0) readers[static_cast<size_t>(n.inputs[k])].emplace_back(i, k);
    }
    for (int32_t o : n.outputs) writer[static_cast<size_t>(o)] = static_cast<int32_t>(i);
  }
  // Candidates: qint8 values inside the graph whose writer gives raw integers or moves a value
  // on the same grid; then, until nothing changes, drop those with a reader that cannot take
  // them, and a mover's output whose input is not raw.
  std::vector<uint8_t> form(nv, 0);
  for (size_t v = 0; v < nv; ++v) {
    const xnn::TensorValue& tv = graph.values[v];
    const int32_t w = writer[v];
    if (!raw_type(tv) || tv.is_constant || w < 0 || readers[v].empty() || (tv.flags & (xnn::kFlagExternalInput | xnn::kFlagExternalOutput)) != 0 ||
        graph.nodes[static_cast<size_t>(w)].outputs.size() != 1) {
      continue;
    }
    const size_t wi = static_cast<size_t>(w);
    form[v] = mover(wi) ? same_grid(value(graph.nodes[wi].inputs[0]), tv) : concat(wi) || writes_raw(wi);
  }
  for (bool changed = true; changed;) {
    changed = false;
    for (size_t v = 0; v < nv; ++v) {
      if (!form[v]) continue;
      const size_t w = static_cast<size_t>(writer[v]);
      bool keep = !mover(w) || form[static_cast<size_t>(graph.nodes[w].inputs[0])];
      if (concat(w)) {
        for (int32_t in : graph.nodes[w].inputs) keep = keep && form[static_cast<size_t>(in)];
      }
      for (const auto& [i, k] : readers[v]) {
        const bool moves_it = (k == 0 && mover(i)) || concat(i);
        keep = keep && (reads_raw(i, k) || (moves_it && form[static_cast<size_t>(graph.nodes[i].outputs[0])]));
      }
      if (!keep) {
        form[v] = 0;
        changed = true;
      }
    }
  }
  // Buffers of the declared size; a mover that shares its input's floats shares its integers.
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    const Node& n = graph.nodes[i];
    if (n.outputs.size() != 1 || !form[static_cast<size_t>(n.outputs[0])]) continue;
    const size_t v = static_cast<size_t>(n.outputs[0]);
    if (mover(i) && ws_offset[v] >= 0 && ws_offset[v] == ws_offset[static_cast<size_t>(n.inputs[0])]) {
      raw[v] = raw[static_cast<size_t>(n.inputs[0])];
      continue;
    }
    raw_owned[v].resize(static_cast<size_t>(graph.values[v].numel));
    raw[v] = raw_owned[v].data();
  }
}

bool DelegateState::run_raw_move(size_t i) {
  if (!raw_active) return false;
  const Node& n = graph.nodes[i];
  if (n.kind == NodeKind::kMaxPool2d) {
    // Raw integers in and out (a mover: both or neither), on one grid, no range: per output
    // pixel the largest integer of its window's taps inside the image (-128 where none is, as
    // the float path's -inf rounds).
    if (n.outputs.size() != 1 || n.inputs.empty() || n.inputs[0] < 0) return false;
    int8_t* to = raw[static_cast<size_t>(n.outputs[0])];
    const int8_t* from = raw[static_cast<size_t>(n.inputs[0])];
    if (to == nullptr || from == nullptr) return false;
    const xnn::ConvParams& c = n.conv;
    const Shape& sx = in_shape(n, 0);
    const Shape& so = out_shape(n);
    const int64_t H = sx.d[1], W = sx.d[2], C = sx.d[3], OH = so.d[1], OW = so.d[2];
    for (int64_t b = 0; b < sx.d[0]; ++b) {
      for (int64_t oy = 0; oy < OH; ++oy) {
        for (int64_t ox = 0; ox < OW; ++ox) {
          int8_t* __restrict px = to + ((b * OH + oy) * OW + ox) * C;
          std::memset(px, 0x80, static_cast<size_t>(C));
          for_each_tap(c, c.dilation_h, c.dilation_w, H, W, oy, ox, [&](int64_t pixel, int64_t) {
            const int8_t* __restrict in = from + (b * H * W + pixel) * C;
            for (int64_t ch = 0; ch < C; ++ch) px[ch] = std::max(px[ch], in[ch]);
          });
        }
      }
    }
    return true;
  }
  if (concatenation(n.kind)) {
    // Raw integers in and out (plan_raw_values: all inputs or none): rows of bytes, as run_concat.
    int8_t* to = n.outputs.size() == 1 && n.outputs[0] >= 0 ? raw[static_cast<size_t>(n.outputs[0])] : nullptr;
    if (to == nullptr) return false;
    const Shape& so = out_shape(n);
    const auto [outer, inner] = concat_rows(so, n.axis);
    const int64_t out_row = so.d[n.axis] * inner;
    for (int32_t v : n.inputs) {
      if (raw[static_cast<size_t>(v)] == nullptr) return false;  // (never: all or none)
    }
    // Output row by output row: each row's bytes written in one pass, its inputs' rows read in turn.
    for (int64_t o = 0; o < outer; ++o) {
      int8_t* row = to + o * out_row;
      for (size_t k = 0; k < n.inputs.size(); ++k) {
        const int64_t len = in_shape(n, k).d[n.axis] * inner;
        copy_window_run(raw[static_cast<size_t>(n.inputs[k])] + o * len, len, row);
        row += len;
      }
    }
    return true;
  }
  const bool kind = n.kind == NodeKind::kConvert || n.kind == NodeKind::kTranspose || n.kind == NodeKind::kReshape || n.kind == NodeKind::kCopy;
  if (!kind || n.outputs.size() != 1 || n.inputs.empty() || n.inputs[0] < 0) return false;
  int8_t* to = raw[static_cast<size_t>(n.outputs[0])];
  const int8_t* from = raw[static_cast<size_t>(n.inputs[0])];
  if (to == nullptr && from == nullptr) return false;
  const Shape& so = out_shape(n);
  const int64_t count = so.numel();
  if (n.kind == NodeKind::kConvert) {
    if (to != nullptr) {  // f32 to raw qint8: quantize_outputs' rounding, into integers
      const xnn::TensorValue& v = value(n.outputs[0]);
      const float inv = 1.0f / v.quant.scale, zp = static_cast<float>(v.quant.zero_point);
      const float* x = input(n, 0);
      int64_t e = 0;
#if defined(__AVX512F__) && defined(__AVX512BW__)
      // 16 at a time, as the loop below (zero-masking forms: GCC 12's plain ones start from an
      // "undefined" register it warns about).
      constexpr __mmask16 all = 0xffff;
      const __m512 vinv = _mm512_set1_ps(inv), vzp = _mm512_set1_ps(zp), vlo = _mm512_set1_ps(-128.0f), vhi = _mm512_set1_ps(127.0f);
      for (; e + 16 <= count; e += 16) {
        const __m512 sv = _mm512_maskz_mul_ps(all, _mm512_loadu_ps(x + e), vinv);
        const __m512 r = _mm512_maskz_add_ps(all, _mm512_maskz_roundscale_ps(all, sv, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC), vzp);
        const __m512 c = _mm512_mask_blend_ps(_mm512_cmp_ps_mask(sv, sv, _CMP_UNORD_Q), _mm512_maskz_min_ps(all, _mm512_maskz_max_ps(all, r, vlo), vhi), vhi);
        _mm512_mask_cvtepi32_storeu_epi8(to + e, all, _mm512_maskz_cvtps_epi32(all, c));
      }
#endif
      for (; e < count; ++e) {
        const float sv = x[e] * inv;
        const float r = std::min(std::max(std::nearbyint(sv) + zp, -128.0f), 127.0f);
        to[e] = static_cast<int8_t>(static_cast<int32_t>(sv != sv ? 127.0f : r));  // NaN: the top of the range
      }
    } else {  // raw qint8 to f32: the values the integers stand for
      const xnn::TensorValue& v = value(n.inputs[0]);
      const float scale = v.quant.scale, zp = static_cast<float>(v.quant.zero_point);
      float* out = output(n);
      int64_t e = 0;
#if defined(__AVX512F__) && defined(__AVX512BW__)
      constexpr __mmask16 all = 0xffff;
      const __m512 vscale = _mm512_set1_ps(scale), vzp = _mm512_set1_ps(zp);
      for (; e + 16 <= count; e += 16) {
        const __m512 q = _mm512_maskz_cvtepi32_ps(all, _mm512_maskz_cvtepi8_epi32(all, _mm_loadu_si128(reinterpret_cast<const __m128i*>(from + e))));
        _mm512_storeu_ps(out + e, _mm512_maskz_mul_ps(all, _mm512_maskz_sub_ps(all, q, vzp), vscale));
      }
#endif
      for (; e < count; ++e) out[e] = (static_cast<float>(from[e]) - zp) * scale;
    }
    return true;
  }
  // A mover: its input and output are both raw (plan_raw_values).
  if (n.kind == NodeKind::kTranspose) {
    const Shape& sx = in_shape(n, 0);
    int64_t sti[kMaxRank], st[kMaxRank];
    strides_of(sx, sti);
    for (int d = 0; d < so.rank; ++d) st[d] = sti[n.dims_a[static_cast<size_t>(d)]];
    kernels::copy_permuted<int8_t, kMaxRank>(from, to, so.rank, so.d, st);
  } else if (to != from) {
    std::memcpy(to, from, static_cast<size_t>(count));
  }
  return true;
}

bool DelegateState::raw_binary(size_t i) const {
  const Node& n = graph.nodes[i];
  const bool kind = n.kind == NodeKind::kMultiply || n.kind == NodeKind::kSubtract || n.kind == NodeKind::kDivide ||
                    n.kind == NodeKind::kMinimum || n.kind == NodeKind::kMaximum;
  if (!kind || emulate || quantized_of_node[i] >= 0 || n.inputs.size() != 2 || n.outputs.size() != 1) return false;
  return n.inputs[0] >= 0 && n.inputs[1] >= 0 && raw_type(value(n.inputs[0])) && raw_type(value(n.inputs[1])) && raw_type(value(n.outputs[0]));
}

namespace {

#if defined(__AVX512F__) && defined(__AVX512BW__)
// raw_binary_with's arithmetic for raw integers times one float into raw integers (EDSR's
// residual scaling), 16 at a time: (x - za) * sa, times b, the node's range (a NaN kept), divided
// by the output's scale, rounded to nearest even, plus its zero point, into [-128, 127] (a NaN to
// 127), as quantize_raw. GCC's own vectorisation of the scalar loop kept its masks on the stack.
void raw_times_scalar(const int8_t* x, int64_t count, float za, float sa, float b, bool bounded, float lo, float hi, float so, float zo, int8_t* out) {
  constexpr __mmask16 all = 0xffff;
  const __m512 vza = _mm512_set1_ps(za), vsa = _mm512_set1_ps(sa), vb = _mm512_set1_ps(b), vlo = _mm512_set1_ps(lo), vhi = _mm512_set1_ps(hi);
  const __m512 vso = _mm512_set1_ps(so), vzo = _mm512_set1_ps(zo), qmin = _mm512_set1_ps(-128.0f), qmax = _mm512_set1_ps(127.0f);
  for (int64_t e = 0; e < count; e += 16) {
    const __mmask16 m = kernels::first_lanes(count - e);
    const __m512 xf = _mm512_maskz_cvtepi32_ps(all, _mm512_maskz_cvtepi8_epi32(all, _mm_maskz_loadu_epi8(m, x + e)));
    __m512 r = _mm512_maskz_mul_ps(all, _mm512_maskz_mul_ps(all, _mm512_maskz_sub_ps(all, xf, vza), vsa), vb);
    if (bounded) {
      r = _mm512_mask_mov_ps(r, _mm512_cmp_ps_mask(r, vlo, _CMP_LT_OQ), vlo);  // std::max(r, lo)
      r = _mm512_mask_mov_ps(r, _mm512_cmp_ps_mask(vhi, r, _CMP_LT_OQ), vhi);  // std::min(., hi)
    }
    const __m512 q = _mm512_maskz_div_ps(all, r, vso);
    const __mmask16 nan = _mm512_cmp_ps_mask(q, q, _CMP_UNORD_Q);
    __m512 t = _mm512_maskz_add_ps(all, _mm512_maskz_roundscale_ps(all, q, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC), vzo);
    t = _mm512_mask_mov_ps(_mm512_maskz_min_ps(all, _mm512_maskz_max_ps(all, t, qmin), qmax), nan, qmax);
    _mm_mask_storeu_epi8(out + e, m, _mm512_maskz_cvtsepi32_epi8(all, _mm512_maskz_cvtps_epi32(all, t)));
  }
}
#endif

// run_raw_binary with the operation Op: as run_binary then quantize_outputs, each operand as the
// float the value holds ((q - zero point) * scale for raw integers), the operation, the node's
// range, then the output's grid (into raw integers, or into floats and quantize_outputs).
template <float (*Op)(float, float), bool kMultiply = false>
void raw_binary_with(DelegateState& m, const Node& n, const int8_t* ra, const int8_t* rb, int8_t* ro) {
  const xnn::TensorValue& va = m.value(n.inputs[0]);
  const xnn::TensorValue& vb = m.value(n.inputs[1]);
  const xnn::TensorValue& vo = m.value(n.outputs[0]);
  const float za = static_cast<float>(va.quant.zero_point), sa = va.quant.scale;
  const float zb = static_cast<float>(vb.quant.zero_point), sb = vb.quant.scale;
  const float zo = static_cast<float>(vo.quant.zero_point), so = vo.quant.scale;
  const float lo = n.output_min, hi = n.output_max;
  const bool bounded = !unbounded_range(n);
  // Inlined into every loop of binary_broadcast by force: GCC otherwise made one of them a call
  // per element (EDSR's Multiplies: 1.7 -> 12 ms).
  auto result = [=](auto x, auto y) __attribute__((always_inline)) {
    float a, b;
    if constexpr (std::is_same_v<decltype(x), int8_t>) {
      a = (static_cast<float>(x) - za) * sa;
    } else {
      a = x;
    }
    if constexpr (std::is_same_v<decltype(y), int8_t>) {
      b = (static_cast<float>(y) - zb) * sb;
    } else {
      b = y;
    }
    const float r = Op(a, b);
    return bounded ? clampf(r, lo, hi) : r;
  };
  auto with = [&](const auto* a, const auto* b) {
#if defined(__AVX512F__) && defined(__AVX512BW__)
    // Raw integers times one float (either side: the product is the same) into raw integers.
    if constexpr (kMultiply) {  // (not Op == op_multiply: no constant expression in sanitized builds)
      using A = std::remove_cv_t<std::remove_pointer_t<decltype(a)>>;
      using B = std::remove_cv_t<std::remove_pointer_t<decltype(b)>>;
      const Shape& so_shape = m.out_shape(n);
      if (ro != nullptr) {
        if constexpr (std::is_same_v<A, int8_t> && std::is_same_v<B, float>) {
          if (m.in_shape(n, 1).numel() == 1 && m.in_shape(n, 0) == so_shape) {
            return raw_times_scalar(a, so_shape.numel(), za, sa, b[0], bounded, lo, hi, so, zo, ro);
          }
        } else if constexpr (std::is_same_v<A, float> && std::is_same_v<B, int8_t>) {
          if (m.in_shape(n, 0).numel() == 1 && m.in_shape(n, 1) == so_shape) {
            return raw_times_scalar(b, so_shape.numel(), zb, sb, a[0], bounded, lo, hi, so, zo, ro);
          }
        }
      }
    }
#endif
    if (ro != nullptr) {
      binary_broadcast(m.in_shape(n, 0), a, m.in_shape(n, 1), b, m.out_shape(n), ro,
                       [=](auto x, auto y) __attribute__((always_inline)) { return static_cast<int8_t>(quantize_raw(result(x, y) / so, zo, -128.0f, 127.0f)); });
    } else {
      binary_broadcast(m.in_shape(n, 0), a, m.in_shape(n, 1), b, m.out_shape(n), m.output(n), result);
      m.quantize_outputs(n);
    }
  };
  if (ra != nullptr) {
    rb != nullptr ? with(ra, rb) : with(ra, m.input(n, 1));
  } else {
    rb != nullptr ? with(m.input(n, 0), rb) : with(m.input(n, 0), m.input(n, 1));
  }
}

}  // namespace

bool DelegateState::run_raw_binary(size_t i) {
  if (!raw_active || !raw_binary(i)) return false;
  const Node& n = graph.nodes[i];
  const int8_t* ra = raw_input(n, 0);
  const int8_t* rb = raw_input(n, 1);
  int8_t* ro = raw_output(n);
  if (ra == nullptr && rb == nullptr && ro == nullptr) return false;
  switch (n.kind) {
    case NodeKind::kMultiply: raw_binary_with<op_multiply, true>(*this, n, ra, rb, ro); break;
    case NodeKind::kSubtract: raw_binary_with<op_subtract>(*this, n, ra, rb, ro); break;
    case NodeKind::kDivide: raw_binary_with<op_divide>(*this, n, ra, rb, ro); break;
    case NodeKind::kMinimum: raw_binary_with<op_minimum>(*this, n, ra, rb, ro); break;
    default: raw_binary_with<op_maximum>(*this, n, ra, rb, ro); break;
  }
  return true;
}

// ---------------------------------------------------------------------------------------------
// [integer layers: running]

namespace {

const QuantizedLayer& layer_of(const DelegateState& m, const Node& n) {
  const size_t i = static_cast<size_t>(&n - m.graph.nodes.data());
  return m.quantized[static_cast<size_t>(m.quantized_of_node[i])];
}

// An exact integer sum (plus bias) of output channel c, requantized as XNNPACK does: scaled in
// float, clamped to the output range less the zero point, rounded to nearest even; stored as the
// float it stands for ((quantized - zero point) * scale, as round_to_grid stores it).
float requantize(const QuantizedLayer& q, double acc, size_t c) {
  float r = static_cast<float>(acc) * q.scale[c];
  r = std::min(std::max(r, q.qmin - static_cast<float>(q.out_zero)), q.qmax - static_cast<float>(q.out_zero));
  return (std::nearbyint(r) + 0.0f) * q.out_scale;  // + 0: a zero is +0, as (q - zero point) * scale is
}

// requantize over `len` int32 sums of channels c0.. (int32 to float rounds as through a double),
// into the floats the integers stand for, or into raw integers (plan_raw_values). The first is a
// loop the compiler vectorizes; the second is written 16 wide with masks: a loop storing bytes
// is vectorized 32 wide, and layers of 8, 16 or 24 channels would run its scalar tail.
void requantize_sums(const QuantizedLayer& q, const int32_t* __restrict sums, size_t c0, int64_t len, float* __restrict dst) {
  const float lo = q.qmin - static_cast<float>(q.out_zero), hi = q.qmax - static_cast<float>(q.out_zero), s = q.out_scale;
  const float* __restrict scale = q.scale.data() + c0;
  for (int64_t j = 0; j < len; ++j) {
    const float r = std::min(std::max(static_cast<float>(sums[j]) * scale[j], lo), hi);
    dst[j] = (std::nearbyint(r) + 0.0f) * s;
  }
}
inline void requantize_sums(const QuantizedLayer& q, const int32_t* __restrict sums, size_t c0, int64_t len, int8_t* __restrict dst) {
  const float lo = q.qmin - static_cast<float>(q.out_zero), hi = q.qmax - static_cast<float>(q.out_zero);
  const float* __restrict scale = q.scale.data() + c0;
#if defined(__AVX512F__) && defined(__AVX512VL__)
  // 16 at a time, the last ones masked (cvtps rounds to nearest even, as nearbyint in the default
  // rounding mode; the clamped values plus the zero point fit int8, so truncating stores keep them).
  // The zero-masking forms throughout: GCC 12's plain ones start from an "undefined" register it
  // then warns about.
  const __m512 vlo = _mm512_set1_ps(lo), vhi = _mm512_set1_ps(hi);
  const __m512i vzero = _mm512_set1_epi32(q.out_zero);
  for (int64_t j = 0; j < len; j += 16) {
    const __mmask16 k = kernels::first_lanes(len - j);
    __m512 r = _mm512_maskz_cvtepi32_ps(k, _mm512_maskz_loadu_epi32(k, sums + j));
    r = _mm512_maskz_mul_ps(k, r, _mm512_maskz_loadu_ps(k, scale + j));
    r = _mm512_maskz_min_ps(k, _mm512_maskz_max_ps(k, r, vlo), vhi);
    _mm512_mask_cvtepi32_storeu_epi8(dst + j, k, _mm512_maskz_add_epi32(k, _mm512_maskz_cvtps_epi32(k, r), vzero));
  }
#else
  for (int64_t j = 0; j < len; ++j) {
    const float r = std::min(std::max(static_cast<float>(sums[j]) * scale[j], lo), hi);
    dst[j] = static_cast<int8_t>(static_cast<int32_t>(std::nearbyint(r)) + q.out_zero);
  }
#endif
}

// A quantized convolution or fully connected layer: exact integer sums in T (float or double).
template <typename T>
void integer_gemm_layer(DelegateState& m, const Node& n, const QuantizedLayer& q, T* ds, const T* weights) {
  const float* x = m.input(n, 0);
  float* out = m.output(n);
  const Shape& sx = m.in_shape(n, 0);
  const Shape& so = m.out_shape(n);
  const float inv = 1.0f / q.in_scale;
  if (n.kind == NodeKind::kFullyConnected) {
    const int64_t nout = so.d[so.rank - 1], k = sx.d[sx.rank - 1];
    const int64_t rows = k > 0 ? sx.numel() / k : 0;
    T* xi = ds;
    T* acc = ds + sx.numel();
    for (int64_t e = 0; e < sx.numel(); ++e) xi[e] = static_cast<T>(std::nearbyint(x[e] * inv));
    const bool t = (n.flags & kFlagTransposeB) != 0;
    kernels::gemm(false, !t, rows, nout, k, T{1}, xi, weights, T{0}, acc, m.gemm_workspace.data());
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t o = 0; o < nout; ++o) {
        out[r * nout + o] = requantize(q, static_cast<double>(acc[r * nout + o]) + q.bias[static_cast<size_t>(o)], static_cast<size_t>(o));
      }
    }
    return;
  }
  const xnn::ConvParams& c = n.conv;
  const int64_t H = sx.d[1], W = sx.d[2], C = sx.d[3], OH = so.d[1], OW = so.d[2], CO = so.d[3];
  const int64_t kk = int64_t{c.kernel_h} * c.kernel_w * c.group_in, pixels = OH * OW;
  const int64_t og = c.group_out;
  // The image's integers once (not once per window tap), then im2col of those; a pointwise
  // convolution multiplies the image itself.
  const bool direct = pointwise_conv(c);
  T* img = ds;
  T* col = img + H * W * C;
  T* res = col + (direct ? 0 : pixels * kk);
  for (int64_t b = 0; b < sx.d[0]; ++b) {
    const float* xb = x + b * H * W * C;
    for (int64_t e = 0; e < H * W * C; ++e) img[e] = static_cast<T>(std::nearbyint(xb[e] * inv));
    float* dst = out + b * pixels * CO;
    for (uint32_t g = 0; g < c.groups; ++g) {
      if (!direct) im2col(img, sx, so, c, g, col);
      kernels::gemm(false, true, pixels, og, kk, T{1}, direct ? img : col, weights + g * og * kk, T{0}, res, m.gemm_workspace.data());
      for (int64_t p = 0; p < pixels; ++p) {
        for (int64_t o = 0; o < og; ++o) {
          const size_t ch = static_cast<size_t>(g * og + o);
          dst[p * CO + static_cast<int64_t>(ch)] = requantize(q, static_cast<double>(res[p * og + o]) + q.bias[ch], ch);
        }
      }
    }
  }
}

// The requantization of a packed layer's outputs from output channel c0 on (a group's first).
Int8Requant requant_of(const QuantizedLayer& q, int64_t c0) {
  return Int8Requant{q.sum_offset.data() + c0, q.scale.data() + c0, q.qmin - static_cast<float>(q.out_zero), q.qmax - static_cast<float>(q.out_zero),
                     q.out_zero, q.out_scale};
}

// The layer's input as int8_gemm's rows: integer plus zu (int8_gemm.h), in 0..255.
// In float, clamped so that NaN becomes 0 (values of integer layers are on their grid; this
// keeps the cast defined whatever they hold), in a form the compiler vectorizes.
void to_gemm_bytes(const float* __restrict x, uint8_t* __restrict out, int64_t n, float inv, float zu) {
  for (int64_t i = 0; i < n; ++i) out[i] = static_cast<uint8_t>(static_cast<int32_t>(std::max(0.0f, std::min(std::nearbyint(x[i] * inv) + zu, 255.0f))));
}
// The same from raw qint8 integers q (plan_raw_values): q less the zero point plus zu, which is
// the zero point plus 128 for int8 activations, so q + 128.
void to_gemm_bytes(const int8_t* __restrict x, uint8_t* __restrict out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = static_cast<uint8_t>(static_cast<uint8_t>(x[i]) ^ 0x80u);
}

// The rows of a packed layer's input from its floats or, when it holds them, its raw integers:
// `count` elements from element `from`.
struct GemmInput {
  const float* x;
  const int8_t* raw;
  float inv, zu;
  void bytes(int64_t from, int64_t count, uint8_t* out) const {
    if (raw != nullptr) {
      to_gemm_bytes(raw + from, out, count);
    } else {
      to_gemm_bytes(x + from, out, count, inv, zu);
    }
  }
};


// A convolution or fully connected layer whose filter plan_quantized packed: the input's bytes
// (im2col rows for a convolution that is not pointwise), int8_gemm's sums less zu times the
// filter's, plus the bias, requantized.
void packed_int8_layer(DelegateState& m, const Node& n, const QuantizedLayer& q) {
  const float* x = m.input(n, 0);
  float* out = m.output(n);
  int8_t* raw_out = m.raw_output(n);
  const Shape& sx = m.in_shape(n, 0);
  const Shape& so = m.out_shape(n);
  const int32_t zu = q.zu;
  const GemmInput in{x, m.raw_input(n, 0), 1.0f / q.in_scale, static_cast<float>(zu)};
  uint8_t* __restrict rows = m.int8_scratch.data();
  if (n.kind == NodeKind::kFullyConnected) {
    const PackedInt8& w = q.packed[0];
    const int64_t k = w.k, nout = w.n, count = k > 0 ? sx.numel() / k : 0;
    if (k == w.kpad) {  // rows already a multiple of 4: one pass
      in.bytes(0, count * k, rows);
    } else {
      for (int64_t r = 0; r < count; ++r) {
        in.bytes(r * k, k, rows + r * w.kpad);
        for (int64_t j = k; j < w.kpad; ++j) rows[r * w.kpad + j] = 0;
      }
    }
    // Into raw integers or floats: one instantiation each, no branch in the loop.
    const Int8Requant rq = requant_of(q, 0);
    auto run = [&](auto* dst) {
      for_blocks(worth_splitting(m.parallel, count * nout * w.kpad), count, 4 * kInt8Rows, w.tiles, kInt8Tiles, [&](int64_t r0, int64_t r1, int64_t t0, int64_t t1) {
        int8_gemm_requantized(rows + r0 * w.kpad, w.kpad, r1 - r0, w, t0, t1, rq, dst + r0 * nout, nout, m.tiles);
      });
    };
    if (raw_out != nullptr) {
      run(raw_out);
    } else {
      run(out);
    }
    return;
  }
  const xnn::ConvParams& c = n.conv;
  const int64_t H = sx.d[1], W = sx.d[2], C = sx.d[3], OH = so.d[1], OW = so.d[2], CO = so.d[3];
  const int64_t og = c.group_out, pixels = OH * OW;
  const int64_t kpad = q.packed[0].kpad;
  const bool direct = pointwise_conv(c);
  // The image's pixels as the packing holds them: a stem's 1 to 3 channels padded to 4 (the
  // padding's filter integers are zero, so its bytes add nothing: the zero point's byte).
  const int64_t C4 = int8_conv_channels(c) * c.groups;
  uint8_t* img = rows;
  uint8_t* col = img + int8_image_bytes(H * W, direct ? kpad : C4);
#if defined(__SSSE3__)
  // A padded stem's 4 pixels from 4 C bytes to 4 x 4 by one byte shuffle: lanes past a pixel's C
  // take the zero point's byte.
  alignas(16) int8_t pick[16];
  for (int l = 0; l < 16; ++l) pick[l] = l % 4 < C ? static_cast<int8_t>(l / 4 * C + l % 4) : int8_t{-128};
  const __m128i shuffle = _mm_load_si128(reinterpret_cast<const __m128i*>(pick));
  const __m128i fill = _mm_andnot_si128(_mm_cmpgt_epi8(shuffle, _mm_set1_epi8(-1)), _mm_set1_epi8(static_cast<char>(static_cast<uint8_t>(zu))));
#endif
  // `count` pixels of image row iy's from pixel 0 on, into d (C4 bytes a pixel).
  auto pixels_of = [&](const GemmInput& from, int64_t xb, int64_t iy, int64_t ix, int64_t count, uint8_t* d) {
    if (C4 == C) return from.bytes(xb + (iy * W + ix) * C, count * C, d);
    // 256 pixels at a time converted together, then spread out to 4 bytes a pixel (C4 is 4)
    uint8_t run[256 * 3 + 16];
    for (int64_t p0 = 0; p0 < count; p0 += 256) {
      const int64_t n = std::min<int64_t>(256, count - p0);
      from.bytes(xb + (iy * W + ix + p0) * C, n * C, run);
      uint8_t* to = d + p0 * C4;
      int64_t p = 0;
#if defined(__SSSE3__)
      for (; p + 4 <= n; p += 4) {
        const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(run + p * C));
        _mm_storeu_si128(reinterpret_cast<__m128i*>(to + p * 4), _mm_or_si128(_mm_shuffle_epi8(v, shuffle), fill));
      }
#endif
      for (; p < n; ++p) {
        for (int64_t ch = 0; ch < C4; ++ch) to[p * C4 + ch] = ch < C ? run[p * C + ch] : static_cast<uint8_t>(zu);
      }
    }
  };
  // Windows read in place (Int8Rows) where each tap is a run of whole groups of 4 inputs: the
  // image is copied once, padded with the zero point's byte, instead of kh x kw times into an
  // im2col matrix. Not on tiles, whose rows must be contiguous.
  const int64_t taps = int64_t{c.kernel_h} * c.kernel_w;
  if (kInt8WindowRows && !direct && c.groups == 1 && C4 % 4 == 0 && taps <= kMaxWindowTaps && !int8_gemm_on_tiles(m.tiles, pixels)) {
    const int64_t Hp = padded_extent(OH, c.kernel_h, c.stride_h, c.dilation_h), Wp = padded_extent(OW, c.kernel_w, c.stride_w, c.dilation_w);
    const int64_t pt = c.padding[0], pl = c.padding[3];
    int64_t tap_offset[kMaxWindowTaps];
    window_tap_offsets(c, Wp, C4, tap_offset);
    const Int8Rows windows{col, c.stride_h * Wp * C4, OW, c.stride_w * C4, tap_offset, taps};
    const PackedInt8& w = q.packed[0];
    const Int8Requant rq = requant_of(q, 0);
    const auto pad = static_cast<uint8_t>(zu);
    for (int64_t b = 0; b < sx.d[0]; ++b) {
      const int64_t xb = b * H * W * C;
      for_ranges(worth_splitting(m.parallel, Hp * Wp * C), Hp, 8, [&](int64_t y0, int64_t y1) {
        for (int64_t py = y0; py < y1; ++py) {
          uint8_t* d = col + py * Wp * C4;
          const int64_t iy = py - pt;
          // Columns [pl, pl + count) hold the image row's pixels 0 .. count - 1; the rest is padding.
          const int64_t count = iy >= 0 && iy < H ? std::max<int64_t>(0, std::min(Wp, pl + W) - pl) : 0;
          if (count == 0) {
            std::memset(d, pad, static_cast<size_t>(Wp * C4));
            continue;
          }
          std::memset(d, pad, static_cast<size_t>(pl * C4));
          pixels_of(in, xb, iy, 0, count, d + pl * C4);
          std::memset(d + (pl + count) * C4, pad, static_cast<size_t>((Wp - pl - count) * C4));
        }
      });
      const int64_t dst = b * pixels * CO;
      auto run = [&](auto* to) {  // raw integers or floats, as below
        for_blocks(worth_splitting(m.parallel, pixels * w.n * kpad), pixels, 4 * kInt8Rows, w.tiles, kInt8Tiles, [&](int64_t p0, int64_t p1, int64_t t0, int64_t t1) {
          int8_gemm_requantized(windows, p0, p1 - p0, w, t0, t1, rq, to + dst + p0 * CO, CO);
        });
      };
      if (raw_out != nullptr) {
        run(raw_out);
      } else {
        run(out);
      }
    }
    return;
  }
  // Every step is split over the method's threads: the image's pixels, the im2col rows of output
  // rows, then the GEMM's blocks.
  for (int64_t b = 0; b < sx.d[0]; ++b) {
    const int64_t xb = b * H * W * C;
    if (direct && kpad != C) {  // the image is the matrix: a row of kpad bytes per pixel
      for_ranges(worth_splitting(m.parallel, H * W * C), H * W, 64, [&](int64_t p0, int64_t p1) {
        for (int64_t p = p0; p < p1; ++p) {
          in.bytes(xb + p * C, C, img + p * kpad);
          for (int64_t j = C; j < kpad; ++j) img[p * kpad + j] = 0;
        }
      });
    } else {
      for_ranges(worth_splitting(m.parallel, H * W * C), H * W, 64, [&](int64_t p0, int64_t p1) { pixels_of(in, xb, 0, p0, p1 - p0, img + p0 * C4); });
    }
    // (the im2col of a stem's padded pixels: as of an image of C4 channels)
    Shape sx4 = sx;
    sx4.d[3] = C4;
    xnn::ConvParams c4 = c;
    if (C4 != C) c4.group_in = static_cast<uint32_t>(C4);
    const int64_t dst = b * pixels * CO;
    for (uint32_t g = 0; g < c.groups; ++g) {
      if (!direct) {
        for_ranges(worth_splitting(m.parallel, pixels * kpad), OH, 1, [&](int64_t y0, int64_t y1) { im2col(img, sx4, so, c4, g, col, static_cast<uint8_t>(zu), kpad, y0, y1); });
      }
      const PackedInt8& w = q.packed[g];
      const uint8_t* a = direct ? img : col;
      const Int8Requant rq = requant_of(q, g * og);
      auto run = [&](auto* to) {  // raw integers or floats, as above
        for_blocks(worth_splitting(m.parallel, pixels * w.n * kpad), pixels, 4 * kInt8Rows, w.tiles, kInt8Tiles, [&](int64_t p0, int64_t p1, int64_t t0, int64_t t1) {
          int8_gemm_requantized(a + p0 * kpad, kpad, p1 - p0, w, t0, t1, rq, to + dst + p0 * CO + g * og, CO, m.tiles);
        });
      };
      if (raw_out != nullptr) {
        run(raw_out);
      } else {
        run(out);
      }
    }
  }
}

}  // namespace

void run_global_avg_pool_int8(DelegateState& m, const Node& n) {
  // XNNPACK's mean: the sum of the raw int8 values per image and channel, scaled in float
  // with the zero points folded into one offset, rounded to nearest even in the output's
  // raw range (ties fall where XNNPACK's do only there). From raw integers or the floats they
  // stand for, into raw integers or floats.
  const QuantizedLayer& q = layer_of(m, n);
  const float* x = m.input(n, 0);
  const int8_t* raw_in = m.raw_input(n, 0);
  float* out = m.output(n);
  int8_t* raw_out = m.raw_output(n);
  const Shape& sx = m.in_shape(n, 0);
  const float inv = 1.0f / q.in_scale;
  const int64_t hw = sx.d[1] * sx.d[2], C = sx.d[3];
  const float ratio = q.a_scale / q.out_scale;
  const float scale = ratio / static_cast<float>(hw);
  const float offset = static_cast<float>(q.out_zero) - static_cast<float>(q.in_zero) * ratio;
  std::span<int64_t> acc(reinterpret_cast<int64_t*>(m.int8_scratch.data()), static_cast<size_t>(C));
  for (int64_t b = 0; b < sx.d[0]; ++b) {
    // Pixel by pixel over the channels' sums (the image in memory order).
    std::fill(acc.begin(), acc.end(), 0);
    for (int64_t p = 0; p < hw; ++p) {
      const int64_t at = (b * hw + p) * C;
      if (raw_in != nullptr) {
        for (int64_t ch = 0; ch < C; ++ch) acc[static_cast<size_t>(ch)] += raw_in[at + ch];
      } else {
        for (int64_t ch = 0; ch < C; ++ch) acc[static_cast<size_t>(ch)] += static_cast<int64_t>(std::nearbyint(x[at + ch] * inv)) + q.in_zero;
      }
    }
    for (int64_t ch = 0; ch < C; ++ch) {
      const float r = std::min(std::max(std::nearbyint(static_cast<float>(acc[static_cast<size_t>(ch)]) * scale + offset), q.qmin), q.qmax);
      if (raw_out != nullptr) {
        raw_out[b * C + ch] = static_cast<int8_t>(static_cast<int32_t>(r));
      } else {
        out[b * C + ch] = (r - static_cast<float>(q.out_zero)) * q.out_scale;
      }
    }
  }
}

#if defined(__AVX512BW__)
// An int8 Add's integer constants (QuantizedLayer's), per operand.
struct AddTerms {
  int32_t za, ma, zb, mb;
  float ia, ib;  // 1 / the operands' scales (float operands)
};

// 16 of an int8 Add's operand as integers less its zero point: raw integers, or the floats they
// stand for rounded as the scalar form rounds them (nearest even, the default mode).
inline __m512i add_operand16(const int8_t* p, __mmask16 k, __m512i zero, __m512) {
  return _mm512_sub_epi32(_mm512_maskz_cvtepi8_epi32(0xffff, _mm_maskz_loadu_epi8(k, p)), zero);
}
inline __m512i add_operand16(const float* p, __mmask16 k, __m512i, __m512 inv) {
  return _mm512_maskz_cvtps_epi32(0xffff, _mm512_maskz_mul_ps(0xffff, _mm512_maskz_loadu_ps(k, p), inv));
}

// run_add_int8 16 values at a time: a's count values with b's `period` values repeated along
// them (period == count: the same shape; period == a row: a per-channel operand), the same
// integer steps as the scalar form (an arithmetic shift is its rounding), into raw integers or
// the floats they stand for.
template <typename A, typename B, typename Out>
void add_int8_vector(const QuantizedLayer& q, AddTerms t, const A* a, const B* b, int64_t count, int64_t period, Out* out) {
  const __m512i za = _mm512_set1_epi32(t.za), zb = _mm512_set1_epi32(t.zb);
  const __m512 ia = _mm512_set1_ps(t.ia), ib = _mm512_set1_ps(t.ib);
  const __m512i ma = _mm512_set1_epi32(t.ma), mb = _mm512_set1_epi32(t.mb), round = _mm512_set1_epi32(q.rounding);
  const __m512i lo = _mm512_set1_epi32(static_cast<int32_t>(q.qmin) - q.out_zero), hi = _mm512_set1_epi32(static_cast<int32_t>(q.qmax) - q.out_zero);
  const __m512i zo = _mm512_set1_epi32(q.out_zero);
  const __m512 out_scale = _mm512_set1_ps(q.out_scale);
  const __m128i shift = _mm_cvtsi32_si128(static_cast<int>(q.shift));
  // 16 values from a + i and b + j into out + i (lanes k; whole stores when k is full: masked
  // ones cost several times more on AMD's Zen cores).
  auto sixteen = [&](int64_t i, int64_t j, __mmask16 k) __attribute__((always_inline)) {
    const __m512i va = add_operand16(a + i, k, za, ia), vb = add_operand16(b + j, k, zb, ib);
    const __m512i acc = _mm512_add_epi32(round, _mm512_add_epi32(_mm512_mullo_epi32(va, ma), _mm512_mullo_epi32(vb, mb)));
    // (The zero-masking forms: GCC 12's plain ones start from an "undefined" register.)
    const __m512i v = _mm512_maskz_min_epi32(0xffff, _mm512_maskz_max_epi32(0xffff, _mm512_maskz_sra_epi32(0xffff, acc, shift), lo), hi);
    if constexpr (std::is_same_v<Out, int8_t>) {
      const __m128i bytes = _mm512_maskz_cvtepi32_epi8(0xffff, _mm512_add_epi32(v, zo));
      if (k == 0xffff) {
        _mm_storeu_si128(reinterpret_cast<__m128i*>(out + i), bytes);
      } else {
        _mm_mask_storeu_epi8(out + i, k, bytes);
      }
    } else {
      kernels::store_lanes(out + i, k, _mm512_maskz_mul_ps(0xffff, _mm512_maskz_cvtepi32_ps(0xffff, v), out_scale));
    }
  };
  for (int64_t r = 0; r < count; r += period) {
    int64_t j = 0;
    for (; j + 16 <= period; j += 16) sixteen(r + j, j, 0xffff);
    if (j < period) sixteen(r + j, j, kernels::first_lanes(period - j));
  }
}
#endif

void run_add_int8(DelegateState& m, const Node& n) {
  // XNNPACK's fixed-point sum of the two inputs' integers (less their zero points), from raw
  // integers or the floats they stand for, into raw integers or floats.
  const QuantizedLayer& q = layer_of(m, n);
#if defined(__AVX512BW__)
  {
    const Shape &sa = m.in_shape(n, 0), &sb = m.in_shape(n, 1), &so = m.out_shape(n);
    const int64_t count = so.numel();
    // The operand of the output's shape first; the other the same shape or one row repeated.
    const bool a_full = sa == so, b_full = sb == so;
    const Shape& other = a_full ? sb : sa;
    const int64_t row = so.rank > 0 ? so.d[so.rank - 1] : 1;
    const bool repeats = row > 0 && count % row == 0 && other.numel() == row && (other.rank == 0 || other.d[other.rank - 1] == row);
    if (count > 0 && (a_full || b_full) && (a_full && b_full ? true : repeats)) {
      // The sum is symmetric but for its operands' constants: swapped with the operands.
      const AddTerms ab{q.in_zero, q.a_mult, q.b_zero, q.b_mult, 1.0f / q.a_scale, 1.0f / q.b_scale};
      const AddTerms ba{q.b_zero, q.b_mult, q.in_zero, q.a_mult, 1.0f / q.b_scale, 1.0f / q.a_scale};
      const int64_t period = a_full && b_full ? count : row;
      auto go = [&](const auto* x, const auto* y) {  // x: the full operand
        const AddTerms& t = a_full ? ab : ba;
        if (int8_t* ro = m.raw_output(n)) {
          add_int8_vector(q, t, x, y, count, period, ro);
        } else {
          add_int8_vector(q, t, x, y, count, period, m.output(n));
        }
      };
      auto operand = [&](int i, auto f) {
        if (const int8_t* r = m.raw_input(n, i)) {
          f(r);
        } else {
          f(m.input(n, i));
        }
      };
      const int full = a_full ? 0 : 1;
      operand(full, [&](const auto* x) { operand(1 - full, [&](const auto* y) { go(x, y); }); });
      return;
    }
  }
#endif
  const float ia = 1.0f / q.a_scale, ib = 1.0f / q.b_scale;
  const int32_t lo = static_cast<int32_t>(q.qmin) - q.out_zero, hi = static_cast<int32_t>(q.qmax) - q.out_zero;
  const int32_t za = q.in_zero, zb = q.b_zero;
  auto integer = [](auto v, float inv, int32_t zero) -> int32_t {
    if constexpr (std::is_same_v<decltype(v), int8_t>) {
      return int32_t{v} - zero;
    } else {
      return static_cast<int32_t>(std::nearbyint(v * inv));
    }
  };
  auto run = [&](const auto* a, const auto* b, auto* out) {
    using Out = std::remove_pointer_t<decltype(out)>;
    binary_broadcast(m.in_shape(n, 0), a, m.in_shape(n, 1), b, m.out_shape(n), out, [&](auto av, auto bv) -> Out {
      const int32_t acc = q.rounding + integer(av, ia, za) * q.a_mult + integer(bv, ib, zb) * q.b_mult;
      const int32_t shifted = std::min(std::max(acc >= 0 ? acc >> q.shift : ~(~acc >> q.shift), lo), hi);  // arithmetic shift
      if constexpr (std::is_same_v<Out, int8_t>) {
        return static_cast<int8_t>(shifted + q.out_zero);
      } else {
        return static_cast<float>(shifted) * q.out_scale;
      }
    });
  };
  auto with_out = [&](const auto* a, const auto* b) {
    if (int8_t* r = m.raw_output(n)) {
      run(a, b, r);
    } else {
      run(a, b, m.output(n));
    }
  };
  auto with_b = [&](const auto* a) {
    if (const int8_t* rb = m.raw_input(n, 1)) {
      with_out(a, rb);
    } else {
      with_out(a, m.input(n, 1));
    }
  };
  if (const int8_t* ra = m.raw_input(n, 0)) {
    with_b(ra);
  } else {
    with_b(m.input(n, 0));
  }
}

void run_gemm_layer_int8(DelegateState& m, const Node& n) {
  const QuantizedLayer& q = layer_of(m, n);
  if (!q.packed.empty()) {
    packed_int8_layer(m, n, q);
  } else if (!q.fweights.empty()) {  // in floats where plan_quantized proved them exact, else in doubles
    integer_gemm_layer(m, n, q, m.scratch.data(), q.fweights.data());
  } else {
    integer_gemm_layer(m, n, q, m.qscratch.data(), q.weights.data());
  }
}

#if defined(__AVX512BW__) && defined(__AVX512VL__)
// One output pixel's channels [0, min(left, 16 V)) of a narrow int8 depthwise convolution: per
// register of 16 channels (registers 0..V-2 whole, 16 (V - 1) < left; the last masked), the bias
// (rq's offsets), every listed tap's 16-bit product (narrow filters: exact) added in int32 sums
// that wrap, then requantized from the registers. (One mask, for the last register only: with a
// mask per register GCC 12 kept the sums on the stack, a store and a load in every step.)
// With Broadcast (a channel multiplier), every channel of the block reads the one input integer
// at img + in_at[t].
template <int V, bool Broadcast, typename Out>
void dw_int8_block(const int16_t* img, const int16_t* filter, const int64_t* in_at, const int64_t* w_at, int64_t taps, int64_t left,
                   const Int8Requant& rq, Out* to) {
  const int64_t last = left - 16 * (V - 1);
  const __mmask16 k = kernels::first_lanes(last);
  auto mask = [&](int v) { return v + 1 < V ? __mmask16{0xffff} : k; };
  auto load16 = [&](const int16_t* p, int v) {
    return v + 1 < V ? _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)) : _mm256_maskz_loadu_epi16(k, p);
  };
  __m512i acc[V];
  _Pragma("GCC unroll 4") for (int v = 0; v < V; ++v) acc[v] = v + 1 < V ? _mm512_loadu_si512(rq.offset + 16 * v) : _mm512_maskz_loadu_epi32(k, rq.offset + 16 * v);
  for (int64_t t = 0; t < taps; ++t) {
    const int16_t* x = img + in_at[t];
    const int16_t* w = filter + w_at[t];
    _Pragma("GCC unroll 4") for (int v = 0; v < V; ++v) {
      const __m256i xv = Broadcast ? _mm256_set1_epi16(*x) : load16(x + 16 * v, v);
      const __m256i p = _mm256_mullo_epi16(xv, load16(w + 16 * v, v));
      acc[v] = _mm512_add_epi32(acc[v], _mm512_maskz_cvtepi16_epi32(0xffff, p));
    }
  }
  _Pragma("GCC unroll 4") for (int v = 0; v < V; ++v) requantize16(acc[v], _mm512_maskz_loadu_ps(mask(v), rq.scale + 16 * v), mask(v), rq, to + 16 * v);
}

// P output pixels sharing one list of taps (pixel p's from img + p * step, its outputs at
// to + p * out_step) by channels [0, min(left, 16 V)): as dw_int8_block for each, each tap's
// filter registers loaded once for all P (the last register masked unless Full).
template <int P, int V, bool Full, bool Broadcast, typename Out>
[[gnu::noinline]] void dw_int8_pixels(const int16_t* img, int64_t step, const int16_t* filter, const int64_t* in_at, const int64_t* w_at,
                                      int64_t taps, int64_t left, const Int8Requant& rq, Out* to, int64_t out_step) {
  const __mmask16 k = Full ? __mmask16{0xffff} : kernels::first_lanes(left - 16 * (V - 1));
  auto mask = [&](int v) { return Full || v + 1 < V ? __mmask16{0xffff} : k; };
  auto load16 = [&](const int16_t* p, int v) {
    return Full || v + 1 < V ? _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)) : _mm256_maskz_loadu_epi16(k, p);
  };
  __m512i acc[P][V];
  _Pragma("GCC unroll 4") for (int v = 0; v < V; ++v) {
    const __m512i b = Full || v + 1 < V ? _mm512_loadu_si512(rq.offset + 16 * v) : _mm512_maskz_loadu_epi32(k, rq.offset + 16 * v);
    _Pragma("GCC unroll 8") for (int p = 0; p < P; ++p) acc[p][v] = b;
  }
  for (int64_t t = 0; t < taps; ++t) {
    const int16_t* x = img + in_at[t];
    const int16_t* w = filter + w_at[t];
    __m256i wv[V];
    _Pragma("GCC unroll 4") for (int v = 0; v < V; ++v) wv[v] = load16(w + 16 * v, v);
    _Pragma("GCC unroll 8") for (int p = 0; p < P; ++p) {
      _Pragma("GCC unroll 4") for (int v = 0; v < V; ++v) {
        const __m256i xv = Broadcast ? _mm256_set1_epi16(x[p * step]) : load16(x + p * step + 16 * v, v);
        acc[p][v] = _mm512_add_epi32(acc[p][v], _mm512_maskz_cvtepi16_epi32(0xffff, _mm256_mullo_epi16(xv, wv[v])));
      }
    }
  }
  _Pragma("GCC unroll 8") for (int p = 0; p < P; ++p) {
    _Pragma("GCC unroll 4") for (int v = 0; v < V; ++v) {
      requantize16(acc[p][v], _mm512_maskz_loadu_ps(mask(v), rq.scale + 16 * v), mask(v), rq, to + p * out_step + 16 * v);
    }
  }
}

// `count` output pixels sharing one list of taps by channels [0, left <= 64), in
// for_pixel_blocks' blocks.
template <bool Broadcast, typename Out>
void dw_int8_row_block(const int16_t* img, int64_t step, const int16_t* filter, const int64_t* in_at, const int64_t* w_at, int64_t taps, int64_t left,
                       int64_t count, const Int8Requant& rq, Out* to, int64_t out_step) {
  for_pixel_blocks(count, left, [&](int64_t i, auto p, auto v, auto full) __attribute__((always_inline)) {
    dw_int8_pixels<decltype(p)::value, decltype(v)::value, decltype(full)::value, Broadcast>(img + i * step, step, filter, in_at, w_at, taps, left, rq,
                                                                                             to + i * out_step, out_step);
  });
}

// `count` output pixels sharing one list of taps (PixelTaps::walk's runs), every channel: blocks
// of 32, or per input channel its `mult` outputs in blocks of 64 (each tap's integer broadcast).
template <typename Out>
void dw_int8_run(const int16_t* img, int64_t step, const int16_t* filter, const int64_t* in_at, const int64_t* w_at, int64_t taps, int64_t C,
                 int64_t mult, int64_t count, const Int8Requant& rq, Out* to, int64_t out_step) {
  auto at = [&](int64_t o) { return Int8Requant{rq.offset + o, rq.scale + o, rq.lo, rq.hi, rq.zero, rq.out_scale}; };
  if (mult == 1) {
    for (int64_t c0 = 0; c0 < C; c0 += 32) {
      dw_int8_row_block<false>(img + c0, step, filter + c0, in_at, w_at, taps, std::min<int64_t>(32, C - c0), count, at(c0), to + c0, out_step);
    }
    return;
  }
  for (int64_t ci = 0; ci < C; ++ci) {
    for (int64_t j = 0; j < mult; j += 64) {
      const int64_t o = ci * mult + j;
      dw_int8_row_block<true>(img + ci, step, filter + o, in_at, w_at, taps, std::min<int64_t>(64, mult - j), count, at(o), to + o, out_step);
    }
  }
}

// All CO channels of one output pixel, in the blocks of for_channel_blocks.
template <bool Broadcast = false, typename Out>
void dw_int8_pixel(const int16_t* img, const int16_t* filter, const int64_t* in_at, const int64_t* w_at, int64_t taps, int64_t CO,
                   const Int8Requant& rq, Out* to) {
  for_channel_blocks(CO, [&](int64_t c0, int64_t left, auto v, auto) __attribute__((always_inline)) {
    const Int8Requant at{rq.offset + c0, rq.scale + c0, rq.lo, rq.hi, rq.zero, rq.out_scale};
    dw_int8_block<decltype(v)::value, Broadcast>(Broadcast ? img : img + c0, filter + c0, in_at, w_at, taps, left, at, to + c0);
  });
}

// One output pixel with a channel multiplier: per input channel its `mult` outputs, each tap's
// input integer broadcast.
template <typename Out>
void dw_int8_pixel_multiplier(const int16_t* img, const int16_t* filter, const int64_t* in_at, const int64_t* w_at, int64_t taps, int64_t C,
                              int64_t mult, const Int8Requant& rq, Out* to) {
  for (int64_t ci = 0; ci < C; ++ci) {
    const Int8Requant r{rq.offset + ci * mult, rq.scale + ci * mult, rq.lo, rq.hi, rq.zero, rq.out_scale};
    dw_int8_pixel<true>(img + ci, filter + ci * mult, in_at, w_at, taps, mult, r, to + ci * mult);
  }
}
#endif

void run_depthwise_conv2d_int8(DelegateState& m, const Node& n) {
  const QuantizedLayer& q = layer_of(m, n);
  const xnn::ConvParams& c = n.conv;
  const float* x = m.input(n, 0);
  const int8_t* raw_in = m.raw_input(n, 0);
  float* out = m.output(n);
  int8_t* raw_out = m.raw_output(n);
  const Shape& sx = m.in_shape(n, 0);
  const Shape& so = m.out_shape(n);
  const float inv = 1.0f / q.in_scale;
  const int64_t H = sx.d[1], W = sx.d[2], C = sx.d[3], OH = so.d[1], OW = so.d[2], CO = so.d[3];
  const int64_t mult = c.group_out;
  // The image's integers (input less its zero point) once; then the int32 sums of the taps'
  // products (integer sums: any order gives the same), requantized. Sums wrap in 32 bits as
  // XNNPACK's do (unsigned arithmetic). Filters of more than 8 bits or a channel multiplier:
  // per output row, each tap adds its products to the row's sums.
  int16_t* __restrict img = reinterpret_cast<int16_t*>(m.int8_scratch.data());
  uint32_t* __restrict acc = reinterpret_cast<uint32_t*>(m.int8_scratch.data() + depthwise_acc_offset(H * W * C));
  const int16_t* __restrict filter = q.dw_filter.data();
  for (int64_t b = 0; b < sx.d[0]; ++b) {
    const float* xb = x + b * H * W * C;
    const int8_t* rb = raw_in != nullptr ? raw_in + b * H * W * C : nullptr;
    for_ranges(worth_splitting(m.parallel, H * W * C), H * W * C, 4096, [&](int64_t e0, int64_t e1) {
      if (rb != nullptr) {  // raw integers (plan_raw_values) less the zero point
        for (int64_t e = e0; e < e1; ++e) img[e] = static_cast<int16_t>(int32_t{rb[e]} - q.in_zero);
        return;
      }
      for (int64_t e = e0; e < e1; ++e) {  // NaN (never on a grid) becomes -255: a defined cast
        img[e] = static_cast<int16_t>(std::max(-255.0f, std::min(std::nearbyint(xb[e] * inv), 255.0f)));
      }
    });
#if defined(__AVX512BW__) && defined(__AVX512VL__)
    const PixelTaps taps(c, H, W, OH, OW, C, CO);
    const bool listed = taps.listed();
#else
    constexpr bool listed = false;
#endif
    if (q.dw_narrow && (mult == 1 || listed)) {
      // The common case: per output pixel and block of channels, every tap's 16-bit products
      // summed in a block of sums that stays in registers. Output rows are split over the
      // method's threads. With AVX-512, the pixels whose window lies inside the image share one
      // list of taps (offsets from the window's first pixel), the others list theirs, and the
      // sums are requantized from the registers; a channel multiplier takes this path too
      // (dw_int8_pixel_multiplier).
      constexpr int64_t kDwBlock = 32;
#if defined(__AVX512BW__) && defined(__AVX512VL__)
      const Int8Requant rq{q.dw_bias.data(), q.scale.data(), q.qmin - static_cast<float>(q.out_zero), q.qmax - static_cast<float>(q.out_zero), q.out_zero,
                           q.out_scale};
#endif
      auto run = [&](auto* to) {  // raw integers or floats: one instantiation each
        for_ranges(worth_splitting(m.parallel, OH * OW * CO * c.kernel_h * c.kernel_w), OH, 1, [&](int64_t y0, int64_t y1) {
#if defined(__AVX512BW__) && defined(__AVX512VL__)
          if (listed) {
            // Runs of pixels sharing their taps (PixelTaps::walk), the others one by one.
            auto* tb = to + b * OH * OW * CO;
            taps.walk(OH, OW, y0, y1,
                      [&](int64_t, int64_t origin, int64_t step, const int64_t* in_at, const int64_t* w_at, int64_t n, int64_t count, int64_t first,
                          int64_t pixel_step) { dw_int8_run(img + origin, step, filter, in_at, w_at, n, C, mult, count, rq, tb + first * CO, pixel_step * CO); },
                      [&](int64_t, int64_t oy, int64_t ox) {
                        taps.visit(oy, ox, [&](int64_t origin, const int64_t* in_at, const int64_t* w_at, int64_t n) {
                          if (mult == 1) {
                            dw_int8_pixel(img + origin, filter, in_at, w_at, n, CO, rq, tb + (oy * OW + ox) * CO);
                          } else {
                            dw_int8_pixel_multiplier(img + origin, filter, in_at, w_at, n, C, mult, rq, tb + (oy * OW + ox) * CO);
                          }
                        });
                      });
            return;
          }
#endif
          for (int64_t oy = y0; oy < y1; ++oy) {
            const int64_t row = (b * OH + oy) * OW * CO;
            for (int64_t ox = 0; ox < OW; ++ox) {
              for (int64_t c0 = 0; c0 < CO; c0 += kDwBlock) {
                int32_t sums[kDwBlock];
                const int64_t len = std::min(kDwBlock, CO - c0);
                for (int64_t j = 0; j < len; ++j) sums[j] = q.dw_bias[static_cast<size_t>(c0 + j)];
                for_each_tap(c, H, W, oy, ox, [&](int64_t pixel, int64_t k) {
                  const int16_t* __restrict in = img + pixel * C + c0;
                  const int16_t* __restrict wk = filter + k * CO + c0;
                  for (int64_t j = 0; j < len; ++j) {
                    sums[j] = static_cast<int32_t>(static_cast<uint32_t>(sums[j]) + static_cast<uint32_t>(int32_t{static_cast<int16_t>(in[j] * wk[j])}));
                  }
                });
                requantize_sums(q, sums, static_cast<size_t>(c0), len, to + row + ox * CO + c0);
              }
            }
          }
        });
      };
      if (raw_out != nullptr) {
        run(raw_out);
      } else {
        run(out);
      }
      continue;
    }
    for (int64_t oy = 0; oy < OH; ++oy) {
      for (int64_t ox = 0; ox < OW; ++ox) {
        for (int64_t o = 0; o < CO; ++o) acc[ox * CO + o] = static_cast<uint32_t>(q.dw_bias[static_cast<size_t>(o)]);
      }
      for_each_row_tap(c, H, W, OW, oy, [&](int64_t iy, int64_t off, int64_t ox0, int64_t ox1, int64_t k) {
        const int16_t* __restrict wk = filter + k * CO;
        for (int64_t ox = ox0; ox < ox1; ++ox) {
          const int16_t* __restrict in = img + (iy * W + ox * c.stride_w + off) * C;
          uint32_t* __restrict a = acc + ox * CO;
          if (mult == 1) {
            for (int64_t o = 0; o < CO; ++o) a[o] += static_cast<uint32_t>(int32_t{in[o]} * int32_t{wk[o]});
          } else {  // channel multiplier: output o reads input channel o / mult
            for (int64_t ci = 0; ci < C; ++ci) {
              const int32_t v = in[ci];
              for (int64_t j = 0; j < mult; ++j) a[ci * mult + j] += static_cast<uint32_t>(v * int32_t{wk[ci * mult + j]});
            }
          }
        }
      });
      const int64_t row = (b * OH + oy) * OW * CO;
      for (int64_t ox = 0; ox < OW; ++ox) {
        const int32_t* sums = reinterpret_cast<const int32_t*>(acc + ox * CO);
        if (raw_out != nullptr) {
          requantize_sums(q, sums, 0, CO, raw_out + row + ox * CO);
        } else {
          requantize_sums(q, sums, 0, CO, out + row + ox * CO);
        }
      }
    }
  }
}

}  // namespace etscope::runtime::xnnpack
