#include "etscope/inspect/time_unit.h"

#include <cmath>
#include <cstdio>

namespace etscope::inspect {

const char* to_string(TimeUnit unit) {
  switch (unit) {
    case TimeUnit::kAuto: return "auto";
    case TimeUnit::kNs: return "ns";
    case TimeUnit::kUs: return "us";
    case TimeUnit::kMs: return "ms";
    case TimeUnit::kS: return "s";
  }
  return "auto";
}

Result<TimeUnit> parse_time_unit(std::string_view name) {
  for (TimeUnit u : {TimeUnit::kAuto, TimeUnit::kNs, TimeUnit::kUs, TimeUnit::kMs, TimeUnit::kS}) {
    if (name == to_string(u)) return u;
  }
  return Error(ErrorCode::kInvalidArgument, "time unit '" + std::string(name) + "': expected auto, ns, us, ms or s");
}

TimeUnit auto_unit(double ns) {
  const double a = std::fabs(ns);
  if (a >= 1e9) return TimeUnit::kS;
  if (a >= 1e6) return TimeUnit::kMs;
  if (a >= 1e3) return TimeUnit::kUs;
  return TimeUnit::kNs;
}

std::string duration_text(double ns, TimeUnit unit) {
  if (unit == TimeUnit::kAuto) unit = auto_unit(ns);
  const double per = unit == TimeUnit::kS ? 1e9 : unit == TimeUnit::kMs ? 1e6 : unit == TimeUnit::kUs ? 1e3 : 1.0;
  const double v = ns / per;
  char buf[64];
  if (!std::isfinite(v)) {
    std::snprintf(buf, sizeof buf, "%g %s", v, to_string(unit));
    return buf;
  }
  // Decimals so that the value shows three significant figures (none beyond the point for
  // values of 100 and more; at most 9).
  int decimals = 0;
  if (v != 0) {
    const int magnitude = static_cast<int>(std::floor(std::log10(std::fabs(v))));
    decimals = std::min(9, std::max(0, 2 - magnitude));
  }
  std::snprintf(buf, sizeof buf, "%.*f %s", decimals, v, to_string(unit));
  return buf;
}

}  // namespace etscope::inspect
