#include "etscope/inspect/event_index.h"

namespace etscope::inspect {

EventIndex::EventIndex(const Inspector& inspector) : inspector_(&inspector) {
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

std::optional<EventRef> EventIndex::locate(uint32_t raw) const {
  if (raw >= by_raw_.size() || by_raw_[raw] == 0) return std::nullopt;
  const uint64_t packed = by_raw_[raw] - 1;
  return EventRef{static_cast<uint32_t>(packed >> 32), static_cast<uint32_t>(packed & 0xffffffffu)};
}

const Event* EventIndex::find(uint32_t raw) const {
  const std::optional<EventRef> ref = locate(raw);
  return ref ? &inspector_->blocks()[ref->block].events[ref->event] : nullptr;
}

std::string short_type_name(std::string_view type) {
  const size_t dot = type.rfind('.');
  return std::string(dot == std::string_view::npos ? type : type.substr(dot + 1));
}

std::string module_path_text(const Event& event) {
  for (const NodeLink& node : event.nodes) {
    std::string s;
    for (const etrecord::ModuleFrame& f : node.module_stack) {
      if (f.path.empty()) continue;
      s += (s.empty() ? "" : " > ") + f.path + " (" + short_type_name(f.type) + ")";
    }
    if (!s.empty()) return s;
  }
  return "";
}

const etrecord::ModuleFrame* innermost_module(const Event& event) {
  for (const NodeLink& node : event.nodes) {
    if (!node.module_stack.empty()) return &node.module_stack.back();
  }
  return nullptr;
}

std::string innermost_module_text(const Event& event) {
  const etrecord::ModuleFrame* f = innermost_module(event);
  if (f == nullptr) return "";
  return (f->path.empty() ? std::string("<root>") : f->path) + " (" + short_type_name(f->type) + ")";
}

std::string user_stack_frames(std::string_view trace, size_t max_frames) {
  std::vector<std::string> frames;
  size_t start = 0;
  while (start < trace.size()) {
    size_t nl = trace.find('\n', start);
    if (nl == std::string_view::npos) nl = trace.size();
    const std::string_view line = trace.substr(start, nl - start);
    start = nl + 1;
    const size_t text = line.find_first_not_of(" \t");
    if (text == std::string_view::npos) continue;
    if (line.substr(text).starts_with("File ") || frames.empty()) {
      frames.emplace_back(line.substr(text));
    } else {
      frames.back() += "\n    ";
      frames.back() += line.substr(text);
    }
  }
  std::vector<const std::string*> mine;
  for (const std::string& f : frames) {
    if (f.find("site-packages/") == std::string::npos && f.find("dist-packages/") == std::string::npos) mine.push_back(&f);
  }
  if (mine.empty()) {
    for (const std::string& f : frames) mine.push_back(&f);
  }
  std::string out;
  const size_t first = mine.size() > max_frames ? mine.size() - max_frames : 0;
  for (size_t i = first; i < mine.size(); ++i) out += *mine[i] + "\n";
  if (!out.empty()) out.pop_back();
  return out;
}

}  // namespace etscope::inspect
