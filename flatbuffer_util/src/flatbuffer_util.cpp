#include "etscope/flatbuffer_util/flatbuffer_util.h"

#include "etscope/core/checked.h"

namespace etscope::flatbuffer_util {

flatbuffers::Verifier::Options verifier_options() {
  flatbuffers::Verifier::Options options;
  options.max_depth = 64;
  options.max_tables = 100'000'000;
  options.check_alignment = true;
  return options;
}

uint16_t root_vtable_size(const uint8_t* buffer_start, const uint8_t* root_table) {
  (void)buffer_start;
  // The table starts with a signed offset back to its vtable; the vtable's first field is its size.
  int32_t soffset = flatbuffers::ReadScalar<int32_t>(root_table);
  const uint8_t* vtable = root_table - soffset;
  return flatbuffers::ReadScalar<uint16_t>(vtable);
}

Status tensor_byte_size(const std::string& what, ScalarType dtype, std::span<const int32_t> sizes,
                        uint64_t* numel, uint64_t* nbytes) {
  auto elem = element_size(dtype);
  if (!elem) {
    return make_error(ErrorCode::kCorrupt, "%s: scalar type code %d is not a valid ExecuTorch type",
                      what.c_str(), static_cast<int>(dtype));
  }
  uint64_t n = 1;
  for (size_t d = 0; d < sizes.size(); ++d) {
    if (sizes[d] < 0) {
      return make_error(ErrorCode::kCorrupt, "%s: dimension %zu has negative size %d", what.c_str(), d,
                        sizes[d]);
    }
    auto product = checked::mul(n, static_cast<uint64_t>(sizes[d]));
    if (!product) {
      return make_error(ErrorCode::kCorrupt, "%s: element count overflows 64 bits", what.c_str());
    }
    n = *product;
  }
  auto bytes = checked::mul(n, *elem);
  if (!bytes || *bytes > (uint64_t{1} << 62)) {
    return make_error(ErrorCode::kCorrupt, "%s: byte size overflows", what.c_str());
  }
  *numel = n;
  *nbytes = *bytes;
  return ok_status();
}

Status check_dim_order(const std::string& what, std::span<const uint8_t> dim_order, size_t rank) {
  if (dim_order.size() != rank) {
    return make_error(ErrorCode::kCorrupt, "%s: dim_order has %zu entries for a rank-%zu tensor",
                      what.c_str(), dim_order.size(), rank);
  }
  uint64_t seen = 0;
  for (uint8_t d : dim_order) {
    if (d >= rank || d >= 64 || (seen & (uint64_t{1} << d))) {
      return make_error(ErrorCode::kCorrupt, "%s: dim_order is not a permutation of 0..%zu",
                        what.c_str(), rank == 0 ? 0 : rank - 1);
    }
    seen |= uint64_t{1} << d;
  }
  return ok_status();
}

}  // namespace etscope::flatbuffer_util
