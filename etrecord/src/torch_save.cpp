// torch.save reader: zip + pickle + raw storages. Tensors are rebuilt from (storage, offset,
// sizes, strides) into contiguous bytes, with every index checked against the storage.
#include "torch_save.h"

#include <algorithm>
#include <cstring>
#include <map>

#include "etscope/core/checked.h"
#include "etscope/etrecord/pickle_reader.h"

namespace etscope::etrecord {
namespace {

// Decoding is a DAG walk (pickles share objects through the memo); cap the nodes we emit so a
// pickle that references one list from itself many times cannot blow up exponentially.
constexpr uint64_t kMaxValueNodes = 1'000'000;

class Converter {
 public:
  Converter(ZipArchive& zip, std::string prefix, std::string where, const ReadLimits& limits, ReadBudget* budget)
      : zip_(zip), prefix_(std::move(prefix)), where_(std::move(where)), limits_(limits), budget_(budget) {}

  Result<SavedValue> convert(const PyObject* o, uint64_t depth) {
    if (depth > limits_.max_pickle_depth) {
      return Error(ErrorCode::kOutOfResources,
                   where_ + ": pickle nests deeper than " + std::to_string(limits_.max_pickle_depth) + " levels");
    }
    if (++nodes_ > kMaxValueNodes) {
      return Error(ErrorCode::kOutOfResources, where_ + ": pickle expands to more than " +
                                                   std::to_string(kMaxValueNodes) + " values");
    }
    SavedValue v;
    switch (o->kind) {
      case PyKind::kNone: v.kind = SavedValue::Kind::kNone; break;
      case PyKind::kBool: v.kind = SavedValue::Kind::kBool; v.boolean = o->boolean; break;
      case PyKind::kInt: v.kind = SavedValue::Kind::kInt; v.integer = o->integer; break;
      case PyKind::kFloat: v.kind = SavedValue::Kind::kFloat; v.real = o->real; break;
      case PyKind::kStr: v.kind = SavedValue::Kind::kString; v.text = o->text; break;
      case PyKind::kBytes: v.kind = SavedValue::Kind::kBytes; v.text = o->text; break;
      case PyKind::kTuple:
      case PyKind::kList:
      case PyKind::kSet:
        v.kind = SavedValue::Kind::kSequence;
        for (const PyObject* i : o->items) {
          ETSCOPE_ASSIGN_OR_RETURN(SavedValue item, convert(i, depth + 1));
          v.items.push_back(std::move(item));
        }
        break;
      case PyKind::kDict:
        v.kind = SavedValue::Kind::kDict;
        for (const auto& [key, value] : o->entries) {
          std::string k = key->kind == PyKind::kStr ? key->text
                          : key->kind == PyKind::kInt ? std::to_string(key->integer)
                                                      : std::string("?");
          ETSCOPE_ASSIGN_OR_RETURN(SavedValue item, convert(value, depth + 1));
          v.entries.push_back(SavedValue::Entry{std::move(k), std::move(item)});
        }
        break;
      case PyKind::kTensor: {
        v.kind = SavedValue::Kind::kTensor;
        ETSCOPE_ASSIGN_OR_RETURN(v.tensor, tensor(*o));
        break;
      }
      case PyKind::kGlobal:
      case PyKind::kStorage:
      case PyKind::kObject:
        v.kind = SavedValue::Kind::kOther;
        v.text = o->text.empty() ? "object" : o->text;
        break;
    }
    return v;
  }

 private:
  Result<const std::vector<uint8_t>*> storage_bytes(const std::string& key) {
    if (auto it = storages_.find(key); it != storages_.end()) return &it->second;
    int64_t index = zip_.find(prefix_ + "data/" + key);
    if (index < 0) return Error(ErrorCode::kCorrupt, where_ + ": storage '" + key + "' has no data/" + key + " member");
    ETSCOPE_ASSIGN_OR_RETURN(std::vector<uint8_t> bytes, zip_.read(static_cast<size_t>(index)));
    return &storages_.emplace(key, std::move(bytes)).first->second;
  }

  Result<TensorValue> tensor(const PyObject& t) {
    const PyObject& s = *t.storage;
    if (!s.dtype) return Error(ErrorCode::kNotSupported, where_ + ": storage class " + s.text + " not supported");
    const uint64_t elem = element_size(*s.dtype).value_or(1);
    auto bad = [&](const std::string& what) {
      return Error(ErrorCode::kCorrupt, where_ + ": tensor on storage '" + s.storage_key + "': " + what);
    };
    if (t.sizes.size() != t.strides.size()) return bad("sizes and strides differ in rank");
    if (t.storage_offset < 0 || s.storage_numel < 0) return bad("negative offset or storage size");
    uint64_t numel = 1;
    uint64_t last = static_cast<uint64_t>(t.storage_offset);  // highest element index touched
    for (size_t d = 0; d < t.sizes.size(); ++d) {
      if (t.sizes[d] < 0 || t.strides[d] < 0) return bad("negative size or stride");
      auto n = checked::mul(numel, static_cast<uint64_t>(t.sizes[d]));
      if (!n) return bad("element count overflows");
      numel = *n;
    }
    auto nbytes = checked::mul(numel, elem);
    if (!nbytes || *nbytes > limits_.max_entry_bytes) return bad("tensor larger than the per-entry limit");
    // A view with stride 0 or overlapping strides reads the same storage elements many times: a
    // few bytes in the archive can describe gigabytes. Real ETRecords hold such views only small
    // (an expanded scalar), so a view larger than its storage is expanded only up to a bound.
    auto storage_bytes_declared = checked::mul(static_cast<uint64_t>(s.storage_numel), elem);
    constexpr uint64_t kMaxExpansion = uint64_t{16} << 20;
    if (!storage_bytes_declared ||
        (*nbytes > *storage_bytes_declared && *nbytes > kMaxExpansion)) {
      // A limit breach, like the zip limits: the whole read fails.
      return Error(ErrorCode::kOutOfResources,
                   where_ + ": tensor on storage '" + s.storage_key + "': a view of " + std::to_string(*nbytes) +
                       " bytes over a storage of " + std::to_string(storage_bytes_declared.value_or(0)) +
                       " bytes (stride 0 or overlapping strides) is larger than etscope expands (16 MiB)");
    }
    // Tensors may share one storage, so the bytes we materialise count against the total too.
    if (budget_ != nullptr) {
      if (*nbytes > limits_.max_total_bytes - std::min(budget_->used, limits_.max_total_bytes)) {
        return Error(ErrorCode::kOutOfResources, where_ + ": decoded tensors exceed the total size limit of " +
                                                     std::to_string(limits_.max_total_bytes) + " bytes");
      }
      budget_->used += *nbytes;
    }
    TensorValue out;
    out.dtype = *s.dtype;
    out.shape = t.sizes;
    out.requires_grad = t.requires_grad;
    if (numel == 0) return out;
    for (size_t d = 0; d < t.sizes.size(); ++d) {
      auto span = checked::mul(static_cast<uint64_t>(t.sizes[d] - 1), static_cast<uint64_t>(t.strides[d]));
      auto next = span ? checked::add(last, *span) : std::nullopt;
      if (!next) return bad("strides overflow");
      last = *next;
    }
    if (last >= static_cast<uint64_t>(s.storage_numel)) return bad("elements beyond the end of the storage");
    ETSCOPE_ASSIGN_OR_RETURN(const std::vector<uint8_t>* data, storage_bytes(s.storage_key));
    auto storage_bytes_needed = checked::mul(static_cast<uint64_t>(s.storage_numel), elem);
    if (!storage_bytes_needed || data->size() < *storage_bytes_needed) {
      return bad("data/" + s.storage_key + " holds " + std::to_string(data->size()) + " bytes, fewer than its " +
                 std::to_string(s.storage_numel) + " elements need");
    }
    out.bytes.resize(static_cast<size_t>(*nbytes));
    // Contiguous (row-major) tensors copy in one piece; others element by element.
    bool contiguous = true;
    int64_t expect = 1;
    for (size_t d = t.sizes.size(); d-- > 0;) {
      if (t.sizes[d] != 1 && t.strides[d] != expect) contiguous = false;
      expect *= t.sizes[d];
    }
    const uint8_t* base = data->data() + static_cast<size_t>(t.storage_offset) * elem;
    if (contiguous) {
      std::memcpy(out.bytes.data(), base, out.bytes.size());
      return out;
    }
    std::vector<int64_t> index(t.sizes.size(), 0);
    for (uint64_t i = 0; i < numel; ++i) {
      uint64_t at = 0;
      for (size_t d = 0; d < index.size(); ++d) at += static_cast<uint64_t>(index[d] * t.strides[d]);
      std::memcpy(out.bytes.data() + i * elem, base + at * elem, elem);
      for (size_t d = index.size(); d-- > 0;) {
        if (++index[d] < t.sizes[d]) break;
        index[d] = 0;
      }
    }
    return out;
  }

  ZipArchive& zip_;
  std::string prefix_;
  std::string where_;
  ReadLimits limits_;
  ReadBudget* budget_;
  uint64_t nodes_ = 0;
  std::map<std::string, std::vector<uint8_t>> storages_;
};

}  // namespace

Result<SavedValue> read_torch_save(std::span<const uint8_t> bytes, const std::string& where, const ReadLimits& limits,
                                   ReadBudget* budget) {
  if (bytes.size() >= 2 && bytes[0] == 0x80) {
    // Both a bare pickle and the legacy torch.save format (a pickled magic number first) start
    // with PROTO. Neither carries its storages in a form we can find without running Python.
    static constexpr uint8_t kLegacyMagic[] = {0x8a, 0x0a, 0x6c, 0xfc, 0x9c, 0x46, 0xf9, 0x20, 0x6a, 0xa8, 0x50, 0x19};
    if (bytes.size() >= 2 + sizeof kLegacyMagic && std::memcmp(bytes.data() + 2, kLegacyMagic, sizeof kLegacyMagic) == 0) {
      return Error(ErrorCode::kWrongKind, where + ": legacy torch.save format (PyTorch < 1.6), not decoded");
    }
    return Error(ErrorCode::kWrongKind, where + ": plain Python pickle (ExecuTorch < 1.3), not decoded");
  }
  ETSCOPE_ASSIGN_OR_RETURN(std::unique_ptr<ZipArchive> zip, ZipArchive::open(bytes, where, limits, budget));
  // The pickle is `<prefix>data.pkl`, where prefix is one directory ("archive/" for in-memory
  // saves, the file stem otherwise).
  int64_t pkl = -1;
  std::string prefix;
  for (size_t i = 0; i < zip->entries().size(); ++i) {
    const std::string& n = zip->entries()[i].name;
    constexpr std::string_view kPkl = "data.pkl";
    if (n.size() < kPkl.size() || n.compare(n.size() - kPkl.size(), kPkl.size(), kPkl) != 0) continue;
    std::string p = n.substr(0, n.size() - kPkl.size());
    if (!p.empty() && (p.back() != '/' || p.find('/') != p.size() - 1)) continue;
    pkl = static_cast<int64_t>(i);
    prefix = std::move(p);
    break;
  }
  if (pkl < 0) return Error(ErrorCode::kWrongKind, where + ": zip without data.pkl, not a torch.save archive");
  if (int64_t bo = zip->find(prefix + "byteorder"); bo >= 0) {
    ETSCOPE_ASSIGN_OR_RETURN(std::vector<uint8_t> order, zip->read(static_cast<size_t>(bo)));
    std::string text(order.begin(), order.end());
    if (text.rfind("big", 0) == 0) return Error(ErrorCode::kNotSupported, where + ": big-endian torch.save archive");
  }
  ETSCOPE_ASSIGN_OR_RETURN(std::vector<uint8_t> pickle, zip->read(static_cast<size_t>(pkl)));
  Unpickler unpickler(limits);
  ETSCOPE_ASSIGN_OR_RETURN(PyObject * root, unpickler.load(pickle, where + ": " + prefix + "data.pkl"));
  Converter converter(*zip, prefix, where, limits, budget);
  return converter.convert(root, 0);
}

void collect_tensors(const SavedValue& value, const std::string& path, std::vector<NamedTensor>* out) {
  switch (value.kind) {
    case SavedValue::Kind::kTensor: out->push_back({path, value.tensor}); break;
    case SavedValue::Kind::kSequence:
      for (size_t i = 0; i < value.items.size(); ++i) {
        collect_tensors(value.items[i], path + "[" + std::to_string(i) + "]", out);
      }
      break;
    case SavedValue::Kind::kDict:
      for (const auto& [k, v] : value.entries) collect_tensors(v, path.empty() ? k : path + "." + k, out);
      break;
    default: break;
  }
}

}  // namespace etscope::etrecord
