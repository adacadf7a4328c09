// Which kernel source file registers each operator, read from the sources themselves, so the
// operator page (docs/operators.md) and its test can name the file a newcomer should open.
#pragma once

#include <map>
#include <string>

namespace etscope::testing {

/// Directory of the portable kernels in the source tree (runtime/src/kernels).
std::string kernel_source_dir();

/// Operator name -> file name ("aten::cumsum.out" -> "op_reduce.cpp") for every operator an
/// op_<family>.cpp of kernel_source_dir() registers. A registration is a string literal naming an
/// operator ("<namespace>::<name>") passed first to a call inside the file's
/// register_<family>_kernels function (r.add("aten::...", ...) or a local helper). An operator
/// registered by two files maps to both, joined by " ".
std::map<std::string, std::string> registered_operator_files();

}  // namespace etscope::testing
