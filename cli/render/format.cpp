#include "render/format.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "etscope/inspect/program_description.h"

namespace etscope::cli {

std::string shape_string(ScalarType dtype, const std::vector<int32_t>& sizes) {
  return inspect::shape_text(dtype, sizes);
}

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

std::string human_bytes(uint64_t bytes) { return inspect::bytes_text(bytes); }

std::string number_string(double v) { return inspect::number_text(v); }

std::string float_string(float v) {
  if (!std::isfinite(v)) return number_string(v);
  char buf[64];
  for (int precision = 6; precision <= 9; ++precision) {
    std::snprintf(buf, sizeof(buf), "%.*g", precision, static_cast<double>(v));
    if (std::strtof(buf, nullptr) == v) break;
  }
  return buf;
}

}  // namespace etscope::cli
