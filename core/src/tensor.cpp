#include "etscope/core/tensor.h"

#include "etscope/core/evalue.h"

namespace etscope {

bool TensorImpl::contiguous() const {
  for (int d = 0; d < dim_; ++d) {
    if (dim_order_[static_cast<size_t>(d)] != d) return false;
  }
  return true;
}

void TensorImpl::compute_strides() {
  // Walk dim_order from innermost to outermost, accumulating the running product.
  int64_t running = 1;
  for (int i = dim_ - 1; i >= 0; --i) {
    const uint8_t d = dim_order_[static_cast<size_t>(i)];
    strides_[d] = running;
    running *= sizes_[d];
  }
  numel_ = 1;
  for (int d = 0; d < dim_; ++d) numel_ *= sizes_[static_cast<size_t>(d)];
}

Status TensorImpl::init(ScalarType dtype, std::span<const int64_t> sizes, std::span<const uint8_t> dim_order,
                        bool dynamic, size_t capacity) {
  if (sizes.size() > static_cast<size_t>(kMaxDims)) {
    return make_error(ErrorCode::kNotSupported, "tensor rank %zu exceeds %d", sizes.size(), kMaxDims);
  }
  auto elem = ::etscope::element_size(dtype);
  if (!elem) return make_error(ErrorCode::kCorrupt, "invalid scalar type %d", static_cast<int>(dtype));
  dtype_ = dtype;
  element_size_ = *elem;
  dim_ = static_cast<int>(sizes.size());
  dynamic_ = dynamic;
  capacity_ = capacity;
  uint32_t seen = 0;
  for (size_t i = 0; i < sizes.size(); ++i) {
    if (sizes[i] < 0) return make_error(ErrorCode::kCorrupt, "negative size %lld", static_cast<long long>(sizes[i]));
    sizes_[i] = sizes[i];
    const uint8_t d = dim_order.size() == sizes.size() ? dim_order[i] : static_cast<uint8_t>(i);
    if (d >= sizes.size() || (seen & (1u << d))) return Error(ErrorCode::kCorrupt, "invalid dim order");
    seen |= 1u << d;
    dim_order_[i] = d;
  }
  // Sizes come from files and options: their product (in bytes) must fit before strides and numel
  // are computed in int64.
  if (!bytes_fit(sizes)) return Error(ErrorCode::kCorrupt, "tensor sizes whose product overflows");
  compute_strides();
  return ok_status();
}

bool TensorImpl::bytes_fit(std::span<const int64_t> sizes) const {
  uint64_t bytes = element_size_;
  for (int64_t s : sizes) {
    if (s < 0 || __builtin_mul_overflow(bytes, static_cast<uint64_t>(s), &bytes)) return false;
  }
  // numel and strides are int64: keep the element count (not only the bytes) below 2^63.
  return bytes <= static_cast<uint64_t>(INT64_MAX);
}

Status TensorImpl::resize(std::span<const int64_t> sizes) {
  if (static_cast<int>(sizes.size()) != dim_) {
    return make_error(ErrorCode::kNotSupported, "cannot resize a rank-%d tensor to rank %zu", dim_, sizes.size());
  }
  bool same = true;
  for (int d = 0; d < dim_; ++d) {
    if (sizes[static_cast<size_t>(d)] < 0) return Error(ErrorCode::kInvalidArgument, "negative size in resize");
    same &= sizes[static_cast<size_t>(d)] == sizes_[static_cast<size_t>(d)];
  }
  if (same) return ok_status();
  if (!dynamic_) return Error(ErrorCode::kNotSupported, "cannot change the sizes of a static tensor");
  // Checked: a shape whose byte count wraps around 2^64 must not pass as a small one.
  uint64_t bytes = element_size_;
  for (int d = 0; d < dim_; ++d) {
    if (__builtin_mul_overflow(bytes, static_cast<uint64_t>(sizes[static_cast<size_t>(d)]), &bytes)) bytes = UINT64_MAX;
  }
  if (bytes > capacity_) {
    return Error(ErrorCode::kNotSupported, "resize beyond the tensor's planned capacity");
  }
  for (int d = 0; d < dim_; ++d) sizes_[static_cast<size_t>(d)] = sizes[static_cast<size_t>(d)];
  compute_strides();
  return ok_status();
}

const char* to_string(Tag tag) {
  switch (tag) {
    case Tag::kNone: return "None";
    case Tag::kInt: return "Int";
    case Tag::kDouble: return "Double";
    case Tag::kBool: return "Bool";
    case Tag::kString: return "String";
    case Tag::kTensor: return "Tensor";
    case Tag::kIntList: return "IntList";
    case Tag::kDoubleList: return "DoubleList";
    case Tag::kBoolList: return "BoolList";
    case Tag::kTensorList: return "TensorList";
    case Tag::kOptionalTensorList: return "OptionalTensorList";
  }
  return "?";
}

}  // namespace etscope
