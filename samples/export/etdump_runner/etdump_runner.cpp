// etdump_runner: run a .pte N times with ExecuTorch's C++ runtime (the libraries shipped
// in the executorch wheel) and write an ETDump at a chosen debug level.
//
// The Python pybindings cannot select the ETDump debug level; this tool exists to get
// the "program outputs" level, which only the C++ API exposes.
//
//   etdump_runner PTE ETDP DEBUG_BIN LEVEL RUNS BUFFER_BYTES INPUT.npy...
//
// LEVEL: program_outputs | intermediate_outputs | none
// Inputs are .npy files (little-endian, C order; float32, int64 or int32), one per
// method input, in order. The debug buffer file is written at BUFFER_BYTES bytes.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include <executorch/devtools/etdump/etdump_flatcc.h>
#include <executorch/extension/module/module.h>
#include <executorch/extension/tensor/tensor.h>
#include <executorch/runtime/core/event_tracer.h>

using executorch::aten::ScalarType;
using executorch::etdump::ETDumpGen;
using executorch::extension::Module;
using executorch::extension::TensorPtr;
using executorch::runtime::EValue;
using executorch::runtime::EventTracerDebugLogLevel;

namespace {

struct Npy {
  std::vector<int> shape;
  ScalarType dtype = ScalarType::Float;
  std::vector<uint8_t> bytes;
};

bool fail(const std::string& msg) {
  std::fprintf(stderr, "etdump_runner: %s\n", msg.c_str());
  return false;
}

// Minimal .npy (v1/v2/v3) reader for C-ordered little-endian arrays.
bool read_npy(const std::string& path, Npy& out) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return fail("cannot open " + path);
  std::vector<char> all((std::istreambuf_iterator<char>(f)), {});
  if (all.size() < 10 || std::memcmp(all.data(), "\x93NUMPY", 6) != 0)
    return fail("not an npy file: " + path);
  const unsigned major = static_cast<unsigned char>(all[6]);
  size_t header_len = 0, pos = 0;
  if (major == 1) {
    header_len = static_cast<unsigned char>(all[8]) |
        (static_cast<unsigned char>(all[9]) << 8);
    pos = 10;
  } else {
    header_len = 0;
    for (int i = 0; i < 4; ++i)
      header_len |= size_t(static_cast<unsigned char>(all[8 + i])) << (8 * i);
    pos = 12;
  }
  const std::string header(all.data() + pos, header_len);
  pos += header_len;
  auto field = [&](const std::string& key) -> std::string {
    const size_t k = header.find("'" + key + "'");
    if (k == std::string::npos) return "";
    size_t v = header.find(':', k) + 1;
    while (header[v] == ' ') ++v;
    if (header[v] == '(') return header.substr(v + 1, header.find(')', v) - v - 1);
    if (header[v] == '\'') return header.substr(v + 1, header.find('\'', v + 1) - v - 1);
    return header.substr(v, header.find(',', v) - v);
  };
  if (field("fortran_order").find("False") == std::string::npos)
    return fail("fortran order not supported: " + path);
  const std::string descr = field("descr");
  size_t elem = 4;
  if (descr == "<f4") {
    out.dtype = ScalarType::Float;
  } else if (descr == "<i8") {
    out.dtype = ScalarType::Long;
    elem = 8;
  } else if (descr == "<i4") {
    out.dtype = ScalarType::Int;
  } else {
    return fail("unsupported dtype " + descr + " in " + path);
  }
  std::stringstream ss(field("shape"));
  std::string item;
  size_t numel = 1;
  while (std::getline(ss, item, ',')) {
    if (item.find_first_not_of(' ') == std::string::npos) continue;
    out.shape.push_back(std::stoi(item));
    numel *= out.shape.back();
  }
  if (all.size() - pos < numel * elem) return fail("truncated " + path);
  out.bytes.assign(all.begin() + pos, all.begin() + pos + numel * elem);
  return true;
}

bool write_file(const std::string& path, const void* data, size_t size) {
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) return fail("cannot write " + path);
  const bool ok = std::fwrite(data, 1, size, f) == size;
  std::fclose(f);
  return ok || fail("short write " + path);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 7) {
    std::fprintf(stderr,
                 "usage: %s PTE ETDP DEBUG_BIN LEVEL RUNS BUFFER_BYTES [INPUT.npy...]\n",
                 argv[0]);
    return 2;
  }
  const std::string pte = argv[1], etdp = argv[2], dbg = argv[3], level = argv[4];
  const int runs = std::atoi(argv[5]);
  const size_t buffer_bytes = std::strtoull(argv[6], nullptr, 10);

  auto tracer = std::make_unique<ETDumpGen>();
  ETDumpGen* gen = tracer.get();
  std::vector<uint8_t> debug_buffer(buffer_bytes, 0);
  if (level != "none") {
    if (buffer_bytes == 0) return fail("buffer size 0"), 1;
    gen->set_debug_buffer({debug_buffer.data(), debug_buffer.size()});
    gen->set_event_tracer_debug_level(level == "program_outputs"
                                          ? EventTracerDebugLogLevel::kProgramOutputs
                                          : EventTracerDebugLogLevel::kIntermediateOutputs);
  }
  Module module(pte, Module::LoadMode::File, std::move(tracer));

  std::vector<Npy> arrays(argc - 7);
  std::vector<TensorPtr> tensors;
  for (int i = 7; i < argc; ++i) {
    if (!read_npy(argv[i], arrays[i - 7])) return 1;
    Npy& a = arrays[i - 7];
    tensors.push_back(executorch::extension::make_tensor_ptr(
        a.shape, a.bytes.data(), a.dtype));
  }
  std::vector<EValue> inputs;
  for (auto& t : tensors) inputs.emplace_back(t);

  for (int r = 0; r < runs; ++r) {
    auto res = module.execute("forward", inputs);
    if (!res.ok()) {
      std::fprintf(stderr, "execute failed: error 0x%x\n", static_cast<int>(res.error()));
      return 1;
    }
  }
  auto result = gen->get_etdump_data();
  if (result.buf == nullptr || result.size == 0) return fail("no etdump data"), 1;
  if (!write_file(etdp, result.buf, result.size)) return 1;
  std::free(result.buf);
  if (level != "none" && !write_file(dbg, debug_buffer.data(), debug_buffer.size())) return 1;
  std::printf("wrote %s (%zu bytes)\n", etdp.c_str(), static_cast<size_t>(result.size));
  return 0;
}
