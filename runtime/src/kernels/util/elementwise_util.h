// Elementwise loops over broadcast tensors. Same-dtype operands take a typed fast path; mixed
// dtypes (and half / bfloat16 ones) compute in int64 (all integral) or double (otherwise) and
// convert on store, following ATen's promotion closely enough for the dtypes ExecuTorch programs
// use.
#pragma once

#include <type_traits>

#include "kernels/util/broadcast_util.h"
#include "kernels/util/half.h"
#include "kernels/util/kernel_util.h"

namespace etscope::runtime::kernels {

inline bool is_floating(ScalarType t) {
  return t == ScalarType::kFloat || t == ScalarType::kDouble || t == ScalarType::kHalf || t == ScalarType::kBFloat16;
}

/// Element i of a contiguous tensor's storage, converted to T. Half and bfloat16 elements go
/// through float. Unsupported dtypes read as 0; the callers check dtypes first.
template <typename T>
inline T load_as(ScalarType dtype, const void* base, int64_t i) {
  if (dtype == ScalarType::kHalf) return convert<T>(half_to_float(static_cast<const uint16_t*>(base)[i]));
  if (dtype == ScalarType::kBFloat16) return convert<T>(bfloat16_to_float(static_cast<const uint16_t*>(base)[i]));
  T out{};
  dispatch_real_and_bool(dtype, [&](auto tag) {
    using S = typename decltype(tag)::type;
    out = convert<T>(static_cast<const S*>(base)[i]);
  });
  return out;
}

template <typename T>
inline void store_from(ScalarType dtype, void* base, int64_t i, T v) {
  if (dtype == ScalarType::kHalf) {
    static_cast<uint16_t*>(base)[i] = float_to_half(convert<float>(v));
    return;
  }
  if (dtype == ScalarType::kBFloat16) {
    static_cast<uint16_t*>(base)[i] = float_to_bfloat16(convert<float>(v));
    return;
  }
  dispatch_real_and_bool(dtype, [&](auto tag) {
    using S = typename decltype(tag)::type;
    static_cast<S*>(base)[i] = convert<S>(v);
  });
}

inline bool is_supported_dtype(ScalarType t) {
  return dispatch_real_and_bool(t, [](auto) {});
}

/// The dtypes the elementwise helpers take: the real ones, bool, and half / bfloat16, which
/// compute through float on the mixed-dtype path.
inline bool is_elementwise_dtype(ScalarType t) {
  return is_supported_dtype(t) || t == ScalarType::kHalf || t == ScalarType::kBFloat16;
}

/// A Scalar argument as a 0-dim tensor, for binary_elementwise. ATen's "wrapped number" rule: a
/// scalar does not promote a tensor of its own kind or higher (bool < integral < floating), so
/// it takes the tensor's dtype then (and the same-dtype fast path applies); otherwise it is a
/// long (Int scalar) or double (Double scalar).
class ScalarTensor {
 public:
  ScalarTensor(const EValue& v, ScalarType tensor_dtype) {
    const int scalar_kind = v.tag == Tag::kBool ? 0 : v.tag == Tag::kInt ? 1 : 2;
    const int tensor_kind = tensor_dtype == ScalarType::kBool ? 0 : is_floating(tensor_dtype) ? 2 : 1;
    const ScalarType st = scalar_kind <= tensor_kind && is_supported_dtype(tensor_dtype) ? tensor_dtype
                          : scalar_kind == 2                                            ? ScalarType::kDouble
                                                                                        : ScalarType::kLong;
    init(st);
    if (v.tag == Tag::kInt) {
      store_from<int64_t>(st, storage_, 0, v.scalar.i);
    } else {
      store_from<double>(st, storage_, 0, v.scalar_as_double());
    }
  }
  ScalarTensor(ScalarType dtype, double value) {
    init(dtype);
    store_from<double>(dtype, storage_, 0, value);
  }
  ScalarTensor(const ScalarTensor&) = delete;
  ScalarTensor& operator=(const ScalarTensor&) = delete;

  const TensorImpl& impl() const { return impl_; }

 private:
  void init(ScalarType dtype) {
    (void)impl_.init(dtype, {}, {}, false, sizeof(storage_));
    impl_.set_data(storage_);
  }
  TensorImpl impl_;
  alignas(8) uint8_t storage_[8] = {};
};

/// out = op(a, b) with broadcasting. `op` is a generic callable used at each compute type.
/// Resizes out to the broadcast shape. Returns false (after failing ctx) on error.
template <typename Op>
bool binary_elementwise(KernelContext& ctx, const TensorImpl& a, const TensorImpl& b, TensorImpl& out,
                        const char* name, Op op) {
  if (!require_contiguous(ctx, name, {&a, &b, &out})) return false;
  if (!is_elementwise_dtype(a.dtype()) || !is_elementwise_dtype(b.dtype()) || !is_elementwise_dtype(out.dtype())) {
    ctx.fail(ErrorCode::kNotSupported, "%s: unsupported dtype combination %s, %s -> %s", name,
             scalar_type_name(a.dtype()).c_str(), scalar_type_name(b.dtype()).c_str(),
             scalar_type_name(out.dtype()).c_str());
    return false;
  }
  std::array<int64_t, kMaxDims> shape{};
  int dim = 0;
  if (!broadcast_shape(a.sizes(), b.sizes(), &shape, &dim)) {
    ctx.fail(ErrorCode::kInvalidArgument, "%s: shapes do not broadcast", name);
    return false;
  }
  if (!resize_or_fail(ctx, &out, {shape.data(), static_cast<size_t>(dim)}, name)) return false;
  const int64_t n = out.numel();
  if (a.dtype() == b.dtype() && a.dtype() == out.dtype() && is_supported_dtype(out.dtype())) {
    dispatch_real_and_bool(out.dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* pa = a.data_as<T>();
      const T* pb = b.data_as<T>();
      T* po = out.data_as<T>();
      // Runs along which each operand steps or stays (one run for equal shapes or a scalar b).
      for_each_broadcast_run<2>(out.sizes(), {a.sizes(), b.sizes()}, [&](int64_t o, int64_t len, const auto& in,
                                                                         const auto& step) {
        const T* ra = pa + in[0];
        const T* rb = pb + in[1];
        T* ro = po + o;
        if (step[0] && step[1]) {
          for (int64_t i = 0; i < len; ++i) ro[i] = static_cast<T>(op(ra[i], rb[i]));
        } else if (step[0]) {
          const T vb = rb[0];
          for (int64_t i = 0; i < len; ++i) ro[i] = static_cast<T>(op(ra[i], vb));
        } else if (step[1]) {
          const T va = ra[0];
          for (int64_t i = 0; i < len; ++i) ro[i] = static_cast<T>(op(va, rb[i]));
        } else {
          const T v = static_cast<T>(op(ra[0], rb[0]));
          for (int64_t i = 0; i < len; ++i) ro[i] = v;
        }
      });
    });
    return true;
  }
  const bool integral = !is_floating(a.dtype()) && !is_floating(b.dtype()) && !is_floating(out.dtype());
  auto run = [&](auto tag) {
    using C = typename decltype(tag)::type;
    BroadcastIndex ia(out.sizes(), a.sizes()), ib(out.sizes(), b.sizes());
    for (int64_t i = 0; i < n; ++i, ia.advance(), ib.advance()) {
      const C va = load_as<C>(a.dtype(), a.data(), ia.index());
      const C vb = load_as<C>(b.dtype(), b.data(), ib.index());
      store_from<C>(out.dtype(), out.data(), i, static_cast<C>(op(va, vb)));
    }
  };
  if (integral) {
    run(TypeTag<int64_t>{});
  } else {
    run(TypeTag<double>{});
  }
  return true;
}

/// out = op(a) elementwise (same shape; out resized to a's shape).
template <typename Op>
bool unary_elementwise(KernelContext& ctx, const TensorImpl& a, TensorImpl& out, const char* name, Op op) {
  if (!require_contiguous(ctx, name, {&a, &out})) return false;
  if (!resize_or_fail(ctx, &out, a.sizes(), name)) return false;
  const int64_t n = out.numel();
  if (a.dtype() == out.dtype() && is_supported_dtype(a.dtype())) {
    dispatch_real_and_bool(a.dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* pa = a.data_as<T>();
      T* po = out.data_as<T>();
      for (int64_t i = 0; i < n; ++i) po[i] = static_cast<T>(op(pa[i]));
    });
    return true;
  }
  if (!is_elementwise_dtype(a.dtype()) || !is_elementwise_dtype(out.dtype())) {
    ctx.fail(ErrorCode::kNotSupported, "%s: unsupported dtypes %s -> %s", name, scalar_type_name(a.dtype()).c_str(),
             scalar_type_name(out.dtype()).c_str());
    return false;
  }
  for (int64_t i = 0; i < n; ++i) {
    store_from<double>(out.dtype(), out.data(), i, static_cast<double>(op(load_as<double>(a.dtype(), a.data(), i))));
  }
  return true;
}

}  // namespace etscope::runtime::kernels
