// quantized_decomposed:: affine (de)quantisation, per tensor and per channel, as pt2e-quantised
// programs use it:
//   quantize:   q = clamp(round_half_even(x * (1 / scale)) + zero_point, quant_min, quant_max)
//   dequantize: x = (q - zero_point) * scale
// quantize takes a float32 / float64 input and writes the integer dtype named by `dtype` (uint8,
// int8, int16, uint16, int32); dequantize reads that dtype and writes float32 or float64 (out_dtype,
// when given, must name the output's dtype). The multiply by the inverse scale and the rounding
// happen in float, as ExecuTorch's kernels do. NaN quantises to zero_point (clamped).
#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

#include "kernels/register.h"
#include "kernels/util/half_via_float.h"
#include "kernels/util/kernel_util.h"

namespace etscope::runtime::kernels {
namespace {

// Calls f(TypeTag<Q>{}) for the integer dtypes a quantised tensor may have.
template <typename F>
bool dispatch_quant(ScalarType dtype, F&& f) {
  switch (dtype) {
    case ScalarType::kByte: f(TypeTag<uint8_t>{}); return true;
    case ScalarType::kChar: f(TypeTag<int8_t>{}); return true;
    case ScalarType::kShort: f(TypeTag<int16_t>{}); return true;
    case ScalarType::kUInt16: f(TypeTag<uint16_t>{}); return true;
    case ScalarType::kInt: f(TypeTag<int32_t>{}); return true;
    default: return false;
  }
}

// quant_min / quant_max (args at `first`, first + 1) and dtype (first + 2): the range must lie
// within the quantised dtype, which must be the integer tensor's.
bool quant_params(KernelContext& ctx, Args args, size_t first, const TensorImpl& qtensor, int64_t* qmin,
                  int64_t* qmax, const char* op) {
  if (args[first]->tag != Tag::kInt || args[first + 1]->tag != Tag::kInt || args[first + 2]->tag != Tag::kInt) {
    ctx.fail(ErrorCode::kInvalidArgument, "%s: quant_min, quant_max and dtype must be ints", op);
    return false;
  }
  *qmin = args[first]->scalar.i;
  *qmax = args[first + 1]->scalar.i;
  if (static_cast<ScalarType>(args[first + 2]->scalar.i) != qtensor.dtype()) {
    ctx.fail(ErrorCode::kInvalidArgument, "%s: dtype argument %s differs from the quantised tensor's %s", op,
             scalar_type_name(static_cast<ScalarType>(args[first + 2]->scalar.i)).c_str(),
             scalar_type_name(qtensor.dtype()).c_str());
    return false;
  }
  int64_t lo = 0, hi = -1;
  const bool ok = dispatch_quant(qtensor.dtype(), [&](auto tag) {
    using Q = typename decltype(tag)::type;
    lo = std::numeric_limits<Q>::min();
    hi = std::numeric_limits<Q>::max();
  });
  if (!ok) {
    ctx.fail(ErrorCode::kInvalidArgument, "%s: unsupported quantised dtype %s", op,
             scalar_type_name(qtensor.dtype()).c_str());
    return false;
  }
  if (*qmin > *qmax || *qmin < lo || *qmax > hi) {
    ctx.fail(ErrorCode::kInvalidArgument, "%s: quant range [%lld, %lld] does not fit %s", op,
             static_cast<long long>(*qmin), static_cast<long long>(*qmax), scalar_type_name(qtensor.dtype()).c_str());
    return false;
  }
  return true;
}

// One (scale, zero_point) pair per channel, or one for the whole tensor (channels == 1).
struct QParams {
  const TensorImpl* scales = nullptr;  // float or double, one per channel
  const TensorImpl* zero_points = nullptr;  // long or int, one per channel; nullptr = 0
  double scale = 1.0;
  int64_t zero_point = 0;

  double scale_at(int64_t c) const {
    if (scales == nullptr) return scale;
    return scales->dtype() == ScalarType::kDouble ? scales->data_as<double>()[c]
                                                   : static_cast<double>(scales->data_as<float>()[c]);
  }
  int64_t zero_point_at(int64_t c) const {
    if (zero_points == nullptr) return zero_point;
    return zero_points->dtype() == ScalarType::kLong ? zero_points->data_as<int64_t>()[c]
                                                      : zero_points->data_as<int32_t>()[c];
  }
};

// Checks a scale / zero_point tensor pair holding `count` values each.
bool qparam_tensors(KernelContext& ctx, const TensorImpl* scales, const TensorImpl* zps, int64_t count,
                    const char* op) {
  if (scales == nullptr || scales->numel() != count ||
      (scales->dtype() != ScalarType::kFloat && scales->dtype() != ScalarType::kDouble)) {
    ctx.fail(ErrorCode::kInvalidArgument, "%s: scales must be a float or double tensor of %lld values", op,
             static_cast<long long>(count));
    return false;
  }
  if (zps != nullptr && (zps->numel() != count || (zps->dtype() != ScalarType::kLong && zps->dtype() != ScalarType::kInt))) {
    ctx.fail(ErrorCode::kInvalidArgument, "%s: zero_points must be an int64 or int32 tensor of %lld values", op,
             static_cast<long long>(count));
    return false;
  }
  return require_contiguous(ctx, op, {scales, zps});
}

// Elements of channel c along `axis` (channels == size(axis)); axis < 0 means one channel.
struct ChannelWalk {
  int64_t inner = 1, channels = 1;
  int64_t channel(int64_t i) const { return channels == 1 ? 0 : (i / inner) % channels; }
};

ChannelWalk channel_walk(const TensorImpl& t, int64_t axis) {
  ChannelWalk w;
  if (axis < 0) return w;
  w.channels = t.size(static_cast<int>(axis));
  for (int d = static_cast<int>(axis) + 1; d < t.dim(); ++d) w.inner *= t.size(d);
  return w;
}

void quantize(const TensorImpl& in, TensorImpl& out, const QParams& qp, const ChannelWalk& walk, int64_t qmin,
              int64_t qmax) {
  dispatch_float(in.dtype(), [&](auto in_tag) {
    using X = typename decltype(in_tag)::type;
    dispatch_quant(out.dtype(), [&](auto q_tag) {
      using Q = typename decltype(q_tag)::type;
      const X* x = in.data_as<X>();
      Q* y = out.data_as<Q>();
      for (int64_t i = 0; i < in.numel(); ++i) {
        const int64_t c = walk.channel(i);
        const float inv_scale = 1.0f / static_cast<float>(qp.scale_at(c));
        const float r = std::nearbyint(static_cast<float>(inv_scale * static_cast<float>(x[i])));
        double v = std::isnan(r) ? 0.0 : static_cast<double>(r);
        v += static_cast<double>(qp.zero_point_at(c));
        v = std::clamp(v, static_cast<double>(qmin), static_cast<double>(qmax));
        y[i] = static_cast<Q>(v);
      }
    });
  });
}

void dequantize(const TensorImpl& in, TensorImpl& out, const QParams& qp, const ChannelWalk& walk) {
  dispatch_quant(in.dtype(), [&](auto q_tag) {
    using Q = typename decltype(q_tag)::type;
    dispatch_float(out.dtype(), [&](auto out_tag) {
      using Y = typename decltype(out_tag)::type;
      const Q* x = in.data_as<Q>();
      Y* y = out.data_as<Y>();
      for (int64_t i = 0; i < in.numel(); ++i) {
        const int64_t c = walk.channel(i);
        const int64_t centred = static_cast<int64_t>(x[i]) - qp.zero_point_at(c);
        y[i] = static_cast<Y>(static_cast<float>(centred) * static_cast<float>(qp.scale_at(c)));
      }
    });
  });
}

// Input / output tensors and dtypes shared by every variant. `quantizing` picks which side is
// floating.
bool io_tensors(KernelContext& ctx, Args args, size_t out_index, bool quantizing, TensorImpl** in, TensorImpl** out,
                const char* op) {
  if (!check_arg_count(ctx, args, out_index + 1, op)) return false;
  *in = tensor_arg(ctx, args, 0, op);
  *out = tensor_arg(ctx, args, out_index, op);
  if (!*in || !*out || !require_contiguous(ctx, op, {*in, *out})) return false;
  const TensorImpl* fl = quantizing ? *in : *out;
  if (!dispatch_float(fl->dtype(), [](auto) {})) {
    ctx.fail(ErrorCode::kInvalidArgument, "%s: the %s must be float32 or float64, got %s", op,
             quantizing ? "input" : "output", scalar_type_name(fl->dtype()).c_str());
    return false;
  }
  if ((*out)->dim() != (*in)->dim()) {
    ctx.fail(ErrorCode::kInvalidArgument, "%s: output rank differs from the input's", op);
    return false;
  }
  return resize_or_fail(ctx, *out, (*in)->sizes(), op);
}

// dequantize's optional out_dtype at args[i] must name the output's dtype.
bool out_dtype_matches(KernelContext& ctx, Args args, size_t i, const TensorImpl& out, const char* op) {
  if (args[i]->tag == Tag::kInt && static_cast<ScalarType>(args[i]->scalar.i) != out.dtype()) {
    ctx.fail(ErrorCode::kInvalidArgument, "%s: out_dtype differs from the output's dtype", op);
    return false;
  }
  return true;
}

// Per-tensor variants: (input, scale, zero_point, quant_min, quant_max, dtype, [out_dtype,] out).
// `tensor_params`: scale and zero_point are one-element tensors (the .Tensor_out overloads).
template <bool Quantizing, bool TensorParams>
void per_tensor(KernelContext& ctx, Args args) {
  const char* op = Quantizing ? (TensorParams ? "quantize_per_tensor.Tensor_out" : "quantize_per_tensor.out")
                              : (TensorParams ? "dequantize_per_tensor.Tensor_out" : "dequantize_per_tensor.out");
  const size_t out_index = Quantizing ? 6 : 7;
  TensorImpl *in = nullptr, *out = nullptr;
  if (!io_tensors(ctx, args, out_index, Quantizing, &in, &out, op)) return;
  if (!Quantizing && !out_dtype_matches(ctx, args, 6, *out, op)) return;
  int64_t qmin = 0, qmax = 0;
  if (!quant_params(ctx, args, 3, Quantizing ? *out : *in, &qmin, &qmax, op)) return;
  QParams qp;
  if constexpr (TensorParams) {
    qp.scales = optional_tensor_arg(args, 1);
    qp.zero_points = optional_tensor_arg(args, 2);
    if (qp.zero_points == nullptr) {
      ctx.fail(ErrorCode::kInvalidArgument, "%s: zero_point must be a tensor", op);
      return;
    }
    if (!qparam_tensors(ctx, qp.scales, qp.zero_points, 1, op)) return;
  } else {
    if (args[1]->tag != Tag::kDouble || args[2]->tag != Tag::kInt) {
      ctx.fail(ErrorCode::kInvalidArgument, "%s: scale must be a float and zero_point an int", op);
      return;
    }
    qp.scale = args[1]->scalar.d;
    qp.zero_point = args[2]->scalar.i;
  }
  if (Quantizing) {
    quantize(*in, *out, qp, ChannelWalk{}, qmin, qmax);
  } else {
    dequantize(*in, *out, qp, ChannelWalk{});
  }
}

// quantize_per_channel.out(input, scales, zero_points, axis, quant_min, quant_max, dtype, out)
// dequantize_per_channel.out(input, scales, zero_points?, axis, quant_min, quant_max, dtype,
// out_dtype?, out)
template <bool Quantizing>
void per_channel(KernelContext& ctx, Args args) {
  const char* op = Quantizing ? "quantize_per_channel.out" : "dequantize_per_channel.out";
  const size_t out_index = Quantizing ? 7 : 8;
  TensorImpl *in = nullptr, *out = nullptr;
  if (!io_tensors(ctx, args, out_index, Quantizing, &in, &out, op)) return;
  if (!Quantizing && !out_dtype_matches(ctx, args, 7, *out, op)) return;
  const int64_t axis = args[3]->tag == Tag::kInt && in->dim() > 0 ? normalize_dim(args[3]->scalar.i, in->dim()) : -1;
  if (axis < 0) {
    ctx.fail(ErrorCode::kInvalidArgument, "%s: axis is out of range for a rank-%d tensor", op, in->dim());
    return;
  }
  int64_t qmin = 0, qmax = 0;
  if (!quant_params(ctx, args, 4, Quantizing ? *out : *in, &qmin, &qmax, op)) return;
  QParams qp;
  qp.scales = optional_tensor_arg(args, 1);
  qp.zero_points = optional_tensor_arg(args, 2);
  if (Quantizing && qp.zero_points == nullptr) {
    ctx.fail(ErrorCode::kInvalidArgument, "%s: zero_points must be a tensor", op);
    return;
  }
  const ChannelWalk walk = channel_walk(*in, axis);
  if (!qparam_tensors(ctx, qp.scales, qp.zero_points, walk.channels, op)) return;
  if (walk.channels == 1) {
    // One channel: read its parameters once, as a per-tensor call would.
    qp.scale = qp.scale_at(0);
    qp.zero_point = qp.zero_point_at(0);
    qp.scales = qp.zero_points = nullptr;
  }
  if (Quantizing) {
    quantize(*in, *out, qp, walk, qmin, qmax);
  } else {
    dequantize(*in, *out, qp, walk);
  }
}

// quantize_per_token.out(input, scales, zero_points, quant_min, quant_max, dtype, out) and
// dequantize_per_token.out(input, scales, zero_points, quant_min, quant_max, dtype, output_dtype,
// out): per channel, where a channel ("token") is one position of all but the last dimension;
// scales and zero_points hold one value per token (any shape with that many elements).
template <bool Quantizing>
void per_token(KernelContext& ctx, Args args) {
  const char* op = Quantizing ? "quantize_per_token.out" : "dequantize_per_token.out";
  const size_t out_index = Quantizing ? 6 : 7;
  TensorImpl *in = nullptr, *out = nullptr;
  if (!io_tensors(ctx, args, out_index, Quantizing, &in, &out, op)) return;
  if (!Quantizing && !out_dtype_matches(ctx, args, 6, *out, op)) return;
  if (in->dim() < 1) {
    ctx.fail(ErrorCode::kInvalidArgument, "%s: input must have at least one dimension", op);
    return;
  }
  int64_t qmin = 0, qmax = 0;
  if (!quant_params(ctx, args, 3, Quantizing ? *out : *in, &qmin, &qmax, op)) return;
  QParams qp;
  qp.scales = optional_tensor_arg(args, 1);
  qp.zero_points = optional_tensor_arg(args, 2);
  if (qp.scales == nullptr || qp.zero_points == nullptr) {
    ctx.fail(ErrorCode::kInvalidArgument, "%s: scales and zero_points must be tensors", op);
    return;
  }
  ChannelWalk walk;
  walk.inner = in->size(in->dim() - 1);
  walk.channels = walk.inner == 0 ? 0 : in->numel() / walk.inner;
  if (!qparam_tensors(ctx, qp.scales, qp.zero_points, walk.channels, op)) return;
  if (Quantizing) {
    quantize(*in, *out, qp, walk, qmin, qmax);
  } else {
    dequantize(*in, *out, qp, walk);
  }
}

// Asymmetric quantisation parameters for values in [lo, hi] (widened to include 0), the rule of
// PyTorch's dynamic quantisation that ExecuTorch's choose_qparams follows: scale spans the range
// over the integer steps (0.1 when that is 0 or its reciprocal overflows float); scales below
// 6.1e-5 are raised to it and the range widened to match; the zero point comes from whichever
// end maps with the smaller error, clamped to [qmin, qmax] and rounded half to even.
void affine_qparams(float lo, float hi, int64_t qmin, int64_t qmax, double* scale, int64_t* zero_point) {
  constexpr float kSmallestScale = 6.1e-5f;
  lo = std::min(lo, 0.0f);
  hi = std::max(hi, 0.0f);
  double sc = (static_cast<double>(hi) - lo) / static_cast<double>(qmax - qmin);
  if (static_cast<float>(sc) == 0.0f || std::isinf(1.0f / static_cast<float>(sc))) sc = 0.1;
  if (sc < kSmallestScale) {
    const float original = static_cast<float>(sc);
    sc = kSmallestScale;
    if (lo == 0.0f) {
      hi = kSmallestScale * static_cast<float>(qmax - qmin);
    } else if (hi == 0.0f) {
      lo = -kSmallestScale * static_cast<float>(qmax - qmin);
    } else {
      const float widen = kSmallestScale / original;
      lo *= widen;
      hi *= widen;
    }
  }
  const double from_lo = static_cast<double>(qmin) - lo / sc;
  const double from_hi = static_cast<double>(qmax) - hi / sc;
  const double err_lo = std::abs(static_cast<double>(qmin)) - std::abs(lo / sc);
  const double err_hi = std::abs(static_cast<double>(qmax)) - std::abs(hi / sc);
  const double zp = err_lo < err_hi ? from_lo : from_hi;
  *zero_point = zp < static_cast<double>(qmin)   ? qmin
                : zp > static_cast<double>(qmax) ? qmax
                                                 : static_cast<int64_t>(std::nearbyint(static_cast<float>(zp)));
  *scale = sc;
}

// choose_qparams.Tensor_out(input, quant_min, quant_max, eps, dtype, scale_out, zero_point_out)
// over the whole (float32) input, and choose_qparams_per_token_asymmetric.out(input, dtype,
// scale_out, zero_point_out) per token (all but the last dimension) with the int8 range. scale_out
// is float64, zero_point_out int64.
template <bool PerToken>
void choose_qparams_out(KernelContext& ctx, Args args) {
  const char* op = PerToken ? "choose_qparams_per_token_asymmetric.out" : "choose_qparams.Tensor_out";
  const size_t scale_index = PerToken ? 2 : 5;
  if (!check_arg_count(ctx, args, scale_index + 2, op)) return;
  TensorImpl* in = tensor_arg(ctx, args, 0, op);
  TensorImpl* scale = tensor_arg(ctx, args, scale_index, op);
  TensorImpl* zp = tensor_arg(ctx, args, scale_index + 1, op);
  if (!in || !scale || !zp || !require_contiguous(ctx, op, {in, scale, zp})) return;
  int64_t qmin = -128, qmax = 127;
  if (!PerToken) {
    if (args[1]->tag != Tag::kInt || args[2]->tag != Tag::kInt) {
      ctx.fail(ErrorCode::kInvalidArgument, "%s: quant_min and quant_max must be ints", op);
      return;
    }
    qmin = args[1]->scalar.i;
    qmax = args[2]->scalar.i;
  }
  if (qmin >= qmax || qmin < -(int64_t{1} << 31) || qmax > (int64_t{1} << 31)) {
    ctx.fail(ErrorCode::kInvalidArgument, "%s: quant_min %lld must be below quant_max %lld (32-bit)", op,
             static_cast<long long>(qmin), static_cast<long long>(qmax));
    return;
  }
  if (in->dtype() != ScalarType::kFloat || scale->dtype() != ScalarType::kDouble || zp->dtype() != ScalarType::kLong) {
    ctx.fail(ErrorCode::kInvalidArgument, "%s: needs a float32 input, a float64 scale and an int64 zero point", op);
    return;
  }
  const int64_t row = PerToken && in->dim() > 0 ? in->size(in->dim() - 1) : in->numel();
  const int64_t groups = row == 0 ? 0 : in->numel() / row;
  if (PerToken) {
    std::array<int64_t, kMaxDims> sizes{};
    for (int d = 0; d < in->dim(); ++d) sizes[static_cast<size_t>(d)] = in->size(d);
    if (in->dim() > 0) sizes[static_cast<size_t>(in->dim() - 1)] = 1;
    const std::span<const int64_t> shape{sizes.data(), static_cast<size_t>(in->dim())};
    if (!resize_or_fail(ctx, scale, shape, op) || !resize_or_fail(ctx, zp, shape, op)) return;
  } else if (scale->numel() != 1 || zp->numel() != 1) {
    ctx.fail(ErrorCode::kInvalidArgument, "%s: scale and zero point must have one element each", op);
    return;
  }
  const float* x = in->data_as<float>();
  for (int64_t g = 0; g < std::max<int64_t>(groups, PerToken ? 0 : 1); ++g) {
    float lo = std::numeric_limits<float>::infinity(), hi = -std::numeric_limits<float>::infinity();
    for (int64_t i = 0; i < row; ++i) {
      lo = std::min(lo, x[g * row + i]);
      hi = std::max(hi, x[g * row + i]);
    }
    if (row == 0) lo = hi = 0.0f;
    affine_qparams(lo, hi, qmin, qmax, &scale->data_as<double>()[g], &zp->data_as<int64_t>()[g]);
  }
}

}  // namespace

void register_quantize_kernels(KernelRegistry& r) {
  const uint32_t q = kFloatDtypes | dtype_bit(ScalarType::kByte) | dtype_bit(ScalarType::kChar) |
                     dtype_bit(ScalarType::kShort) | dtype_bit(ScalarType::kUInt16) | dtype_bit(ScalarType::kInt);
  r.add("quantized_decomposed::quantize_per_tensor.out", kernel(per_tensor<true, false>, q));
  r.add("quantized_decomposed::quantize_per_tensor.Tensor_out", kernel(per_tensor<true, true>, q));
  r.add("quantized_decomposed::dequantize_per_tensor.out", kernel(per_tensor<false, false>, q));
  r.add("quantized_decomposed::dequantize_per_tensor.Tensor_out", kernel(per_tensor<false, true>, q));
  r.add("quantized_decomposed::quantize_per_channel.out", kernel(per_channel<true>, q));
  r.add("quantized_decomposed::dequantize_per_channel.out", kernel(per_channel<false>, q));
  r.add("quantized_decomposed::quantize_per_token.out", kernel(per_token<true>, q));
  r.add("quantized_decomposed::choose_qparams.Tensor_out", half_kernel<choose_qparams_out<false>>(kFloatDtypes));
  r.add("quantized_decomposed::choose_qparams_per_token_asymmetric.out", half_kernel<choose_qparams_out<true>>(kFloatDtypes));
  r.add("quantized_decomposed::dequantize_per_token.out", kernel(per_token<false>, q));
}

}  // namespace etscope::runtime::kernels
