// Numeric gap (semantics.md §3.10-3.11). Sections:
//   1. Values: tensor views, describe()
//   2. Loading AOT intermediates (.ptd + index)
//   3. Comparator formulas (L1, MSE, SNR in float64 with broadcasting)
//   4. Runtime side: collect, keep largest instruction id, merge overlaps
//   5. Matching AOT to runtime and building the rows
//   6. The run's inputs against the AOT inputs; the first divergence
#include "etscope/inspect/numeric_gap.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <limits>
#include <map>
#include <set>


#include "etscope/core/checked.h"
#include "etscope/core/event_names.h"
#include "etscope/core/json.h"
#include "etscope/core/text.h"
#include "etscope/formats/tensor_stats.h"
#include "etscope/inspect/event_index.h"
#include "etscope/inspect/logged_tensor.h"
#include "etscope/formats/ptd_reader.h"

namespace etscope::inspect {
namespace {

using Handles = std::vector<int64_t>;

// ------------------------------------------------------------------ 1. Values

uint64_t product(const std::vector<int64_t>& shape) {
  uint64_t n = 1;
  for (int64_t d : shape) n *= static_cast<uint64_t>(d);
  return n;
}

// Bytes of a dense tensor, or nullopt for negative sizes, overflow or an unknown dtype.
std::optional<uint64_t> dense_bytes(ScalarType dtype, const std::vector<int64_t>& shape) {
  auto elem = element_size(dtype);
  if (!elem) return std::nullopt;
  uint64_t n = *elem;
  for (int64_t d : shape) {
    if (d < 0) return std::nullopt;
    auto m = checked::mul(n, static_cast<uint64_t>(d));
    if (!m) return std::nullopt;
    n = *m;
  }
  return n;
}

bool overlaps(const Handles& a, const Handles& b) {
  for (int64_t x : a)
    if (std::find(b.begin(), b.end(), x) != b.end()) return true;
  return false;
}

bool is_subset(const Handles& sub, const Handles& of) {
  for (int64_t x : sub)
    if (std::find(of.begin(), of.end(), x) == of.end()) return false;
  return true;
}

}  // namespace

uint64_t TensorView::numel() const { return product(shape); }

std::string describe(const GapValue& v) {
  switch (v.kind) {
    case GapValue::Kind::kNone:
      return "None";
    case GapValue::Kind::kScalar: {
      char buf[32];
      std::snprintf(buf, sizeof buf, "%.6g", v.scalar);
      return buf;
    }
    case GapValue::Kind::kTensor:
      return shape_text(v.tensor.dtype, v.tensor.shape);
    case GapValue::Kind::kList: {
      std::string s = "[";
      for (size_t i = 0; i < v.items.size(); ++i) s += (i ? ", " : "") + describe(v.items[i]);
      return s + "]";
    }
  }
  return "None";
}

// ------------------------------------------------------------------ 2. Loading AOT intermediates

namespace {

// "4,5" or "4,5/1" -> handles and the sequence index (-1 without "/i").
bool parse_key(const std::string& key, Handles& handles, int64_t& element) {
  handles.clear();
  element = -1;
  std::string head = key;
  if (size_t slash = key.find('/'); slash != std::string::npos) {
    const std::string tail = key.substr(slash + 1);
    if (tail.empty() || tail.size() > 9 || !std::all_of(tail.begin(), tail.end(), ::isdigit)) return false;
    element = std::stoll(tail);
    head = key.substr(0, slash);
  }
  size_t pos = 0;
  while (pos <= head.size()) {
    size_t comma = head.find(',', pos);
    if (comma == std::string::npos) comma = head.size();
    std::string part = head.substr(pos, comma - pos);
    size_t start = (!part.empty() && part[0] == '-') ? 1 : 0;
    if (part.size() <= start || part.size() > 18 || !std::all_of(part.begin() + static_cast<long>(start), part.end(), ::isdigit)) return false;
    handles.push_back(std::stoll(part));
    pos = comma + 1;
  }
  return !handles.empty();
}

Result<GapValue> tensor_of(const TensorDataFile& file, const TensorDataEntry& entry) {
  if (!entry.layout) {
    return make_error(ErrorCode::kCorrupt, "%s: key '%s' has no tensor layout", file.name().c_str(), entry.key.c_str());
  }
  GapValue v;
  v.kind = GapValue::Kind::kTensor;
  v.tensor.dtype = entry.layout->dtype;
  for (int32_t d : entry.layout->sizes) v.tensor.shape.push_back(d);
  auto nbytes = dense_bytes(v.tensor.dtype, v.tensor.shape);
  if (!nbytes || !is_numeric(v.tensor.dtype)) {
    return make_error(ErrorCode::kCorrupt, "%s: key '%s' has an unusable dtype or shape", file.name().c_str(), entry.key.c_str());
  }
  if (*nbytes > entry.data.size) {
    return make_error(ErrorCode::kCorrupt, "%s: key '%s' holds %llu bytes, its shape needs %llu", file.name().c_str(),
                      entry.key.c_str(), static_cast<unsigned long long>(entry.data.size), static_cast<unsigned long long>(*nbytes));
  }
  v.tensor.bytes = file.bytes(entry.data).subspan(0, static_cast<size_t>(*nbytes));
  return v;
}

GapValue value_of_json(const Json& j) {
  GapValue v;
  if (j.is_number() || j.is_boolean()) {
    v.kind = GapValue::Kind::kScalar;
    v.scalar = j.is_boolean() ? (j.get<bool>() ? 1.0 : 0.0) : j.get<double>();
  } else if (j.is_string()) {  // Non-finite floats are written as strings.
    const std::string s = j.get<std::string>();
    if (s == "nan" || s == "inf" || s == "-inf") {
      v.kind = GapValue::Kind::kScalar;
      v.scalar = s == "nan" ? std::nan("") : s == "inf" ? HUGE_VAL : -HUGE_VAL;
    }
  }
  return v;
}

// Puts `element` at `index` of a sequence output, padding with None.
void set_element(GapValue& seq, size_t index, GapValue element) {
  seq.kind = GapValue::Kind::kList;
  if (seq.items.size() <= index) seq.items.resize(index + 1);
  seq.items[index] = std::move(element);
}

Result<AotIntermediates> from_ptd_only(std::shared_ptr<const TensorDataFile> ptd) {
  AotIntermediates out;
  std::map<Handles, size_t> by_key;
  for (const TensorDataEntry& e : ptd->entries) {
    Handles handles;
    int64_t element = -1;
    if (!parse_key(e.key, handles, element)) {
      return make_error(ErrorCode::kCorrupt, "%s: key '%s' is not debug handles joined by ',' (with an optional '/i')",
                        ptd->name().c_str(), e.key.c_str());
    }
    ETSCOPE_ASSIGN_OR_RETURN(GapValue t, tensor_of(*ptd, e));
    auto [it, fresh] = by_key.emplace(handles, out.entries.size());
    if (fresh) out.entries.push_back(AotEntry{handles, {}, {}});
    AotEntry& entry = out.entries[it->second];
    if (element < 0) {
      entry.output = std::move(t);
    } else {
      set_element(entry.output, static_cast<size_t>(element), std::move(t));
    }
  }
  out.file = std::move(ptd);
  return out;
}

Result<AotIntermediates> from_index(std::shared_ptr<const TensorDataFile> ptd, std::string_view text, const std::string& name) {
  // The index is read through the checked accessors: a member of the wrong type is a corrupt
  // index, never an exception.
  constexpr uint64_t kMaxIndexDepth = 16;
  auto parsed = parse_json(text, kMaxIndexDepth, name);
  const Json* entries = parsed.ok() ? typed_member(*parsed, "entries", Json::value_t::array) : nullptr;
  if (entries == nullptr) {
    return Error(ErrorCode::kWrongKind, name + ": not an AOT intermediates index (JSON object with \"entries\")");
  }
  AotIntermediates out;
  out.reference_graph = string_member(*parsed, "reference_graph");
  std::map<Handles, size_t> by_key;
  size_t n = 0;
  for (const Json& e : *entries) {
    const std::string where = name + ": entry " + std::to_string(n++);
    const Json* handle_list = typed_member(e, "debug_handle", Json::value_t::array);
    if (handle_list == nullptr) return Error(ErrorCode::kCorrupt, where + ": no debug_handle list");
    Handles handles;
    for (const auto& h : *handle_list) {
      auto handle = as_int64(h);
      if (!handle) return Error(ErrorCode::kCorrupt, where + ": debug handles must be integers");
      handles.push_back(*handle);
    }
    if (handles.empty()) return Error(ErrorCode::kCorrupt, where + ": empty debug_handle");
    bool sequence = false;
    if (const Json* m = member(e, "is_sequence")) {
      auto b = as_bool(*m);
      if (!b) return Error(ErrorCode::kCorrupt, where + ": is_sequence must be true or false");
      sequence = *b;
    }
    int64_t element = 0;
    if (const Json* m = member(e, "output_index")) {
      auto i = as_int64(*m);
      if (!i) return Error(ErrorCode::kCorrupt, where + ": output_index must be an integer");
      element = *i;
    }
    if (element < 0 || element > (1 << 20)) return Error(ErrorCode::kCorrupt, where + ": bad output_index");
    GapValue value;
    if (const Json* key_json = typed_member(e, "key", Json::value_t::string)) {
      const std::string key = key_json->get<std::string>();
      const TensorDataEntry* t = ptd->find(key);
      if (!t) return Error(ErrorCode::kCorrupt, where + ": key '" + key + "' is not in " + ptd->name());
      ETSCOPE_ASSIGN_OR_RETURN(value, tensor_of(*ptd, *t));
    } else if (const Json* v = member(e, "value")) {
      value = value_of_json(*v);
    }
    auto [it, fresh] = by_key.emplace(handles, out.entries.size());
    if (fresh) {
      AotEntry entry{handles, {}, {}};
      if (const Json* ops = typed_member(e, "op_names", Json::value_t::array)) {
        for (const auto& op : *ops)
          if (op.is_string()) entry.op_names.push_back(op.get<std::string>());
      }
      out.entries.push_back(std::move(entry));
    }
    AotEntry& entry = out.entries[it->second];
    if (sequence) {
      set_element(entry.output, static_cast<size_t>(element), std::move(value));
    } else {
      entry.output = std::move(value);
    }
  }
  out.file = std::move(ptd);
  return out;
}

}  // namespace

Result<AotIntermediates> load_aot_intermediates(std::shared_ptr<const TensorDataFile> ptd, std::string_view index_json,
                                                const std::string& index_name) {
  Result<AotIntermediates> r = index_json.empty() ? from_ptd_only(ptd) : from_index(ptd, index_json, index_name);
  if (r.ok() && r->entries.empty()) {
    return Error(ErrorCode::kInvalidArgument, (index_json.empty() ? ptd->name() : index_name) + ": holds no AOT intermediate outputs");
  }
  return r;
}

namespace {

std::string existing(std::filesystem::path path) {
  std::error_code ec;
  return std::filesystem::is_regular_file(path, ec) ? path.string() : std::string();
}

}  // namespace

std::string aot_index_path(const std::string& ptd_path) {
  return std::filesystem::path(ptd_path).replace_extension(".json").string();
}

std::string aot_index_beside(const std::string& ptd_path) { return existing(aot_index_path(ptd_path)); }

std::string missing_aot_index_warning(const std::string& ptd_path) {
  return "no index beside it (" + aot_index_path(ptd_path) +
         "): the AOT ops column stays empty; give the index with --aot-index FILE.json";
}

std::string aot_intermediates_beside(const std::string& model_path) {
  return existing(std::filesystem::path(model_path).replace_extension(".aot_intermediates.ptd"));
}

Result<AotIntermediates> load_aot_intermediates(const std::string& ptd_path, const std::string& index_json_path) {
  ETSCOPE_ASSIGN_OR_RETURN(TensorDataFile file, PtdReader::open(ptd_path));
  auto ptd = std::make_shared<const TensorDataFile>(std::move(file));
  if (index_json_path.empty()) return load_aot_intermediates(ptd, "", "");
  ETSCOPE_ASSIGN_OR_RETURN(std::vector<uint8_t> bytes, read_file_bytes(index_json_path));
  return load_aot_intermediates(ptd, std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()), index_json_path);
}

// ------------------------------------------------------------------ 3. Comparator formulas

const char* to_string(GapMetric metric) {
  switch (metric) {
    case GapMetric::kL1: return "L1";
    case GapMetric::kMSE: return "MSE";
    case GapMetric::kSNR: return "SNR";
  }
  return "?";
}

Result<GapMetric> parse_gap_metric(std::string_view text) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front()))) text.remove_prefix(1);
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) text.remove_suffix(1);
  std::string upper(text);
  for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  if (upper == "L1") return GapMetric::kL1;
  if (upper == "MSE") return GapMetric::kMSE;
  if (upper == "SNR") return GapMetric::kSNR;
  return Error(ErrorCode::kInvalidArgument, "unsupported distance metric '" + std::string(text) + "' (L1, MSE or SNR)");
}

namespace {

// convert_to_float_tensor: float64 values and their shape; NaN -> 0 and +-inf -> +-max only when
// some NaN is present (torch.nan_to_num's defaults).
struct Doubles {
  std::vector<int64_t> shape;
  std::vector<double> values;
};

// The values as they are (no NaN replacement).
Result<Doubles> raw_doubles(const GapValue& v) {
  Doubles out;
  if (v.kind == GapValue::Kind::kScalar) {
    out.values.push_back(v.scalar);
  } else if (v.kind == GapValue::Kind::kTensor) {
    if (!is_numeric(v.tensor.dtype)) {
      return Error(ErrorCode::kInvalidArgument, "cannot compare a tensor of dtype " + scalar_type_name(v.tensor.dtype));
    }
    out.shape = v.tensor.shape;
    const uint64_t n = v.tensor.numel();
    auto need = dense_bytes(v.tensor.dtype, v.tensor.shape);
    if (!need || *need > v.tensor.bytes.size()) return Error(ErrorCode::kInternal, "tensor view shorter than its shape");
    out.values.resize(static_cast<size_t>(n));
    for (uint64_t i = 0; i < n; ++i) out.values[i] = element_as_double(v.tensor.dtype, v.tensor.bytes.data(), i);
  } else {
    return Error(ErrorCode::kInvalidArgument, std::string("cannot compare ") + (v.is_list() ? "a sequence" : "None") + " as one value");
  }
  return out;
}

Result<Doubles> to_doubles(const GapValue& v) {
  ETSCOPE_ASSIGN_OR_RETURN(Doubles out, raw_doubles(v));
  if (std::any_of(out.values.begin(), out.values.end(), [](double x) { return std::isnan(x); })) {
    const double big = std::numeric_limits<double>::max();
    for (double& x : out.values) x = std::isnan(x) ? 0.0 : std::isinf(x) ? (x > 0 ? big : -big) : x;
  }
  return out;
}

// Neumaier-compensated sum, close to torch's pairwise float64 reductions.
struct Sum {
  double sum = 0, comp = 0;
  void add(double x) {
    const double t = sum + x;
    if (std::isfinite(t)) {
      comp += std::fabs(sum) >= std::fabs(x) ? (sum - t) + x : (x - t) + sum;
    }
    sum = t;
  }
  double value() const { return std::isfinite(sum) ? sum + comp : sum; }
};

// Calls f(a_i, b_i) over the numpy broadcast of a and b; false when the shapes do not broadcast.
template <typename F>
bool for_each_broadcast(const Doubles& a, const Doubles& b, F&& f, uint64_t& count) {
  if (a.shape == b.shape) {
    count = a.values.size();
    for (size_t i = 0; i < a.values.size(); ++i) f(a.values[i], b.values[i]);
    return true;
  }
  const size_t rank = std::max(a.shape.size(), b.shape.size());
  std::vector<int64_t> out(rank), sa(rank, 0), sb(rank, 0);
  int64_t stride_a = 1, stride_b = 1;
  for (size_t k = 0; k < rank; ++k) {
    const size_t d = rank - 1 - k;  // Right-aligned dimension.
    const int64_t da = k < a.shape.size() ? a.shape[a.shape.size() - 1 - k] : 1;
    const int64_t db = k < b.shape.size() ? b.shape[b.shape.size() - 1 - k] : 1;
    if (da != db && da != 1 && db != 1) return false;
    out[d] = da == 1 ? db : da;
    sa[d] = da == 1 ? 0 : stride_a;
    sb[d] = db == 1 ? 0 : stride_b;
    stride_a *= da;
    stride_b *= db;
  }
  count = product(out);
  if (count == 0) return true;
  std::vector<int64_t> idx(rank, 0);
  int64_t ia = 0, ib = 0;
  for (uint64_t n = 0; n < count; ++n) {
    f(a.values[static_cast<size_t>(ia)], b.values[static_cast<size_t>(ib)]);
    for (size_t d = rank; d-- > 0;) {
      if (++idx[d] < out[d]) {
        ia += sa[d];
        ib += sb[d];
        break;
      }
      ia -= sa[d] * (out[d] - 1);
      ib -= sb[d] * (out[d] - 1);
      idx[d] = 0;
    }
  }
  return true;
}

// numpy's broadcast shape of two shapes, right-aligned (for_each_broadcast checks that they
// broadcast).
std::vector<int64_t> broadcast_shape(const std::vector<int64_t>& a, const std::vector<int64_t>& b) {
  const size_t rank = std::max(a.size(), b.size());
  std::vector<int64_t> out(rank, 1);
  for (size_t k = 0; k < rank; ++k) {
    const int64_t da = k < a.size() ? a[a.size() - 1 - k] : 1;
    const int64_t db = k < b.size() ? b[b.size() - 1 - k] : 1;
    out[rank - 1 - k] = da == 1 ? db : da;
  }
  return out;
}

// IEEE half bits of a value a half holds exactly (it was read from one).
uint64_t half_bits(double x) {
  const uint64_t sign = std::signbit(x) ? 0x8000 : 0;
  const double a = std::fabs(x);
  if (std::isnan(x)) return 0x7e00;
  if (std::isinf(x)) return sign | 0x7c00;
  if (a == 0) return sign;
  int e = 0;
  const double m = std::frexp(a, &e);  // a = m 2^e, m in [0.5, 1)
  const int exponent = e - 1;          // a = (2m) 2^exponent
  if (exponent >= -14) {
    const auto field = static_cast<uint64_t>(std::min(exponent + 15, 30));
    return sign | (field << 10) | static_cast<uint64_t>(std::lround((2 * m - 1) * 1024.0));
  }
  return sign | static_cast<uint64_t>(std::lround(a * 16777216.0));  // a subnormal: multiples of 2^-24
}

// The bits of `x` in the float `dtype` (which holds it exactly), on a line where neighbouring
// representable values are neighbouring integers and +0 meets -0; nullopt for other dtypes.
std::optional<uint64_t> ordered_bits(ScalarType dtype, double x) {
  uint64_t bits = 0;
  int width = 0;
  switch (dtype) {
    case ScalarType::kDouble:
      std::memcpy(&bits, &x, 8);
      width = 64;
      break;
    case ScalarType::kFloat:
    case ScalarType::kBFloat16: {
      const auto f = static_cast<float>(x);
      uint32_t b = 0;
      std::memcpy(&b, &f, 4);
      bits = dtype == ScalarType::kFloat ? b : b >> 16;
      width = dtype == ScalarType::kFloat ? 32 : 16;
      break;
    }
    case ScalarType::kHalf:
      bits = half_bits(x);
      width = 16;
      break;
    default:
      return std::nullopt;
  }
  const uint64_t sign = uint64_t{1} << (width - 1);
  const uint64_t magnitude = bits & (sign - 1);
  return (bits & sign) != 0 ? sign - magnitude : sign + magnitude;
}

std::optional<ScalarType> float_dtype(const GapValue& v) {
  if (v.kind != GapValue::Kind::kTensor) return std::nullopt;
  switch (v.tensor.dtype) {
    case ScalarType::kHalf:
    case ScalarType::kBFloat16:
    case ScalarType::kFloat:
    case ScalarType::kDouble: return v.tensor.dtype;
    default: return std::nullopt;
  }
}

}  // namespace

int64_t output_channel_dim(const std::vector<std::string>& op_names, size_t rank) {
  if (rank < 2) return -1;
  if (rank >= 4) return 1;  // NCHW (NCDHW): PyTorch's layout of every 4-d activation
  for (const std::string& name : op_names) {
    std::string lower(name);
    std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    if (lower.find("conv") != std::string::npos) return 1;
  }
  return static_cast<int64_t>(rank) - 1;
}

Result<GapStats> gap_stats(const GapValue& aot, const GapValue& runtime, int64_t channel_dim) {
  ETSCOPE_ASSIGN_OR_RETURN(Doubles ta, raw_doubles(aot));
  ETSCOPE_ASSIGN_OR_RETURN(Doubles tb, raw_doubles(runtime));
  const std::vector<int64_t> shape = broadcast_shape(ta.shape, tb.shape);
  GapStats s;
  uint64_t channels = 0, inner = 1;
  if (channel_dim >= 0 && static_cast<size_t>(channel_dim) < shape.size()) {
    s.channel_dim = channel_dim;
    channels = static_cast<uint64_t>(shape[static_cast<size_t>(channel_dim)]);
    for (size_t d = static_cast<size_t>(channel_dim) + 1; d < shape.size(); ++d) inner *= static_cast<uint64_t>(shape[d]);
  }
  std::vector<Sum> signal(channels), noise(channels);
  const std::optional<ScalarType> fa = float_dtype(aot), fb = float_dtype(runtime);
  const bool ulps = fa && fb && *fa == *fb;
  Sum dot, aa, bb;
  uint64_t n = 0, ulp = 0, finite = 0;
  double rel = 0;
  bool has_rel = false;
  const bool ok = for_each_broadcast(ta, tb, [&](double x, double y) {
    s.aot_nan += std::isnan(x) ? 1 : 0;
    s.aot_inf += std::isinf(x) ? 1 : 0;
    s.runtime_nan += std::isnan(y) ? 1 : 0;
    s.runtime_inf += std::isinf(y) ? 1 : 0;
    if (x == y || (std::isnan(x) && std::isnan(y))) ++s.exact;
    if (std::isfinite(x) && std::isfinite(y)) {
      ++finite;
      const double d = std::fabs(y - x);
      s.max_abs = std::max(s.max_abs, d);
      if (x != 0) {
        rel = std::max(rel, d / std::fabs(x));
        has_rel = true;
      }
      dot.add(x * y);
      aa.add(x * x);
      bb.add(y * y);
      if (channels > 0) {
        const auto c = static_cast<size_t>((n / inner) % channels);
        signal[c].add(x * x);
        noise[c].add((y - x) * (y - x));
      }
      if (ulps) {
        const uint64_t ox = *ordered_bits(*fa, x), oy = *ordered_bits(*fa, y);
        ulp = std::max(ulp, ox > oy ? ox - oy : oy - ox);
      }
    }
    ++n;
  }, s.compared);
  if (!ok) return Error(ErrorCode::kInvalidArgument, "shapes " + describe(aot) + " and " + describe(runtime) + " do not broadcast");
  if (has_rel) s.max_rel = rel;
  if (ulps) s.max_ulp = ulp;
  const double na = aa.value(), nb = bb.value();
  if (finite > 0 && na == 0 && nb == 0) {
    s.cosine = 1.0;
  } else if (na > 0 && nb > 0) {
    s.cosine = std::clamp(dot.value() / (std::sqrt(na) * std::sqrt(nb)), -1.0, 1.0);
  }
  for (size_t c = 0; c < channels; ++c) {
    const double sig = signal[c].value(), err = noise[c].value();
    const double db = err == 0 ? std::numeric_limits<double>::infinity() : 10.0 * std::log10(sig / err);
    if (!s.worst_channel_sqnr_db || db < *s.worst_channel_sqnr_db) {
      s.worst_channel_sqnr_db = db;
      s.worst_channel = static_cast<int64_t>(c);
    }
  }
  return s;
}

std::vector<std::pair<std::string, std::string>> gap_stats_text(const GapStats& s) {
  auto number = [](double v) {
    if (std::isnan(v)) return std::string("nan");
    if (std::isinf(v)) return std::string(v > 0 ? "inf" : "-inf");
    char buf[40];
    std::snprintf(buf, sizeof buf, "%.3g", v);
    return std::string(buf);
  };
  std::vector<std::pair<std::string, std::string>> out;
  out.emplace_back("max abs", s.compared == 0 ? "-" : number(s.max_abs));
  out.emplace_back("max rel", s.max_rel ? number(*s.max_rel) : "-");
  std::string cosine = "-";
  if (s.cosine) {
    char buf[40];
    std::snprintf(buf, sizeof buf, "%.6f", *s.cosine);
    cosine = buf;
  }
  out.emplace_back("cosine", cosine);
  std::string worst = "-";
  if (s.worst_channel_sqnr_db) {
    worst = (std::isinf(*s.worst_channel_sqnr_db) && *s.worst_channel_sqnr_db > 0 ? std::string("exact")
                                                                                   : number(*s.worst_channel_sqnr_db) + " dB") +
            " (channel " + std::to_string(s.worst_channel) + " of dim " + std::to_string(s.channel_dim) + ")";
  }
  out.emplace_back("worst channel", worst);
  out.emplace_back("max ULP", s.max_ulp ? std::to_string(*s.max_ulp) : "-");
  out.emplace_back("exact", std::to_string(s.exact) + "/" + std::to_string(s.compared));
  const bool special = s.aot_nan + s.aot_inf + s.runtime_nan + s.runtime_inf > 0;
  out.emplace_back("NaN/Inf", special ? "aot " + std::to_string(s.aot_nan) + "/" + std::to_string(s.aot_inf) + ", runtime " +
                                            std::to_string(s.runtime_nan) + "/" + std::to_string(s.runtime_inf)
                                      : "-");
  return out;
}

Result<double> compare_values(GapMetric metric, const GapValue& a, const GapValue& b) {
  ETSCOPE_ASSIGN_OR_RETURN(Doubles ta, to_doubles(a));
  ETSCOPE_ASSIGN_OR_RETURN(Doubles tb, to_doubles(b));
  Sum abs_sum, sq_sum;
  uint64_t count = 0;
  const bool ok = for_each_broadcast(ta, tb, [&](double x, double y) {
    const double d = x - y;
    if (metric == GapMetric::kL1) {
      abs_sum.add(std::fabs(d));
    } else {
      sq_sum.add(d * d);
    }
  }, count);
  if (!ok) return Error(ErrorCode::kInvalidArgument, "shapes " + describe(a) + " and " + describe(b) + " do not broadcast");
  const double nan = std::numeric_limits<double>::quiet_NaN();
  switch (metric) {
    case GapMetric::kL1:
      return abs_sum.value();
    case GapMetric::kMSE:
      return count == 0 ? nan : sq_sum.value() / static_cast<double>(count);
    case GapMetric::kSNR: {
      Sum power;
      for (double x : ta.values) power.add(x * x);
      const double signal = ta.values.empty() ? nan : power.value() / static_cast<double>(ta.values.size());
      const double noise = count == 0 ? nan : sq_sum.value() / static_cast<double>(count);
      return 10.0 * std::log10(signal / noise);
    }
  }
  return nan;
}

Result<GapDetail> gap_detail(const GapValue& aot, const GapValue& runtime, size_t max_points, size_t bins) {
  ETSCOPE_ASSIGN_OR_RETURN(Doubles ta, to_doubles(aot));
  ETSCOPE_ASSIGN_OR_RETURN(Doubles tb, to_doubles(runtime));
  GapDetail d;
  d.shape = broadcast_shape(ta.shape, tb.shape);
  const size_t rank = d.shape.size();
  // First pass: extremes and the largest difference.
  uint64_t n = 0;
  Sum abs_sum;
  d.aot_min = d.runtime_min = std::numeric_limits<double>::infinity();
  d.aot_max = d.runtime_max = -std::numeric_limits<double>::infinity();
  const bool ok = for_each_broadcast(ta, tb, [&](double x, double y) {
    const double diff = std::fabs(y - x);
    if (diff > d.max_abs) {
      d.max_abs = diff;
      d.max_index = n;
      d.aot_at_max = x;
      d.runtime_at_max = y;
    } else if (n == 0) {
      d.aot_at_max = x;
      d.runtime_at_max = y;
    }
    abs_sum.add(diff);
    d.aot_min = std::min(d.aot_min, x), d.aot_max = std::max(d.aot_max, x);
    d.runtime_min = std::min(d.runtime_min, y), d.runtime_max = std::max(d.runtime_max, y);
    ++n;
  }, d.compared);
  if (!ok) return Error(ErrorCode::kInvalidArgument, "shapes " + describe(aot) + " and " + describe(runtime) + " do not broadcast");
  if (d.compared == 0) {
    d.aot_min = d.aot_max = d.runtime_min = d.runtime_max = 0;
    return d;
  }
  d.mean_abs = abs_sum.value() / static_cast<double>(d.compared);
  d.max_at.assign(rank, 0);
  uint64_t rest = d.max_index;
  for (size_t k = rank; k-- > 0;) {
    const uint64_t extent = static_cast<uint64_t>(d.shape[k]);
    d.max_at[k] = static_cast<int64_t>(rest % extent);
    rest /= extent;
  }
  // Second pass: histogram and sampled points.
  const uint64_t stride = max_points == 0 ? UINT64_MAX : std::max<uint64_t>(1, (d.compared + max_points - 1) / max_points);
  d.histogram.assign(std::max<size_t>(bins, 1), 0);
  const size_t nb = d.histogram.size();
  n = 0;
  uint64_t unused = 0;
  for_each_broadcast(ta, tb, [&](double x, double y) {
    size_t bin = nb / 2;
    if (d.max_abs > 0 && std::isfinite(d.max_abs)) {
      const double t = ((y - x) / d.max_abs + 1.0) * 0.5;  // 0..1
      bin = std::min(nb - 1, static_cast<size_t>(std::max(0.0, t) * static_cast<double>(nb)));
    }
    ++d.histogram[bin];
    if ((stride != UINT64_MAX && n % stride == 0) || n == d.max_index) d.points.emplace_back(x, y);
    ++n;
  }, unused);
  return d;
}

// ------------------------------------------------------------------ 4. Runtime side

namespace {

struct RuntimeOutput {
  Handles key;
  int32_t instruction = -1;
  const Event* event = nullptr;
  int64_t num_outputs = 1;
};

Result<GapValue> view_logged_tensor(const etdump::LoggedTensor& t, const Blob& buffer) {
  GapValue v;
  v.kind = GapValue::Kind::kTensor;
  v.tensor.dtype = t.dtype;
  v.tensor.shape = t.sizes;
  auto nbytes = dense_bytes(t.dtype, t.sizes);
  if (!nbytes) {
    return make_error(ErrorCode::kCorrupt, "%s: a logged tensor has an unusable dtype or shape", buffer.name().c_str());
  }
  if (*nbytes == 0) return v;  // Zero-size: ExecuTorch inflates zeros of that shape.
  ETSCOPE_ASSIGN_OR_RETURN(v.tensor.bytes, logged_tensor_bytes(t, buffer, *nbytes));
  return v;
}

// An event's debug_data: the list of its logged values, inflated as ExecuTorch inflates them.
Result<GapValue> runtime_value(const Inspector& in, const Event& e) {
  GapValue list;
  list.kind = GapValue::Kind::kList;
  for (uint32_t vi : e.debug_values) {
    const etdump::LoggedValue& lv = in.dump().values.at(vi);
    GapValue v;
    switch (lv.type) {
      case etdump::LoggedValue::Type::kInt: v.kind = GapValue::Kind::kScalar; v.scalar = static_cast<double>(lv.int_value); break;
      case etdump::LoggedValue::Type::kBool: v.kind = GapValue::Kind::kScalar; v.scalar = lv.bool_value ? 1 : 0; break;
      case etdump::LoggedValue::Type::kFloat:
      case etdump::LoggedValue::Type::kDouble: v.kind = GapValue::Kind::kScalar; v.scalar = lv.double_value; break;
      case etdump::LoggedValue::Type::kTensor:
      case etdump::LoggedValue::Type::kTensorList: {
        GapValue items;
        items.kind = GapValue::Kind::kList;
        for (const auto& t : lv.tensors) {
          ETSCOPE_ASSIGN_OR_RETURN(GapValue item, view_logged_tensor(t, *in.debug_buffer()));
          items.items.push_back(std::move(item));
        }
        if (lv.type == etdump::LoggedValue::Type::kTensorList) {
          v = std::move(items);
        } else if (!items.items.empty()) {
          v = std::move(items.items.front());
        }
        break;
      }
      case etdump::LoggedValue::Type::kNull:
      case etdump::LoggedValue::Type::kString:
        break;  // Inflate to None.
    }
    list.items.push_back(std::move(v));
  }
  return list;
}

// _merge_runtime_debug_handles: first's elements not in second, then second de-duplicated.
Handles merge_handles(const Handles& first, const Handles& second) {
  Handles out;
  for (int64_t x : first)
    if (std::find(second.begin(), second.end(), x) == second.end()) out.push_back(x);
  for (int64_t x : second)
    if (std::find(out.begin(), out.end(), x) == out.end()) out.push_back(x);
  return out;
}

struct RuntimeSide {
  std::vector<RuntimeOutput> outputs;                         // After merging, in dict order.
  std::vector<std::pair<Handles, std::string>> op_names;      // Pre-merge keys, insertion order.
};

RuntimeSide collect_runtime(const Inspector& in) {
  // Handles already covered by fine-grained delegate events, per backend.
  std::map<std::pair<bool, std::string>, std::set<int64_t>> inner;
  auto backend_key = [](const Event& e) { return std::make_pair(e.delegate_backend_name.has_value(), e.delegate_backend_name.value_or("")); };
  for (const EventBlock& b : in.blocks())
    for (const Event& e : b.events)
      if (e.is_delegated_op.value_or(false) && !e.op_types.empty() && !e.debug_values.empty() && e.debug_handles) {
        inner[backend_key(e)].insert(e.debug_handles->begin(), e.debug_handles->end());
      }

  RuntimeSide side;
  std::vector<RuntimeOutput> by_key;  // Insertion order; a replaced value keeps its position.
  std::map<Handles, size_t> position;
  for (const EventBlock& b : in.blocks()) {
    for (const Event& e : b.events) {
      if (e.name == events::kOperatorCall || e.op_types.empty() || !e.debug_handles) continue;
      const Handles& key = *e.debug_handles;
      if (e.name == events::kDelegateCall) {
        auto it = inner.find(backend_key(e));
        if (it != inner.end() && std::any_of(key.begin(), key.end(), [&](int64_t h) { return it->second.count(h) > 0; })) continue;
      }
      // ExecuTorch indexes the (empty) debug data of such events and fails; etscope skips them.
      if (e.debug_values.empty()) continue;
      auto [pos, fresh] = position.emplace(key, by_key.size());
      if (fresh) {
        if (e.instruction_id <= -1) {
          position.erase(pos);
          continue;
        }
        by_key.push_back(RuntimeOutput{key, e.instruction_id, &e, e.num_outputs});
        side.op_names.emplace_back(key, e.name);
      } else if (e.instruction_id > by_key[pos->second].instruction) {
        by_key[pos->second] = RuntimeOutput{key, e.instruction_id, &e, e.num_outputs};
        for (auto& [k, name] : side.op_names)
          if (k == key) name = e.name;
      }
    }
  }

  // merge_runtime_overlapping_debug_handles.
  for (const RuntimeOutput& cur : by_key) {
    Handles merged_key = cur.key;
    RuntimeOutput value = cur;
    std::vector<RuntimeOutput> kept;
    for (const RuntimeOutput& existing : side.outputs) {
      if (!overlaps(cur.key, existing.key)) {
        kept.push_back(existing);
        continue;
      }
      if (existing.instruction < cur.instruction) {
        merged_key = merge_handles(existing.key, merged_key);
      } else {
        merged_key = merge_handles(merged_key, existing.key);
        value = existing;
      }
    }
    value.key = merged_key;
    kept.push_back(std::move(value));
    side.outputs = std::move(kept);
  }
  return side;
}

// ------------------------------------------------------------------ 5. Matching

std::vector<std::string> find_op_names(const Handles& target, const std::vector<std::pair<Handles, std::vector<std::string>>>& names) {
  std::vector<std::string> out;
  for (const auto& [key, ops] : names)
    if (is_subset(key, target)) out.insert(out.end(), ops.begin(), ops.end());
  return out;
}

const etrecord::Graph* reference_graph(const Inspector& in, const std::string& name) {
  const etrecord::EtRecord* r = in.record();
  if (!r) return nullptr;
  if (name.empty() || name == "exported_program") return r->exported_program ? &*r->exported_program : nullptr;
  if (name == "edge_dialect_exported_program") {
    auto it = r->edge_programs.find(in.options().method.empty() ? "forward" : in.options().method);
    return it == r->edge_programs.end() ? nullptr : &it->second;
  }
  auto it = r->graph_map.find(name.find('/') == std::string::npos ? name + "/forward" : name);
  return it == r->graph_map.end() ? nullptr : &it->second;
}

// One candidate row before comparison.
struct Pair {
  Handles key;            // The runtime key (reported as the AOT handle too).
  size_t aot_entry = 0;
  GapValue aot, runtime;
};

// _find_matching_runtime_output_by_shape_and_dtype.
const GapValue& match_by_shape(const TensorView& aot, const std::vector<GapValue>& runtime) {
  std::vector<size_t> same_shape;
  for (size_t i = 0; i < runtime.size(); ++i)
    if (runtime[i].kind == GapValue::Kind::kTensor && runtime[i].tensor.shape == aot.shape) same_shape.push_back(i);
  if (same_shape.size() == 1) return runtime[same_shape[0]];
  if (same_shape.size() > 1) {
    std::vector<size_t> same_dtype;
    for (size_t i : same_shape)
      if (runtime[i].tensor.dtype == aot.dtype) same_dtype.push_back(i);
    if (same_dtype.size() == 1) return runtime[same_dtype[0]];
  }
  return runtime.back();
}

}  // namespace

namespace {

// The module outputs of a run: per innermost module path (root left out), the last event of the
// "Execute" runs that logged one floating tensor there, and that tensor; paths in first-seen order.
struct ModuleOutput {
  const Event* event = nullptr;
  GapValue value;
};

Result<std::vector<std::pair<std::string, ModuleOutput>>> module_outputs(const Inspector& in) {
  std::vector<std::pair<std::string, ModuleOutput>> out;
  std::map<std::string, size_t> at;
  for (const EventBlock& b : in.blocks()) {
    if (b.name != events::kBlockExecute) continue;
    for (const Event& e : b.events) {
      if (e.debug_values.empty() || e.num_outputs != 1 || e.is_operator_call() || !e.debug_handles || e.debug_handles->empty()) continue;
      // A delegate call logs its arguments and spans every module inside: not one module's output.
      if (e.name == events::kDelegateCall) continue;
      const etrecord::ModuleFrame* frame = innermost_module(e);
      if (frame == nullptr || frame->path.empty()) continue;
      ETSCOPE_ASSIGN_OR_RETURN(GapValue logged, runtime_value(in, e));
      if (logged.items.empty()) continue;
      GapValue& last = logged.items.back();
      if (last.kind != GapValue::Kind::kTensor || !is_floating_type(last.tensor.dtype)) continue;
      auto [it, fresh] = at.emplace(frame->path, out.size());
      if (fresh) out.push_back({frame->path, {}});
      out[it->second].second = ModuleOutput{&e, std::move(last)};
    }
  }
  return out;
}

}  // namespace

Result<AotIntermediates> run_as_reference(const Inspector& run, const Inspector& other) {
  for (const Inspector* in : {&run, &other}) {
    if (in->record() == nullptr || in->debug_buffer() == nullptr) {
      return Error(ErrorCode::kInvalidArgument, in->dump().name() + ": comparing two programs needs each run's ETRecord (module "
                                                                     "paths) and debug buffer (values)");
    }
  }
  ETSCOPE_ASSIGN_OR_RETURN(auto mine, module_outputs(run));
  ETSCOPE_ASSIGN_OR_RETURN(auto theirs, module_outputs(other));
  std::map<std::string, const ModuleOutput*> by_path;
  for (const auto& [path, m] : theirs) by_path.emplace(path, &m);
  AotIntermediates out;
  for (const auto& [path, m] : mine) {
    auto it = by_path.find(path);
    if (it == by_path.end() || it->second->value.tensor.shape != m.value.tensor.shape) continue;
    AotEntry e;
    e.handles = {m.event->debug_handles->back()};
    const Event& theirs_event = *it->second->event;
    e.op_names = {path + ": " + (theirs_event.op_types.empty() ? theirs_event.name : theirs_event.op_types.back())};
    e.output = it->second->value;
    out.entries.push_back(std::move(e));
  }
  if (out.entries.empty()) {
    return Error(ErrorCode::kInvalidArgument, other.dump().name() + ": no module of the other program logged an output of the shape "
                                                                   "this one logged (another model?)");
  }
  return out;
}

namespace {

// The stats of one compared pair of a row, channels by the row's op names.
Status add_stats(GapRow& row, const GapValue& aot, const GapValue& runtime, const std::string& dump_name) {
  std::vector<std::string> ops = row.aot_ops;
  ops.insert(ops.end(), row.runtime_ops.begin(), row.runtime_ops.end());
  const size_t rank = std::max(aot.kind == GapValue::Kind::kTensor ? aot.tensor.shape.size() : 0,
                               runtime.kind == GapValue::Kind::kTensor ? runtime.tensor.shape.size() : 0);
  auto stats = gap_stats(aot, runtime, output_channel_dim(ops, rank));
  if (!stats.ok()) return stats.error().with_context(dump_name);
  row.stats.push_back(*stats);
  return ok_status();
}

}  // namespace

Result<std::vector<GapRow>> calculate_numeric_gap(const Inspector& in, const AotIntermediates& aot, GapMetric metric) {
  const std::string& dump_name = in.dump().name();
  if (!in.record()) {
    return Error(ErrorCode::kInvalidArgument, dump_name + ": the numeric gap needs the ETRecord (debug handles)");
  }
  if (!in.debug_buffer()) {
    return Error(ErrorCode::kInvalidArgument, dump_name + ": the numeric gap needs the debug buffer the run wrote");
  }
  const RuntimeSide side = collect_runtime(in);
  if (side.outputs.empty()) {
    return Error(ErrorCode::kInvalidArgument,
                 dump_name + ": no linked event logged debug data (record at intermediate-output level with a debug buffer)");
  }

  // Overlap graph: nodes are the AOT entries, then the runtime outputs; components via
  // union-find over shared handles (an edge only joins an AOT node to a runtime node).
  const size_t na = aot.entries.size(), total = na + side.outputs.size();
  std::vector<size_t> parent(total);
  for (size_t i = 0; i < total; ++i) parent[i] = i;
  auto root = [&](size_t x) {
    while (parent[x] != x) x = parent[x] = parent[parent[x]];
    return x;
  };
  auto unite = [&](size_t x, size_t y) {
    x = root(x), y = root(y);
    if (x != y) parent[std::max(x, y)] = std::min(x, y);
  };
  std::map<int64_t, std::pair<std::vector<size_t>, std::vector<size_t>>> by_handle;
  for (size_t i = 0; i < na; ++i)
    for (int64_t h : aot.entries[i].handles) by_handle[h].first.push_back(i);
  for (size_t j = 0; j < side.outputs.size(); ++j)
    for (int64_t h : side.outputs[j].key) by_handle[h].second.push_back(na + j);
  for (const auto& [h, nodes] : by_handle) {
    if (nodes.first.empty() || nodes.second.empty()) continue;
    for (size_t a : nodes.first) unite(a, nodes.second.front());
    for (size_t r : nodes.second) unite(r, nodes.first.front());
  }
  // Components in order of their first node (ExecuTorch's DFS starts from each unvisited node).
  std::vector<std::vector<size_t>> components;
  std::map<size_t, size_t> component_of_root;
  for (size_t i = 0; i < total; ++i) {
    auto [it, fresh] = component_of_root.emplace(root(i), components.size());
    if (fresh) components.emplace_back();
    components[it->second].push_back(i);
  }

  std::vector<Pair> pairs;
  for (const auto& comp : components) {
    std::vector<size_t> aot_nodes, runtime_nodes;
    for (size_t n : comp) (n < na ? aot_nodes : runtime_nodes).push_back(n);
    if (aot_nodes.empty() || runtime_nodes.empty()) continue;
    if (runtime_nodes.size() != 1) {
      return Error(ErrorCode::kCorrupt, dump_name + ": expected one runtime debug handle per matched group, found " +
                                            std::to_string(runtime_nodes.size()));
    }
    const RuntimeOutput& rt = side.outputs[runtime_nodes[0] - na];
    // ExecuTorch checks only the first handle of each AOT key against the runtime key.
    bool subset = true;
    for (size_t a : aot_nodes) subset &= std::find(rt.key.begin(), rt.key.end(), aot.entries[a].handles.front()) != rt.key.end();
    if (!subset) continue;
    ETSCOPE_ASSIGN_OR_RETURN(GapValue runtime, runtime_value(in, *rt.event));
    for (int64_t i = 0; i < rt.num_outputs; ++i) {
      if (static_cast<size_t>(i) >= rt.key.size()) break;  // ExecuTorch: IndexError.
      const int64_t handle = rt.key[rt.key.size() - 1 - static_cast<size_t>(i)];
      std::optional<size_t> match;
      for (size_t a : aot_nodes)
        if (aot.entries[a].handles == Handles{handle}) match = a;
      if (!match) continue;
      const GapValue& aot_out = aot.entries[*match].output;
      const size_t k = static_cast<size_t>(i) + 1;  // Runtime element at index -(i+1).
      Pair p{rt.key, *match, aot_out, {}};
      if (runtime.items.size() < k) continue;  // No such logged value (ExecuTorch: IndexError).
      const GapValue& last = runtime.items[runtime.items.size() - k];
      if (aot_out.is_list()) {
        if (last.is_list() && std::all_of(last.items.begin(), last.items.end(), [](const GapValue& t) { return t.kind == GapValue::Kind::kTensor; })) {
          p.runtime = last;
        } else if (last.kind == GapValue::Kind::kTensor) {
          p.runtime = runtime;
        } else {
          return Error(ErrorCode::kInvalidArgument, dump_name + ": the runtime value matched to the sequence output of handle " +
                                                        std::to_string(handle) + " is neither a tensor nor a list of tensors");
        }
      } else if (rt.num_outputs == 1 && runtime.items.size() > 1 && aot_out.kind == GapValue::Kind::kTensor) {
        p.runtime = match_by_shape(aot_out.tensor, runtime.items);
      } else {
        p.runtime = last;
      }
      // A Python dict keyed by (handles, AOT output): the same pair again replaces the value.
      auto same = std::find_if(pairs.begin(), pairs.end(), [&](const Pair& q) { return q.key == p.key && q.aot_entry == p.aot_entry; });
      if (same != pairs.end()) {
        same->runtime = std::move(p.runtime);
      } else {
        pairs.push_back(std::move(p));
      }
    }
  }

  std::vector<std::pair<Handles, std::vector<std::string>>> aot_names, runtime_names;
  for (const AotEntry& e : aot.entries) aot_names.emplace_back(e.handles, e.op_names);
  for (const auto& [key, name] : side.op_names) runtime_names.push_back({key, {name}});
  const etrecord::Graph* graph = reference_graph(in, aot.reference_graph);

  std::vector<GapRow> rows;
  for (Pair& p : pairs) {
    if (p.aot.kind == GapValue::Kind::kNone || p.runtime.kind == GapValue::Kind::kNone) continue;
    if (p.aot.is_list() && p.aot.items.size() > 1) continue;
    GapRow row;
    // Values that cannot be compared (shapes that do not broadcast) mean AOT outputs of other
    // inputs than the run's, most often: say where and what to check.
    auto value_mismatch = [&](const Error& e) {
      std::string handles;
      for (int64_t h : p.key) handles += (handles.empty() ? "" : ",") + std::to_string(h);
      return Error(e.code(), dump_name + ": debug handles " + handles + ": the AOT and runtime values cannot be compared (" + e.message() +
                                 "): were the AOT intermediates made from the run's inputs?");
    };
    row.aot_handles = p.key;
    row.aot_ops = find_op_names(p.key, aot_names);
    row.runtime_ops = find_op_names(p.key, runtime_names);
    row.runtime_handles = p.key;
    if (p.aot.is_list() != p.runtime.is_list()) {
      return Error(ErrorCode::kInvalidArgument, dump_name + ": AOT output " + describe(p.aot) + " and runtime output " +
                                                    describe(p.runtime) + " must both be sequences or both not");
    }
    if (p.aot.is_list()) {
      if (p.aot.items.size() != p.runtime.items.size()) {
        return Error(ErrorCode::kInvalidArgument, dump_name + ": sequences " + describe(p.aot) + " and " + describe(p.runtime) +
                                                      " differ in length");
      }
      for (size_t i = 0; i < p.aot.items.size(); ++i) {
        auto g = compare_values(metric, p.aot.items[i], p.runtime.items[i]);
        if (!g.ok()) return value_mismatch(g.error());
        row.gap.push_back(*g);
        ETSCOPE_TRY(add_stats(row, p.aot.items[i], p.runtime.items[i], dump_name));
      }
    } else {
      auto g = compare_values(metric, p.aot, p.runtime);
      if (!g.ok()) return value_mismatch(g.error());
      row.gap.push_back(*g);
      ETSCOPE_TRY(add_stats(row, p.aot, p.runtime, dump_name));
    }
    for (const std::string& op : row.aot_ops) {
      if (std::any_of(row.stack_traces.begin(), row.stack_traces.end(), [&](const auto& s) { return s.first == op; })) continue;
      std::optional<std::string> trace;
      if (const etrecord::GraphNode* node = graph ? graph->find_node(op) : nullptr; node && !node->stack_trace.empty()) {
        trace = node->stack_trace;
      }
      row.stack_traces.emplace_back(op, std::move(trace));
    }
    row.aot_output = std::move(p.aot);
    row.runtime_output = std::move(p.runtime);
    rows.push_back(std::move(row));
  }
  return rows;
}

// ------------------------------------------------------------------ 6. Inputs, first divergence

namespace {

InputCheck not_recorded(std::string why) {
  InputCheck c;
  c.outcome = InputCheck::Outcome::kNotRecorded;
  c.message = std::move(why);
  return c;
}

InputCheck different(const std::string& dump_name, const std::string& what, double max_abs) {
  InputCheck c;
  c.outcome = InputCheck::Outcome::kDifferent;
  c.message = dump_name + ": the run used different inputs from the AOT intermediates (" + what +
              "): rerun with --inputs-from-etrecord";
  c.max_abs_difference = max_abs;
  return c;
}

}  // namespace

Result<InputCheck> check_run_inputs(const Inspector& in, double rtol, double atol) {
  const std::string& dump_name = in.dump().name();
  const EventBlock* block = nullptr;
  for (const EventBlock& b : in.blocks())
    if (!b.run_inputs.empty()) {
      block = &b;
      break;
    }
  if (block == nullptr || !in.debug_buffer()) {
    return not_recorded(dump_name + ": the run's inputs were not recorded (etscope run at intermediate-output level with a "
                                    "debug buffer records them): cannot check that they are the AOT inputs");
  }
  if (!in.record()) return not_recorded(dump_name + ": no ETRecord: cannot check the run's inputs");
  // The method the block ran (linking found it), else the Inspector's fallback.
  const std::string method = !block->method.empty()         ? block->method
                             : !in.options().method.empty() ? in.options().method
                                                            : std::string("forward");
  auto aot_inputs = in.record()->aot_inputs_of(method);
  if (!aot_inputs.ok()) return not_recorded(aot_inputs.error().message() + ": cannot check the run's inputs");
  const std::vector<etrecord::TensorValue>& want = aot_inputs->tensors;

  // The run's tensor inputs in order (scalar inputs are fixed at export).
  std::vector<GapValue> got;
  for (uint32_t vi : block->run_inputs) {
    const etdump::LoggedValue& lv = in.dump().values.at(vi);
    if (lv.type != etdump::LoggedValue::Type::kTensor || lv.tensors.empty()) continue;
    ETSCOPE_ASSIGN_OR_RETURN(GapValue v, view_logged_tensor(lv.tensors.front(), *in.debug_buffer()));
    got.push_back(std::move(v));
  }
  if (got.size() != want.size()) {
    return different(dump_name, std::to_string(got.size()) + " tensor inputs, the ETRecord has " + std::to_string(want.size()), 0);
  }
  InputCheck check;
  check.outcome = InputCheck::Outcome::kSame;
  for (size_t i = 0; i < got.size(); ++i) {
    const TensorView& t = got[i].tensor;
    const etrecord::TensorValue& w = want[i];
    const std::string name = "input " + std::to_string(i);
    if (t.dtype != w.dtype || t.shape != w.shape) {
      return different(dump_name, name + " is " + describe(got[i]) + ", the AOT input " + shape_text(w.dtype, w.shape), 0);
    }
    const uint64_t n = t.numel();
    auto need = dense_bytes(w.dtype, w.shape);
    if (!need || *need > w.bytes.size() || !is_numeric(w.dtype)) {
      return different(dump_name, name + ": the ETRecord's tensor cannot be compared", 0);
    }
    uint64_t mismatched = 0;
    for (uint64_t k = 0; k < n; ++k) {
      const double a = element_as_double(t.dtype, t.bytes.data(), k);
      const double b = element_as_double(w.dtype, w.bytes.data(), k);
      if (std::isnan(a) && std::isnan(b)) continue;
      const double d = std::fabs(a - b);
      if (!(d <= atol + rtol * std::fabs(b))) ++mismatched;
      if (!(d <= check.max_abs_difference)) check.max_abs_difference = d;
    }
    if (mismatched > 0) {
      char detail[160];
      std::snprintf(detail, sizeof detail, "%s: %llu of %llu elements differ, max |difference| %.6g", name.c_str(),
                    static_cast<unsigned long long>(mismatched), static_cast<unsigned long long>(n), check.max_abs_difference);
      return different(dump_name, detail, check.max_abs_difference);
    }
  }
  return check;
}

bool gaps_pass(const std::vector<double>& gaps, GapMetric metric, double threshold) {
  return std::any_of(gaps.begin(), gaps.end(), [&](double g) {
    // NaN comes from nothing to compare (0/0: empty tensors, an all-zero SNR signal and noise).
    if (std::isnan(g)) return false;
    return metric == GapMetric::kSNR ? g < threshold : g > threshold;
  });
}

bool gap_passes(const GapRow& row, GapMetric metric, double threshold) { return gaps_pass(row.gap, metric, threshold); }

const Event* gap_row_event(const Inspector& inspector, const GapRow& row) {
  auto covered = [&](const std::vector<int64_t>& handles) {
    return !handles.empty() && std::all_of(handles.begin(), handles.end(), [&](int64_t h) {
      return std::find(row.runtime_handles.begin(), row.runtime_handles.end(), h) != row.runtime_handles.end();
    });
  };
  const Event* best = nullptr;
  for (const EventBlock& block : inspector.blocks()) {
    for (const Event& e : block.events) {
      if (!e.debug_handles || e.is_operator_call() || e.is_framework() || !covered(*e.debug_handles)) continue;
      if (best == nullptr || e.instruction_id > best->instruction_id) best = &e;
    }
  }
  return best;
}

LocalGaps local_gaps(const std::vector<GapRow>& accumulated, const std::vector<GapRow>& forced) {
  std::map<Handles, const GapRow*> by_handles;
  for (const GapRow& r : forced) by_handles.emplace(r.aot_handles, &r);
  LocalGaps out;
  out.reserve(accumulated.size());
  for (const GapRow& r : accumulated) {
    auto it = by_handles.find(r.aot_handles);
    const bool own = it != by_handles.end() && it->second->gap.size() == r.gap.size();
    out.push_back(own ? std::optional<std::vector<double>>(it->second->gap) : std::nullopt);
  }
  return out;
}

std::optional<size_t> first_local_divergence(const LocalGaps& local, GapMetric metric, double threshold) {
  for (size_t i = 0; i < local.size(); ++i) {
    if (local[i] && gaps_pass(*local[i], metric, threshold)) return i;
  }
  return std::nullopt;
}

std::pair<std::string, std::string> local_run_paths(const std::string& etdump_path, const std::string& debug_buffer_path) {
  auto local = [](const std::string& path) {
    std::filesystem::path p(path);
    const std::string ext = p.extension().string();
    return (p.parent_path() / (p.stem().string() + ".local" + ext)).string();
  };
  return {local(etdump_path), local(debug_buffer_path)};
}

std::optional<size_t> first_divergence(const std::vector<GapRow>& rows, GapMetric metric, double threshold) {
  for (size_t i = 0; i < rows.size(); ++i)
    if (gap_passes(rows[i], metric, threshold)) return i;
  return std::nullopt;
}

double default_gap_threshold(GapMetric metric) {
  switch (metric) {
    case GapMetric::kL1: return 1e-3;
    case GapMetric::kMSE: return 1e-6;
    case GapMetric::kSNR: return 40.0;
  }
  return 0;
}

std::vector<GapOverInputs> gaps_over_inputs(const std::vector<std::vector<GapRow>>& per_set, GapMetric metric) {
  std::vector<GapOverInputs> out;
  if (per_set.empty()) return out;
  for (const GapRow& row : per_set.front()) {
    GapOverInputs g;
    g.runtime_handles = row.runtime_handles;
    g.aot_ops = row.aot_ops;
    double sum = 0;
    size_t n = 0;
    for (size_t k = 0; k < per_set.size(); ++k) {
      std::optional<double> v;
      for (const GapRow& r : per_set[k]) {
        if (r.runtime_handles == row.runtime_handles && !r.gap.empty()) {
          v = r.gap.front();
          break;
        }
      }
      g.per_input.push_back(v);
      if (!v) continue;
      // The worst: the one that passes a threshold first (the larger L1 / MSE, the lower SNR).
      const bool worse = n == 0 || (metric == GapMetric::kSNR ? *v < g.worst : *v > g.worst);
      if (worse) {
        g.worst = *v;
        g.worst_input = k;
      }
      sum += *v;
      ++n;
    }
    if (n == 0) continue;
    g.mean = sum / static_cast<double>(n);
    out.push_back(std::move(g));
  }
  return out;
}

}  // namespace etscope::inspect
