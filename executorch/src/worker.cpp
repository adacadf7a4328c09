// The worker: one method of one program, loaded and executed by ExecuTorch's own runtime (the
// libraries of the user's executorch wheel), driven over a socket by the runner's ExecuTorch
// engine (runner/src/executorch_engine.cpp, worker/include/etscope/worker/messages.h).
//
// The runner validated the program with etscope's loader before sending it: the worker receives
// the validated bytes (sealed memory, never the file again) and loads them with ExecuTorch's
// InternalConsistency verification. ExecuTorch may still end this process on a failed check:
// the runner then reports how it ended and what it printed.
#include "etscope/executorch/worker.h"

#include <dlfcn.h>
#include <executorch/devtools/etdump/etdump_flatcc.h>
#include <executorch/extension/data_loader/buffer_data_loader.h>
#include <executorch/extension/flat_tensor/flat_tensor_data_map.h>
#include <executorch/extension/memory_allocator/malloc_memory_allocator.h>
#include <executorch/extension/named_data_map/merged_data_map.h>
#include <executorch/runtime/backend/interface.h>
#include <executorch/runtime/core/hierarchical_allocator.h>
#include <executorch/runtime/executor/memory_manager.h>
#include <executorch/runtime/executor/method.h>
#include <executorch/runtime/executor/program.h>
#include <executorch/runtime/kernel/operator_registry.h>
#include <executorch/runtime/platform/runtime.h>
#include <openssl/evp.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "etscope/core/event_names.h"
#include "etscope/worker/messages.h"
#include "etscope/worker/wire.h"
#include "streaming_tracer.h"

// The threadpool's header is not part of the wheel; its library exports these (the wheel's
// libexecutorch_threadpool.so). Declared here with the signatures it exports.
namespace executorch::extension::threadpool {
class ThreadPool {
 public:
  bool _unsafe_reset_threadpool(uint32_t num_threads);
  size_t get_thread_count() const;
};
ThreadPool* get_threadpool();
}  // namespace executorch::extension::threadpool

namespace etscope::executorch_engine {
namespace {

namespace et = ::executorch::runtime;
using ::executorch::extension::BufferDataLoader;
using ::executorch::extension::FlatTensorDataMap;
using ::executorch::extension::MallocMemoryAllocator;
using worker::MessageType;

constexpr uint64_t kMaxRequest = uint64_t{1} << 36;

std::string error_name(et::Error e) {
  switch (e) {
    case et::Error::Ok: return "Ok";
    case et::Error::Internal: return "Internal";
    case et::Error::InvalidState: return "InvalidState";
    case et::Error::EndOfMethod: return "EndOfMethod";
    case et::Error::NotSupported: return "NotSupported";
    case et::Error::NotImplemented: return "NotImplemented";
    case et::Error::InvalidArgument: return "InvalidArgument";
    case et::Error::InvalidType: return "InvalidType";
    case et::Error::OperatorMissing: return "OperatorMissing";
    case et::Error::NotFound: return "NotFound";
    case et::Error::MemoryAllocationFailed: return "MemoryAllocationFailed";
    case et::Error::AccessFailed: return "AccessFailed";
    case et::Error::InvalidProgram: return "InvalidProgram";
    case et::Error::InvalidExternalData: return "InvalidExternalData";
    case et::Error::OutOfResources: return "OutOfResources";
    case et::Error::DelegateInvalidCompatibility: return "DelegateInvalidCompatibility";
    case et::Error::DelegateMemoryAllocationFailed: return "DelegateMemoryAllocationFailed";
    case et::Error::DelegateInvalidHandle: return "DelegateInvalidHandle";
    default: break;
  }
  return "error " + std::to_string(static_cast<int>(e));
}

std::string failed(const char* what, et::Error e) { return std::string(what) + " failed: ExecuTorch error " + error_name(e); }

/// Read-only mapping of a sealed memory file the runner handed over.
struct Mapped {
  const void* data = nullptr;
  size_t size = 0;
  Mapped() = default;
  Mapped(const Mapped&) = delete;
  Mapped& operator=(const Mapped&) = delete;
  ~Mapped() {
    if (data != nullptr && size > 0) munmap(const_cast<void*>(data), size);
  }
};

bool map_fd(int fd, Mapped& out) {
  struct stat st {};
  if (fd < worker::kWorkerFirstDataFd || fstat(fd, &st) != 0 || st.st_size <= 0) return false;
  void* p = mmap(nullptr, static_cast<size_t>(st.st_size), PROT_READ, MAP_PRIVATE, fd, 0);
  if (p == MAP_FAILED) return false;
  out.data = p;
  out.size = static_cast<size_t>(st.st_size);
  return true;
}

/// An input kept to be set again before each execution: an ExecuTorch tensor over a working
/// copy of the bytes, refreshed from the pristine ones each time (ExecuTorch points an input
/// that is not memory-planned at the caller's bytes, and a program may write its inputs).
struct KeptInput {
  worker::WireValue value;
  std::vector<uint8_t> working;
  std::vector<::executorch::aten::SizesType> sizes;
  std::vector<::executorch::aten::DimOrderType> dim_order;
  std::vector<::executorch::aten::StridesType> strides;
  std::unique_ptr<::executorch::aten::TensorImpl> impl;
  std::optional<::executorch::aten::Tensor> tensor;

  /// The value to set, its tensor's bytes restored first.
  et::EValue evalue() {
    if (value.tag == Tag::kTensor && !working.empty()) {
      std::memcpy(working.data(), value.tensors[0].bytes.data(), working.size());
    }
    switch (value.tag) {
      case Tag::kTensor: return et::EValue(*tensor);
      case Tag::kInt: return et::EValue(value.i);
      case Tag::kDouble: return et::EValue(value.d);
      case Tag::kBool: return et::EValue(value.b);
      default: return et::EValue();
    }
  }
};

std::unique_ptr<KeptInput> keep(worker::WireValue v) {
  auto k = std::make_unique<KeptInput>();
  k->value = std::move(v);
  if (k->value.tag == Tag::kTensor) {
    worker::WireTensor& t = k->value.tensors.at(0);
    const size_t dim = t.sizes.size();
    for (int64_t s : t.sizes) k->sizes.push_back(static_cast<::executorch::aten::SizesType>(s));
    k->strides.resize(dim);
    int64_t stride = 1;
    for (size_t d = dim; d-- > 0;) {
      k->strides[d] = static_cast<::executorch::aten::StridesType>(stride);
      stride *= t.sizes[d];
    }
    for (size_t d = 0; d < dim; ++d) k->dim_order.push_back(static_cast<::executorch::aten::DimOrderType>(d));
    k->impl = std::make_unique<::executorch::aten::TensorImpl>(
        static_cast<::executorch::aten::ScalarType>(static_cast<int8_t>(t.dtype)), static_cast<ssize_t>(dim), k->sizes.data(),
        nullptr, k->dim_order.data(), k->strides.data(),
        ::executorch::aten::TensorShapeDynamism::DYNAMIC_BOUND);
    k->working = t.bytes;
    k->impl->set_data(k->working.empty() ? nullptr : k->working.data());
    k->tensor.emplace(k->impl.get());
  }
  return k;
}

/// The program's data loader, which notes when ExecuTorch reads a delegate's segment: Method::init
/// reads it right before the backend's init (BackendDelegate::Init), so the reads split the
/// delegates' initialisations apart (core/event_names.h kDelegateInit). Reads cost nothing here
/// (the bytes are mapped already).
class TimingLoader final : public et::DataLoader {
 public:
  TimingLoader(const void* data, size_t size) : inner_(data, size) {}

  et::Result<et::FreeableBuffer> load(size_t offset, size_t size, const SegmentInfo& info) const override {
    if (noting_ && info.segment_type == SegmentInfo::Type::Backend) backend_reads_.push_back(steady_now_ns());
    return inner_.load(offset, size, info);
  }
  et::Error load_into(size_t offset, size_t size, const SegmentInfo& info, void* buffer) const override {
    return inner_.load_into(offset, size, info, buffer);
  }
  et::Result<size_t> size() const override { return inner_.size(); }

  /// Notes the delegates' reads from now on (clearing earlier ones), until stop().
  void start() {
    backend_reads_.clear();
    noting_ = true;
  }
  void stop() { noting_ = false; }
  const std::vector<uint64_t>& backend_reads() const { return backend_reads_; }

  static uint64_t steady_now_ns() {
    return static_cast<uint64_t>(
        std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch()).count());
  }

 private:
  BufferDataLoader inner_;
  bool noting_ = false;
  mutable std::vector<uint64_t> backend_reads_;
};

class Session {
 public:
  explicit Session(int socket) : socket_(socket) {}
  int serve();

 private:
  Status send(MessageType type, std::span<const uint8_t> payload) {
    return worker::write_frame(socket_, static_cast<uint32_t>(type), payload, "the runner");
  }
  Status send_error(const std::string& message) { return send(MessageType::kError, worker::encode_text(message)); }
  /// Sends what the tracer recorded since the last flush.
  Status flush_events() {
    for (auto& [type, payload] : tracer_.take()) ETSCOPE_TRY(send(type, payload));
    return ok_status();
  }
  std::string load(const worker::LoadRequest& request, worker::LoadReply& reply);
  std::string set_input(worker::SetInput request);
  std::string execute(uint64_t& elapsed_ns);
  std::string outputs(worker::OutputList& out);

  int socket_;
  StreamingTracer tracer_;
  bool trace_ = false;
  Mapped program_bytes_;
  std::vector<std::unique_ptr<Mapped>> data_bytes_;
  std::unique_ptr<TimingLoader> program_loader_;
  std::vector<std::unique_ptr<BufferDataLoader>> data_loaders_;
  std::optional<et::Program> program_;
  std::vector<FlatTensorDataMap> data_maps_;
  std::vector<const et::NamedDataMap*> data_map_ptrs_;
  std::optional<::executorch::extension::merged_data_map::MergedDataMap> merged_;
  std::vector<std::vector<uint8_t>> planned_;
  std::vector<et::Span<uint8_t>> planned_spans_;
  std::unique_ptr<et::HierarchicalAllocator> planned_allocator_;
  MallocMemoryAllocator method_allocator_;
  MallocMemoryAllocator temp_allocator_;
  std::unique_ptr<et::MemoryManager> memory_;
  std::optional<et::Method> method_;
  std::vector<std::unique_ptr<KeptInput>> inputs_;
};

std::string Session::load(const worker::LoadRequest& request, worker::LoadReply& reply) {
  if (method_) return "a method is loaded already";
  // What ExecuTorch's libraries lack, named all at once before anything is loaded.
  std::string missing_kernels, missing_backends;
  for (const std::string& op : request.operators) {
    if (!et::registry_has_op_function(op.c_str())) missing_kernels += (missing_kernels.empty() ? "" : ", ") + op;
  }
  for (const std::string& b : request.backends) {
    if (et::get_backend_class(b.c_str()) == nullptr) missing_backends += (missing_backends.empty() ? "" : ", ") + b;
  }
  if (!missing_kernels.empty() || !missing_backends.empty()) {
    std::string text = "ExecuTorch's runtime (the executorch wheel's kernels_optimized, kernels_quantized and XNNPACK libraries) lacks ";
    if (!missing_kernels.empty()) text += "kernels " + missing_kernels;
    if (!missing_backends.empty()) text += std::string(missing_kernels.empty() ? "" : " and ") + "backends " + missing_backends;
    return text;
  }
  auto* pool = ::executorch::extension::threadpool::get_threadpool();
  if (pool != nullptr && request.threads > 0 && pool->get_thread_count() != request.threads) {
    if (!pool->_unsafe_reset_threadpool(request.threads)) return "cannot set ExecuTorch's threadpool to " + std::to_string(request.threads) + " threads";
  }
  reply.threads = pool != nullptr ? static_cast<uint32_t>(pool->get_thread_count()) : 1;

  if (!map_fd(request.program_fd, program_bytes_)) return "cannot map the program's bytes";
  program_loader_ = std::make_unique<TimingLoader>(program_bytes_.data, program_bytes_.size);
  for (int32_t fd : request.data_fds) {
    auto m = std::make_unique<Mapped>();
    if (!map_fd(fd, *m)) return "cannot map a .ptd's bytes";
    data_loaders_.push_back(std::make_unique<BufferDataLoader>(m->data, m->size));
    data_bytes_.push_back(std::move(m));
  }
  trace_ = request.trace;
  tracer_.set_event_tracer_debug_level(static_cast<et::EventTracerDebugLogLevel>(request.debug_level));
  et::EventTracer* tracer = trace_ ? &tracer_ : nullptr;

  auto program = et::Program::load(program_loader_.get(), et::Program::Verification::InternalConsistency);
  if (!program.ok()) return failed("Program::load", program.error());
  program_.emplace(std::move(program.get()));
  for (auto& loader : data_loaders_) {
    auto map = FlatTensorDataMap::load(loader.get());
    if (!map.ok()) return failed("FlatTensorDataMap::load (a .ptd)", map.error());
    data_maps_.push_back(std::move(map.get()));
  }
  for (const auto& m : data_maps_) data_map_ptrs_.push_back(&m);
  const et::NamedDataMap* named = nullptr;
  if (data_map_ptrs_.size() == 1) named = data_map_ptrs_[0];
  if (data_map_ptrs_.size() > 1) {
    auto merged = ::executorch::extension::merged_data_map::MergedDataMap::load(
        et::Span<const et::NamedDataMap*>(data_map_ptrs_.data(), data_map_ptrs_.size()));
    if (!merged.ok()) return failed("merging the .ptd files", merged.error());
    merged_.emplace(std::move(merged.get()));
    named = &*merged_;
  }
  auto meta = program_->method_meta(request.method.c_str());
  if (!meta.ok()) return failed(("method_meta('" + request.method + "')").c_str(), meta.error());
  for (size_t i = 0; i < meta->num_memory_planned_buffers(); ++i) {
    auto size = meta->memory_planned_buffer_size(i);
    if (!size.ok()) return failed("memory_planned_buffer_size", size.error());
    planned_.emplace_back(static_cast<size_t>(size.get()), 0);
  }
  for (auto& b : planned_) planned_spans_.emplace_back(b.data(), b.size());
  planned_allocator_ = std::make_unique<et::HierarchicalAllocator>(et::Span<et::Span<uint8_t>>(planned_spans_.data(), planned_spans_.size()));
  memory_ = std::make_unique<et::MemoryManager>(&method_allocator_, planned_allocator_.get(), &temp_allocator_);
  program_loader_->start();
  auto method = program_->load_method(request.method.c_str(), memory_.get(), tracer, named);
  program_loader_->stop();
  if (!method.ok()) return failed(("Program::load_method('" + request.method + "')").c_str(), method.error());
  method_.emplace(std::move(method.get()));
  if (trace_) {
    // Each delegate's init, from the read of its segment to the next delegate's read (the last
    // to the end of Method::init), as the k-th such event: the runner knows which delegate and
    // instruction that is.
    const std::vector<uint64_t>& reads = program_loader_->backend_reads();
    const uint64_t init_end = tracer_.method_init_end_ns();
    for (size_t k = 0; k < reads.size() && init_end != 0; ++k) {
      worker::TimedEvent e;
      e.name = std::string(events::kDelegateInit);
      e.chain = -1;
      e.handle = static_cast<uint32_t>(k);
      e.start_ns = reads[k];
      e.end_ns = std::max(reads[k], k + 1 < reads.size() ? reads[k + 1] : init_end);
      tracer_.record(e);
    }
  }
  reply.num_inputs = static_cast<uint32_t>(method_->inputs_size());
  reply.num_outputs = static_cast<uint32_t>(method_->outputs_size());
  reply.executorch_version = ETSCOPE_EXECUTORCH_VERSION;
  inputs_.resize(method_->inputs_size());
  return {};
}

std::string Session::set_input(worker::SetInput request) {
  if (!method_) return "no method is loaded";
  if (request.index >= method_->inputs_size()) return "input " + std::to_string(request.index) + " is out of range";
  std::unique_ptr<KeptInput> k = keep(std::move(request.value));
  const et::Error e = method_->set_input(k->evalue(), request.index);
  if (e != et::Error::Ok) return "input " + std::to_string(request.index) + ": " + failed("Method::set_input", e);
  inputs_[request.index] = std::move(k);
  return {};
}

std::string Session::execute(uint64_t& elapsed_ns) {
  if (!method_) return "no method is loaded";
  for (size_t i = 0; i < inputs_.size(); ++i) {
    if (!inputs_[i]) return "input " + std::to_string(i) + " has not been set";
  }
  tracer_.take();  // nothing recorded between executions belongs to this one
  // As the etscope engine times it: the inputs set again (the plan may reuse their memory), then
  // the execution.
  const auto t0 = std::chrono::steady_clock::now();
  for (size_t i = 0; i < inputs_.size(); ++i) {
    const et::Error e = method_->set_input(inputs_[i]->evalue(), i);
    if (e != et::Error::Ok) return "input " + std::to_string(i) + ": " + failed("Method::set_input", e);
  }
  const et::Error e = method_->execute();
  const auto t1 = std::chrono::steady_clock::now();
  if (e != et::Error::Ok) return failed("Method::execute", e);
  elapsed_ns = static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(t1 - t0).count());
  return {};
}

std::string Session::outputs(worker::OutputList& out) {
  if (!method_) return "no method is loaded";
  for (size_t i = 0; i < method_->outputs_size(); ++i) out.values.push_back(to_wire(method_->get_output(i)));
  return {};
}

int Session::serve() {
  for (;;) {
    Result<worker::Frame> frame = worker::read_frame(socket_, kMaxRequest, "the runner");
    if (!frame.ok()) return 0;  // the runner closed its end: done
    const auto type = static_cast<MessageType>(frame->type);
    Status sent = ok_status();
    switch (type) {
      case MessageType::kLoad: {
        worker::LoadRequest request;
        worker::LoadReply reply;
        Status s = worker::decode(frame->payload, request);
        std::string err = s.ok() ? load(request, reply) : s.error().message();
        if (!flush_events().ok()) return 1;
        if (!err.empty()) {
          sent = send_error(err);
        } else {
          worker::WireWriter w;
          worker::encode(w, reply);
          sent = send(MessageType::kReady, w.bytes());
        }
        break;
      }
      case MessageType::kSetInput: {
        worker::SetInput request;
        Status s = worker::decode(frame->payload, request);
        const std::string err = s.ok() ? set_input(std::move(request)) : s.error().message();
        sent = err.empty() ? send(MessageType::kOk, {}) : send_error(err);
        break;
      }
      case MessageType::kExecute: {
        worker::Executed done;
        const std::string err = execute(done.elapsed_ns);
        if (!flush_events().ok()) return 1;
        if (!err.empty()) {
          sent = send_error(err);
        } else {
          worker::WireWriter w;
          worker::encode(w, done);
          sent = send(MessageType::kExecuted, w.bytes());
        }
        break;
      }
      case MessageType::kGetOutputs: {
        worker::OutputList out;
        const std::string err = outputs(out);
        if (!err.empty()) {
          sent = send_error(err);
        } else {
          worker::WireWriter w;
          worker::encode(w, out);
          sent = send(MessageType::kOutputs, w.bytes());
        }
        break;
      }
      case MessageType::kQuit: return 0;
      default: sent = send_error("unknown request " + std::to_string(frame->type)); break;
    }
    if (!sent.ok()) return 1;
  }
}

// SHA-256 of a file, as hex; empty when it cannot be read.
std::string sha256_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return {};
  std::ostringstream ss;
  ss << f.rdbuf();
  const std::string bytes = ss.str();
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  if (EVP_Digest(bytes.data(), bytes.size(), digest, &len, EVP_sha256(), nullptr) != 1) return {};
  static const char* hex = "0123456789abcdef";
  std::string out;
  for (unsigned int i = 0; i < len; ++i) {
    out += hex[digest[i] >> 4];
    out += hex[digest[i] & 15];
  }
  return out;
}

// `__version__ = "..."` of the wheel's version.py beside the library's folder, if there is one.
std::string wheel_version_near(const std::string& library) {
  const size_t slash = library.rfind('/');
  if (slash == std::string::npos) return {};
  std::ifstream f(library.substr(0, slash) + "/../version.py");
  std::string line;
  while (std::getline(f, line)) {
    const size_t q = line.find('"');
    if (line.rfind("__version__", 0) == 0 && q != std::string::npos) {
      const size_t e = line.find('"', q + 1);
      if (e != std::string::npos) return line.substr(q + 1, e - q - 1);
    }
  }
  return {};
}

/// One loaded method for the tracer benchmark, with zero-filled inputs.
struct BenchMethod {
  std::unique_ptr<BufferDataLoader> loader;
  std::optional<et::Program> program;
  std::vector<std::vector<uint8_t>> planned;
  std::vector<et::Span<uint8_t>> spans;
  std::unique_ptr<et::HierarchicalAllocator> planned_allocator;
  MallocMemoryAllocator method_allocator, temp_allocator;
  std::unique_ptr<et::MemoryManager> memory;
  std::optional<et::Method> method;
  std::vector<std::unique_ptr<KeptInput>> inputs;

  std::string load(const std::vector<uint8_t>& bytes, et::EventTracer* tracer) {
    loader = std::make_unique<BufferDataLoader>(bytes.data(), bytes.size());
    auto p = et::Program::load(loader.get(), et::Program::Verification::InternalConsistency);
    if (!p.ok()) return failed("Program::load", p.error());
    program.emplace(std::move(p.get()));
    const char* name = "forward";
    auto meta = program->method_meta(name);
    if (!meta.ok()) return failed("method_meta('forward')", meta.error());
    for (size_t i = 0; i < meta->num_memory_planned_buffers(); ++i) planned.emplace_back(static_cast<size_t>(meta->memory_planned_buffer_size(i).get()), 0);
    for (auto& b : planned) spans.emplace_back(b.data(), b.size());
    planned_allocator = std::make_unique<et::HierarchicalAllocator>(et::Span<et::Span<uint8_t>>(spans.data(), spans.size()));
    memory = std::make_unique<et::MemoryManager>(&method_allocator, planned_allocator.get(), &temp_allocator);
    auto m = program->load_method(name, memory.get(), tracer);
    if (!m.ok()) return failed("load_method", m.error());
    method.emplace(std::move(m.get()));
    for (size_t i = 0; i < meta->num_inputs(); ++i) {
      auto info = meta->input_tensor_meta(i);
      if (!info.ok()) return "input " + std::to_string(i) + " is not a tensor";
      worker::WireValue v;
      v.tag = Tag::kTensor;
      worker::WireTensor t;
      t.dtype = static_cast<ScalarType>(static_cast<int8_t>(info->scalar_type()));
      for (auto d : info->sizes()) t.sizes.push_back(d);
      t.bytes.assign(info->nbytes(), 0);
      v.tensors.push_back(std::move(t));
      inputs.push_back(keep(std::move(v)));
    }
    return {};
  }
  /// Wall nanoseconds of setting the inputs and executing once.
  uint64_t run() {
    const auto t0 = std::chrono::steady_clock::now();
    for (size_t i = 0; i < inputs.size(); ++i) (void)method->set_input(inputs[i]->evalue(), i);
    (void)method->execute();
    return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - t0).count());
  }
};

uint64_t median(std::vector<uint64_t> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

}  // namespace

int bench_tracers(const std::string& pte, int iterations, int rounds) {
  et::runtime_init();
  std::ifstream f(pte, std::ios::binary);
  const std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  if (bytes.empty()) {
    std::fprintf(stderr, "%s: cannot read\n", pte.c_str());
    return 1;
  }
  auto* pool = ::executorch::extension::threadpool::get_threadpool();
  if (pool != nullptr) pool->_unsafe_reset_threadpool(1);
  StreamingTracer streaming;
  ::executorch::etdump::ETDumpGen etdumpgen;
  BenchMethod plain, streamed, dumped;
  for (auto [m, tracer] : {std::pair<BenchMethod*, et::EventTracer*>{&plain, nullptr}, {&streamed, &streaming}, {&dumped, &etdumpgen}}) {
    const std::string err = m->load(bytes, tracer);
    if (!err.empty()) {
      std::fprintf(stderr, "%s: %s\n", pte.c_str(), err.c_str());
      return 1;
    }
  }
  (void)streaming.take();
  std::vector<uint64_t> none_ns, streaming_ns, etdumpgen_ns;
  size_t messages = 0, wire_bytes = 0;
  const size_t dump_start = etdumpgen.get_etdump_data().size;
  for (int r = 0; r < rounds; ++r) {
    for (int i = 0; i < iterations; ++i) none_ns.push_back(plain.run());
    for (int i = 0; i < iterations; ++i) {
      streaming_ns.push_back(streamed.run());
      for (auto& [type, payload] : streaming.take()) {
        ++messages;
        wire_bytes += payload.size() + 12;
      }
    }
    for (int i = 0; i < iterations; ++i) {
      etdumpgen.create_event_block("Execute");
      etdumpgen_ns.push_back(dumped.run());
    }
  }
  const auto dump = etdumpgen.get_etdump_data();
  const double executions = static_cast<double>(iterations) * rounds;
  std::printf("{\"program\": \"%s\", \"executions\": %d, \"none_ns\": %llu, \"etscope_tracer_ns\": %llu, \"etdumpgen_ns\": %llu, "
              "\"events_per_execution\": %.1f, \"etscope_wire_bytes_per_execution\": %.1f, \"etdumpgen_bytes_per_execution\": %.1f}\n",
              pte.c_str(), iterations * rounds, static_cast<unsigned long long>(median(none_ns)),
              static_cast<unsigned long long>(median(streaming_ns)), static_cast<unsigned long long>(median(etdumpgen_ns)),
              static_cast<double>(messages) / executions, static_cast<double>(wire_bytes) / executions,
              static_cast<double>(dump.size > dump_start ? dump.size - dump_start : dump.size) / executions);
  if (dump.buf != nullptr) free(dump.buf);
  return 0;
}

std::string check_library() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&et::get_backend_class), &info) == 0 || info.dli_fname == nullptr) {
    return "cannot tell which ExecuTorch runtime library is loaded";
  }
  const std::string path = info.dli_fname;
  const std::string digest = sha256_file(path);
  if (digest == ETSCOPE_EXECUTORCH_LIBRARY_SHA256) return {};
  const std::string found = wheel_version_near(path);
  return "ExecuTorch's runtime library " + path + (found.empty() ? "" : " (executorch " + found + ")") +
         " is not the one etscope was built with (executorch " ETSCOPE_EXECUTORCH_VERSION
         "): rebuild etscope against it (scripts/dev.sh setup, then build)";
}

int run_worker(int socket_fd) {
  et::runtime_init();
  const std::string problem = check_library();
  if (!problem.empty()) {
    std::fprintf(stderr, "E %s\n", problem.c_str());
    std::fflush(stderr);
    return 3;
  }
  Session session(socket_fd);
  return session.serve();
}

}  // namespace etscope::executorch_engine
