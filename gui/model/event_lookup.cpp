#include "model/event_lookup.h"

#include "etscope/inspect/inspector.h"

namespace etscope::gui {
namespace {

// "torch.nn.modules.conv.Conv2d" -> "Conv2d".
std::string short_type(const std::string& type) {
  const size_t dot = type.rfind('.');
  return dot == std::string::npos ? type : type.substr(dot + 1);
}

// A Python stack trace is "File ..., line N, in fn" lines, each followed by its source line,
// outermost first. The innermost frames are usually torch's own modules (conv.py calling
// F.conv2d); the frames a user wants are the innermost ones outside site-packages, i.e. their
// model's code. Falls back to the innermost frames when every frame is a library's.
std::string user_frames(const std::string& trace, size_t max_frames) {
  std::vector<std::string> frames;
  size_t start = 0;
  while (start < trace.size()) {
    size_t nl = trace.find('\n', start);
    if (nl == std::string::npos) nl = trace.size();
    std::string line = trace.substr(start, nl - start);
    start = nl + 1;
    if (line.find_first_not_of(" \t") == std::string::npos) continue;
    const size_t text = line.find_first_not_of(" \t");
    if (line.compare(text, 5, "File ") == 0 || frames.empty()) {
      frames.push_back(line.substr(text));
    } else {
      frames.back() += "\n    " + line.substr(text);
    }
  }
  std::vector<std::string> mine;
  for (const std::string& f : frames) {
    if (f.find("site-packages/") == std::string::npos && f.find("dist-packages/") == std::string::npos) {
      mine.push_back(f);
    }
  }
  const std::vector<std::string>& chosen = mine.empty() ? frames : mine;
  std::string out;
  const size_t first = chosen.size() > max_frames ? chosen.size() - max_frames : 0;
  for (size_t i = first; i < chosen.size(); ++i) out += chosen[i] + "\n";
  if (!out.empty()) out.pop_back();
  return out;
}

}  // namespace

EventLookup::EventLookup(const inspect::Inspector& inspector) : inspector_(&inspector) {
  by_raw_.assign(inspector.dump().events.size(), 0);
  const auto& blocks = inspector.blocks();
  for (size_t b = 0; b < blocks.size(); ++b) {
    for (size_t e = 0; e < blocks[b].events.size(); ++e) {
      for (uint32_t raw : blocks[b].events[e].raw_events) {
        if (raw < by_raw_.size()) by_raw_[raw] = ((static_cast<uint64_t>(b) << 32) | e) + 1;
      }
    }
  }
}

const inspect::Event* EventLookup::find(uint32_t raw) const {
  if (raw >= by_raw_.size() || by_raw_[raw] == 0) return nullptr;
  const uint64_t packed = by_raw_[raw] - 1;
  return &inspector_->blocks()[packed >> 32].events[packed & 0xffffffffu];
}

std::string module_path_text(const inspect::Event& event) {
  for (const inspect::NodeLink& node : event.nodes) {
    if (node.module_stack.empty()) continue;
    std::string s;
    for (const etrecord::ModuleFrame& f : node.module_stack) {
      if (f.path.empty()) continue;
      s += (s.empty() ? "" : " > ") + f.path + " (" + short_type(f.type) + ")";
    }
    if (!s.empty()) return s;
  }
  return "";
}

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
  const std::string module = module_path_text(*e);
  if (!module.empty()) s += "module " + module + "\n";
  for (const inspect::NodeLink& node : e->nodes) {
    if (node.stack_trace.empty()) continue;
    s += "stack trace (" + node.node_name + "):\n" + user_frames(node.stack_trace, 3) + "\n";
    break;
  }
  if (!s.empty()) s.pop_back();
  return s;
}

}  // namespace etscope::gui
