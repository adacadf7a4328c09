// Training programs: which methods of a program are joint forward+backward graphs, and where in
// their outputs the loss, the gradients and the parameters are.
//
// ExecuTorch's exporter (torch.export's _export_forward_backward, then to_executorch) marks a
// training method `m` with two extra methods that each return one Int:
// `__et_training_gradients_index_<m>` (the first gradient output) and
// `__et_training_parameters_index_<m>` (the first parameter output). Outputs before the
// gradients are the forward's (the loss first, then anything else the module returned);
// gradients and then parameters follow, in the order of the module's named parameters, whose
// fully-qualified names a third method, `__et_training_fqn_<m>`, returns as Strings.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "etscope/formats/program.h"

namespace etscope {

struct TrainingLayout {
  std::string method;
  size_t gradients_begin = 0;   ///< Output index of the first gradient.
  size_t parameters_begin = 0;  ///< Output index of the first parameter.
  size_t outputs = 0;           ///< Output count of the method.
  /// One name per parameter (and its gradient), from `__et_training_fqn_<m>`; where that method
  /// is missing or short, the parameter tensor's own fqn, else "parameter_<i>".
  std::vector<std::string> parameter_names;

  /// Forward outputs: [0, gradients_begin); the loss is output 0.
  size_t forward_outputs() const { return gradients_begin; }
  size_t gradient_count() const { return parameters_begin - gradients_begin; }
  size_t parameter_count() const { return outputs - parameters_begin; }
};

/// The training layout of `method`, or nullopt when the program does not mark it as a training
/// method or its markers are inconsistent (indices out of order or beyond the outputs).
std::optional<TrainingLayout> training_layout(const Program& program, const std::string& method);

/// Every method of `program` that is marked as a training method, in plan order.
std::vector<TrainingLayout> training_methods(const Program& program);

/// True for a marker method (`__et_training_*`), which holds no computation of its own.
bool is_training_marker(const std::string& method);

}  // namespace etscope
