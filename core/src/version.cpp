#include "etscope/core/version.h"

// core/CMakeLists.txt defines it for this file alone, from project(VERSION).
#ifndef ETSCOPE_VERSION
#error "ETSCOPE_VERSION must be defined by the build"
#endif

namespace etscope {

std::string_view etscope_version() { return ETSCOPE_VERSION; }

}  // namespace etscope
