// EventLookup: the timeline's tooltip text for a raw ETDump event, from what the Inspector knows
// about it (inspect::EventIndex: backend, op types, module path, the user's stack frames).
#pragma once

#include <cstdint>
#include <string>

#include "etscope/inspect/event_index.h"

namespace etscope::gui {

class EventLookup {
 public:
  /// Indexes every event of every block. `inspector` must outlive the lookup.
  explicit EventLookup(const inspect::Inspector& inspector) : index_(inspector) {}

  /// The Inspector event a raw event (index into EtDumpFile::events) belongs to, or nullptr.
  const inspect::Event* find(uint32_t raw) const { return index_.find(raw); }

  /// "module features.0 (Conv2d) > ...", the op types and the innermost user stack frames of
  /// the graph nodes the event maps to; "" without an ETRecord or for unmapped events.
  std::string annotation(uint32_t raw) const;

 private:
  inspect::EventIndex index_;
};

}  // namespace etscope::gui
