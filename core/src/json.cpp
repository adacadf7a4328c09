#include "etscope/core/json.h"

#include <cctype>
#include <charconv>
#include <limits>

namespace etscope {

namespace {

using namespace std::string_view_literals;

// Python's json module writes the non-finite floats as the bare tokens NaN, Infinity and
// -Infinity (ETRecords of transformers hold -Infinity in attention masks). Strict JSON has no
// such tokens and nlohmann's lexer refuses them, so they are swapped for marker strings before
// parsing and the markers for float values afterwards. A marker starts with a NUL character,
// which a document can only spell as "\u0000" inside a string, never as a raw byte.
constexpr std::string_view kMarkerNan = "\0etscope:nan"sv;
constexpr std::string_view kMarkerInf = "\0etscope:+inf"sv;
constexpr std::string_view kMarkerNegInf = "\0etscope:-inf"sv;

bool token_at(std::string_view text, size_t i, std::string_view token) {
  if (text.compare(i, token.size(), token) != 0) return false;
  const size_t end = i + token.size();
  // The token must end there: "NaNa" or "Infinity2" stay invalid.
  return end == text.size() || !(std::isalnum(static_cast<unsigned char>(text[end])) || text[end] == '_');
}

void append_marker(std::string& out, std::string_view marker) {
  out += "\"\\u0000";
  out.append(marker.substr(1));
  out += '"';
}

void restore_non_finite(Json& j) {
  if (j.is_string()) {
    const std::string& s = j.get_ref<const std::string&>();
    if (s.empty() || s[0] != '\0') return;
    if (s == kMarkerNan) j = std::numeric_limits<double>::quiet_NaN();
    else if (s == kMarkerInf) j = std::numeric_limits<double>::infinity();
    else if (s == kMarkerNegInf) j = -std::numeric_limits<double>::infinity();
  } else if (j.is_structured()) {
    for (auto& child : j) restore_non_finite(child);
  }
}

}  // namespace

Result<Json> parse_json(std::string_view text, uint64_t max_depth, const std::string& where) {
  // nlohmann's parser is iterative, but each level still costs memory; count brackets outside
  // strings first so the limit applies before any allocation. The same pass finds the
  // non-finite tokens.
  uint64_t depth = 0;
  bool in_string = false;
  bool non_finite = false;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (in_string) {
      if (c == '\\') {
        ++i;
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    if (c == '"') {
      in_string = true;
    } else if (c == '{' || c == '[') {
      if (++depth > max_depth) {
        return Error(ErrorCode::kOutOfResources,
                     where + ": JSON nested deeper than the limit of " + std::to_string(max_depth));
      }
    } else if ((c == '}' || c == ']') && depth > 0) {
      --depth;
    } else if (c == 'N' || c == 'I') {
      non_finite = true;
    }
  }
  std::string rewritten;
  if (non_finite) {
    rewritten.reserve(text.size() + 64);
    in_string = false;
    for (size_t i = 0; i < text.size(); ++i) {
      const char c = text[i];
      if (in_string) {
        rewritten += c;
        if (c == '\\' && i + 1 < text.size()) {
          rewritten += text[++i];
        } else if (c == '"') {
          in_string = false;
        }
        continue;
      }
      if (c == '"') {
        in_string = true;
      } else if (token_at(text, i, "NaN")) {
        append_marker(rewritten, kMarkerNan);
        i += 2;
        continue;
      } else if (token_at(text, i, "Infinity")) {
        append_marker(rewritten, kMarkerInf);
        i += 7;
        continue;
      } else if (token_at(text, i, "-Infinity")) {
        append_marker(rewritten, kMarkerNegInf);
        i += 8;
        continue;
      }
      rewritten += c;
    }
    text = rewritten;
  }
  try {
    Json j = Json::parse(text.begin(), text.end());
    if (non_finite) restore_non_finite(j);
    return j;
  } catch (const Json::exception& e) {
    std::string msg = e.what();
    for (char& ch : msg) {
      if (ch == '\n' || ch == '\r') ch = ' ';
    }
    return Error(ErrorCode::kCorrupt, where + ": invalid JSON: " + msg);
  }
}

UnionMember union_member(const Json& j) {
  if (!j.is_object() || j.empty()) return {};
  if (j.size() == 1) {
    auto it = j.begin();
    return {std::string_view(it.key()), &it.value()};
  }
  for (auto it = j.begin(); it != j.end(); ++it) {
    if (!it.value().is_null()) return {std::string_view(it.key()), &it.value()};
  }
  // Every member null: only `as_none` can be active that way.
  if (auto it = j.find("as_none"); it != j.end()) return {"as_none", &it.value()};
  return {};
}

const Json* member(const Json& j, std::string_view key) {
  if (!j.is_object()) return nullptr;
  auto it = j.find(key);
  return it == j.end() ? nullptr : &*it;
}

std::string string_member(const Json& j, std::string_view key) {
  const Json* m = member(j, key);
  return m != nullptr && m->is_string() ? m->get<std::string>() : std::string();
}

std::optional<int64_t> as_int64(const Json& j) {
  if (j.is_number_integer() && !j.is_number_unsigned()) return j.get<int64_t>();
  if (j.is_number_unsigned()) {
    uint64_t u = j.get<uint64_t>();
    if (u > static_cast<uint64_t>(INT64_MAX)) return std::nullopt;
    return static_cast<int64_t>(u);
  }
  return std::nullopt;
}

std::optional<int64_t> parse_int(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t' || text.back() == '\n')) text.remove_suffix(1);
  if (text.empty()) return std::nullopt;
  int64_t v = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || ptr != text.data() + text.size()) return std::nullopt;
  return v;
}

}  // namespace etscope

namespace etscope {

std::optional<double> as_double(const Json& j) {
  if (j.is_number()) return j.get<double>();
  return std::nullopt;
}

std::optional<bool> as_bool(const Json& j) {
  if (j.is_boolean()) return j.get<bool>();
  return std::nullopt;
}

const Json* typed_member(const Json& j, std::string_view key, Json::value_t type) {
  const Json* m = member(j, key);
  if (m == nullptr) return nullptr;
  if (m->type() == type) return m;
  // Numbers come in three kinds (integer, unsigned, float); any of them is a number.
  if (type == Json::value_t::number_float && m->is_number()) return m;
  if (type == Json::value_t::number_integer && (m->is_number_integer())) return m;
  return nullptr;
}

}  // namespace etscope
