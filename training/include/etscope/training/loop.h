// The training loop of `etscope train`: steps or epochs over a Dataset with an Optimizer,
// validation passes, periodic and final saves of the parameters (.ptd) with the optimizer state
// beside them (<name>.optim.ptd), resuming from such a pair, and the numbers of the run (loss
// curve, accuracy, step times and their statistics). Front ends pass callbacks to show progress.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "etscope/core/result.h"
#include "etscope/inspect/training_curve.h"
#include "etscope/training/dataset.h"
#include "etscope/training/optimizer.h"
#include "etscope/training/trainer.h"

namespace etscope::training {

struct LoopOptions {
  int64_t steps = 0;   ///< Run this many steps (or, when 0, `epochs` whole epochs).
  int64_t epochs = 0;
  bool shuffle = false;
  uint64_t seed = 0;
  int64_t eval_every = 0;  ///< With validation data: every K steps (0: after the last step only).
  std::string save_path;   ///< Parameters written here (.ptd) at the end, and every `save_every` steps.
  int64_t save_every = 0;
  std::string resume_from;  ///< A .ptd written by a previous run, its .optim.ptd beside it.
};

// The curve a run records lives in libinspect (the viewer and the store read it without the runtime).
using inspect::Curve;
using inspect::ValidationPoint;

struct Percentiles {
  double p50 = 0, p90 = 0;
};

struct LoopSummary {
  int64_t steps = 0;            ///< Steps run by this invocation.
  int64_t total_steps = 0;      ///< Including those before a resume.
  double epochs = 0;            ///< total_steps / batches per epoch.
  size_t batches_per_epoch = 0;
  size_t dropped_samples = 0;   ///< The last partial batch, left out of every epoch.
  Percentiles forward_backward_ms, optimizer_ms;
  double final_loss = 0;
  std::optional<double> final_accuracy;
  uint64_t peak_rss_bytes = 0;
  std::vector<std::string> saved;  ///< Files written, in order.
};

/// Progress of one step: which, of how many, and its result.
struct StepEvent {
  int64_t step = 0, total = 0;
  int64_t epoch = 0;
  const StepResult* result = nullptr;
  double elapsed_s = 0;
};

struct LoopCallbacks {
  std::function<void(const StepEvent&)> on_step;
  std::function<void(const ValidationPoint&)> on_validation;
  std::function<void(const std::string& path)> on_save;
};

/// The optimizer state file beside a parameters file: "w.ptd" -> "w.optim.ptd".
std::string optimizer_state_path(const std::string& parameters_path);

/// Runs the loop. A failing step (a non-finite loss, a kernel error) ends it with the error, after
/// saving the last good parameters when `save_path` is set; `curve` keeps the steps done so far.
Result<LoopSummary> run_loop(Trainer& trainer, Optimizer& optimizer, const Dataset& data, const Dataset* validation,
                             const LoopOptions& options, const LoopCallbacks& callbacks, Curve* curve);

}  // namespace etscope::training
