// The files of a training run's curve (`etscope train --curve/--plot`): JSON and CSV with one
// row per step, and an SVG of the loss (and accuracy) against the step. The numbers are the
// loop's (loop.h); these functions only lay them out, so the CLI, the viewer and the store read
// one format.
#pragma once

#include <string>

#include "etscope/core/result.h"
#include "etscope/training/loop.h"

namespace etscope::training {

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

}  // namespace etscope::training
