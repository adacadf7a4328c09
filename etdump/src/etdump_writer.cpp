#include "etscope/etdump/etdump_writer.h"

#include <chrono>
#include <cmath>
#include <cstring>
#include <thread>
#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#endif

#include "etscope/core/event_names.h"
#include "etscope_fb/etdump_generated.h"

namespace etscope::etdump {
namespace efb = ::etscope::fb::etdump;

EtDumpWriter::EtDumpWriter(const EtDumpWriterOptions& options) : options_(options) {
  started_.reserve(options.max_events);
  recorded_.reserve(options.max_events);
  values_.reserve(options.max_events);
  tensors_.reserve(options.max_tensor_records);
  blocks_.reserve(options.max_blocks);
  origin_ = clock_pair();
}

namespace {

uint64_t steady_ns() {
  return static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch()).count());
}

}  // namespace

// The hot path reads the CPU's time-stamp counter (a third of the cost of steady_clock here);
// finish() turns ticks into steady_clock nanoseconds with a rate measured over the recording,
// so the file holds nanoseconds as ExecuTorch's default (ns) source time scale expects.
uint64_t EtDumpWriter::now_ticks() {
#if defined(__x86_64__) || defined(__i386__)
  return __rdtsc();
#else
  return steady_ns();
#endif
}

EtDumpWriter::Clock EtDumpWriter::clock_pair() { return Clock{now_ticks(), steady_ns()}; }

uint64_t EtDumpWriter::to_ns(uint64_t ticks, const Clock& end) const {
#if defined(__x86_64__) || defined(__i386__)
  const double dt = static_cast<double>(end.ticks - origin_.ticks);
  const double rate = dt > 0 ? static_cast<double>(end.ns - origin_.ns) / dt : 1.0;
  const double rel = static_cast<double>(static_cast<int64_t>(ticks - origin_.ticks)) * rate;
  return origin_.ns + static_cast<uint64_t>(std::llround(rel));
#else
  (void)end;
  return ticks;
#endif
}

bool EtDumpWriter::set_debug_buffer(std::span<uint8_t> buffer) {
  if (debug_used_ > 0) return false;
  options_.debug_buffer = buffer;
  return true;
}

void EtDumpWriter::create_event_block(const char* name) {
  if (blocks_.size() == blocks_.capacity()) {
    ++blocks_dropped_;
    discarding_ = true;
    return;
  }
  blocks_.push_back({name, static_cast<uint32_t>(recorded_.size()), 0, 0});
}

EventHandle EtDumpWriter::start_profiling(const char* name, int32_t chain_id, uint32_t debug_handle) {
  if (chain_id == -1 && std::strncmp(name, "Method::", 8) != 0 && std::strncmp(name, "Program::", 9) != 0) {
    chain_id = this->chain_id();
    debug_handle = this->debug_handle();
  }
  if (discarding_) return kNoEvent;
  if (started_.size() == started_.capacity()) {
    drop_event();
    return kNoEvent;
  }
  started_.push_back({name, chain_id, debug_handle, now_ticks(), false});
  return static_cast<EventHandle>(started_.size() - 1);
}

EventHandle EtDumpWriter::start_delegate_event(const char* id) {
  const EventHandle h = start_profiling(id);
  if (h != kNoEvent) started_[h].delegate = true;
  return h;
}

void EtDumpWriter::end_profiling(EventHandle handle) {
  if (handle == kNoEvent || handle >= started_.size()) return;
  if (recorded_.size() == recorded_.capacity() || blocks_.empty()) {
    drop_event();
    return;
  }
  recorded_.push_back({Kind::kProfile, handle, now_ticks()});
}

void EtDumpWriter::record_timed_event(const char* name, int32_t chain_id, uint32_t debug_handle, bool delegate,
                                      int64_t delegate_id, uint64_t start_ns, uint64_t end_ns) {
  if (discarding_) return;
  if (started_.size() == started_.capacity() || recorded_.size() == recorded_.capacity() || blocks_.empty()) {
    drop_event();
    return;
  }
  started_.push_back({name, chain_id, debug_handle, start_ns, delegate, delegate_id, true});
  recorded_.push_back({Kind::kProfile, static_cast<uint32_t>(started_.size() - 1), end_ns});
}

void EtDumpWriter::record_marker(std::string_view name) {
  if (blocks_.empty() || discarding_) return;
  if (recorded_.size() == recorded_.capacity()) {
    drop_event();
    return;
  }
  marker_names_.emplace_back(name);
  recorded_.push_back({Kind::kMarker, static_cast<uint32_t>(marker_names_.size() - 1), now_ticks()});
}

bool EtDumpWriter::record_tensor(const TensorImpl& t) {
  if (tensors_.size() == tensors_.capacity()) return false;
  TensorRecord r{};
  r.dtype = static_cast<int8_t>(t.dtype());
  r.dim = static_cast<uint8_t>(t.dim());
  for (int d = 0; d < t.dim(); ++d) {
    r.sizes[d] = t.size(d);
    r.strides[d] = t.stride(d);
  }
  const size_t n = t.nbytes();
  if (n == 0) {
    r.offset = -1;  // as ExecuTorch: empty tensors have no bytes and offset (size_t)-1
  } else {
    if (t.data() == nullptr) return false;
    // Align the absolute address, as ExecuTorch's buffer sink does.
    const auto base = reinterpret_cast<uintptr_t>(options_.debug_buffer.data());
    const uintptr_t a = options_.debug_alignment;
    const uintptr_t start = (base + debug_used_ + a - 1) / a * a;
    const size_t offset = start - base;
    if (options_.debug_buffer.empty() || offset + n > options_.debug_buffer.size()) return false;
    std::memcpy(options_.debug_buffer.data() + offset, t.data(), n);
    debug_used_ = offset + n;
    r.offset = static_cast<int64_t>(offset);
  }
  tensors_.push_back(r);
  return true;
}

void EtDumpWriter::log_evalue(const EValue& value, bool output) {
  if (blocks_.empty() || discarding_) return;
  if (values_.size() == values_.capacity() || recorded_.size() == recorded_.capacity()) {
    drop_event();
    return;
  }
  ValueRecord v{};
  v.delegate_id = -1;
  v.tag = value.tag;
  v.output = output;
  v.chain = chain_id();
  v.handle = debug_handle();
  v.first_tensor = static_cast<uint32_t>(tensors_.size());
  bool ok = true;
  switch (value.tag) {
    case Tag::kTensor:
      ok = record_tensor(*value.tensor);
      v.tensor_count = ok ? 1 : 0;
      break;
    case Tag::kTensorList:
      for (TensorImpl* t : value.tensor_list) ok = ok && t != nullptr && record_tensor(*t);
      v.tensor_count = static_cast<uint32_t>(tensors_.size()) - v.first_tensor;
      break;
    case Tag::kInt: v.scalar.i = value.scalar.i; break;
    case Tag::kDouble: v.scalar.d = value.scalar.d; break;
    case Tag::kBool: v.scalar.b = value.scalar.b; break;
    default: return;  // ExecuTorch logs only tensors, tensor lists, ints, doubles and bools
  }
  if (!ok) {
    // Drop the whole value rather than write a partial one; the block gets a marker.
    tensors_.resize(v.first_tensor);
    ++values_dropped_;
    ++blocks_.back().values_dropped;
    return;
  }
  values_.push_back(v);
  recorded_.push_back({Kind::kDebug, static_cast<uint32_t>(values_.size() - 1), 0});
}

void EtDumpWriter::log_delegate_output(const EValue& value, int32_t delegate_id) {
  const size_t before = values_.size();
  log_evalue(value, false);
  if (values_.size() > before) values_.back().delegate_id = delegate_id;
}

namespace {

flatbuffers::Offset<efb::Tensor> build_tensor(flatbuffers::FlatBufferBuilder& b, int8_t dtype, uint8_t dim,
                                              const int64_t* sizes, const int64_t* strides, int64_t offset) {
  auto s = b.CreateVector(sizes, dim);
  auto st = b.CreateVector(strides, dim);
  return efb::CreateTensor(b, static_cast<::etscope::fb::ScalarType>(dtype), s, st, offset);
}

}  // namespace

Result<std::vector<uint8_t>> EtDumpWriter::finish() const {
  // The tick rate is measured from construction to now; give it at least 2 ms to be exact to
  // well under a part per thousand.
  Clock now = clock_pair();
  if (now.ns - origin_.ns < 2'000'000) {
    std::this_thread::sleep_for(std::chrono::nanoseconds(2'000'000 - (now.ns - origin_.ns)));
    now = clock_pair();
  }
  flatbuffers::FlatBufferBuilder b(1 << 16);
  std::vector<flatbuffers::Offset<efb::RunData>> runs;
  for (size_t bi = 0; bi < blocks_.size(); ++bi) {
    const Block& block = blocks_[bi];
    const size_t end = bi + 1 < blocks_.size() ? blocks_[bi + 1].first_recorded : recorded_.size();
    std::vector<flatbuffers::Offset<efb::Event>> events;
    for (size_t r = block.first_recorded; r < end; ++r) {
      const Recorded& rec = recorded_[r];
      if (rec.kind == Kind::kProfile) {
        const Started& s = started_[rec.index];
        flatbuffers::Offset<efb::ProfileEvent> pe;
        const uint64_t start = s.timed_ns ? s.start : to_ns(s.start, now);
        const uint64_t stop = s.timed_ns ? rec.end : to_ns(rec.end, now);
        if (s.delegate) {
          auto id = s.name != nullptr ? b.CreateSharedString(s.name) : flatbuffers::Offset<flatbuffers::String>();
          auto metadata = b.CreateVector(static_cast<const uint8_t*>(nullptr), 0);
          pe = efb::CreateProfileEvent(b, flatbuffers::Offset<flatbuffers::String>(), s.chain, static_cast<int32_t>(s.handle),
                                       s.name != nullptr ? -1 : s.delegate_id, id, metadata, start, stop);
        } else {
          auto name = b.CreateSharedString(s.name);
          pe = efb::CreateProfileEvent(b, name, s.chain, static_cast<int32_t>(s.handle), -1, 0, 0, start, stop);
        }
        events.push_back(efb::CreateEvent(b, pe));
      } else if (rec.kind == Kind::kDebug) {
        const ValueRecord& v = values_[rec.index];
        efb::ValueType type = efb::ValueType::Null;
        flatbuffers::Offset<efb::Tensor> tensor;
        flatbuffers::Offset<efb::TensorList> list;
        flatbuffers::Offset<efb::Int> iv;
        flatbuffers::Offset<efb::Double> dv;
        flatbuffers::Offset<efb::Bool> bv;
        switch (v.tag) {
          case Tag::kTensor: {
            type = efb::ValueType::Tensor;
            const TensorRecord& t = tensors_[v.first_tensor];
            tensor = build_tensor(b, t.dtype, t.dim, t.sizes, t.strides, t.offset);
            break;
          }
          case Tag::kTensorList: {
            type = efb::ValueType::TensorList;
            std::vector<flatbuffers::Offset<efb::Tensor>> ts;
            for (uint32_t k = 0; k < v.tensor_count; ++k) {
              const TensorRecord& t = tensors_[v.first_tensor + k];
              ts.push_back(build_tensor(b, t.dtype, t.dim, t.sizes, t.strides, t.offset));
            }
            list = efb::CreateTensorList(b, b.CreateVector(ts));
            break;
          }
          case Tag::kInt:
            type = efb::ValueType::Int;
            iv = efb::CreateInt(b, v.scalar.i);
            break;
          case Tag::kDouble:
            type = efb::ValueType::Double;
            dv = efb::CreateDouble(b, v.scalar.d);
            break;
          case Tag::kBool:
            type = efb::ValueType::Bool;
            bv = efb::CreateBool(b, v.scalar.b);
            break;
          default: break;
        }
        flatbuffers::Offset<efb::Bool> output;
        if (v.output) output = efb::CreateBool(b, true);
        auto value = efb::CreateValue(b, type, tensor, list, iv, 0, dv, bv, output);
        // The unsigned chain field holds -1 as 2^64 - 1, as ExecuTorch writes it.
        auto de = efb::CreateDebugEvent(b, static_cast<uint64_t>(static_cast<int64_t>(v.chain)),
                                        static_cast<int32_t>(v.handle), value, v.delegate_id);
        events.push_back(efb::CreateEvent(b, 0, 0, de));
      } else {
        // A marker: chain -1, instruction -1, zero length at the time it was recorded
        // (core/event_names.h), so that readers that span a block's events are not stretched.
        const std::string& name = marker_names_[rec.index];
        const uint64_t at = to_ns(rec.end, now);
        auto pe = efb::CreateProfileEvent(b, b.CreateString(name), -1, -1, -1, 0, 0, at, at);
        events.push_back(efb::CreateEvent(b, pe));
      }
    }
    const bool last = bi + 1 == blocks_.size();
    for (auto [count, marker] : {std::pair{block.values_dropped, events::kMarkerDebugOverflow},
                                 std::pair{block.events_dropped, events::kMarkerEventOverflow},
                                 std::pair{last ? blocks_dropped_ : 0, events::kMarkerBlockOverflow}}) {
      if (count == 0) continue;
      // chain -1, instruction -1, start 0, end = the count (core/event_names.h).
      auto pe = efb::CreateProfileEvent(b, b.CreateString(marker.data(), marker.size()), -1, -1, -1, 0, 0, 0, count);
      events.push_back(efb::CreateEvent(b, pe));
    }
    auto name = b.CreateString(block.name);
    runs.push_back(efb::CreateRunData(b, name, -1, 0, b.CreateVector(events)));
  }
  auto root = efb::CreateETDump(b, 0, b.CreateVector(runs));
  // ExecuTorch's flatcc builder aligns everything relative to the byte after the size prefix;
  // finishing unprefixed and prepending the size reproduces that layout exactly.
  efb::FinishETDumpBuffer(b, root);
  const uint32_t size = static_cast<uint32_t>(b.GetSize());
  std::vector<uint8_t> out(4 + size);
  std::memcpy(out.data(), &size, 4);
  std::memcpy(out.data() + 4, b.GetBufferPointer(), size);
  return out;
}

}  // namespace etscope::etdump
