// Reading .pte files. Sections:
//   [header]     the optional eh00 extended header and the FlatBuffer region
//   [values]     EValues, tensors and where their data lives
//   [plans]      instructions, operators, delegates, arenas
//   [program]    segments, constants, named data; the entry points
#include "etscope/formats/pte_reader.h"

#include "etscope/formats/op_signatures.h"

#include <cstring>

#include "etscope/core/checked.h"
#include "etscope/formats/file_kind.h"
#include "etscope_fb/program_generated.h"
#include "etscope/flatbuffer_util/flatbuffer_util.h"

namespace etscope {
namespace pfb = ::etscope::fb::pte;
namespace {

// ---------------------------------------------------------------------------------------------
// [header]

constexpr size_t kHeaderOffset = 8;
constexpr uint32_t kMinHeaderLength = 24;

Error wrong_kind_error(std::span<const uint8_t> bytes, const std::string& name) {
  FileKind kind = sniff_file_kind(bytes);
  if (kind == FileKind::kProgramOtherVersion) {
    return Error(ErrorCode::kNotSupported,
                 name + ": identifier '" + printable_identifier(bytes, 4) +
                     "' is an ExecuTorch program of an incompatible format version (expected ET12)");
  }
  if (kind == FileKind::kUnknown) {
    return Error(ErrorCode::kWrongKind, name + ": not an ExecuTorch program: identifier bytes '" +
                                            printable_identifier(bytes, 4) + "' (expected ET12)");
  }
  return Error(ErrorCode::kWrongKind,
               name + ": not an ExecuTorch program: this is " + describe_file_kind(kind));
}

// ---------------------------------------------------------------------------------------------
// [values]

struct Ctx {
  const std::string& name;   // file name, for messages
  const uint8_t* base;       // first byte of the file
  uint64_t file_size;
  const Program& program;
  std::vector<std::string>* problems;
};

std::string where(const ExecutionPlan& plan, size_t value_index) {
  return "plan '" + plan.name + "' value " + std::to_string(value_index);
}

Status read_tensor(const Ctx& ctx, const ExecutionPlan& plan, size_t index, const pfb::Tensor& t,
                   TensorInfo* out) {
  const std::string what = where(plan, index);
  out->dtype = static_cast<ScalarType>(static_cast<int8_t>(t.scalar_type()));
  out->sizes = flatbuffer_util::to_vector<int32_t>(t.sizes());
  out->dim_order = flatbuffer_util::to_vector<uint8_t>(t.dim_order());
  out->requires_grad = t.requires_grad();
  out->data_buffer_idx = t.data_buffer_idx();
  out->dynamism = static_cast<ShapeDynamism>(static_cast<uint8_t>(t.shape_dynamism()));
  ETSCOPE_TRY(flatbuffer_util::tensor_byte_size(what, out->dtype, out->sizes, &out->numel, &out->nbytes));
  ETSCOPE_TRY(flatbuffer_util::check_dim_order(what, out->dim_order, out->sizes.size()));
  if (static_cast<uint8_t>(out->dynamism) > 2) {
    return make_error(ErrorCode::kCorrupt, "%s: unknown shape dynamism %d", what.c_str(),
                      static_cast<int>(out->dynamism));
  }
  if (t.storage_offset() != 0) {
    ctx.problems->push_back(what + ": storage_offset " + std::to_string(t.storage_offset()) +
                            " is not 0; ExecuTorch's runtime rejects it");
  }
  if (const pfb::AllocationDetails* a = t.allocation_info()) {
    Allocation alloc;
    alloc.memory_id = a->memory_id();
    alloc.offset = static_cast<uint64_t>(a->memory_offset_low()) |
                   static_cast<uint64_t>(a->memory_offset_high()) << 32;
    out->allocation = alloc;
  }
  if (const pfb::ExtraTensorInfo* extra = t.extra_tensor_info()) {
    out->fqn = flatbuffer_util::to_string(extra->fully_qualified_name());
    out->external = extra->location() == pfb::TensorDataLocation::EXTERNAL;
    if (static_cast<uint8_t>(extra->location()) > 1) {
      return make_error(ErrorCode::kCorrupt, "%s: unknown data location %d", what.c_str(),
                        static_cast<int>(extra->location()));
    }
    out->device_type = static_cast<uint8_t>(extra->device_type());
    out->device_index = static_cast<uint8_t>(extra->device_index());
  }

  // Where the data comes from: the runtime's rules, in its order (formats.md §2.8).
  const Program& p = ctx.program;
  if (out->external) {
    if (out->fqn.empty()) {
      return make_error(ErrorCode::kCorrupt,
                        "%s: external tensor has no fully-qualified name to look it up by",
                        what.c_str());
    }
    out->data_kind = out->allocation ? TensorDataKind::kExternalMutable
                                     : TensorDataKind::kExternalConstant;
  } else if (out->data_buffer_idx > 0 && !out->allocation) {
    out->data_kind = TensorDataKind::kConstant;
    const uint32_t idx = out->data_buffer_idx;
    if (p.constant_storage == ConstantStorage::kSegment) {
      if (idx >= p.constant_offsets.size()) {
        return make_error(ErrorCode::kCorrupt,
                          "%s: constant index %u is out of range (the constant segment has %zu "
                          "offsets)", what.c_str(), idx, p.constant_offsets.size());
      }
      const FileRange& seg = p.segments[p.constant_segment_index];
      const uint64_t offset = p.constant_offsets[idx];
      if (!checked::range_fits(offset, out->nbytes, seg.size)) {
        return make_error(ErrorCode::kCorrupt,
                          "%s: constant data [%llu, +%llu) lies outside the constant segment "
                          "(%llu bytes)", what.c_str(), static_cast<unsigned long long>(offset),
                          static_cast<unsigned long long>(out->nbytes),
                          static_cast<unsigned long long>(seg.size));
      }
      out->data = FileRange{seg.offset + offset, out->nbytes};
    } else if (p.constant_storage == ConstantStorage::kInlineBuffer) {
      if (idx >= p.constant_buffers.size()) {
        return make_error(ErrorCode::kCorrupt,
                          "%s: constant index %u is out of range (constant_buffer has %zu entries)",
                          what.c_str(), idx, p.constant_buffers.size());
      }
      const FileRange& buf = p.constant_buffers[idx];
      if (buf.size < out->nbytes) {
        return make_error(ErrorCode::kCorrupt,
                          "%s: constant_buffer[%u] holds %llu bytes, the tensor needs %llu",
                          what.c_str(), idx, static_cast<unsigned long long>(buf.size),
                          static_cast<unsigned long long>(out->nbytes));
      }
      out->data = FileRange{buf.offset, out->nbytes};
    } else {
      return make_error(ErrorCode::kCorrupt,
                        "%s: refers to constant %u but the program stores no constants",
                        what.c_str(), idx);
    }
  } else if (out->data_buffer_idx > 0) {
    out->data_kind = TensorDataKind::kPlannedWithInit;
    if (p.mutable_data_segments.empty()) {
      return make_error(ErrorCode::kCorrupt,
                        "%s: has an initial value (index %u) but the program has no mutable-data "
                        "segment", what.c_str(), out->data_buffer_idx);
    }
    // The runtime always reads entry 0, whatever mutable_data_segments_idx says.
    const Program::MutableSegment& m = p.mutable_data_segments[0];
    if (out->data_buffer_idx >= m.offsets.size()) {
      return make_error(ErrorCode::kCorrupt,
                        "%s: initial-value index %u is out of range (%zu offsets)", what.c_str(),
                        out->data_buffer_idx, m.offsets.size());
    }
    const FileRange& seg = p.segments[m.segment_index];
    const uint64_t offset = m.offsets[out->data_buffer_idx];
    if (!checked::range_fits(offset, out->nbytes, seg.size)) {
      return make_error(ErrorCode::kCorrupt,
                        "%s: initial value [%llu, +%llu) lies outside its segment (%llu bytes)",
                        what.c_str(), static_cast<unsigned long long>(offset),
                        static_cast<unsigned long long>(out->nbytes),
                        static_cast<unsigned long long>(seg.size));
    }
    out->data = FileRange{seg.offset + offset, out->nbytes};
  } else if (out->allocation) {
    out->data_kind = TensorDataKind::kPlanned;
  } else {
    out->data_kind = TensorDataKind::kRuntimeSupplied;
  }

  if (out->allocation) {
    const Allocation& a = *out->allocation;
    const size_t arenas = plan.arena_count();
    if (a.memory_id == 0 || a.memory_id > arenas) {
      ctx.problems->push_back(what + ": memory_id " + std::to_string(a.memory_id) +
                              " is not a valid arena id (the plan has arenas 1.." +
                              std::to_string(arenas) + ")");
    } else {
      const int64_t arena_size = plan.non_const_buffer_sizes[a.memory_id];
      if (!checked::range_fits(a.offset, out->nbytes, static_cast<uint64_t>(arena_size))) {
        ctx.problems->push_back(what + ": planned bytes [" + std::to_string(a.offset) + ", +" +
                                std::to_string(out->nbytes) + ") extend beyond arena " +
                                std::to_string(a.memory_id) + " (" + std::to_string(arena_size) +
                                " bytes)");
      }
    }
  }
  return ok_status();
}

Status check_value_ref(const ExecutionPlan& plan, size_t count, int64_t ref, const std::string& what) {
  if (ref < 0 || static_cast<uint64_t>(ref) >= count) {
    return make_error(ErrorCode::kCorrupt, "plan '%s': %s refers to value %lld, but the plan has %zu values",
                      plan.name.c_str(), what.c_str(), static_cast<long long>(ref), count);
  }
  return ok_status();
}

Status read_value(const Ctx& ctx, const ExecutionPlan& plan, size_t index, size_t value_count,
                  const pfb::EValue* ev, Value* out) {
  if (ev == nullptr) {
    return make_error(ErrorCode::kCorrupt, "%s is null", where(plan, index).c_str());
  }
  const std::string what = where(plan, index);
  auto type = ev->val_type();
  // A union tag with no table (or an unknown tag) cannot be read as its kind.
  if (type != pfb::KernelTypes::NONE && ev->val() == nullptr) {
    return make_error(ErrorCode::kCorrupt, "%s: value of kind %d has no data", what.c_str(),
                      static_cast<int>(type));
  }
  switch (type) {
    case pfb::KernelTypes::NONE:
    case pfb::KernelTypes::Null:
      out->kind = ValueKind::kNone;
      return ok_status();
    case pfb::KernelTypes::Int:
      out->kind = ValueKind::kInt;
      out->int_value = ev->val_as_Int()->int_val();
      return ok_status();
    case pfb::KernelTypes::Bool:
      out->kind = ValueKind::kBool;
      out->bool_value = ev->val_as_Bool()->bool_val();
      return ok_status();
    case pfb::KernelTypes::Double:
      out->kind = ValueKind::kDouble;
      out->double_value = ev->val_as_Double()->double_val();
      return ok_status();
    case pfb::KernelTypes::String:
      out->kind = ValueKind::kString;
      out->string_value = flatbuffer_util::to_string(ev->val_as_String()->string_val());
      return ok_status();
    case pfb::KernelTypes::Tensor:
      out->kind = ValueKind::kTensor;
      return read_tensor(ctx, plan, index, *ev->val_as_Tensor(), &out->tensor);
    case pfb::KernelTypes::IntList: {
      out->kind = ValueKind::kIntList;
      out->int_list = flatbuffer_util::to_vector<int64_t>(ev->val_as_IntList()->items());
      for (size_t i = 0; i < out->int_list.size(); ++i) {
        ETSCOPE_TRY(check_value_ref(plan, value_count, out->int_list[i],
                                    "value " + std::to_string(index) + " (IntList) item " + std::to_string(i)));
      }
      return ok_status();
    }
    case pfb::KernelTypes::DoubleList:
      out->kind = ValueKind::kDoubleList;
      out->double_list = flatbuffer_util::to_vector<double>(ev->val_as_DoubleList()->items());
      return ok_status();
    case pfb::KernelTypes::BoolList:
      out->kind = ValueKind::kBoolList;
      out->bool_list = flatbuffer_util::to_vector<uint8_t>(ev->val_as_BoolList()->items());
      return ok_status();
    case pfb::KernelTypes::TensorList: {
      out->kind = ValueKind::kTensorList;
      out->tensor_list = flatbuffer_util::to_vector<int32_t>(ev->val_as_TensorList()->items());
      for (size_t i = 0; i < out->tensor_list.size(); ++i) {
        ETSCOPE_TRY(check_value_ref(plan, value_count, out->tensor_list[i],
                                    "value " + std::to_string(index) + " (TensorList) item " + std::to_string(i)));
      }
      return ok_status();
    }
    case pfb::KernelTypes::OptionalTensorList: {
      out->kind = ValueKind::kOptionalTensorList;
      out->tensor_list = flatbuffer_util::to_vector<int32_t>(ev->val_as_OptionalTensorList()->items());
      for (size_t i = 0; i < out->tensor_list.size(); ++i) {
        if (out->tensor_list[i] == -1) continue;
        ETSCOPE_TRY(check_value_ref(plan, value_count, out->tensor_list[i],
                                    "value " + std::to_string(index) + " (OptionalTensorList) item " + std::to_string(i)));
      }
      return ok_status();
    }
  }
  return make_error(ErrorCode::kCorrupt, "%s: unknown value kind %d", what.c_str(),
                    static_cast<int>(type));
}

// ---------------------------------------------------------------------------------------------
// [plans]

Status read_instruction(const ExecutionPlan& plan, size_t chain_index, size_t index,
                        size_t chain_length, const pfb::Instruction* in, Instruction* out) {
  const std::string what =
      "chain " + std::to_string(chain_index) + " instruction " + std::to_string(index);
  const size_t nvalues = plan.values.size();
  auto bad = [&](const char* detail) {
    return make_error(ErrorCode::kCorrupt, "plan '%s': %s: %s", plan.name.c_str(), what.c_str(), detail);
  };
  if (in == nullptr || in->instr_args() == nullptr) return bad("has no arguments table");
  auto check_args = [&](const std::vector<int32_t>& args) -> Status {
    for (size_t i = 0; i < args.size(); ++i) {
      ETSCOPE_TRY(check_value_ref(plan, nvalues, args[i], what + " argument " + std::to_string(i)));
    }
    return ok_status();
  };
  switch (in->instr_args_type()) {
    case pfb::InstructionArguments::KernelCall: {
      const auto* k = in->instr_args_as_KernelCall();
      out->kind = InstructionKind::kKernelCall;
      out->op_index = k->op_index();
      out->args = flatbuffer_util::to_vector<int32_t>(k->args());
      if (out->op_index < 0 || static_cast<size_t>(out->op_index) >= plan.operators.size()) {
        return make_error(ErrorCode::kCorrupt,
                          "plan '%s': %s: operator index %d is out of range (%zu operators)",
                          plan.name.c_str(), what.c_str(), out->op_index, plan.operators.size());
      }
      return check_args(out->args);
    }
    case pfb::InstructionArguments::DelegateCall: {
      const auto* d = in->instr_args_as_DelegateCall();
      out->kind = InstructionKind::kDelegateCall;
      out->delegate_index = d->delegate_index();
      out->args = flatbuffer_util::to_vector<int32_t>(d->args());
      if (out->delegate_index < 0 || static_cast<size_t>(out->delegate_index) >= plan.delegates.size()) {
        return make_error(ErrorCode::kCorrupt,
                          "plan '%s': %s: delegate index %d is out of range (%zu delegates)",
                          plan.name.c_str(), what.c_str(), out->delegate_index, plan.delegates.size());
      }
      return check_args(out->args);
    }
    case pfb::InstructionArguments::MoveCall: {
      const auto* m = in->instr_args_as_MoveCall();
      out->kind = InstructionKind::kMoveCall;
      out->move_from = m->move_from();
      out->move_to = m->move_to();
      ETSCOPE_TRY(check_value_ref(plan, nvalues, out->move_from, what + " move source"));
      return check_value_ref(plan, nvalues, out->move_to, what + " move destination");
    }
    case pfb::InstructionArguments::JumpFalseCall: {
      const auto* j = in->instr_args_as_JumpFalseCall();
      out->kind = InstructionKind::kJumpFalse;
      out->cond_value = j->cond_value_index();
      out->destination = j->destination_instruction();
      ETSCOPE_TRY(check_value_ref(plan, nvalues, out->cond_value, what + " condition"));
      if (out->destination < 0 || static_cast<size_t>(out->destination) > chain_length) {
        return make_error(ErrorCode::kCorrupt,
                          "plan '%s': %s: jump destination %d is outside the chain (%zu instructions)",
                          plan.name.c_str(), what.c_str(), out->destination, chain_length);
      }
      return ok_status();
    }
    case pfb::InstructionArguments::FreeCall: {
      out->kind = InstructionKind::kFree;
      out->free_value = in->instr_args_as_FreeCall()->value_index();
      return check_value_ref(plan, nvalues, out->free_value, what + " freed value");
    }
    default:
      break;
  }
  return make_error(ErrorCode::kCorrupt, "plan '%s': %s: unknown instruction kind %d",
                    plan.name.c_str(), what.c_str(), static_cast<int>(in->instr_args_type()));
}

Status read_delegate(const Ctx& ctx, const ExecutionPlan& plan, size_t index,
                     const pfb::BackendDelegate* d, Delegate* out) {
  const std::string what = "plan '" + plan.name + "' delegate " + std::to_string(index);
  if (d == nullptr) return make_error(ErrorCode::kCorrupt, "%s is null", what.c_str());
  out->id = flatbuffer_util::to_string(d->id());
  if (const auto* specs = d->compile_specs()) {
    for (const pfb::CompileSpec* spec : *specs) {
      if (spec == nullptr) continue;
      out->compile_specs.push_back(
          {flatbuffer_util::to_string(spec->key()), flatbuffer_util::to_vector<uint8_t>(spec->value())});
    }
  }
  const pfb::BackendDelegateDataReference* ref = d->processed();
  if (ref == nullptr) {
    return make_error(ErrorCode::kCorrupt, "%s (%s) has no processed-data reference",
                      what.c_str(), out->id.c_str());
  }
  out->index = ref->index();
  const Program& p = ctx.program;
  if (ref->location() == pfb::DataLocation::INLINE) {
    out->inline_data = true;
    if (out->index >= p.inline_delegate_data.size()) {
      return make_error(ErrorCode::kCorrupt,
                        "%s (%s): inline data index %u is out of range (%zu entries)", what.c_str(),
                        out->id.c_str(), out->index, p.inline_delegate_data.size());
    }
    out->data = p.inline_delegate_data[out->index];
  } else if (ref->location() == pfb::DataLocation::SEGMENT) {
    if (out->index >= p.segments.size()) {
      return make_error(ErrorCode::kCorrupt,
                        "%s (%s): segment index %u is out of range (%zu segments)", what.c_str(),
                        out->id.c_str(), out->index, p.segments.size());
    }
    out->data = p.segments[out->index];
  } else {
    return make_error(ErrorCode::kCorrupt, "%s (%s): unknown data location %d", what.c_str(),
                      out->id.c_str(), static_cast<int>(ref->location()));
  }
  return ok_status();
}

Status read_plan(const Ctx& ctx, size_t plan_index, const pfb::ExecutionPlan* in, ExecutionPlan* out) {
  if (in == nullptr) return make_error(ErrorCode::kCorrupt, "execution plan %zu is null", plan_index);
  if (in->name() == nullptr) {
    ctx.problems->push_back("execution plan " + std::to_string(plan_index) +
                            " has no name; ExecuTorch's runtime cannot load it");
    out->name = "<plan " + std::to_string(plan_index) + ">";
  } else {
    out->name = in->name()->str();
  }
  const std::string plan_what = "plan '" + out->name + "'";
  if (const auto* meta = in->container_meta_type()) {
    out->encoded_inputs = flatbuffer_util::to_string(meta->encoded_inp_str());
    out->encoded_outputs = flatbuffer_util::to_string(meta->encoded_out_str());
  }
  if (in->values() == nullptr) ctx.problems->push_back(plan_what + " has no values vector");
  if (in->inputs() == nullptr) ctx.problems->push_back(plan_what + " has no inputs vector");
  if (in->outputs() == nullptr) ctx.problems->push_back(plan_what + " has no outputs vector");
  if (in->non_const_buffer_sizes() == nullptr) {
    ctx.problems->push_back(plan_what + " has no non_const_buffer_sizes");
  }
  if (in->chains() == nullptr || in->chains()->size() == 0) {
    ctx.problems->push_back(plan_what + " has no chain");
  }

  out->non_const_buffer_sizes = flatbuffer_util::to_vector<int64_t>(in->non_const_buffer_sizes());
  for (size_t i = 0; i < out->non_const_buffer_sizes.size(); ++i) {
    if (out->non_const_buffer_sizes[i] < 0) {
      return make_error(ErrorCode::kCorrupt, "%s: arena %zu has negative size %lld", plan_what.c_str(), i,
                        static_cast<long long>(out->non_const_buffer_sizes[i]));
    }
  }
  if (const auto* devices = in->non_const_buffer_device()) {
    for (const auto* d : *devices) {
      if (d == nullptr) continue;
      out->non_const_buffer_devices.push_back({d->buffer_idx(), static_cast<uint8_t>(d->device_type()),
                                               static_cast<uint8_t>(d->device_index())});
    }
  }
  if (const auto* ops = in->operators()) {
    for (size_t i = 0; i < ops->size(); ++i) {
      const pfb::Operator* op = ops->Get(static_cast<flatbuffers::uoffset_t>(i));
      if (op == nullptr || op->name() == nullptr) {
        return make_error(ErrorCode::kCorrupt, "%s: operator %zu has no name", plan_what.c_str(), i);
      }
      out->operators.push_back({op->name()->str(), flatbuffer_util::to_string(op->overload())});
    }
  }
  if (const auto* delegates = in->delegates()) {
    out->delegates.resize(delegates->size());
    for (size_t i = 0; i < delegates->size(); ++i) {
      ETSCOPE_TRY(read_delegate(ctx, *out, i, delegates->Get(static_cast<flatbuffers::uoffset_t>(i)),
                                &out->delegates[i]));
    }
  }

  const size_t nvalues = in->values() ? in->values()->size() : 0;
  out->values.resize(nvalues);
  for (size_t i = 0; i < nvalues; ++i) {
    ETSCOPE_TRY(read_value(ctx, *out, i, nvalues, in->values()->Get(static_cast<flatbuffers::uoffset_t>(i)),
                           &out->values[i]));
  }
  out->inputs = flatbuffer_util::to_vector<int32_t>(in->inputs());
  out->outputs = flatbuffer_util::to_vector<int32_t>(in->outputs());
  for (size_t i = 0; i < out->inputs.size(); ++i) {
    ETSCOPE_TRY(check_value_ref(*out, nvalues, out->inputs[i], "input " + std::to_string(i)));
  }
  for (size_t i = 0; i < out->outputs.size(); ++i) {
    ETSCOPE_TRY(check_value_ref(*out, nvalues, out->outputs[i], "output " + std::to_string(i)));
  }

  if (const auto* chains = in->chains()) {
    out->chains.resize(chains->size());
    for (size_t c = 0; c < chains->size(); ++c) {
      const pfb::Chain* chain = chains->Get(static_cast<flatbuffers::uoffset_t>(c));
      if (chain == nullptr) return make_error(ErrorCode::kCorrupt, "%s: chain %zu is null", plan_what.c_str(), c);
      Chain& dst = out->chains[c];
      dst.inputs = flatbuffer_util::to_vector<int32_t>(chain->inputs());
      dst.outputs = flatbuffer_util::to_vector<int32_t>(chain->outputs());
      const size_t n = chain->instructions() ? chain->instructions()->size() : 0;
      dst.instructions.resize(n);
      for (size_t i = 0; i < n; ++i) {
        ETSCOPE_TRY(read_instruction(*out, c, i, n,
                                     chain->instructions()->Get(static_cast<flatbuffers::uoffset_t>(i)),
                                     &dst.instructions[i]));
      }
      if (const auto* traces = chain->stacktrace()) {
        if (traces->size() != n) {
          ctx.problems->push_back(plan_what + " chain " + std::to_string(c) + ": " +
                                  std::to_string(traces->size()) + " stack traces for " +
                                  std::to_string(n) + " instructions");
        }
        dst.stacktrace.resize(traces->size());
        for (size_t i = 0; i < traces->size(); ++i) {
          const pfb::FrameList* frames = traces->Get(static_cast<flatbuffers::uoffset_t>(i));
          if (frames == nullptr || frames->items() == nullptr) continue;
          for (const pfb::Frame* f : *frames->items()) {
            if (f == nullptr) continue;
            dst.stacktrace[i].push_back({flatbuffer_util::to_string(f->filename()), f->lineno(),
                                         flatbuffer_util::to_string(f->name()), flatbuffer_util::to_string(f->context())});
          }
        }
      }
    }
  }
  return ok_status();
}

// ---------------------------------------------------------------------------------------------
// [program]

Status read_segments(const Ctx& ctx, const pfb::Program& root, Program* p) {
  const auto* segs = root.segments();
  if (segs == nullptr) return ok_status();
  const bool have_header = p->header.has_value();
  const uint64_t base = have_header ? p->header->segment_base_offset : 0;
  const uint64_t data_size = have_header ? p->header->segment_data_size : 0;
  for (size_t i = 0; i < segs->size(); ++i) {
    const pfb::DataSegment* s = segs->Get(static_cast<flatbuffers::uoffset_t>(i));
    if (s == nullptr) return make_error(ErrorCode::kCorrupt, "%s: segment %zu is null", ctx.name.c_str(), i);
    FileRange rel{s->offset(), s->size()};
    p->segments_relative.push_back(rel);
    if (rel.size == 0) {
      p->segments.push_back(FileRange{base, 0});
      continue;
    }
    if (!have_header) {
      return make_error(ErrorCode::kCorrupt,
                        "%s: segment %zu holds %llu bytes but the file has no extended header to "
                        "locate segment data", ctx.name.c_str(), i,
                        static_cast<unsigned long long>(rel.size));
    }
    if (data_size > 0 && !checked::range_fits(rel.offset, rel.size, data_size)) {
      return make_error(ErrorCode::kCorrupt,
                        "%s: segment %zu [%llu, +%llu) exceeds the segment data size %llu",
                        ctx.name.c_str(), i, static_cast<unsigned long long>(rel.offset),
                        static_cast<unsigned long long>(rel.size),
                        static_cast<unsigned long long>(data_size));
    }
    auto abs = checked::add(base, rel.offset);
    if (!abs || !checked::range_fits(*abs, rel.size, ctx.file_size)) {
      return make_error(ErrorCode::kTruncated,
                        "%s: segment %zu [%llu, +%llu) extends past the end of the file (%llu bytes)",
                        ctx.name.c_str(), i, static_cast<unsigned long long>(abs.value_or(~0ull)),
                        static_cast<unsigned long long>(rel.size),
                        static_cast<unsigned long long>(ctx.file_size));
    }
    p->segments.push_back(FileRange{*abs, rel.size});
  }
  return ok_status();
}

Status read_constants(const Ctx& ctx, const pfb::Program& root, Program* p) {
  if (const auto* inline_data = root.backend_delegate_data()) {
    for (const auto* d : *inline_data) {
      p->inline_delegate_data.push_back(d ? flatbuffer_util::payload_range(ctx.base, d->data()) : FileRange{});
    }
  }
  size_t buffer_count = 0;
  if (const auto* buffers = root.constant_buffer()) {
    buffer_count = buffers->size();
    for (const auto* b : *buffers) {
      FileRange r = b ? flatbuffer_util::payload_range(ctx.base, b->storage()) : FileRange{};
      p->constant_buffers.push_back(r);
    }
  }
  if (const auto* cs = root.constant_segment()) {
    p->constant_offsets = flatbuffer_util::to_vector<uint64_t>(cs->offsets());
    p->constant_segment_index = cs->segment_index();
  }
  if (p->constant_offsets.size() >= 2) {
    if (buffer_count > 0) {
      return make_error(ErrorCode::kCorrupt,
                        "%s: constants are stored both in constant_segment and constant_buffer",
                        ctx.name.c_str());
    }
    if (p->constant_segment_index >= p->segments.size()) {
      return make_error(ErrorCode::kCorrupt,
                        "%s: constant segment index %u is out of range (%zu segments)",
                        ctx.name.c_str(), p->constant_segment_index, p->segments.size());
    }
    p->constant_storage = ConstantStorage::kSegment;
    p->constant_bytes = p->segments[p->constant_segment_index].size;
  } else if (buffer_count > 1 || (buffer_count == 1 && p->constant_buffers[0].size > 0)) {
    p->constant_storage = ConstantStorage::kInlineBuffer;
    for (const FileRange& r : p->constant_buffers) p->constant_bytes += r.size;
  }
  if (const auto* mutables = root.mutable_data_segments()) {
    for (size_t i = 0; i < mutables->size(); ++i) {
      const auto* m = mutables->Get(static_cast<flatbuffers::uoffset_t>(i));
      if (m == nullptr) continue;
      if (m->segment_index() >= p->segments.size()) {
        return make_error(ErrorCode::kCorrupt,
                          "%s: mutable-data segment %zu refers to segment %u (%zu segments)",
                          ctx.name.c_str(), i, m->segment_index(), p->segments.size());
      }
      p->mutable_data_segments.push_back({m->segment_index(), flatbuffer_util::to_vector<uint64_t>(m->offsets())});
    }
  }
  if (const auto* named = root.named_data()) {
    for (size_t i = 0; i < named->size(); ++i) {
      const auto* nd = named->Get(static_cast<flatbuffers::uoffset_t>(i));
      if (nd == nullptr || nd->key() == nullptr) {
        return make_error(ErrorCode::kCorrupt, "%s: named data %zu has no key", ctx.name.c_str(), i);
      }
      if (nd->segment_index() >= p->segments.size()) {
        return make_error(ErrorCode::kCorrupt,
                          "%s: named data '%s' refers to segment %u (%zu segments)", ctx.name.c_str(),
                          nd->key()->c_str(), nd->segment_index(), p->segments.size());
      }
      p->named_data.push_back({nd->key()->str(), nd->segment_index()});
    }
  }
  return ok_status();
}

}  // namespace

Result<std::optional<ExtendedHeader>> parse_extended_header(std::span<const uint8_t> bytes,
                                                            const std::string& name) {
  if (bytes.size() < kHeaderOffset + 8 || std::memcmp(bytes.data() + kHeaderOffset, "eh00", 4) != 0) {
    return std::optional<ExtendedHeader>();
  }
  ExtendedHeader h;
  h.length = checked::load_u32(bytes.data() + kHeaderOffset + 4);
  if (h.length < kMinHeaderLength) {
    return make_error(ErrorCode::kCorrupt, "%s: extended header length %u is below the minimum of %u",
                      name.c_str(), h.length, kMinHeaderLength);
  }
  const size_t need = kHeaderOffset + (h.length >= 32 ? 32 : 24);
  if (bytes.size() < need) {
    return make_error(ErrorCode::kTruncated, "%s: file ends inside the extended header (%zu of %zu bytes)",
                      name.c_str(), bytes.size(), need);
  }
  h.program_size = checked::load_u64(bytes.data() + 16);
  h.segment_base_offset = checked::load_u64(bytes.data() + 24);
  if (h.length >= 32) h.segment_data_size = checked::load_u64(bytes.data() + 32);
  return std::optional<ExtendedHeader>(h);
}

namespace {

// Values some instruction writes: out and return arguments of kernel calls, MoveCall targets.
void mark_written_values(ExecutionPlan& plan) {
  auto mark = [&](int64_t v) {
    if (v >= 0 && static_cast<size_t>(v) < plan.values.size()) plan.values[static_cast<size_t>(v)].written_at_run_time = true;
  };
  for (const Chain& chain : plan.chains) {
    for (const Instruction& in : chain.instructions) {
      if (in.kind == InstructionKind::kMoveCall) mark(in.move_to);
      if (in.kind != InstructionKind::kKernelCall) continue;
      const KernelArgs args = split_kernel_args(plan, in);
      for (int32_t v : args.outputs) mark(v);
      mark(args.return_value);
    }
  }
}

}  // namespace

Result<Program> PteReader::read(std::shared_ptr<const Blob> blob) {
  const std::string& name = blob->name();
  std::span<const uint8_t> bytes = blob->bytes();
  if (bytes.empty()) return Error(ErrorCode::kTruncated, name + ": file is empty");
  if (bytes.size() < 8) {
    return make_error(ErrorCode::kTruncated, "%s: file is %zu bytes, too short for a program",
                      name.c_str(), bytes.size());
  }
  if (std::memcmp(bytes.data() + 4, "ET12", 4) != 0) return wrong_kind_error(bytes, name);

  Program p;
  p.blob = blob;
  p.file_size = bytes.size();
  p.file_identifier = "ET12";
  p.root_offset = checked::load_u32(bytes.data());
  ETSCOPE_ASSIGN_OR_RETURN(p.header, parse_extended_header(bytes, name));

  uint64_t region = bytes.size();
  if (p.header) {
    const ExtendedHeader& h = *p.header;
    if (h.program_size < kHeaderOffset + h.length) {
      return make_error(ErrorCode::kCorrupt, "%s: extended header declares a program size of %llu bytes, "
                        "smaller than the header itself", name.c_str(),
                        static_cast<unsigned long long>(h.program_size));
    }
    if (h.program_size > bytes.size()) {
      return make_error(ErrorCode::kTruncated,
                        "%s: file is %zu bytes but its header declares a %llu-byte program region",
                        name.c_str(), bytes.size(), static_cast<unsigned long long>(h.program_size));
    }
    if (h.segment_base_offset != 0 && h.segment_base_offset < h.program_size) {
      return make_error(ErrorCode::kCorrupt,
                        "%s: segment data starts at %llu, inside the program region (%llu bytes)",
                        name.c_str(), static_cast<unsigned long long>(h.segment_base_offset),
                        static_cast<unsigned long long>(h.program_size));
    }
    if (h.segment_data_size > 0 &&
        !checked::range_fits(h.segment_base_offset, h.segment_data_size, bytes.size())) {
      return make_error(ErrorCode::kTruncated,
                        "%s: file is %zu bytes but its header declares segment data up to byte %llu",
                        name.c_str(), bytes.size(),
                        static_cast<unsigned long long>(h.segment_base_offset + h.segment_data_size));
    }
    region = h.program_size;
  }
  if (region > flatbuffer_util::kMaxFlatBufferSize) {
    return make_error(ErrorCode::kNotSupported, "%s: FlatBuffer region of %llu bytes exceeds 2 GiB",
                      name.c_str(), static_cast<unsigned long long>(region));
  }
  p.flatbuffer_size = region;
  if (p.root_offset >= region) {
    return make_error(ErrorCode::kCorrupt, "%s: root table offset %u lies outside the %llu-byte program",
                      name.c_str(), p.root_offset, static_cast<unsigned long long>(region));
  }
  flatbuffers::Verifier verifier(bytes.data(), static_cast<size_t>(region), flatbuffer_util::verifier_options());
  if (!pfb::VerifyProgramBuffer(verifier)) {
    return make_error(ErrorCode::kCorrupt,
                      "%s: FlatBuffer verification failed: the program table is truncated or corrupt",
                      name.c_str());
  }
  const pfb::Program* root = pfb::GetProgram(bytes.data());
  p.version = root->version();

  std::vector<std::string> problems;
  Ctx ctx{name, bytes.data(), bytes.size(), p, &problems};
  ETSCOPE_TRY(read_segments(ctx, *root, &p));
  ETSCOPE_TRY(read_constants(ctx, *root, &p));
  if (const auto* plans = root->execution_plan()) {
    p.plans.resize(plans->size());
    for (size_t i = 0; i < plans->size(); ++i) {
      Status s = read_plan(ctx, i, plans->Get(static_cast<flatbuffers::uoffset_t>(i)), &p.plans[i]);
      if (!s.ok()) return s.error().with_context(name);
    }
  }
  if (p.plans.empty()) problems.push_back("the program has no execution plans");
  for (ExecutionPlan& plan : p.plans) mark_written_values(plan);
  p.problems = std::move(problems);
  return p;
}

Result<Program> PteReader::open(const std::string& path) {
  ETSCOPE_ASSIGN_OR_RETURN(auto blob, Blob::open_file(path));
  return read(std::move(blob));
}

}  // namespace etscope
