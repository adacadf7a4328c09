// The CLI's JSON output: the Json type every verb builds, dumping without exceptions, numbers
// that JSON cannot hold, and the JSON of programs, tensor-data files and bundled programs
// (documented in docs/json.md).
#pragma once

#include <nlohmann/json.hpp>

#include "etscope/formats/bundled_program.h"
#include "etscope/formats/tensor_data_file.h"
#include "etscope/formats/program.h"
#include "etscope/formats/tensor_stats.h"
#include "etscope/inspect/engine_identity.h"

namespace etscope::cli {

using Json = nlohmann::ordered_json;

/// The whole program; `only_plan` (if not null) restricts "plans" to that plan.
Json program_json(const Program& program, const ExecutionPlan* only_plan = nullptr);
Json plan_json(const ExecutionPlan& plan);
Json tensor_data_file_json(const TensorDataFile& file);
Json bundled_program_json(const BundledProgram& bundled);
Json tensor_stats_json(const TensorStats& stats);

/// Adds "engine" and "engine_version" (docs/json.md): the engine that made a run's timings, both
/// null when the dump has no engine marker.
void put_engine_json(Json& j, const inspect::EngineIdentity& engine);

/// A number; NaN and infinities (which JSON lacks) as strings, so no number is silently lost.
Json number_json(double v);

/// Serializes with 2-space indentation. Strings from files need not be valid UTF-8; invalid
/// bytes become U+FFFD rather than an exception.
std::string dump_json(const Json& j);

}  // namespace etscope::cli
