#include "etscope/inspect/logged_tensor.h"

#include <algorithm>

#include "etscope/core/checked.h"

namespace etscope::inspect {

Result<std::span<const uint8_t>> logged_tensor_bytes(const etdump::LoggedTensor& tensor, const Blob& buffer,
                                                     uint64_t nbytes) {
  if (tensor.offset < 0 || !checked::range_fits(static_cast<uint64_t>(tensor.offset), nbytes, buffer.size())) {
    return make_error(ErrorCode::kCorrupt, "%s: logged tensor at offset %lld (%llu bytes) lies outside the debug buffer (%zu bytes)",
                      buffer.name().c_str(), static_cast<long long>(tensor.offset), static_cast<unsigned long long>(nbytes),
                      buffer.size());
  }
  return buffer.bytes().subspan(static_cast<size_t>(tensor.offset), static_cast<size_t>(nbytes));
}

LoggedTensorStats logged_tensor_stats(const etdump::LoggedTensor& tensor, const Blob& buffer, size_t first_n) {
  LoggedTensorStats out;
  auto bytes = logged_tensor_bytes(tensor, buffer, tensor.nbytes);
  if (!bytes.ok()) return out;
  out.in_buffer = true;
  // The element count comes from the dump's sizes; compute_tensor_stats refuses a count the
  // recorded bytes do not hold.
  std::optional<uint64_t> numel = 1;
  for (int64_t s : tensor.sizes) {
    if (numel) numel = checked::mul(*numel, static_cast<uint64_t>(std::max<int64_t>(s, 0)));
  }
  if (numel) out.stats = compute_tensor_stats(tensor.dtype, *bytes, *numel, first_n);
  return out;
}

}  // namespace etscope::inspect
