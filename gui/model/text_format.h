// Small text helpers the view models use to turn numbers into labels. No ImGui here: the views
// only print the strings these return.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "etscope/formats/program.h"
#include "etscope/core/scalar_type.h"

namespace etscope::gui {

/// "f32[1,3,32,32]"; "f32[]" for a scalar.
std::string shape_text(ScalarType dtype, const std::vector<int32_t>& sizes);
std::string shape_text(ScalarType dtype, const std::vector<int64_t>& sizes);

/// "48 B", "1.5 KiB", "12.3 MiB", "1.20 GiB".
std::string bytes_text(uint64_t bytes);

/// A duration given in nanoseconds, in the unit that suits it: "850 ns", "12.4 us", "1.61 ms", "2.05 s".
std::string duration_text(double ns);

/// A value in a fixed unit with `decimals` digits after the point and thousands separators in
/// the integer part ("1,605.864").
std::string fixed_text(double value, int decimals);

/// Case-insensitive substring test.
bool contains_ignore_case(const std::string& haystack, const std::string& needle);

/// A filter as users type it in a search box: comma-separated terms; a row matches when it
/// contains any plain term (or there is none) and no term prefixed with '-'. Case-insensitive.
class TextFilter {
 public:
  TextFilter() = default;
  explicit TextFilter(const std::string& text);
  bool empty() const { return include_.empty() && exclude_.empty(); }
  bool matches(const std::string& text) const;

 private:
  std::vector<std::string> include_;
  std::vector<std::string> exclude_;
};

/// Tick positions for an axis over [lo, hi]: multiples of 1, 2 or 5 times a power of ten, at
/// most `max_ticks` of them (at least 2 when the range is not empty).
std::vector<double> nice_ticks(double lo, double hi, int max_ticks);

/// The spacing nice_ticks would use.
double nice_step(double range, int max_ticks);

struct Tick {
  double value = 0;   ///< Position on the axis, in the axis' own unit (ns, bytes).
  std::string label;
};

/// Ticks for a time axis in nanoseconds. The unit of the labels follows the largest value on
/// the axis and the decimals the spacing: "0", "0.5 ms", "1.0 ms", "1.5 ms".
std::vector<Tick> time_ticks(double lo_ns, double hi_ns, int max_ticks);

/// Ticks for a byte axis: spacing 1, 2 or 5 times a power of ten in B, KiB or MiB, whichever
/// unit suits the range ("0", "16 KiB", "32 KiB").
std::vector<Tick> byte_ticks(double lo, double hi, int max_ticks);

}  // namespace etscope::gui
