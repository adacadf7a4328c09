// Small formatting helpers shared by the text renderers.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "etscope/formats/program.h"

namespace etscope::cli {

/// "f32[1,3,32,32]"; "f32[]" for a scalar.
std::string shape_string(ScalarType dtype, const std::vector<int32_t>& sizes);

/// "48 B", "1.5 KiB", "12.3 MiB".
std::string human_bytes(uint64_t bytes);

/// A number as the shortest text that reads back to the same double ("0.1", "3", "1e-08").
std::string number_string(double v);

/// A float as the shortest text that reads back to the same float ("0.25", "-0.4907230").
std::string float_string(float v);

/// One value as an instruction argument: "%3 f32[1,3,32,32]", "%4 const f32[16,3,3,3]",
/// "%5 =1", "%8 =[3,3]", "%2 =None".
std::string argument_string(const ExecutionPlan& plan, int32_t value_index);

/// Where a tensor's data lives: "arena 1 @ 32", "constant @ file 0x980 (64 B)",
/// "external 'net.linear.weight'", "unplanned".
std::string tensor_location(const TensorInfo& tensor);

/// Resolves an IntList's value indices to the integers they hold (unresolvable items read 0).
std::vector<int64_t> resolve_int_list(const ExecutionPlan& plan, const Value& list);

}  // namespace etscope::cli

namespace etscope::cli {

/// What each segment of the program holds, e.g. "constants", "mutable data",
/// "delegate XnnpackBackend", "named data 'key'", or "unreferenced".
std::vector<std::string> segment_roles(const Program& program);

/// Operators with the number of KernelCalls using each, in the file's operator order.
std::vector<std::pair<std::string, size_t>> operator_call_counts(const ExecutionPlan& plan);

}  // namespace etscope::cli
