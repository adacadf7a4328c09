// StreamingTracer: ExecuTorch's EventTracer interface, implemented by forwarding what ExecuTorch's
// runtime reports (profile events, delegate events, logged values) as worker messages, buffered
// during an execution and sent after it, so that the runner's own ETDump writer records them.
#pragma once

#include <executorch/runtime/core/event_tracer.h>

#include <cstdint>
#include <string>
#include <vector>

#include "etscope/core/event_names.h"
#include "etscope/worker/messages.h"
#include "etscope/worker/wire.h"

namespace etscope::executorch_engine {

namespace et = ::executorch::runtime;

/// ExecuTorch's tensor as a dense row-major wire tensor (a tensor of another dim order is
/// gathered into row-major order).
worker::WireTensor to_wire(const ::executorch::aten::Tensor& t);
/// ExecuTorch's value as a wire value (tensors, tensor lists, Int, Double, Bool; others: None).
worker::WireValue to_wire(const et::EValue& v);

class StreamingTracer final : public et::EventTracer {
 public:
  StreamingTracer();

  void create_event_block(const char* name) override;
  et::EventTracerEntry start_profiling(const char* name, et::ChainID chain_id, et::DebugHandle debug_handle) override;
  et::EventTracerEntry start_profiling_delegate(const char* name, et::DelegateDebugIntId delegate_debug_index) override;
  void end_profiling_delegate(et::EventTracerEntry entry, const void* metadata, size_t metadata_len) override;
  void log_profiling_delegate(const char* name, et::DelegateDebugIntId delegate_debug_index, et_timestamp_t start_time,
                              et_timestamp_t end_time, const void* metadata, size_t metadata_len) override;
  void end_profiling(et::EventTracerEntry entry) override;
  void track_allocation(et::AllocatorID id, size_t size) override;
  et::AllocatorID track_allocator(const char* name) override;
  et::Result<bool> log_evalue(const et::EValue& evalue, et::LoggedEValueType evalue_type) override;
  et::Result<bool> log_intermediate_output_delegate(const char* name, et::DelegateDebugIntId delegate_debug_index,
                                                    const ::executorch::aten::Tensor& output) override;
  et::Result<bool> log_intermediate_output_delegate(const char* name, et::DelegateDebugIntId delegate_debug_index,
                                                    const et::ArrayRef<::executorch::aten::Tensor> output) override;
  et::Result<bool> log_intermediate_output_delegate(const char* name, et::DelegateDebugIntId delegate_debug_index,
                                                    const int& output) override;
  et::Result<bool> log_intermediate_output_delegate(const char* name, et::DelegateDebugIntId delegate_debug_index,
                                                    const bool& output) override;
  et::Result<bool> log_intermediate_output_delegate(const char* name, et::DelegateDebugIntId delegate_debug_index,
                                                    const double& output) override;
  void set_delegation_intermediate_output_filter(et::EventTracerFilterBase* filter) override;

  /// The messages recorded since the last take (frames: type, payload), in order.
  std::vector<std::pair<worker::MessageType, std::vector<uint8_t>>> take();
  /// Adds an event timed by the worker itself (a delegate's init).
  void record(const worker::TimedEvent& e) { emit(e); }
  /// When the last Method::init ended (steady-clock ns), 0 before one has.
  uint64_t method_init_end_ns() const { return method_init_end_ns_; }

 private:
  struct Open {
    const char* name;
    std::string delegate_name;
    bool delegate;
    int64_t delegate_id;
    int32_t chain;
    uint32_t handle;
    uint64_t start_ns;
  };
  /// Steady-clock nanoseconds of an ExecuTorch PAL timestamp.
  uint64_t pal_to_steady_ns(et_timestamp_t ticks) const;
  void emit(const worker::TimedEvent& e);
  void emit_value(worker::WireValue v, bool output, bool delegate, int32_t delegate_id);

  std::vector<Open> open_;  ///< indexed by EventTracerEntry::event_id
  uint64_t method_init_end_ns_ = 0;
  int64_t pal_offset_ns_ = 0;
  uint64_t pal_num_ = 1, pal_den_ = 1;
  std::vector<std::pair<worker::MessageType, std::vector<uint8_t>>> pending_;
};

}  // namespace etscope::executorch_engine
