// Reductions over dimensions: sum, mean, any, var / var_mean, prod, max / min of the whole tensor,
// amax / amin, max.dim / min.dim, argmax / argmin; and the running sum cumsum (a scan along a dim).
#include <cmath>
#include <cstring>
#include <limits>
#if defined(__AVX512F__)
#include <immintrin.h>
#endif

#include "kernels/register.h"
#include "kernels/util/half_via_float.h"
#include "kernels/util/elementwise_util.h"
#include "kernels/util/shape_util.h"

namespace etscope::runtime::kernels {
namespace {

// Which dimensions of a contiguous input are reduced, and the walk over them.
struct ReducePlan {
  int kept = 0, reduced = 0;
  std::array<int64_t, kMaxDims> kept_sizes{}, kept_strides{}, red_sizes{}, red_strides{};
  int64_t out_numel = 1, red_numel = 1;
};

ReducePlan make_plan(const TensorImpl& in, uint32_t mask) {
  ReducePlan p;
  for (int d = 0; d < in.dim(); ++d) {
    if (mask & (1u << d)) {
      p.red_sizes[static_cast<size_t>(p.reduced)] = in.size(d);
      p.red_strides[static_cast<size_t>(p.reduced++)] = in.stride(d);
      p.red_numel *= in.size(d);
    } else {
      p.kept_sizes[static_cast<size_t>(p.kept)] = in.size(d);
      p.kept_strides[static_cast<size_t>(p.kept++)] = in.stride(d);
      p.out_numel *= in.size(d);
    }
  }
  // Reduced dimensions that follow one another in memory walk as one (same elements, same order).
  int merged = 0;
  for (int i = 0; i < p.reduced; ++i) {
    const size_t k = static_cast<size_t>(i);
    if (merged > 0) {
      const size_t m = static_cast<size_t>(merged - 1);
      if (p.red_strides[m] == p.red_strides[k] * p.red_sizes[k]) {
        p.red_sizes[m] *= p.red_sizes[k];
        p.red_strides[m] = p.red_strides[k];
        continue;
      }
    }
    p.red_sizes[static_cast<size_t>(merged)] = p.red_sizes[k];
    p.red_strides[static_cast<size_t>(merged++)] = p.red_strides[k];
  }
  p.reduced = merged;
  return p;
}

// Calls elem(out_index, in_offset) for every input element, grouped by output element in order.
template <typename Begin, typename Elem, typename End>
void for_each_reduction(const ReducePlan& p, Begin begin, Elem elem, End end) {
  std::array<int64_t, kMaxDims> kc{}, rc{};
  int64_t base = 0;
  for (int64_t o = 0; o < p.out_numel; ++o) {
    begin(o);
    if (p.reduced == 1) {
      // One run of equally spaced elements: a plain loop the compiler can unroll.
      const int64_t stride = p.red_strides[0];
      for (int64_t r = 0; r < p.red_numel; ++r) elem(o, base + r * stride);
    } else {
      int64_t off = 0;
      for (int64_t r = 0; r < p.red_numel; ++r) {
        elem(o, base + off);
        for (int d = p.reduced - 1; d >= 0; --d) {
          const size_t i = static_cast<size_t>(d);
          off += p.red_strides[i];
          if (++rc[i] < p.red_sizes[i]) break;
          off -= p.red_strides[i] * rc[i];
          rc[i] = 0;
        }
      }
    }
    end(o);
    for (int d = p.kept - 1; d >= 0; --d) {
      const size_t i = static_cast<size_t>(d);
      base += p.kept_strides[i];
      if (++kc[i] < p.kept_sizes[i]) break;
      base -= p.kept_strides[i] * kc[i];
      kc[i] = 0;
    }
  }
}

// Reads the optional dim list at args[i] (None or [] = every dimension) into a bit mask and
// resizes out to the reduced shape.
bool reduce_dims(KernelContext& ctx, Args args, size_t i, const TensorImpl& in, bool keepdim, TensorImpl* out,
                 uint32_t* mask, const char* op) {
  *mask = 0;
  IntList dims;
  if (args[i]->tag != Tag::kNone && !int_list_arg(ctx, args, i, &dims, op)) return false;
  const int rank = in.dim();
  if (dims.size == 0) {
    *mask = rank == 0 ? 0 : (rank >= 32 ? ~0u : (1u << rank) - 1);
  }
  for (size_t k = 0; k < dims.size; ++k) {
    const int64_t d = normalize_dim(dims[k], rank);
    if (d < 0 || (rank > 0 && (*mask & (1u << d)))) {
      ctx.fail(ErrorCode::kInvalidArgument, "%s: dim %lld is out of range or repeated", op,
               static_cast<long long>(dims[k]));
      return false;
    }
    if (rank > 0) *mask |= 1u << d;
  }
  std::array<int64_t, kMaxDims> sizes{};
  size_t n = 0;
  for (int d = 0; d < rank; ++d) {
    if (*mask & (1u << d)) {
      if (keepdim) sizes[n++] = 1;
    } else {
      sizes[n++] = in.size(d);
    }
  }
  if (out->dim() != static_cast<int>(n)) {
    ctx.fail(ErrorCode::kInvalidArgument, "%s: output has rank %d, the reduction gives rank %zu", op, out->dim(), n);
    return false;
  }
  return resize_or_fail(ctx, out, {sizes.data(), n}, op);
}

// sum / mean: accumulate in int64 for integral outputs; floating outputs in the output's own
// precision (float for float, half and bfloat16 outputs, double for double ones), element by
// element in order, then divided by the count for a mean, as ExecuTorch's portable kernels do:
// their float sums are what an LLM's RMSNorm (mean of squares) rounds, and a dynamically
// quantized layer after it can turn one last-place difference into a different integer.
// `full` is the dim-less overload (self, dtype?, out), which reduces everything to a 0-dim output.
// A float sum or mean over the trailing dimensions (an LLM's RMSNorm: the mean of squares of each
// row): each output's sum still runs element by element in order from 0, but 16 outputs advance
// together, one gathered element each, instead of one output waiting on every add. False (nothing
// written) when the reduced dimensions are not the trailing ones or the build lacks AVX-512.
bool sum_rows_f32(const float* x, float* out, const TensorImpl& in, uint32_t mask, const ReducePlan& plan, bool mean) {
#if defined(__AVX512F__)
  const int rank = in.dim();
  int first = rank;  // the first reduced dimension, if the reduced ones are exactly the trailing ones
  while (first > 0 && (mask & (1u << (first - 1)))) --first;
  if (rank == 0 || first == rank || mask != (((rank >= 32 ? ~0u : (1u << rank) - 1u)) & ~((1u << first) - 1u))) return false;
  const int64_t n = plan.red_numel, rows = plan.out_numel;
  if (n <= 0 || n > (int64_t{1} << 26)) return false;  // lane offsets j * n in int32
  const __m512i lanes = _mm512_mullo_epi32(_mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15), _mm512_set1_epi32(static_cast<int32_t>(n)));
  const __m512 count = _mm512_set1_ps(static_cast<float>(n));
  int64_t o = 0;
  for (; o + 16 <= rows; o += 16) {
    const float* base = x + o * n;
    __m512 acc = _mm512_setzero_ps();
    for (int64_t r = 0; r < n; ++r) acc = _mm512_add_ps(acc, _mm512_mask_i32gather_ps(_mm512_setzero_ps(), 0xffff, lanes, base + r, 4));  // the masked form: GCC 12 warns the plain one reads an undefined register
    _mm512_storeu_ps(out + o, mean ? _mm512_div_ps(acc, count) : acc);
  }
  for (; o < rows; ++o) {
    float acc = 0;
    for (int64_t r = 0; r < n; ++r) acc += x[o * n + r];
    out[o] = mean ? acc / static_cast<float>(n) : acc;
  }
  return true;
#else
  (void)x, (void)out, (void)in, (void)mask, (void)plan, (void)mean;
  return false;
#endif
}

void sum_or_mean(KernelContext& ctx, Args args, bool mean, const char* op, bool full = false) {
  const size_t out_index = full ? 2 : 4, dtype_index = full ? 1 : 3;
  if (!check_arg_count(ctx, args, out_index + 1, op)) return;
  TensorImpl* in = tensor_arg(ctx, args, 0, op);
  TensorImpl* out = tensor_arg(ctx, args, out_index, op);
  if (!in || !out || !require_contiguous(ctx, op, {in, out})) return;
  if (!is_supported_dtype(in->dtype()) || !is_supported_dtype(out->dtype()) || (mean && !is_floating(out->dtype()))) {
    ctx.fail(ErrorCode::kNotSupported, "%s: unsupported dtypes %s -> %s", op, scalar_type_name(in->dtype()).c_str(),
             scalar_type_name(out->dtype()).c_str());
    return;
  }
  if (args[dtype_index]->tag == Tag::kInt && static_cast<ScalarType>(args[dtype_index]->scalar.i) != out->dtype()) {
    ctx.fail(ErrorCode::kInvalidArgument, "%s: dtype argument does not match the output's dtype", op);
    return;
  }
  uint32_t mask = 0;
  if (full) {
    mask = in->dim() == 0 ? 0 : (1u << in->dim()) - 1;
    if (out->dim() != 0) {
      ctx.fail(ErrorCode::kInvalidArgument, "%s: output must be 0-dim", op);
      return;
    }
  } else {
    const bool keepdim = args[2]->tag == Tag::kBool && args[2]->scalar.b;
    if (!reduce_dims(ctx, args, 1, *in, keepdim, out, &mask, op)) return;
  }
  const ReducePlan plan = make_plan(*in, mask);
  if (in->dtype() == ScalarType::kFloat && out->dtype() == ScalarType::kFloat &&
      sum_rows_f32(in->data_as<float>(), out->data_as<float>(), *in, mask, plan, mean)) {
    return;
  }
  dispatch_real_and_bool(in->dtype(), [&](auto in_tag) {
    using I = typename decltype(in_tag)::type;
    const I* x = in->data_as<I>();
    auto run = [&](auto acc_tag) {
      using A = typename decltype(acc_tag)::type;
      A acc = 0;
      for_each_reduction(
          plan, [&](int64_t) { acc = 0; }, [&](int64_t, int64_t off) { acc += static_cast<A>(x[off]); },
          [&](int64_t o) {
            store_from<A>(out->dtype(), out->data(), o, mean ? acc / static_cast<A>(plan.red_numel) : acc);
          });
    };
    if (out->dtype() == ScalarType::kDouble) {
      run(TypeTag<double>{});
    } else if (is_floating(out->dtype())) {
      run(TypeTag<float>{});
    } else {
      run(TypeTag<int64_t>{});
    }
  });
}

// sum.IntList_out(self, dim?, keepdim, dtype?, out)
void sum_intlist_out(KernelContext& ctx, Args args) { sum_or_mean(ctx, args, false, "sum.IntList_out"); }
// mean.out(self, dim?, keepdim, dtype?, out)
void mean_out(KernelContext& ctx, Args args) { sum_or_mean(ctx, args, true, "mean.out"); }
// mean.dtype_out(self, dtype?, out) and sum.out (same arguments): over every element.
void mean_dtype_out(KernelContext& ctx, Args args) { sum_or_mean(ctx, args, true, "mean.dtype_out", true); }
void sum_out(KernelContext& ctx, Args args) { sum_or_mean(ctx, args, false, "sum.out", true); }

// argmax.out(self, dim?, keepdim, out): int64 index of the first maximum; NaN counts as the
// maximum, as in ATen. dim None reduces the flattened tensor.
void argmax_out(KernelContext& ctx, Args args) {
  const char* op = "argmax.out";
  if (!check_arg_count(ctx, args, 4, op)) return;
  TensorImpl* in = tensor_arg(ctx, args, 0, op);
  TensorImpl* out = tensor_arg(ctx, args, 3, op);
  if (!in || !out || !require_contiguous(ctx, op, {in, out})) return;
  if (out->dtype() != ScalarType::kLong || !is_supported_dtype(in->dtype())) {
    ctx.fail(ErrorCode::kNotSupported, "%s: needs a real input and an int64 output", op);
    return;
  }
  if (in->numel() == 0) {
    ctx.fail(ErrorCode::kInvalidArgument, "%s: cannot take the argmax of an empty tensor", op);
    return;
  }
  const bool keepdim = args[2]->tag == Tag::kBool && args[2]->scalar.b;
  uint32_t mask = 0;
  if (args[1]->tag == Tag::kNone) {
    // Flattened: the output is a scalar (or all-ones with keepdim).
    std::array<int64_t, kMaxDims> ones{};
    ones.fill(1);
    const size_t n = keepdim ? static_cast<size_t>(in->dim()) : 0;
    if (out->dim() != static_cast<int>(n)) {
      ctx.fail(ErrorCode::kInvalidArgument, "%s: output rank does not match", op);
      return;
    }
    if (!resize_or_fail(ctx, out, {ones.data(), n}, op)) return;
    mask = in->dim() == 0 ? 0 : (1u << in->dim()) - 1;
  } else {
    if (args[1]->tag != Tag::kInt) {
      ctx.fail(ErrorCode::kInvalidArgument, "%s: dim must be an int or None", op);
      return;
    }
    if (!reduce_dims(ctx, args, 1, *in, keepdim, out, &mask, op)) return;
  }
  const ReducePlan plan = make_plan(*in, mask);
  int64_t* y = out->data_as<int64_t>();
  dispatch_real_and_bool(in->dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* x = in->data_as<T>();
    T best{};
    int64_t count = 0, best_i = 0;
    bool done = false;
    for_each_reduction(
        plan, [&](int64_t) { count = 0, best_i = 0, done = false; },
        [&](int64_t, int64_t off) {
          const T v = x[off];
          if (!done) {
            if (count == 0 || v > best) {
              best = v;
              best_i = count;
            }
            if constexpr (std::is_floating_point_v<T>) {
              if (std::isnan(v)) {
                best_i = count;
                done = true;
              }
            }
          }
          ++count;
        },
        [&](int64_t o) { y[o] = best_i; });
  });
}

// any.all_out(self, out), any.out(self, dim, keepdim, out), any.dims_out(self, dim?, keepdim,
// out): whether any element of the reduced group is non-zero (NaN counts). The output is bool
// (or uint8). any.dims with an empty dim list reduces nothing (out = self != 0); None reduces all.
enum class AnyMode { kAll, kDim, kDims };
template <AnyMode Mode>
void any_out(KernelContext& ctx, Args args) {
  const char* op = Mode == AnyMode::kAll ? "any.all_out" : Mode == AnyMode::kDim ? "any.out" : "any.dims_out";
  const size_t out_index = Mode == AnyMode::kAll ? 1 : 3;
  if (!check_arg_count(ctx, args, out_index + 1, op)) return;
  TensorImpl* in = tensor_arg(ctx, args, 0, op);
  TensorImpl* out = tensor_arg(ctx, args, out_index, op);
  if (!in || !out || !require_contiguous(ctx, op, {in, out})) return;
  if (!is_supported_dtype(in->dtype()) || (out->dtype() != ScalarType::kBool && out->dtype() != ScalarType::kByte)) {
    ctx.fail(ErrorCode::kInvalidArgument, "%s: needs a real or bool input and a bool or uint8 output", op);
    return;
  }
  uint32_t mask = 0;
  if (Mode == AnyMode::kAll) {
    mask = in->dim() == 0 ? 0 : (1u << in->dim()) - 1;
    if (out->dim() != 0 || !resize_or_fail(ctx, out, {}, op)) {
      if (!ctx.failed()) ctx.fail(ErrorCode::kInvalidArgument, "%s: output must be 0-dim", op);
      return;
    }
  } else {
    if (Mode == AnyMode::kDim && args[1]->tag != Tag::kInt) {
      ctx.fail(ErrorCode::kInvalidArgument, "%s: dim must be an int", op);
      return;
    }
    const bool keepdim = args[2]->tag == Tag::kBool && args[2]->scalar.b;
    if (Mode == AnyMode::kDims && args[1]->tag == Tag::kIntList && args[1]->int_list.empty()) {
      if (out->dim() != in->dim() || !resize_or_fail(ctx, out, in->sizes(), op)) {
        if (!ctx.failed()) ctx.fail(ErrorCode::kInvalidArgument, "%s: output must have self's rank", op);
        return;
      }
    } else if (!reduce_dims(ctx, args, 1, *in, keepdim, out, &mask, op)) {
      return;
    }
  }
  const ReducePlan plan = make_plan(*in, mask);
  uint8_t* y = static_cast<uint8_t*>(out->data());
  dispatch_real_and_bool(in->dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* x = in->data_as<T>();
    bool acc = false;
    for_each_reduction(
        plan, [&](int64_t) { acc = false; }, [&](int64_t, int64_t off) { acc |= x[off] != T(0); },
        [&](int64_t o) { y[o] = acc ? 1 : 0; });
  });
}

// var.correction_out(self, dim?, correction?, keepdim, out) and var.out(self, dim?, unbiased,
// keepdim, out): sum((x - mean)^2) / max(0, N - correction), by Welford's update in double.
// correction defaults to 1; unbiased = false means 0.
// var_mean.correction_out(self, dim, correction, keepdim, out0, out1) writes the variance to
// out0 and the mean to out1.
template <bool Correction, bool WithMean = false>
void var_out(KernelContext& ctx, Args args) {
  const char* op = WithMean ? "var_mean.correction_out" : Correction ? "var.correction_out" : "var.out";
  if (!check_arg_count(ctx, args, WithMean ? 6 : 5, op)) return;
  TensorImpl* in = tensor_arg(ctx, args, 0, op);
  TensorImpl* out = tensor_arg(ctx, args, 4, op);
  TensorImpl* mean_out = WithMean ? tensor_arg(ctx, args, 5, op) : nullptr;
  if (!in || !out || (WithMean && !mean_out) || !require_contiguous(ctx, op, {in, out, mean_out})) return;
  if (WithMean && mean_out->dtype() != in->dtype()) {
    ctx.fail(ErrorCode::kInvalidArgument, "%s: the mean output must have self's dtype", op);
    return;
  }
  if (!is_floating(in->dtype()) || in->dtype() != out->dtype() || !is_supported_dtype(in->dtype())) {
    ctx.fail(ErrorCode::kInvalidArgument, "%s: needs float32 or float64 self and out of one dtype", op);
    return;
  }
  double correction = 1.0;
  if (Correction) {
    if (!args[2]->is_none()) correction = args[2]->scalar_as_double();
  } else {
    correction = args[2]->tag == Tag::kBool && !args[2]->scalar.b ? 0.0 : 1.0;
  }
  const bool keepdim = args[3]->tag == Tag::kBool && args[3]->scalar.b;
  uint32_t mask = 0;
  if (!reduce_dims(ctx, args, 1, *in, keepdim, out, &mask, op)) return;
  if (WithMean && !reduce_dims(ctx, args, 1, *in, keepdim, mean_out, &mask, op)) return;
  const ReducePlan plan = make_plan(*in, mask);
  dispatch_float(in->dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* x = in->data_as<T>();
    T* y = out->data_as<T>();
    T* ym = WithMean ? mean_out->data_as<T>() : nullptr;
    double mean = 0, m2 = 0;
    int64_t count = 0;
    for_each_reduction(
        plan, [&](int64_t) { mean = 0, m2 = 0, count = 0; },
        [&](int64_t, int64_t off) {
          const double v = static_cast<double>(x[off]);
          const double delta = v - mean;
          mean += delta / static_cast<double>(++count);
          m2 += delta * (v - mean);
        },
        [&](int64_t o) {
          const double dof = std::max(0.0, static_cast<double>(count) - correction);
          y[o] = static_cast<T>(m2 / dof);
          if constexpr (WithMean) ym[o] = static_cast<T>(count > 0 ? mean : std::nan(""));
        });
  });
}

// prod.out(self, dtype?, out) over everything; prod.int_out(self, dim, keepdim, dtype?, out).
// Integral products wrap (computed in uint64), floating ones accumulate in double.
template <bool Dim>
void prod_out(KernelContext& ctx, Args args) {
  const char* op = Dim ? "prod.int_out" : "prod.out";
  const size_t out_index = Dim ? 4 : 2, dtype_index = Dim ? 3 : 1;
  if (!check_arg_count(ctx, args, out_index + 1, op)) return;
  TensorImpl* in = tensor_arg(ctx, args, 0, op);
  TensorImpl* out = tensor_arg(ctx, args, out_index, op);
  if (!in || !out || !require_contiguous(ctx, op, {in, out})) return;
  if (!is_supported_dtype(in->dtype()) || !is_supported_dtype(out->dtype()) ||
      (args[dtype_index]->tag == Tag::kInt && static_cast<ScalarType>(args[dtype_index]->scalar.i) != out->dtype())) {
    ctx.fail(ErrorCode::kInvalidArgument, "%s: unsupported dtypes or dtype argument not the output's", op);
    return;
  }
  uint32_t mask = 0;
  if (Dim) {
    if (args[1]->tag != Tag::kInt) {
      ctx.fail(ErrorCode::kInvalidArgument, "%s: dim must be an int", op);
      return;
    }
    const bool keepdim = args[2]->tag == Tag::kBool && args[2]->scalar.b;
    if (!reduce_dims(ctx, args, 1, *in, keepdim, out, &mask, op)) return;
  } else {
    mask = in->dim() == 0 ? 0 : (1u << in->dim()) - 1;
    if (out->dim() != 0 || !resize_or_fail(ctx, out, {}, op)) {
      if (!ctx.failed()) ctx.fail(ErrorCode::kInvalidArgument, "%s: output must be 0-dim", op);
      return;
    }
  }
  const ReducePlan plan = make_plan(*in, mask);
  if (is_floating(out->dtype()) || is_floating(in->dtype())) {
    double acc = 1;
    for_each_reduction(
        plan, [&](int64_t) { acc = 1; }, [&](int64_t, int64_t off) { acc *= load_as<double>(in->dtype(), in->data(), off); },
        [&](int64_t o) { store_from<double>(out->dtype(), out->data(), o, acc); });
  } else {
    uint64_t acc = 1;
    for_each_reduction(
        plan, [&](int64_t) { acc = 1; },
        [&](int64_t, int64_t off) { acc *= static_cast<uint64_t>(load_as<int64_t>(in->dtype(), in->data(), off)); },
        [&](int64_t o) {
          int64_t v;
          std::memcpy(&v, &acc, sizeof(v));
          store_from<int64_t>(out->dtype(), out->data(), o, v);
        });
  }
}

// max.unary_out / min.unary_out(self, out): the extreme element as a 0-dim tensor; NaN wins.
template <bool Max>
void extreme_all_out(KernelContext& ctx, Args args) {
  const char* op = Max ? "max.unary_out" : "min.unary_out";
  if (!check_arg_count(ctx, args, 2, op)) return;
  TensorImpl* in = tensor_arg(ctx, args, 0, op);
  TensorImpl* out = tensor_arg(ctx, args, 1, op);
  if (!in || !out || !require_contiguous(ctx, op, {in, out})) return;
  if (in->dtype() != out->dtype() || !is_supported_dtype(in->dtype()) || in->numel() == 0) {
    ctx.fail(ErrorCode::kInvalidArgument, "%s: needs a non-empty self and out of self's dtype", op);
    return;
  }
  if (out->dim() != 0 || !resize_or_fail(ctx, out, {}, op)) {
    if (!ctx.failed()) ctx.fail(ErrorCode::kInvalidArgument, "%s: output must be 0-dim", op);
    return;
  }
  dispatch_real_and_bool(in->dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* x = in->data_as<T>();
    T best = x[0];
    for (int64_t i = 1; i < in->numel(); ++i) {
      if constexpr (std::is_floating_point_v<T>) {
        if (std::isnan(best)) break;
        if (std::isnan(x[i])) {
          best = x[i];
          break;
        }
      }
      if (Max ? x[i] > best : x[i] < best) best = x[i];
    }
    out->data_as<T>()[0] = best;
  });
}

// Splits a contiguous tensor around a dim argument into outer x n x inner.
struct Around {
  int64_t outer = 1, n = 1, inner = 1;
};
bool around_dim(KernelContext& ctx, const TensorImpl& in, const EValue& dim, Around* a, int64_t* d, const char* op) {
  *d = dim.tag == Tag::kInt ? normalize_dim(dim.scalar.i, in.dim()) : -1;
  if (*d < 0) {
    ctx.fail(ErrorCode::kInvalidArgument, "%s: dim is out of range for a rank-%d tensor", op, in.dim());
    return false;
  }
  for (int i = 0; i < in.dim(); ++i) {
    if (i < *d) a->outer *= in.size(i);
    if (i == *d) a->n = in.size(i);
    if (i > *d) a->inner *= in.size(i);
  }
  return true;
}

// cumsum.out(self, dim, dtype?, out): running sums along dim, accumulated in the output's type
// (int64 for integral outputs, double for floating ones).
void cumsum_out(KernelContext& ctx, Args args) {
  const char* op = "cumsum.out";
  if (!check_arg_count(ctx, args, 4, op)) return;
  TensorImpl* in = tensor_arg(ctx, args, 0, op);
  TensorImpl* out = tensor_arg(ctx, args, 3, op);
  if (!in || !out || !require_contiguous(ctx, op, {in, out})) return;
  if (!is_supported_dtype(in->dtype()) || !is_supported_dtype(out->dtype()) || out->dtype() == ScalarType::kBool ||
      (args[2]->tag == Tag::kInt && static_cast<ScalarType>(args[2]->scalar.i) != out->dtype())) {
    ctx.fail(ErrorCode::kInvalidArgument, "%s: unsupported dtypes or dtype argument not the output's", op);
    return;
  }
  Around a;
  int64_t d = 0;
  if (!around_dim(ctx, *in, *args[1], &a, &d, op) || !resize_or_fail(ctx, out, in->sizes(), op)) return;
  auto run = [&](auto acc_tag) {
    using A = typename decltype(acc_tag)::type;
    for (int64_t o = 0; o < a.outer; ++o) {
      for (int64_t i = 0; i < a.inner; ++i) {
        A acc = 0;
        for (int64_t k = 0; k < a.n; ++k) {
          const int64_t at = (o * a.n + k) * a.inner + i;
          acc += load_as<A>(in->dtype(), in->data(), at);
          store_from<A>(out->dtype(), out->data(), at, acc);
        }
      }
    }
  };
  if (is_floating(out->dtype())) {
    run(TypeTag<double>{});
  } else {
    run(TypeTag<int64_t>{});
  }
}

// Extremum along one dim: Mode 0 amax/amin value only, 1 value + index (max.dim / min.dim),
// 2 index only (argmin). NaN wins, as in ATen; ties keep the first index.
template <bool Max>
bool better(auto v, auto best) {
  if constexpr (std::is_floating_point_v<decltype(v)>) {
    if (std::isnan(best)) return false;
    if (std::isnan(v)) return true;
  }
  return Max ? v > best : v < best;
}

// amax.out / amin.out(self, dim[], keepdim, out): reduces several dims at once.
template <bool Max>
void amax_amin_out(KernelContext& ctx, Args args) {
  const char* op = Max ? "amax.out" : "amin.out";
  if (!check_arg_count(ctx, args, 4, op)) return;
  TensorImpl* in = tensor_arg(ctx, args, 0, op);
  TensorImpl* out = tensor_arg(ctx, args, 3, op);
  IntList dims;
  if (!in || !out || !int_list_arg(ctx, args, 1, &dims, op) || !same_dtype(ctx, op, *in, *out)) return;
  const int rank = in->dim();
  uint32_t mask = 0;
  for (size_t k = 0; k < dims.size; ++k) {
    const int64_t d = normalize_dim(dims[k], rank);
    if (d < 0 || (rank > 0 && (mask & (1u << d)))) {
      ctx.fail(ErrorCode::kInvalidArgument, "%s: dim %lld is out of range or repeated", op, static_cast<long long>(dims[k]));
      return;
    }
    if (rank > 0) mask |= 1u << d;
  }
  if (dims.size == 0) mask = rank == 0 ? 0 : (1u << rank) - 1;
  const bool keepdim = args[2]->tag == Tag::kBool && args[2]->scalar.b;
  std::array<int64_t, kMaxDims> sizes{};
  size_t n = 0;
  for (int d = 0; d < rank; ++d) {
    if (mask & (1u << d)) {
      if (in->size(d) == 0) {
        ctx.fail(ErrorCode::kInvalidArgument, "%s: cannot reduce an empty dimension", op);
        return;
      }
      if (keepdim) sizes[n++] = 1;
    } else {
      sizes[n++] = in->size(d);
    }
  }
  if (!rank_is(ctx, op, *out, n) || !resize_or_fail(ctx, out, {sizes.data(), n}, op)) return;
  const bool ok = dispatch_real_and_bool(in->dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* x = in->data_as<T>();
    T* y = out->data_as<T>();
    // Contiguous strides of the output over the kept dims (reduced dims contribute nothing).
    std::array<int64_t, kMaxDims> out_strides{};
    int64_t acc = 1;
    for (int d = rank - 1; d >= 0; --d) {
      if (mask & (1u << d)) continue;
      out_strides[static_cast<size_t>(d)] = acc;
      acc *= in->size(d);
    }
    // Each output starts from the first element of its group (all reduced coordinates 0).
    for_each_coord(in->sizes(), in->numel(), [&](int64_t i, const std::array<int64_t, kMaxDims>& idx) {
      int64_t o = 0;
      bool first = true;
      for (int d = 0; d < rank; ++d) {
        if (mask & (1u << d)) {
          first = first && idx[static_cast<size_t>(d)] == 0;
        } else {
          o += idx[static_cast<size_t>(d)] * out_strides[static_cast<size_t>(d)];
        }
      }
      if (first || better<Max>(x[i], y[o])) y[o] = x[i];
    });
  });
  if (!ok) ctx.fail(ErrorCode::kNotSupported, "%s: unsupported dtype %s", op, scalar_type_name(in->dtype()).c_str());
}

// max.dim_max / min.dim_min(self, dim, keepdim, values, indices) and argmin.out(self, dim?,
// keepdim, out).
template <bool Max, bool WithValues>
void extremum_dim(KernelContext& ctx, Args args) {
  const char* op = WithValues ? (Max ? "max.dim_max" : "min.dim_min") : "argmin.out";
  const size_t n_args = WithValues ? 5 : 4;
  if (!check_arg_count(ctx, args, n_args, op)) return;
  TensorImpl* in = tensor_arg(ctx, args, 0, op);
  TensorImpl* values = WithValues ? tensor_arg(ctx, args, 3, op) : nullptr;
  TensorImpl* indices = tensor_arg(ctx, args, WithValues ? 4 : 3, op);
  if (!in || !indices || (WithValues && !values) || !require_contiguous(ctx, op, {in, values, indices})) return;
  if (indices->dtype() != ScalarType::kLong || !is_supported_dtype(in->dtype()) ||
      (values != nullptr && values->dtype() != in->dtype())) {
    ctx.fail(ErrorCode::kInvalidArgument, "%s: needs int64 indices and values of self's dtype", op);
    return;
  }
  if (in->numel() == 0) {
    ctx.fail(ErrorCode::kInvalidArgument, "%s: cannot reduce an empty tensor", op);
    return;
  }
  const bool keepdim = args[2]->tag == Tag::kBool && args[2]->scalar.b;
  Around a;
  std::array<int64_t, kMaxDims> sizes{};
  size_t n = 0;
  if (!WithValues && args[1]->is_none()) {
    // argmin over the flattened tensor.
    a.n = in->numel();
    if (keepdim) {
      for (int d = 0; d < in->dim(); ++d) sizes[n++] = 1;
    }
  } else {
    int64_t d = 0;
    if (!around_dim(ctx, *in, *args[1], &a, &d, op)) return;
    for (int i = 0; i < in->dim(); ++i) {
      if (i != d) {
        sizes[n++] = in->size(i);
      } else if (keepdim) {
        sizes[n++] = 1;
      }
    }
  }
  if (!rank_is(ctx, op, *indices, n) || !resize_or_fail(ctx, indices, {sizes.data(), n}, op)) return;
  if (values != nullptr && (!rank_is(ctx, op, *values, n) || !resize_or_fail(ctx, values, {sizes.data(), n}, op))) return;
  dispatch_real_and_bool(in->dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* x = in->data_as<T>();
    int64_t* yi = indices->data_as<int64_t>();
    for (int64_t o = 0; o < a.outer; ++o) {
      for (int64_t i = 0; i < a.inner; ++i) {
        const T* base = x + o * a.n * a.inner + i;
        T best = base[0];
        int64_t best_k = 0;
        for (int64_t k = 1; k < a.n; ++k) {
          if (better<Max>(base[k * a.inner], best)) best = base[k * a.inner], best_k = k;
        }
        yi[o * a.inner + i] = best_k;
        if (values != nullptr) values->data_as<T>()[o * a.inner + i] = best;
      }
    }
  });
}

}  // namespace

void register_reduce_kernels(KernelRegistry& r) {
  r.add("aten::sum.IntList_out", half_kernel<sum_intlist_out>(kRealBoolDtypes));
  r.add("aten::mean.out", half_kernel<mean_out>(kRealBoolDtypes));
  r.add("aten::mean.dtype_out", kernel(mean_dtype_out, kRealBoolDtypes));
  r.add("aten::sum.out", half_kernel<sum_out>(kRealBoolDtypes));
  r.add("aten::any.all_out", half_kernel<any_out<AnyMode::kAll>>(kRealBoolDtypes));
  r.add("aten::any.out", half_kernel<any_out<AnyMode::kDim>>(kRealBoolDtypes));
  r.add("aten::any.dims_out", half_kernel<any_out<AnyMode::kDims>>(kRealBoolDtypes));
  r.add("aten::var.correction_out", half_kernel<var_out<true>>(kFloatDtypes));
  r.add("aten::var.out", half_kernel<var_out<false>>(kFloatDtypes));
  r.add("aten::var_mean.correction_out", half_kernel<var_out<true, true>>(kFloatDtypes));
  r.add("aten::prod.out", half_kernel<prod_out<false>>(kRealBoolDtypes));
  r.add("aten::prod.int_out", kernel(prod_out<true>, kRealBoolDtypes));
  r.add("aten::max.unary_out", half_kernel<extreme_all_out<true>>(kRealBoolDtypes));
  r.add("aten::min.unary_out", half_kernel<extreme_all_out<false>>(kRealBoolDtypes));
  r.add("aten::amax.out", half_kernel<amax_amin_out<true>>(kRealBoolDtypes));
  r.add("aten::amin.out", half_kernel<amax_amin_out<false>>(kRealBoolDtypes));
  r.add("aten::max.dim_max", half_kernel<extremum_dim<true, true>>(kRealBoolDtypes));
  r.add("aten::min.dim_min", half_kernel<extremum_dim<false, true>>(kRealBoolDtypes));
  r.add("aten::argmax.out", half_kernel<argmax_out>(kRealDtypes));
  r.add("aten::argmin.out", half_kernel<extremum_dim<false, false>>(kRealBoolDtypes));
  r.add("aten::cumsum.out", half_kernel<cumsum_out>(kRealBoolDtypes));
}

}  // namespace etscope::runtime::kernels
