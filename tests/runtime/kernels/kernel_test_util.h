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
#include <vector>

#include "etscope/runtime/kernel.h"

namespace etscope::testing {

/// A tensor that owns its storage. `dynamic` tensors may be resized up to `capacity` elements.
struct TestTensor {
  rt::TensorImpl impl;
  std::vector<uint64_t> storage;  // 8-byte aligned backing store

  template <typename T>
  T* data() {
    return impl.data_as<T>();
  }
};

/// Read access to a kernel's tensor in checks: c.t(v).values<float>() == {...}.
struct TensorRef {
  rt::TensorImpl& impl;

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
  rt::EValue* tensor(ScalarType dtype, std::vector<int64_t> sizes, std::vector<T> values = {},
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
    rt::EValue* v = &values_.emplace_back();
    v->tag = rt::Tag::kTensor;
    v->tensor = &t.impl;
    return v;
  }
  rt::EValue* f32(std::vector<int64_t> sizes, std::vector<float> values = {}, int64_t dyn = 0) {
    return tensor<float>(ScalarType::kFloat, std::move(sizes), std::move(values), dyn);
  }
  rt::EValue* i64(std::vector<int64_t> sizes, std::vector<int64_t> values = {}, int64_t dyn = 0) {
    return tensor<int64_t>(ScalarType::kLong, std::move(sizes), std::move(values), dyn);
  }
  rt::EValue* boolean(std::vector<int64_t> sizes, std::vector<bool> values = {}, int64_t dyn = 0) {
    std::vector<uint8_t> bytes(values.begin(), values.end());
    return tensor<uint8_t>(ScalarType::kBool, std::move(sizes), std::move(bytes), dyn);
  }
  rt::EValue* none() { return &values_.emplace_back(); }
  rt::EValue* integer(int64_t i) {
    rt::EValue* v = &values_.emplace_back();
    v->tag = rt::Tag::kInt;
    v->scalar.i = i;
    return v;
  }
  rt::EValue* dbl(double d) {
    rt::EValue* v = &values_.emplace_back();
    v->tag = rt::Tag::kDouble;
    v->scalar.d = d;
    return v;
  }
  rt::EValue* boolean_scalar(bool b) {
    rt::EValue* v = &values_.emplace_back();
    v->tag = rt::Tag::kBool;
    v->scalar.b = b;
    return v;
  }
  rt::EValue* int_list(std::initializer_list<int64_t> items) {
    auto& ptrs = lists_.emplace_back();
    for (int64_t i : items) ptrs.push_back(integer(i));
    rt::EValue* v = &values_.emplace_back();
    v->tag = rt::Tag::kIntList;
    v->int_list = {ptrs.data(), ptrs.size()};
    return v;
  }
  rt::EValue* bool_list(std::initializer_list<bool> items) {
    auto& bytes = bool_lists_.emplace_back(items.begin(), items.end());
    rt::EValue* v = &values_.emplace_back();
    v->tag = rt::Tag::kBoolList;
    v->bool_list = {bytes.data(), bytes.size()};
    return v;
  }
  rt::EValue* tensor_list(std::initializer_list<rt::EValue*> items) {
    auto& ptrs = tensor_lists_.emplace_back();
    for (rt::EValue* e : items) ptrs.push_back(e == nullptr ? nullptr : e->tensor);
    rt::EValue* v = &values_.emplace_back();
    v->tag = rt::Tag::kTensorList;
    v->tensor_list = {ptrs.data(), ptrs.size()};
    return v;
  }
  TensorRef t(rt::EValue* v) { return {*v->tensor}; }

  /// Runs the portable kernel `name` on `args` with the scratch its ScratchFn asks for. Returns
  /// the context so the test can check failed() and message().
  /// `scratch_bytes` >= 0 overrides the size (to test kernels that must refuse too little).
  rt::KernelContext run(const std::string& name, std::vector<rt::EValue*> args, int64_t scratch_bytes = -1) {
    const rt::Kernel* k = rt::KernelRegistry::portable().find(name);
    REQUIRE(k != nullptr);
    const size_t bytes = scratch_bytes >= 0      ? static_cast<size_t>(scratch_bytes)
                         : k->scratch != nullptr ? k->scratch({args.data(), args.size()})
                                                 : 0;
    scratch_.assign(bytes / 8 + 8, 0);
    rt::KernelContext ctx({reinterpret_cast<uint8_t*>(scratch_.data()), bytes});
    k->run(ctx, {args.data(), args.size()});
    return ctx;
  }

 private:
  std::deque<TestTensor> tensors_;
  std::deque<rt::EValue> values_;
  std::deque<std::vector<rt::EValue*>> lists_;
  std::deque<std::vector<uint8_t>> bool_lists_;
  std::deque<std::vector<rt::TensorImpl*>> tensor_lists_;
  std::vector<uint64_t> scratch_;
};

/// 0, 1, ..., n - 1 as floats: an input whose every element names its position.
inline std::vector<float> ramp(int n) {
  std::vector<float> v(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) v[static_cast<size_t>(i)] = static_cast<float>(i);
  return v;
}

/// A String argument (gelu's `approximate`, div's `rounding_mode`).
inline rt::EValue string_value(const char* s) {
  rt::EValue v;
  v.tag = rt::Tag::kString;
  v.str = s;
  return v;
}

/// Whether the message of a failed kernel call mentions `what`.
inline bool mentions(const rt::KernelContext& ctx, const char* what) {
  return std::string(ctx.message()).find(what) != std::string::npos;
}

}  // namespace etscope::testing
