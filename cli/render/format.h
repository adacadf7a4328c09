// Small formatting helpers shared by the text renderers. Program descriptions (arguments,
// locations, roles, counts) come from etscope/inspect/program_description.h.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "etscope/formats/program.h"

namespace etscope::cli {

/// "f32[1,3,32,32]"; "f32[]" for a scalar (inspect::shape_text).
std::string shape_string(ScalarType dtype, const std::vector<int32_t>& sizes);

/// "48 B", "1.5 KiB", "12.3 MiB" (inspect::bytes_text).
std::string human_bytes(uint64_t bytes);

/// One cell of a delimited table: for CSV (sep ',') quoted per RFC 4180 when it holds a comma,
/// quote, CR or LF (quotes doubled), so stack traces survive; for TSV (sep '\t') tabs and line
/// breaks become spaces, TSV having no quoting.
std::string delimited_cell(const std::string& s, char sep);

/// A number as the shortest text that reads back to the same double ("0.1", "3", "1e-08").
std::string number_string(double v);

/// A float as the shortest text that reads back to the same float ("0.25", "-0.4907230").
std::string float_string(float v);

/// A byte count with an optional K/M/G/T suffix (powers of 1024, "B"/"iB" allowed): "512M",
/// "8G", "1000"; nullopt when it is not one or overflows 64 bits (--max-memory of run and train).
std::optional<uint64_t> parse_byte_count(const std::string& text);

}  // namespace etscope::cli
