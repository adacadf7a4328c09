#include "etscope/inspect/engine_identity.h"

#include "etscope/core/event_names.h"

namespace etscope::inspect {

std::string EngineIdentity::text() const {
  if (!known()) return std::string(kUnknownEngineText);
  return version.empty() ? name : name + " " + version;
}

std::string EngineIdentity::label() const { return known() ? text() : "unknown"; }

EngineIdentity dump_engine(const etdump::EtDumpFile& dump) {
  // Names are interned, so the marker's name is among them once; the first marker wins.
  for (const std::string& name : dump.names) {
    if (auto marker = events::parse_engine_marker(name)) return {std::string(marker->engine), std::string(marker->version)};
  }
  return {};
}

const char* to_string(EngineMatch match) {
  switch (match) {
    case EngineMatch::kSame: return "same";
    case EngineMatch::kUnknown: return "unknown";
    case EngineMatch::kDifferent: return "different";
  }
  return "unknown";
}

EngineCheck check_engines(const EngineIdentity& a, const EngineIdentity& b) {
  if (!a.known() && !b.known()) {
    return {EngineMatch::kUnknown, "neither run says which engine timed it (no etscope engine marker): the engines are not checked"};
  }
  if (!a.known() || !b.known()) {
    const char* unknown = a.known() ? "B" : "A";
    const char* other = a.known() ? "A" : "B";
    return {EngineMatch::kUnknown, std::string(unknown) + "'s engine is " + std::string(kUnknownEngineText) + ": it is not checked against " +
                                       other + "'s (" + (a.known() ? a : b).text() + ")"};
  }
  if (a.name == b.name) return {EngineMatch::kSame, ""};
  return {EngineMatch::kDifferent, "A was timed by engine " + a.text() + " and B by engine " + b.text() +
                                       ": different engines run different code, so their timings differ for that reason alone"};
}

}  // namespace etscope::inspect
