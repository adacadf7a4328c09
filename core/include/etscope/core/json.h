// Exception-free JSON for every etscope library: parsing with a nesting limit (and Python's
// non-finite tokens NaN, Infinity, -Infinity read as float values), and checked accessors that
// answer "absent or of another type" instead of throwing, as nlohmann's own accessors do.
// Libraries read JSON only through this header.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>

#include "etscope/core/result.h"

namespace etscope {

using Json = nlohmann::json;

/// Parses UTF-8 JSON text. Refuses nesting deeper than `max_depth` before parsing (so a hostile
/// document cannot exhaust memory or stack). `where` starts every error message. The bare tokens
/// NaN, Infinity and -Infinity that Python's json module writes become float values.
Result<Json> parse_json(std::string_view text, uint64_t max_depth, const std::string& where);
inline Result<Json> parse_json(std::span<const uint8_t> bytes, uint64_t max_depth, const std::string& where) {
  return parse_json(std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()), max_depth, where);
}

/// The active member of a serde union: the only key of a single-key object (current encoding),
/// or the one non-null key when every member is listed (2023 encoding). Null `value` when `j` is
/// no union.
struct UnionMember {
  std::string_view key;
  const Json* value = nullptr;
};
UnionMember union_member(const Json& j);

/// `j[key]` when j is an object holding key, else null.
const Json* member(const Json& j, std::string_view key);
/// String member or "".
std::string string_member(const Json& j, std::string_view key);
/// An integer held as a JSON number; nullopt otherwise (or out of int64 range).
std::optional<int64_t> as_int64(const Json& j);
/// A decimal integer in a string ("12", "-3"), strictly; nullopt otherwise.
std::optional<int64_t> parse_int(std::string_view text);
/// Any JSON number as a double; nullopt otherwise.
std::optional<double> as_double(const Json& j);
/// A JSON boolean; nullopt otherwise (a string "yes" is not a boolean).
std::optional<bool> as_bool(const Json& j);
/// `j[key]` when j is an object holding key with a value of `type` (number_float accepts any
/// number, number_integer signed or unsigned integers), else null.
const Json* typed_member(const Json& j, std::string_view key, Json::value_t type);

}  // namespace etscope
