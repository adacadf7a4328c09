// EValue: one runtime value of a method, as the kernels see it.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include "etscope/core/tensor.h"

namespace etscope {

enum class Tag : uint8_t {
  kNone, kInt, kDouble, kBool, kString, kTensor, kIntList, kDoubleList, kBoolList, kTensorList,
  kOptionalTensorList,
};

const char* to_string(Tag tag);

struct EValue {
  Tag tag = Tag::kNone;
  union {
    int64_t i;
    double d;
    bool b;
  } scalar{0};
  TensorImpl* tensor = nullptr;
  std::string_view str;
  /// kIntList: the Int values it refers to ("boxed": their contents may change at run time).
  std::span<EValue* const> int_list;
  std::span<const double> double_list;
  std::span<const uint8_t> bool_list;
  /// kTensorList / kOptionalTensorList: tensors; nullptr stands for None.
  std::span<TensorImpl* const> tensor_list;

  bool is_none() const { return tag == Tag::kNone; }
  bool is_tensor() const { return tag == Tag::kTensor; }
  int64_t to_int() const { return scalar.i; }
  double to_double() const { return scalar.d; }
  bool to_bool() const { return scalar.b; }
  /// A Scalar argument (Int, Double or Bool) as a double.
  double scalar_as_double() const {
    return tag == Tag::kDouble ? scalar.d : tag == Tag::kBool ? (scalar.b ? 1.0 : 0.0) : static_cast<double>(scalar.i);
  }
};

}  // namespace etscope
