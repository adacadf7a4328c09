#include "model/event_lookup.h"

namespace etscope::gui {

std::string EventLookup::annotation(uint32_t raw) const {
  const inspect::Event* e = find(raw);
  if (e == nullptr) return "";
  std::string s;
  if (e->delegate_backend_name) s += "backend " + *e->delegate_backend_name + "\n";
  if (!e->op_types.empty()) {
    s += "op types";
    for (size_t i = 0; i < e->op_types.size() && i < 4; ++i) s += (i ? ", " : " ") + e->op_types[i];
    if (e->op_types.size() > 4) s += ", ...";
    s += "\n";
  }
  const std::string module = inspect::module_path_text(*e);
  if (!module.empty()) s += "module " + module + "\n";
  for (const inspect::NodeLink& node : e->nodes) {
    if (node.stack_trace.empty()) continue;
    s += "stack trace (" + node.node_name + "):\n" + inspect::user_stack_frames(node.stack_trace, 3) + "\n";
    break;
  }
  if (!s.empty()) s.pop_back();
  return s;
}

}  // namespace etscope::gui
