// Helpers for kernel tests: tensors and EValues built by hand, and one call of a registered
// kernel with its load-time scratch.
#pragma once

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdint>
#include <cstring>
#include <deque>
#include <initializer_list>
#include <string>
#include <type_traits>
#include <span>
#include <vector>

#include "etscope/runtime/kernel.h"

namespace etscope::testing {

/// A tensor that owns its storage. `dynamic` tensors may be resized up to `capacity` elements.
struct TestTensor {
  TensorImpl impl;
  std::vector<uint64_t> storage;  // 8-byte aligned backing store

  template <typename T>
  T* data() {
    return impl.data_as<T>();
  }
};

/// Read access to a kernel's tensor in checks: c.t(v).values<float>() == {...}.
struct TensorRef {
  TensorImpl& impl;

  template <typename T>
  std::vector<T> values() const {
    std::vector<T> out(static_cast<size_t>(impl.numel()));
    if constexpr (std::is_same_v<T, bool>) {
      for (size_t i = 0; i < out.size(); ++i) out[i] = impl.data_as<uint8_t>()[i] != 0;
    } else if (!out.empty()) {
      std::memcpy(out.data(), impl.data(), out.size() * sizeof(T));
    }
    return out;
  }
  template <typename T>
  T* data_as() const {
    return impl.data_as<T>();
  }
  void* data() const { return impl.data(); }
  int64_t size(int d) const { return impl.size(d); }
  int64_t numel() const { return impl.numel(); }
  int dim() const { return impl.dim(); }
};

/// Owns every tensor and EValue of one test so that pointers stay valid (deques never move).
class KernelCall {
 public:
  /// A tensor of `dtype` with `sizes` and, optionally, `dim_order`, filled with `values` (converted
  /// to the C++ type T, which must match dtype). Static unless `dynamic_capacity` > 0 elements.
  template <typename T>
  EValue* tensor(ScalarType dtype, std::vector<int64_t> sizes, std::vector<T> values = {},
                     int64_t dynamic_capacity = 0, std::vector<uint8_t> dim_order = {}) {
    TestTensor& t = tensors_.emplace_back();
    int64_t numel = 1;
    for (int64_t s : sizes) numel *= s;
    const int64_t cap = std::max<int64_t>(dynamic_capacity > 0 ? dynamic_capacity : numel, 1);
    t.storage.assign(static_cast<size_t>((cap * static_cast<int64_t>(sizeof(T)) + 7) / 8) + 1, 0);
    REQUIRE(t.impl.init(dtype, sizes, dim_order, dynamic_capacity > 0, static_cast<size_t>(cap) * sizeof(T)).ok());
    t.impl.set_data(t.storage.data());
    if (!values.empty()) {
      REQUIRE(values.size() == static_cast<size_t>(numel));
      if constexpr (std::is_same_v<T, bool>) {
        for (size_t i = 0; i < values.size(); ++i) t.data<bool>()[i] = values[i];
      } else {
        std::memcpy(t.storage.data(), values.data(), values.size() * sizeof(T));
      }
    }
    EValue* v = &values_.emplace_back();
    v->tag = Tag::kTensor;
    v->tensor = &t.impl;
    return v;
  }
  EValue* f32(std::vector<int64_t> sizes, std::vector<float> values = {}, int64_t dyn = 0) {
    return tensor<float>(ScalarType::kFloat, std::move(sizes), std::move(values), dyn);
  }
  EValue* i64(std::vector<int64_t> sizes, std::vector<int64_t> values = {}, int64_t dyn = 0) {
    return tensor<int64_t>(ScalarType::kLong, std::move(sizes), std::move(values), dyn);
  }
  EValue* boolean(std::vector<int64_t> sizes, std::vector<bool> values = {}, int64_t dyn = 0) {
    std::vector<uint8_t> bytes(values.begin(), values.end());
    return tensor<uint8_t>(ScalarType::kBool, std::move(sizes), std::move(bytes), dyn);
  }
  EValue* none() { return &values_.emplace_back(); }
  EValue* integer(int64_t i) {
    EValue* v = &values_.emplace_back();
    v->tag = Tag::kInt;
    v->scalar.i = i;
    return v;
  }
  EValue* dbl(double d) {
    EValue* v = &values_.emplace_back();
    v->tag = Tag::kDouble;
    v->scalar.d = d;
    return v;
  }
  EValue* boolean_scalar(bool b) {
    EValue* v = &values_.emplace_back();
    v->tag = Tag::kBool;
    v->scalar.b = b;
    return v;
  }
  EValue* int_list(std::initializer_list<int64_t> items) { return int_list(std::span<const int64_t>(items.begin(), items.size())); }
  EValue* int_list(std::span<const int64_t> items) {
    auto& ptrs = lists_.emplace_back();
    for (int64_t i : items) ptrs.push_back(integer(i));
    EValue* v = &values_.emplace_back();
    v->tag = Tag::kIntList;
    v->int_list = {ptrs.data(), ptrs.size()};
    return v;
  }
  EValue* bool_list(std::initializer_list<bool> items) {
    auto& bytes = bool_lists_.emplace_back(items.begin(), items.end());
    EValue* v = &values_.emplace_back();
    v->tag = Tag::kBoolList;
    v->bool_list = {bytes.data(), bytes.size()};
    return v;
  }
  EValue* tensor_list(std::initializer_list<EValue*> items) {
    auto& ptrs = tensor_lists_.emplace_back();
    for (EValue* e : items) ptrs.push_back(e == nullptr ? nullptr : e->tensor);
    EValue* v = &values_.emplace_back();
    v->tag = Tag::kTensorList;
    v->tensor_list = {ptrs.data(), ptrs.size()};
    return v;
  }
  TensorRef t(EValue* v) { return {*v->tensor}; }

  /// Runs the portable kernel `name` on `args` with the scratch its ScratchFn asks for. Returns
  /// the context so the test can check failed() and message().
  /// `scratch_bytes` >= 0 overrides the size (to test kernels that must refuse too little).
  runtime::KernelContext run(const std::string& name, std::vector<EValue*> args, int64_t scratch_bytes = -1) {
    const runtime::Kernel* k = runtime::KernelRegistry::portable().find(name);
    REQUIRE(k != nullptr);
    const size_t bytes = scratch_bytes >= 0      ? static_cast<size_t>(scratch_bytes)
                         : k->scratch != nullptr ? k->scratch({args.data(), args.size()})
                                                 : 0;
    scratch_.assign(bytes / 8 + 8, 0);
    runtime::KernelContext ctx({reinterpret_cast<uint8_t*>(scratch_.data()), bytes});
    k->run(ctx, {args.data(), args.size()});
    return ctx;
  }

 private:
  std::deque<TestTensor> tensors_;
  std::deque<EValue> values_;
  std::deque<std::vector<EValue*>> lists_;
  std::deque<std::vector<uint8_t>> bool_lists_;
  std::deque<std::vector<TensorImpl*>> tensor_lists_;
  std::vector<uint64_t> scratch_;
};

/// 0, 1, ..., n - 1 as floats: an input whose every element names its position.
inline std::vector<float> ramp(int n) {
  std::vector<float> v(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) v[static_cast<size_t>(i)] = static_cast<float>(i);
  return v;
}

/// A String argument (gelu's `approximate`, div's `rounding_mode`).
inline EValue string_value(const char* s) {
  EValue v;
  v.tag = Tag::kString;
  v.str = s;
  return v;
}

/// Whether the message of a failed kernel call mentions `what`.
inline bool mentions(const runtime::KernelContext& ctx, const char* what) {
  return std::string(ctx.message()).find(what) != std::string::npos;
}

}  // namespace etscope::testing
