// Small formatting helpers shared by the text renderers: table cells and byte-count options.
// Shapes, sizes, numbers and durations are etscope/core/text.h's; program descriptions
// (arguments, locations, roles, counts) come from etscope/inspect/program_description.h.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "etscope/core/text.h"
#include "etscope/formats/program.h"

namespace etscope::cli {

/// One cell of a delimited table: for CSV (sep ',') quoted per RFC 4180 when it holds a comma,
/// quote, CR or LF (quotes doubled), so stack traces survive; for TSV (sep '\t') tabs and line
/// breaks become spaces, TSV having no quoting.
std::string delimited_cell(const std::string& s, char sep);

/// A byte count with an optional K/M/G/T suffix (powers of 1024, "B"/"iB" allowed): "512M",
/// "8G", "1000"; nullopt when it is not one or overflows 64 bits (--max-memory of run and train).
std::optional<uint64_t> parse_byte_count(const std::string& text);

}  // namespace etscope::cli
