// Half and bfloat16 tensors through a kernel written for float32: the kernel runs on float32
// copies of every half / bfloat16 tensor argument (kept in the call's scratch memory), and its
// outputs are rounded back once at the end. This is how etscope's non-elementwise kernels
// (convolution, matrix products, norms, pooling, softmax, reductions, resizing) take the half
// types ExecuTorch's portable kernels accept; computing in float32 and rounding once is at least
// as accurate as ExecuTorch's half arithmetic.
//
// Register with `via_float<F, S>` / `via_float_scratch<S>` (see half_kernel() below). Tensor
// arguments and the tensors of the return value are converted; a half tensor inside any other
// tensor list fails the call. A dtype argument that names Half or BFloat16 explicitly still
// refers to the original dtype, so kernels that check such an argument against their output are
// not wrapped.
#pragma once

#include <array>

#include "kernels/register.h"
#include "kernels/util/elementwise_util.h"

namespace etscope::runtime::kernels {
namespace half_detail {

constexpr size_t kMaxArgs = 32;

inline bool is_half(const TensorImpl* t) {
  return t != nullptr && (t->dtype() == ScalarType::kHalf || t->dtype() == ScalarType::kBFloat16);
}

/// Bytes a float32 copy of `t` takes at its capacity, rounded up to 64.
inline size_t float_bytes(const TensorImpl& t) {
  const size_t elements = t.element_size() == 0 ? 0 : t.capacity() / t.element_size();
  return (elements * sizeof(float) + 63) / 64 * 64;
}

/// A call's arguments with every half / bfloat16 tensor replaced by a float32 twin.
class FloatCall {
 public:
  /// Builds the twins; with `scratch` empty their data pointers stay null (load-time sizing).
  /// Returns false with `error` set when the call cannot be converted.
  bool build(Args args, std::span<uint8_t> scratch, const char** error) {
    if (args.size() > kMaxArgs) {
      *error = "too many arguments for the half-precision path";
      return false;
    }
    n_args_ = args.size();
    for (size_t i = 0; i < n_args_; ++i) {
      values_[i] = *args[i];
      ptrs_[i] = &values_[i];
      const bool last = i + 1 == n_args_;
      if (values_[i].tag == Tag::kTensor && is_half(values_[i].tensor)) {
        values_[i].tensor = twin(values_[i].tensor, scratch, error);
        if (values_[i].tensor == nullptr) return false;
      } else if (values_[i].tag == Tag::kTensorList || values_[i].tag == Tag::kOptionalTensorList) {
        const auto list = values_[i].tensor_list;
        bool any_half = false;
        for (TensorImpl* t : list) any_half |= is_half(t);
        if (!any_half) continue;
        if (!last || list.size() > kMaxArgs) {
          *error = "half / bfloat16 tensors in a tensor list are not supported by this kernel";
          return false;
        }
        for (size_t k = 0; k < list.size(); ++k) {
          ret_list_[k] = is_half(list[k]) ? twin(list[k], scratch, error) : list[k];
          if (is_half(list[k]) && ret_list_[k] == nullptr) return false;
        }
        values_[i].tensor_list = std::span<TensorImpl* const>(ret_list_.data(), list.size());
      }
    }
    return true;
  }

  size_t converted() const { return n_twins_; }
  size_t scratch_used() const { return used_; }
  Args args() const { return Args(ptrs_.data(), n_args_); }

  /// Rounds the twins of the call's outputs (the return value's tensors) back into the originals.
  bool write_back(KernelContext& ctx, Args original, const char* op) {
    if (original.empty()) return true;
    const EValue& ret = *original.back();
    if (ret.tag == Tag::kTensor) return write_back_one(ctx, ret.tensor, op);
    if (ret.tag == Tag::kTensorList) {
      for (TensorImpl* t : ret.tensor_list) {
        if (!write_back_one(ctx, t, op)) return false;
      }
    }
    return true;
  }

 private:
  TensorImpl* twin(TensorImpl* t, std::span<uint8_t> scratch, const char** error) {
    for (size_t k = 0; k < n_twins_; ++k) {
      if (originals_[k] == t) return &twins_[k];
    }
    if (n_twins_ == kMaxArgs) {
      *error = "too many half-precision tensors";
      return nullptr;
    }
    const size_t bytes = float_bytes(*t);
    TensorImpl& f = twins_[n_twins_];
    if (!f.init(ScalarType::kFloat, t->sizes(), t->dim_order(), t->dynamic(), bytes).ok()) {
      *error = "cannot describe a float32 copy of a half-precision tensor";
      return nullptr;
    }
    if (!scratch.empty()) {
      if (used_ + bytes > scratch.size()) {
        *error = "scratch space for the float32 copies is too small";
        return nullptr;
      }
      auto* data = reinterpret_cast<float*>(scratch.data() + used_);
      f.set_data(data);
      if (t->data() != nullptr) {
        for (int64_t i = 0; i < t->numel(); ++i) data[i] = load_as<float>(t->dtype(), t->data(), i);
      }
    }
    used_ += bytes;
    originals_[n_twins_++] = t;
    return &f;
  }

  bool write_back_one(KernelContext& ctx, TensorImpl* t, const char* op) {
    if (!is_half(t)) return true;
    for (size_t k = 0; k < n_twins_; ++k) {
      if (originals_[k] != t) continue;
      const TensorImpl& f = twins_[k];
      if (!resize_or_fail(ctx, t, f.sizes(), op)) return false;
      const float* data = f.data_as<float>();
      for (int64_t i = 0; i < t->numel(); ++i) store_from<float>(t->dtype(), t->data(), i, data[i]);
    }
    return true;
  }

  size_t n_args_ = 0, n_twins_ = 0, used_ = 0;
  std::array<EValue, kMaxArgs> values_{};
  std::array<EValue*, kMaxArgs> ptrs_{};
  std::array<TensorImpl*, kMaxArgs> ret_list_{};
  std::array<TensorImpl*, kMaxArgs> originals_{};
  std::array<TensorImpl, kMaxArgs> twins_{};
};

}  // namespace half_detail

/// Scratch of a wrapped call: the float32 copies, then what the float kernel itself needs.
template <ScratchFn S = nullptr>
size_t via_float_scratch(Args args) {
  half_detail::FloatCall call;
  const char* error = nullptr;
  if (!call.build(args, {}, &error)) return 0;  // the call fails with the message at run time
  size_t inner = 0;
  if constexpr (S != nullptr) inner = S(call.converted() == 0 ? args : call.args());
  return call.scratch_used() + inner;
}

/// Runs float kernel F on a call, converting half / bfloat16 tensors as described above.
template <KernelFn F>
void via_float(KernelContext& ctx, Args args) {
  half_detail::FloatCall call;
  const char* error = nullptr;
  if (!call.build(args, ctx.scratch(), &error)) {
    ctx.fail(ErrorCode::kNotSupported, "%s", error);
    return;
  }
  if (call.converted() == 0) {
    F(ctx, args);
    return;
  }
  KernelContext inner(ctx.scratch().subspan(call.scratch_used()));
  F(inner, call.args());
  if (inner.failed()) {
    ctx.fail(inner.error_code(), "%s", inner.message());
    return;
  }
  call.write_back(ctx, args, "half-precision output");
}

/// A float32 kernel that also takes half and bfloat16 through float32 copies.
template <KernelFn F, ScratchFn S = nullptr>
Kernel half_kernel(uint32_t dtypes) {
  return kernel(via_float<F>, dtypes | kHalfDtypes, via_float_scratch<S>);
}

}  // namespace etscope::runtime::kernels
