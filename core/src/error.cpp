#include <cstdarg>
#include <cstdio>

#include "etscope/core/result.h"

namespace etscope {

const char* to_string(ErrorCode code) {
  switch (code) {
    case ErrorCode::kInternal: return "internal";
    case ErrorCode::kInvalidArgument: return "invalid argument";
    case ErrorCode::kNotFound: return "not found";
    case ErrorCode::kIo: return "i/o";
    case ErrorCode::kWrongKind: return "wrong kind of file";
    case ErrorCode::kTruncated: return "truncated";
    case ErrorCode::kCorrupt: return "corrupt";
    case ErrorCode::kNotSupported: return "not supported";
    case ErrorCode::kOutOfResources: return "out of resources";
  }
  return "unknown";
}

Error make_error(ErrorCode code, const char* format, ...) {
  va_list args;
  va_start(args, format);
  va_list copy;
  va_copy(copy, args);
  int needed = std::vsnprintf(nullptr, 0, format, copy);
  va_end(copy);
  std::string message(needed > 0 ? static_cast<size_t>(needed) : 0, '\0');
  if (needed > 0) std::vsnprintf(message.data(), message.size() + 1, format, args);
  va_end(args);
  return Error(code, std::move(message));
}

}  // namespace etscope
