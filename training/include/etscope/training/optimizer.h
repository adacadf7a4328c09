// Optimizers of `etscope train`: SGD with ExecuTorch's semantics (extension/training's SGD, which
// follows torch.optim.SGD) and AdamW as torch.optim.AdamW defines it, which ExecuTorch has not.
//
// Both update float32 parameters in place from their gradients, in the arithmetic of the
// reference implementation (ExecuTorch's SGD computes each update in double and stores float;
// torch's single-tensor AdamW computes in float), so that loss curves match to float rounding.
// Their state (momentum buffers, Adam moments, step count) can be exported as named tensors and
// loaded back, so that training resumes exactly where it stopped.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "etscope/core/evalue.h"
#include "etscope/core/result.h"

namespace etscope::training {

/// One trainable parameter: its name, its tensor (updated in place) and its gradient.
struct Parameter {
  std::string name;
  TensorImpl* value = nullptr;
  const TensorImpl* grad = nullptr;
};

struct SgdOptions {
  double lr = 0.01;
  double momentum = 0.0;
  double dampening = 0.0;
  double weight_decay = 0.0;
  bool nesterov = false;
};

struct AdamWOptions {
  double lr = 1e-3;
  double beta1 = 0.9;
  double beta2 = 0.999;
  double eps = 1e-8;
  double weight_decay = 1e-2;
  bool amsgrad = false;
};

/// A named float32 tensor of optimizer state, e.g. "sgd.momentum_buffer/net.fc.weight".
struct StateTensor {
  std::string key;
  std::vector<int32_t> sizes;
  std::vector<float> values;
};

class Optimizer {
 public:
  virtual ~Optimizer() = default;
  /// "sgd" or "adamw".
  virtual const char* kind() const = 0;
  /// Checks the options (finite, in range) and the parameters (float32, gradient of the same
  /// shape); call once before the first step.
  virtual Status bind(std::span<const Parameter> params) = 0;
  /// One update of every bound parameter from its gradient.
  virtual void step(std::span<const Parameter> params) = 0;
  /// Steps taken so far (restored by load_state).
  virtual int64_t steps() const = 0;
  /// The buffers as named tensors ("sgd.momentum_buffer/<param>", "adamw.exp_avg/<param>", ...);
  /// call after bind().
  virtual std::vector<StateTensor> state() const = 0;
  /// Restores state() output and the step count after bind(); fails naming the key that is
  /// missing or has the wrong size.
  virtual Status load_state(const std::vector<StateTensor>& state, int64_t steps) = 0;

  static std::unique_ptr<Optimizer> sgd(const SgdOptions& options);
  static std::unique_ptr<Optimizer> adamw(const AdamWOptions& options);
};

}  // namespace etscope::training
