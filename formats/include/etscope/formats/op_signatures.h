// What the .pte does not say directly about a KernelCall: which arguments are outputs.
//
// ExecuTorch kernels are out-variants. The emitter passes the inputs, then the `out` arguments,
// then the call's return value once more as the last argument: the out tensor itself for a
// single-output operator, or a TensorList of all out tensors for one that returns a tuple
// (seen in every real program, e.g. max_pool2d_with_indices: `..., %1, %2, [%1,%2]`).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "etscope/formats/program.h"

namespace etscope {

/// Number of values an operator's schema returns, from a table of multi-output ATen operators;
/// 1 for operators not in the table. Used only when the argument list does not show it.
size_t kernel_output_count(const std::string& qualified_name);

/// Positions of the schema's `Tensor(a!)` arguments before `*`: inputs the kernel writes in place
/// (llama::update_cache's cache, sdpa_with_kv_cache's two caches). Empty for most operators.
std::vector<size_t> kernel_mutated_inputs(const std::string& qualified_name);

/// Appends the tensor values `value` names: itself when it is a tensor, the tensor items of a
/// TensorList or OptionalTensorList (absent items skipped); nothing for other values or an index
/// outside the plan.
void append_tensor_values(const ExecutionPlan& plan, int32_t value, std::vector<int32_t>& out);

/// A tensor that holds bytes before the first instruction runs: a constant (in the program or a
/// .ptd), a planned tensor with an initial value, mutable external data.
bool has_initial_value(const TensorInfo& tensor);

/// The tensors a DelegateCall reads and writes (lists expanded). Its arguments do not say which
/// are outputs: a tensor is an input when it already holds a value (`written(v)`: a method input
/// or made by an earlier instruction; or has_initial_value), an output otherwise.
struct DelegateTensors {
  std::vector<int32_t> inputs, outputs;
};
template <typename Written>
DelegateTensors delegate_call_tensors(const ExecutionPlan& plan, const Instruction& instruction, const Written& written) {
  DelegateTensors out;
  std::vector<int32_t> tensors;
  for (int32_t v : instruction.args) append_tensor_values(plan, v, tensors);
  for (int32_t v : tensors) {
    const bool input = written(v) || has_initial_value(plan.values[static_cast<size_t>(v)].tensor);
    (input ? out.inputs : out.outputs).push_back(v);
  }
  return out;
}

struct KernelArgs {
  std::vector<int32_t> inputs;   ///< Arguments before the out arguments.
  std::vector<int32_t> mutated;  ///< The inputs the kernel writes in place (also listed in inputs).
  std::vector<int32_t> outputs;  ///< The out arguments (the tensors the kernel writes).
  int32_t return_value = -1;     ///< The trailing return-value argument, or -1 if absent.
};

/// Splits a KernelCall's arguments into inputs and outputs using the return-value convention,
/// falling back to kernel_output_count() for argument lists that do not follow it.
KernelArgs split_kernel_args(const ExecutionPlan& plan, const Instruction& instruction);

}  // namespace etscope
