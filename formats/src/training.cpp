#include "etscope/formats/training.h"

namespace etscope {
namespace {

constexpr const char* kGradientsMarker = "__et_training_gradients_index_";
constexpr const char* kParametersMarker = "__et_training_parameters_index_";
constexpr const char* kNamesMarker = "__et_training_fqn_";

// The Int a marker method returns, if it exists and returns one.
std::optional<int64_t> marker_index(const Program& program, const std::string& name) {
  const ExecutionPlan* marker = program.find_plan(name);
  if (marker == nullptr || marker->outputs.empty()) return std::nullopt;
  const int32_t out = marker->outputs.front();
  if (out < 0 || static_cast<size_t>(out) >= marker->values.size()) return std::nullopt;
  const Value& v = marker->values[static_cast<size_t>(out)];
  if (v.kind != ValueKind::kInt) return std::nullopt;
  return v.int_value;
}

}  // namespace

std::optional<TrainingLayout> training_layout(const Program& program, const std::string& method) {
  const ExecutionPlan* plan = program.find_plan(method);
  if (plan == nullptr || is_training_marker(method)) return std::nullopt;
  const auto grads = marker_index(program, kGradientsMarker + method);
  const auto params = marker_index(program, kParametersMarker + method);
  if (!grads || !params) return std::nullopt;
  const auto n = static_cast<int64_t>(plan->outputs.size());
  if (*grads < 0 || *grads > *params || *params > n) return std::nullopt;
  TrainingLayout layout;
  layout.method = method;
  layout.gradients_begin = static_cast<size_t>(*grads);
  layout.parameters_begin = static_cast<size_t>(*params);
  layout.outputs = static_cast<size_t>(n);
  const ExecutionPlan* names = program.find_plan(kNamesMarker + method);
  for (size_t i = 0; i < layout.parameter_count(); ++i) {
    std::string name;
    if (names != nullptr && i < names->outputs.size()) {
      const int32_t out = names->outputs[i];
      if (out >= 0 && static_cast<size_t>(out) < names->values.size() &&
          names->values[static_cast<size_t>(out)].kind == ValueKind::kString) {
        name = names->values[static_cast<size_t>(out)].string_value;
      }
    }
    if (name.empty()) {
      const int32_t v = plan->outputs[layout.parameters_begin + i];
      if (v >= 0 && static_cast<size_t>(v) < plan->values.size()) name = plan->values[static_cast<size_t>(v)].tensor.fqn;
    }
    layout.parameter_names.push_back(name.empty() ? "parameter_" + std::to_string(i) : name);
  }
  return layout;
}

std::vector<TrainingLayout> training_methods(const Program& program) {
  std::vector<TrainingLayout> out;
  for (const ExecutionPlan& plan : program.plans) {
    if (auto layout = training_layout(program, plan.name)) out.push_back(std::move(*layout));
  }
  return out;
}

bool is_training_marker(const std::string& method) { return method.rfind("__et_training_", 0) == 0; }

}  // namespace etscope
