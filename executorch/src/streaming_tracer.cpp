#include "streaming_tracer.h"

#include <executorch/runtime/platform/platform.h>

#include <chrono>
#include <cstring>

namespace etscope::executorch_engine {
namespace {

uint64_t steady_ns() {
  return static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch()).count());
}

bool row_major(const ::executorch::aten::Tensor& t) {
  const auto order = t.dim_order();
  for (size_t d = 0; d < order.size(); ++d) {
    if (order[d] != d) return false;
  }
  return true;
}

}  // namespace

worker::WireTensor to_wire(const ::executorch::aten::Tensor& t) {
  worker::WireTensor w;
  w.dtype = static_cast<ScalarType>(static_cast<int8_t>(t.scalar_type()));
  for (ssize_t d = 0; d < t.dim(); ++d) w.sizes.push_back(t.size(d));
  const size_t nbytes = t.nbytes();
  const auto* src = static_cast<const uint8_t*>(t.const_data_ptr());
  if (src == nullptr || nbytes == 0) {
    w.bytes.assign(nbytes, 0);
    return w;
  }
  if (row_major(t)) {
    w.bytes.assign(src, src + nbytes);
    return w;
  }
  // Gather element by element along the tensor's strides into row-major order.
  const size_t element = t.element_size();
  const size_t numel = static_cast<size_t>(t.numel());
  const ssize_t dim = t.dim();
  const auto strides = t.strides();
  w.bytes.resize(nbytes);
  std::vector<int64_t> index(static_cast<size_t>(dim), 0);
  for (size_t k = 0; k < numel; ++k) {
    int64_t offset = 0;
    for (ssize_t d = 0; d < dim; ++d) offset += index[static_cast<size_t>(d)] * strides[static_cast<size_t>(d)];
    std::memcpy(w.bytes.data() + k * element, src + static_cast<size_t>(offset) * element, element);
    for (ssize_t d = dim - 1; d >= 0; --d) {
      if (++index[static_cast<size_t>(d)] < t.size(d)) break;
      index[static_cast<size_t>(d)] = 0;
    }
  }
  return w;
}

worker::WireValue to_wire(const et::EValue& v) {
  worker::WireValue w;
  if (v.isTensor()) {
    w.tag = Tag::kTensor;
    w.tensors.push_back(to_wire(v.toTensor()));
  } else if (v.isTensorList()) {
    w.tag = Tag::kTensorList;
    for (const auto& t : v.toTensorList()) w.tensors.push_back(to_wire(t));
  } else if (v.isInt()) {
    w.tag = Tag::kInt;
    w.i = v.toInt();
  } else if (v.isDouble()) {
    w.tag = Tag::kDouble;
    w.d = v.toDouble();
  } else if (v.isBool()) {
    w.tag = Tag::kBool;
    w.b = v.toBool();
  }
  return w;
}

StreamingTracer::StreamingTracer() {
  const et_tick_ratio_t ratio = et::pal_ticks_to_ns_multiplier();
  pal_num_ = ratio.numerator;
  pal_den_ = ratio.denominator == 0 ? 1 : ratio.denominator;
  // PAL ticks count from the runtime's start; the runner's clock is the machine's steady clock.
  const uint64_t pal = static_cast<uint64_t>(et::pal_current_ticks()) * pal_num_ / pal_den_;
  pal_offset_ns_ = static_cast<int64_t>(steady_ns()) - static_cast<int64_t>(pal);
}

uint64_t StreamingTracer::pal_to_steady_ns(et_timestamp_t ticks) const {
  return static_cast<uint64_t>(static_cast<int64_t>(static_cast<uint64_t>(ticks) * pal_num_ / pal_den_) + pal_offset_ns_);
}

// The runner opens blocks itself (it knows Warmup from Execute); ExecuTorch's runtime opens none.
void StreamingTracer::create_event_block(const char*) {}

et::EventTracerEntry StreamingTracer::start_profiling(const char* name, et::ChainID chain_id, et::DebugHandle debug_handle) {
  if (chain_id == et::kUnsetChainId) {
    chain_id = chain_id_;
    debug_handle = debug_handle_;
  }
  et::EventTracerEntry e{};
  e.event_id = static_cast<int64_t>(open_.size());
  e.chain_id = chain_id;
  e.debug_handle = debug_handle;
  e.delegate_event_id_type = et::DelegateDebugIdType::kNone;
  open_.push_back({name, {}, false, -1, chain_id, debug_handle, 0});
  open_.back().start_ns = steady_ns();
  e.start_time = 0;
  return e;
}

et::EventTracerEntry StreamingTracer::start_profiling_delegate(const char* name, et::DelegateDebugIntId delegate_debug_index) {
  et::EventTracerEntry e{};
  e.event_id = static_cast<int64_t>(open_.size());
  e.chain_id = chain_id_;
  e.debug_handle = debug_handle_;
  e.delegate_event_id_type = name != nullptr ? et::DelegateDebugIdType::kStr : et::DelegateDebugIdType::kInt;
  open_.push_back({nullptr, name != nullptr ? std::string(name) : std::string(), true, name != nullptr ? -1 : static_cast<int64_t>(delegate_debug_index),
                   chain_id_, debug_handle_, 0});
  open_.back().start_ns = steady_ns();
  return e;
}

void StreamingTracer::end_profiling_delegate(et::EventTracerEntry entry, const void*, size_t) { end_profiling(entry); }

void StreamingTracer::end_profiling(et::EventTracerEntry entry) {
  const uint64_t end = steady_ns();
  if (entry.event_id < 0 || static_cast<size_t>(entry.event_id) >= open_.size()) return;
  const Open& o = open_[static_cast<size_t>(entry.event_id)];
  worker::TimedEvent e;
  e.delegate = o.delegate;
  if (o.delegate) {
    e.has_name = !o.delegate_name.empty();
    e.name = o.delegate_name;
    e.delegate_id = o.delegate_id;
  } else {
    e.name = o.name != nullptr ? o.name : "";
    if (e.name == events::kMethodInit) method_init_end_ns_ = end;
  }
  e.chain = o.chain;
  e.handle = o.handle;
  e.start_ns = o.start_ns;
  e.end_ns = end;
  emit(e);
}

void StreamingTracer::log_profiling_delegate(const char* name, et::DelegateDebugIntId delegate_debug_index, et_timestamp_t start_time,
                                             et_timestamp_t end_time, const void*, size_t) {
  worker::TimedEvent e;
  e.delegate = true;
  e.has_name = name != nullptr;
  if (name != nullptr) e.name = name;
  e.delegate_id = name != nullptr ? -1 : static_cast<int64_t>(delegate_debug_index);
  e.chain = chain_id_;
  e.handle = debug_handle_;
  e.start_ns = pal_to_steady_ns(start_time);
  e.end_ns = pal_to_steady_ns(end_time);
  emit(e);
}

void StreamingTracer::track_allocation(et::AllocatorID, size_t) {}
et::AllocatorID StreamingTracer::track_allocator(const char*) { return 0; }

et::Result<bool> StreamingTracer::log_evalue(const et::EValue& evalue, et::LoggedEValueType evalue_type) {
  emit_value(to_wire(evalue), evalue_type == et::LoggedEValueType::kProgramOutput, false, -1);
  return true;
}

et::Result<bool> StreamingTracer::log_intermediate_output_delegate(const char*, et::DelegateDebugIntId index,
                                                                   const ::executorch::aten::Tensor& output) {
  worker::WireValue v;
  v.tag = Tag::kTensor;
  v.tensors.push_back(to_wire(output));
  emit_value(std::move(v), false, true, static_cast<int32_t>(index));
  return true;
}

et::Result<bool> StreamingTracer::log_intermediate_output_delegate(const char*, et::DelegateDebugIntId index,
                                                                   const et::ArrayRef<::executorch::aten::Tensor> output) {
  worker::WireValue v;
  v.tag = Tag::kTensorList;
  for (const auto& t : output) v.tensors.push_back(to_wire(t));
  emit_value(std::move(v), false, true, static_cast<int32_t>(index));
  return true;
}

et::Result<bool> StreamingTracer::log_intermediate_output_delegate(const char*, et::DelegateDebugIntId index, const int& output) {
  worker::WireValue v;
  v.tag = Tag::kInt;
  v.i = output;
  emit_value(std::move(v), false, true, static_cast<int32_t>(index));
  return true;
}

et::Result<bool> StreamingTracer::log_intermediate_output_delegate(const char*, et::DelegateDebugIntId index, const bool& output) {
  worker::WireValue v;
  v.tag = Tag::kBool;
  v.b = output;
  emit_value(std::move(v), false, true, static_cast<int32_t>(index));
  return true;
}

et::Result<bool> StreamingTracer::log_intermediate_output_delegate(const char*, et::DelegateDebugIntId index, const double& output) {
  worker::WireValue v;
  v.tag = Tag::kDouble;
  v.d = output;
  emit_value(std::move(v), false, true, static_cast<int32_t>(index));
  return true;
}

void StreamingTracer::set_delegation_intermediate_output_filter(et::EventTracerFilterBase*) {}

void StreamingTracer::emit(const worker::TimedEvent& e) {
  worker::WireWriter w;
  worker::encode(w, e);
  pending_.emplace_back(worker::MessageType::kEvent, std::move(w.bytes()));
}

void StreamingTracer::emit_value(worker::WireValue v, bool output, bool delegate, int32_t delegate_id) {
  worker::LoggedValue m;
  m.value = std::move(v);
  m.output = output;
  m.delegate = delegate;
  m.delegate_id = delegate_id;
  m.chain = chain_id_;
  m.handle = debug_handle_;
  worker::WireWriter w;
  worker::encode(w, m);
  pending_.emplace_back(worker::MessageType::kValue, std::move(w.bytes()));
}

std::vector<std::pair<worker::MessageType, std::vector<uint8_t>>> StreamingTracer::take() {
  open_.clear();
  return std::exchange(pending_, {});
}

}  // namespace etscope::executorch_engine
