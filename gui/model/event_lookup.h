// EventLookup: from a raw ETDump event to the Inspector event it was grouped into, and what the
// ETRecord says about it (module hierarchy, stack trace). Lets the timeline, which draws raw
// events, show what the Inspector knows.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace etscope::inspect {
class Inspector;
struct Event;
}  // namespace etscope::inspect

namespace etscope::gui {

class EventLookup {
 public:
  /// Indexes every event of every block. `inspector` must outlive the lookup.
  explicit EventLookup(const inspect::Inspector& inspector);

  /// The Inspector event a raw event (index into EtdumpFile::events) belongs to, or nullptr.
  const inspect::Event* find(uint32_t raw) const;

  /// "module features.0 (Conv2d) in ...", the op types and the innermost stack trace of the
  /// graph nodes the event maps to; "" without an ETRecord or for unmapped events.
  std::string annotation(uint32_t raw) const;

 private:
  const inspect::Inspector* inspector_;
  /// Per raw event: (block << 32 | event) + 1 of its Inspector event, 0 for none.
  std::vector<uint64_t> by_raw_;
};

/// "features.0 (Conv2d) > features.0.conv (Conv2d)": an event's module hierarchy of its first
/// graph node, outermost first, with short class names; "" when unknown.
std::string module_path_text(const inspect::Event& event);

}  // namespace etscope::gui
