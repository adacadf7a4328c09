// Which execution engine made a profiled run's timings, and whether two runs' timings may be
// compared at all.
//
// etscope's runner records its engine in every ETDump it writes (core/event_names.h: the engine
// marker, "etscope::engine:<engine> <version>" in the "Default" block). A dump without the marker
// (ExecuTorch's own runners, etscope builds older than the marker) has an unknown engine. The CLI
// (`inspect`, `etdump`, `trace`, `compare`), the run store and the viewer read the engine and
// the comparison rule here, so they all say the same thing.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "etscope/etdump/etdump_file.h"

namespace etscope::inspect {

/// What front ends print for a dump without an engine marker.
inline constexpr std::string_view kUnknownEngineText = "unknown (no etscope engine marker)";

struct EngineIdentity {
  std::string name;     ///< "etscope", "executorch"; empty when the dump does not say.
  std::string version;  ///< "0.1.0", "1.5.1+cpu"; may be empty.

  bool known() const { return !name.empty(); }
  /// "etscope 0.1.0" (the name alone without a version), or kUnknownEngineText.
  std::string text() const;
  /// text(), but "unknown" alone for an unknown engine: a table cell.
  std::string label() const;
  bool operator==(const EngineIdentity&) const = default;
};

/// The engine named by the dump's engine marker; an unknown identity when it has none.
EngineIdentity dump_engine(const etdump::EtDumpFile& dump);

/// How two runs' engines relate, for a comparison of their timings.
enum class EngineMatch : uint8_t {
  kSame,       ///< The same engine (its versions may differ: comparing versions is a use).
  kUnknown,    ///< One or both engines unknown: allowed, with a note.
  kDifferent,  ///< Two different engines: their timings measure different code, refused unless
               ///< the user asks for it, then warned about.
};

/// "same", "unknown", "different" (`etscope compare --format json`'s "engines").
const char* to_string(EngineMatch match);

struct EngineCheck {
  EngineMatch match = EngineMatch::kSame;
  /// One line without a prefix, "" for kSame: which run was timed by which engine, e.g.
  /// "A was timed by engine etscope 0.1.0 and B by engine executorch 1.5.1+cpu: different engines
  /// run different code, so their timings differ for that reason alone". Front ends add their own
  /// prefix (error, warning, note) and how to override a refusal.
  std::string text;
};

/// The rule for comparing run A (timed by `a`) with run B (timed by `b`).
EngineCheck check_engines(const EngineIdentity& a, const EngineIdentity& b);

}  // namespace etscope::inspect
