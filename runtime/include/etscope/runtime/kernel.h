// Kernels and their registry.
//
// A kernel receives the KernelCall's argument list exactly as the program lists it: every schema
// argument in order, then the out argument(s), then the return value once more (see
// etscope/formats/op_signatures.h). It reports failure through the context and returns; it must
// not allocate: scratch memory comes from KernelContext::scratch(), sized at load time by the
// kernel's optional `scratch` function.
#pragma once

#include <cstdarg>
#include <cstddef>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "etscope/core/result.h"
#include "etscope/core/evalue.h"

namespace etscope::runtime {

class KernelContext {
 public:
  explicit KernelContext(std::span<uint8_t> scratch) : scratch_(scratch) {}

  /// Records a failure (the first one wins) with a printf-style message.
  void fail(ErrorCode code, const char* format, ...) __attribute__((format(printf, 3, 4)));
  bool failed() const { return failed_; }
  ErrorCode error_code() const { return code_; }
  const char* message() const { return message_; }

  /// Scratch memory reserved for this instruction at load time (64-byte aligned).
  std::span<uint8_t> scratch() const { return scratch_; }

 private:
  std::span<uint8_t> scratch_;
  bool failed_ = false;
  ErrorCode code_ = ErrorCode::kInternal;
  char message_[256] = {};
};

using Args = std::span<EValue* const>;
using KernelFn = void (*)(KernelContext& ctx, Args args);
/// Bytes of scratch a call with these (load-time) arguments needs; may read shapes and scalars.
using ScratchFn = size_t (*)(Args args);

struct Kernel {
  KernelFn run = nullptr;
  ScratchFn scratch = nullptr;
  /// True for kernels ExecuTorch wraps with generated code (aten::, dim_order_ops::): the runtime
  /// then records a `native_call_<op>.<overload>` event around the body and logs the outputs.
  bool codegen_wrapped = true;
  /// Element types the kernel accepts: bit i stands for the ScalarType with code i (codes 0..29).
  /// Filled at registration; listings (`etscope kernels`) read it through dtype_list().
  uint32_t dtypes = 0;
  /// For kernels ExecuTorch registers with EXECUTORCH_LIBRARY (the `llama::` LLM operators): the
  /// event is named after the operator itself ("llama::custom_sdpa.out"), not native_call_<op>.
  bool named_by_operator = false;

  std::vector<ScalarType> dtype_list() const {
    std::vector<ScalarType> out;
    for (int code = 0; code < 32; ++code) {
      if (dtypes & (uint32_t{1} << code)) out.push_back(static_cast<ScalarType>(code));
    }
    return out;
  }
};

class KernelRegistry {
 public:
  /// Registers `kernel` under "ns::op.overload". Re-registering a name replaces it.
  void add(std::string name, Kernel kernel) { kernels_[std::move(name)] = kernel; }
  const Kernel* find(const std::string& name) const {
    auto it = kernels_.find(name);
    return it == kernels_.end() ? nullptr : &it->second;
  }
  size_t size() const { return kernels_.size(); }
  std::vector<std::string> names() const;

  /// The registry with every kernel etscope ships.
  static const KernelRegistry& portable();

 private:
  std::unordered_map<std::string, Kernel> kernels_;
};

/// Adds etscope's portable kernels to `registry` (kernels/register_kernels.cpp).
void register_portable_kernels(KernelRegistry& registry);

}  // namespace etscope::runtime
