// EtDumpReader: reads ETDump traces (.etdp) written by ExecuTorch or by EtDumpWriter.
//
// Applies the schema's defaults as ExecuTorch's readers do (instruction_id -1, delegate int id
// -1, bundled_input_index -1, chain 0). Events are kept compact (32 bytes each, names interned)
// so that traces of millions of events load quickly; payloads that few events have (delegate ids
// and metadata, logged values) live in side tables.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "etscope/formats/blob.h"
#include "etscope/formats/program.h"
#include "etscope/core/result.h"
#include "etscope/core/scalar_type.h"

namespace etscope::etdump {

enum class EventKind : uint8_t { kProfile = 0, kDebug = 1, kAllocation = 2 };

/// One event, 32 bytes. Meaning of `ref` by kind: profile -> index into EtDumpFile::names, or,
/// when `delegate` is set, into EtDumpFile::delegate_refs; debug -> index into EtDumpFile::values;
/// allocation -> allocator id (1-based), with the size in `start`.
struct Event {
  uint64_t start = 0;
  uint64_t end = 0;
  uint32_t ref = 0;
  int32_t chain = 0;        ///< Profile: chain_index; debug: chain as signed (-1 = program output).
  int32_t instruction = -1;
  EventKind kind = EventKind::kProfile;
  bool delegate = false;    ///< Profile event raised by a delegate (identified by an id, not a name).
  uint16_t reserved = 0;
};
static_assert(sizeof(Event) == 32, "events are kept at 32 bytes");

struct DelegateRef {
  int32_t id_int = -1;
  std::string id_str;
  FileRange metadata;
  uint32_t name = UINT32_MAX;  ///< Index into names when the event also had a name.
};

struct LoggedTensor {
  ScalarType dtype = ScalarType::kFloat;
  std::vector<int64_t> sizes;
  std::vector<int64_t> strides;
  int64_t offset = -1;         ///< Into the debug buffer; -1 when empty.
  uint64_t nbytes = 0;
};

struct LoggedValue {
  enum class Type : uint8_t { kNull, kInt, kBool, kFloat, kDouble, kTensor, kTensorList, kString };
  Type type = Type::kNull;
  bool output = false;         ///< A program output rather than an intermediate.
  int64_t int_value = 0;
  double double_value = 0.0;   ///< Float and Double.
  bool bool_value = false;
  std::vector<LoggedTensor> tensors;  ///< One for kTensor; the elements for kTensorList.
  int32_t delegate_id_int = -1;
  std::string delegate_id_str;
};

struct RunBlock {
  std::string name;
  int32_t bundled_input_index = -1;
  std::vector<std::string> allocators;
  uint32_t first_event = 0;    ///< Into EtDumpFile::events.
  uint32_t event_count = 0;
};

struct EtDumpFile {
  std::shared_ptr<const Blob> blob;
  bool size_prefixed = true;
  uint32_t version = 0;
  std::vector<RunBlock> blocks;
  std::vector<Event> events;
  std::vector<std::string> names;
  std::vector<DelegateRef> delegate_refs;
  std::vector<LoggedValue> values;

  const std::string& name_of(const Event& e) const;  ///< "" for unnamed events.
  /// One of etscope's markers (core/event_names.h): an overflow marker (a count of what the
  /// writer could not record) or the engine marker (which engine ran the dump); never an event to
  /// show, time or count.
  bool is_marker(const Event& e) const;
  const std::string& name() const { return blob->name(); }
};


}  // namespace etscope::etdump
