#include "etscope/formats/op_signatures.h"

#include <string_view>

namespace etscope {
namespace {

struct Entry {
  std::string_view name;  // operator name without the overload
  size_t outputs;
};

// Operators whose ATen schema returns more than one tensor. Everything else returns one.
constexpr Entry kMultiOutput[] = {
    {"aten::max_pool2d_with_indices", 2},
    {"aten::max_pool3d_with_indices", 2},
    {"aten::native_batch_norm", 3},
    {"aten::_native_batch_norm_legit", 3},
    {"aten::_native_batch_norm_legit_no_training", 3},
    {"aten::_native_batch_norm_legit_functional", 5},
    {"aten::native_layer_norm", 3},
    {"aten::native_group_norm", 3},
    {"aten::native_dropout", 2},
    {"aten::convolution_backward", 3},
    {"aten::native_batch_norm_backward", 3},
    {"aten::native_layer_norm_backward", 3},
    {"aten::topk", 2},
    {"aten::sort", 2},
    {"aten::max", 2},   // max.dim_max
    {"aten::min", 2},   // min.dim_min
    {"aten::var_mean", 2},
    {"aten::std_mean", 2},
    {"aten::aminmax", 2},
    {"aten::_unique2", 3},
    {"aten::unique_dim", 3},
    {"aten::mode", 2},
    {"aten::kthvalue", 2},
    {"aten::cummax", 2},
    {"aten::cummin", 2},
    {"aten::_linalg_svd", 3},
    {"aten::linalg_qr", 2},
};

std::string_view base_name(std::string_view qualified) {
  // "ns::name.overload" -> "ns::name"; the namespace separator has no dots.
  size_t sep = qualified.find("::");
  size_t dot = qualified.find('.', sep == std::string_view::npos ? 0 : sep + 2);
  return dot == std::string_view::npos ? qualified : qualified.substr(0, dot);
}

std::string_view overload_of(std::string_view qualified) {
  size_t sep = qualified.find("::");
  size_t dot = qualified.find('.', sep == std::string_view::npos ? 0 : sep + 2);
  return dot == std::string_view::npos ? std::string_view() : qualified.substr(dot + 1);
}

const Entry* lookup(const std::string& qualified) {
  std::string_view base = base_name(qualified);
  std::string_view overload = overload_of(qualified);
  // max.out / min.out (whole-tensor reductions against another tensor) return one value; only
  // the dim variants return (values, indices).
  if ((base == "aten::max" || base == "aten::min") && overload.find("dim") == std::string_view::npos) {
    return nullptr;
  }
  for (const Entry& e : kMultiOutput) {
    if (e.name == base) return &e;
  }
  return nullptr;
}

}  // namespace

std::vector<size_t> kernel_mutated_inputs(const std::string& qualified_name) {
  const std::string_view base = base_name(qualified_name);
  if (base == "llama::update_cache" || base == "llama::update_cache_with_indices") return {1};
  if (base == "llama::sdpa_with_kv_cache") return {3, 4};
  return {};
}

size_t kernel_output_count(const std::string& qualified_name) {
  const Entry* e = lookup(qualified_name);
  return e ? e->outputs : 1;
}

}  // namespace etscope

namespace etscope {

namespace {

KernelArgs split_by_return(const ExecutionPlan& plan, const Instruction& in, const std::string& name) {
  KernelArgs out;
  const std::vector<int32_t>& args = in.args;
  const size_t n = args.size();
  if (n == 0) return out;
  const int32_t ret = args.back();
  const Value& rv = plan.values[static_cast<size_t>(ret)];
  // Tuple return: the trailing TensorList repeats the out arguments just before it.
  if (rv.kind == ValueKind::kTensorList && !rv.tensor_list.empty() && n >= rv.tensor_list.size() + 1) {
    const size_t k = rv.tensor_list.size();
    bool matches = true;
    for (size_t i = 0; i < k; ++i) matches &= args[n - 1 - k + i] == rv.tensor_list[i];
    if (matches) {
      out.inputs.assign(args.begin(), args.end() - static_cast<std::ptrdiff_t>(k + 1));
      out.outputs = rv.tensor_list;
      out.return_value = ret;
      return out;
    }
  }
  // Single return: the out argument appears twice at the end.
  if (n >= 2 && args[n - 2] == ret) {
    out.inputs.assign(args.begin(), args.end() - 2);
    out.outputs = {ret};
    out.return_value = ret;
    return out;
  }
  const size_t k = std::min(kernel_output_count(name), n);
  out.inputs.assign(args.begin(), args.end() - static_cast<std::ptrdiff_t>(k));
  out.outputs.assign(args.end() - static_cast<std::ptrdiff_t>(k), args.end());
  return out;
}

}  // namespace

KernelArgs split_kernel_args(const ExecutionPlan& plan, const Instruction& in) {
  std::string name;
  if (in.op_index >= 0 && static_cast<size_t>(in.op_index) < plan.operators.size()) {
    name = plan.operators[static_cast<size_t>(in.op_index)].qualified_name();
  }
  KernelArgs out = split_by_return(plan, in, name);
  for (size_t i : kernel_mutated_inputs(name)) {
    if (i < out.inputs.size()) out.mutated.push_back(out.inputs[i]);
  }
  return out;
}

void append_tensor_values(const ExecutionPlan& plan, int32_t value, std::vector<int32_t>& out) {
  if (value < 0 || static_cast<size_t>(value) >= plan.values.size()) return;
  const Value& v = plan.values[static_cast<size_t>(value)];
  if (v.kind == ValueKind::kTensor) {
    out.push_back(value);
  } else if (v.kind == ValueKind::kTensorList || v.kind == ValueKind::kOptionalTensorList) {
    for (int32_t item : v.tensor_list) {
      if (item >= 0 && static_cast<size_t>(item) < plan.values.size() &&
          plan.values[static_cast<size_t>(item)].kind == ValueKind::kTensor) {
        out.push_back(item);
      }
    }
  }
}

bool has_initial_value(const TensorInfo& t) {
  return t.data_kind == TensorDataKind::kConstant || t.data_kind == TensorDataKind::kExternalConstant ||
         t.data_kind == TensorDataKind::kPlannedWithInit || t.data_kind == TensorDataKind::kExternalMutable;
}

}  // namespace etscope
