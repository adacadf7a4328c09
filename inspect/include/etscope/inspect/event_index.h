// From a raw ETDump event to the Inspector event it was grouped into, and the texts that say
// where an event sits in the model (module path, the user's stack frames). Timelines and traces
// draw raw events; this is how they show what the Inspector knows about each.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "etscope/inspect/inspector.h"

namespace etscope::inspect {

/// An Inspector event's address: blocks()[block].events[event].
struct EventRef {
  uint32_t block = 0;
  uint32_t event = 0;
};

class EventIndex {
 public:
  /// Indexes every event of every block. `inspector` must outlive the index.
  explicit EventIndex(const Inspector& inspector);

  /// The Inspector event a raw event (index into EtDumpFile::events) belongs to: nullopt for
  /// raw events no Inspector event holds (debug and allocation events, out-of-range indices).
  std::optional<EventRef> locate(uint32_t raw) const;
  /// The same event itself, or nullptr.
  const Event* find(uint32_t raw) const;

 private:
  const Inspector* inspector_;
  std::vector<uint64_t> by_raw_;  ///< Per raw event: (block << 32 | event) + 1, 0 for none.
};

/// "torch.nn.modules.conv.Conv2d" -> "Conv2d".
std::string short_type_name(std::string_view type);

/// The module hierarchy of the event's first graph node that has one, outermost first without
/// the model itself: "features.0 (Conv2d) > features.0.conv (Conv2d)"; "" when unknown.
std::string module_path_text(const Event& event);

/// The innermost module frame of the event's first graph node with a module stack (its path is
/// "" for the model itself), or null when unknown.
const etrecord::ModuleFrame* innermost_module(const Event& event);

/// The same as text: "features.0.1 (Conv2d)", "<root> (Net)" for the model itself; "" when unknown.
std::string innermost_module_text(const Event& event);

/// The frames of a Python stack trace ("File ..., line N, in fn" lines, each followed by its
/// source line, outermost first) a user wants: the innermost `max_frames` outside
/// site-packages/dist-packages (their model's code, not torch's), or the innermost frames when
/// every frame is a library's. One frame per line, source indented below it.
std::string user_stack_frames(std::string_view trace, size_t max_frames);

}  // namespace etscope::inspect
