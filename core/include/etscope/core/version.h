// etscope's version: one string for the whole build, taken from CMake's project(VERSION).
//
// `etscope --version` prints it, the run store records it with every run, and the etscope engine
// names itself with it in the ETDump's engine marker (core/event_names.h), so a timing always
// says which build of etscope's runtime produced it.
#pragma once

#include <string_view>

namespace etscope {

/// "0.1.0": the top-level CMakeLists.txt's project VERSION. The view is of a string literal
/// (NUL-terminated, alive for the whole program).
std::string_view etscope_version();

}  // namespace etscope
