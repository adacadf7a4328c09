// TensorImpl: the runtime's view of one tensor: dtype, shape, strides and a data pointer into an
// arena, a constant segment, a .ptd or caller memory. Shapes live in fixed-capacity arrays so
// that resizing during execution never allocates.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>

#include "etscope/core/result.h"
#include "etscope/core/scalar_type.h"

namespace etscope {

/// ExecuTorch's kTensorDimensionLimit.
constexpr int kMaxDims = 16;

class TensorImpl {
 public:
  ScalarType dtype() const { return dtype_; }
  int dim() const { return dim_; }
  std::span<const int64_t> sizes() const { return {sizes_.data(), static_cast<size_t>(dim_)}; }
  std::span<const int64_t> strides() const { return {strides_.data(), static_cast<size_t>(dim_)}; }
  std::span<const uint8_t> dim_order() const { return {dim_order_.data(), static_cast<size_t>(dim_)}; }
  int64_t size(int d) const { return sizes_[static_cast<size_t>(d)]; }
  int64_t stride(int d) const { return strides_[static_cast<size_t>(d)]; }
  int64_t numel() const { return numel_; }
  size_t element_size() const { return element_size_; }
  size_t nbytes() const { return static_cast<size_t>(numel_) * element_size_; }
  /// Bytes the storage can hold: the planned (upper-bound) size.
  size_t capacity() const { return capacity_; }
  bool dynamic() const { return dynamic_; }
  /// True when dim_order is 0, 1, ..., dim-1 (row-major).
  bool contiguous() const;

  void* data() const { return data_; }
  template <typename T>
  T* data_as() const {
    return static_cast<T*>(data_);
  }

  /// Sets dtype, shape and dim order; strides follow from dim order. `capacity` is the storage
  /// size in bytes. Fails on rank > kMaxDims, negative sizes or an invalid dim order.
  Status init(ScalarType dtype, std::span<const int64_t> sizes, std::span<const uint8_t> dim_order,
              bool dynamic, size_t capacity);
  void set_data(void* data) { data_ = data; }

  /// Resizes to `sizes` (same rank). A static tensor accepts only its own sizes; a dynamic one
  /// any sizes whose bytes fit its capacity. Never allocates.
  Status resize(std::span<const int64_t> sizes);

 private:
  void compute_strides();
  /// True when the element size times every size fits in int64 (no size negative).
  bool bytes_fit(std::span<const int64_t> sizes) const;

  ScalarType dtype_ = ScalarType::kFloat;
  int dim_ = 0;
  bool dynamic_ = false;
  size_t element_size_ = 4;
  size_t capacity_ = 0;
  int64_t numel_ = 1;
  std::array<int64_t, kMaxDims> sizes_{};
  std::array<int64_t, kMaxDims> strides_{};
  std::array<uint8_t, kMaxDims> dim_order_{};
  void* data_ = nullptr;
};

}  // namespace etscope
