// Private helpers shared by the readers that sit on generated flatbuffers code.
#pragma once

#include <flatbuffers/flatbuffers.h>

#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <vector>

#include "etscope/formats/program.h"
#include "etscope/core/result.h"

namespace etscope::flatbuffer_util {

/// The largest FlatBuffer region the flatbuffers library can verify.
constexpr uint64_t kMaxFlatBufferSize = FLATBUFFERS_MAX_BUFFER_SIZE - 1;

/// Verifier options used everywhere: generous table limits for large programs, bounded depth.
flatbuffers::Verifier::Options verifier_options();

/// Copies a possibly-null flatbuffers vector of scalars into a std::vector. Elements are read
/// with memcpy: flatbuffers' verifier only checks 4-byte alignment of a vector, so in a corrupt
/// file the elements of an 8-byte vector ([long], [double]) may sit at a misaligned address.
template <typename Out, typename In>
std::vector<Out> to_vector(const flatbuffers::Vector<In>* v) {
  std::vector<Out> out;
  if (v == nullptr) return out;
  out.reserve(v->size());
  const uint8_t* p = v->Data();
  for (flatbuffers::uoffset_t i = 0; i < v->size(); ++i) {
    In x;
    std::memcpy(&x, p + static_cast<size_t>(i) * sizeof(In), sizeof(In));
    out.push_back(static_cast<Out>(flatbuffers::EndianScalar(x)));
  }
  return out;
}

inline std::string to_string(const flatbuffers::String* s) {
  return s == nullptr ? std::string() : s->str();
}

/// The absolute range of a verified vector's payload inside `file` (its first byte is `base`).
template <typename T>
FileRange payload_range(const uint8_t* base, const flatbuffers::Vector<T>* v) {
  if (v == nullptr) return {};
  return FileRange{static_cast<uint64_t>(v->Data() - base), v->size() * sizeof(T)};
}

/// Size in bytes of a table's vtable: used to tell schema layouts apart.
/// `root` must already be verified.
uint16_t root_vtable_size(const uint8_t* buffer_start, const uint8_t* root_table);

/// numel and nbytes of a tensor, or an error naming `what` on negative sizes, unknown dtype or
/// overflow.
Status tensor_byte_size(const std::string& what, ScalarType dtype, std::span<const int32_t> sizes,
                        uint64_t* numel, uint64_t* nbytes);

/// Checks that `dim_order` is a permutation of 0..rank-1.
Status check_dim_order(const std::string& what, std::span<const uint8_t> dim_order, size_t rank);

}  // namespace etscope::flatbuffer_util
