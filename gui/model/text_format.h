// Small text helpers the view models use to turn numbers into labels. No ImGui here: the views
// only print the strings these return. Shapes, byte counts, durations and axis ticks are
// etscope/core/text.h's (included here for the views).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "etscope/core/text.h"
#include "etscope/formats/program.h"

namespace etscope::gui {

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

}  // namespace etscope::gui
