#include "render/format.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace etscope::cli {

std::string shape_string(ScalarType dtype, const std::vector<int32_t>& sizes) {
  std::string s = scalar_type_short_name(dtype) + "[";
  for (size_t i = 0; i < sizes.size(); ++i) {
    if (i) s += ",";
    s += std::to_string(sizes[i]);
  }
  return s + "]";
}

std::string human_bytes(uint64_t bytes) {
  char buf[64];
  if (bytes < 1024) {
    std::snprintf(buf, sizeof(buf), "%llu B", static_cast<unsigned long long>(bytes));
  } else if (bytes < 1024ull * 1024) {
    std::snprintf(buf, sizeof(buf), "%.1f KiB", static_cast<double>(bytes) / 1024.0);
  } else if (bytes < 1024ull * 1024 * 1024) {
    std::snprintf(buf, sizeof(buf), "%.1f MiB", static_cast<double>(bytes) / (1024.0 * 1024.0));
  } else {
    std::snprintf(buf, sizeof(buf), "%.2f GiB", static_cast<double>(bytes) / (1024.0 * 1024.0 * 1024.0));
  }
  return buf;
}

std::string number_string(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[64];
  for (int precision = 6; precision <= 17; ++precision) {
    std::snprintf(buf, sizeof(buf), "%.*g", precision, v);
    if (std::strtod(buf, nullptr) == v) break;
  }
  return buf;
}

std::string float_string(float v) {
  if (!std::isfinite(v)) return number_string(v);
  char buf[64];
  for (int precision = 6; precision <= 9; ++precision) {
    std::snprintf(buf, sizeof(buf), "%.*g", precision, static_cast<double>(v));
    if (std::strtof(buf, nullptr) == v) break;
  }
  return buf;
}

std::vector<int64_t> resolve_int_list(const ExecutionPlan& plan, const Value& list) {
  std::vector<int64_t> out;
  for (int64_t idx : list.int_list) {
    const Value& item = plan.values[static_cast<size_t>(idx)];
    out.push_back(item.kind == ValueKind::kInt ? item.int_value : 0);
  }
  return out;
}

std::string argument_string(const ExecutionPlan& plan, int32_t value_index) {
  const Value& v = plan.values[static_cast<size_t>(value_index)];
  std::string s = "%" + std::to_string(value_index);
  switch (v.kind) {
    case ValueKind::kTensor: {
      const TensorInfo& t = v.tensor;
      if (t.data_kind == TensorDataKind::kConstant) s += " const";
      if (t.data_kind == TensorDataKind::kExternalConstant || t.data_kind == TensorDataKind::kExternalMutable) {
        s += " ext";
      }
      return s + " " + shape_string(t.dtype, t.sizes);
    }
    case ValueKind::kNone: return s + " =None";
    case ValueKind::kInt: return s + " =" + std::to_string(v.int_value);
    case ValueKind::kBool: return s + (v.bool_value ? " =true" : " =false");
    case ValueKind::kDouble: return s + " =" + number_string(v.double_value);
    case ValueKind::kString: return s + " =\"" + v.string_value + "\"";
    case ValueKind::kIntList: {
      s += " =[";
      auto ints = resolve_int_list(plan, v);
      for (size_t i = 0; i < ints.size(); ++i) s += (i ? "," : "") + std::to_string(ints[i]);
      return s + "]";
    }
    case ValueKind::kDoubleList: {
      s += " =[";
      for (size_t i = 0; i < v.double_list.size(); ++i) s += (i ? "," : "") + number_string(v.double_list[i]);
      return s + "]";
    }
    case ValueKind::kBoolList: {
      s += " =[";
      for (size_t i = 0; i < v.bool_list.size(); ++i) s += std::string(i ? "," : "") + (v.bool_list[i] ? "true" : "false");
      return s + "]";
    }
    case ValueKind::kTensorList:
    case ValueKind::kOptionalTensorList: {
      s += " [";
      for (size_t i = 0; i < v.tensor_list.size(); ++i) {
        s += (i ? "," : "");
        s += v.tensor_list[i] < 0 ? "None" : "%" + std::to_string(v.tensor_list[i]);
      }
      return s + "]";
    }
  }
  return s;
}

std::string tensor_location(const TensorInfo& t) {
  char buf[160];
  auto arena = [&]() {
    std::snprintf(buf, sizeof(buf), "arena %u @ %llu", t.allocation->memory_id,
                  static_cast<unsigned long long>(t.allocation->offset));
    return std::string(buf);
  };
  switch (t.data_kind) {
    case TensorDataKind::kConstant:
      std::snprintf(buf, sizeof(buf), "constant #%u @ file 0x%llx", t.data_buffer_idx,
                    static_cast<unsigned long long>(t.data.offset));
      return buf;
    case TensorDataKind::kExternalConstant: return "external '" + t.fqn + "'";
    case TensorDataKind::kExternalMutable: return arena() + ", init from external '" + t.fqn + "'";
    case TensorDataKind::kPlannedWithInit: {
      std::string a = arena();
      std::snprintf(buf, sizeof(buf), ", init from file 0x%llx", static_cast<unsigned long long>(t.data.offset));
      return a + buf;
    }
    case TensorDataKind::kPlanned: return arena();
    case TensorDataKind::kRuntimeSupplied: return "unplanned (set at run time)";
  }
  return "?";
}

}  // namespace etscope::cli

namespace etscope::cli {

std::vector<std::string> segment_roles(const Program& program) {
  std::vector<std::string> roles(program.segments.size());
  auto add = [&](size_t index, const std::string& role) {
    if (index >= roles.size()) return;
    if (!roles[index].empty()) {
      if (roles[index].find(role) != std::string::npos) return;
      roles[index] += ", ";
    }
    roles[index] += role;
  };
  if (program.constant_storage == ConstantStorage::kSegment || !program.constant_offsets.empty()) {
    add(program.constant_segment_index, "constants");
  }
  for (const auto& m : program.mutable_data_segments) add(m.segment_index, "mutable data");
  for (const ExecutionPlan& plan : program.plans) {
    for (const Delegate& d : plan.delegates) {
      if (!d.inline_data) add(d.index, "delegate " + d.id);
    }
  }
  for (const NamedDataEntry& nd : program.named_data) add(nd.segment_index, "named data '" + nd.key + "'");
  for (auto& r : roles) {
    if (r.empty()) r = "unreferenced";
  }
  return roles;
}

std::vector<std::pair<std::string, size_t>> operator_call_counts(const ExecutionPlan& plan) {
  std::vector<std::pair<std::string, size_t>> counts;
  for (const Operator& op : plan.operators) counts.emplace_back(op.qualified_name(), 0);
  for (const Chain& chain : plan.chains) {
    for (const Instruction& in : chain.instructions) {
      if (in.kind == InstructionKind::kKernelCall) ++counts[static_cast<size_t>(in.op_index)].second;
    }
  }
  return counts;
}

}  // namespace etscope::cli
