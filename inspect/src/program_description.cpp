#include "etscope/inspect/program_description.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <algorithm>
#include <map>

#include "etscope/formats/blob.h"
#include "etscope/formats/bpte_reader.h"
#include "etscope/formats/file_kind.h"
#include "etscope/formats/op_signatures.h"
#include "etscope/formats/pte_reader.h"
#include "etscope/formats/xnnpack_payload.h"

namespace etscope::inspect {
namespace {

std::string hex(uint64_t v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}

bool valid_index(const ExecutionPlan& plan, int64_t index) {
  return index >= 0 && static_cast<uint64_t>(index) < plan.values.size();
}

std::string joined_arguments(const ExecutionPlan& plan, const std::vector<int32_t>& values) {
  std::string s;
  for (int32_t v : values) {
    if (!s.empty()) s += ", ";
    s += argument_text(plan, v);
  }
  return s;
}

// The contents of a non-tensor value, without index or "=".
std::string scalar_contents(const ExecutionPlan& plan, const Value& v) {
  switch (v.kind) {
    case ValueKind::kTensor: return tensor_type_text(v.tensor);
    case ValueKind::kNone: return "None";
    case ValueKind::kInt: return std::to_string(v.int_value);
    case ValueKind::kBool: return v.bool_value ? "true" : "false";
    case ValueKind::kDouble: return number_text(v.double_value);
    case ValueKind::kString: return "\"" + v.string_value + "\"";
    case ValueKind::kIntList: {
      // An item an instruction computes (a symbolic size) shows as its value index: the file
      // holds only a placeholder for it.
      std::string items;
      const std::vector<std::optional<int64_t>> resolved = resolve_int_list(plan, v);
      for (size_t i = 0; i < resolved.size(); ++i) {
        if (!items.empty()) items += ",";
        const int64_t idx = v.int_list[i];
        if (resolved[i] && plan.values[static_cast<size_t>(idx)].written_at_run_time) {
          items += "%" + std::to_string(idx);
        } else {
          items += resolved[i] ? std::to_string(*resolved[i]) : "?";
        }
      }
      return "[" + items + "]";
    }
    case ValueKind::kDoubleList: {
      std::string items;
      for (double d : v.double_list) items += (items.empty() ? "" : ",") + number_text(d);
      return "[" + items + "]";
    }
    case ValueKind::kBoolList: {
      std::string items;
      for (uint8_t b : v.bool_list) items += std::string(items.empty() ? "" : ",") + (b ? "true" : "false");
      return "[" + items + "]";
    }
    case ValueKind::kTensorList:
    case ValueKind::kOptionalTensorList: {
      std::string items;
      for (int32_t t : v.tensor_list) {
        if (!items.empty()) items += ",";
        items += t < 0 ? "None" : "%" + std::to_string(t);
      }
      return "[" + items + "]";
    }
  }
  return "?";
}

std::vector<IoDescription> describe_io(const ExecutionPlan& plan, const std::vector<int32_t>& indices) {
  std::vector<IoDescription> rows;
  for (int32_t idx : indices) {
    IoDescription row;
    row.value = idx;
    row.text = argument_text(plan, idx);
    if (valid_index(plan, idx) && plan.values[static_cast<size_t>(idx)].kind == ValueKind::kTensor) {
      row.location = location_text(plan.values[static_cast<size_t>(idx)].tensor);
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

}  // namespace

// ---- text pieces -------------------------------------------------------------------------

std::string tensor_type_text(const TensorInfo& t) { return tensor_type_text(t.dtype, t.sizes, t.dynamism); }

std::string tensor_type_text(ScalarType dtype, const std::vector<int32_t>& sizes, ShapeDynamism dynamism) {
  if (dynamism == ShapeDynamism::kStatic) return shape_text(dtype, sizes);
  std::string s = scalar_type_short_name(dtype) + "[";
  for (size_t i = 0; i < sizes.size(); ++i) {
    if (i) s += ",";
    s += dynamism == ShapeDynamism::kDynamicBound ? "<=" + std::to_string(sizes[i]) : std::string("?");
  }
  return s + "]";
}

std::string tensor_bytes_text(const TensorInfo& t) {
  switch (t.dynamism) {
    case ShapeDynamism::kStatic: break;
    case ShapeDynamism::kDynamicBound: return "<=" + std::to_string(t.nbytes) + " B";
    case ShapeDynamism::kDynamicUnbound: return "set at run time";
  }
  return std::to_string(t.nbytes) + " B";
}

const char* dynamism_name(ShapeDynamism dynamism) {
  switch (dynamism) {
    case ShapeDynamism::kStatic: return "static";
    case ShapeDynamism::kDynamicBound: return "dynamic_bound";
    case ShapeDynamism::kDynamicUnbound: return "dynamic_unbound";
  }
  return "?";
}

std::vector<std::optional<int64_t>> resolve_int_list(const ExecutionPlan& plan, const Value& list) {
  std::vector<std::optional<int64_t>> out;
  out.reserve(list.int_list.size());
  for (int64_t idx : list.int_list) {
    if (valid_index(plan, idx) && plan.values[static_cast<size_t>(idx)].kind == ValueKind::kInt) {
      out.emplace_back(plan.values[static_cast<size_t>(idx)].int_value);
    } else {
      out.emplace_back(std::nullopt);
    }
  }
  return out;
}

std::string argument_text(const ExecutionPlan& plan, int32_t value_index) {
  const std::string index = "%" + std::to_string(value_index);
  if (!valid_index(plan, value_index)) return index + " ?";
  const Value& v = plan.values[static_cast<size_t>(value_index)];
  switch (v.kind) {
    case ValueKind::kTensor:
      switch (v.tensor.data_kind) {
        case TensorDataKind::kConstant: return index + " const " + tensor_type_text(v.tensor);
        case TensorDataKind::kExternalConstant:
        case TensorDataKind::kExternalMutable: return index + " ext " + tensor_type_text(v.tensor);
        default: return index + " " + tensor_type_text(v.tensor);
      }
    case ValueKind::kTensorList:
    case ValueKind::kOptionalTensorList: return index + " " + scalar_contents(plan, v);
    default:
      // A scalar an instruction computes has only a placeholder in the file.
      if (v.written_at_run_time && v.kind != ValueKind::kNone) return index + " (set at run time)";
      return index + " =" + scalar_contents(plan, v);
  }
}

std::string value_text(const ExecutionPlan& plan, int32_t value_index) {
  if (!valid_index(plan, value_index)) return "?";
  return scalar_contents(plan, plan.values[static_cast<size_t>(value_index)]);
}

std::string location_text(const TensorInfo& t) {
  std::string arena = "arena ?";
  if (t.allocation) {
    arena = "arena " + std::to_string(t.allocation->memory_id) + " @ " + std::to_string(t.allocation->offset);
  }
  switch (t.data_kind) {
    case TensorDataKind::kConstant:
      return "constant #" + std::to_string(t.data_buffer_idx) + " @ file " + hex(t.data.offset);
    case TensorDataKind::kExternalConstant: return "external '" + t.fqn + "'";
    case TensorDataKind::kExternalMutable: return arena + ", init from external '" + t.fqn + "'";
    case TensorDataKind::kPlannedWithInit: return arena + ", init from file " + hex(t.data.offset);
    case TensorDataKind::kPlanned: return arena;
    case TensorDataKind::kRuntimeSupplied: return "unplanned (set at run time)";
  }
  return "?";
}

std::vector<std::string> tensor_notes(const TensorInfo& t) {
  std::vector<std::string> notes;
  if (!t.fqn.empty() && !t.external) notes.push_back("fqn '" + t.fqn + "'");
  if (t.requires_grad) notes.emplace_back("requires_grad");
  if (t.dynamism == ShapeDynamism::kDynamicBound) notes.emplace_back("dynamic (bounded)");
  if (t.dynamism == ShapeDynamism::kDynamicUnbound) notes.emplace_back("dynamic (unbounded)");
  return notes;
}

std::string instruction_text(const ExecutionPlan& plan, const Instruction& in) {
  switch (in.kind) {
    case InstructionKind::kKernelCall: {
      const std::string op = plan.operators[static_cast<size_t>(in.op_index)].qualified_name();
      const KernelArgs split = split_kernel_args(plan, in);
      const std::string outputs = joined_arguments(plan, split.outputs);
      return op + "(" + joined_arguments(plan, split.inputs) + ") -> " + (outputs.empty() ? "-" : outputs);
    }
    case InstructionKind::kDelegateCall:
      return "delegate #" + std::to_string(in.delegate_index) + " " +
             plan.delegates[static_cast<size_t>(in.delegate_index)].id + "(" + joined_arguments(plan, in.args) + ")";
    case InstructionKind::kMoveCall:
      return "move " + argument_text(plan, in.move_from) + " -> %" + std::to_string(in.move_to);
    case InstructionKind::kJumpFalse:
      return "jump to " + std::to_string(in.destination) + " if not " + argument_text(plan, in.cond_value);
    case InstructionKind::kFree: return "free " + argument_text(plan, in.free_value);
  }
  return "?";
}

const char* instruction_kind_word(InstructionKind kind) {
  switch (kind) {
    case InstructionKind::kKernelCall: return "kernel";
    case InstructionKind::kDelegateCall: return "delegate";
    case InstructionKind::kMoveCall: return "move";
    case InstructionKind::kJumpFalse: return "jump";
    case InstructionKind::kFree: return "free";
  }
  return "?";
}

std::string frame_text(const Frame& f) { return f.filename + ":" + std::to_string(f.lineno) + " in " + f.name; }

// ---- counts ------------------------------------------------------------------------------

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

size_t constant_count(const Program& p) {
  if (p.constant_storage == ConstantStorage::kSegment && !p.constant_offsets.empty()) {
    return p.constant_offsets.size() - 1;
  }
  if (p.constant_storage == ConstantStorage::kInlineBuffer && !p.constant_buffers.empty()) {
    return p.constant_buffers.size() - 1;
  }
  return 0;
}

std::vector<OperatorCalls> operator_call_counts(const ExecutionPlan& plan) {
  std::vector<OperatorCalls> counts;
  for (const Operator& op : plan.operators) counts.push_back({op.qualified_name(), 0});
  for (const Chain& chain : plan.chains) {
    for (const Instruction& in : chain.instructions) {
      if (in.kind == InstructionKind::kKernelCall) ++counts[static_cast<size_t>(in.op_index)].calls;
    }
  }
  return counts;
}

std::vector<DelegateCalls> delegate_call_counts(const ExecutionPlan& plan) {
  std::vector<DelegateCalls> rows;
  std::vector<size_t> row_of(plan.delegates.size());
  for (size_t i = 0; i < plan.delegates.size(); ++i) {
    const std::string& id = plan.delegates[i].id;
    auto it = std::find_if(rows.begin(), rows.end(), [&](const DelegateCalls& r) { return r.backend == id; });
    if (it == rows.end()) it = rows.insert(rows.end(), DelegateCalls{id, 0, 0});
    ++it->delegates;
    row_of[i] = static_cast<size_t>(it - rows.begin());
  }
  for (const Chain& chain : plan.chains) {
    for (const Instruction& in : chain.instructions) {
      if (in.kind == InstructionKind::kDelegateCall && in.delegate_index >= 0 &&
          static_cast<size_t>(in.delegate_index) < row_of.size()) {
        ++rows[row_of[static_cast<size_t>(in.delegate_index)]].calls;
      }
    }
  }
  return rows;
}

std::vector<std::pair<std::string, size_t>> value_kind_counts(const ExecutionPlan& plan) {
  std::map<std::string, size_t> kinds;
  for (const Value& v : plan.values) ++kinds[to_string(v.kind)];
  return {kinds.begin(), kinds.end()};
}

uint64_t planned_bytes(const ExecutionPlan& plan) {
  uint64_t total = 0;
  for (size_t k = 1; k < plan.non_const_buffer_sizes.size(); ++k) {
    total += static_cast<uint64_t>(plan.non_const_buffer_sizes[k]);
  }
  return total;
}

// ---- whole descriptions ------------------------------------------------------------------

ProgramDescription ProgramDescription::describe(const Program& p) {
  ProgramDescription d;
  d.file = p.name();
  char buf[256];
  if (p.header) {
    const ExtendedHeader& h = *p.header;
    const std::string data = h.length >= 32 ? std::to_string(h.segment_data_size) + " B" : "not recorded";
    std::snprintf(buf, sizeof buf, "eh00, %u-byte: program %llu B, segments at %llu, segment data %s", h.length,
                  static_cast<unsigned long long>(h.program_size),
                  static_cast<unsigned long long>(h.segment_base_offset), data.c_str());
  } else {
    std::snprintf(buf, sizeof buf, "none (flat FlatBuffer), root table at 0x%x", p.root_offset);
  }
  d.header = buf;
  if (p.constant_storage == ConstantStorage::kNone) {
    d.constants = "none";
  } else {
    d.constants = std::to_string(constant_count(p)) + " in " + to_string(p.constant_storage) + ", " +
                  bytes_text(p.constant_bytes) +
                  (p.constant_storage == ConstantStorage::kInlineBuffer ? " (legacy inline layout)" : "");
  }
  if (!p.mutable_data_segments.empty() && !p.mutable_data_segments[0].offsets.empty()) {
    d.mutable_data = std::to_string(p.mutable_data_segments[0].offsets.size() - 1) + " initial values in segment " +
                     std::to_string(p.mutable_data_segments[0].segment_index);
  }
  const std::vector<std::string> roles = segment_roles(p);
  for (size_t i = 0; i < p.segments.size(); ++i) {
    d.segments.push_back({p.segments_relative[i].offset, p.segments[i].size, roles[i]});
  }
  for (const NamedDataEntry& nd : p.named_data) {
    d.named_data.push_back({nd.key, nd.segment_index, p.segments[nd.segment_index].size});
    d.named_data_bytes += p.segments[nd.segment_index].size;
    // A role of exactly "named data '<key>'" means nothing else refers to the segment.
    if (nd.segment_index < d.segments.size() && d.segments[nd.segment_index].role == "named data '" + nd.key + "'") {
      d.segments[nd.segment_index].named_data_only = true;
    }
  }
  if (d.named_data.empty()) {
    d.named_data_totals = d.named_data_summary = "none";
  } else {
    constexpr size_t kExamples = 3;
    d.named_data_totals = count_text(d.named_data.size(), "key") + ", " + bytes_text(d.named_data_bytes);
    d.named_data_summary = d.named_data_totals + ", ";
    d.named_data_summary += d.named_data.size() <= kExamples ? "" : "e.g. ";
    for (size_t i = 0; i < d.named_data.size() && i < kExamples; ++i) {
      d.named_data_summary += (i ? ", '" : "'") + d.named_data[i].key + "'";
    }
  }
  for (const ExecutionPlan& plan : p.plans) d.methods.push_back(plan.name);
  return d;
}

PlanDescription PlanDescription::describe(const ExecutionPlan& plan) {
  PlanDescription d;
  d.name = plan.name;
  std::string kinds;
  for (const auto& [kind, n] : value_kind_counts(plan)) kinds += (kinds.empty() ? "" : ", ") + std::to_string(n) + " " + kind;
  d.values_summary = std::to_string(plan.values.size()) + (kinds.empty() ? "" : " (" + kinds + ")");
  d.instructions_summary = std::to_string(plan.instruction_count()) +
                           (plan.chains.size() == 1 ? "" : " in " + std::to_string(plan.chains.size()) + " chains");
  d.inputs = describe_io(plan, plan.inputs);
  d.outputs = describe_io(plan, plan.outputs);
  d.operators = operator_call_counts(plan);

  for (size_t i = 0; i < plan.delegates.size(); ++i) {
    const Delegate& del = plan.delegates[i];
    std::string text = "#" + std::to_string(i) + " " + del.id + ": " + bytes_text(del.data.size) + " " +
                       (del.inline_data ? "inline" : "in segment " + std::to_string(del.index)) + ", compile specs:";
    if (del.compile_specs.empty()) text += " none";
    for (const CompileSpec& cs : del.compile_specs) text += " " + cs.key + " (" + std::to_string(cs.value.size()) + " B)";
    d.delegates.push_back({del.id, std::move(text)});
  }
  for (size_t k = 1; k < plan.non_const_buffer_sizes.size(); ++k) {
    const uint64_t size = static_cast<uint64_t>(plan.non_const_buffer_sizes[k]);
    std::string text = std::to_string(size) + " B";
    if (size >= 1024) text += " (" + bytes_text(size) + ")";
    d.arenas.push_back({static_cast<uint32_t>(k), size, std::move(text)});
  }
  d.planned_bytes = inspect::planned_bytes(plan);
  d.chain_count = plan.chains.size();

  int64_t step = 0;
  for (size_t c = 0; c < plan.chains.size(); ++c) {
    const Chain& chain = plan.chains[c];
    for (size_t i = 0; i < chain.instructions.size(); ++i, ++step) {
      const Instruction& in = chain.instructions[i];
      InstructionDescription row;
      row.chain = static_cast<int32_t>(c);
      row.index = static_cast<int32_t>(i);
      row.step = step;
      row.kind = instruction_kind_word(in.kind);
      switch (in.kind) {
        case InstructionKind::kKernelCall: row.op = plan.operators[static_cast<size_t>(in.op_index)].qualified_name(); break;
        case InstructionKind::kDelegateCall:
          row.op = "delegate " + plan.delegates[static_cast<size_t>(in.delegate_index)].id;
          break;
        default: row.op = row.kind; break;
      }
      row.text = instruction_text(plan, in);
      if (i < chain.stacktrace.size() && !chain.stacktrace[i].empty()) {
        const std::vector<Frame>& frames = chain.stacktrace[i];
        row.source = frame_text(frames.back());
        for (const Frame& f : frames) {
          row.stack += frame_text(f) + "\n";
          if (!f.context.empty()) row.stack += "    " + f.context + "\n";
        }
        d.has_sources = true;
      }
      d.instructions.push_back(std::move(row));
    }
  }

  d.values.reserve(plan.values.size());
  for (size_t i = 0; i < plan.values.size(); ++i) {
    const Value& v = plan.values[i];
    ValueDescription row;
    row.index = static_cast<int32_t>(i);
    row.kind = to_string(v.kind);
    row.type = scalar_contents(plan, v);
    if (v.kind == ValueKind::kTensor) {
      row.is_tensor = true;
      row.nbytes = v.tensor.nbytes;
      row.bytes = tensor_bytes_text(v.tensor);
      row.location = location_text(v.tensor);
      row.notes = tensor_notes(v.tensor);
    }
    d.values.push_back(std::move(row));
  }
  return d;
}

// ---- loading -----------------------------------------------------------------------------

Result<Program> load_program(const std::string& path) {
  ETSCOPE_ASSIGN_OR_RETURN(std::shared_ptr<const Blob> blob, Blob::open_file(path));
  if (sniff_file_kind(blob->bytes()) == FileKind::kBundledProgram) {
    ETSCOPE_ASSIGN_OR_RETURN(BundledProgram bundled, BpteReader::read(blob));
    return std::move(bundled.program);
  }
  return PteReader::read(blob);
}

// ---------------------------------------------------------------------------------------------
// Delegate graphs (XNNPACK payloads)

namespace {

std::string float_text(float v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.9g", static_cast<double>(v));
  return buf;
}

template <typename T>
std::string list_text(const std::vector<T>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? "," : "") + std::to_string(v[i]);
  return s + "]";
}

std::string quant_text(const xnn::Quantization& q) {
  switch (q.kind) {
    case xnn::Quantization::Kind::kNone: return "";
    case xnn::Quantization::Kind::kPerTensor:
      return " scale " + float_text(q.scale) + " zp " + std::to_string(q.zero_point);
    case xnn::Quantization::Kind::kPerChannel:
      return " per-channel(axis " + std::to_string(q.axis) + ", " + std::to_string(q.scales.size()) + " scales)";
    case xnn::Quantization::Kind::kPerRowDynamic:
      return " dynamic per row(" + std::to_string(q.non_batch_dims) + " non-batch dims)";
    case xnn::Quantization::Kind::kPerBlock:
      return " per-block(axis " + std::to_string(q.axis) + ", block " + std::to_string(q.block_size) + ", " +
             std::to_string(q.scales.size()) + " scales)";
  }
  return "";
}

std::string value_text(const xnn::Graph& g, int32_t index) {
  if (index < 0) return "-";
  const xnn::TensorValue& v = g.values[static_cast<size_t>(index)];
  std::string s = "v" + std::to_string(v.id) + " " + xnn::to_string(v.type) + dims_text(v.shape);
  if (v.is_constant) s += " const";
  if (v.flags & xnn::kFlagExternalInput) s += " in#" + std::to_string(v.external_id);
  if (v.flags & xnn::kFlagExternalOutput) s += " out#" + std::to_string(v.external_id);
  if (v.runtime_quantize_to != xnn::ElementType::kInvalid) {
    s += std::string(" quantized to ") + xnn::to_string(v.runtime_quantize_to) + " per row on arrival (dq_datatype)";
  }
  return s + quant_text(v.quant);
}

std::string attributes_text(const xnn::Node& n) {
  std::string s;
  switch (n.kind) {
    case xnn::NodeKind::kConv2d:
    case xnn::NodeKind::kDepthwiseConv2d:
    case xnn::NodeKind::kConvTranspose2d:
    case xnn::NodeKind::kAvgPool2d:
    case xnn::NodeKind::kMaxPool2d:
    case xnn::NodeKind::kArgMaxPool2d: {
      const xnn::ConvParams& c = n.conv;
      s = "kernel " + std::to_string(c.kernel_h) + "x" + std::to_string(c.kernel_w) + " stride " + std::to_string(c.stride_h) + "x" +
          std::to_string(c.stride_w) + " pad " + list_text(std::vector<uint32_t>(c.padding.begin(), c.padding.end())) +
          " dilation " + std::to_string(c.dilation_h) + "x" + std::to_string(c.dilation_w);
      if (c.groups > 0 && n.kind != xnn::NodeKind::kAvgPool2d && n.kind != xnn::NodeKind::kMaxPool2d) {
        s += " groups " + std::to_string(c.groups) + " (" + std::to_string(c.group_in) + "->" + std::to_string(c.group_out) + ")";
      }
      break;
    }
    case xnn::NodeKind::kTranspose: s = "perm " + list_text(n.dims_a); break;
    case xnn::NodeKind::kReshape: s = "shape " + list_text(n.dims_a); break;
    case xnn::NodeKind::kSlice: s = "offsets " + list_text(n.dims_a) + " sizes " + list_text(n.dims_b); break;
    case xnn::NodeKind::kConstantPad:
      s = "before " + list_text(n.dims_a) + " after " + list_text(n.dims_b) + " value " + float_text(n.alpha);
      break;
    case xnn::NodeKind::kConcat2:
    case xnn::NodeKind::kConcat3:
    case xnn::NodeKind::kConcat4:
    case xnn::NodeKind::kConcat5: s = "axis " + std::to_string(n.axis); break;
    case xnn::NodeKind::kResizeBilinear2d: s = "size " + std::to_string(n.new_h) + "x" + std::to_string(n.new_w); break;
    case xnn::NodeKind::kLeakyRelu: s = "slope " + float_text(n.alpha); break;
    case xnn::NodeKind::kElu: s = "alpha " + float_text(n.alpha); break;
    default: break;
  }
  if (!std::isinf(n.output_min) || !std::isinf(n.output_max)) {
    s += (s.empty() ? "" : " ") + std::string("range [") + float_text(n.output_min) + ", " + float_text(n.output_max) + "]";
  }
  if (n.flags != 0) s += (s.empty() ? "" : " ") + std::string("flags ") + std::to_string(n.flags);
  return s;
}

}  // namespace

DelegateGraphDescription describe_delegate_graph(const Program& program, const ExecutionPlan& plan, size_t delegate_index,
                                                 xnn::Graph* graph) {
  DelegateGraphDescription d;
  d.index = delegate_index;
  if (delegate_index >= plan.delegates.size()) {
    d.error = "no delegate " + std::to_string(delegate_index);
    return d;
  }
  const Delegate& del = plan.delegates[delegate_index];
  d.backend = del.id;
  if (del.id != xnn::kBackendId) {
    d.error = "etscope does not read this backend's payload";
    return d;
  }
  auto g = xnn::parse_xnnpack_delegate(program, del, program.name() + ": delegate " + std::to_string(delegate_index));
  if (!g.ok()) {
    d.error = g.error().message();
    return d;
  }
  d.summary = "XNNPACK graph version " + g->version + ", " + std::to_string(g->nodes.size()) + " nodes, " +
              std::to_string(g->values.size()) + " values";
  // A call with dynamic tensor arguments runs the graph at any shape within the declared ones.
  bool dynamic = false;
  for (const Chain& chain : plan.chains) {
    for (const Instruction& in : chain.instructions) {
      if (in.kind != InstructionKind::kDelegateCall || in.delegate_index != static_cast<int32_t>(delegate_index)) continue;
      for (int32_t a : in.args) {
        if (a < 0 || static_cast<size_t>(a) >= plan.values.size()) continue;
        const Value& v = plan.values[static_cast<size_t>(a)];
        dynamic |= v.kind == ValueKind::kTensor && v.tensor.dynamism != ShapeDynamism::kStatic;
      }
    }
  }
  if (dynamic) d.summary += ", dynamic shapes (values declared at their upper bounds)";
  for (size_t i = 0; i < g->nodes.size(); ++i) {
    const xnn::Node& n = g->nodes[i];
    DelegateNodeRow row;
    row.index = i;
    row.kind = xnn::to_string(n.kind);
    row.debug_handle = n.debug_handle;
    for (int32_t v : n.inputs) row.inputs.push_back(value_text(*g, v));
    for (int32_t v : n.outputs) row.outputs.push_back(value_text(*g, v));
    row.attributes = attributes_text(n);
    d.nodes.push_back(std::move(row));
  }
  if (graph != nullptr) *graph = std::move(*g);
  return d;
}

}  // namespace etscope::inspect
