#include "etscope/formats/npy.h"

#include <cstring>

#include "etscope/formats/blob.h"
#include "etscope/core/checked.h"

namespace etscope {
namespace {

struct DtypeCode {
  const char* descr;  // without the byte-order character
  ScalarType type;
};

constexpr DtypeCode kCodes[] = {
    {"b1", ScalarType::kBool},   {"u1", ScalarType::kByte},   {"i1", ScalarType::kChar},
    {"i2", ScalarType::kShort},  {"i4", ScalarType::kInt},    {"i8", ScalarType::kLong},
    {"f2", ScalarType::kHalf},   {"f4", ScalarType::kFloat},  {"f8", ScalarType::kDouble},
    {"u2", ScalarType::kUInt16}, {"u4", ScalarType::kUInt32}, {"u8", ScalarType::kUInt64},
};

// The text after `'key':` in the header dict, up to (not including) the next top-level ',' or
// '}'. Parenthesised tuples are kept whole.
bool dict_value(const std::string& header, const std::string& key, std::string* out) {
  const size_t k = header.find("'" + key + "'");
  if (k == std::string::npos) return false;
  const size_t colon = header.find(':', k);
  if (colon == std::string::npos) return false;
  size_t i = colon + 1;
  while (i < header.size() && header[i] == ' ') ++i;
  const size_t start = i;
  int depth = 0;
  for (; i < header.size(); ++i) {
    const char c = header[i];
    if (c == '(') ++depth;
    if (c == ')' && --depth < 0) return false;
    if (depth == 0 && (c == ',' || c == '}')) break;
  }
  if (i >= header.size() || depth != 0) return false;
  *out = header.substr(start, i - start);
  while (!out->empty() && out->back() == ' ') out->pop_back();
  return true;
}

}  // namespace

Result<NpyArray> parse_npy(std::span<const uint8_t> bytes, const std::string& name) {
  static const uint8_t kMagic[] = {0x93, 'N', 'U', 'M', 'P', 'Y'};
  if (bytes.size() < 10 || std::memcmp(bytes.data(), kMagic, 6) != 0) {
    return Error(ErrorCode::kWrongKind, name + ": not a .npy file (no \\x93NUMPY magic)");
  }
  const uint8_t major = bytes[6];
  size_t header_len = 0, header_start = 0;
  if (major == 1) {
    header_len = static_cast<size_t>(bytes[8]) | static_cast<size_t>(bytes[9]) << 8;
    header_start = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12) return Error(ErrorCode::kTruncated, name + ": .npy header is truncated");
    header_len = checked::load_u32(bytes.data() + 8);
    header_start = 12;
  } else {
    return make_error(ErrorCode::kNotSupported, "%s: .npy format version %d is not supported", name.c_str(), major);
  }
  if (!checked::range_fits(header_start, header_len, bytes.size())) {
    return Error(ErrorCode::kTruncated, name + ": .npy header is truncated");
  }
  const std::string header(reinterpret_cast<const char*>(bytes.data() + header_start), header_len);
  std::string descr, fortran, shape;
  if (!dict_value(header, "descr", &descr) || !dict_value(header, "fortran_order", &fortran) ||
      !dict_value(header, "shape", &shape)) {
    return Error(ErrorCode::kCorrupt, name + ": .npy header lacks descr, fortran_order or shape");
  }
  if (descr.size() != 5 || descr.front() != '\'' || descr.back() != '\'') {
    return Error(ErrorCode::kNotSupported, name + ": .npy dtype " + descr + " is not supported (structured or object?)");
  }
  const char order = descr[1];
  const std::string code = descr.substr(2, 2);
  if (order == '>' && code != "b1" && code != "u1" && code != "i1") {
    return Error(ErrorCode::kNotSupported, name + ": big-endian .npy data is not supported");
  }
  NpyArray out;
  bool found = false;
  for (const DtypeCode& c : kCodes) {
    if (code == c.descr) {
      out.dtype = c.type;
      found = true;
    }
  }
  if (!found) return Error(ErrorCode::kNotSupported, name + ": .npy dtype " + descr + " is not supported");
  if (fortran != "False") return Error(ErrorCode::kNotSupported, name + ": Fortran-order .npy arrays are not supported");
  if (shape.size() < 2 || shape.front() != '(' || shape.back() != ')') {
    return Error(ErrorCode::kCorrupt, name + ": .npy shape " + shape + " is not a tuple");
  }
  uint64_t numel = 1;
  size_t i = 1;
  while (i < shape.size() - 1) {
    while (i < shape.size() - 1 && (shape[i] == ' ' || shape[i] == ',')) ++i;
    if (i >= shape.size() - 1) break;
    int64_t v = 0;
    size_t digits = 0;
    while (i < shape.size() - 1 && shape[i] >= '0' && shape[i] <= '9') {
      if (v > (int64_t{1} << 40)) return Error(ErrorCode::kCorrupt, name + ": .npy dimension too large");
      v = v * 10 + (shape[i] - '0');
      ++i;
      ++digits;
    }
    if (digits == 0) return Error(ErrorCode::kCorrupt, name + ": .npy shape " + shape + " is not a tuple of integers");
    out.shape.push_back(v);
    auto product = checked::mul(numel, static_cast<uint64_t>(v));
    if (!product) return Error(ErrorCode::kCorrupt, name + ": .npy element count overflows");
    numel = *product;
  }
  const uint64_t nbytes = numel * *element_size(out.dtype);
  const size_t data_start = header_start + header_len;
  if (!checked::range_fits(data_start, nbytes, bytes.size())) {
    return make_error(ErrorCode::kTruncated, "%s: .npy data holds %zu bytes, its shape needs %llu", name.c_str(),
                      bytes.size() - data_start, static_cast<unsigned long long>(nbytes));
  }
  out.data.assign(bytes.begin() + static_cast<std::ptrdiff_t>(data_start),
                  bytes.begin() + static_cast<std::ptrdiff_t>(data_start + nbytes));
  return out;
}

Result<NpyArray> read_npy(const std::string& path) {
  ETSCOPE_ASSIGN_OR_RETURN(auto blob, Blob::open_file(path));
  return parse_npy(blob->bytes(), path);
}

Result<std::vector<uint8_t>> encode_npy(ScalarType dtype, std::span<const int64_t> shape, std::span<const uint8_t> data) {
  const char* code = nullptr;
  for (const DtypeCode& c : kCodes) {
    if (c.type == dtype) code = c.descr;
  }
  if (code == nullptr) {
    return Error(ErrorCode::kNotSupported, "dtype " + scalar_type_name(dtype) + " has no .npy equivalent");
  }
  std::string header = "{'descr': '";
  header += (dtype == ScalarType::kBool || dtype == ScalarType::kByte || dtype == ScalarType::kChar) ? '|' : '<';
  header += code;
  header += "', 'fortran_order': False, 'shape': (";
  for (size_t i = 0; i < shape.size(); ++i) header += std::to_string(shape[i]) + (shape.size() == 1 || i + 1 < shape.size() ? "," : "");
  header += "), }";
  // Pad with spaces so the data starts on a 64-byte boundary; end with a newline.
  const size_t total = (10 + header.size() + 1 + 63) / 64 * 64;
  header.append(total - 10 - header.size() - 1, ' ');
  header += '\n';
  static const char kMagic[] = "\x93NUMPY\x01\x00";
  std::string prefix(kMagic, 8);
  prefix.push_back(static_cast<char>(header.size() & 0xff));
  prefix.push_back(static_cast<char>(header.size() >> 8));
  std::vector<uint8_t> out(prefix.size() + header.size() + data.size());
  std::memcpy(out.data(), prefix.data(), prefix.size());
  std::memcpy(out.data() + prefix.size(), header.data(), header.size());
  if (!data.empty()) std::memcpy(out.data() + prefix.size() + header.size(), data.data(), data.size());
  return out;
}

Status write_npy(const std::string& path, ScalarType dtype, std::span<const int64_t> shape, std::span<const uint8_t> data) {
  auto bytes = encode_npy(dtype, shape, data);
  if (!bytes.ok()) return bytes.error().with_context(path);
  return write_file_bytes(path, *bytes);
}

}  // namespace etscope
