// Trainer: a joint forward+backward program (ExecuTorch's training export) loaded through the
// runner and driven one step at a time, in the spirit of ExecuTorch's extension/training
// TrainingModule: it finds the loss (output 0), the gradients and the parameters through the
// program's __et_training_* methods, names them, binds the parameters from the .pte or external
// .ptd files, and saves them back as a .ptd that ExecuTorch's runtime loads for the split program.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "etscope/core/result.h"
#include "etscope/formats/tensor_data_file.h"
#include "etscope/formats/training.h"
#include "etscope/runner/runner.h"
#include "etscope/training/dataset.h"
#include "etscope/training/optimizer.h"

namespace etscope::training {

struct StepResult {
  double loss = 0;
  /// Share of the batch whose prediction (output 1: class indices, or logits whose argmax is
  /// taken) equals the label input; absent when the program has no such outputs.
  std::optional<double> accuracy;
  double forward_backward_ms = 0;
  double optimizer_ms = 0;
};

class Trainer {
 public:
  /// Loads the program (and .ptd files) of `options`; its method must be a training method whose
  /// parameters live in writable (planned) memory. Errors name the file and what is missing.
  static Result<std::unique_ptr<Trainer>> load(const runner::RunnerOptions& options);
  ~Trainer();
  Trainer(const Trainer&) = delete;
  Trainer& operator=(const Trainer&) = delete;

  runner::Runner& runner();
  const TrainingLayout& layout() const;
  /// The program's inputs (dtype, planned shape): what the data must provide.
  const std::vector<InputSpec>& inputs() const;
  std::span<const Parameter> parameters() const;

  /// One forward-backward pass on `batch` (one byte vector per input), recorded in a block named
  /// `block`; nothing is updated. A loss that is not finite is an error naming it.
  Result<StepResult> forward_backward(const std::vector<std::vector<uint8_t>>& batch,
                                      const char* block = "Execute");
  /// A training step: forward_backward, then `optimizer` updates the parameters (recorded as an
  /// Optimizer::step event in the same block). When the loss is not finite the update is skipped
  /// and the parameters go back to those before the previous update, the last that gave a finite
  /// loss (rolled_back() then says so); the optimizer's state is not rolled back. A kernel error
  /// leaves the parameters as they are.
  Result<StepResult> step(const std::vector<std::vector<uint8_t>>& batch, Optimizer& optimizer);
  /// True after a step whose non-finite loss sent the parameters back one update.
  bool rolled_back() const;

  /// The parameters as .ptd bytes, keyed by their names.
  Result<std::vector<uint8_t>> parameters_ptd() const;
  /// Sets every parameter from `file` (a .ptd from parameters_ptd); fails naming a missing key or
  /// a layout that differs from the parameter's.
  Status load_parameters(const TensorDataFile& file);

 private:
  struct Impl;
  explicit Trainer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace etscope::training
