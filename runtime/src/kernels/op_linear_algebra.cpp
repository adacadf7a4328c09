// mm, addmm, bmm: float32 and float64 through the blocked GEMM; mm and bmm also on integer
// operands (as ExecuTorch's portable kernels accept them), with a plain loop that wraps on
// overflow.
#include <algorithm>
#include <type_traits>

#include <array>

#include "kernels/register.h"
#include "kernels/util/half_via_float.h"
#include "kernels/util/gemm.h"
#include "kernels/util/kernel_util.h"

namespace etscope::runtime::kernels {
namespace {

bool float_dtypes(KernelContext& ctx, const char* name, std::initializer_list<const TensorImpl*> ts) {
  const ScalarType t0 = (*ts.begin())->dtype();
  for (const TensorImpl* t : ts) {
    if (t->dtype() != t0 || (t0 != ScalarType::kFloat && t0 != ScalarType::kDouble)) {
      ctx.fail(ErrorCode::kNotSupported, "%s: only float32 or float64 operands of one dtype are supported", name);
      return false;
    }
  }
  return true;
}

bool is_integer_dtype(ScalarType t) {
  return t == ScalarType::kByte || t == ScalarType::kChar || t == ScalarType::kShort || t == ScalarType::kInt ||
         t == ScalarType::kLong;
}

// Integer products of [batch] x [m,k] x [k,n] matrices, when every operand has one integer dtype.
// Returns false (without failing the call) when they do not.
bool integer_matmul(const TensorImpl& a, const TensorImpl& b, TensorImpl& out, int64_t batch, int64_t m, int64_t k,
                    int64_t n) {
  if (!is_integer_dtype(a.dtype()) || b.dtype() != a.dtype() || out.dtype() != a.dtype()) return false;
  return dispatch_real_and_bool(a.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
      using U = std::make_unsigned_t<T>;
      const T* x = a.data_as<T>();
      const T* y = b.data_as<T>();
      T* z = out.data_as<T>();
      for (int64_t p = 0; p < batch; ++p) {
        for (int64_t i = 0; i < m; ++i) {
          for (int64_t j = 0; j < n; ++j) {
            U acc = 0;
            for (int64_t t = 0; t < k; ++t) {
              acc = static_cast<U>(acc + static_cast<U>(static_cast<U>(x[(p * m + i) * k + t]) * static_cast<U>(y[(p * k + t) * n + j])));
            }
            z[(p * m + i) * n + j] = static_cast<T>(acc);
          }
        }
      }
    }
  });
}

// GEMM packing buffers come from scratch (see util/gemm.h); shapes are read at load time.
bool workspace_ok(KernelContext& ctx, const char* name, int64_t m, int64_t n, int64_t k, size_t elem) {
  const size_t need = gemm_workspace_bytes(m, n, k, elem);
  if (ctx.scratch().size() < need) {
    ctx.fail(ErrorCode::kInvalidArgument, "%s: needs %zu bytes of scratch, has %zu (shapes grew past the plan?)", name,
             need, ctx.scratch().size());
    return false;
  }
  return true;
}

// Scratch for a product whose operands are args[ia] ([..., m, k]) and args[ib] ([..., k, n]).
size_t product_scratch(Args args, size_t ia, size_t ib) {
  if (args.size() <= std::max(ia, ib) || !args[ia]->is_tensor() || !args[ib]->is_tensor() || !args[ia]->tensor ||
      !args[ib]->tensor) {
    return 0;
  }
  const TensorImpl& a = *args[ia]->tensor;
  const TensorImpl& b = *args[ib]->tensor;
  if (a.dim() < 2 || b.dim() < 2) return 0;
  return gemm_workspace_bytes(a.size(a.dim() - 2), b.size(b.dim() - 1), a.size(a.dim() - 1), a.element_size());
}
size_t mm_scratch(Args args) { return product_scratch(args, 0, 1); }
size_t addmm_scratch(Args args) { return product_scratch(args, 1, 2); }

// Rows and columns of a product operand stored as given or transposed: [r, c] or [c, r].
template <bool kTrans>
int64_t op_rows(const TensorImpl& t) { return kTrans ? t.size(1) : t.size(0); }
template <bool kTrans>
int64_t op_cols(const TensorImpl& t) { return kTrans ? t.size(0) : t.size(1); }

// mm.out(self, mat2, out). kTA / kTB: the operand arrives stored transposed (a transpose folded
// into the product at load; see fold_transposes in method.cpp).
template <bool kTA, bool kTB>
void mm_impl(KernelContext& ctx, Args args) {
  const char* name = "mm.out";
  if (!check_arg_count(ctx, args, 3, name)) return;
  TensorImpl* a = tensor_arg(ctx, args, 0, name);
  TensorImpl* b = tensor_arg(ctx, args, 1, name);
  TensorImpl* out = tensor_arg(ctx, args, 2, name);
  if (!a || !b || !out || !require_contiguous(ctx, name, {a, b, out})) return;
  if (a->dim() != 2 || b->dim() != 2 || op_cols<kTA>(*a) != op_rows<kTB>(*b)) {
    ctx.fail(ErrorCode::kInvalidArgument, "%s: expected [m,k] x [k,n] matrices", name);
    return;
  }
  const int64_t m = op_rows<kTA>(*a), k = op_cols<kTA>(*a), n = op_cols<kTB>(*b);
  const int64_t sizes[2] = {m, n};
  if constexpr (!kTA && !kTB) {
    if (is_integer_dtype(a->dtype()) && b->dtype() == a->dtype() && out->dtype() == a->dtype()) {
      if (resize_or_fail(ctx, out, sizes, name)) integer_matmul(*a, *b, *out, 1, m, k, n);
      return;
    }
  }
  if (!float_dtypes(ctx, name, {a, b, out}) || !resize_or_fail(ctx, out, sizes, name)) return;
  if (!workspace_ok(ctx, name, m, n, k, a->element_size())) return;
  dispatch_float(a->dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    gemm(kTA, kTB, m, n, k, T(1), a->data_as<T>(), b->data_as<T>(), T(0), out->data_as<T>(), ctx.scratch().data());
  });
}
void mm_out(KernelContext& ctx, Args args) { mm_impl<false, false>(ctx, args); }

// addmm.out(self, mat1, mat2, beta, alpha, out): out = beta * self + alpha * (mat1 @ mat2), with
// self broadcast to [m, n] (usually a bias of shape [n]).
template <bool kTA, bool kTB>
void addmm_impl(KernelContext& ctx, Args args) {
  const char* name = "addmm.out";
  if (!check_arg_count(ctx, args, 6, name)) return;
  TensorImpl* self = tensor_arg(ctx, args, 0, name);
  TensorImpl* a = tensor_arg(ctx, args, 1, name);
  TensorImpl* b = tensor_arg(ctx, args, 2, name);
  TensorImpl* out = tensor_arg(ctx, args, 5, name);
  if (!self || !a || !b || !out || !require_contiguous(ctx, name, {self, a, b, out}) ||
      !float_dtypes(ctx, name, {self, a, b, out})) {
    return;
  }
  if (a->dim() != 2 || b->dim() != 2 || op_cols<kTA>(*a) != op_rows<kTB>(*b)) {
    ctx.fail(ErrorCode::kInvalidArgument, "%s: expected [m,k] x [k,n] matrices", name);
    return;
  }
  const int64_t m = op_rows<kTA>(*a), n = op_cols<kTB>(*b), k = op_cols<kTA>(*a);
  const int64_t sizes[2] = {m, n};
  if (!resize_or_fail(ctx, out, sizes, name)) return;
  const double beta = args[3]->scalar_as_double();
  const double alpha = args[4]->scalar_as_double();
  // self broadcasts to [m, n] from [n], [1, n], [m, 1], [m, n] or a scalar.
  const int64_t srows = self->dim() == 2 ? self->size(0) : 1;
  const int64_t scols = self->dim() >= 1 ? self->size(self->dim() - 1) : 1;
  if ((srows != 1 && srows != m) || (scols != 1 && scols != n) || self->dim() > 2) {
    ctx.fail(ErrorCode::kInvalidArgument, "%s: self does not broadcast to [%lld, %lld]", name,
             static_cast<long long>(m), static_cast<long long>(n));
    return;
  }
  if (a->dtype() == ScalarType::kFloat && prefer_ordered_gemm(m)) {
    // ExecuTorch's own sums, then its combination with self.
    const float* s = self->data_as<float>();
    float* o = out->data_as<float>();
    gemm_ordered(kTA, kTB, m, n, k, a->data_as<float>(), b->data_as<float>(), o);
    for (int64_t i = 0; i < m; ++i) {
      const float* src = s + (srows == 1 ? 0 : i) * scols;  // self's row, as below
      for (int64_t j = 0; j < n; ++j) {
        const float bias = beta == 0.0 ? 0.0f : static_cast<float>(beta) * src[scols == 1 ? 0 : j];
        o[i * n + j] = static_cast<float>(alpha) * o[i * n + j] + bias;
      }
    }
    return;
  }
  if (!workspace_ok(ctx, name, m, n, k, a->element_size())) return;
  dispatch_float(a->dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* s = self->data_as<T>();
    T* o = out->data_as<T>();
    // beta * self broadcast to [m, n], a row at a time (a plain loop per case, so each vectorises).
    const T scale = static_cast<T>(beta);
    for (int64_t i = 0; i < m; ++i) {
      T* row = o + i * n;
      const T* src = s + (srows == 1 ? 0 : i) * scols;
      if (beta == 0.0) {
        std::fill(row, row + n, T(0));
      } else if (scols == 1) {
        std::fill(row, row + n, scale * src[0]);
      } else {
        for (int64_t j = 0; j < n; ++j) row[j] = scale * src[j];
      }
    }
    gemm(kTA, kTB, m, n, k, static_cast<T>(alpha), a->data_as<T>(), b->data_as<T>(), T(1), o, ctx.scratch().data());
  });
}
void addmm_out(KernelContext& ctx, Args args) { addmm_impl<false, false>(ctx, args); }

// linear.out(input [..., k], weight [n, k], bias? [n], out [..., n]): input x weight^T + bias, as
// ExecuTorch's optimized library has it (its LLM flows keep linear undecomposed).
size_t linear_scratch(Args args) {
  if (args.size() < 2 || !args[0]->is_tensor() || !args[1]->is_tensor() || !args[0]->tensor || !args[1]->tensor) return 0;
  const TensorImpl& in = *args[0]->tensor;
  const TensorImpl& w = *args[1]->tensor;
  if (in.dim() < 1 || w.dim() != 2) return 0;
  int64_t m = 1;
  for (int d = 0; d + 1 < in.dim(); ++d) {
    if (__builtin_mul_overflow(m, in.size(d), &m)) return 0;
  }
  return gemm_workspace_bytes(m, w.size(0), in.size(in.dim() - 1), in.element_size());
}

void linear_out(KernelContext& ctx, Args args) {
  const char* name = "linear.out";
  if (!check_arg_count(ctx, args, 4, name)) return;
  TensorImpl* in = tensor_arg(ctx, args, 0, name);
  TensorImpl* w = tensor_arg(ctx, args, 1, name);
  TensorImpl* bias = optional_tensor_arg(args, 2);
  TensorImpl* out = tensor_arg(ctx, args, 3, name);
  if (!in || !w || !out || !require_contiguous(ctx, name, {in, w, bias, out}) || !float_dtypes(ctx, name, {in, w, out}) ||
      (bias != nullptr && !float_dtypes(ctx, name, {in, bias}))) {
    return;
  }
  if (in->dim() < 1 || w->dim() != 2 || in->size(in->dim() - 1) != w->size(1) || out->dim() != in->dim()) {
    ctx.fail(ErrorCode::kInvalidArgument, "%s: expected input [..., k], weight [n, k] and an output of the input's rank", name);
    return;
  }
  const int64_t k = w->size(1), n = w->size(0);
  if (bias != nullptr && bias->numel() != n && bias->numel() != 1) {
    ctx.fail(ErrorCode::kInvalidArgument, "%s: bias has %lld elements for %lld outputs", name,
             static_cast<long long>(bias->numel()), static_cast<long long>(n));
    return;
  }
  std::array<int64_t, kMaxDims> sizes{};
  std::copy(in->sizes().begin(), in->sizes().end(), sizes.begin());
  sizes[static_cast<size_t>(in->dim() - 1)] = n;
  if (!resize_or_fail(ctx, out, std::span<const int64_t>(sizes.data(), static_cast<size_t>(in->dim())), name)) return;
  int64_t m = 1;  // rows: the product of the leading dimensions
  for (int d = 0; d + 1 < in->dim(); ++d) {
    if (__builtin_mul_overflow(m, in->size(d), &m)) {
      ctx.fail(ErrorCode::kInvalidArgument, "%s: the input's leading dimensions overflow", name);
      return;
    }
  }
  if (!workspace_ok(ctx, name, m, n, k, in->element_size())) return;
  dispatch_float(in->dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* o = out->data_as<T>();
    const T* b = bias != nullptr ? bias->data_as<T>() : nullptr;
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) o[i * n + j] = b == nullptr ? T(0) : b[bias->numel() == 1 ? 0 : j];
    }
    gemm(false, true, m, n, k, T(1), in->data_as<T>(), w->data_as<T>(), T(1), o, ctx.scratch().data());
  });
}

// bmm.out(self, mat2, out): batched [b,m,k] x [b,k,n].
void bmm_out(KernelContext& ctx, Args args) {
  const char* name = "bmm.out";
  if (!check_arg_count(ctx, args, 3, name)) return;
  TensorImpl* a = tensor_arg(ctx, args, 0, name);
  TensorImpl* b = tensor_arg(ctx, args, 1, name);
  TensorImpl* out = tensor_arg(ctx, args, 2, name);
  if (!a || !b || !out || !require_contiguous(ctx, name, {a, b, out})) return;
  if (a->dim() != 3 || b->dim() != 3 || a->size(0) != b->size(0) || a->size(2) != b->size(1)) {
    ctx.fail(ErrorCode::kInvalidArgument, "%s: expected [b,m,k] x [b,k,n]", name);
    return;
  }
  const int64_t batch = a->size(0), m = a->size(1), k = a->size(2), n = b->size(2);
  const int64_t sizes[3] = {batch, m, n};
  if (is_integer_dtype(a->dtype()) && b->dtype() == a->dtype() && out->dtype() == a->dtype()) {
    if (resize_or_fail(ctx, out, sizes, name)) integer_matmul(*a, *b, *out, batch, m, k, n);
    return;
  }
  if (!float_dtypes(ctx, name, {a, b, out}) || !resize_or_fail(ctx, out, sizes, name)) return;
  if (!workspace_ok(ctx, name, m, n, k, a->element_size())) return;
  dispatch_float(a->dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    for (int64_t i = 0; i < batch; ++i) {
      gemm(false, false, m, n, k, T(1), a->data_as<T>() + i * m * k, b->data_as<T>() + i * k * n, T(0),
           out->data_as<T>() + i * m * n, ctx.scratch().data());
    }
  });
}

// Scratch of a product whose operands args[ia] and args[ib] arrive as stored (transposed or not).
template <bool kTA, bool kTB, size_t kIA, size_t kIB>
size_t transposed_scratch(Args args) {
  if (args.size() <= std::max(kIA, kIB) || !args[kIA]->is_tensor() || !args[kIB]->is_tensor() || !args[kIA]->tensor ||
      !args[kIB]->tensor || args[kIA]->tensor->dim() != 2 || args[kIB]->tensor->dim() != 2) {
    return 0;
  }
  const TensorImpl& a = *args[kIA]->tensor;
  const TensorImpl& b = *args[kIB]->tensor;
  return gemm_workspace_bytes(op_rows<kTA>(a), op_cols<kTB>(b), op_cols<kTA>(a), a.element_size());
}

template <bool kTA, bool kTB>
Kernel mm_variant() {
  return kernel(mm_impl<kTA, kTB>, kFloatDtypes, transposed_scratch<kTA, kTB, 0, 1>);
}
template <bool kTA, bool kTB>
Kernel addmm_variant() {
  return kernel(addmm_impl<kTA, kTB>, kFloatDtypes, transposed_scratch<kTA, kTB, 1, 2>);
}

}  // namespace

const Kernel* transposed_product_kernel(std::string_view op, bool trans_a, bool trans_b) {
  static const Kernel mm_t[4] = {mm_variant<false, false>(), mm_variant<false, true>(), mm_variant<true, false>(),
                                 mm_variant<true, true>()};
  static const Kernel addmm_t[4] = {addmm_variant<false, false>(), addmm_variant<false, true>(),
                                    addmm_variant<true, false>(), addmm_variant<true, true>()};
  const int which = (trans_a ? 2 : 0) + (trans_b ? 1 : 0);
  if (op == "aten::mm.out") return &mm_t[which];
  if (op == "aten::addmm.out") return &addmm_t[which];
  return nullptr;
}

void register_linear_algebra_kernels(KernelRegistry& r) {
  r.add("aten::mm.out", half_kernel<mm_out, mm_scratch>(kFloatDtypes | kIntDtypes));
  r.add("aten::addmm.out", half_kernel<addmm_out, addmm_scratch>(kFloatDtypes));
  r.add("aten::linear.out", half_kernel<linear_out, linear_scratch>(kFloatDtypes));
  r.add("aten::bmm.out", half_kernel<bmm_out, mm_scratch>(kFloatDtypes | kIntDtypes));
}

}  // namespace etscope::runtime::kernels
