#include "etscope/etdump/etdump_reader.h"

#include <algorithm>

#include <cstring>
#include <string_view>
#include <unordered_map>

#include "etscope/core/checked.h"
#include "etscope/core/event_names.h"
#include "etscope/formats/file_kind.h"
#include "etscope_fb/etdump_generated.h"
#include "etscope/flatbuffer_util/flatbuffer_util.h"

namespace etscope::etdump {
namespace efb = ::etscope::fb::etdump;

bool EtDumpFile::is_marker(const Event& e) const {
  return e.kind == EventKind::kProfile && !e.delegate && e.ref < names.size() && events::is_marker_name(names[e.ref]);
}

const std::string& EtDumpFile::name_of(const Event& e) const {
  static const std::string kEmpty;
  if (e.kind != EventKind::kProfile) return kEmpty;
  uint32_t n = e.delegate ? delegate_refs[e.ref].name : e.ref;
  return n < names.size() ? names[n] : kEmpty;
}

namespace {

Status read_tensor(const std::string& what, const efb::Tensor* t, LoggedTensor* out) {
  if (t == nullptr) return Error(ErrorCode::kCorrupt, what + ": tensor value without a tensor");
  out->dtype = static_cast<ScalarType>(static_cast<int8_t>(t->scalar_type()));
  out->sizes = flatbuffer_util::to_vector<int64_t>(t->sizes());
  out->strides = flatbuffer_util::to_vector<int64_t>(t->strides());
  out->offset = t->offset();
  auto elem = element_size(out->dtype);
  if (!elem) return make_error(ErrorCode::kCorrupt, "%s: scalar type code %d is not valid", what.c_str(), static_cast<int>(out->dtype));
  uint64_t n = 1;
  for (int64_t s : out->sizes) {
    auto p = s < 0 ? std::nullopt : checked::mul(n, static_cast<uint64_t>(s));
    if (!p) return Error(ErrorCode::kCorrupt, what + ": invalid tensor sizes");
    n = *p;
  }
  auto bytes = checked::mul(n, *elem);
  if (!bytes) return Error(ErrorCode::kCorrupt, what + ": tensor byte size overflows");
  out->nbytes = *bytes;
  return ok_status();
}

}  // namespace

Result<EtDumpFile> EtDumpReader::read(std::shared_ptr<const Blob> blob) {
  const std::string& name = blob->name();
  std::span<const uint8_t> bytes = blob->bytes();
  if (bytes.empty()) return Error(ErrorCode::kTruncated, name + ": file is empty");
  if (bytes.size() < 8) return Error(ErrorCode::kTruncated, name + ": file is too short for an ETDump");
  EtDumpFile out;
  out.blob = blob;
  const uint8_t* root_base = nullptr;
  size_t region = 0;
  if (bytes.size() >= 12 && std::memcmp(bytes.data() + 8, "ED00", 4) == 0) {
    const uint32_t prefix = checked::load_u32(bytes.data());
    if (static_cast<uint64_t>(prefix) + 4 > bytes.size()) {
      return make_error(ErrorCode::kTruncated, "%s: size prefix says %u bytes follow, the file has %zu", name.c_str(), prefix,
                        bytes.size() - 4);
    }
    // ExecuTorch writes exactly the prefixed buffer. Bytes past it mean a torn or concatenated
    // file (two writers of one path): refuse them rather than read the front and ignore the rest.
    // Up to 7 zero bytes of alignment padding are tolerated.
    const size_t trailing = bytes.size() - 4 - prefix;
    const bool padding = trailing < 8 && std::all_of(bytes.end() - static_cast<std::ptrdiff_t>(trailing), bytes.end(),
                                                     [](uint8_t b) { return b == 0; });
    if (trailing != 0 && !padding) {
      return make_error(ErrorCode::kCorrupt,
                        "%s: %zu bytes follow the end of the ETDump its size prefix declares (%u bytes): a torn or "
                        "concatenated file",
                        name.c_str(), trailing, prefix);
    }
    root_base = bytes.data() + 4;
    region = prefix;
  } else if (std::memcmp(bytes.data() + 4, "ED00", 4) == 0) {
    out.size_prefixed = false;
    root_base = bytes.data();
    region = bytes.size();
  } else {
    FileKind kind = sniff_file_kind(bytes);
    return Error(ErrorCode::kWrongKind, name + ": not an ETDump: " +
                                            (kind == FileKind::kUnknown ? "identifier bytes '" + printable_identifier(bytes, 8) + "'"
                                                                        : "this is " + describe_file_kind(kind)));
  }
  if (region > flatbuffer_util::kMaxFlatBufferSize) return Error(ErrorCode::kNotSupported, name + ": ETDump over 2 GiB");
  // ExecuTorch's flatcc writer aligns a size-prefixed buffer relative to the byte after the
  // prefix; FlatBuffers' C++ builder aligns relative to the prefix itself. 64-bit fields must be
  // aligned in memory, so read from an 8-aligned copy of the region in the first case, in place
  // in the second, and let the alignment-checking verifier decide which layout this file has.
  std::vector<uint8_t> aligned;
  auto verify = [&](const uint8_t* base) {
    flatbuffers::Verifier verifier(base, region, flatbuffer_util::verifier_options());
    return verifier.VerifyBuffer<efb::ETDump>(nullptr);
  };
  bool verified = false;
  if (reinterpret_cast<uintptr_t>(root_base) % 8 == 0) {
    verified = verify(root_base);
  } else {
    aligned.resize(region + 8);
    uint8_t* copy = aligned.data() + (8 - reinterpret_cast<uintptr_t>(aligned.data()) % 8) % 8;
    std::memcpy(copy, root_base, region);
    verified = verify(copy);
    if (verified) {
      root_base = copy;
    } else if (out.size_prefixed && reinterpret_cast<uintptr_t>(bytes.data()) % 8 == 0) {
      // Aligned relative to the prefix: verify the whole file as a size-prefixed buffer.
      flatbuffers::Verifier whole(bytes.data(), region + 4, flatbuffer_util::verifier_options());
      verified = whole.VerifySizePrefixedBuffer<efb::ETDump>(nullptr);
      aligned.clear();
    }
  }
  if (!verified) {
    return Error(ErrorCode::kCorrupt, name + ": FlatBuffer verification failed: the ETDump is truncated or corrupt");
  }
  const efb::ETDump* root = flatbuffers::GetRoot<efb::ETDump>(root_base);
  out.version = root->version();
  // Names repeat on every run (OPERATOR_CALL, native_call_*): look them up by view, so a
  // million events allocate nothing for names they share.
  struct ViewHash {
    using is_transparent = void;
    size_t operator()(std::string_view v) const { return std::hash<std::string_view>{}(v); }
  };
  std::unordered_map<std::string, uint32_t, ViewHash, std::equal_to<>> interned;
  auto intern = [&](const flatbuffers::String* s) -> uint32_t {
    const std::string_view key(s->c_str(), s->size());
    if (auto it = interned.find(key); it != interned.end()) return it->second;
    const uint32_t id = static_cast<uint32_t>(out.names.size());
    interned.emplace(std::string(key), id);
    out.names.emplace_back(key);
    return id;
  };
  if (const auto* runs = root->run_data()) {
    // One reservation for all blocks: growing per block would copy the events read so far once
    // per block, quadratic in the number of runs.
    size_t total_events = 0;
    for (size_t r = 0; r < runs->size(); ++r) {
      const efb::RunData* run = runs->Get(static_cast<flatbuffers::uoffset_t>(r));
      if (run != nullptr && run->events() != nullptr) total_events += run->events()->size();
    }
    out.events.reserve(total_events);
    for (size_t r = 0; r < runs->size(); ++r) {
      const efb::RunData* run = runs->Get(static_cast<flatbuffers::uoffset_t>(r));
      if (run == nullptr) return make_error(ErrorCode::kCorrupt, "%s: run block %zu is null", name.c_str(), r);
      // ExecuTorch 0.1 (2023) kept events in slot 2, where the current layout has allocators
      // (formats.md §4.6): a block with at most 3 slots, something in slot 2 and no events is
      // read as that layout. (A current block with allocators but no events would be mistaken
      // for it; the runtime never writes one.)
      const uint16_t vt = flatbuffer_util::root_vtable_size(root_base, reinterpret_cast<const uint8_t*>(run));
      if (vt <= 10 && run->allocators() != nullptr && run->events() == nullptr) {
        return Error(ErrorCode::kNotSupported,
                     name + ": ETDump in ExecuTorch 0.1's 2023 layout, which etscope does not read; re-record it with ExecuTorch 0.2 or later");
      }
      RunBlock block;
      block.name = flatbuffer_util::to_string(run->name());
      block.bundled_input_index = run->bundled_input_index();
      if (const auto* allocators = run->allocators()) {
        for (const auto* a : *allocators) block.allocators.push_back(a ? flatbuffer_util::to_string(a->name()) : std::string());
      }
      block.first_event = static_cast<uint32_t>(out.events.size());
      if (const auto* events = run->events()) {
        for (size_t e = 0; e < events->size(); ++e) {
          const efb::Event* ev = events->Get(static_cast<flatbuffers::uoffset_t>(e));
          // Built only when something is wrong: formatting it for every event costs more than
          // reading the event.
          auto where = [&]() { return name + ": block " + std::to_string(r) + " event " + std::to_string(e); };
          if (ev == nullptr) return Error(ErrorCode::kCorrupt, where() + " is null");
          Event rec;
          if (const efb::ProfileEvent* p = ev->profile_event()) {
            rec.kind = EventKind::kProfile;
            rec.chain = p->chain_index();
            rec.instruction = p->instruction_id();
            rec.start = p->start_time();
            rec.end = p->end_time();
            const bool has_delegate = p->delegate_debug_id_int() != -1 || p->delegate_debug_id_str() != nullptr;
            if (has_delegate) {
              DelegateRef d;
              d.id_int = p->delegate_debug_id_int();
              d.id_str = flatbuffer_util::to_string(p->delegate_debug_id_str());
              d.metadata = flatbuffer_util::payload_range(bytes.data(), p->delegate_debug_metadata());
              if (!aligned.empty()) d.metadata = {};  // offsets refer to the copy; metadata is rare
              if (p->name() != nullptr) d.name = intern(p->name());
              rec.delegate = true;
              rec.ref = static_cast<uint32_t>(out.delegate_refs.size());
              out.delegate_refs.push_back(std::move(d));
            } else {
              rec.ref = p->name() != nullptr ? intern(p->name()) : UINT32_MAX;
            }
          } else if (const efb::DebugEvent* d = ev->debug_event()) {
            rec.kind = EventKind::kDebug;
            rec.chain = static_cast<int32_t>(static_cast<int64_t>(d->chain_index()));
            rec.instruction = d->instruction_id();
            LoggedValue v;
            v.delegate_id_int = d->delegate_debug_id_int();
            v.delegate_id_str = flatbuffer_util::to_string(d->delegate_debug_id_str());
            if (const efb::Value* val = d->debug_entry()) {
              v.output = val->output() != nullptr && val->output()->bool_val();
              switch (val->val()) {
                case efb::ValueType::Tensor: {
                  v.type = LoggedValue::Type::kTensor;
                  LoggedTensor t;
                  ETSCOPE_TRY(read_tensor(where(), val->tensor(), &t));
                  v.tensors.push_back(std::move(t));
                  break;
                }
                case efb::ValueType::TensorList: {
                  v.type = LoggedValue::Type::kTensorList;
                  if (val->tensor_list() != nullptr && val->tensor_list()->tensors() != nullptr) {
                    for (const efb::Tensor* t : *val->tensor_list()->tensors()) {
                      LoggedTensor lt;
                      ETSCOPE_TRY(read_tensor(where(), t, &lt));
                      v.tensors.push_back(std::move(lt));
                    }
                  }
                  break;
                }
                case efb::ValueType::Int:
                  v.type = LoggedValue::Type::kInt;
                  v.int_value = val->int_value() ? val->int_value()->int_val() : 0;
                  break;
                case efb::ValueType::Bool:
                  v.type = LoggedValue::Type::kBool;
                  v.bool_value = val->bool_value() && val->bool_value()->bool_val();
                  break;
                case efb::ValueType::Float:
                  v.type = LoggedValue::Type::kFloat;
                  v.double_value = val->float_value() ? val->float_value()->float_val() : 0.0;
                  break;
                case efb::ValueType::Double:
                  v.type = LoggedValue::Type::kDouble;
                  v.double_value = val->double_value() ? val->double_value()->double_val() : 0.0;
                  break;
                case efb::ValueType::String: v.type = LoggedValue::Type::kString; break;
                default: v.type = LoggedValue::Type::kNull; break;
              }
            }
            rec.ref = static_cast<uint32_t>(out.values.size());
            out.values.push_back(std::move(v));
          } else if (const efb::AllocationEvent* a = ev->allocation_event()) {
            rec.kind = EventKind::kAllocation;
            rec.ref = static_cast<uint32_t>(a->allocator_id());
            rec.start = a->allocation_size();
          } else {
            return Error(ErrorCode::kCorrupt, where() + " has no profile, debug or allocation payload");
          }
          out.events.push_back(rec);
        }
      }
      block.event_count = static_cast<uint32_t>(out.events.size()) - block.first_event;
      out.blocks.push_back(std::move(block));
    }
  }
  return out;
}

Result<EtDumpFile> EtDumpReader::open(const std::string& path) {
  ETSCOPE_ASSIGN_OR_RETURN(auto blob, Blob::open_file(path));
  return read(std::move(blob));
}

}  // namespace etscope::etdump
