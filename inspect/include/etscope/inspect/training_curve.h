// A training run's curve (`etscope train --curve/--plot`): per step the loss, accuracy and step
// times, and the validation points; its files: JSON and CSV with one row per step, and an SVG of
// the loss (and accuracy) against the step. The training loop (runtime/training) fills a Curve;
// this header only holds and lays it out, so the CLI, the viewer and the store, which must not
// link the runtime, read one format.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "etscope/core/result.h"

namespace etscope::inspect {

struct ValidationPoint {
  int64_t step = 0;  ///< After this many steps.
  double loss = 0;   ///< Mean over the validation batches.
  std::optional<double> accuracy;
};

struct Curve {
  int64_t first_step = 1;  ///< Step number of loss[0] (after a resume: where it continued).
  std::vector<double> loss;
  std::vector<std::optional<double>> accuracy;
  std::vector<double> step_ms;           ///< Forward-backward plus optimizer, per step.
  std::vector<double> forward_backward_ms;
  std::vector<double> optimizer_ms;
  std::vector<ValidationPoint> val;
};

/// {"first_step", "loss": [...], "accuracy": [...] or null, "val": [{"step","loss","accuracy"}],
///  "step_ms": [...], "forward_backward_ms": [...], "optimizer_ms": [...]}. A step without an
/// accuracy (when others have one) is null. Non-finite numbers are written as null.
std::string curve_json(const Curve& curve);

/// Header `step,loss,accuracy,step_ms,forward_backward_ms,optimizer_ms,val_loss,val_accuracy`,
/// one row per step; the val columns are filled on the steps after which validation ran.
std::string curve_csv(const Curve& curve);

/// Reads curve_json's output back (the viewer's and the tests' way in). Errors name `name`.
Result<Curve> parse_curve_json(std::string_view text, const std::string& name);

struct CurveSvgOptions {
  int width = 900;
  int height = 420;
  std::string title;  ///< e.g. the program's file name.
};

/// Loss against step (left axis), accuracy in [0, 1] against step (right axis) when present,
/// validation points on both. Never fails; an empty curve gives a frame saying so.
std::string curve_svg(const Curve& curve, const CurveSvgOptions& options = {});

}  // namespace etscope::inspect
