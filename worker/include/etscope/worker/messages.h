// The messages between the runner's ExecuTorch engine and its worker process
// (`etscope-executorch`, executorch/): what each carries, and their encoding on the wire.
//
// The runner asks: load a method, set an input, execute, send the outputs, quit. The worker
// answers each request with kOk, kReady, kExecuted, kOutputs or kError; while it loads or
// executes it streams what ExecuTorch's runtime reports to its event tracer (kEvent, kValue),
// which the runner records into its own ETDump writer, so both engines' dumps come from one
// writer. Every decoder validates what it reads (dtypes, ranks, sizes against bytes).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "etscope/core/evalue.h"
#include "etscope/core/scalar_type.h"
#include "etscope/worker/wire.h"

namespace etscope::worker {

enum class MessageType : uint32_t {
  // runner -> worker
  kLoad = 1,
  kSetInput = 2,
  kExecute = 3,
  kGetOutputs = 4,
  kQuit = 5,
  // worker -> runner
  kReady = 100,     ///< LoadReply
  kOk = 101,        ///< (empty) an input was set
  kEvent = 102,     ///< TimedEvent
  kValue = 103,     ///< LoggedValue
  kExecuted = 104,  ///< Executed
  kOutputs = 105,   ///< OutputList
  kError = 106,     ///< a message (string)
};

/// The first argument the worker executable takes: the number of the socket it talks on.
inline constexpr int kWorkerSocketFd = 3;
/// The first of the file descriptors the worker inherits for program and data bytes.
inline constexpr int kWorkerFirstDataFd = 4;

struct LoadRequest {
  std::string method;
  int32_t program_fd = -1;             ///< Sealed memory holding the validated program bytes.
  std::vector<int32_t> data_fds;       ///< The same for each .ptd, in search order.
  uint32_t threads = 1;                ///< ExecuTorch's threadpool size.
  bool trace = false;                  ///< Report events (and values, per debug_level).
  uint8_t debug_level = 0;             ///< etscope::DebugLevel
  std::vector<std::string> operators;  ///< The method's operators, checked before loading.
  std::vector<std::string> backends;   ///< The backends of its delegate calls.
};

struct LoadReply {
  std::string executorch_version;  ///< The version of the library the worker runs.
  uint32_t threads = 1;            ///< The threadpool's size after the request.
  uint32_t num_inputs = 0, num_outputs = 0;
};

/// A tensor's dtype, shape and bytes (dense, row-major).
struct WireTensor {
  ScalarType dtype = ScalarType::kFloat;
  std::vector<int64_t> sizes;
  std::vector<uint8_t> bytes;
};

/// An input, output or logged value: a tensor, a tensor list, a scalar, or none.
struct WireValue {
  Tag tag = Tag::kNone;  ///< kNone, kInt, kDouble, kBool, kTensor or kTensorList.
  int64_t i = 0;
  double d = 0;
  bool b = false;
  std::vector<WireTensor> tensors;  ///< one for kTensor, the items of a kTensorList
};

struct SetInput {
  uint32_t index = 0;
  WireValue value;
};

/// A profile event as the worker's tracer saw it, with steady-clock nanoseconds.
struct TimedEvent {
  bool has_name = true;
  std::string name;
  bool delegate = false;
  int64_t delegate_id = -1;
  int32_t chain = -1;
  uint32_t handle = 0;
  uint64_t start_ns = 0, end_ns = 0;
};

struct LoggedValue {
  WireValue value;
  bool output = false;    ///< a program output (else an intermediate)
  bool delegate = false;  ///< logged inside a delegate, with delegate_id
  int32_t delegate_id = -1;
  int32_t chain = -1;
  uint32_t handle = 0;
};

struct Executed {
  uint64_t elapsed_ns = 0;  ///< Setting the inputs again and executing, as the worker timed it.
};

struct OutputList {
  std::vector<WireValue> values;
};

void encode(WireWriter& w, const LoadRequest& m);
void encode(WireWriter& w, const LoadReply& m);
void encode(WireWriter& w, const WireValue& m);
void encode(WireWriter& w, const SetInput& m);
void encode(WireWriter& w, const TimedEvent& m);
void encode(WireWriter& w, const LoggedValue& m);
void encode(WireWriter& w, const Executed& m);
void encode(WireWriter& w, const OutputList& m);

/// Each decoder reads a whole payload: kCorrupt when it is short, long or inconsistent (an
/// unknown dtype or tag, more than kMaxDims dimensions, a negative size, bytes that do not
/// match the shape).
Status decode(std::span<const uint8_t> payload, LoadRequest& m);
Status decode(std::span<const uint8_t> payload, LoadReply& m);
Status decode(std::span<const uint8_t> payload, SetInput& m);
Status decode(std::span<const uint8_t> payload, TimedEvent& m);
Status decode(std::span<const uint8_t> payload, LoggedValue& m);
Status decode(std::span<const uint8_t> payload, Executed& m);
Status decode(std::span<const uint8_t> payload, OutputList& m);

/// A payload of one string (kError's message).
std::vector<uint8_t> encode_text(std::string_view text);
Result<std::string> decode_text(std::span<const uint8_t> payload);

}  // namespace etscope::worker
