// The inputs of a profiled run as `etscope inspect` and `etscope trace` take them (--etdump,
// --etrecord, --debug-buffer, time scales, --method) and the Inspector built from them.
#pragma once

#include <CLI/CLI.hpp>

#include <string>

#include "etscope/core/result.h"
#include "etscope/inspect/inspector.h"

namespace etscope::cli {

struct InspectInputs {
  std::string etdump, etrecord, debug_buffer;
  std::string source = "ns", target = "ms";
  std::string method = "forward";

  /// Declares the options on `sub`, bound to this object (which must outlive the parse).
  void add_options(CLI::App* sub);
  /// Reads the files and builds the Inspector.
  Result<inspect::Inspector> load() const;
};

}  // namespace etscope::cli
