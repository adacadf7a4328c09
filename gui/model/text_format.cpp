#include "model/text_format.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>

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

}  // namespace

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

}  // namespace etscope::gui
