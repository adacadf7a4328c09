#include "etscope/core/json.h"

#include <charconv>

namespace etscope {

Result<Json> parse_json(std::string_view text, uint64_t max_depth, const std::string& where) {
  // nlohmann's parser is iterative, but each level still costs memory; count brackets outside
  // strings first so the limit applies before any allocation.
  uint64_t depth = 0;
  bool in_string = false;
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
    }
  }
  try {
    return Json::parse(text.begin(), text.end());
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
