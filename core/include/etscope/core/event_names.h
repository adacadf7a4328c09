// Names of the profile events the runtime, the ETDump writer and ExecuTorch emit
// (../shared/spec/semantics.md §2.2), and the one classifier every reader of a profile uses.
//
// Header-only and dependency-free (std only): the runtime names its events with these constants,
// libinspect and the front ends recognise them with classify(). Each constant views a string
// literal, so its data() is NUL-terminated and can be handed to C-string APIs.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace etscope::events {

// Framework events: whole-method scopes, chain -1.
inline constexpr std::string_view kProgramLoadMethod = "Program::load_method";
inline constexpr std::string_view kMethodInit = "Method::init";
inline constexpr std::string_view kMethodExecute = "Method::execute";
inline constexpr std::string_view kMethodStep = "Method::step";

/// etscope's load-phase event: one delegate's initialisation inside Method::init (the backend's
/// init: for XNNPACK, building its runtime and packing the weights), in the "Default" block,
/// recorded with the chain and instruction of the first DelegateCall that calls the delegate (so
/// that it associates with the delegate's nodes as that call does). ExecuTorch's runtime has no
/// event here: the ExecuTorch engine times it from the worker's data loader (the delegate's
/// segment is read right before the backend's init; one init ends where the next one's read
/// begins, the last at the end of Method::init), the etscope engine around its own delegate load.
inline constexpr std::string_view kDelegateInit = "etscope::delegate_init";
/// Where a kDelegateInit event says its delegate is: chain_index is the delegate call's chain and
/// instruction_id is -1 - its instruction. Negative, so that ExecuTorch's Inspector, which looks
/// every event's instruction_id up in the ETRecord's debug-handle map, does not take this load-time
/// event (with no logged output) for the delegate call itself: its numeric gap failed on etscope's
/// dumps of delegated programs. Dumps written before recorded the instruction itself.
inline constexpr int32_t delegate_init_instruction_id(uint32_t instruction) { return -1 - static_cast<int32_t>(instruction); }
inline constexpr int64_t delegate_init_instruction(int64_t instruction_id) { return instruction_id < 0 ? -1 - instruction_id : instruction_id; }

// Per-instruction events.
inline constexpr std::string_view kOperatorCall = "OPERATOR_CALL";  ///< A KernelCall: kernel plus overhead.
inline constexpr std::string_view kDelegateCall = "DELEGATE_CALL";  ///< A DelegateCall, as the executor times it.
inline constexpr std::string_view kJumpFalseCall = "JF_CALL";
inline constexpr std::string_view kMoveCall = "MOVE_CALL";
inline constexpr std::string_view kFreeCall = "FREE_CALL";
/// Prefix of the codegen'd kernel wrapper events: native_call_<op>.<overload>, no namespace.
inline constexpr std::string_view kNativeCallPrefix = "native_call_";

// Run block names.
inline constexpr std::string_view kBlockDefault = "Default";  ///< Opened at load.
inline constexpr std::string_view kBlockExecute = "Execute";  ///< Opened by each execute().
/// etscope's name for the block of a warm-up execution, so that statistics can leave warm-up
/// out (ExecuTorch's Inspector then sees it as a block of its own, not as an "Execute" run).
inline constexpr std::string_view kBlockWarmup = "Warmup";
/// `etscope train`'s block for a validation pass (a forward-backward without an update), so that
/// it groups apart from the training steps' "Execute" blocks.
inline constexpr std::string_view kBlockEval = "Eval";
/// `etscope generate`'s blocks: each call of an LLM's program is an execution of its own, in call
/// order, "Prefill" for the calls that feed the prompt and "Decode" for each generated token
/// (llm/generator.h writes them, inspect/generation_profile.h reads them).
inline constexpr std::string_view kBlockPrefill = "Prefill";
inline constexpr std::string_view kBlockDecode = "Decode";
/// `etscope train`'s event for the optimizer's update, in the step's "Execute" block after
/// Method::execute: model time and optimizer time side by side.
inline constexpr std::string_view kOptimizerStep = "Optimizer::step";

// etscope's overflow markers. When the ETDump writer could not record something, it closes the
// affected block with a profile event of one of these names (chain -1, instruction -1) whose
// start is 0 and whose end is how many were dropped in that block (0 in dumps written before
// etscope counted them). Readers count them and never treat them as events.
/// Logged values whose bytes did not fit the debug buffer.
inline constexpr std::string_view kMarkerDebugOverflow = "etscope::debug_buffer_overflow";
/// Profile events and logged values beyond the writer's event capacity.
inline constexpr std::string_view kMarkerEventOverflow = "etscope::event_overflow";
/// Executions after the writer's last block: not recorded at all (in the last recorded block).
inline constexpr std::string_view kMarkerBlockOverflow = "etscope::block_overflow";

/// One of the three overflow markers above: a count of what a block lost.
constexpr bool is_overflow_marker_name(std::string_view name) {
  return name == kMarkerDebugOverflow || name == kMarkerEventOverflow || name == kMarkerBlockOverflow;
}

// etscope's engine marker. etscope's runner records which execution engine made a dump's timings
// as one zero-length profile event in the "Default" block, right after the engine has loaded the
// method: chain -1, instruction -1, start = end = the time it was recorded, named
//   "etscope::engine:<engine> <version>"      e.g. "etscope::engine:etscope 0.1.0",
//                                                   "etscope::engine:executorch 1.5.1+cpu"
// The engine's name holds no space; the version is the rest (it may be empty). ExecuTorch's
// Inspector reads it as one more event of the Default block; etscope's readers never count it as
// an event (is_marker_name) and read it with parse_engine_marker. Dumps without it (ExecuTorch's
// own runners, etscope builds older than the marker) have an unknown engine.
inline constexpr std::string_view kMarkerEnginePrefix = "etscope::engine:";

constexpr bool is_engine_marker_name(std::string_view name) { return name.starts_with(kMarkerEnginePrefix); }

/// The engine marker's event name for an engine and its version.
inline std::string engine_marker_name(std::string_view engine, std::string_view version) {
  std::string out(kMarkerEnginePrefix);
  out += engine;
  out += ' ';
  out += version;
  return out;
}

/// An engine marker read back: views into the name it was parsed from.
struct EngineMarker {
  std::string_view engine;
  std::string_view version;
};

/// The engine and version of an engine marker's name; nullopt for any other name, or for a marker
/// without an engine name.
constexpr std::optional<EngineMarker> parse_engine_marker(std::string_view name) {
  if (!is_engine_marker_name(name)) return std::nullopt;
  const std::string_view rest = name.substr(kMarkerEnginePrefix.size());
  const size_t space = rest.find(' ');
  const std::string_view engine = rest.substr(0, space);
  if (engine.empty()) return std::nullopt;
  return EngineMarker{engine, space == std::string_view::npos ? std::string_view() : rest.substr(space + 1)};
}

/// Any of etscope's markers (overflow counts, the engine): never an event to show, time or count.
constexpr bool is_marker_name(std::string_view name) { return is_overflow_marker_name(name) || is_engine_marker_name(name); }

/// What a profile event is. Every profile reader (Inspector aggregates, timeline, trace, GUI
/// statistics) asks classify() instead of comparing names itself.
enum class EventClass : unsigned char {
  kFramework,     ///< Program::load_method, Method::init, Method::execute.
  kOperatorCall,  ///< OPERATOR_CALL: one kernel call as the executor times it (kernel + overhead).
  kNativeCall,    ///< native_call_<op>.<overload>: the kernel body alone.
  kDelegateCall,  ///< DELEGATE_CALL: one delegate call as the executor times it.
  kDelegateOp,    ///< An event raised inside a delegate (identified by a delegate debug id).
  kOther,         ///< Anything else (Method::step, JF_CALL, custom kernel names, user scopes).
  kMarker,        ///< One of etscope's markers (is_marker_name): never an event; readers skip it.
};

/// True for the three framework events ExecuTorch's Inspector leaves out of graph association.
constexpr bool is_framework_name(std::string_view name) {
  return name == kProgramLoadMethod || name == kMethodInit || name == kMethodExecute;
}

/// Events etscope records beside Method::execute in a run block rather than inside it (the
/// trainer's optimizer update): they are not part of the run time, so the per-type summary,
/// whose shares are of the run time, leaves them out; the event table still lists them.
constexpr bool is_beside_execute_name(std::string_view name) { return name == kOptimizerStep; }

/// ExecuTorch's test for operator-call rows: the name *contains* OPERATOR_CALL (§3.7, §3.9).
constexpr bool is_operator_call_name(std::string_view name) { return name.find(kOperatorCall) != std::string_view::npos; }

constexpr bool is_native_call_name(std::string_view name) { return name.starts_with(kNativeCallPrefix); }

/// The operator of a native_call_ event ("native_call_add.out" -> "add.out"); the name itself
/// for any other event.
constexpr std::string_view native_call_op(std::string_view name) {
  return is_native_call_name(name) ? name.substr(kNativeCallPrefix.size()) : name;
}

/// The kernel event name for an operator: "aten::add" + "out" -> "native_call_add.out" (the
/// namespace is dropped, as ExecuTorch's codegen does; no overload, no dot).
inline std::string native_call_name(std::string_view op_name, std::string_view overload) {
  const size_t sep = op_name.find("::");
  const std::string_view base = sep == std::string_view::npos ? op_name : op_name.substr(sep + 2);
  std::string out(kNativeCallPrefix);
  out += base;
  if (!overload.empty()) {
    out += '.';
    out += overload;
  }
  return out;
}

/// The class of a profile event from its name and whether a delegate raised it.
constexpr EventClass classify(std::string_view name, bool delegated) {
  if (delegated) return EventClass::kDelegateOp;
  if (is_marker_name(name)) return EventClass::kMarker;
  if (is_framework_name(name)) return EventClass::kFramework;
  if (name == kDelegateCall) return EventClass::kDelegateCall;
  if (is_native_call_name(name)) return EventClass::kNativeCall;
  if (is_operator_call_name(name)) return EventClass::kOperatorCall;
  return EventClass::kOther;
}

/// "framework", "operator", "kernel", "delegate" (calls and their inner events), "other",
/// "marker".
constexpr std::string_view category_name(EventClass c) {
  switch (c) {
    case EventClass::kFramework: return "framework";
    case EventClass::kOperatorCall: return "operator";
    case EventClass::kNativeCall: return "kernel";
    case EventClass::kDelegateCall:
    case EventClass::kDelegateOp: return "delegate";
    case EventClass::kOther: return "other";
    case EventClass::kMarker: return "marker";
  }
  return "other";
}

}  // namespace etscope::events
