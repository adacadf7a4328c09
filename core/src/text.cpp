// Sections: [1] shapes  [2] byte counts  [3] numbers  [4] durations  [5] words  [6] axis ticks.
#include "etscope/core/text.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace etscope {
namespace {

template <typename Int>
std::string dims_of(std::span<const Int> sizes) {
  std::string s = "[";
  for (size_t i = 0; i < sizes.size(); ++i) {
    if (i) s += ",";
    s += sizes[i] < 0 ? std::string("?") : std::to_string(sizes[i]);
  }
  return s + "]";
}

std::string printed(const char* format, double v, const char* unit) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, v, unit);
  return buf;
}

std::string non_finite_text(double v) {
  if (std::isnan(v)) return "nan";
  return v > 0 ? "inf" : "-inf";
}

// Decimals needed to tell apart ticks `step` apart, in a unit where the step reads `step`.
int decimals_for(double step) {
  if (step <= 0 || !std::isfinite(step)) return 0;
  const int d = static_cast<int>(std::ceil(-std::log10(step) - 1e-9));
  return std::clamp(d, 0, 6);
}

std::string tick_label(double v, int decimals, std::string_view unit) {
  if (v == 0) return "0";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return std::string(buf) + std::string(unit);
}

}  // namespace

// ---- [1] shapes --------------------------------------------------------------------------

std::string dims_text(std::span<const int64_t> sizes) { return dims_of(sizes); }
std::string dims_text(std::span<const int32_t> sizes) { return dims_of(sizes); }

std::string shape_text(ScalarType dtype, std::span<const int64_t> sizes) { return scalar_type_short_name(dtype) + dims_of(sizes); }
std::string shape_text(ScalarType dtype, std::span<const int32_t> sizes) { return scalar_type_short_name(dtype) + dims_of(sizes); }

// ---- [2] byte counts ---------------------------------------------------------------------

std::string bytes_text(uint64_t bytes) {
  constexpr double kKiB = 1024.0, kMiB = kKiB * 1024, kGiB = kMiB * 1024;
  const double b = static_cast<double>(bytes);
  if (bytes < 1024) return std::to_string(bytes) + " B";
  if (b < kMiB) return printed("%.1f %s", b / kKiB, "KiB");
  if (b < kGiB) return printed("%.1f %s", b / kMiB, "MiB");
  return printed("%.2f %s", b / kGiB, "GiB");
}

std::string exact_bytes_text(uint64_t bytes) {
  const std::string exact = std::to_string(bytes) + " bytes";
  const double b = static_cast<double>(bytes);
  if (bytes >= (uint64_t{1} << 30)) return exact + printed(" (%.1f %s)", b / (1 << 30), "GiB");
  if (bytes >= (uint64_t{1} << 20)) return exact + printed(" (%.1f %s)", b / (1 << 20), "MiB");
  return exact;
}

// ---- [3] numbers -------------------------------------------------------------------------

std::string number_text(double v) {
  if (!std::isfinite(v)) return non_finite_text(v);
  char buf[64];
  for (int precision = 6; precision <= 17; ++precision) {
    std::snprintf(buf, sizeof buf, "%.*g", precision, v);
    if (std::strtod(buf, nullptr) == v) break;
  }
  return buf;
}

std::string float_text(float v) {
  if (!std::isfinite(v)) return non_finite_text(v);
  char buf[64];
  for (int precision = 6; precision <= 9; ++precision) {
    std::snprintf(buf, sizeof buf, "%.*g", precision, static_cast<double>(v));
    if (std::strtof(buf, nullptr) == v) break;
  }
  return buf;
}

std::string significant_text(double v, int figures) {
  if (!std::isfinite(v)) return non_finite_text(v);
  // Decimals so that the value shows `figures` significant figures: none beyond the point for
  // values with that many integer digits, at most 9 for tiny ones.
  int decimals = 0;
  if (v != 0) {
    const int magnitude = static_cast<int>(std::floor(std::log10(std::fabs(v))));
    decimals = std::clamp(figures - 1 - magnitude, 0, 9);
  }
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

// ---- [4] durations -----------------------------------------------------------------------

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

double ns_per_unit(TimeUnit unit) {
  switch (unit) {
    case TimeUnit::kS: return 1e9;
    case TimeUnit::kMs: return 1e6;
    case TimeUnit::kUs: return 1e3;
    case TimeUnit::kNs:
    case TimeUnit::kAuto: break;
  }
  return 1.0;
}

std::string duration_text(double ns, TimeUnit unit) {
  if (unit == TimeUnit::kAuto) unit = auto_unit(ns);
  return significant_text(ns / ns_per_unit(unit)) + " " + to_string(unit);
}

double duration_in(double ns, TimeUnit unit) {
  if (unit == TimeUnit::kAuto) unit = auto_unit(ns);
  return ns / ns_per_unit(unit);
}

std::string duration_text_us(double us, TimeUnit unit) { return duration_text(us * ns_per_unit(TimeUnit::kUs), unit); }

std::string duration_text_ms(double ms, TimeUnit unit) { return duration_text(ms * ns_per_unit(TimeUnit::kMs), unit); }

// ---- [5] words ---------------------------------------------------------------------------

std::string count_text(uint64_t count, std::string_view noun) {
  return std::to_string(count) + " " + std::string(noun) + (count == 1 ? "" : "s");
}

// ---- [6] axis ticks ----------------------------------------------------------------------

double nice_step(double range, int max_ticks) {
  if (!(range > 0) || !std::isfinite(range)) return 1.0;
  max_ticks = std::max(max_ticks, 2);
  const double raw = range / static_cast<double>(max_ticks - 1);
  const double p = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0}) {
    if (m * p >= raw) return m * p;
  }
  return 10.0 * p;
}

std::vector<double> nice_ticks(double lo, double hi, int max_ticks) {
  std::vector<double> ticks;
  if (!(hi > lo)) return ticks;
  const double step = nice_step(hi - lo, max_ticks);
  const double first = std::ceil(lo / step - 1e-9) * step;
  for (double t = first; t <= hi + step * 1e-9; t += step) {
    ticks.push_back(std::fabs(t) < step * 1e-9 ? 0.0 : t);
    if (ticks.size() > static_cast<size_t>(std::max(max_ticks, 2)) + 1) break;
  }
  return ticks;
}

std::vector<Tick> time_ticks(double lo_ns, double hi_ns, int max_ticks) {
  // The unit follows the largest value on the axis, so labels read "1.5 ms", not "1500 us";
  // the decimals follow the spacing, so neighbours differ in their last digit.
  const TimeUnit unit = auto_unit(std::max(std::fabs(lo_ns), std::fabs(hi_ns)));
  const double scale = ns_per_unit(unit);
  const int decimals = decimals_for(nice_step(hi_ns - lo_ns, max_ticks) / scale);
  const std::string suffix = std::string(" ") + to_string(unit);
  std::vector<Tick> out;
  for (double t : nice_ticks(lo_ns, hi_ns, max_ticks)) out.push_back({t, tick_label(t / scale, decimals, suffix)});
  return out;
}

std::vector<Tick> byte_ticks(double lo, double hi, int max_ticks) {
  std::vector<Tick> out;
  if (!(hi > lo)) return out;
  const double range = hi - lo;
  double scale = 1;
  const char* unit = " B";
  if (range >= 4.0 * 1024 * 1024) {
    scale = 1024.0 * 1024.0, unit = " MiB";
  } else if (range >= 4.0 * 1024) {
    scale = 1024.0, unit = " KiB";
  }
  // Whole bytes at least: a tick between two bytes means nothing.
  double step = nice_step(range / scale, max_ticks);
  if (scale == 1 && step < 1) step = 1;
  const int decimals = decimals_for(step);
  const double first = std::ceil(lo / scale / step - 1e-9) * step;
  for (double v = first; v * scale <= hi + step * scale * 1e-9; v += step) {
    const double at = std::fabs(v) < step * 1e-9 ? 0.0 : v;
    out.push_back({at * scale, tick_label(at, decimals, unit)});
    if (out.size() > static_cast<size_t>(std::max(max_ticks, 2)) + 1) break;
  }
  return out;
}

std::vector<Tick> number_ticks(double lo, double hi, int max_ticks, std::string_view suffix) {
  const int decimals = decimals_for(nice_step(hi - lo, max_ticks));
  std::vector<Tick> out;
  for (double t : nice_ticks(lo, hi, max_ticks)) out.push_back({t, tick_label(t, decimals, suffix)});
  return out;
}

}  // namespace etscope
