// runtime_bench: times etscope's runtime on one program, for bench/bench_runtime.py.
//
//   runtime_bench MODEL.pte [--ptd FILE] [--input FILE.npy ...] [--iterations N] [--warmup N]
//
// Prints one JSON object: load time, per-iteration latencies (ms), peak RSS and the bytes of
// arenas and weights, so the caller can report memory beyond what the program itself needs.
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "etscope/formats/ptd_reader.h"
#include "etscope/formats/npy.h"
#include "etscope/formats/pte_reader.h"
#include "etscope/runtime/method.h"

using namespace etscope;
using Clock = std::chrono::steady_clock;

namespace {

long peak_rss_kb() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmHWM:", 0) == 0) return std::strtol(line.c_str() + 6, nullptr, 10);
  }
  return -1;
}

int fail(const std::string& message) {
  std::fprintf(stderr, "runtime_bench: %s\n", message.c_str());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) return fail("usage: runtime_bench MODEL.pte [--ptd F] [--input F.npy ...] [--iterations N] [--warmup N]");
  std::string model = argv[1];
  std::vector<std::string> ptds, inputs;
  int iterations = 20, warmup = 3;
  for (int i = 2; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--ptd" && i + 1 < argc) ptds.push_back(argv[++i]);
    else if (a == "--input" && i + 1 < argc) inputs.push_back(argv[++i]);
    else if (a == "--iterations" && i + 1 < argc) iterations = std::atoi(argv[++i]);
    else if (a == "--warmup" && i + 1 < argc) warmup = std::atoi(argv[++i]);
    else return fail("unknown argument " + a);
  }
  const auto t0 = Clock::now();
  auto program = PteReader::open(model);
  if (!program.ok()) return fail(program.error().message());
  std::vector<TensorDataFile> files;
  files.reserve(ptds.size());
  for (const auto& p : ptds) {
    auto f = PtdReader::open(p);
    if (!f.ok()) return fail(f.error().message());
    files.push_back(std::move(f).value());
  }
  rt::MethodOptions options;
  for (const auto& f : files) options.external_data.push_back(&f);
  auto method = rt::Method::load(*program, "forward", options);
  if (!method.ok()) return fail(method.error().message());
  const double load_ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
  rt::Method& m = **method;

  std::vector<NpyArray> arrays(m.num_inputs());
  std::mt19937 rng(0);
  for (size_t i = 0; i < m.num_inputs(); ++i) {
    if (i < inputs.size()) {
      auto a = read_npy(inputs[i]);
      if (!a.ok()) return fail(a.error().message());
      arrays[i] = std::move(a).value();
    } else {
      const rt::TensorImpl& t = *m.input(i).tensor;
      arrays[i].data.assign(t.nbytes(), 0);
      if (t.dtype() == ScalarType::kFloat) {
        auto* f = reinterpret_cast<float*>(arrays[i].data.data());
        for (int64_t k = 0; k < t.numel(); ++k) f[k] = std::uniform_real_distribution<float>(-1, 1)(rng);
      }
    }
    Status s = m.set_input(i, arrays[i].data, arrays[i].shape);
    if (!s.ok()) return fail(s.error().message());
  }
  // Inputs are copied in before every execution (the plan may reuse their bytes), as
  // ExecuTorch's Module::forward does; the copy is part of the timing on both sides.
  auto reset = [&]() {
    for (size_t i = 0; i < m.num_inputs(); ++i) (void)m.set_input(i, arrays[i].data, arrays[i].shape);
  };
  for (int i = 0; i < warmup; ++i) {
    reset();
    Status s = m.execute();
    if (!s.ok()) return fail(s.error().message());
  }
  std::vector<double> samples;
  for (int i = 0; i < iterations; ++i) {
    const auto a = Clock::now();
    reset();
    Status s = m.execute();
    samples.push_back(std::chrono::duration<double, std::milli>(Clock::now() - a).count());
    if (!s.ok()) return fail(s.error().message());
  }
  uint64_t arena_bytes = 0, weight_bytes = 0;
  const ExecutionPlan& plan = *program->find_plan("forward");
  for (size_t k = 1; k < plan.non_const_buffer_sizes.size(); ++k) arena_bytes += static_cast<uint64_t>(plan.non_const_buffer_sizes[k]);
  for (const Value& v : plan.values) {
    if (v.kind == ValueKind::kTensor && (v.tensor.data_kind == TensorDataKind::kConstant ||
                                          v.tensor.data_kind == TensorDataKind::kExternalConstant)) {
      weight_bytes += v.tensor.nbytes;
    }
  }
  std::printf("{\"load_ms\": %.4f, \"samples_ms\": [", load_ms);
  for (size_t i = 0; i < samples.size(); ++i) std::printf("%s%.5f", i ? ", " : "", samples[i]);
  std::printf("], \"peak_rss_kb\": %ld, \"arena_bytes\": %llu, \"weight_bytes\": %llu, \"file_bytes\": %llu}\n", peak_rss_kb(),
              static_cast<unsigned long long>(arena_bytes), static_cast<unsigned long long>(weight_bytes),
              static_cast<unsigned long long>(program->file_size));
  return 0;
}
