#include <algorithm>
#include <cstdio>

#include "etscope/runtime/kernel.h"

namespace etscope::runtime {

void KernelContext::fail(ErrorCode code, const char* format, ...) {
  if (failed_) return;
  failed_ = true;
  code_ = code;
  va_list args;
  va_start(args, format);
  std::vsnprintf(message_, sizeof(message_), format, args);
  va_end(args);
}

std::vector<std::string> KernelRegistry::names() const {
  std::vector<std::string> out;
  out.reserve(kernels_.size());
  for (const auto& [name, kernel] : kernels_) out.push_back(name);
  std::sort(out.begin(), out.end());
  return out;
}

const KernelRegistry& KernelRegistry::portable() {
  static const KernelRegistry registry = [] {
    KernelRegistry r;
    register_portable_kernels(r);
    return r;
  }();
  return registry;
}

}  // namespace etscope::runtime
