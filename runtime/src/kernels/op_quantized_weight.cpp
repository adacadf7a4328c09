// Weight-only quantised operators of ExecuTorch's quantized library, as its LLM flows emit them,
// and the older flow's quantised add:
//   embedding_byte / embedding_4bit / embedding_2bit (.out, .dtype_out): gather rows of an integer
//     weight and dequantise them, out = (w - zero_point) * scale, with one (scale, zero point) per
//     row or per group of columns (2-D scales). 4-bit weights pack two values per byte (the even
//     column in the high nibble, stored +8), 2-bit weights four (the lowest bits first, stored +2).
//   mixed_mm:     out[m,p] = sum_k in[m,k] * w[k,p] * scale[k]          (int8 weight [n, p])
//   mixed_linear: out[m,p] = sum_groups scale[p,g] * sum_k in[m,k] * w[p,k] (int8 weight [p, n])
//   add:          two affine-quantised integer tensors dequantised, added, and quantised again.
// Arithmetic happens in float, in ExecuTorch's order; half and bfloat16 outputs are rounded once at
// the end. Every index, group count and packed size is checked against the tensors before a read.
#include <algorithm>
#include <cmath>

#include "kernels/register.h"
#include "kernels/util/elementwise_util.h"
#include "kernels/util/kernel_util.h"

namespace etscope::runtime::kernels {
namespace {

bool is_float_or_half(ScalarType t) {
  return t == ScalarType::kFloat || t == ScalarType::kHalf || t == ScalarType::kBFloat16;
}

// Reads an optional ScalarType argument (an Int holding the dtype code, or None).
bool optional_dtype_arg(KernelContext& ctx, Args args, size_t i, bool* has, ScalarType* dtype, const char* op) {
  *has = false;
  if (args[i]->tag == Tag::kNone) return true;
  if (args[i]->tag != Tag::kInt) {
    ctx.fail(ErrorCode::kInvalidArgument, "%s: argument %zu (dtype) must be a ScalarType or None", op, i);
    return false;
  }
  *has = true;
  *dtype = static_cast<ScalarType>(args[i]->scalar.i);
  return true;
}

// Scales and optional zero points of a weight quantised per row, or per group of columns when the
// scales are 2-D: [rows] or [rows, groups].
struct RowQParams {
  const TensorImpl* scales = nullptr;
  const TensorImpl* zero_points = nullptr;  // nullptr: zero
  int64_t groups = 1;
  int64_t group_size = 0;

  float scale(int64_t row, int64_t col) const {
    return load_as<float>(scales->dtype(), scales->data(), row * groups + col / group_size);
  }
  float zero_point(int64_t row, int64_t col) const {
    if (zero_points == nullptr) return 0.0f;
    return load_as<float>(zero_points->dtype(), zero_points->data(), row * groups + col / group_size);
  }
};

bool row_qparams(KernelContext& ctx, const TensorImpl& scales, const TensorImpl* zero_points, int64_t rows,
                 int64_t cols, RowQParams* q, const char* op) {
  if (scales.dim() != 1 && scales.dim() != 2) {
    ctx.fail(ErrorCode::kInvalidArgument, "%s: weight_scales must be 1-D or 2-D, got %d dims", op, scales.dim());
    return false;
  }
  if (!is_float_or_half(scales.dtype())) {
    ctx.fail(ErrorCode::kInvalidArgument, "%s: weight_scales must be float32, float16 or bfloat16, got %s", op,
             scalar_type_name(scales.dtype()).c_str());
    return false;
  }
  if (scales.size(0) != rows) {
    ctx.fail(ErrorCode::kInvalidArgument, "%s: %lld scales for a weight of %lld rows", op,
             static_cast<long long>(scales.size(0)), static_cast<long long>(rows));
    return false;
  }
  q->scales = &scales;
  q->groups = scales.dim() == 2 ? scales.size(1) : 1;
  if (q->groups <= 0 || cols % q->groups != 0) {
    ctx.fail(ErrorCode::kInvalidArgument, "%s: %lld groups do not divide the %lld columns of the weight", op,
             static_cast<long long>(q->groups), static_cast<long long>(cols));
    return false;
  }
  q->group_size = std::max<int64_t>(cols / q->groups, 1);
  if (zero_points != nullptr) {
    if (zero_points->dim() != scales.dim() ||
        !std::equal(zero_points->sizes().begin(), zero_points->sizes().end(), scales.sizes().begin())) {
      ctx.fail(ErrorCode::kInvalidArgument, "%s: weight_zero_points must have the shape of weight_scales", op);
      return false;
    }
    if (!is_elementwise_dtype(zero_points->dtype()) || zero_points->dtype() == ScalarType::kBool) {
      ctx.fail(ErrorCode::kInvalidArgument, "%s: unsupported weight_zero_points dtype %s", op,
               scalar_type_name(zero_points->dtype()).c_str());
      return false;
    }
    q->zero_points = zero_points;
  }
  return true;
}

// embedding_{byte,4bit,2bit}.out(weight, scales, zero_points?, qmin, qmax, indices, out) and
// .dtype_out(..., indices, dtype?, out). `Bits` is 8, 4 or 2.
template <int Bits, bool WithDtype>
void embedding_out(KernelContext& ctx, Args args) {
  constexpr const char* op = Bits == 8   ? (WithDtype ? "embedding_byte.dtype_out" : "embedding_byte.out")
                             : Bits == 4 ? (WithDtype ? "embedding_4bit.dtype_out" : "embedding_4bit.out")
                                         : (WithDtype ? "embedding_2bit.dtype_out" : "embedding_2bit.out");
  constexpr size_t out_index = WithDtype ? 7 : 6;
  if (!check_arg_count(ctx, args, out_index + 1, op)) return;
  const TensorImpl* weight = tensor_arg(ctx, args, 0, op);
  const TensorImpl* scales = tensor_arg(ctx, args, 1, op);
  const TensorImpl* indices = tensor_arg(ctx, args, 5, op);
  TensorImpl* out = tensor_arg(ctx, args, out_index, op);
  if (!weight || !scales || !indices || !out) return;
  if (args[3]->tag != Tag::kInt || args[4]->tag != Tag::kInt || args[3]->scalar.i > args[4]->scalar.i) {
    ctx.fail(ErrorCode::kInvalidArgument, "%s: weight_quant_min must be an int not above weight_quant_max", op);
    return;
  }
  if (weight->dim() != 2) {
    ctx.fail(ErrorCode::kInvalidArgument, "%s: weight must be 2-D, got %d dims", op, weight->dim());
    return;
  }
  const bool byte_weight = weight->dtype() == ScalarType::kByte;
  if (!(byte_weight || (Bits == 8 && weight->dtype() == ScalarType::kChar))) {
    ctx.fail(ErrorCode::kInvalidArgument, "%s: weight must be %s, got %s", op, Bits == 8 ? "uint8 or int8" : "uint8",
             scalar_type_name(weight->dtype()).c_str());
    return;
  }
  if (!is_float_or_half(out->dtype())) {
    ctx.fail(ErrorCode::kInvalidArgument, "%s: out must be float32, float16 or bfloat16, got %s", op,
             scalar_type_name(out->dtype()).c_str());
    return;
  }
  if constexpr (WithDtype) {
    bool has = false;
    ScalarType dtype{};
    if (!optional_dtype_arg(ctx, args, 6, &has, &dtype, op)) return;
    if (has && dtype != out->dtype()) {
      ctx.fail(ErrorCode::kInvalidArgument, "%s: dtype %s differs from out's %s", op, scalar_type_name(dtype).c_str(),
               scalar_type_name(out->dtype()).c_str());
      return;
    }
  }
  if (indices->dtype() != ScalarType::kLong && indices->dtype() != ScalarType::kInt) {
    ctx.fail(ErrorCode::kInvalidArgument, "%s: indices must be int64 or int32, got %s", op,
             scalar_type_name(indices->dtype()).c_str());
    return;
  }
  if (!require_contiguous(ctx, op, {weight, scales, indices, out, optional_tensor_arg(args, 2)})) return;
  constexpr int64_t per_byte = 8 / Bits;
  const int64_t rows = weight->size(0);
  const int64_t packed = weight->size(1);
  const int64_t dim = packed * per_byte;  // no overflow: packed * 4 <= bytes of a validated tensor * 4
  RowQParams q;
  if (!row_qparams(ctx, *scales, optional_tensor_arg(args, 2), rows, dim, &q, op)) return;
  if (out->dim() != indices->dim() + 1) {
    ctx.fail(ErrorCode::kInvalidArgument, "%s: out must have one dimension more than indices", op);
    return;
  }
  std::array<int64_t, kMaxDims> sizes{};
  std::copy(indices->sizes().begin(), indices->sizes().end(), sizes.begin());
  sizes[static_cast<size_t>(indices->dim())] = dim;
  if (!resize_or_fail(ctx, out, std::span<const int64_t>(sizes.data(), static_cast<size_t>(out->dim())), op)) return;
  const uint8_t* w = static_cast<const uint8_t*>(weight->data());
  for (int64_t i = 0; i < indices->numel(); ++i) {
    const int64_t row = load_as<int64_t>(indices->dtype(), indices->data(), i);
    if (row < 0 || row >= rows) {
      ctx.fail(ErrorCode::kInvalidArgument, "%s: index %lld is outside [0, %lld)", op, static_cast<long long>(row),
               static_cast<long long>(rows));
      return;
    }
    const uint8_t* wr = w + row * packed;
    for (int64_t j = 0; j < dim; ++j) {
      float v;
      if constexpr (Bits == 8) {
        v = byte_weight ? static_cast<float>(wr[j]) : static_cast<float>(static_cast<int8_t>(wr[j]));
      } else if constexpr (Bits == 4) {
        const uint8_t b = wr[j / 2];
        v = static_cast<float>(((j & 1) ? (b & 0x0F) : (b >> 4)) - 8);
      } else {
        const uint8_t b = wr[j / 4];
        v = static_cast<float>(((b >> (2 * (j % 4))) & 3) - 2);
      }
      store_from<float>(out->dtype(), out->data(), i * dim + j, (v - q.zero_point(row, j)) * q.scale(row, j));
    }
  }
}

// The arguments mixed_mm and mixed_linear share, with their common checks: a 2-D float32/float16
// input, an int8 2-D weight, scales of the input's dtype, and no zero points (ExecuTorch's kernels
// do not support them yet).
struct MixedCall {
  const TensorImpl* in = nullptr;
  const TensorImpl* weight = nullptr;
  const TensorImpl* scales = nullptr;
  TensorImpl* out = nullptr;
};

bool mixed_args(KernelContext& ctx, Args args, size_t out_index, MixedCall* m, const char* op) {
  if (!check_arg_count(ctx, args, out_index + 1, op)) return false;
  m->in = tensor_arg(ctx, args, 0, op);
  m->weight = tensor_arg(ctx, args, 1, op);
  m->scales = tensor_arg(ctx, args, 2, op);
  m->out = tensor_arg(ctx, args, out_index, op);
  if (!m->in || !m->weight || !m->scales || !m->out) return false;
  if (m->in->dim() != 2 || m->weight->dim() != 2 || m->out->dim() != 2) {
    ctx.fail(ErrorCode::kInvalidArgument, "%s: input, weight and out must be 2-D", op);
    return false;
  }
  if (m->in->dtype() != ScalarType::kFloat && m->in->dtype() != ScalarType::kHalf) {
    ctx.fail(ErrorCode::kInvalidArgument, "%s: input must be float32 or float16, got %s", op,
             scalar_type_name(m->in->dtype()).c_str());
    return false;
  }
  if (m->weight->dtype() != ScalarType::kChar) {
    ctx.fail(ErrorCode::kInvalidArgument, "%s: weight must be int8, got %s", op,
             scalar_type_name(m->weight->dtype()).c_str());
    return false;
  }
  if (m->scales->dtype() != m->in->dtype()) {
    ctx.fail(ErrorCode::kInvalidArgument, "%s: weight_scales must have the input's dtype", op);
    return false;
  }
  if (args[3]->tag != Tag::kNone) {
    ctx.fail(ErrorCode::kNotSupported, "%s: weight zero points are not supported (as in ExecuTorch)", op);
    return false;
  }
  return require_contiguous(ctx, op, {m->in, m->weight, m->scales, m->out});
}

// mixed_mm.out(input [m, n], weight int8 [n, p], weight_scales [n], weight_zero_points?, out [m, p])
void mixed_mm_out(KernelContext& ctx, Args args) {
  const char* op = "mixed_mm.out";
  MixedCall call;
  if (!mixed_args(ctx, args, 4, &call, op)) return;
  const TensorImpl *in = call.in, *weight = call.weight, *scales = call.scales;
  TensorImpl* out = call.out;
  if (out->dtype() != in->dtype()) {
    ctx.fail(ErrorCode::kInvalidArgument, "%s: out must have the input's dtype", op);
    return;
  }
  const int64_t m = in->size(0), n = in->size(1), p = weight->size(1);
  if (weight->size(0) != n || scales->dim() != 1 || scales->size(0) != n) {
    ctx.fail(ErrorCode::kInvalidArgument, "%s: input [%lld, %lld] needs a weight of %lld rows and as many scales", op,
             static_cast<long long>(m), static_cast<long long>(n), static_cast<long long>(n));
    return;
  }
  const int64_t sizes[2] = {m, p};
  if (!resize_or_fail(ctx, out, sizes, op)) return;
  const int8_t* w = weight->data_as<int8_t>();
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < p; ++j) {
      float sum = 0.0f;
      for (int64_t k = 0; k < n; ++k) {
        sum += load_as<float>(in->dtype(), in->data(), i * n + k) * static_cast<float>(w[k * p + j]) *
               load_as<float>(scales->dtype(), scales->data(), k);
      }
      store_from<float>(out->dtype(), out->data(), i * p + j, sum);
    }
  }
}

// mixed_linear.out(input [m, n], weight int8 [p, n], weight_scales [p] or [p, groups],
//                  weight_zero_points?, dtype?, out [m, p])
void mixed_linear_out(KernelContext& ctx, Args args) {
  const char* op = "mixed_linear.out";
  MixedCall call;
  if (!mixed_args(ctx, args, 5, &call, op)) return;
  const TensorImpl *in = call.in, *weight = call.weight, *scales = call.scales;
  TensorImpl* out = call.out;
  bool has_dtype = false;
  ScalarType dtype{};
  if (!optional_dtype_arg(ctx, args, 4, &has_dtype, &dtype, op)) return;
  if ((has_dtype && dtype != out->dtype()) || (out->dtype() != ScalarType::kFloat && out->dtype() != ScalarType::kHalf)) {
    ctx.fail(ErrorCode::kInvalidArgument, "%s: out must be float32 or float16 and match dtype", op);
    return;
  }
  const int64_t m = in->size(0), n = in->size(1), p = weight->size(0);
  if (weight->size(1) != n || (scales->dim() != 1 && scales->dim() != 2) || scales->size(0) != p) {
    ctx.fail(ErrorCode::kInvalidArgument, "%s: weight must be [%lld, %lld] with one scale row per output", op,
             static_cast<long long>(p), static_cast<long long>(n));
    return;
  }
  // Columns per group: n split into scales.size(1) groups, the last one possibly shorter.
  const int64_t groups = scales->dim() == 2 ? scales->size(1) : 1;
  if (groups <= 0 || (n > 0 && groups > n)) {
    ctx.fail(ErrorCode::kInvalidArgument, "%s: %lld scale groups for %lld columns", op,
             static_cast<long long>(groups), static_cast<long long>(n));
    return;
  }
  const int64_t g = n == 0 ? 1 : (n + groups - 1) / groups;
  const int64_t sizes[2] = {m, p};
  if (!resize_or_fail(ctx, out, sizes, op)) return;
  const int8_t* w = weight->data_as<int8_t>();
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < p; ++j) {
      float sum = 0.0f;
      for (int64_t k = 0; k < n; k += g) {
        float partial = 0.0f;
        for (int64_t k2 = k; k2 < std::min(k + g, n); ++k2) {
          partial += load_as<float>(in->dtype(), in->data(), i * n + k2) * static_cast<float>(w[j * n + k2]);
        }
        sum += partial * load_as<float>(scales->dtype(), scales->data(), j * groups + k / g);
      }
      store_from<float>(out->dtype(), out->data(), i * p + j, sum);
    }
  }
}

// add.out(a, a_scale, a_zero_point, a_quant_min, a_quant_max, b, ..., out_scale, out_zero_point,
//         out_quant_min, out_quant_max, out): a, b and out share shape and integer dtype.
void quantized_add_out(KernelContext& ctx, Args args) {
  const char* op = "quantized_decomposed::add.out";
  if (!check_arg_count(ctx, args, 15, op)) return;
  const TensorImpl* a = tensor_arg(ctx, args, 0, op);
  const TensorImpl* b = tensor_arg(ctx, args, 5, op);
  TensorImpl* out = tensor_arg(ctx, args, 14, op);
  if (!a || !b || !out) return;
  for (size_t i : {2u, 3u, 4u, 7u, 8u, 9u, 11u, 12u, 13u}) {
    if (args[i]->tag != Tag::kInt) {
      ctx.fail(ErrorCode::kInvalidArgument, "%s: argument %zu must be an int", op, i);
      return;
    }
  }
  for (size_t i : {3u, 8u, 12u}) {
    const int64_t lo = args[i]->scalar.i, hi = args[i + 1]->scalar.i;
    if (!(lo >= 0 && hi <= 255 && lo <= hi)) {
      ctx.fail(ErrorCode::kInvalidArgument, "%s: quant range [%lld, %lld] must lie in [0, 255]", op,
               static_cast<long long>(lo), static_cast<long long>(hi));
      return;
    }
  }
  const float a_scale = static_cast<float>(args[1]->scalar_as_double());
  const float b_scale = static_cast<float>(args[6]->scalar_as_double());
  const float out_scale = static_cast<float>(args[10]->scalar_as_double());
  const auto a_zp = static_cast<int32_t>(args[2]->scalar.i);
  const auto b_zp = static_cast<int32_t>(args[7]->scalar.i);
  const auto out_zp = static_cast<int32_t>(args[11]->scalar.i);
  const int64_t qmin = args[12]->scalar.i, qmax = args[13]->scalar.i;
  if (a->dtype() != b->dtype() || a->dtype() != out->dtype() || !std::equal(a->sizes().begin(), a->sizes().end(), b->sizes().begin(), b->sizes().end())) {
    ctx.fail(ErrorCode::kInvalidArgument, "%s: a, b and out must have one shape and dtype", op);
    return;
  }
  const bool integral = a->dtype() == ScalarType::kByte || a->dtype() == ScalarType::kChar ||
                        a->dtype() == ScalarType::kShort || a->dtype() == ScalarType::kInt ||
                        a->dtype() == ScalarType::kLong;
  if (!integral) {
    ctx.fail(ErrorCode::kInvalidArgument, "%s: quantised tensors must be integers, got %s", op,
             scalar_type_name(a->dtype()).c_str());
    return;
  }
  if (!(std::isfinite(out_scale) && out_scale != 0.0f)) {
    ctx.fail(ErrorCode::kInvalidArgument, "%s: out_scale must be finite and non-zero", op);
    return;
  }
  if (!require_contiguous(ctx, op, {a, b, out}) || !resize_or_fail(ctx, out, a->sizes(), op)) return;
  const float inv_scale = 1.0f / out_scale;
  for (int64_t i = 0; i < a->numel(); ++i) {
    const auto da = static_cast<float>(static_cast<double>(load_as<int64_t>(a->dtype(), a->data(), i) - a_zp) * a_scale);
    const auto db = static_cast<float>(static_cast<double>(load_as<int64_t>(b->dtype(), b->data(), i) - b_zp) * b_scale);
    const float q = static_cast<float>(out_zp) + std::nearbyint(inv_scale * (da + db));
    store_from<int64_t>(out->dtype(), out->data(), i, std::clamp(convert<int64_t>(q), qmin, qmax));
  }
}

}  // namespace

void register_quantized_weight_kernels(KernelRegistry& r) {
  const uint32_t emb = dtype_bit(ScalarType::kByte) | dtype_bit(ScalarType::kChar) | dtype_bit(ScalarType::kFloat) |
                       kHalfDtypes;
  r.add("quantized_decomposed::embedding_byte.out", kernel(embedding_out<8, false>, emb));
  r.add("quantized_decomposed::embedding_byte.dtype_out", kernel(embedding_out<8, true>, emb));
  r.add("quantized_decomposed::embedding_4bit.out", kernel(embedding_out<4, false>, emb));
  r.add("quantized_decomposed::embedding_4bit.dtype_out", kernel(embedding_out<4, true>, emb));
  r.add("quantized_decomposed::embedding_2bit.out", kernel(embedding_out<2, false>, emb));
  r.add("quantized_decomposed::embedding_2bit.dtype_out", kernel(embedding_out<2, true>, emb));
  const uint32_t mixed = dtype_bit(ScalarType::kChar) | dtype_bit(ScalarType::kFloat) | dtype_bit(ScalarType::kHalf);
  r.add("quantized_decomposed::mixed_mm.out", kernel(mixed_mm_out, mixed));
  r.add("quantized_decomposed::mixed_linear.out", kernel(mixed_linear_out, mixed));
  r.add("quantized_decomposed::add.out", kernel(quantized_add_out, kIntDtypes));
}

}  // namespace etscope::runtime::kernels
