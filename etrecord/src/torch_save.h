// torch.save archives (formats.md §6.4): a zip holding `<prefix>/data.pkl` and one
// `<prefix>/data/<key>` per storage. read_torch_save turns one into a tree of plain values with
// decoded tensors.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "etscope/etrecord/etrecord_reader.h"
#include "etscope/core/result.h"
#include "zip_archive.h"

namespace etscope::etrecord {

/// A value from a torch.save pickle, with tensors made contiguous.
struct SavedValue {
  enum class Kind : uint8_t { kNone, kBool, kInt, kFloat, kString, kBytes, kTensor, kSequence, kDict, kOther };
  Kind kind = Kind::kNone;
  bool boolean = false;
  int64_t integer = 0;
  double real = 0;
  std::string text;  ///< string payload, or the class name of kOther
  TensorValue tensor;
  std::vector<SavedValue> items;  ///< list / tuple
  struct Entry;                   // a dict item; defined below, once SavedValue is complete
  std::vector<Entry> entries;     ///< dict, keys as text
};

struct SavedValue::Entry {
  std::string key;
  SavedValue value;
};

/// Decodes a torch.save archive held in `bytes`. `where` starts every message. Errors:
/// kWrongKind for the legacy (pre-1.6) format or a bare pickle, kOutOfResources for a breached
/// limit (the caller treats these as fatal), kCorrupt / kTruncated / kNotSupported otherwise.
Result<SavedValue> read_torch_save(std::span<const uint8_t> bytes, const std::string& where, const ReadLimits& limits,
                                   ReadBudget* budget);

/// Every tensor in `value`, depth first, named by its path ("conv.weight", "[0][1]").
void collect_tensors(const SavedValue& value, const std::string& path, std::vector<NamedTensor>* out);

}  // namespace etscope::etrecord
