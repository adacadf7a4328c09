#include "render/json_output.h"

#include <cmath>

#include "etscope/formats/bool_constants.h"
#include "etscope/formats/op_signatures.h"
#include "etscope/inspect/program_description.h"
#include "render/format.h"

namespace etscope::cli {
namespace {

Json range_json(FileRange r) { return Json{{"offset", r.offset}, {"size", r.size}}; }

Json location_json(const TensorInfo& t) {
  Json j{{"kind", to_string(t.data_kind)}};
  if (t.allocation) {
    j["memory_id"] = t.allocation->memory_id;
    j["offset"] = t.allocation->offset;
  }
  if (!t.fqn.empty()) j["fqn"] = t.fqn;
  if (t.data_kind == TensorDataKind::kConstant || t.data_kind == TensorDataKind::kPlannedWithInit) {
    j["data_buffer_idx"] = t.data_buffer_idx;
    j["file_offset"] = t.data.offset;
  }
  return j;
}

Json value_json(const ExecutionPlan& plan, size_t index) {
  const Value& v = plan.values[index];
  Json j{{"index", index}, {"kind", to_string(v.kind)}};
  // Computed by an instruction: for a scalar, "value" is the file's placeholder.
  if (v.written_at_run_time) j["set_at_run_time"] = true;
  switch (v.kind) {
    case ValueKind::kNone: break;
    case ValueKind::kInt: j["value"] = v.int_value; break;
    case ValueKind::kBool: j["value"] = v.bool_value; break;
    case ValueKind::kDouble: j["value"] = number_json(v.double_value); break;
    case ValueKind::kString: j["value"] = v.string_value; break;
    case ValueKind::kIntList: {
      j["items"] = v.int_list;
      Json ints = Json::array();
      for (const std::optional<int64_t>& item : inspect::resolve_int_list(plan, v)) {
        ints.push_back(item ? Json(*item) : Json(nullptr));
      }
      j["value"] = std::move(ints);
      break;
    }
    case ValueKind::kDoubleList: {
      Json list = Json::array();
      for (double d : v.double_list) list.push_back(number_json(d));
      j["value"] = list;
      break;
    }
    case ValueKind::kBoolList: {
      Json list = Json::array();
      for (uint8_t b : v.bool_list) list.push_back(b != 0);
      j["value"] = list;
      break;
    }
    case ValueKind::kTensorList:
    case ValueKind::kOptionalTensorList: j["items"] = v.tensor_list; break;
    case ValueKind::kTensor: {
      const TensorInfo& t = v.tensor;
      j["dtype"] = scalar_type_name(t.dtype);
      j["sizes"] = t.sizes;
      j["dim_order"] = t.dim_order;
      j["numel"] = t.numel;
      j["nbytes"] = t.nbytes;
      j["requires_grad"] = t.requires_grad;
      j["shape_dynamism"] = inspect::dynamism_name(t.dynamism);
      j["location"] = location_json(t);
      break;
    }
  }
  return j;
}

Json instruction_json(const ExecutionPlan& plan, size_t chain, size_t index, const Instruction& in) {
  Json j{{"chain", chain}, {"index", index}, {"kind", to_string(in.kind)}};
  switch (in.kind) {
    case InstructionKind::kKernelCall: {
      KernelArgs split = split_kernel_args(plan, in);
      j["op_index"] = in.op_index;
      j["operator"] = plan.operators[static_cast<size_t>(in.op_index)].qualified_name();
      j["args"] = in.args;
      j["inputs"] = split.inputs;
      j["outputs"] = split.outputs;
      break;
    }
    case InstructionKind::kDelegateCall:
      j["delegate_index"] = in.delegate_index;
      j["backend"] = plan.delegates[static_cast<size_t>(in.delegate_index)].id;
      j["args"] = in.args;
      break;
    case InstructionKind::kMoveCall:
      j["move_from"] = in.move_from;
      j["move_to"] = in.move_to;
      break;
    case InstructionKind::kJumpFalse:
      j["cond_value_index"] = in.cond_value;
      j["destination_instruction"] = in.destination;
      break;
    case InstructionKind::kFree: j["value_index"] = in.free_value; break;
  }
  if (chain < plan.chains.size() && index < plan.chains[chain].stacktrace.size()) {
    Json frames = Json::array();
    for (const Frame& f : plan.chains[chain].stacktrace[index]) {
      frames.push_back({{"filename", f.filename}, {"lineno", f.lineno}, {"name", f.name}, {"context", f.context}});
    }
    j["stacktrace"] = frames;
  }
  return j;
}

Json layout_json(const TensorLayout& l) {
  return Json{{"dtype", scalar_type_name(l.dtype)}, {"sizes", l.sizes}, {"dim_order", l.dim_order},
              {"numel", l.numel}, {"nbytes", l.nbytes}};
}

Json bundled_value_json(const BundledValue& v) {
  switch (v.kind) {
    case BundledValue::Kind::kTensor:
      return Json{{"kind", "Tensor"}, {"dtype", scalar_type_name(v.dtype)}, {"sizes", v.sizes},
                  {"dim_order", v.dim_order}, {"nbytes", v.nbytes}, {"file_offset", v.data.offset}};
    case BundledValue::Kind::kInt: return Json{{"kind", "Int"}, {"value", v.int_value}};
    case BundledValue::Kind::kBool: return Json{{"kind", "Bool"}, {"value", v.bool_value}};
    case BundledValue::Kind::kDouble: return Json{{"kind", "Double"}, {"value", number_json(v.double_value)}};
    case BundledValue::Kind::kNone: break;
  }
  return Json{{"kind", "None"}};
}

}  // namespace

void put_engine_json(Json& j, const inspect::EngineIdentity& engine) {
  j["engine"] = engine.known() ? Json(engine.name) : Json(nullptr);
  j["engine_version"] = engine.known() ? Json(engine.version) : Json(nullptr);
}

Json number_json(double v) {
  if (std::isfinite(v)) return v;
  return number_text(v);
}

Json plan_json(const ExecutionPlan& plan) {
  Json j{{"name", plan.name}, {"inputs", plan.inputs}, {"outputs", plan.outputs}};
  Json values = Json::array();
  for (size_t i = 0; i < plan.values.size(); ++i) values.push_back(value_json(plan, i));
  j["values"] = std::move(values);
  Json instructions = Json::array();
  for (size_t c = 0; c < plan.chains.size(); ++c) {
    for (size_t i = 0; i < plan.chains[c].instructions.size(); ++i) {
      instructions.push_back(instruction_json(plan, c, i, plan.chains[c].instructions[i]));
    }
  }
  j["instructions"] = std::move(instructions);
  j["instruction_count"] = plan.instruction_count();
  j["chain_count"] = plan.chains.size();
  Json ops = Json::array();
  for (const Operator& op : plan.operators) ops.push_back(op.qualified_name());
  j["operators"] = std::move(ops);
  Json counts = Json::object();
  for (const inspect::OperatorCalls& op : inspect::operator_call_counts(plan)) counts[op.name] = op.calls;
  j["operator_call_counts"] = std::move(counts);
  Json delegates = Json::array();
  for (const Delegate& d : plan.delegates) {
    Json specs = Json::array();
    for (const CompileSpec& cs : d.compile_specs) specs.push_back({{"key", cs.key}, {"size", cs.value.size()}});
    delegates.push_back({{"id", d.id}, {"location", d.inline_data ? "inline" : "segment"}, {"index", d.index},
                         {"data", range_json(d.data)}, {"compile_specs", specs}});
  }
  j["delegates"] = std::move(delegates);
  j["non_const_buffer_sizes"] = plan.non_const_buffer_sizes;
  j["container"] = {{"inputs", plan.encoded_inputs}, {"outputs", plan.encoded_outputs}};
  return j;
}

Json program_json(const Program& p, const ExecutionPlan* only_plan) {
  Json j{{"file", p.name()}, {"file_identifier", p.file_identifier}, {"file_size", p.file_size},
         {"root_offset", p.root_offset}, {"version", p.version}, {"flatbuffer_size", p.flatbuffer_size}};
  if (p.header) {
    j["extended_header"] = {{"length", p.header->length},
                            {"program_size", p.header->program_size},
                            {"segment_base_offset", p.header->segment_base_offset},
                            {"segment_data_size", p.header->segment_data_size}};
  } else {
    j["extended_header"] = nullptr;
  }
  Json segments = Json::array();
  const std::vector<std::string> roles = inspect::segment_roles(p);
  for (size_t i = 0; i < p.segments.size(); ++i) {
    segments.push_back({{"index", i}, {"offset", p.segments_relative[i].offset}, {"size", p.segments[i].size},
                        {"file_offset", p.segments[i].offset}, {"content", roles[i]}});
  }
  j["segments"] = std::move(segments);
  j["constants"] = {{"storage", to_string(p.constant_storage)}, {"count", inspect::constant_count(p)},
                    {"bytes", p.constant_bytes}};
  Json named = Json::array();
  for (const auto& nd : p.named_data) {
    named.push_back({{"key", nd.key}, {"segment_index", nd.segment_index}, {"size", p.segments[nd.segment_index].size}});
  }
  j["named_data"] = std::move(named);
  j["problems"] = p.problems;
  Json warnings = Json::array();
  for (const NonBinaryBool& b : non_binary_bool_tensors(p)) warnings.push_back(b.message);
  j["warnings"] = std::move(warnings);
  Json plans = Json::array();
  for (const ExecutionPlan& plan : p.plans) {
    if (only_plan == nullptr || only_plan == &plan) plans.push_back(plan_json(plan));
  }
  j["plans"] = std::move(plans);
  return j;
}

Json tensor_data_file_json(const TensorDataFile& f) {
  Json j{{"file", f.name()}, {"file_identifier", "FT01"}, {"layout", f.legacy ? "legacy" : "current"},
         {"file_size", f.blob->size()}, {"version", f.version}};
  if (f.legacy) j["tensor_alignment"] = f.tensor_alignment;
  j["header"] = {{"flatbuffer_offset", f.flatbuffer_offset}, {"flatbuffer_size", f.flatbuffer_size},
                 {"segment_base_offset", f.segment_base_offset}, {"segment_data_size", f.segment_data_size}};
  Json segments = Json::array();
  for (size_t i = 0; i < f.segments.size(); ++i) {
    segments.push_back({{"index", i}, {"offset", f.segments[i].offset - f.segment_base_offset},
                        {"size", f.segments[i].size}, {"file_offset", f.segments[i].offset}});
  }
  j["segments"] = std::move(segments);
  Json entries = Json::array();
  for (const TensorDataEntry& e : f.entries) {
    Json entry{{"key", e.key}, {"segment_index", e.segment_index}, {"file_offset", e.data.offset},
               {"nbytes", e.data.size}};
    entry["tensor"] = e.layout ? layout_json(*e.layout) : Json(nullptr);
    entries.push_back(std::move(entry));
  }
  j["entries"] = std::move(entries);
  return j;
}

Json bundled_program_json(const BundledProgram& b) {
  Json j{{"file", b.name()}, {"file_identifier", b.file_identifier}, {"version", b.version},
         {"program_range", range_json(b.program_range)}};
  Json suites = Json::array();
  for (const BundledTestSuite& s : b.suites) {
    Json cases = Json::array();
    for (const BundledTestCase& c : s.cases) {
      Json inputs = Json::array(), outputs = Json::array();
      for (const auto& v : c.inputs) inputs.push_back(bundled_value_json(v));
      for (const auto& v : c.expected_outputs) outputs.push_back(bundled_value_json(v));
      cases.push_back({{"inputs", inputs}, {"expected_outputs", outputs}});
    }
    suites.push_back({{"method_name", s.method_name}, {"test_case_count", s.cases.size()}, {"test_cases", cases}});
  }
  j["method_test_suites"] = std::move(suites);
  j["program"] = program_json(b.program);
  return j;
}

std::string dump_json(const Json& j) { return j.dump(2, ' ', false, Json::error_handler_t::replace); }

Json tensor_stats_json(const TensorStats& s) {
  Json first = Json::array();
  for (double v : s.first_values) first.push_back(number_json(v));
  return Json{{"count", s.count}, {"finite", s.finite_count}, {"nan", s.nan_count}, {"inf", s.inf_count},
              {"min", s.min}, {"max", s.max}, {"mean", s.mean}, {"std", s.std}, {"first_values", first}};
}

}  // namespace etscope::cli
