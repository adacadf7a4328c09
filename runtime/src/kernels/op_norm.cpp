// Normalisation: _native_batch_norm_legit_no_training (inference batch norm over dim 1),
// _native_batch_norm_legit (training, with or without running stats), native_layer_norm and
// native_group_norm.
#include <algorithm>
#include <cmath>

#include "kernels/register.h"
#include "kernels/util/half_via_float.h"
#include "kernels/util/kernel_util.h"

namespace etscope::runtime::kernels {
namespace {

// Fails the call unless every given tensor has in's dtype.
bool share_dtype(KernelContext& ctx, const char* op, const TensorImpl& in, std::initializer_list<const TensorImpl*> ts) {
  for (const TensorImpl* t : ts) {
    if (t != nullptr && t->dtype() != in.dtype()) {
      ctx.fail(ErrorCode::kInvalidArgument, "%s: all tensors must share the input's dtype", op);
      return false;
    }
  }
  return true;
}

// The sum of f(x[i]) over n values in double, in 8 interleaved partial sums (one vector register's
// worth; a single chain of dependent adds runs at a quarter of the speed), then the remaining
// values in order.
template <typename T, typename F>
double sum_in_double(const T* x, int64_t n, F f) {
  double acc[8] = {};
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    for (int k = 0; k < 8; ++k) acc[k] += f(static_cast<double>(x[i + k]));
  }
  double sum = ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
  for (; i < n; ++i) sum += f(static_cast<double>(x[i]));
  return sum;
}

// Mean and 1 / sqrt(biased variance + eps) of n values, two passes in double.
template <typename T>
void mean_rstd(const T* x, int64_t n, double eps, double* mean, double* rstd) {
  const double m = sum_in_double(x, n, [](double v) { return v; }) / static_cast<double>(n);
  const double sq = sum_in_double(x, n, [m](double v) { return (v - m) * (v - m); });
  *mean = m;
  *rstd = 1.0 / std::sqrt(sq / static_cast<double>(n) + eps);
}

// ExecuTorch's layer norm of a row of fewer than kFloatLayerNormRow values (its portable kernel,
// and its optimized one below that length): the sums in float, in order (a product rounded to
// float before it is added), the variance as E[x^2] - mean^2, y = (x - mean) / std * w + b with
// w = 1 and b = 0 when absent, rstd = 1 / std. The same bits: an int8 program whose float layer
// norm feeds a quantization lands on the same side of a rounding tie as under ExecuTorch.
constexpr int64_t kFloatLayerNormRow = 256;

template <typename T>
void layer_norm_row_in_float(const T* x, const T* w, const T* b, int64_t n, float eps, T* y, T* mean_out, T* rstd_out) {
  float sum = 0.0f, sq = 0.0f;
  for (int64_t j = 0; j < n; ++j) sum = static_cast<float>(sum + x[j]);
  for (int64_t j = 0; j < n; ++j) sq = static_cast<float>(sq + static_cast<float>(x[j]) * x[j]);
  const float mean = sum / static_cast<float>(n);
  const float var = sq / static_cast<float>(n) - mean * mean;
  const float sd = std::sqrt(var + eps);
  for (int64_t j = 0; j < n; ++j) {
    const T wj = w != nullptr ? w[j] : static_cast<T>(1);
    const T bj = b != nullptr ? b[j] : static_cast<T>(0);
    y[j] = static_cast<T>((x[j] - mean) / sd * wj + bj);
  }
  *mean_out = static_cast<T>(mean);
  *rstd_out = static_cast<T>(1.0 / static_cast<double>(sd));
}

// ExecuTorch's optimized layer norm of a float row of kFloatLayerNormRow values or more: the
// mean and variance by Welford's method in 8 lanes (values 8 i + l in lane l), chunks of 16
// vectors merged into a binary cascade of partial moments, the lanes then merged one by one
// after the values past the last whole vector; y = (x * rstd + (-rstd * mean)) * w + b. Every
// step a rounded product or sum (no fused multiply-add), as ExecuTorch 1.5.1's x86-64 wheel
// computes it (ViT-B's 768-wide rows: all bit for bit).
namespace welford8 {
constexpr int kLanes = 8, kChunk = 16, kMaxDepth = 64;

struct Moments {
  int64_t n = 0;
  float m1[kLanes] = {}, m2[kLanes] = {};
};

// Merges `add` (n_add values per lane) into `to`, as ExecuTorch's AddMomentsVec.
inline void merge(int64_t n_add, const float* m1_add, const float* m2_add, Moments& to) {
  const int64_t n = to.n + n_add;
  const float c = n == 0 ? 0.0f : static_cast<float>(n_add) / static_cast<float>(n);
  const float old_n = static_cast<float>(to.n);
  for (int l = 0; l < kLanes; ++l) {
    const float delta = m1_add[l] - to.m1[l];
    to.m1[l] += c * delta;
    to.m2[l] += m2_add[l] + delta * delta * c * old_n;
  }
  to.n = n;
}

// Mean and biased variance of the row x[0 .. count), count >= kLanes.
inline void row_moments(const float* x, int64_t count, float* mean, float* var) {
  const int64_t vectors = count / kLanes, chunks = (vectors + kChunk - 1) / kChunk;
  int depth = 1;
  while ((int64_t{1} << depth) < chunks) ++depth;  // ceil(log2(chunks)), at least 1
  Moments stack[kMaxDepth];
  float inv[kChunk];
  for (int j = 0; j < kChunk; ++j) inv[j] = 1.0f / static_cast<float>(j + 1);
  for (int64_t i = 0; i < chunks; ++i) {
    const int64_t in_chunk = std::min<int64_t>(kChunk, vectors - i * kChunk);
    float m1[kLanes] = {}, m2[kLanes] = {};
    for (int64_t j = 0; j < in_chunk; ++j) {
      const float* v = x + (i * kChunk + j) * kLanes;
      for (int l = 0; l < kLanes; ++l) {
        const float delta = v[l] - m1[l];
        m1[l] += delta * inv[j];
        m2[l] += delta * (v[l] - m1[l]);
      }
    }
    merge(in_chunk, m1, m2, stack[0]);
    int64_t mask = i + 1;
    for (int j = 1; j < depth && (mask & 1) == 0; ++j) {
      merge(stack[j - 1].n, stack[j - 1].m1, stack[j - 1].m2, stack[j]);
      stack[j - 1] = Moments{};
      mask >>= 1;
    }
  }
  for (int j = 1; j < depth; ++j) merge(stack[j].n, stack[j].m1, stack[j].m2, stack[0]);
  int64_t n = 0;
  float m1 = 0.0f, m2 = 0.0f;
  for (int64_t i = vectors * kLanes; i < count; ++i) {  // the values past the last whole vector
    const float delta = x[i] - m1;
    ++n;
    m1 += delta / static_cast<float>(n);
    m2 += delta * (x[i] - m1);
  }
  for (int l = 0; l < kLanes; ++l) {  // the lanes merged in turn, each of `vectors` values
    const int64_t total = n + vectors;
    const float c = total == 0 ? 0.0f : static_cast<float>(vectors) / static_cast<float>(total);
    const float delta = stack[0].m1[l] - m1;
    m1 += c * delta;
    m2 += stack[0].m2[l] + delta * delta * c * static_cast<float>(n);
    n = total;
  }
  *mean = m1;
  *var = m2 / static_cast<float>(count);
}
}  // namespace welford8

inline void layer_norm_row_welford8(const float* x, const float* w, const float* b, int64_t n, float eps, float* y, float* mean_out, float* rstd_out) {
  float mean = 0.0f, var = 0.0f;
  welford8::row_moments(x, n, &mean, &var);
  const float rstd = 1.0f / std::sqrt(var + eps);
  const float offset = -rstd * mean;
  for (int64_t j = 0; j < n; ++j) {
    const float wj = w != nullptr ? w[j] : 1.0f;
    const float bj = b != nullptr ? b[j] : 0.0f;
    y[j] = (x[j] * rstd + offset) * wj + bj;
  }
  *mean_out = mean;
  *rstd_out = rstd;
}

// _native_batch_norm_legit_no_training.out(input, weight?, bias?, running_mean, running_var,
// momentum, eps, out0, out1, out2): out0 = (x - mean) / sqrt(var + eps) * weight + bias per
// channel; out1 and out2 are the empty [0] tensors ATen returns in this mode.
void batch_norm_no_training_out(KernelContext& ctx, Args args) {
  const char* op = "_native_batch_norm_legit_no_training.out";
  if (!check_arg_count(ctx, args, 10, op)) return;
  TensorImpl* in = tensor_arg(ctx, args, 0, op);
  TensorImpl* weight = optional_tensor_arg(args, 1);
  TensorImpl* bias = optional_tensor_arg(args, 2);
  TensorImpl* mean = tensor_arg(ctx, args, 3, op);
  TensorImpl* var = tensor_arg(ctx, args, 4, op);
  TensorImpl* out = tensor_arg(ctx, args, 7, op);
  if (!in || !mean || !var || !out || !require_contiguous(ctx, op, {in, weight, bias, mean, var, out})) return;
  if (in->dim() < 2) {
    ctx.fail(ErrorCode::kInvalidArgument, "%s: input must have at least 2 dimensions", op);
    return;
  }
  const int64_t c = in->size(1);
  for (const TensorImpl* t : {weight, bias, mean, var}) {
    if (t != nullptr && (t->dim() != 1 || t->size(0) != c)) {
      ctx.fail(ErrorCode::kInvalidArgument, "%s: weight, bias, running_mean and running_var must have shape [%lld]", op,
               static_cast<long long>(c));
      return;
    }
  }
  if (!share_dtype(ctx, op, *in, {weight, bias, mean, var, out})) return;
  const double eps = args[6]->scalar_as_double();
  if (!resize_or_fail(ctx, out, in->sizes(), op)) return;
  for (size_t i : {size_t{8}, size_t{9}}) {
    TensorImpl* extra = optional_tensor_arg(args, i);
    const int64_t empty[1] = {0};
    if (extra != nullptr && extra->dim() == 1 && !resize_or_fail(ctx, extra, empty, op)) return;
  }
  const int64_t inner = in->numel() / std::max<int64_t>(in->size(0) * c, 1);
  const bool ok = dispatch_float(in->dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* x = in->data_as<T>();
    T* y = out->data_as<T>();
    // As ExecuTorch's portable kernel: 1 / sqrt(var + eps) in double, rounded to T, then
    // ((x - mean) * invstd) * weight + bias in T, each operation rounded (this file is compiled
    // without fused multiply-adds), so the values are ExecuTorch's bit for bit.
    for (int64_t ch = 0; ch < c; ++ch) {
      const T m = mean->data_as<T>()[ch];
      const T invstd = static_cast<T>(1.0 / std::sqrt(static_cast<double>(var->data_as<T>()[ch]) + eps));
      const T w = weight != nullptr ? weight->data_as<T>()[ch] : T(1);
      const T b = bias != nullptr ? bias->data_as<T>()[ch] : T(0);
      for (int64_t n = 0; n < in->size(0); ++n) {
        const T* xp = x + (n * c + ch) * inner;
        T* yp = y + (n * c + ch) * inner;
        for (int64_t i = 0; i < inner; ++i) yp[i] = (xp[i] - m) * invstd * w + b;
      }
    }
  });
  if (!ok) ctx.fail(ErrorCode::kNotSupported, "%s: only float32 and float64 are supported", op);
}

// _native_batch_norm_legit.out(input, weight?, bias?, running_mean, running_var, training,
// momentum, eps, out, save_mean, save_invstd) and .no_stats_out(input, weight?, bias?, training,
// momentum, eps, out, save_mean, save_invstd). With batch statistics (no_stats, or training):
// each channel (dimension 1) is normalised by its mean and biased variance over the batch and
// spatial dims, save_mean / save_invstd receive them ([C]), and in training the running
// statistics are updated in place: running = (1 - momentum) * running + momentum * batch, the
// variance unbiased (n / (n - 1)). ExecuTorch's portable kernel refuses training; etscope runs it,
// so training programs with batch norm work. Without training, the running statistics are used
// and save_mean / save_invstd are resized to [0] as in the no_training variant. Statistics in
// double, two passes.
template <bool Stats>
void batch_norm_legit_out(KernelContext& ctx, Args args) {
  const char* op = Stats ? "_native_batch_norm_legit.out" : "_native_batch_norm_legit.no_stats_out";
  const size_t shift = Stats ? 2 : 0;  // running_mean and running_var come before training
  if (!check_arg_count(ctx, args, 9 + shift, op)) return;
  TensorImpl* in = tensor_arg(ctx, args, 0, op);
  TensorImpl* weight = optional_tensor_arg(args, 1);
  TensorImpl* bias = optional_tensor_arg(args, 2);
  TensorImpl* running_mean = Stats ? tensor_arg(ctx, args, 3, op) : nullptr;
  TensorImpl* running_var = Stats ? tensor_arg(ctx, args, 4, op) : nullptr;
  TensorImpl* out = tensor_arg(ctx, args, 6 + shift, op);
  TensorImpl* save_mean = tensor_arg(ctx, args, 7 + shift, op);
  TensorImpl* save_invstd = tensor_arg(ctx, args, 8 + shift, op);
  if (!in || !out || !save_mean || !save_invstd || (Stats && (!running_mean || !running_var)) ||
      !require_contiguous(ctx, op, {in, weight, bias, running_mean, running_var, out, save_mean, save_invstd})) {
    return;
  }
  if (args[3 + shift]->tag != Tag::kBool) {
    ctx.fail(ErrorCode::kCorrupt, "%s: training is not a bool", op);
    return;
  }
  const bool training = args[3 + shift]->scalar.b;
  const double momentum = args[4 + shift]->scalar_as_double();
  const double eps = args[5 + shift]->scalar_as_double();
  if (in->dim() < 2) {
    ctx.fail(ErrorCode::kInvalidArgument, "%s: input must have at least 2 dimensions", op);
    return;
  }
  const int64_t c = in->size(1);
  for (const TensorImpl* t : {weight, bias, running_mean, running_var}) {
    if (t != nullptr && (t->dim() != 1 || t->size(0) != c)) {
      ctx.fail(ErrorCode::kInvalidArgument, "%s: weight, bias and running statistics must have shape [%lld]", op,
               static_cast<long long>(c));
      return;
    }
  }
  if (!share_dtype(ctx, op, *in, {weight, bias, running_mean, running_var, out, save_mean, save_invstd})) return;
  const bool batch_stats = !Stats || training;
  const int64_t stat_sizes[1] = {batch_stats ? c : 0};
  if (!resize_or_fail(ctx, out, in->sizes(), op) || !resize_or_fail(ctx, save_mean, stat_sizes, op) ||
      !resize_or_fail(ctx, save_invstd, stat_sizes, op)) {
    return;
  }
  const int64_t batch = in->size(0);
  const int64_t inner = in->numel() / std::max<int64_t>(batch * c, 1);
  const int64_t count = batch * inner;
  const bool ok = dispatch_float(in->dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* x = in->data_as<T>();
    T* y = out->data_as<T>();
    for (int64_t ch = 0; ch < c; ++ch) {
      double mean = 0, var = 0;
      if (batch_stats) {
        for (int64_t n = 0; n < batch; ++n) {
          const T* xp = x + (n * c + ch) * inner;
          for (int64_t i = 0; i < inner; ++i) mean += static_cast<double>(xp[i]);
        }
        mean = count > 0 ? mean / static_cast<double>(count) : 0.0;
        for (int64_t n = 0; n < batch; ++n) {
          const T* xp = x + (n * c + ch) * inner;
          for (int64_t i = 0; i < inner; ++i) {
            const double d = static_cast<double>(xp[i]) - mean;
            var += d * d;
          }
        }
        const double sum_sq = var;
        var = count > 0 ? sum_sq / static_cast<double>(count) : 0.0;
        const double invstd = 1.0 / std::sqrt(var + eps);
        save_mean->data_as<T>()[ch] = static_cast<T>(mean);
        save_invstd->data_as<T>()[ch] = static_cast<T>(invstd);
        if (Stats && training) {
          const double unbiased = count > 1 ? sum_sq / static_cast<double>(count - 1) : var;
          T& rm = running_mean->data_as<T>()[ch];
          T& rv = running_var->data_as<T>()[ch];
          rm = static_cast<T>((1.0 - momentum) * static_cast<double>(rm) + momentum * mean);
          rv = static_cast<T>((1.0 - momentum) * static_cast<double>(rv) + momentum * unbiased);
        }
      } else {
        mean = static_cast<double>(running_mean->data_as<T>()[ch]);
        var = static_cast<double>(running_var->data_as<T>()[ch]);
      }
      const double invstd = 1.0 / std::sqrt(var + eps);
      const double w = weight != nullptr ? static_cast<double>(weight->data_as<T>()[ch]) : 1.0;
      const double b = bias != nullptr ? static_cast<double>(bias->data_as<T>()[ch]) : 0.0;
      for (int64_t n = 0; n < batch; ++n) {
        const T* xp = x + (n * c + ch) * inner;
        T* yp = y + (n * c + ch) * inner;
        for (int64_t i = 0; i < inner; ++i) yp[i] = static_cast<T>((static_cast<double>(xp[i]) - mean) * invstd * w + b);
      }
    }
  });
  if (!ok) ctx.fail(ErrorCode::kNotSupported, "%s: only float32 and float64 are supported", op);
}

// native_layer_norm.out(input, normalized_shape, weight?, bias?, eps, out0, out1, out2): each
// group of the trailing dims named by normalized_shape is normalised by its own mean and biased
// variance; out1 (mean) and out2 (rstd = 1 / sqrt(var + eps)) keep input's leading dims and have
// size 1 in the normalised ones. Rows as ExecuTorch computes them: shorter than
// kFloatLayerNormRow in float, longer float rows by Welford's method in 8 lanes; longer float64
// rows with statistics accumulated in double, two passes.
void layer_norm_out(KernelContext& ctx, Args args) {
  const char* op = "native_layer_norm.out";
  if (!check_arg_count(ctx, args, 8, op)) return;
  TensorImpl* in = tensor_arg(ctx, args, 0, op);
  TensorImpl* weight = optional_tensor_arg(args, 2);
  TensorImpl* bias = optional_tensor_arg(args, 3);
  TensorImpl* out = tensor_arg(ctx, args, 5, op);
  TensorImpl* mean_out = tensor_arg(ctx, args, 6, op);
  TensorImpl* rstd_out = tensor_arg(ctx, args, 7, op);
  IntList shape;
  if (!in || !out || !mean_out || !rstd_out || !int_list_arg(ctx, args, 1, &shape, op) ||
      !require_contiguous(ctx, op, {in, weight, bias, out, mean_out, rstd_out})) {
    return;
  }
  const int rank = in->dim();
  const int axis = rank - static_cast<int>(shape.size);
  if (shape.size == 0 || axis < 0) {
    ctx.fail(ErrorCode::kInvalidArgument, "%s: normalized_shape must have 1 to %d items", op, rank);
    return;
  }
  int64_t n = 1;
  for (size_t k = 0; k < shape.size; ++k) {
    if (in->size(axis + static_cast<int>(k)) != shape[k]) {
      ctx.fail(ErrorCode::kInvalidArgument, "%s: input's trailing dims do not match normalized_shape", op);
      return;
    }
    n *= shape[k];
  }
  for (const TensorImpl* t : {weight, bias}) {
    if (t != nullptr && (t->dim() != static_cast<int>(shape.size) ||
                         !std::equal(t->sizes().begin(), t->sizes().end(), shape.span().begin()))) {
      ctx.fail(ErrorCode::kInvalidArgument, "%s: weight and bias must have shape normalized_shape", op);
      return;
    }
  }
  if (!share_dtype(ctx, op, *in, {weight, bias, out, mean_out, rstd_out})) return;
  std::array<int64_t, kMaxDims> stat_sizes{};
  for (int i = 0; i < rank; ++i) stat_sizes[static_cast<size_t>(i)] = i < axis ? in->size(i) : 1;
  const std::span<const int64_t> stat_span{stat_sizes.data(), static_cast<size_t>(rank)};
  if (mean_out->dim() != rank || rstd_out->dim() != rank) {
    ctx.fail(ErrorCode::kInvalidArgument, "%s: mean and rstd outputs must have rank %d", op, rank);
    return;
  }
  if (!resize_or_fail(ctx, out, in->sizes(), op) || !resize_or_fail(ctx, mean_out, stat_span, op) ||
      !resize_or_fail(ctx, rstd_out, stat_span, op)) {
    return;
  }
  const double eps = args[4]->scalar_as_double();
  const int64_t m = n == 0 ? mean_out->numel() : in->numel() / n;
  const bool ok = dispatch_float(in->dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* w = weight != nullptr ? weight->data_as<T>() : nullptr;
    const T* b = bias != nullptr ? bias->data_as<T>() : nullptr;
    for (int64_t r = 0; r < m; ++r) {
      const T* x = in->data_as<T>() + r * n;
      T* y = out->data_as<T>() + r * n;
      if (n > 0 && n < kFloatLayerNormRow) {
        layer_norm_row_in_float(x, w, b, n, static_cast<float>(eps), y, mean_out->data_as<T>() + r, rstd_out->data_as<T>() + r);
        continue;
      }
      if constexpr (std::is_same_v<T, float>) {
        if (n >= kFloatLayerNormRow) {
          layer_norm_row_welford8(x, w, b, n, static_cast<float>(eps), y, mean_out->data_as<T>() + r, rstd_out->data_as<T>() + r);
          continue;
        }
      }
      double mean = 0, rstd = 0;
      mean_rstd(x, n, eps, &mean, &rstd);
      // One loop per combination of weight and bias, so that each vectorises.
      auto centered = [&](int64_t i) { return (static_cast<double>(x[i]) - mean) * rstd; };
      if (w != nullptr && b != nullptr) {
        for (int64_t i = 0; i < n; ++i) y[i] = static_cast<T>(centered(i) * static_cast<double>(w[i]) + static_cast<double>(b[i]));
      } else if (w != nullptr) {
        for (int64_t i = 0; i < n; ++i) y[i] = static_cast<T>(centered(i) * static_cast<double>(w[i]));
      } else if (b != nullptr) {
        for (int64_t i = 0; i < n; ++i) y[i] = static_cast<T>(centered(i) + static_cast<double>(b[i]));
      } else {
        for (int64_t i = 0; i < n; ++i) y[i] = static_cast<T>(centered(i));
      }
      mean_out->data_as<T>()[r] = static_cast<T>(mean);
      rstd_out->data_as<T>()[r] = static_cast<T>(rstd);
    }
  });
  if (!ok) ctx.fail(ErrorCode::kNotSupported, "%s: only float32 and float64 are supported", op);
}

// native_group_norm.out(input, weight?, bias?, N, C, HxW, group, eps, out0, out1, out2): the C
// channels of each sample form `group` groups of C / group channels, each normalised over its
// channels and spatial positions; weight and bias ([C]) scale per channel. out1 (mean) and out2
// (rstd) have shape [N, group].
void group_norm_out(KernelContext& ctx, Args args) {
  const char* op = "native_group_norm.out";
  if (!check_arg_count(ctx, args, 11, op)) return;
  TensorImpl* in = tensor_arg(ctx, args, 0, op);
  TensorImpl* weight = optional_tensor_arg(args, 1);
  TensorImpl* bias = optional_tensor_arg(args, 2);
  TensorImpl* out = tensor_arg(ctx, args, 8, op);
  TensorImpl* mean_out = tensor_arg(ctx, args, 9, op);
  TensorImpl* rstd_out = tensor_arg(ctx, args, 10, op);
  if (!in || !out || !mean_out || !rstd_out || !require_contiguous(ctx, op, {in, weight, bias, out, mean_out, rstd_out})) {
    return;
  }
  for (size_t i = 3; i <= 6; ++i) {
    if (args[i]->tag != Tag::kInt) {
      ctx.fail(ErrorCode::kInvalidArgument, "%s: N, C, HxW and group must be ints", op);
      return;
    }
  }
  const int64_t n = args[3]->scalar.i, c = args[4]->scalar.i, hw = args[5]->scalar.i, groups = args[6]->scalar.i;
  if (in->dim() < 2 || in->size(0) != n || in->size(1) != c || groups <= 0 || c % groups != 0 ||
      (c > 0 && n > 0 && in->numel() != n * c * hw)) {
    ctx.fail(ErrorCode::kInvalidArgument, "%s: input shape disagrees with N, C, HxW or group", op);
    return;
  }
  for (const TensorImpl* t : {weight, bias}) {
    if (t != nullptr && (t->dim() != 1 || t->size(0) != c)) {
      ctx.fail(ErrorCode::kInvalidArgument, "%s: weight and bias must have shape [%lld]", op, static_cast<long long>(c));
      return;
    }
  }
  if (!share_dtype(ctx, op, *in, {weight, bias, out, mean_out, rstd_out})) return;
  const int64_t stat_sizes[2] = {n, groups};
  if (mean_out->dim() != 2 || rstd_out->dim() != 2 || !resize_or_fail(ctx, out, in->sizes(), op) ||
      !resize_or_fail(ctx, mean_out, stat_sizes, op) || !resize_or_fail(ctx, rstd_out, stat_sizes, op)) {
    if (!ctx.failed()) ctx.fail(ErrorCode::kInvalidArgument, "%s: mean and rstd outputs must be 2-D", op);
    return;
  }
  const double eps = args[7]->scalar_as_double();
  const int64_t cg = c / groups, group_size = cg * hw;
  const bool ok = dispatch_float(in->dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* w = weight != nullptr ? weight->data_as<T>() : nullptr;
    const T* b = bias != nullptr ? bias->data_as<T>() : nullptr;
    for (int64_t g = 0; g < n * groups; ++g) {
      const T* x = in->data_as<T>() + g * group_size;
      T* y = out->data_as<T>() + g * group_size;
      double mean = 0, rstd = 0;
      mean_rstd(x, group_size, eps, &mean, &rstd);
      for (int64_t ch = 0; ch < cg; ++ch) {
        const int64_t channel = (g % groups) * cg + ch;
        const double scale = rstd * (w != nullptr ? static_cast<double>(w[channel]) : 1.0);
        const double shift = (b != nullptr ? static_cast<double>(b[channel]) : 0.0) - mean * scale;
        for (int64_t i = ch * hw; i < (ch + 1) * hw; ++i) y[i] = static_cast<T>(static_cast<double>(x[i]) * scale + shift);
      }
      mean_out->data_as<T>()[g] = static_cast<T>(mean);
      rstd_out->data_as<T>()[g] = static_cast<T>(rstd);
    }
  });
  if (!ok) ctx.fail(ErrorCode::kNotSupported, "%s: only float32 and float64 are supported", op);
}

}  // namespace

void register_norm_kernels(KernelRegistry& r) {
  r.add("aten::_native_batch_norm_legit_no_training.out", half_kernel<batch_norm_no_training_out>(kFloatDtypes));
  r.add("aten::_native_batch_norm_legit.out", half_kernel<batch_norm_legit_out<true>>(kFloatDtypes));
  r.add("aten::_native_batch_norm_legit.no_stats_out", half_kernel<batch_norm_legit_out<false>>(kFloatDtypes));
  r.add("aten::native_layer_norm.out", half_kernel<layer_norm_out>(kFloatDtypes));
  r.add("aten::native_group_norm.out", half_kernel<group_norm_out>(kFloatDtypes));
}

}  // namespace etscope::runtime::kernels
