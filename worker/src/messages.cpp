#include "etscope/worker/messages.h"

#include "etscope/core/checked.h"
#include "etscope/core/tensor.h"

namespace etscope::worker {
namespace {

Status short_or_long(const WireReader& r, const char* what) {
  if (r.failed()) return Error(ErrorCode::kCorrupt, std::string("a truncated ") + what + " message");
  if (!r.at_end()) return Error(ErrorCode::kCorrupt, std::string("a ") + what + " message with trailing bytes");
  return ok_status();
}

void put_tensor(WireWriter& w, const WireTensor& t) {
  w.u8(static_cast<uint8_t>(t.dtype));
  w.u32(static_cast<uint32_t>(t.sizes.size()));
  for (int64_t s : t.sizes) w.i64(s);
  w.blob(t.bytes);
}

Status get_tensor(WireReader& r, WireTensor& t) {
  t.dtype = static_cast<ScalarType>(r.u8());
  const uint32_t dim = r.u32();
  if (r.failed()) return Error(ErrorCode::kCorrupt, "a truncated tensor");
  const std::optional<uint32_t> element = element_size(t.dtype);
  if (!is_known(t.dtype) || !element) {
    return Error(ErrorCode::kCorrupt, "a tensor of unknown dtype " + std::to_string(static_cast<int>(t.dtype)));
  }
  if (dim > static_cast<uint32_t>(kMaxDims)) return Error(ErrorCode::kCorrupt, "a tensor of " + std::to_string(dim) + " dimensions");
  uint64_t numel = 1;
  t.sizes.resize(dim);
  for (uint32_t d = 0; d < dim; ++d) {
    t.sizes[d] = r.i64();
    if (t.sizes[d] < 0) return Error(ErrorCode::kCorrupt, "a tensor with a negative size");
    const std::optional<uint64_t> n = checked::mul(numel, static_cast<uint64_t>(t.sizes[d]));
    if (!n) return Error(ErrorCode::kCorrupt, "a tensor whose size overflows");
    numel = *n;
  }
  const std::span<const uint8_t> bytes = r.blob();
  if (r.failed()) return Error(ErrorCode::kCorrupt, "a truncated tensor");
  const std::optional<uint64_t> nbytes = checked::mul(numel, *element);
  if (!nbytes || *nbytes != bytes.size()) {
    return Error(ErrorCode::kCorrupt, "a tensor of " + std::to_string(bytes.size()) + " bytes that its shape does not fit");
  }
  t.bytes.assign(bytes.begin(), bytes.end());
  return ok_status();
}

Status get_value(WireReader& r, WireValue& v) {
  v.tag = static_cast<Tag>(r.u8());
  switch (v.tag) {
    case Tag::kNone: break;
    case Tag::kInt: v.i = r.i64(); break;
    case Tag::kDouble: v.d = r.f64(); break;
    case Tag::kBool: v.b = r.u8() != 0; break;
    case Tag::kTensor:
    case Tag::kTensorList: {
      const uint32_t n = v.tag == Tag::kTensor ? 1 : r.u32();
      if (r.failed()) return Error(ErrorCode::kCorrupt, "a truncated value");
      for (uint32_t k = 0; k < n; ++k) {
        WireTensor t;
        ETSCOPE_TRY(get_tensor(r, t));
        v.tensors.push_back(std::move(t));
      }
      break;
    }
    default: return Error(ErrorCode::kCorrupt, "a value of unknown kind " + std::to_string(static_cast<int>(v.tag)));
  }
  return ok_status();
}

}  // namespace

void encode(WireWriter& w, const WireValue& m) {
  w.u8(static_cast<uint8_t>(m.tag));
  switch (m.tag) {
    case Tag::kInt: w.i64(m.i); break;
    case Tag::kDouble: w.f64(m.d); break;
    case Tag::kBool: w.u8(m.b ? 1 : 0); break;
    case Tag::kTensor: put_tensor(w, m.tensors.at(0)); break;
    case Tag::kTensorList:
      w.u32(static_cast<uint32_t>(m.tensors.size()));
      for (const WireTensor& t : m.tensors) put_tensor(w, t);
      break;
    default: break;
  }
}

void encode(WireWriter& w, const LoadRequest& m) {
  w.str(m.method);
  w.i32(m.program_fd);
  w.u32(static_cast<uint32_t>(m.data_fds.size()));
  for (int32_t fd : m.data_fds) w.i32(fd);
  w.u32(m.threads);
  w.u8(m.trace ? 1 : 0);
  w.u8(m.debug_level);
  w.u32(static_cast<uint32_t>(m.operators.size()));
  for (const std::string& s : m.operators) w.str(s);
  w.u32(static_cast<uint32_t>(m.backends.size()));
  for (const std::string& s : m.backends) w.str(s);
}

Status decode(std::span<const uint8_t> payload, LoadRequest& m) {
  WireReader r(payload);
  m.method = std::string(r.str());
  m.program_fd = r.i32();
  const uint32_t fds = r.u32();
  for (uint32_t k = 0; k < fds && !r.failed(); ++k) m.data_fds.push_back(r.i32());
  m.threads = r.u32();
  m.trace = r.u8() != 0;
  m.debug_level = r.u8();
  const uint32_t ops = r.u32();
  for (uint32_t k = 0; k < ops && !r.failed(); ++k) m.operators.emplace_back(r.str());
  const uint32_t backends = r.u32();
  for (uint32_t k = 0; k < backends && !r.failed(); ++k) m.backends.emplace_back(r.str());
  return short_or_long(r, "load");
}

void encode(WireWriter& w, const LoadReply& m) {
  w.str(m.executorch_version);
  w.u32(m.threads);
  w.u32(m.num_inputs);
  w.u32(m.num_outputs);
}

Status decode(std::span<const uint8_t> payload, LoadReply& m) {
  WireReader r(payload);
  m.executorch_version = std::string(r.str());
  m.threads = r.u32();
  m.num_inputs = r.u32();
  m.num_outputs = r.u32();
  return short_or_long(r, "ready");
}

void encode(WireWriter& w, const SetInput& m) {
  w.u32(m.index);
  encode(w, m.value);
}

Status decode(std::span<const uint8_t> payload, SetInput& m) {
  WireReader r(payload);
  m.index = r.u32();
  ETSCOPE_TRY(get_value(r, m.value));
  return short_or_long(r, "set-input");
}

void encode(WireWriter& w, const TimedEvent& m) {
  w.u8(m.has_name ? 1 : 0);
  w.str(m.name);
  w.u8(m.delegate ? 1 : 0);
  w.i64(m.delegate_id);
  w.i32(m.chain);
  w.u32(m.handle);
  w.u64(m.start_ns);
  w.u64(m.end_ns);
}

Status decode(std::span<const uint8_t> payload, TimedEvent& m) {
  WireReader r(payload);
  m.has_name = r.u8() != 0;
  m.name = std::string(r.str());
  m.delegate = r.u8() != 0;
  m.delegate_id = r.i64();
  m.chain = r.i32();
  m.handle = r.u32();
  m.start_ns = r.u64();
  m.end_ns = r.u64();
  return short_or_long(r, "event");
}

void encode(WireWriter& w, const LoggedValue& m) {
  encode(w, m.value);
  w.u8(m.output ? 1 : 0);
  w.u8(m.delegate ? 1 : 0);
  w.i32(m.delegate_id);
  w.i32(m.chain);
  w.u32(m.handle);
}

Status decode(std::span<const uint8_t> payload, LoggedValue& m) {
  WireReader r(payload);
  ETSCOPE_TRY(get_value(r, m.value));
  m.output = r.u8() != 0;
  m.delegate = r.u8() != 0;
  m.delegate_id = r.i32();
  m.chain = r.i32();
  m.handle = r.u32();
  return short_or_long(r, "value");
}

void encode(WireWriter& w, const Executed& m) { w.u64(m.elapsed_ns); }

Status decode(std::span<const uint8_t> payload, Executed& m) {
  WireReader r(payload);
  m.elapsed_ns = r.u64();
  return short_or_long(r, "executed");
}

void encode(WireWriter& w, const OutputList& m) {
  w.u32(static_cast<uint32_t>(m.values.size()));
  for (const WireValue& v : m.values) encode(w, v);
}

Status decode(std::span<const uint8_t> payload, OutputList& m) {
  WireReader r(payload);
  const uint32_t n = r.u32();
  for (uint32_t k = 0; k < n && !r.failed(); ++k) {
    WireValue v;
    ETSCOPE_TRY(get_value(r, v));
    m.values.push_back(std::move(v));
  }
  return short_or_long(r, "outputs");
}

std::vector<uint8_t> encode_text(std::string_view text) {
  WireWriter w;
  w.str(text);
  return std::move(w.bytes());
}

Result<std::string> decode_text(std::span<const uint8_t> payload) {
  WireReader r(payload);
  std::string s(r.str());
  ETSCOPE_TRY(short_or_long(r, "text"));
  return s;
}

}  // namespace etscope::worker
