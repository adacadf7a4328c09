// EventTracer: the hook points the runtime reports to, mirroring ExecuTorch's (semantics.md §2).
//
// The runtime never calls a tracer directly: it goes through the null-tolerant scopes below, so a
// Method without a tracer pays one pointer test per hook. Implementations (the ETDump writer, test
// recorders) must not allocate on the hot path if they want traced runs to stay fast.
#pragma once

#include <cstdint>

#include "etscope/core/evalue.h"

namespace etscope {

/// What gets logged as debug values (ExecuTorch's EventTracerDebugLogLevel).
enum class DebugLevel : uint8_t { kNone = 0, kProgramOutputs = 1, kIntermediateOutputs = 2 };

/// ExecuTorch's profiling levels: method events only, or every instruction too.
enum class ProfilingLevel : uint8_t { kMethodOnly = 0, kAllEvents = 1 };

using EventHandle = uint32_t;
/// A handle that stands for "not recorded": end_profiling ignores it.
inline constexpr EventHandle kNoEvent = UINT32_MAX;

class EventTracer {
 public:
  virtual ~EventTracer() = default;

  /// Opens a new run block ("Default" at load, "Execute" per execute()).
  virtual void create_event_block(const char* name) = 0;
  /// Starts a profiling event. `chain_id == -1` means "use the current instruction context".
  virtual EventHandle start_profiling(const char* name, int32_t chain_id = -1, uint32_t debug_handle = 0) = 0;
  /// Starts an event raised inside a delegate, identified by a string (ExecuTorch's delegate debug
  /// id string, e.g. "Convolution (NHWC, F32) IGEMM #1"), in the current instruction's context.
  /// Tracers that do not tell delegate events apart record it as a profiling event of that name.
  virtual EventHandle start_delegate_event(const char* id) { return start_profiling(id); }
  /// Ends the event; it is recorded now (so children precede parents).
  virtual void end_profiling(EventHandle handle) = 0;
  /// Records an event that was timed elsewhere (in another process: the ExecuTorch engine's
  /// worker; or by a delegate's own profiler), from `start_ns` to `end_ns` on the steady clock
  /// (CLOCK_MONOTONIC nanoseconds, which every process of a machine shares), with the chain and
  /// instruction given. `delegate`: raised inside a delegate, identified by `name` (its delegate
  /// debug id string) or, when `name` is null, by `delegate_id`. `name` must live as long as the
  /// tracer's record of it. Tracers that keep no times ignore it.
  virtual void record_timed_event(const char* name, int32_t chain_id, uint32_t debug_handle, bool delegate,
                                  int64_t delegate_id, uint64_t start_ns, uint64_t end_ns) {
    (void)name, (void)chain_id, (void)debug_handle, (void)delegate, (void)delegate_id, (void)start_ns, (void)end_ns;
  }
  /// Logs a value: a kernel output or delegate argument (`output == false`), or a method output.
  virtual void log_evalue(const EValue& value, bool output) = 0;
  /// Logs an output computed inside a delegate, identified by an integer delegate debug id
  /// (ExecuTorch's log_intermediate_output_delegate), in the current instruction's context.
  /// Tracers that do not tell delegate values apart log it as an intermediate value.
  virtual void log_delegate_output(const EValue& value, int32_t delegate_id) {
    (void)delegate_id;
    log_evalue(value, false);
  }

  /// The instruction being executed: (chain, instruction index), or (-1, 0) between instructions.
  void set_instruction(int32_t chain_id, uint32_t debug_handle) {
    chain_id_ = chain_id;
    debug_handle_ = debug_handle;
  }
  int32_t chain_id() const { return chain_id_; }
  uint32_t debug_handle() const { return debug_handle_; }

  DebugLevel debug_level() const { return debug_level_; }
  void set_debug_level(DebugLevel level) { debug_level_ = level; }
  ProfilingLevel profiling_level() const { return profiling_level_; }
  void set_profiling_level(ProfilingLevel level) { profiling_level_ = level; }

 private:
  int32_t chain_id_ = -1;
  uint32_t debug_handle_ = 0;
  DebugLevel debug_level_ = DebugLevel::kNone;
  ProfilingLevel profiling_level_ = ProfilingLevel::kAllEvents;
};

/// A method-level event (Program::load_method, Method::init): always recorded when traced.
class MethodScope {
 public:
  MethodScope(EventTracer* tracer, const char* name) : tracer_(tracer) {
    if (tracer_) handle_ = tracer_->start_profiling(name, -1, 0);
  }
  ~MethodScope() {
    if (tracer_) tracer_->end_profiling(handle_);
  }
  MethodScope(const MethodScope&) = delete;
  MethodScope& operator=(const MethodScope&) = delete;

 private:
  EventTracer* tracer_;
  EventHandle handle_ = 0;
};

/// An instruction-level event (OPERATOR_CALL, native_call_*, ...): recorded only at
/// ProfilingLevel::kAllEvents; inherits the current instruction context.
class OpScope {
 public:
  OpScope(EventTracer* tracer, const char* name)
      : tracer_(tracer != nullptr && tracer->profiling_level() == ProfilingLevel::kAllEvents ? tracer : nullptr) {
    if (tracer_) handle_ = tracer_->start_profiling(name);
  }
  ~OpScope() {
    if (tracer_) tracer_->end_profiling(handle_);
  }
  OpScope(const OpScope&) = delete;
  OpScope& operator=(const OpScope&) = delete;

 private:
  EventTracer* tracer_;
  EventHandle handle_ = 0;
};

/// Sets the instruction context for its lifetime and clears it to (-1, 0) afterwards.
class InstructionScope {
 public:
  InstructionScope(EventTracer* tracer, int32_t chain, uint32_t index) : tracer_(tracer) {
    if (tracer_) tracer_->set_instruction(chain, index);
  }
  ~InstructionScope() {
    if (tracer_) tracer_->set_instruction(-1, 0);
  }
  InstructionScope(const InstructionScope&) = delete;
  InstructionScope& operator=(const InstructionScope&) = delete;

 private:
  EventTracer* tracer_;
};

/// Logs a kernel output or delegate argument when the debug level asks for intermediates.
inline void log_intermediate(EventTracer* tracer, const EValue& value) {
  if (tracer != nullptr && tracer->debug_level() >= DebugLevel::kIntermediateOutputs) tracer->log_evalue(value, false);
}

/// Program inputs are logged (at intermediate-output level) as debug values of chain -1 and
/// instruction id -1: no ExecuTorch runtime writes that pair and no ETRecord maps it to an
/// operator, so ExecuTorch's Inspector shows them as one unlinked event and leaves them out of
/// the numeric gap, while etscope's Inspector reads them as the run's inputs.
inline constexpr int32_t kProgramInputInstruction = -1;

/// Logs the values a method executes with, before its first instruction.
inline void log_program_input(EventTracer* tracer, const EValue& value) {
  if (tracer == nullptr || tracer->debug_level() < DebugLevel::kIntermediateOutputs) return;
  tracer->set_instruction(-1, static_cast<uint32_t>(kProgramInputInstruction));
  tracer->log_evalue(value, false);
  tracer->set_instruction(-1, 0);
}

}  // namespace etscope
