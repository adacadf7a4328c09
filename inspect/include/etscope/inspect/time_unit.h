// The one policy for showing a duration to a person: which unit, how many digits. `etscope run`,
// the viewer and the Inspector's text all go through it, so a duration reads the same everywhere
// ("12.3 ms", "845 us", "1.20 s"), with the unit names ns, us, ms and s.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "etscope/core/result.h"

namespace etscope::inspect {

enum class TimeUnit : uint8_t { kAuto, kNs, kUs, kMs, kS };

/// "auto", "ns", "us", "ms", "s".
const char* to_string(TimeUnit unit);
/// Parses those names; kInvalidArgument naming the accepted ones otherwise.
Result<TimeUnit> parse_time_unit(std::string_view name);
/// The unit kAuto picks for a duration: the largest in which it is at least 1 (ns below 1 us).
TimeUnit auto_unit(double ns);
/// The duration in `unit` (kAuto: auto_unit(ns)) with at least three significant figures and
/// its unit name: "12.3 ms", "845 us", "0.0123 s", "1234 ms"; "0 ns" for zero.
std::string duration_text(double ns, TimeUnit unit = TimeUnit::kAuto);

}  // namespace etscope::inspect
