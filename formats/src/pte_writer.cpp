#include "etscope/formats/pte_writer.h"

#include <cstring>

#include "etscope/core/checked.h"
#include "etscope_fb/program_generated.h"

namespace etscope {
namespace {

namespace pfb = ::etscope::fb::pte;
using flatbuffers::FlatBufferBuilder;
using flatbuffers::Offset;

Offset<pfb::Tensor> build_tensor(FlatBufferBuilder& b, const TensorInfo& t) {
  Offset<pfb::AllocationDetails> alloc;
  if (t.allocation) {
    alloc = pfb::CreateAllocationDetails(b, t.allocation->memory_id,
                                        static_cast<uint32_t>(t.allocation->offset & 0xffffffffu),
                                        static_cast<uint32_t>(t.allocation->offset >> 32));
  }
  Offset<pfb::ExtraTensorInfo> extra;
  if (!t.fqn.empty() || t.external || t.device_type != 0 || t.device_index != 0) {
    extra = pfb::CreateExtraTensorInfoDirect(
        b, 0, t.fqn.empty() ? nullptr : t.fqn.c_str(),
        t.external ? pfb::TensorDataLocation::EXTERNAL : pfb::TensorDataLocation::SEGMENT,
        static_cast<pfb::DeviceType>(t.device_type), static_cast<int8_t>(t.device_index));
  }
  return pfb::CreateTensorDirect(b, static_cast<::etscope::fb::ScalarType>(t.dtype), 0, &t.sizes, &t.dim_order,
                                t.requires_grad, t.data_buffer_idx, alloc, 0,
                                static_cast<pfb::TensorShapeDynamism>(t.dynamism), extra);
}

Offset<pfb::EValue> build_value(FlatBufferBuilder& b, const Value& v) {
  switch (v.kind) {
    case ValueKind::kNone:
      return pfb::CreateEValue(b, pfb::KernelTypes::Null, pfb::CreateNull(b).Union());
    case ValueKind::kInt:
      return pfb::CreateEValue(b, pfb::KernelTypes::Int, pfb::CreateInt(b, v.int_value).Union());
    case ValueKind::kBool:
      return pfb::CreateEValue(b, pfb::KernelTypes::Bool, pfb::CreateBool(b, v.bool_value).Union());
    case ValueKind::kDouble:
      return pfb::CreateEValue(b, pfb::KernelTypes::Double, pfb::CreateDouble(b, v.double_value).Union());
    case ValueKind::kString:
      return pfb::CreateEValue(b, pfb::KernelTypes::String,
                              pfb::CreateStringDirect(b, v.string_value.c_str()).Union());
    case ValueKind::kTensor:
      return pfb::CreateEValue(b, pfb::KernelTypes::Tensor, build_tensor(b, v.tensor).Union());
    case ValueKind::kIntList:
      return pfb::CreateEValue(b, pfb::KernelTypes::IntList, pfb::CreateIntListDirect(b, &v.int_list).Union());
    case ValueKind::kDoubleList:
      return pfb::CreateEValue(b, pfb::KernelTypes::DoubleList,
                              pfb::CreateDoubleListDirect(b, &v.double_list).Union());
    case ValueKind::kBoolList: {
      auto items = b.CreateVector(v.bool_list);
      return pfb::CreateEValue(b, pfb::KernelTypes::BoolList, pfb::CreateBoolList(b, items).Union());
    }
    case ValueKind::kTensorList:
      return pfb::CreateEValue(b, pfb::KernelTypes::TensorList,
                              pfb::CreateTensorListDirect(b, &v.tensor_list).Union());
    case ValueKind::kOptionalTensorList:
      return pfb::CreateEValue(b, pfb::KernelTypes::OptionalTensorList,
                              pfb::CreateOptionalTensorListDirect(b, &v.tensor_list).Union());
  }
  return pfb::CreateEValue(b);
}

Offset<pfb::Instruction> build_instruction(FlatBufferBuilder& b, const Instruction& in) {
  switch (in.kind) {
    case InstructionKind::kKernelCall:
      return pfb::CreateInstruction(b, pfb::InstructionArguments::KernelCall,
                                   pfb::CreateKernelCallDirect(b, in.op_index, &in.args).Union());
    case InstructionKind::kDelegateCall:
      return pfb::CreateInstruction(b, pfb::InstructionArguments::DelegateCall,
                                   pfb::CreateDelegateCallDirect(b, in.delegate_index, &in.args).Union());
    case InstructionKind::kMoveCall:
      return pfb::CreateInstruction(b, pfb::InstructionArguments::MoveCall,
                                   pfb::CreateMoveCall(b, in.move_from, in.move_to).Union());
    case InstructionKind::kJumpFalse:
      return pfb::CreateInstruction(b, pfb::InstructionArguments::JumpFalseCall,
                                   pfb::CreateJumpFalseCall(b, in.cond_value, in.destination).Union());
    case InstructionKind::kFree:
      return pfb::CreateInstruction(b, pfb::InstructionArguments::FreeCall,
                                   pfb::CreateFreeCall(b, in.free_value).Union());
  }
  return pfb::CreateInstruction(b);
}

struct Layout {
  std::vector<std::vector<uint8_t>> segment_data;  // payload of each segment, in order
  std::vector<uint32_t> delegate_segment;          // blob index -> segment index
  uint32_t mutable_segment = 0;
  std::vector<uint64_t> constant_offsets{0};
  std::vector<uint64_t> mutable_offsets{0};
  std::vector<uint32_t> named_segment;
};

Layout plan_segments(const ProgramSpec& spec, const PteWriterOptions& opt, const std::vector<bool>& blob_inline) {
  Layout l;
  // Constant segment first, always present unless constants are inline (as EXIR does).
  if (!opt.legacy_constant_buffer) {
    std::vector<uint8_t> seg;
    for (size_t i = 0; i < spec.constants.size(); ++i) {
      if (i > 0) seg.resize(*checked::align_up(seg.size(), opt.constant_alignment), 0);
      l.constant_offsets.push_back(seg.size());
      seg.insert(seg.end(), spec.constants[i].begin(), spec.constants[i].end());
    }
    l.segment_data.push_back(std::move(seg));
  }
  if (!spec.mutable_data.empty()) {
    std::vector<uint8_t> seg;
    for (const auto& m : spec.mutable_data) {
      l.mutable_offsets.push_back(seg.size());
      seg.insert(seg.end(), m.begin(), m.end());
    }
    l.mutable_segment = static_cast<uint32_t>(l.segment_data.size());
    l.segment_data.push_back(std::move(seg));
  }
  for (size_t i = 0; i < spec.delegate_blobs.size(); ++i) {
    l.delegate_segment.push_back(static_cast<uint32_t>(l.segment_data.size()));
    if (!blob_inline[i]) l.segment_data.push_back(spec.delegate_blobs[i]);
  }
  for (const auto& [key, blob] : spec.named_data) {
    l.named_segment.push_back(static_cast<uint32_t>(l.segment_data.size()));
    l.segment_data.push_back(blob);
  }
  return l;
}

}  // namespace

Result<std::vector<uint8_t>> PteWriter::write(const ProgramSpec& spec, const PteWriterOptions& opt) {
  if (opt.header_length != 24 && opt.header_length != 32) {
    return Error(ErrorCode::kInvalidArgument, "pte writer: header length must be 24 or 32");
  }
  // Which delegate blobs are referenced inline: those go into backend_delegate_data instead.
  std::vector<bool> blob_inline(spec.delegate_blobs.size(), false);
  for (const ExecutionPlan& plan : spec.plans) {
    for (const Delegate& d : plan.delegates) {
      if (d.index >= spec.delegate_blobs.size()) {
        return make_error(ErrorCode::kInvalidArgument, "pte writer: delegate blob %u does not exist", d.index);
      }
      if (d.inline_data) blob_inline[d.index] = true;
    }
  }
  Layout layout = plan_segments(spec, opt, blob_inline);

  FlatBufferBuilder b(1 << 16);
  std::vector<Offset<pfb::ExecutionPlan>> plans;
  for (const ExecutionPlan& plan : spec.plans) {
    std::vector<Offset<pfb::EValue>> values;
    for (const Value& v : plan.values) values.push_back(build_value(b, v));
    std::vector<Offset<pfb::Chain>> chains;
    for (const Chain& c : plan.chains) {
      std::vector<Offset<pfb::Instruction>> instructions;
      for (const Instruction& in : c.instructions) instructions.push_back(build_instruction(b, in));
      std::vector<Offset<pfb::FrameList>> traces;
      for (const auto& frames : c.stacktrace) {
        std::vector<Offset<pfb::Frame>> items;
        for (const Frame& f : frames) {
          items.push_back(pfb::CreateFrameDirect(b, f.filename.c_str(), f.lineno, f.name.c_str(), f.context.c_str()));
        }
        traces.push_back(pfb::CreateFrameListDirect(b, &items));
      }
      chains.push_back(pfb::CreateChainDirect(b, &c.inputs, &c.outputs, &instructions,
                                             c.stacktrace.empty() ? nullptr : &traces));
    }
    std::vector<Offset<pfb::Operator>> ops;
    for (const Operator& op : plan.operators) {
      ops.push_back(pfb::CreateOperatorDirect(b, op.name.c_str(), op.overload.c_str()));
    }
    std::vector<Offset<pfb::BackendDelegate>> delegates;
    for (const Delegate& d : plan.delegates) {
      std::vector<Offset<pfb::CompileSpec>> specs;
      for (const CompileSpec& cs : d.compile_specs) {
        specs.push_back(pfb::CreateCompileSpecDirect(b, cs.key.c_str(), &cs.value));
      }
      auto ref = pfb::CreateBackendDelegateDataReference(
          b, d.inline_data ? pfb::DataLocation::INLINE : pfb::DataLocation::SEGMENT,
          d.inline_data ? d.index : layout.delegate_segment[d.index]);
      delegates.push_back(pfb::CreateBackendDelegateDirect(b, d.id.c_str(), ref, &specs));
    }
    std::vector<Offset<pfb::NonConstBufferDevice>> devices;
    for (const auto& d : plan.non_const_buffer_devices) {
      devices.push_back(pfb::CreateNonConstBufferDevice(b, d.buffer_idx, static_cast<pfb::DeviceType>(d.device_type),
                                                       static_cast<int8_t>(d.device_index)));
    }
    auto meta = pfb::CreateContainerMetadataDirect(b, plan.encoded_inputs.c_str(), plan.encoded_outputs.c_str());
    plans.push_back(pfb::CreateExecutionPlanDirect(b, plan.name.c_str(), meta, &values, &plan.inputs,
                                                  &plan.outputs, &chains, &ops, &delegates,
                                                  &plan.non_const_buffer_sizes,
                                                  devices.empty() ? nullptr : &devices));
  }

  std::vector<Offset<pfb::Buffer>> constant_buffer;
  if (opt.legacy_constant_buffer) {
    std::vector<uint8_t> empty;
    constant_buffer.push_back(pfb::CreateBufferDirect(b, &empty));
    for (const auto& c : spec.constants) constant_buffer.push_back(pfb::CreateBufferDirect(b, &c));
  }
  std::vector<Offset<pfb::BackendDelegateInlineData>> inline_data;
  for (size_t i = 0; i < spec.delegate_blobs.size(); ++i) {
    // Keep indices aligned with blob numbers: non-inline blobs leave an empty entry.
    static const std::vector<uint8_t> kEmpty;
    inline_data.push_back(pfb::CreateBackendDelegateInlineDataDirect(b, blob_inline[i] ? &spec.delegate_blobs[i] : &kEmpty));
  }

  // Segment table: offsets relative to the segment base, each aligned.
  std::vector<Offset<pfb::DataSegment>> segments;
  std::vector<uint64_t> segment_offsets;
  uint64_t cursor = 0;
  for (const auto& data : layout.segment_data) {
    cursor = *checked::align_up(cursor, opt.segment_alignment);
    segment_offsets.push_back(cursor);
    segments.push_back(pfb::CreateDataSegment(b, cursor, data.size()));
    cursor += data.size();
  }
  const uint64_t segment_data_size = layout.segment_data.empty() ? 0 : cursor;

  Offset<pfb::SubsegmentOffsets> constant_segment;
  if (!opt.legacy_constant_buffer) {
    constant_segment = pfb::CreateSubsegmentOffsetsDirect(b, 0, &layout.constant_offsets);
  }
  std::vector<Offset<pfb::SubsegmentOffsets>> mutable_segments;
  if (!spec.mutable_data.empty()) {
    mutable_segments.push_back(pfb::CreateSubsegmentOffsetsDirect(b, layout.mutable_segment, &layout.mutable_offsets));
  }
  std::vector<Offset<pfb::NamedData>> named;
  for (size_t i = 0; i < spec.named_data.size(); ++i) {
    named.push_back(pfb::CreateNamedDataDirect(b, spec.named_data[i].first.c_str(), layout.named_segment[i]));
  }
  auto root = pfb::CreateProgramDirect(b, 0, &plans, opt.legacy_constant_buffer ? &constant_buffer : nullptr,
                                      &inline_data, &segments, constant_segment,
                                      mutable_segments.empty() ? nullptr : &mutable_segments,
                                      named.empty() ? nullptr : &named);
  pfb::FinishProgramBuffer(b, root);

  const uint8_t* fbuf = b.GetBufferPointer();
  const size_t fsize = b.GetSize();
  bool any_data = false;
  for (const auto& d : layout.segment_data) any_data |= !d.empty();
  if (!any_data) return std::vector<uint8_t>(fbuf, fbuf + fsize);

  // Insert the extended header after the identifier, padded to 32 bytes (a multiple of the
  // schema's largest alignment, 16), and shift the root offset by the same amount.
  constexpr uint32_t kPadded = 32;
  const uint64_t program_size = fsize + kPadded;
  const uint64_t base = *checked::align_up(program_size, opt.segment_alignment);
  std::vector<uint8_t> out(static_cast<size_t>(base + segment_data_size), 0);
  const uint32_t root_offset = flatbuffers::ReadScalar<uint32_t>(fbuf) + kPadded;
  std::memcpy(out.data(), &root_offset, 4);
  std::memcpy(out.data() + 4, fbuf + 4, 4);
  std::memcpy(out.data() + 8, "eh00", 4);
  std::memcpy(out.data() + 12, &opt.header_length, 4);
  std::memcpy(out.data() + 16, &program_size, 8);
  std::memcpy(out.data() + 24, &base, 8);
  if (opt.header_length >= 32) std::memcpy(out.data() + 32, &segment_data_size, 8);
  std::memcpy(out.data() + 8 + kPadded, fbuf + 8, fsize - 8);
  for (size_t i = 0; i < layout.segment_data.size(); ++i) {
    if (!layout.segment_data[i].empty()) {
      std::memcpy(out.data() + base + segment_offsets[i], layout.segment_data[i].data(), layout.segment_data[i].size());
    }
  }
  return out;
}

}  // namespace etscope
