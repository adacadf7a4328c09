#include "render/table.h"

#include <algorithm>
#include <cerrno>
#include <cstdlib>

#include "render/format.h"
#include "render/json_output.h"

namespace etscope::cli {

std::string render_table(const TextTable& t, const std::string& format) {
  const size_t ncol = t.columns.size();
  auto is_numeric = [&](size_t c) { return c < t.numeric.size() && t.numeric[c]; };
  if (format == "csv") {
    std::string out;
    for (size_t c = 0; c < ncol; ++c) out += (c ? "," : "") + delimited_cell(t.columns[c], ',');
    out += "\n";
    for (const auto& row : t.rows) {
      for (size_t c = 0; c < ncol; ++c) out += (c ? "," : "") + (c < row.size() && row[c] ? delimited_cell(*row[c], ',') : "");
      out += "\n";
    }
    return out;
  }
  if (format == "json") {
    Json arr = Json::array();
    for (const auto& row : t.rows) {
      Json o = Json::object();
      for (size_t c = 0; c < ncol; ++c) {
        if (c >= row.size() || !row[c]) {
          o[t.columns[c]] = nullptr;
          continue;
        }
        char* end = nullptr;
        const double v = std::strtod(row[c]->c_str(), &end);
        if (is_numeric(c) && !row[c]->empty() && end != nullptr && *end == '\0') {
          // Integers (ids, counts, bytes) exact, as every etscope JSON writes them.
          char* iend = nullptr;
          errno = 0;
          const long long i = std::strtoll(row[c]->c_str(), &iend, 10);
          if (iend != nullptr && *iend == '\0' && errno == 0) {
            o[t.columns[c]] = static_cast<int64_t>(i);
            continue;
          }
          o[t.columns[c]] = number_json(v);
        } else {
          o[t.columns[c]] = *row[c];
        }
      }
      arr.push_back(std::move(o));
    }
    return dump_json(arr) + "\n";
  }
  std::vector<size_t> width(ncol);
  for (size_t c = 0; c < ncol; ++c) width[c] = t.columns[c].size();
  for (const auto& row : t.rows) {
    for (size_t c = 0; c < ncol && c < row.size(); ++c) width[c] = std::max(width[c], row[c] ? row[c]->size() : 1);
  }
  std::string out;
  auto line = [&](auto cell) {
    for (size_t c = 0; c < ncol; ++c) {
      const std::string& s = cell(c);
      const size_t pad = width[c] - std::min(width[c], s.size());
      if (c) out.append(2, ' ');
      if (is_numeric(c)) out.append(pad, ' ');
      out += s;
      if (!is_numeric(c) && c + 1 < ncol) out.append(pad, ' ');
    }
    out += '\n';
  };
  std::vector<std::string> rules(ncol);
  for (size_t c = 0; c < ncol; ++c) rules[c].assign(width[c], '-');
  static const std::string kNone = "-";
  line([&](size_t c) -> const std::string& { return t.columns[c]; });
  line([&](size_t c) -> const std::string& { return rules[c]; });
  for (const auto& row : t.rows) line([&](size_t c) -> const std::string& { return c < row.size() && row[c] ? *row[c] : kNone; });
  return out;
}

}  // namespace etscope::cli
