// EtDumpWriter: an EventTracer that records a run into preallocated memory and writes it as an
// ETDump exactly as ExecuTorch lays one out (size-prefixed "ED00" FlatBuffer; formats.md §4,
// semantics.md §2): one run block per create_event_block ("Default" at load, "Execute" per
// execution), profile events appended when they end, debug values with their tensor bytes
// copied into a caller-provided debug buffer at 64-byte-aligned addresses.
//
// Nothing is allocated while recording: events, blocks and tensor records live in arrays sized
// at construction. When an array or the debug buffer is full, recording continues without the
// value, the writer counts what it dropped, and finish() closes the affected block with a marker
// event carrying the count (core/event_names.h: etscope::debug_buffer_overflow, event_overflow).
// Executions after the last block fit are not recorded at all (never merged into the last
// block): the last block's etscope::block_overflow marker counts them.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "etscope/core/result.h"
#include "etscope/core/event_tracer.h"

namespace etscope::etdump {

struct EtDumpWriterOptions {
  size_t max_events = 1 << 20;         ///< Profile + debug events over the whole run.
  size_t max_blocks = 1 << 16;         ///< Run blocks.
  size_t max_tensor_records = 1 << 18; ///< Logged tensors (a TensorList counts each element).
  /// Where logged tensor bytes go (the caller keeps it, e.g. to write debug.bin). Empty: tensors
  /// cannot be logged; any attempt counts as an overflow.
  std::span<uint8_t> debug_buffer;
  size_t debug_alignment = 64;
};

class EtDumpWriter final : public EventTracer {
 public:
  explicit EtDumpWriter(const EtDumpWriterOptions& options);

  void create_event_block(const char* name) override;
  EventHandle start_profiling(const char* name, int32_t chain_id = -1, uint32_t debug_handle = 0) override;
  /// Recorded as ExecuTorch records a delegate's profiling event: no name, the id as
  /// delegate_debug_id_str, delegate_debug_id_int -1 and empty metadata.
  EventHandle start_delegate_event(const char* id) override;
  void end_profiling(EventHandle handle) override;
  /// Recorded with the times given (steady-clock nanoseconds), as ExecuTorch's ETDumpGen records
  /// log_profiling_delegate: a delegate event without a name has its integer id.
  void record_timed_event(const char* name, int32_t chain_id, uint32_t debug_handle, bool delegate, int64_t delegate_id,
                          uint64_t start_ns, uint64_t end_ns) override;
  void log_evalue(const EValue& value, bool output) override;
  /// A debug event with delegate_debug_id_int = `delegate_id`, as ExecuTorch records a delegate's
  /// intermediate output.
  void log_delegate_output(const EValue& value, int32_t delegate_id) override;

  /// Records a zero-length profile event named `name` (chain -1, instruction -1, start = end =
  /// now) at this point of the current block, keeping its own copy of the text: etscope's engine
  /// marker (core/event_names.h, events::engine_marker_name), which the runner records in the
  /// "Default" block once its engine has loaded the method. Ignored before the first block, and
  /// counted as a dropped event when the event capacity is full. Not for the hot path: it
  /// allocates the copy.
  void record_marker(std::string_view name);

  /// Gives the writer its debug buffer after construction, before the first tensor is logged (the
  /// runner sets the buffer up after loading, so that load time does not include it). Returns
  /// false, keeping the old buffer, once a tensor has been written to it.
  bool set_debug_buffer(std::span<uint8_t> buffer);

  /// Serializes everything recorded so far. Event names must still be alive (the runtime's names
  /// live as long as the Method that produced them).
  Result<std::vector<uint8_t>> finish() const;

  /// Bytes of the debug buffer in use (up to the end of the last tensor).
  size_t debug_bytes_used() const { return debug_used_; }
  bool debug_buffer_overflowed() const { return values_dropped_ > 0; }
  bool events_overflowed() const { return events_dropped_ > 0 || blocks_dropped_ > 0; }
  /// Logged values whose bytes did not fit the debug buffer.
  uint64_t values_dropped() const { return values_dropped_; }
  /// Profile events and logged values beyond the event capacity.
  uint64_t events_dropped() const { return events_dropped_; }
  /// Blocks (executions) beyond max_blocks, not recorded.
  uint64_t blocks_dropped() const { return blocks_dropped_; }
  size_t event_count() const { return recorded_.size(); }

 private:
  struct Started {
    const char* name;
    int32_t chain;
    uint32_t handle;
    uint64_t start;
    bool delegate = false;
    int64_t delegate_id = -1;  ///< A delegate event without a name: its integer id.
    bool timed_ns = false;     ///< start and the recorded end are steady-clock ns, not ticks.
  };
  enum class Kind : uint8_t { kProfile, kDebug, kMarker };
  struct Recorded {
    Kind kind;
    uint32_t index;  // into started_ (profile), values_ (debug) or marker_names_ (marker)
    uint64_t end;
  };
  struct TensorRecord {
    int8_t dtype;
    uint8_t dim;
    int64_t offset;
    int64_t sizes[kMaxDims];
    int64_t strides[kMaxDims];
  };
  struct ValueRecord {
    Tag tag;
    bool output;
    int32_t chain;
    uint32_t handle;
    union {
      int64_t i;
      double d;
      bool b;
    } scalar;
    uint32_t first_tensor;
    uint32_t tensor_count;
    int32_t delegate_id;  ///< -1 unless logged by a delegate
  };
  struct Block {
    const char* name;
    uint32_t first_recorded;
    uint64_t values_dropped;
    uint64_t events_dropped;
  };

  struct Clock {
    uint64_t ticks;  ///< now_ticks()
    uint64_t ns;     ///< steady_clock, nanoseconds
  };
  bool record_tensor(const TensorImpl& t);
  /// The time-stamp counter where there is one, else steady_clock nanoseconds.
  static uint64_t now_ticks();
  static Clock clock_pair();
  /// Ticks -> steady_clock nanoseconds, at the rate measured between origin_ and `end`.
  uint64_t to_ns(uint64_t ticks, const Clock& end) const;
  Clock origin_{};

  EtDumpWriterOptions options_;
  std::vector<Started> started_;
  std::vector<Recorded> recorded_;
  std::vector<ValueRecord> values_;
  std::vector<TensorRecord> tensors_;
  std::vector<Block> blocks_;
  std::vector<std::string> marker_names_;  ///< record_marker's own copies.
  size_t debug_used_ = 0;
  uint64_t values_dropped_ = 0;
  uint64_t events_dropped_ = 0;
  uint64_t blocks_dropped_ = 0;
  bool discarding_ = false;  ///< No block was left for the current execution: record nothing.
  void drop_event() {
    ++events_dropped_;
    if (!blocks_.empty()) ++blocks_.back().events_dropped;
  }
};

}  // namespace etscope::etdump
