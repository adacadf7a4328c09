#include "etscope/runner/engine.h"

#include <utility>

#include "etscope/core/version.h"

namespace etscope::runner {
namespace {

// The etscope engine: a runtime::Method, nothing added.
class EtscopeEngine final : public Engine {
 public:
  explicit EtscopeEngine(std::unique_ptr<runtime::Method> method) : method_(std::move(method)) {}

  EngineKind kind() const override { return EngineKind::kEtscope; }
  std::string version() const override { return std::string(etscope_version()); }
  size_t num_inputs() const override { return method_->num_inputs(); }
  size_t num_outputs() const override { return method_->num_outputs(); }
  const EValue& input(size_t i) const override { return method_->input(i); }
  const EValue& output(size_t i) const override { return method_->output(i); }
  Status set_input(size_t i, std::span<const uint8_t> data, std::span<const int64_t> sizes) override {
    return method_->set_input(i, data, sizes);
  }
  Status set_scalar_input(size_t i, const EValue& value) override { return method_->set_scalar_input(i, value); }
  Status execute(const char* block) override { return method_->execute(block); }
  runtime::Method* method() override { return method_.get(); }

 private:
  std::unique_ptr<runtime::Method> method_;
};

}  // namespace

const char* engine_name(EngineKind kind) {
  switch (kind) {
    case EngineKind::kEtscope: return "etscope";
  }
  return "unknown";
}

const char* engine_description(EngineKind kind) {
  switch (kind) {
    case EngineKind::kEtscope:
      return "etscope's own kernels, XNNPACK delegate graphs run node by node by etscope (named with XNNPACK's "
             "operator names); not ExecuTorch's runtime";
  }
  return "unknown engine";
}

Result<EngineKind> parse_engine(std::string_view name) {
  if (name == engine_name(EngineKind::kEtscope)) return EngineKind::kEtscope;
  return Error(ErrorCode::kInvalidArgument, "unknown engine '" + std::string(name) + "' (engines: etscope)");
}

Result<std::unique_ptr<Engine>> load_etscope_engine(const Program& program, const std::string& method_name,
                                                    const runtime::MethodOptions& options) {
  ETSCOPE_ASSIGN_OR_RETURN(std::unique_ptr<runtime::Method> method, runtime::Method::load(program, method_name, options));
  return std::unique_ptr<Engine>(std::make_unique<EtscopeEngine>(std::move(method)));
}

}  // namespace etscope::runner
