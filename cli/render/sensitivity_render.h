// Renderers for `etscope debug --sensitivity` (numerics/sensitivity.h): the ranking of quantized
// layers as an aligned table and the suggestion, or JSON. Every number comes from libnumerics.
#pragma once

#include <ostream>

#include <nlohmann/json.hpp>

#include "etscope/numerics/sensitivity.h"

namespace etscope::cli {

/// The reference, the program's SQNR (as run, emulated, all float), one row per layer (rank, op,
/// module, SQNR with it in float and what that recovers, SQNR with it alone quantized, its time in
/// integers and on floats on etscope's engine), then the suggested layers to keep in float.
void render_sensitivity(const numerics::Sensitivity& s, std::ostream& out);

/// {"reference", "sqnr_db": {program, emulated, float}, "layers": [...], "suggestion": {...}};
/// non-finite SQNRs as the strings "inf", "-inf", "nan".
nlohmann::ordered_json sensitivity_json(const numerics::Sensitivity& s);

}  // namespace etscope::cli
