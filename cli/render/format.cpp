#include "render/format.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace etscope::cli {

std::string delimited_cell(const std::string& s, char sep) {
  if (sep == '\t') {
    std::string o = s;
    for (char& c : o) {
      if (c == '\t' || c == '\n' || c == '\r') c = ' ';
    }
    return o;
  }
  if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
  std::string o = "\"";
  for (char c : s) {
    if (c == '"') o += "\"\"";
    else o += c;
  }
  return o + "\"";
}


std::optional<uint64_t> parse_byte_count(const std::string& text) {
  if (text.empty()) return std::nullopt;
  size_t end = 0;
  uint64_t value = 0;
  while (end < text.size() && text[end] >= '0' && text[end] <= '9') {
    if (__builtin_mul_overflow(value, uint64_t{10}, &value) || __builtin_add_overflow(value, static_cast<uint64_t>(text[end] - '0'), &value)) {
      return std::nullopt;
    }
    ++end;
  }
  if (end == 0) return std::nullopt;
  std::string unit = text.substr(end);
  if (!unit.empty() && (unit.back() == 'B' || unit.back() == 'b')) unit.pop_back();
  if (!unit.empty() && unit.back() == 'i') unit.pop_back();
  int shift = 0;
  if (unit == "K" || unit == "k") shift = 10;
  else if (unit == "M" || unit == "m") shift = 20;
  else if (unit == "G" || unit == "g") shift = 30;
  else if (unit == "T" || unit == "t") shift = 40;
  else if (!unit.empty()) return std::nullopt;
  if (shift != 0 && value > (UINT64_MAX >> shift)) return std::nullopt;
  return value << shift;
}

}  // namespace etscope::cli
