// Element copies shared by the copy, view, shape, factory, index and mask kernels.
#pragma once

#include <algorithm>
#include <array>
#include <cstring>
#include <initializer_list>

#include "kernels/util/elementwise_util.h"

namespace etscope::runtime::kernels {

// Calls f(in_index, out_index) for every element of two tensors of the same sizes, each laid
// out in its own dim order (strides).
template <typename F>
inline void walk_strided(const TensorImpl& in, const TensorImpl& out, F f) {
  const int rank = in.dim();
  std::array<int64_t, kMaxDims> counter{};
  int64_t xi = 0, yi = 0;
  for (int64_t i = 0; i < in.numel(); ++i) {
    f(xi, yi);
    for (int d = rank - 1; d >= 0; --d) {
      xi += in.stride(d), yi += out.stride(d);
      if (++counter[static_cast<size_t>(d)] < in.size(d)) break;
      xi -= in.stride(d) * counter[static_cast<size_t>(d)];
      yi -= out.stride(d) * counter[static_cast<size_t>(d)];
      counter[static_cast<size_t>(d)] = 0;
    }
  }
}

// out = in (same sizes), converting dtypes and honouring both tensors' dim orders (strides).
// Half and bfloat16 convert through double (exact for both).
inline void copy_strided(const TensorImpl& in, TensorImpl& out) {
  const int64_t n = in.numel();
  const bool same_order = std::equal(in.dim_order().begin(), in.dim_order().end(), out.dim_order().begin());
  if (in.dtype() == out.dtype() && same_order) {
    if (out.data() != in.data()) std::memmove(out.data(), in.data(), in.nbytes());
    return;
  }
  if (!is_supported_dtype(in.dtype()) || !is_supported_dtype(out.dtype())) {
    walk_strided(in, out, [&](int64_t xi, int64_t yi) {
      store_from<double>(out.dtype(), out.data(), yi, load_as<double>(in.dtype(), in.data(), xi));
    });
    return;
  }
  dispatch_real_and_bool(in.dtype(), [&](auto in_tag) {
    using I = typename decltype(in_tag)::type;
    dispatch_real_and_bool(out.dtype(), [&](auto out_tag) {
      using O = typename decltype(out_tag)::type;
      const I* x = in.data_as<I>();
      O* y = out.data_as<O>();
      if (same_order) {
        for (int64_t i = 0; i < n; ++i) y[i] = convert<O>(x[i]);
        return;
      }
      walk_strided(in, out, [&](int64_t xi, int64_t yi) { y[yi] = convert<O>(x[xi]); });
    });
  });
}

// Fails the call unless every tensor has a dtype the copies handle (real, bool, half, bfloat16).
inline bool supported(KernelContext& ctx, const char* op, std::initializer_list<const TensorImpl*> ts) {
  for (const TensorImpl* t : ts) {
    if (!is_elementwise_dtype(t->dtype())) {
      ctx.fail(ErrorCode::kNotSupported, "%s: unsupported dtype %s", op, scalar_type_name(t->dtype()).c_str());
      return false;
    }
  }
  return true;
}

// A contiguous copy into an output whose shape the caller has already set.
inline bool same_bytes_copy(KernelContext& ctx, const TensorImpl& in, TensorImpl& out, const char* op) {
  if (in.dtype() != out.dtype() || in.numel() != out.numel()) {
    ctx.fail(ErrorCode::kInvalidArgument, "%s: output dtype or element count does not match", op);
    return false;
  }
  if (out.data() != in.data()) std::memmove(out.data(), in.data(), in.nbytes());
  return true;
}

// The scatters start from out = self.
inline bool copy_self(KernelContext& ctx, const TensorImpl& self, TensorImpl& out, const char* op) {
  if (!resize_or_fail(ctx, &out, self.sizes(), op)) return false;
  if (out.data() != self.data()) std::memmove(out.data(), self.data(), self.nbytes());
  return true;
}

inline void copy_element(const TensorImpl& in, int64_t src, TensorImpl& out, int64_t dst) {
  const size_t es = in.element_size();
  std::memmove(static_cast<uint8_t*>(out.data()) + static_cast<size_t>(dst) * es,
              static_cast<const uint8_t*>(in.data()) + static_cast<size_t>(src) * es, es);
}

}  // namespace etscope::runtime::kernels
