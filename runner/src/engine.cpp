#include "etscope/runner/engine.h"

#include "worker_path.h"

#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <utility>

#include "etscope/core/version.h"

namespace etscope::runner {
namespace {

// The etscope engine: a runtime::Method, and the inputs it sets again before each execution.
class EtscopeEngine final : public Engine {
 public:
  explicit EtscopeEngine(std::unique_ptr<runtime::Method> method) : method_(std::move(method)) {}

  EngineKind kind() const override { return EngineKind::kEtscope; }
  std::string version() const override { return std::string(etscope_version()); }
  uint32_t threads() const override { return method_->threads(); }
  size_t num_inputs() const override { return method_->num_inputs(); }
  size_t num_outputs() const override { return method_->num_outputs(); }
  const EValue& input(size_t i) const override { return method_->input(i); }
  const EValue& output(size_t i) const override { return method_->output(i); }
  Status set_input(size_t i, std::span<const uint8_t> data, std::span<const int64_t> sizes) override {
    ETSCOPE_TRY(method_->set_input(i, data, sizes));
    if (kept_.size() < num_inputs()) kept_.resize(num_inputs());
    kept_[i].bytes.assign(data.begin(), data.end());
    kept_[i].sizes.assign(sizes.begin(), sizes.end());
    kept_[i].set = true;
    return ok_status();
  }
  Status set_scalar_input(size_t i, const EValue& value) override { return method_->set_scalar_input(i, value); }
  Result<double> execute(const char* block) override {
    const auto t0 = std::chrono::steady_clock::now();
    for (size_t i = 0; i < kept_.size(); ++i) {
      if (kept_[i].set) ETSCOPE_TRY(method_->set_input(i, kept_[i].bytes, kept_[i].sizes));
    }
    ETSCOPE_TRY(method_->execute(block));
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  }
  runtime::Method* method() override { return method_.get(); }

 private:
  struct Kept {
    bool set = false;
    std::vector<uint8_t> bytes;
    std::vector<int64_t> sizes;
  };
  std::unique_ptr<runtime::Method> method_;
  std::vector<Kept> kept_;
};

}  // namespace

const char* engine_name(EngineKind kind) {
  switch (kind) {
    case EngineKind::kEtscope: return "etscope";
    case EngineKind::kExecutorch: return "executorch";
  }
  return "unknown";
}

const char* engine_description(EngineKind kind) {
  switch (kind) {
    case EngineKind::kEtscope:
      return "etscope's own kernels, XNNPACK delegate graphs run node by node by etscope (named with XNNPACK's "
             "operator names); not ExecuTorch's runtime";
    case EngineKind::kExecutorch:
      return "ExecuTorch's own runtime from the executorch wheel (kernels_optimized, kernels_quantized, the XNNPACK "
             "delegate timed by XNNPACK's profiler), in a worker process";
  }
  return "unknown engine";
}

Result<EngineKind> parse_engine(std::string_view name) {
  if (name == engine_name(EngineKind::kEtscope)) return EngineKind::kEtscope;
  if (name == engine_name(EngineKind::kExecutorch)) return EngineKind::kExecutorch;
  return Error(ErrorCode::kInvalidArgument, "unknown engine '" + std::string(name) + "' (engines: executorch, etscope)");
}

const char* executorch_build_version() {
#ifdef ETSCOPE_EXECUTORCH_VERSION
  return ETSCOPE_EXECUTORCH_VERSION;
#else
  return "";
#endif
}

std::string executorch_worker_path() {
  if (const char* env = std::getenv("ETSCOPE_EXECUTORCH_WORKER"); env != nullptr && *env != '\0') return env;
  char self[4096];
  const ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  if (n <= 0) return "etscope-executorch";
  std::string dir(self, static_cast<size_t>(n));
  dir = dir.substr(0, dir.rfind('/') + 1);
  return dir + "etscope-executorch";
}

Status engine_available(EngineKind kind) {
  if (kind == EngineKind::kEtscope) return ok_status();
  if (*executorch_build_version() == '\0') {
    return Error(ErrorCode::kNotSupported,
                 "this etscope was built without ExecuTorch's runtime: `scripts/dev.sh setup` fetches the pinned executorch "
                 "wheel, then rebuild (or configure with -DETSCOPE_EXECUTORCH=ON -DETSCOPE_EXECUTORCH_DIR=<the wheel's "
                 "executorch folder>); --engine etscope runs with etscope's own kernels");
  }
  const std::string worker = executorch_worker_path();
  if (access(worker.c_str(), X_OK) != 0) {
    return Error(ErrorCode::kNotSupported, "the ExecuTorch engine's worker " + worker +
                                               " is missing (set ETSCOPE_EXECUTORCH_WORKER to its path); --engine etscope "
                                               "runs with etscope's own kernels");
  }
  return ok_status();
}

EngineKind default_engine() { return engine_available(EngineKind::kExecutorch).ok() ? EngineKind::kExecutorch : EngineKind::kEtscope; }

Result<std::unique_ptr<Engine>> load_etscope_engine(const Program& program, const std::string& method_name,
                                                    const runtime::MethodOptions& options) {
  ETSCOPE_ASSIGN_OR_RETURN(std::unique_ptr<runtime::Method> method, runtime::Method::load(program, method_name, options));
  return std::unique_ptr<Engine>(std::make_unique<EtscopeEngine>(std::move(method)));
}

}  // namespace etscope::runner
