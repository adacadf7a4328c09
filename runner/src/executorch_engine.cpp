// The ExecuTorch engine, runner side: validates with etscope's loader, hands the validated bytes
// to the worker (`etscope-executorch`, executorch/) in sealed memory, and relays what the worker
// streams back (ExecuTorch's events and logged values) into the runner's tracer.
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <deque>
#include <tuple>
#include <unordered_set>

#include "etscope/runner/engine.h"
#include "etscope/worker/messages.h"
#include "etscope/worker/process.h"
#include "worker_path.h"

namespace etscope::runner {
namespace {

using worker::MessageType;

constexpr uint64_t kMaxReply = uint64_t{1} << 36;

/// A file descriptor closed when it goes out of scope.
struct Fd {
  int fd = -1;
  Fd() = default;
  explicit Fd(int f) : fd(f) {}
  Fd(Fd&& o) noexcept : fd(std::exchange(o.fd, -1)) {}
  Fd(const Fd&) = delete;
  ~Fd() {
    if (fd >= 0) close(fd);
  }
};

// Sealed memory holding `bytes`: the worker maps exactly what etscope validated.
Result<Fd> sealed_copy(std::span<const uint8_t> bytes, const char* name) {
  Fd f(memfd_create(name, MFD_CLOEXEC | MFD_ALLOW_SEALING));
  if (f.fd < 0) return Error(ErrorCode::kIo, std::string("cannot create memory for the ExecuTorch engine: ") + std::strerror(errno));
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = write(f.fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return Error(ErrorCode::kIo, std::string("cannot copy the program for the ExecuTorch engine: ") + std::strerror(errno));
    done += static_cast<size_t>(n);
  }
  fcntl(f.fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL);
  return f;
}

/// Where each delegate init the worker reports belongs: for the k-th delegate whose data sits in
/// a segment (ExecuTorch reads them in delegate order), the first instruction that calls it; a
/// delegate no instruction calls has (-1, 0). Empty when any delegate's data is inline: its init
/// reads nothing, so the reads would not tell it from its neighbour's.
std::vector<std::pair<int32_t, uint32_t>> delegate_init_sites(const ExecutionPlan& plan) {
  std::vector<std::pair<int32_t, uint32_t>> sites(plan.delegates.size(), {-1, 0});
  for (const Delegate& d : plan.delegates) {
    if (d.inline_data) return {};
  }
  for (size_t c = plan.chains.size(); c-- > 0;) {
    const auto& instructions = plan.chains[c].instructions;
    for (size_t i = instructions.size(); i-- > 0;) {
      const Instruction& in = instructions[i];
      if (in.kind != InstructionKind::kDelegateCall || in.delegate_index < 0) continue;
      const auto d = static_cast<size_t>(in.delegate_index);
      if (d < sites.size()) sites[d] = {static_cast<int32_t>(c), static_cast<uint32_t>(i)};
    }
  }
  return sites;
}

/// A value received from the worker, owning its bytes, viewed as an EValue.
struct OwnedValue {
  worker::WireValue wire;
  std::vector<TensorImpl> tensors;
  std::vector<TensorImpl*> list;
  EValue value;
};

Status own(worker::WireValue wire, OwnedValue& out) {
  out.wire = std::move(wire);
  out.tensors.resize(out.wire.tensors.size());
  for (size_t k = 0; k < out.wire.tensors.size(); ++k) {
    worker::WireTensor& t = out.wire.tensors[k];
    std::vector<uint8_t> order(t.sizes.size());
    for (size_t d = 0; d < order.size(); ++d) order[d] = static_cast<uint8_t>(d);
    ETSCOPE_TRY(out.tensors[k].init(t.dtype, t.sizes, order, false, t.bytes.size()));
    out.tensors[k].set_data(t.bytes.empty() ? nullptr : t.bytes.data());
  }
  for (TensorImpl& t : out.tensors) out.list.push_back(&t);
  out.value = EValue{};
  out.value.tag = out.wire.tag;
  switch (out.wire.tag) {
    case Tag::kInt: out.value.scalar.i = out.wire.i; break;
    case Tag::kDouble: out.value.scalar.d = out.wire.d; break;
    case Tag::kBool: out.value.scalar.b = out.wire.b; break;
    case Tag::kTensor: out.value.tensor = out.list.at(0); break;
    case Tag::kTensorList: out.value.tensor_list = out.list; break;
    default: break;
  }
  return ok_status();
}

class ExecutorchEngine final : public Engine {
 public:
  ExecutorchEngine(std::unique_ptr<runtime::Method> validated, EventTracer* tracer, std::string where)
      : validated_(std::move(validated)), tracer_(tracer), where_(std::move(where)) {}

  Status start(const Program& program, const std::string& method_name, const ExecutorchEngineOptions& options);

  EngineKind kind() const override { return EngineKind::kExecutorch; }
  size_t num_inputs() const override { return validated_->num_inputs(); }
  size_t num_outputs() const override { return validated_->num_outputs(); }
  const EValue& input(size_t i) const override { return validated_->input(i); }
  const EValue& output(size_t i) const override {
    return i < outputs_.size() ? outputs_[i].value : validated_->output(i);
  }
  Status set_input(size_t i, std::span<const uint8_t> data, std::span<const int64_t> sizes) override;
  Status set_scalar_input(size_t i, const EValue& value) override;
  Result<double> execute(const char* block) override;
  Status sync_outputs() override;
  std::string version() const override { return version_; }
  uint32_t threads() const override { return threads_; }
  runtime::Method* method() override { return validated_.get(); }

 private:
  /// Sends a request; relays events and values until the reply, which is returned (kError
  /// replies become an error naming the program).
  Result<worker::Frame> request(MessageType type, std::span<const uint8_t> payload, const char* what);
  Status relay(const worker::Frame& f);
  const char* intern(const std::string& s) { return names_.insert(s).first->c_str(); }
  Error failed(const Error& e, const char* what) const {
    return Error(e.code(), where_ + ": " + e.message() + " (while " + what + ")");
  }

  std::unique_ptr<runtime::Method> validated_;
  EventTracer* tracer_;
  std::string where_;
  std::unique_ptr<worker::WorkerProcess> worker_;
  std::string version_;
  uint32_t threads_ = 1;
  std::unordered_set<std::string> names_;  // event names the tracer points to (node-based: stable)
  /// The (chain, instruction) of the first call of each delegate the worker's k-th delegate init
  /// event stands for (ExecuTorch inits the delegates in order and reads each one's segment);
  /// empty when a delegate's data is inline (no read splits its init from its neighbours').
  std::vector<std::pair<int32_t, uint32_t>> delegate_init_sites_;
  std::deque<OwnedValue> outputs_;
};

Status ExecutorchEngine::start(const Program& program, const std::string& method_name, const ExecutorchEngineOptions& options) {
  ETSCOPE_ASSIGN_OR_RETURN(Fd program_fd, sealed_copy(program.blob->bytes(), "etscope-program"));
  std::vector<Fd> data;
  std::vector<int> pass{program_fd.fd};
  for (std::span<const uint8_t> bytes : options.external_data) {
    ETSCOPE_ASSIGN_OR_RETURN(Fd f, sealed_copy(bytes, "etscope-ptd"));
    pass.push_back(f.fd);
    data.push_back(std::move(f));
  }
  const std::string path = executorch_worker_path();
  auto spawned = worker::WorkerProcess::spawn(path, {}, pass, "ExecuTorch's runtime");
  if (!spawned.ok()) return Error(ErrorCode::kNotSupported, where_ + ": " + spawned.error().message());
  worker_ = std::move(spawned).value();

  worker::LoadRequest load;
  load.method = method_name;
  load.program_fd = worker::kWorkerFirstDataFd;
  for (size_t k = 0; k < data.size(); ++k) load.data_fds.push_back(worker::kWorkerFirstDataFd + 1 + static_cast<int32_t>(k));
  load.threads = options.threads;
  load.trace = tracer_ != nullptr;
  load.debug_level = static_cast<uint8_t>(tracer_ != nullptr ? tracer_->debug_level() : DebugLevel::kNone);
  const ExecutionPlan& plan = *program.find_plan(method_name);
  delegate_init_sites_ = delegate_init_sites(plan);
  for (const Chain& c : plan.chains) {
    for (const Instruction& in : c.instructions) {
      if (in.kind == InstructionKind::kKernelCall) {
        const std::string op = plan.operators[static_cast<size_t>(in.op_index)].qualified_name();
        if (std::find(load.operators.begin(), load.operators.end(), op) == load.operators.end()) load.operators.push_back(op);
      } else if (in.kind == InstructionKind::kDelegateCall) {
        const std::string& id = plan.delegates[static_cast<size_t>(in.delegate_index)].id;
        if (std::find(load.backends.begin(), load.backends.end(), id) == load.backends.end()) load.backends.push_back(id);
      }
    }
  }
  worker::WireWriter w;
  worker::encode(w, load);
  // ExecuTorch's load events (Program::load_method, Method::init) belong to the load's block.
  if (tracer_ != nullptr) tracer_->create_event_block(events::kBlockDefault.data());
  auto reply = request(MessageType::kLoad, w.bytes(), "loading the method");
  if (!reply.ok()) {
    if (reply.error().message().find(" lacks ") != std::string::npos) {
      return Error(ErrorCode::kNotSupported, reply.error().message() + " (--engine etscope runs it with etscope's own kernels)");
    }
    return reply.error();
  }
  worker::LoadReply ready;
  if (reply->type != static_cast<uint32_t>(MessageType::kReady)) return Error(ErrorCode::kCorrupt, where_ + ": the ExecuTorch worker answered out of turn");
  ETSCOPE_TRY(worker::decode(reply->payload, ready));
  if (ready.num_inputs != validated_->num_inputs() || ready.num_outputs != validated_->num_outputs()) {
    return Error(ErrorCode::kCorrupt, where_ + ": ExecuTorch's runtime sees " + std::to_string(ready.num_inputs) + " inputs and " +
                                          std::to_string(ready.num_outputs) + " outputs, etscope's loader " +
                                          std::to_string(validated_->num_inputs()) + " and " + std::to_string(validated_->num_outputs()));
  }
  version_ = ready.executorch_version;
  threads_ = ready.threads;
  return ok_status();
}

Result<worker::Frame> ExecutorchEngine::request(MessageType type, std::span<const uint8_t> payload, const char* what) {
  (void)worker_->new_output(0);  // what it printed before this request is not this request's
  Status sent = worker_->send(static_cast<uint32_t>(type), payload);
  if (!sent.ok()) return failed(sent.error(), what);
  for (;;) {
    auto f = worker_->receive(kMaxReply);
    if (!f.ok()) return failed(f.error(), what);
    const auto t = static_cast<MessageType>(f->type);
    if (t == MessageType::kEvent || t == MessageType::kValue) {
      Status s = relay(*f);
      if (!s.ok()) return failed(s.error(), what);
      continue;
    }
    if (t == MessageType::kError) {
      auto text = worker::decode_text(f->payload);
      // ExecuTorch logs why before it returns an error code: quote its last error line.
      const std::string said = worker::last_error_line(worker_->new_output(50));
      return Error(ErrorCode::kInvalidArgument, where_ + ": ExecuTorch's runtime: " + (text.ok() ? *text : std::string("an error")) +
                                                    (said.empty() ? "" : " (ExecuTorch: " + said + ")"));
    }
    return f;
  }
}

Status ExecutorchEngine::relay(const worker::Frame& f) {
  if (tracer_ == nullptr) return ok_status();
  if (f.type == static_cast<uint32_t>(MessageType::kEvent)) {
    worker::TimedEvent e;
    ETSCOPE_TRY(worker::decode(f.payload, e));
    if (!e.delegate && e.chain == -1 && e.name == events::kDelegateInit) {
      if (e.handle >= delegate_init_sites_.size()) return ok_status();  // not one delegate's: left out
      std::tie(e.chain, e.handle) = delegate_init_sites_[e.handle];
      e.handle = static_cast<uint32_t>(events::delegate_init_instruction_id(e.handle));
    }
    tracer_->record_timed_event(e.has_name ? intern(e.name) : nullptr, e.chain, e.handle, e.delegate, e.delegate_id, e.start_ns, e.end_ns);
    return ok_status();
  }
  worker::LoggedValue v;
  ETSCOPE_TRY(worker::decode(f.payload, v));
  OwnedValue owned;
  ETSCOPE_TRY(own(std::move(v.value), owned));
  const int32_t chain = tracer_->chain_id();
  const uint32_t handle = tracer_->debug_handle();
  tracer_->set_instruction(v.chain, v.handle);
  if (v.delegate) {
    tracer_->log_delegate_output(owned.value, v.delegate_id);
  } else {
    tracer_->log_evalue(owned.value, v.output);
  }
  tracer_->set_instruction(chain, handle);
  return ok_status();
}

Status ExecutorchEngine::set_input(size_t i, std::span<const uint8_t> data, std::span<const int64_t> sizes) {
  // etscope's checks first (index, dtype, bounds of a dynamic shape, bool bytes), with its words.
  ETSCOPE_TRY(validated_->set_input(i, data, sizes));
  const TensorImpl& t = *validated_->input(i).tensor;
  worker::SetInput m;
  m.index = static_cast<uint32_t>(i);
  m.value.tag = Tag::kTensor;
  worker::WireTensor wt;
  wt.dtype = t.dtype();
  wt.sizes.assign(t.sizes().begin(), t.sizes().end());
  wt.bytes.assign(data.begin(), data.end());
  m.value.tensors.push_back(std::move(wt));
  worker::WireWriter w;
  worker::encode(w, m);
  ETSCOPE_ASSIGN_OR_RETURN(worker::Frame reply, request(MessageType::kSetInput, w.bytes(), "setting an input"));
  (void)reply;
  return ok_status();
}

Status ExecutorchEngine::set_scalar_input(size_t i, const EValue& value) {
  ETSCOPE_TRY(validated_->set_scalar_input(i, value));
  worker::SetInput m;
  m.index = static_cast<uint32_t>(i);
  m.value.tag = value.tag;
  m.value.i = value.tag == Tag::kInt ? value.scalar.i : 0;
  m.value.d = value.tag == Tag::kDouble ? value.scalar.d : 0;
  m.value.b = value.tag == Tag::kBool ? value.scalar.b : false;
  worker::WireWriter w;
  worker::encode(w, m);
  ETSCOPE_ASSIGN_OR_RETURN(worker::Frame reply, request(MessageType::kSetInput, w.bytes(), "setting an input"));
  (void)reply;
  return ok_status();
}

Result<double> ExecutorchEngine::execute(const char* block) {
  if (tracer_ != nullptr) tracer_->create_event_block(block);
  outputs_.clear();
  ETSCOPE_ASSIGN_OR_RETURN(worker::Frame reply, request(MessageType::kExecute, {}, "executing"));
  if (reply.type != static_cast<uint32_t>(MessageType::kExecuted)) {
    return Error(ErrorCode::kCorrupt, where_ + ": the ExecuTorch worker answered out of turn");
  }
  worker::Executed done;
  ETSCOPE_TRY(worker::decode(reply.payload, done));
  return static_cast<double>(done.elapsed_ns) / 1e6;
}

Status ExecutorchEngine::sync_outputs() {
  ETSCOPE_ASSIGN_OR_RETURN(worker::Frame reply, request(MessageType::kGetOutputs, {}, "reading the outputs"));
  if (reply.type != static_cast<uint32_t>(MessageType::kOutputs)) {
    return Error(ErrorCode::kCorrupt, where_ + ": the ExecuTorch worker answered out of turn");
  }
  worker::OutputList list;
  ETSCOPE_TRY(worker::decode(reply.payload, list));
  if (list.values.size() != num_outputs()) {
    return Error(ErrorCode::kCorrupt, where_ + ": ExecuTorch's runtime returned " + std::to_string(list.values.size()) + " outputs");
  }
  outputs_.clear();
  for (worker::WireValue& v : list.values) {
    outputs_.emplace_back();
    ETSCOPE_TRY(own(std::move(v), outputs_.back()));
  }
  return ok_status();
}

}  // namespace

Result<std::unique_ptr<Engine>> load_executorch_engine(const Program& program, const std::string& method_name,
                                                       const runtime::MethodOptions& options,
                                                       const ExecutorchEngineOptions& executorch) {
  ETSCOPE_TRY(engine_available(EngineKind::kExecutorch));
  runtime::MethodOptions check = options;
  check.validate_only = true;
  check.tracer = nullptr;  // the load events recorded are ExecuTorch's own
  ETSCOPE_ASSIGN_OR_RETURN(std::unique_ptr<runtime::Method> validated, runtime::Method::load(program, method_name, check));
  auto engine = std::make_unique<ExecutorchEngine>(std::move(validated), options.tracer,
                                                   program.name() + ": method '" + method_name + "'");
  ETSCOPE_TRY(engine->start(program, method_name, executorch));
  return std::unique_ptr<Engine>(std::move(engine));
}

}  // namespace etscope::runner
