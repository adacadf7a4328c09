// Writing .ptd files in the current FT01 layout (formats.md §3), as ExecuTorch's
// FlatTensorSerializer does: header inserted after the identifier, one aligned segment per tensor.
#include "etscope/formats/ptd_writer.h"

#include <cstring>
#include <set>

#include "etscope/core/checked.h"
#include "etscope_fb/flat_tensor_generated.h"

namespace etscope {
namespace {

namespace fbt = ::etscope::fb::ptd;

constexpr uint32_t kHeaderLength = 40;        // "FH01", length, 4 x uint64
constexpr uint32_t kPaddedHeaderLength = 48;  // aligned to the FlatBuffer alignment, 16

Status check_tensor(const PtdTensor& t, std::set<std::string>* keys) {
  const std::string what = "ptd writer: '" + t.key + "'";
  if (t.key.empty()) return Error(ErrorCode::kInvalidArgument, "ptd writer: a tensor has an empty key");
  if (!keys->insert(t.key).second) return Error(ErrorCode::kInvalidArgument, what + " appears twice");
  const auto element = element_size(t.dtype);
  if (!element) return Error(ErrorCode::kInvalidArgument, what + ": unsupported dtype");
  std::optional<uint64_t> bytes = *element;
  for (int32_t s : t.sizes) {
    if (s < 0) return Error(ErrorCode::kInvalidArgument, what + ": negative size");
    bytes = bytes ? checked::mul(*bytes, static_cast<uint64_t>(s)) : std::nullopt;
  }
  if (!bytes || *bytes != t.data.size()) {
    return Error(ErrorCode::kInvalidArgument, what + ": its sizes do not describe its " +
                                                  std::to_string(t.data.size()) + " bytes");
  }
  if (!t.dim_order.empty()) {
    std::vector<bool> seen(t.sizes.size(), false);
    bool ok = t.dim_order.size() == t.sizes.size();
    for (uint8_t d : t.dim_order) {
      ok = ok && d < seen.size() && !seen[d];
      if (ok) seen[d] = true;
    }
    if (!ok) return Error(ErrorCode::kInvalidArgument, what + ": invalid dim order");
  }
  return ok_status();
}

}  // namespace

Result<std::vector<uint8_t>> PtdWriter::write(const std::vector<PtdTensor>& tensors, const PtdWriterOptions& opt) {
  if (opt.segment_alignment == 0 || (opt.segment_alignment & (opt.segment_alignment - 1)) != 0) {
    return Error(ErrorCode::kInvalidArgument, "ptd writer: the segment alignment must be a power of two");
  }
  std::set<std::string> keys;
  for (const PtdTensor& t : tensors) ETSCOPE_TRY(check_tensor(t, &keys));

  // Segments: each tensor's bytes at the next aligned offset after the previous segment's end.
  std::vector<uint64_t> offsets;
  uint64_t cursor = 0;
  for (const PtdTensor& t : tensors) {
    const auto at = checked::align_up(cursor, opt.segment_alignment);
    const auto end = at ? checked::add(*at, t.data.size()) : std::nullopt;
    if (!end) return Error(ErrorCode::kInvalidArgument, "ptd writer: the tensors' total size overflows");
    offsets.push_back(*at);
    cursor = *end;
  }
  const uint64_t segment_data_size = cursor;

  flatbuffers::FlatBufferBuilder b;
  std::vector<flatbuffers::Offset<fbt::DataSegment>> segments;
  std::vector<flatbuffers::Offset<fbt::NamedData>> named;
  for (size_t i = 0; i < tensors.size(); ++i) {
    segments.push_back(fbt::CreateDataSegment(b, offsets[i], tensors[i].data.size()));
  }
  for (size_t i = 0; i < tensors.size(); ++i) {
    const PtdTensor& t = tensors[i];
    std::vector<uint8_t> order = t.dim_order;
    if (order.empty()) {
      for (size_t d = 0; d < t.sizes.size(); ++d) order.push_back(static_cast<uint8_t>(d));
    }
    // One sub-object per statement: the evaluation order of a call's arguments is unspecified
    // (GCC and clang differ), and it decides the buffer's layout. This order gives the sizes
    // ExecuTorch's writer gives.
    const auto dim_order = b.CreateVector(order);
    const auto sizes = b.CreateVector(t.sizes);
    const auto layout = fbt::CreateTensorLayout(b, static_cast<fb::ScalarType>(t.dtype), sizes, dim_order);
    const auto key = b.CreateString(t.key);
    named.push_back(fbt::CreateNamedData(b, key, static_cast<uint32_t>(i), layout));
  }
  const auto named_vector = b.CreateVector(named);
  const auto segment_vector = b.CreateVector(segments);
  const auto root = fbt::CreateFlatTensor(b, 0, segment_vector, named_vector);
  fbt::FinishFlatTensorBuffer(b, root);
  const uint8_t* fbuf = b.GetBufferPointer();
  const uint64_t fsize = b.GetSize();

  // The header goes after the root offset and the identifier; the root offset moves by as much.
  const auto base = checked::align_up(fsize + kPaddedHeaderLength, opt.segment_alignment);
  const auto total = base ? checked::add(*base, segment_data_size) : std::nullopt;
  if (!total) return Error(ErrorCode::kInvalidArgument, "ptd writer: the file size overflows");
  std::vector<uint8_t> out(static_cast<size_t>(*total), 0);
  const uint32_t root_offset = flatbuffers::ReadScalar<uint32_t>(fbuf) + kPaddedHeaderLength;
  const uint64_t flatbuffer_offset = kPaddedHeaderLength;
  std::memcpy(out.data(), &root_offset, 4);
  std::memcpy(out.data() + 4, fbuf + 4, 4);
  std::memcpy(out.data() + 8, "FH01", 4);
  std::memcpy(out.data() + 12, &kHeaderLength, 4);
  std::memcpy(out.data() + 16, &flatbuffer_offset, 8);
  std::memcpy(out.data() + 24, &fsize, 8);
  std::memcpy(out.data() + 32, &*base, 8);
  std::memcpy(out.data() + 40, &segment_data_size, 8);
  std::memcpy(out.data() + 8 + kPaddedHeaderLength, fbuf + 8, static_cast<size_t>(fsize - 8));
  for (size_t i = 0; i < tensors.size(); ++i) {
    if (!tensors[i].data.empty()) {
      std::memcpy(out.data() + *base + offsets[i], tensors[i].data.data(), tensors[i].data.size());
    }
  }
  return out;
}

}  // namespace etscope
