// Helpers every kernel uses: argument checks, dtype dispatch, int lists, output resizing.
// All of them are allocation-free.
#pragma once

#include <array>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>
#include <span>

#include "etscope/runtime/kernel.h"

namespace etscope::runtime::kernels {

template <typename T>
struct TypeTag {
  using type = T;
};

/// Calls f(TypeTag<T>{}) for the C++ type of `dtype` among the real (non-complex) numeric types
/// and bool. Returns false for other dtypes.
template <typename F>
bool dispatch_real_and_bool(ScalarType dtype, F&& f) {
  switch (dtype) {
    case ScalarType::kFloat: f(TypeTag<float>{}); return true;
    case ScalarType::kDouble: f(TypeTag<double>{}); return true;
    case ScalarType::kLong: f(TypeTag<int64_t>{}); return true;
    case ScalarType::kInt: f(TypeTag<int32_t>{}); return true;
    case ScalarType::kShort: f(TypeTag<int16_t>{}); return true;
    case ScalarType::kChar: f(TypeTag<int8_t>{}); return true;
    case ScalarType::kByte: f(TypeTag<uint8_t>{}); return true;
    case ScalarType::kBool: f(TypeTag<bool>{}); return true;
    default: return false;
  }
}

/// As dispatch_real_and_bool, floating types only (float, double).
template <typename F>
bool dispatch_float(ScalarType dtype, F&& f) {
  switch (dtype) {
    case ScalarType::kFloat: f(TypeTag<float>{}); return true;
    case ScalarType::kDouble: f(TypeTag<double>{}); return true;
    default: return false;
  }
}

/// Fails the call unless it has at least `n` arguments; returns whether it may proceed.
inline bool check_arg_count(KernelContext& ctx, Args args, size_t n, const char* op) {
  if (args.size() < n) {
    ctx.fail(ErrorCode::kCorrupt, "%s: expected at least %zu arguments, got %zu", op, n, args.size());
    return false;
  }
  return true;
}

/// The tensor in args[i], or nullptr after failing the call.
inline TensorImpl* tensor_arg(KernelContext& ctx, Args args, size_t i, const char* op) {
  if (i >= args.size() || args[i]->tag != Tag::kTensor || args[i]->tensor == nullptr) {
    ctx.fail(ErrorCode::kCorrupt, "%s: argument %zu is not a tensor", op, i);
    return nullptr;
  }
  return args[i]->tensor;
}

/// Optional tensor argument: nullptr when None.
inline TensorImpl* optional_tensor_arg(Args args, size_t i) {
  if (i >= args.size() || args[i]->tag != Tag::kTensor) return nullptr;
  return args[i]->tensor;
}

/// A small list of ints read from an IntList (boxed) argument.
struct IntList {
  std::array<int64_t, kMaxDims> values{};
  size_t size = 0;
  int64_t operator[](size_t i) const { return values[i]; }
  std::span<const int64_t> span() const { return {values.data(), size}; }
};

/// Reads args[i] as an IntList (an Int is accepted as a one-element list). Fails the call for
/// other kinds or lists longer than kMaxDims.
inline bool int_list_arg(KernelContext& ctx, Args args, size_t i, IntList* out, const char* op) {
  if (i >= args.size()) {
    ctx.fail(ErrorCode::kCorrupt, "%s: missing argument %zu", op, i);
    return false;
  }
  const EValue& v = *args[i];
  if (v.tag == Tag::kInt) {
    out->values[0] = v.scalar.i;
    out->size = 1;
    return true;
  }
  if (v.tag != Tag::kIntList || v.int_list.size() > static_cast<size_t>(kMaxDims)) {
    ctx.fail(ErrorCode::kCorrupt, "%s: argument %zu is not an int list of at most %d items", op, i, kMaxDims);
    return false;
  }
  out->size = v.int_list.size();
  for (size_t k = 0; k < out->size; ++k) out->values[k] = v.int_list[k]->scalar.i;
  return true;
}

/// Resizes `out` to `sizes`, failing the call if that is impossible.
inline bool resize_or_fail(KernelContext& ctx, TensorImpl* out, std::span<const int64_t> sizes, const char* op) {
  Status s = out->resize(sizes);
  if (!s.ok()) {
    ctx.fail(s.error().code(), "%s: output: %s", op, s.error().message().c_str());
    return false;
  }
  return true;
}

/// Fails the call unless every tensor given is in row-major (contiguous) dim order.
inline bool require_contiguous(KernelContext& ctx, const char* op, std::initializer_list<const TensorImpl*> ts) {
  for (const TensorImpl* t : ts) {
    if (t != nullptr && !t->contiguous()) {
      ctx.fail(ErrorCode::kNotSupported, "%s: only contiguous (row-major) tensors are supported", op);
      return false;
    }
  }
  return true;
}

/// Normalises a possibly negative dimension index against `rank`; -1 on error.
inline int64_t normalize_dim(int64_t d, int64_t rank) {
  const int64_t r = rank == 0 ? 1 : rank;
  if (d < -r || d >= r) return -1;
  return d < 0 ? d + r : d;
}

/// Converts between element types the way ATen's static_cast-based copies do. A floating value
/// outside an integral type's range (or NaN), which would be undefined behaviour for static_cast,
/// saturates (NaN gives 0).
template <typename To, typename From>
inline To convert(From v) {
  if constexpr (std::is_same_v<To, bool>) {
    return v != From(0);
  } else if constexpr (std::is_integral_v<To> && std::is_floating_point_v<From>) {
    if (!(v == v)) return To(0);
    if (v <= static_cast<From>(std::numeric_limits<To>::min())) return std::numeric_limits<To>::min();
    if (v >= static_cast<From>(std::numeric_limits<To>::max())) return std::numeric_limits<To>::max();
    return static_cast<To>(v);
  } else {
    return static_cast<To>(v);
  }
}

}  // namespace etscope::runtime::kernels
