// Text for XML and SVG documents (the memory plan's and the training curve's pictures).
#pragma once

#include <string>
#include <string_view>

namespace etscope {

/// `s` with &, <, > and " escaped, and control bytes XML 1.0 forbids (all below 0x20 but tab and
/// newline) replaced by '?', so that any file name or key can go into an attribute or a text node.
inline std::string xml_escape(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += (static_cast<unsigned char>(c) < 0x20 && c != '\t' && c != '\n') ? '?' : c;
    }
  }
  return out;
}

}  // namespace etscope
