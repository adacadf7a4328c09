// Reading .ptd tensor-data files in both FT01 layouts (formats.md §3).
#include <cstring>

#include "etscope/core/checked.h"
#include "etscope/formats/file_kind.h"
#include "etscope/formats/ptd_reader.h"
#include "etscope_fb/flat_tensor_generated.h"
#include "etscope_fb/flat_tensor_legacy_generated.h"
#include "etscope/flatbuffer_util/flatbuffer_util.h"

namespace etscope {
namespace {

namespace cur = ::etscope::fb::ptd;
namespace leg = ::etscope::fb::ptd_legacy;

constexpr size_t kHeaderOffset = 8;
constexpr uint32_t kHeaderLength = 40;

// Segments as stored are relative to segment_base_offset; turn them into checked absolute ranges.
template <typename SegmentVector>
Status read_segments(const std::string& name, const SegmentVector* segs, TensorDataFile* f) {
  if (segs == nullptr) return ok_status();
  for (size_t i = 0; i < segs->size(); ++i) {
    const auto* s = segs->Get(static_cast<flatbuffers::uoffset_t>(i));
    if (s == nullptr) return make_error(ErrorCode::kCorrupt, "%s: segment %zu is null", name.c_str(), i);
    if (!checked::range_fits(s->offset(), s->size(), f->segment_data_size)) {
      return make_error(ErrorCode::kCorrupt,
                        "%s: segment %zu [%llu, +%llu) exceeds the segment data size %llu",
                        name.c_str(), i, static_cast<unsigned long long>(s->offset()),
                        static_cast<unsigned long long>(s->size()),
                        static_cast<unsigned long long>(f->segment_data_size));
    }
    f->segments.push_back(FileRange{f->segment_base_offset + s->offset(), s->size()});
  }
  return ok_status();
}

Status read_layout(const std::string& what, int8_t dtype, const flatbuffers::Vector<int32_t>* sizes,
                   const flatbuffers::Vector<uint8_t>* dim_order, TensorLayout* out) {
  out->dtype = static_cast<ScalarType>(dtype);
  out->sizes = flatbuffer_util::to_vector<int32_t>(sizes);
  out->dim_order = flatbuffer_util::to_vector<uint8_t>(dim_order);
  ETSCOPE_TRY(flatbuffer_util::tensor_byte_size(what, out->dtype, out->sizes, &out->numel, &out->nbytes));
  return flatbuffer_util::check_dim_order(what, out->dim_order, out->sizes.size());
}

Status read_current(const std::string& name, const uint8_t* data, size_t region, TensorDataFile* f) {
  flatbuffers::Verifier verifier(data, region, flatbuffer_util::verifier_options());
  if (!verifier.VerifyBuffer<cur::FlatTensor>(nullptr)) {
    return make_error(ErrorCode::kCorrupt,
                      "%s: FlatBuffer verification failed: the tensor table is truncated or corrupt",
                      name.c_str());
  }
  const cur::FlatTensor* root = flatbuffers::GetRoot<cur::FlatTensor>(data);
  f->version = root->version();
  ETSCOPE_TRY(read_segments(name, root->segments(), f));
  if (const auto* named = root->named_data()) {
    for (size_t i = 0; i < named->size(); ++i) {
      const cur::NamedData* nd = named->Get(static_cast<flatbuffers::uoffset_t>(i));
      if (nd == nullptr || nd->key() == nullptr) {
        return make_error(ErrorCode::kCorrupt, "%s: entry %zu has no key", name.c_str(), i);
      }
      TensorDataEntry e;
      e.key = nd->key()->str();
      e.segment_index = nd->segment_index();
      if (e.segment_index >= f->segments.size()) {
        return make_error(ErrorCode::kCorrupt, "%s: '%s' refers to segment %u (%zu segments)",
                          name.c_str(), e.key.c_str(), e.segment_index, f->segments.size());
      }
      e.data = f->segments[e.segment_index];
      if (const cur::TensorLayout* l = nd->tensor_layout()) {
        TensorLayout layout;
        ETSCOPE_TRY(read_layout(name + ": '" + e.key + "'", static_cast<int8_t>(l->scalar_type()),
                                l->sizes(), l->dim_order(), &layout));
        if (layout.nbytes > e.data.size) {
          return make_error(ErrorCode::kCorrupt, "%s: '%s' needs %llu bytes but its segment holds %llu",
                            name.c_str(), e.key.c_str(), static_cast<unsigned long long>(layout.nbytes),
                            static_cast<unsigned long long>(e.data.size));
        }
        e.data.size = layout.nbytes;
        e.layout = std::move(layout);
      }
      f->entries.push_back(std::move(e));
    }
  }
  return ok_status();
}

Status read_legacy(const std::string& name, const uint8_t* data, size_t region, TensorDataFile* f) {
  flatbuffers::Verifier verifier(data, region, flatbuffer_util::verifier_options());
  if (!verifier.VerifyBuffer<leg::FlatTensor>(nullptr)) {
    return make_error(ErrorCode::kCorrupt,
                      "%s: FlatBuffer verification failed: the (legacy) tensor table is truncated "
                      "or corrupt", name.c_str());
  }
  const leg::FlatTensor* root = flatbuffers::GetRoot<leg::FlatTensor>(data);
  f->legacy = true;
  f->version = root->version();
  f->tensor_alignment = root->tensor_alignment();
  ETSCOPE_TRY(read_segments(name, root->segments(), f));
  if (const auto* tensors = root->tensors()) {
    for (size_t i = 0; i < tensors->size(); ++i) {
      const leg::TensorMetadata* t = tensors->Get(static_cast<flatbuffers::uoffset_t>(i));
      if (t == nullptr || t->fully_qualified_name() == nullptr) {
        return make_error(ErrorCode::kCorrupt, "%s: tensor %zu has no name", name.c_str(), i);
      }
      TensorDataEntry e;
      e.key = t->fully_qualified_name()->str();
      e.segment_index = t->segment_index();
      TensorLayout layout;
      ETSCOPE_TRY(read_layout(name + ": '" + e.key + "'", static_cast<int8_t>(t->scalar_type()),
                              t->sizes(), t->dim_order(), &layout));
      if (e.segment_index >= f->segments.size()) {
        return make_error(ErrorCode::kCorrupt, "%s: '%s' refers to segment %u (%zu segments)",
                          name.c_str(), e.key.c_str(), e.segment_index, f->segments.size());
      }
      const FileRange& seg = f->segments[e.segment_index];
      if (!checked::range_fits(t->offset(), layout.nbytes, seg.size)) {
        return make_error(ErrorCode::kCorrupt,
                          "%s: '%s' [%llu, +%llu) lies outside its segment (%llu bytes)", name.c_str(),
                          e.key.c_str(), static_cast<unsigned long long>(t->offset()),
                          static_cast<unsigned long long>(layout.nbytes),
                          static_cast<unsigned long long>(seg.size));
      }
      e.data = FileRange{seg.offset + t->offset(), layout.nbytes};
      e.layout = std::move(layout);
      f->entries.push_back(std::move(e));
    }
  }
  if (const auto* named = root->named_data()) {
    for (size_t i = 0; i < named->size(); ++i) {
      const leg::NamedData* nd = named->Get(static_cast<flatbuffers::uoffset_t>(i));
      if (nd == nullptr || nd->key() == nullptr) {
        return make_error(ErrorCode::kCorrupt, "%s: named data %zu has no key", name.c_str(), i);
      }
      if (nd->segment_index() >= f->segments.size()) {
        return make_error(ErrorCode::kCorrupt, "%s: '%s' refers to segment %u (%zu segments)",
                          name.c_str(), nd->key()->c_str(), nd->segment_index(), f->segments.size());
      }
      f->entries.push_back({nd->key()->str(), nd->segment_index(), f->segments[nd->segment_index()], {}});
    }
  }
  return ok_status();
}

}  // namespace

const TensorDataEntry* TensorDataFile::find(const std::string& key) const {
  for (const TensorDataEntry& e : entries) {
    if (e.key == key) return &e;
  }
  return nullptr;
}

Result<TensorDataFile> PtdReader::read(std::shared_ptr<const Blob> blob) {
  const std::string& name = blob->name();
  std::span<const uint8_t> bytes = blob->bytes();
  if (bytes.empty()) return Error(ErrorCode::kTruncated, name + ": file is empty");
  if (bytes.size() < 8) {
    return make_error(ErrorCode::kTruncated, "%s: file is %zu bytes, too short for a tensor-data file",
                      name.c_str(), bytes.size());
  }
  if (std::memcmp(bytes.data() + 4, "FT01", 4) != 0) {
    FileKind kind = sniff_file_kind(bytes);
    if (kind == FileKind::kUnknown) {
      return Error(ErrorCode::kWrongKind, name + ": not a tensor-data file: identifier bytes '" +
                                              printable_identifier(bytes, 4) + "' (expected FT01)");
    }
    return Error(ErrorCode::kWrongKind,
                 name + ": not a tensor-data file (.ptd): this is " + describe_file_kind(kind));
  }
  if (bytes.size() < kHeaderOffset + 8 || std::memcmp(bytes.data() + kHeaderOffset, "FH01", 4) != 0) {
    return Error(ErrorCode::kCorrupt, name + ": FT01 file without the FH01 header that every .ptd has");
  }
  const uint32_t length = checked::load_u32(bytes.data() + 12);
  if (length < kHeaderLength) {
    return make_error(ErrorCode::kCorrupt, "%s: FH01 header length %u is below %u", name.c_str(), length,
                      kHeaderLength);
  }
  if (bytes.size() < kHeaderOffset + kHeaderLength) {
    return make_error(ErrorCode::kTruncated, "%s: file ends inside the FH01 header", name.c_str());
  }
  TensorDataFile f;
  f.blob = blob;
  f.flatbuffer_offset = checked::load_u64(bytes.data() + 16);
  f.flatbuffer_size = checked::load_u64(bytes.data() + 24);
  f.segment_base_offset = checked::load_u64(bytes.data() + 32);
  f.segment_data_size = checked::load_u64(bytes.data() + 40);

  auto region = checked::add(f.flatbuffer_offset, f.flatbuffer_size);
  if (!region || *region > bytes.size()) {
    return make_error(ErrorCode::kTruncated,
                      "%s: file is %zu bytes but its header declares a FlatBuffer region of %llu + %llu bytes",
                      name.c_str(), bytes.size(), static_cast<unsigned long long>(f.flatbuffer_offset),
                      static_cast<unsigned long long>(f.flatbuffer_size));
  }
  if (*region > flatbuffer_util::kMaxFlatBufferSize) {
    return make_error(ErrorCode::kNotSupported, "%s: FlatBuffer region exceeds 2 GiB", name.c_str());
  }
  if (!checked::range_fits(f.segment_base_offset, f.segment_data_size, bytes.size())) {
    return make_error(ErrorCode::kTruncated,
                      "%s: file is %zu bytes but its header declares segment data up to byte %llu",
                      name.c_str(), bytes.size(),
                      static_cast<unsigned long long>(f.segment_base_offset + f.segment_data_size));
  }
  if (f.segment_data_size > 0 && f.segment_base_offset < *region) {
    return make_error(ErrorCode::kCorrupt, "%s: segment data starts inside the FlatBuffer region",
                      name.c_str());
  }

  // Tell the layouts apart by the root table's vtable size, read with explicit bounds checks
  // because the verifier has not run yet.
  const uint32_t root = checked::load_u32(bytes.data());
  if (!checked::range_fits(root, 4, *region)) {
    return make_error(ErrorCode::kCorrupt, "%s: root table offset %u lies outside the FlatBuffer",
                      name.c_str(), root);
  }
  const int32_t soffset = static_cast<int32_t>(checked::load_u32(bytes.data() + root));
  const int64_t vtable = static_cast<int64_t>(root) - soffset;
  if (vtable < 0 || !checked::range_fits(static_cast<uint64_t>(vtable), 2, *region)) {
    return make_error(ErrorCode::kCorrupt, "%s: root vtable lies outside the FlatBuffer", name.c_str());
  }
  const uint16_t vtable_size = static_cast<uint16_t>(bytes[static_cast<size_t>(vtable)] |
                                                     bytes[static_cast<size_t>(vtable) + 1] << 8);
  Status s = vtable_size >= 12 ? read_legacy(name, bytes.data(), static_cast<size_t>(*region), &f)
                               : read_current(name, bytes.data(), static_cast<size_t>(*region), &f);
  if (!s.ok()) return s.error();
  return f;
}

Result<TensorDataFile> PtdReader::open(const std::string& path) {
  ETSCOPE_ASSIGN_OR_RETURN(auto blob, Blob::open_file(path));
  return read(std::move(blob));
}

}  // namespace etscope
