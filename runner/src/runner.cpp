#include "etscope/runner/runner.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <map>
#include <new>
#include <random>

#include "etscope/core/event_names.h"
#include "etscope/etdump/etdump_writer.h"
#include "etscope/etrecord/etrecord_reader.h"
#include "etscope/formats/blob.h"
#include "etscope/formats/bpte_reader.h"
#include "etscope/formats/file_kind.h"
#include "etscope/formats/ptd_reader.h"
#include "etscope/formats/npy.h"
#include "etscope/formats/pte_reader.h"
#include "etscope/core/stats.h"
#include "etscope/core/text.h"
#include "etscope/runtime/bundled.h"
#include "etscope/runner/engine.h"

namespace etscope::runner {

using runtime::CaseCheck;
using runtime::load_bundled_inputs;
using runtime::Method;
using runtime::MethodOptions;
using runtime::verify_bundled_outputs;
namespace {

using Clock = std::chrono::steady_clock;

double ms_between(Clock::time_point a, Clock::time_point b) { return std::chrono::duration<double, std::milli>(b - a).count(); }

bool is_floating(ScalarType t) { return t == ScalarType::kFloat || t == ScalarType::kDouble; }

// Stores `v` as element i of a buffer of dtype t (the dtypes random and ones inputs fill).
void store(ScalarType t, uint8_t* p, uint64_t i, double v) {
  switch (t) {
    case ScalarType::kFloat: { const float f = static_cast<float>(v); std::memcpy(p + i * 4, &f, 4); break; }
    case ScalarType::kDouble: std::memcpy(p + i * 8, &v, 8); break;
    case ScalarType::kLong: { const int64_t x = static_cast<int64_t>(v); std::memcpy(p + i * 8, &x, 8); break; }
    case ScalarType::kInt: { const int32_t x = static_cast<int32_t>(v); std::memcpy(p + i * 4, &x, 4); break; }
    case ScalarType::kShort: { const int16_t x = static_cast<int16_t>(v); std::memcpy(p + i * 2, &x, 2); break; }
    case ScalarType::kChar: p[i] = static_cast<uint8_t>(static_cast<int8_t>(v)); break;
    case ScalarType::kByte:
    case ScalarType::kBool: p[i] = static_cast<uint8_t>(v != 0.0); break;
    default: break;  // other dtypes stay zero
  }
}

// An engine as the target of bundled test cases.
class EngineCases final : public runtime::CaseTarget {
 public:
  EngineCases(Engine& e, std::string method) : e_(e), method_(std::move(method)) {}
  size_t case_inputs() const override { return e_.num_inputs(); }
  const EValue& case_input(size_t i) const override { return e_.input(i); }
  Status set_case_tensor(size_t i, std::span<const uint8_t> data, std::span<const int64_t> sizes) override {
    return e_.set_input(i, data, sizes);
  }
  Status set_case_scalar(size_t i, const EValue& value) override { return e_.set_scalar_input(i, value); }
  const std::string& case_method() const override { return method_; }

 private:
  Engine& e_;
  std::string method_;
};

}  // namespace

struct Runner::Impl {
  RunnerOptions options;
  std::unique_ptr<Program> program_owned;
  std::unique_ptr<BundledProgram> bundled;
  std::vector<std::unique_ptr<TensorDataFile>> ptds;
  std::unique_ptr<etdump::EtDumpWriter> writer;
  std::vector<uint8_t> debug_buffer;
  bool debug_buffer_ready = false;
  double debug_setup_ms = 0;
  std::string record_inputs_source;  // set_inputs_from_record
  std::string method_name;
  std::unique_ptr<Engine> engine;
  double load_ms = 0;

  const Program& program() const { return bundled ? bundled->program : *program_owned; }
  // A buffer or event capacity that ran out while recording, named after the files written.
  Status capacity_status(const std::string& etdump_path, const std::string& debug_buffer_path) const {
    if (writer->debug_buffer_overflowed()) {
      return Error(ErrorCode::kOutOfResources,
                   debug_buffer_path + ": the " + bytes_text(options.debug_buffer_bytes) + " debug buffer ran out: " +
                       std::to_string(writer->values_dropped()) +
                       " logged values were not recorded (counted in the ETDump); raise --debug-buffer-size");
    }
    if (writer->events_overflowed()) {
      std::string what;
      if (writer->events_dropped() > 0) what = std::to_string(writer->events_dropped()) + " events";
      if (writer->blocks_dropped() > 0) {
        what += (what.empty() ? "" : " and ") + std::to_string(writer->blocks_dropped()) + " executions";
      }
      return Error(ErrorCode::kOutOfResources,
                   etdump_path + ": the ETDump writer's capacity ran out: " + what + " were not recorded (counted in the ETDump)");
    }
    return ok_status();
  }
  std::string where() const { return options.model + ": method '" + method_name + "'"; }
  MethodOptions method_options() const {
    MethodOptions m;
    for (const auto& f : ptds) m.external_data.push_back(f.get());
    m.tracer = writer.get();
    m.max_memory = options.max_memory;
    m.emulate_quantization = options.emulate_quantization;
    if (options.engine == EngineKind::kEtscope) m.threads = options.threads;
    m.matrix_tiles = options.matrix_tiles;
    return m;
  }
  const BundledTestSuite* suite(const std::string& method) const {
    if (!bundled) return nullptr;
    for (const auto& s : bundled->suites) {
      if (s.method_name == method) return &s;
    }
    return nullptr;
  }
  // Sets tensor input i from bytes (shape `sizes`); the engine keeps them for later executions.
  Status set_tensor(size_t i, const std::vector<uint8_t>& bytes, const std::vector<int64_t>& sizes) {
    return engine->set_input(i, bytes, sizes);
  }
  Result<std::unique_ptr<Engine>> load_engine(const std::string& method) const {
    switch (options.engine) {
      case EngineKind::kEtscope: return load_etscope_engine(program(), method, method_options());
      case EngineKind::kExecutorch: {
        ExecutorchEngineOptions e;
        e.threads = options.threads;
        for (const auto& f : ptds) e.external_data.push_back(f->blob->bytes());
        return load_executorch_engine(program(), method, method_options(), e);
      }
    }
    return Error(ErrorCode::kInternal, "unknown engine");
  }
  // Scalar inputs must equal the exported value: pass that value back.
  Status set_scalars() {
    for (size_t i = 0; i < engine->num_inputs(); ++i) {
      const EValue& slot = engine->input(i);
      if (slot.tag != Tag::kTensor) ETSCOPE_TRY(engine->set_scalar_input(i, slot));
    }
    return ok_status();
  }
  Status fill_inputs(const std::function<double(const TensorImpl&)>& value) {
    ETSCOPE_TRY(set_scalars());
    for (size_t i = 0; i < engine->num_inputs(); ++i) {
      const EValue& slot = engine->input(i);
      if (slot.tag != Tag::kTensor) continue;
      const TensorImpl& t = *slot.tensor;
      std::vector<uint8_t> bytes(t.nbytes(), 0);
      const uint64_t n = static_cast<uint64_t>(t.numel());
      for (uint64_t k = 0; k < n; ++k) store(t.dtype(), bytes.data(), k, value(t));
      ETSCOPE_TRY(set_tensor(i, bytes, std::vector<int64_t>(t.sizes().begin(), t.sizes().end())));
    }
    return ok_status();
  }
};

Runner::Runner(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Runner::~Runner() = default;

Result<std::unique_ptr<Runner>> Runner::load(const RunnerOptions& options) {
  const auto t0 = Clock::now();
  auto impl = std::make_unique<Impl>();
  impl->options = options;
  ETSCOPE_ASSIGN_OR_RETURN(auto blob, Blob::open_file(options.model));
  if (sniff_file_kind(blob->bytes()) == FileKind::kBundledProgram) {
    ETSCOPE_ASSIGN_OR_RETURN(BundledProgram b, BpteReader::read(blob));
    impl->bundled = std::make_unique<BundledProgram>(std::move(b));
  } else {
    ETSCOPE_ASSIGN_OR_RETURN(Program p, PteReader::read(blob));
    impl->program_owned = std::make_unique<Program>(std::move(p));
  }
  for (const std::string& path : options.ptd_files) {
    ETSCOPE_ASSIGN_OR_RETURN(TensorDataFile f, PtdReader::open(path));
    impl->ptds.push_back(std::make_unique<TensorDataFile>(std::move(f)));
  }
  const Program& program = impl->program();
  impl->method_name = options.method;
  if (impl->method_name.empty()) {
    impl->method_name = program.find_plan("forward") ? "forward" : (program.plans.empty() ? "" : program.plans[0].name);
  }
  if (options.trace) {
    // The debug buffer is set up apart (reserve_debug_buffer), out of the load time.
    etdump::EtDumpWriterOptions w;
    impl->writer = std::make_unique<etdump::EtDumpWriter>(w);
    impl->writer->set_debug_level(options.debug_level);
  }
  ETSCOPE_ASSIGN_OR_RETURN(impl->engine, impl->load_engine(impl->method_name));
  // The dump says which engine made its timings (the engine opened the "Default" block).
  if (impl->writer) {
    impl->writer->record_marker(events::engine_marker_name(engine_name(impl->engine->kind()), impl->engine->version()));
  }
  impl->load_ms = ms_between(t0, Clock::now());
  return std::unique_ptr<Runner>(new Runner(std::move(impl)));
}

const Program& Runner::program() const { return impl_->program(); }
const BundledProgram* Runner::bundled() const { return impl_->bundled.get(); }
const std::string& Runner::method_name() const { return impl_->method_name; }
EngineKind Runner::engine() const { return impl_->engine->kind(); }
std::string Runner::engine_version() const { return impl_->engine->version(); }
uint32_t Runner::engine_threads() const { return impl_->engine->threads(); }
Method& Runner::method() { return *impl_->engine->method(); }
const Method& Runner::method() const { return *impl_->engine->method(); }
double Runner::load_ms() const { return impl_->load_ms; }
uint64_t Runner::debug_buffer_bytes() const { return impl_->debug_buffer.size(); }
double Runner::debug_setup_ms() const { return impl_->debug_setup_ms; }

Status Runner::reserve_debug_buffer(uint64_t bytes) {
  Impl& m = *impl_;
  if (!m.writer || m.options.debug_level == DebugLevel::kNone) {
    return Error(ErrorCode::kInvalidArgument, m.options.model + ": a debug buffer needs a trace with a debug level");
  }
  const auto t0 = Clock::now();
  const std::string size = bytes_text(bytes);
  if (m.options.max_memory != 0 && bytes > m.options.max_memory) {
    return Error(ErrorCode::kOutOfResources, m.options.model + ": the debug buffer (" + size + ") is larger than the memory limit (" +
                                                 bytes_text(m.options.max_memory) + ")");
  }
  std::vector<uint8_t> buffer;
  try {
    buffer.assign(static_cast<size_t>(bytes), 0);
  } catch (const std::bad_alloc&) {
    return Error(ErrorCode::kOutOfResources, m.options.model + ": cannot allocate a debug buffer of " + size);
  } catch (const std::length_error&) {
    return Error(ErrorCode::kOutOfResources, m.options.model + ": cannot allocate a debug buffer of " + size);
  }
  if (!m.writer->set_debug_buffer(buffer)) {
    return Error(ErrorCode::kInvalidArgument, m.options.model + ": the debug buffer already holds logged tensors");
  }
  // The vector's storage moves with it, so the span the writer holds stays valid.
  m.debug_buffer = std::move(buffer);
  m.options.debug_buffer_bytes = bytes;
  m.debug_buffer_ready = true;
  m.debug_setup_ms = ms_between(t0, Clock::now());
  return ok_status();
}
EventTracer* Runner::tracer() { return impl_->writer.get(); }

namespace {

// A float32 array whose every value is a bfloat16 value, as bfloat16 (the upper 16 bits).
Result<NpyArray> narrow_to_bfloat16(NpyArray a, const std::string& path) {
  const size_t n = a.data.size() / 4;
  std::vector<uint8_t> out(n * 2);
  for (size_t k = 0; k < n; ++k) {
    uint32_t bits;
    std::memcpy(&bits, a.data.data() + 4 * k, 4);
    if ((bits & 0xffffu) != 0) {
      float v;
      std::memcpy(&v, &bits, 4);
      return make_error(ErrorCode::kInvalidArgument,
                        "%s: element %zu (%.9g) is no bfloat16 value, and the input is bfloat16 (.npy has no bfloat16 type: "
                        "give float32 values that bfloat16 holds exactly, or raw bfloat16 bytes)",
                        path.c_str(), k, static_cast<double>(v));
    }
    const uint16_t half = static_cast<uint16_t>(bits >> 16);
    std::memcpy(out.data() + 2 * k, &half, 2);
  }
  a.data = std::move(out);
  a.dtype = ScalarType::kBFloat16;
  return a;
}

}  // namespace

Status Runner::set_inputs_from_files(const std::vector<std::string>& paths) {
  Impl& m = *impl_;
  if (paths.size() != m.engine->num_inputs()) {
    return make_error(ErrorCode::kInvalidArgument, "%s takes %zu inputs, %zu input files given", m.where().c_str(),
                      m.engine->num_inputs(), paths.size());
  }
  ETSCOPE_TRY(m.set_scalars());
  for (size_t i = 0; i < paths.size(); ++i) {
    const EValue& slot = m.engine->input(i);
    if (slot.tag != Tag::kTensor) continue;
    const TensorImpl& t = *slot.tensor;
    const std::vector<int64_t> planned(t.sizes().begin(), t.sizes().end());
    const std::string& path = paths[i];
    ETSCOPE_ASSIGN_OR_RETURN(auto raw, read_file_bytes(path));
    std::vector<uint8_t> bytes;
    std::vector<int64_t> sizes = planned;
    if (raw.size() >= 6 && raw[0] == 0x93 && raw[1] == 'N') {
      ETSCOPE_ASSIGN_OR_RETURN(NpyArray a, parse_npy(raw, path));
      if (a.dtype == ScalarType::kFloat && t.dtype() == ScalarType::kBFloat16) {
        // .npy has no bfloat16: float32 values bfloat16 holds exactly (as write_outputs writes
        // them) are taken, anything else would be rounded silently and is refused.
        ETSCOPE_ASSIGN_OR_RETURN(a, narrow_to_bfloat16(std::move(a), path));
      }
      if (a.dtype != t.dtype()) {
        return Error(ErrorCode::kInvalidArgument, path + ": " + shape_text(a.dtype, a.shape) + ", but input " + std::to_string(i) +
                                                      " is " + shape_text(t.dtype(), planned));
      }
      bytes = std::move(a.data);
      sizes = std::move(a.shape);
    } else {
      bytes = std::move(raw);
      if (bytes.size() != t.nbytes()) {
        return make_error(ErrorCode::kInvalidArgument, "%s: %zu raw bytes, input %zu (%s) needs %zu", path.c_str(), bytes.size(), i,
                          shape_text(t.dtype(), planned).c_str(), t.nbytes());
      }
    }
    const bool reshaped = sizes != planned;
    Status s = m.set_tensor(i, bytes, sizes);
    if (!s.ok() && reshaped) {
      return Error(s.error().code(), path + ": " + shape_text(t.dtype(), sizes) + " does not fit input " + std::to_string(i) + " (" +
                                         shape_text(t.dtype(), planned) + "): " + s.error().message());
    }
    if (!s.ok()) return s.error().with_context(path);
  }
  return ok_status();
}

Status Runner::set_random_inputs(uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> uniform(-1.0, 1.0);
  return impl_->fill_inputs([&](const TensorImpl& t) { return is_floating(t.dtype()) ? uniform(rng) : static_cast<double>(rng() & 1); });
}

Status Runner::set_ones_inputs() {
  return impl_->fill_inputs([](const TensorImpl&) { return 1.0; });
}

Status Runner::set_inputs_from_etrecord(const std::string& etrecord_path) {
  ETSCOPE_ASSIGN_OR_RETURN(etrecord::EtRecord record, etrecord::EtRecordReader::open(etrecord_path));
  return set_inputs_from_record(record, 0);
}

Status Runner::set_inputs_from_record(const etrecord::EtRecord& record, size_t index) {
  Impl& m = *impl_;
  const std::string& etrecord_path = record.path;
  etrecord::EtRecord::AotInputs taken;
  if (index == 0) {
    ETSCOPE_ASSIGN_OR_RETURN(taken, record.aot_inputs_of(m.method_name));
  } else {
    ETSCOPE_ASSIGN_OR_RETURN(const std::vector<etrecord::TensorValue>* recorded, record.representative_inputs_of(m.method_name, index));
    taken = {*recorded, "the representative inputs (case " + std::to_string(index) + ")"};
  }
  m.record_inputs_source = taken.source;
  const std::vector<etrecord::TensorValue>& values = taken.tensors;
  size_t tensor_inputs = 0;
  for (size_t i = 0; i < m.engine->num_inputs(); ++i) tensor_inputs += m.engine->input(i).tag == Tag::kTensor;
  if (values.size() != tensor_inputs) {
    return make_error(ErrorCode::kInvalidArgument, "%s: %zu tensors in %s, %s takes %zu", etrecord_path.c_str(), values.size(),
                      taken.source.c_str(), m.where().c_str(), tensor_inputs);
  }
  ETSCOPE_TRY(m.set_scalars());
  size_t next = 0;
  for (size_t i = 0; i < m.engine->num_inputs(); ++i) {
    const EValue& slot = m.engine->input(i);
    if (slot.tag != Tag::kTensor) continue;
    const etrecord::TensorValue& v = values[next++];
    const TensorImpl& t = *slot.tensor;
    if (v.dtype != t.dtype()) {
      return Error(ErrorCode::kInvalidArgument, etrecord_path + ": input " + std::to_string(i) + " of " + taken.source + " is " +
                                                    shape_text(v.dtype, v.shape) + ", the method takes " +
                                                    shape_text(t.dtype(), {t.sizes().begin(), t.sizes().end()}));
    }
    Status s = m.set_tensor(i, v.bytes, v.shape);
    if (!s.ok()) return s.error().with_context(etrecord_path);
  }
  return ok_status();
}

const std::string& Runner::record_inputs_source() const { return impl_->record_inputs_source; }

Status Runner::set_bundled_inputs(size_t index) {
  Impl& m = *impl_;
  const BundledTestSuite* s = m.suite(m.method_name);
  if (s == nullptr) return Error(ErrorCode::kNotFound, m.options.model + ": no bundled test cases for method '" + m.method_name + "'");
  if (index >= s->cases.size()) {
    return make_error(ErrorCode::kInvalidArgument, "%s: test case %zu is out of range (%zu cases)", m.options.model.c_str(), index,
                      s->cases.size());
  }
  EngineCases target(*m.engine, m.method_name);
  return load_bundled_inputs(target, *m.bundled, s->cases[index]);
}

Result<Timing> Runner::run(int warmup, int iterations, const std::function<void(int, int, double)>& progress) {
  Impl& m = *impl_;
  if (iterations < 1) return Error(ErrorCode::kInvalidArgument, "the number of timed iterations must be at least 1");
  if (m.writer && m.options.debug_level != DebugLevel::kNone && !m.debug_buffer_ready) {
    ETSCOPE_TRY(reserve_debug_buffer(m.options.debug_buffer_bytes));
  }
  for (int i = 0; i < warmup; ++i) {
    ETSCOPE_ASSIGN_OR_RETURN(double ms, m.engine->execute(events::kBlockWarmup.data()));
    (void)ms;
  }
  Timing timing;
  timing.samples.reserve(static_cast<size_t>(iterations));
  for (int i = 0; i < iterations; ++i) {
    ETSCOPE_ASSIGN_OR_RETURN(double ms, m.engine->execute(events::kBlockExecute.data()));
    timing.samples.push_back(ms);
    if (progress) progress(i + 1, iterations, timing.samples.back());
  }
  ETSCOPE_TRY(m.engine->sync_outputs());
  std::vector<double> sorted = timing.samples;
  std::sort(sorted.begin(), sorted.end());
  timing.min = sorted.front();
  timing.max = sorted.back();
  timing.p50 = percentile_sorted(sorted, 50);
  timing.p90 = percentile_sorted(sorted, 90);
  return timing;
}

Status Runner::set_input(size_t i, std::span<const uint8_t> bytes, std::span<const int64_t> sizes) {
  if (i >= impl_->engine->num_inputs()) {
    return Error(ErrorCode::kInvalidArgument, impl_->options.model + ": input " + std::to_string(i) + " does not exist (the method has " +
                                                  std::to_string(impl_->engine->num_inputs()) + ")");
  }
  return impl_->engine->set_input(i, bytes, sizes);
}

Result<double> Runner::execute_once(const char* block) {
  Impl& m = *impl_;
  if (m.writer && m.options.debug_level != DebugLevel::kNone && !m.debug_buffer_ready) {
    ETSCOPE_TRY(reserve_debug_buffer(m.options.debug_buffer_bytes));
  }
  ETSCOPE_ASSIGN_OR_RETURN(double ms, m.engine->execute(block));
  ETSCOPE_TRY(m.engine->sync_outputs());
  return ms;
}

Result<std::vector<BundledCaseResult>> Runner::check_bundled(std::optional<size_t> only, double rtol, double atol) {
  Impl& m = *impl_;
  if (!m.bundled) return Error(ErrorCode::kInvalidArgument, m.options.model + ": --bundled needs a bundled program (.bpte)");
  if (m.writer && m.options.debug_level != DebugLevel::kNone && !m.debug_buffer_ready) {
    ETSCOPE_TRY(reserve_debug_buffer(m.options.debug_buffer_bytes));
  }
  std::vector<BundledCaseResult> out;
  for (const BundledTestSuite& suite : m.bundled->suites) {
    if (only && suite.method_name != m.method_name) continue;
    // The runner's own engine, or another one loaded for the cases of another method.
    std::unique_ptr<Engine> other;
    Engine* engine = m.engine.get();
    if (suite.method_name != m.method_name) {
      ETSCOPE_ASSIGN_OR_RETURN(other, m.load_engine(suite.method_name));
      engine = other.get();
    }
    EngineCases target(*engine, suite.method_name);
    if (only && *only >= suite.cases.size()) {
      return make_error(ErrorCode::kInvalidArgument, "%s: test case '%zu' is out of range (%zu cases)", m.options.model.c_str(),
                        *only, suite.cases.size());
    }
    for (size_t c = 0; c < suite.cases.size(); ++c) {
      if (only && c != *only) continue;
      ETSCOPE_TRY(load_bundled_inputs(target, *m.bundled, suite.cases[c]));
      ETSCOPE_ASSIGN_OR_RETURN(double ms, engine->execute(events::kBlockExecute.data()));
      ETSCOPE_TRY(engine->sync_outputs());
      BundledCaseResult r;
      r.method = suite.method_name;
      r.index = c;
      r.ms = ms;
      std::vector<const EValue*> outputs;
      for (size_t o = 0; o < engine->num_outputs(); ++o) outputs.push_back(&engine->output(o));
      const CaseCheck check = verify_bundled_outputs(outputs, *m.bundled, suite.cases[c], rtol, atol);
      r.passed = check.passed;
      for (size_t o = 0; o < check.outputs.size(); ++o) {
        r.max_abs_error = std::max(r.max_abs_error, check.outputs[o].max_abs_error);
        r.max_rel_error = std::max(r.max_rel_error, check.outputs[o].max_rel_error);
        if (!check.outputs[o].problem.empty()) {
          r.problems += (r.problems.empty() ? "" : "; ") + ("output " + std::to_string(o) + ": " + check.outputs[o].problem);
        }
      }
      out.push_back(std::move(r));
    }
  }
  if (out.empty()) return Error(ErrorCode::kNotFound, m.options.model + ": no bundled test cases for method '" + m.method_name + "'");
  return out;
}

size_t Runner::num_outputs() const { return impl_->engine->num_outputs(); }
const EValue& Runner::output(size_t i) const { return impl_->engine->output(i); }

std::vector<std::optional<TensorSummary>> Runner::output_summaries(size_t first_n) const {
  std::vector<std::optional<TensorSummary>> out;
  for (size_t i = 0; i < impl_->engine->num_outputs(); ++i) {
    const EValue& v = impl_->engine->output(i);
    if (v.tag != Tag::kTensor || v.tensor == nullptr) {
      out.emplace_back();
      continue;
    }
    const TensorImpl& t = *v.tensor;
    TensorSummary s;
    s.dtype = t.dtype();
    s.sizes.assign(t.sizes().begin(), t.sizes().end());
    s.count = static_cast<uint64_t>(t.numel());
    if (t.data() != nullptr) {
      s.stats = compute_tensor_stats(t.dtype(), {static_cast<const uint8_t*>(t.data()), t.nbytes()}, s.count, first_n);
    }
    out.push_back(std::move(s));
  }
  return out;
}

Result<size_t> Runner::write_outputs(const std::string& dir) const {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return Error(ErrorCode::kIo, dir + ": cannot create directory: " + ec.message());
  size_t written = 0;
  for (size_t i = 0; i < impl_->engine->num_outputs(); ++i) {
    const EValue& v = impl_->engine->output(i);
    if (v.tag != Tag::kTensor || v.tensor->data() == nullptr) continue;
    const TensorImpl& t = *v.tensor;
    const std::vector<int64_t> shape(t.sizes().begin(), t.sizes().end());
    const std::string path = dir + "/output_" + std::to_string(i) + ".npy";
    if (t.dtype() == ScalarType::kBFloat16) {
      // .npy has no bfloat16: widened to float32, which holds every bfloat16 value exactly.
      std::vector<uint8_t> wide(static_cast<size_t>(t.numel()) * 4);
      const uint8_t* src = static_cast<const uint8_t*>(t.data());
      for (int64_t k = 0; k < t.numel(); ++k) {
        uint16_t half;
        std::memcpy(&half, src + 2 * k, 2);
        const uint32_t bits = static_cast<uint32_t>(half) << 16;
        std::memcpy(wide.data() + 4 * k, &bits, 4);
      }
      ETSCOPE_TRY(write_npy(path, ScalarType::kFloat, shape, wide));
    } else {
      ETSCOPE_TRY(write_npy(path, t.dtype(), shape, {static_cast<const uint8_t*>(t.data()), t.nbytes()}));
    }
    ++written;
  }
  return written;
}

Result<TraceFiles> Runner::write_trace(const std::string& etdump_path, const std::string& debug_buffer_path) {
  Impl& m = *impl_;
  if (!m.writer) return Error(ErrorCode::kInvalidArgument, m.options.model + ": the runner records no trace");
  ETSCOPE_ASSIGN_OR_RETURN(auto bytes, m.writer->finish());
  ETSCOPE_TRY(write_file_bytes(etdump_path, bytes));
  TraceFiles files;
  files.events = m.writer->event_count();
  files.etdump_bytes = bytes.size();
  if (!debug_buffer_path.empty()) {
    files.debug_bytes = m.writer->debug_bytes_used();
    ETSCOPE_TRY(write_file_bytes(debug_buffer_path, {m.debug_buffer.data(), files.debug_bytes}));
  }
  ETSCOPE_TRY(m.capacity_status(etdump_path, debug_buffer_path));
  return files;
}

Result<std::vector<uint8_t>> Runner::trace_bytes() const {
  const Impl& m = *impl_;
  if (!m.writer) return Error(ErrorCode::kInvalidArgument, m.options.model + ": the runner records no trace");
  ETSCOPE_ASSIGN_OR_RETURN(std::vector<uint8_t> bytes, m.writer->finish());
  ETSCOPE_TRY(m.capacity_status(m.options.model + " (trace in memory)", ""));
  return bytes;
}

}  // namespace etscope::runner
