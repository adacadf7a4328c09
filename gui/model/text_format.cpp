#include "etscope/inspect/time_unit.h"
#include "model/text_format.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>

#include "etscope/inspect/program_description.h"

namespace etscope::gui {
namespace {

std::string lower(const std::string& s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string trim(const std::string& s) {
  size_t b = 0, e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
  return s.substr(b, e - b);
}

// Decimals needed to tell apart ticks `step` apart, in a unit where the step reads `step`.
int decimals_for(double step) {
  if (step <= 0 || !std::isfinite(step)) return 0;
  const int d = static_cast<int>(std::ceil(-std::log10(step) - 1e-9));
  return std::clamp(d, 0, 6);
}

}  // namespace

// Shapes are written one way everywhere: libinspect's program description.
std::string shape_text(ScalarType dtype, const std::vector<int32_t>& sizes) { return inspect::shape_text(dtype, sizes); }
std::string shape_text(ScalarType dtype, const std::vector<int64_t>& sizes) { return inspect::shape_text(dtype, sizes); }

std::string bytes_text(uint64_t bytes) { return inspect::bytes_text(bytes); }

std::string duration_text(double ns) { return inspect::duration_text(ns); }

std::string fixed_text(double value, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", std::max(0, decimals), std::fabs(value));
  std::string digits(buf);
  const size_t point = digits.find('.');
  std::string int_part = digits.substr(0, point);
  const std::string frac = point == std::string::npos ? "" : digits.substr(point);
  std::string grouped;
  for (size_t i = 0; i < int_part.size(); ++i) {
    if (i > 0 && (int_part.size() - i) % 3 == 0) grouped += ',';
    grouped += int_part[i];
  }
  // "-0.000" reads as noise; only real negatives keep their sign.
  const bool negative = value < 0 && std::strtod(buf, nullptr) != 0.0;
  return (negative ? "-" : "") + grouped + frac;
}

bool contains_ignore_case(const std::string& haystack, const std::string& needle) {
  if (needle.empty()) return true;
  auto it = std::search(haystack.begin(), haystack.end(), needle.begin(), needle.end(), [](char a, char b) {
    return std::tolower(static_cast<unsigned char>(a)) == std::tolower(static_cast<unsigned char>(b));
  });
  return it != haystack.end();
}

TextFilter::TextFilter(const std::string& text) {
  size_t start = 0;
  while (start <= text.size()) {
    size_t comma = text.find(',', start);
    if (comma == std::string::npos) comma = text.size();
    std::string term = trim(text.substr(start, comma - start));
    if (!term.empty() && term[0] == '-') {
      term = trim(term.substr(1));
      if (!term.empty()) exclude_.push_back(lower(term));
    } else if (!term.empty()) {
      include_.push_back(lower(term));
    }
    start = comma + 1;
  }
}

bool TextFilter::matches(const std::string& text) const {
  for (const std::string& term : exclude_) {
    if (contains_ignore_case(text, term)) return false;
  }
  if (include_.empty()) return true;
  for (const std::string& term : include_) {
    if (contains_ignore_case(text, term)) return true;
  }
  return false;
}

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
    if (ticks.size() > static_cast<size_t>(max_ticks) + 1) break;
  }
  return ticks;
}

std::vector<Tick> time_ticks(double lo_ns, double hi_ns, int max_ticks) {
  std::vector<Tick> out;
  const double step = nice_step(hi_ns - lo_ns, max_ticks);
  // The unit follows the largest value on the axis, so labels read "1.5 ms", not "1500 us";
  // the decimals follow the spacing, so neighbours differ in their last digit.
  const inspect::TimeUnit unit = inspect::auto_unit(std::max(std::fabs(lo_ns), std::fabs(hi_ns)));
  const int decimals = decimals_for(inspect::duration_in(step, unit));
  for (double t : nice_ticks(lo_ns, hi_ns, max_ticks)) {
    char buf[64];
    if (t == 0) {
      std::snprintf(buf, sizeof buf, "0");
    } else {
      std::snprintf(buf, sizeof buf, "%.*f %s", decimals, inspect::duration_in(t, unit), inspect::to_string(unit));
    }
    out.push_back({t, buf});
  }
  return out;
}

std::vector<Tick> byte_ticks(double lo, double hi, int max_ticks) {
  std::vector<Tick> out;
  if (!(hi > lo)) return out;
  const double range = hi - lo;
  double scale = 1;
  const char* unit = "B";
  if (range >= 4.0 * 1024 * 1024) {
    scale = 1024.0 * 1024.0, unit = "MiB";
  } else if (range >= 4.0 * 1024) {
    scale = 1024.0, unit = "KiB";
  }
  // Whole bytes at least: a tick between two bytes means nothing.
  double step = nice_step(range / scale, max_ticks);
  if (scale == 1 && step < 1) step = 1;
  const int decimals = decimals_for(step);
  const double first = std::ceil(lo / scale / step - 1e-9) * step;
  for (double v = first; v * scale <= hi + step * scale * 1e-9; v += step) {
    char buf[64];
    if (std::fabs(v) < step * 1e-9) {
      std::snprintf(buf, sizeof buf, "0");
      v = 0;
    } else {
      std::snprintf(buf, sizeof buf, "%.*f %s", decimals, v, unit);
    }
    out.push_back({v * scale, buf});
    if (out.size() > static_cast<size_t>(std::max(max_ticks, 2)) + 1) break;
  }
  return out;
}

}  // namespace etscope::gui
