// Private to the runner: where the ExecuTorch engine's worker executable is.
#pragma once

#include <string>

namespace etscope::runner {

/// $ETSCOPE_EXECUTORCH_WORKER, else `etscope-executorch` beside the running executable.
std::string executorch_worker_path();

}  // namespace etscope::runner
