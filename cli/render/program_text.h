// Text rendering of programs for `etscope pte` and `etscope bpte`.
#pragma once

#include <ostream>
#include <vector>

#include "etscope/formats/program.h"
#include "etscope/inspect/program_description.h"

namespace etscope::cli {

/// File-level facts: identifier, sizes, header, segments, constants, named data, methods.
/// Named data is summarised (count, bytes, a few keys; its segments folded into one line) unless
/// `list_named_data`, which lists every key once with its segment and size.
void print_program_header(std::ostream& out, const Program& program, bool list_named_data = false);

/// One plan: inputs/outputs, operators with call counts, delegates, arenas, instruction count.
void print_plan_summary(std::ostream& out, const inspect::PlanDescription& plan);

/// Every instruction of every chain, one per line:
/// `12  aten::convolution.out(%3 f32[1,3,32,32], %4 const f32[16,3,3,3], ...) -> %9 f32[...]`.
void print_instructions(std::ostream& out, const inspect::PlanDescription& plan);

/// Every value: index, kind, dtype and shape, bytes, where its data lives.
void print_values(std::ostream& out, const inspect::PlanDescription& plan);

/// The same, describing `plan` first (inspect::PlanDescription::describe).
void print_plan_summary(std::ostream& out, const ExecutionPlan& plan);
void print_instructions(std::ostream& out, const ExecutionPlan& plan);
void print_values(std::ostream& out, const ExecutionPlan& plan);

}  // namespace etscope::cli

#include <string>

#include "etscope/formats/tensor_stats.h"

namespace etscope::cli {

/// Statistics block for one tensor: title line, then min/max/mean/std, NaN/Inf counts and the
/// first values.
void print_tensor_stats(std::ostream& out, const std::string& title, ScalarType dtype,
                        const std::vector<int32_t>& sizes, const TensorStats& stats);

/// Prints each of the program's problems to stderr as "etscope: <file>: warning: <problem>".
void print_problems(const Program& program);

}  // namespace etscope::cli
