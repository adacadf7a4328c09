// Text for people: the one place that decides how etscope writes a shape, a byte count, a number,
// a duration, a counted word and the labels of an axis. The CLI, the viewer, libinspect's reports
// and the runtime's error messages all call these, so the same quantity reads the same everywhere.
//
// Sections: [1] shapes  [2] byte counts  [3] numbers  [4] durations  [5] words  [6] axis ticks.
//
// Nothing here knows a file format: a shape is a ScalarType and sizes. No function throws.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "etscope/core/result.h"
#include "etscope/core/scalar_type.h"

namespace etscope {

// ---- [1] shapes --------------------------------------------------------------------------

/// Sizes alone: "[1,3,224,224]", "[]" for a scalar. A size below zero (a symbolic dimension, as
/// ETRecord graphs write them) prints as "?".
std::string dims_text(std::span<const int64_t> sizes);
std::string dims_text(std::span<const int32_t> sizes);

/// Element type and sizes: "f32[1,3,224,224]", "f32[]" for a scalar (short names of
/// scalar_type_short_name; sizes as dims_text writes them).
std::string shape_text(ScalarType dtype, std::span<const int64_t> sizes);
std::string shape_text(ScalarType dtype, std::span<const int32_t> sizes);

// ---- [2] byte counts ---------------------------------------------------------------------

/// A size to read at a glance, in powers of 1024: "48 B", "1.5 KiB", "12.3 MiB", "1.20 GiB".
std::string bytes_text(uint64_t bytes);

/// A size to the byte for messages about limits, with a rounded size from 1 MiB on:
/// "4096 bytes", "3145728 bytes (3.0 MiB)", "2147483648 bytes (2.0 GiB)".
std::string exact_bytes_text(uint64_t bytes);

// ---- [3] numbers -------------------------------------------------------------------------

/// The shortest text that reads back to the same double: "0.1", "3", "1e-08"; "nan", "inf", "-inf".
std::string number_text(double v);

/// The shortest text that reads back to the same float: "0.25", "-0.4907230".
std::string float_text(float v);

/// `v` with `figures` significant figures written out in fixed notation (no exponent): figures 3
/// gives "12.3", "845", "1234", "0.0123", "1.20"; "0" for zero. At most 9 decimals, so tiny values
/// round towards zero. Non-finite values as "nan", "inf", "-inf".
std::string significant_text(double v, int figures = 3);

// ---- [4] durations -----------------------------------------------------------------------
// The one duration policy: `etscope run`, `train`, `runs`, `compare`, `history`, the viewer and
// the Inspector's text show a duration in the unit that suits it (or the one --time-unit names)
// with three significant figures: "12.3 ms", "845 us", "1.20 s". Unit names: ns, us, ms, s.

enum class TimeUnit : uint8_t { kAuto, kNs, kUs, kMs, kS };

/// "auto", "ns", "us", "ms", "s".
const char* to_string(TimeUnit unit);
/// Parses those names (the values of --time-unit); kInvalidArgument naming the accepted ones otherwise.
Result<TimeUnit> parse_time_unit(std::string_view name);
/// The unit kAuto picks for a duration: the largest in which it is at least 1 (ns below 1 us).
TimeUnit auto_unit(double ns);
/// Nanoseconds per unit (1 for kNs and kAuto).
double ns_per_unit(TimeUnit unit);
/// The duration in `unit` (kAuto: auto_unit(ns)) as significant_text writes it, with its unit
/// name: "12.3 ms", "845 us", "0.0123 s", "1234 ms"; "0 ns" for zero.
std::string duration_text(double ns, TimeUnit unit = TimeUnit::kAuto);
/// The duration `ns` as a number of `unit` (kAuto: auto_unit(ns)), for fixed-unit columns.
double duration_in(double ns, TimeUnit unit);
/// duration_text of a duration given in microseconds (the viewer's statistics, `_us` fields).
std::string duration_text_us(double us, TimeUnit unit = TimeUnit::kAuto);
/// duration_text of a duration given in milliseconds (`_ms` fields: samples, curves, medians).
std::string duration_text_ms(double ms, TimeUnit unit = TimeUnit::kAuto);

// ---- [5] words ---------------------------------------------------------------------------

/// A count and a noun made plural by an "s" when the count is not 1: "1 input", "2 inputs",
/// "0 conflicts".
std::string count_text(uint64_t count, std::string_view noun);

// ---- [6] axis ticks ----------------------------------------------------------------------

/// The spacing for at most `max_ticks` ticks over a range: 1, 2 or 5 times a power of ten
/// (1 for an empty or non-finite range).
double nice_step(double range, int max_ticks);

/// Tick positions over [lo, hi] at nice_step spacing: at most `max_ticks` (+1 for rounding) of
/// them, at least 2 when the range is not empty; none when hi <= lo.
std::vector<double> nice_ticks(double lo, double hi, int max_ticks);

struct Tick {
  double value = 0;   ///< Position on the axis, in the axis' own unit (ns, bytes).
  std::string label;
};

/// Ticks for a time axis in nanoseconds. The unit of the labels follows the largest value on the
/// axis and the decimals the spacing: "0", "0.5 ms", "1.0 ms", "1.5 ms".
std::vector<Tick> time_ticks(double lo_ns, double hi_ns, int max_ticks);

/// Ticks for a byte axis: spacing 1, 2 or 5 times a power of ten in B, KiB or MiB, whichever unit
/// suits the range ("0", "16 KiB", "32 KiB"); never between two bytes.
std::vector<Tick> byte_ticks(double lo, double hi, int max_ticks);

/// Ticks for a plain number axis at nice_step spacing, labelled with the decimals the spacing
/// needs ("0", "0.25", "0.5"), with `suffix` appended to every label but zero's.
std::vector<Tick> number_ticks(double lo, double hi, int max_ticks, std::string_view suffix = "");

}  // namespace etscope
