// Fully connected layers on dynamically quantized rows (XNNPACK's qd8 GEMMs), as ExecuTorch's
// XNNPACK computes them: the f32 -> qdint8 Convert quantizes each row with its own zero point
// and multiplier, and the layer multiplies those int8 rows with int8 or 4-bit filters in int32,
// then converts and scales in float in XNNPACK's order. Sections: [rows] [planning] [running]
//
// The float operations here are XNNPACK's, one by one: this file is compiled with
// -ffp-contract=off (runtime/CMakeLists.txt) so that no product and sum fuse where XNNPACK's do
// not, and std::fma stands where its x86 kernels use a fused multiply-add. The order is that of
// the kernels ExecuTorch 1.5.1's XNNPACK selects on x86-64 CPUs with AVX512-VNNI: the qdu8
// variants (input rows shifted by 128 to uint8, zero points with them), filter columns packed 16
// inputs at a time (kr = 8, two planes).
#include <cmath>
#include <cstring>

#include "xnnpack/node_table.h"

namespace etscope::runtime::xnnpack {
namespace {

// A float rounded to bfloat16 (nearest, ties to even) and back, as XNNPACK's math_cvt_bf16_fp32.
float round_bf16(float x) {
  uint32_t bits;
  std::memcpy(&bits, &x, 4);
  if (std::isnan(x)) return x;
  bits = (bits + 0x7fffu + ((bits >> 16) & 1u)) & 0xffff0000u;
  float r;
  std::memcpy(&r, &bits, 4);
  return r;
}

// Inputs per packed group of a filter column: XNNPACK sums a column's integers (times the block
// scale) into its float term one group at a time (2 * kr with kr = 8).
constexpr int64_t kPackGroup = 16;

// The raw 4-bit or 8-bit integer of element (row, col) of a 2-D filter constant.
int32_t filter_int(const xnn::TensorValue& v, int64_t row, int64_t col) {
  const int64_t last = v.shape.back();
  if (v.type == ElementType::kQCInt8) {
    return static_cast<int32_t>(static_cast<int8_t>(v.constant[static_cast<size_t>(row * last + col)])) - v.quant.zero_point;
  }
  const uint8_t byte = v.constant[static_cast<size_t>(row * ((last + 1) / 2) + col / 2)];
  return ((col % 2 == 0) ? (byte & 0x0f) : (byte >> 4)) - 8;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// [rows]

void quantize_rows_qd8(const float* x, float* out, int64_t rows, int64_t n, DynamicRows* ints) {
  if (ints != nullptr) {
    ints->q.resize(static_cast<size_t>(rows * n));
    ints->zero.resize(static_cast<size_t>(rows));
    ints->scale.resize(static_cast<size_t>(rows));
  }
  const float qmin = -128.0f, qmax = 127.0f;
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * n;
    float lo = INFINITY, hi = -INFINITY;
    for (int64_t i = 0; i < n; ++i) {
      lo = std::min(lo, xr[i]);
      hi = std::max(hi, xr[i]);
    }
    const float rmin = std::min(0.0f, lo), rmax = std::max(0.0f, hi);
    const float mult = rmin == rmax ? 1.0f : (qmax - qmin) / (rmax - rmin);
    const float descaled_min = rmin * mult;
    const float descaled_max = rmax * mult;
    const float error_min = qmin + descaled_min;
    const float error_max = qmax + descaled_max;
    float zp = error_min + error_max > 0 ? qmin - descaled_min : qmax - descaled_max;
    zp = std::min(std::max(zp, qmin), qmax);
    const float zero = std::nearbyint(zp);
    const float scale = 1.0f / mult;
    for (int64_t i = 0; i < n; ++i) {
      const float q = quantize_raw(xr[i] * mult, zero, qmin, qmax);
      out[r * n + i] = (q - zero) * scale;
      if (ints != nullptr) ints->q[static_cast<size_t>(r * n + i)] = static_cast<int8_t>(q);
    }
    if (ints != nullptr) {
      ints->zero[static_cast<size_t>(r)] = static_cast<int32_t>(zero);
      ints->scale[static_cast<size_t>(r)] = scale;
    }
  }
}

// ---------------------------------------------------------------------------------------------
// [planning]

bool DelegateState::qd8_layer(const Node& n) const {
  if (n.kind != NodeKind::kFullyConnected || n.inputs.size() < 3 || n.outputs.size() != 1 || n.inputs[1] < 0) return false;
  using Q = xnn::Quantization::Kind;
  const xnn::TensorValue& in = value(n.inputs[0]);
  const xnn::TensorValue& w = value(n.inputs[1]);
  const xnn::TensorValue& out = value(n.outputs[0]);
  if (in.type != ElementType::kQDInt8 || in.quant.kind != Q::kPerRowDynamic || in.quant.non_batch_dims != 1) return false;
  if (out.type != ElementType::kF32 || !w.is_constant || w.shape.size() != 2) return false;
  const bool t = (n.flags & kFlagTransposeB) != 0;
  if (w.type == ElementType::kQCInt8 || w.type == ElementType::kQCInt4) {
    if (w.quant.kind != Q::kPerChannel || w.quant.axis != (t ? 1u : 0u)) return false;
  } else if (w.type == ElementType::kQBInt4) {
    // XNNPACK takes blocks of a multiple of 32 inputs that divide the row, untransposed here.
    if (t || w.quant.kind != Q::kPerBlock || w.quant.block_size == 0 || w.quant.block_size % 32 != 0 ||
        w.shape[1] % w.quant.block_size != 0) {
      return false;
    }
  } else {
    return false;
  }
  if (n.inputs[2] >= 0) {
    const xnn::TensorValue& b = value(n.inputs[2]);
    if (!b.is_constant || b.type != ElementType::kF32) return false;
  }
  return true;
}

Status DelegateState::plan_qd8(size_t i) {
  const Node& n = graph.nodes[i];
  const xnn::TensorValue& w = value(n.inputs[1]);
  const bool t = (n.flags & kFlagTransposeB) != 0;
  Qd8Layer l;
  l.k = t ? w.shape[0] : w.shape[1];
  l.n = t ? w.shape[1] : w.shape[0];
  l.lo = n.output_min;
  l.hi = n.output_max;
  const size_t nk = static_cast<size_t>(l.k * l.n);
  l.w.resize(nk);
  for (int64_t o = 0; o < l.n; ++o) {
    for (int64_t k = 0; k < l.k; ++k) l.w[static_cast<size_t>(o * l.k + k)] = static_cast<int8_t>(t ? filter_int(w, k, o) : filter_int(w, o, k));
  }
  if (w.type == ElementType::kQBInt4) {
    l.kind = Qd8Layer::Weights::kPerBlock;
    l.block = w.quant.block_size;
    const int64_t blocks = l.k / l.block;
    if (w.quant.scales.size() != static_cast<size_t>(l.n * blocks)) return bad(i, "block scales do not cover the filter");
    l.scale.resize(static_cast<size_t>(l.n * blocks));
    l.block_sum.assign(static_cast<size_t>(l.n * blocks), 0);
    l.ksum.assign(static_cast<size_t>(l.n), 0.0f);
    for (int64_t o = 0; o < l.n; ++o) {
      const int8_t* wr = l.w.data() + o * l.k;
      for (int64_t b = 0; b < blocks; ++b) {
        const size_t s = static_cast<size_t>(o * blocks + b);
        const float bf = round_bf16(w.quant.scales[s]);
        l.scale[s] = round_bf16(bf / 16.0f);  // the kernel's filter integers are 16x (shifted left 4)
        for (int64_t k = b * l.block; k < (b + 1) * l.block; ++k) l.block_sum[s] += wr[k];
      }
      // XNNPACK's packing: the column's float term less each group's sum times its block's scale.
      float f = 0.0f;
      for (int64_t g = 0; g < l.k; g += kPackGroup) {
        int32_t sum = 0;
        for (int64_t k = g; k < std::min(g + kPackGroup, l.k); ++k) sum += wr[k];
        const float product = static_cast<float>(sum) * round_bf16(w.quant.scales[static_cast<size_t>(o * blocks + g / l.block)]);
        f = f - product;
      }
      l.ksum[static_cast<size_t>(o)] = f;
    }
  } else {
    l.scale.resize(static_cast<size_t>(l.n));
    if (w.quant.scales.size() != static_cast<size_t>(l.n)) return bad(i, "channel scales do not cover the filter");
    l.block_sum.assign(static_cast<size_t>(l.n), 0);
    for (int64_t o = 0; o < l.n; ++o) {
      l.scale[static_cast<size_t>(o)] = w.quant.scales[static_cast<size_t>(o)];
      for (int64_t k = 0; k < l.k; ++k) l.block_sum[static_cast<size_t>(o)] += l.w[static_cast<size_t>(o * l.k + k)];
    }
  }
  l.bias.assign(static_cast<size_t>(l.n), 0.0f);
  if (n.inputs[2] >= 0) {
    const xnn::TensorValue& b = value(n.inputs[2]);
    if (b.numel != static_cast<uint64_t>(l.n)) return bad(i, "bias size differs from the outputs");
    std::memcpy(l.bias.data(), b.constant.data(), static_cast<size_t>(l.n) * 4);
  }
  qd8_of_node[i] = static_cast<int32_t>(qd8_layers.size());
  qd8_layers.push_back(std::move(l));
  return ok_status();
}

// ---------------------------------------------------------------------------------------------
// [running]

namespace {

int32_t dot_i8(const int8_t* a, const int8_t* b, int64_t n) {
  int32_t s = 0;
  for (int64_t k = 0; k < n; ++k) s += static_cast<int32_t>(a[k]) * static_cast<int32_t>(b[k]);
  return s;
}

}  // namespace

void run_fully_connected_qd8(DelegateState& m, const Node& n) {
  const size_t i = static_cast<size_t>(&n - m.graph.nodes.data());
  const Qd8Layer& l = m.qd8_layers[static_cast<size_t>(m.qd8_of_node[i])];
  const DynamicRows& x = m.dynamic_rows[static_cast<size_t>(n.inputs[0])];
  float* out = m.output(n);
  const int64_t rows = l.k > 0 ? m.in_shape(n, 0).numel() / l.k : 0;
  for (int64_t r = 0; r < rows; ++r) {
    const int8_t* a = x.q.data() + r * l.k;
    const float in_scale = x.scale[static_cast<size_t>(r)];
    float* o = out + r * l.n;
    if (l.kind == Qd8Layer::Weights::kPerChannel) {
      // int32 sums of (input - zero point) x filter; then times the input's scale, and the
      // filter's scale and bias in one fused multiply-add.
      const int32_t zero = x.zero[static_cast<size_t>(r)];
      for (int64_t c = 0; c < l.n; ++c) {
        const int32_t acc = dot_i8(a, l.w.data() + c * l.k, l.k) - zero * l.block_sum[static_cast<size_t>(c)];
        float v = static_cast<float>(acc) * in_scale;
        v = std::fma(v, l.scale[static_cast<size_t>(c)], l.bias[static_cast<size_t>(c)]);
        o[c] = std::min(std::max(v, l.lo), l.hi);
      }
      continue;
    }
    // Blockwise 4-bit filters (qdu8 rows: input + 128 with zero point + 128): the column's float
    // term times the zero point, then per block the int32 sum (of 16x filter integers) fused into
    // it with the block's scale / 16; then times the input's scale, plus the bias.
    const float zero_u = static_cast<float>(x.zero[static_cast<size_t>(r)] + 128);
    const int64_t blocks = l.k / l.block;
    for (int64_t c = 0; c < l.n; ++c) {
      const int8_t* wr = l.w.data() + c * l.k;
      float v = l.ksum[static_cast<size_t>(c)] * zero_u;
      for (int64_t b = 0; b < blocks; ++b) {
        const size_t s = static_cast<size_t>(c * blocks + b);
        const int32_t acc = dot_i8(a + b * l.block, wr + b * l.block, l.block) + 128 * l.block_sum[s];
        v = std::fma(static_cast<float>(acc * 16), l.scale[s], v);
      }
      v = v * in_scale;
      v = v + l.bias[static_cast<size_t>(c)];
      o[c] = std::min(std::max(v, l.lo), l.hi);
    }
  }
}

}  // namespace etscope::runtime::xnnpack
