// runtime_bench: times etscope's runtime on one program, for bench/bench_runtime.py.
//
//   runtime_bench MODEL.pte [--ptd FILE] [--input FILE.npy ...] [--iterations N] [--warmup N]
//                 [--engine etscope|executorch]
//
// Loads and times through the runner library (the one run loop etscope run uses). Prints one
// JSON object: load time, per-iteration latencies (ms), peak RSS and the bytes of
// arenas and weights, so the caller can report memory beyond what the program itself needs.
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "etscope/inspect/memory_plan.h"
#include "etscope/runner/runner.h"

using namespace etscope;

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
  runner::RunnerOptions options;
  options.model = argv[1];
  std::vector<std::string> inputs;
  int iterations = 20, warmup = 3;
  for (int i = 2; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--ptd" && i + 1 < argc) options.ptd_files.push_back(argv[++i]);
    else if (a == "--input" && i + 1 < argc) inputs.push_back(argv[++i]);
    else if (a == "--iterations" && i + 1 < argc) iterations = std::atoi(argv[++i]);
    else if (a == "--warmup" && i + 1 < argc) warmup = std::atoi(argv[++i]);
    else if (a == "--engine" && i + 1 < argc) {
      auto kind = runner::parse_engine(argv[++i]);
      if (!kind.ok()) return fail(kind.error().message());
      options.engine = *kind;
    }
    else return fail("unknown argument " + a);
  }
  // The runner's load time covers reading, verifying and loading, as the loop here did before.
  auto runner = runner::Runner::load(options);
  if (!runner.ok()) return fail(runner.error().message());
  runner::Runner& r = **runner;
  // Inputs missing from the command line are random (seed 0). The runner copies them in before
  // every execution (the plan may reuse their bytes), as ExecuTorch's Module::forward does; the
  // copy is part of the timing on both sides.
  Status set = inputs.empty() ? r.set_random_inputs(0) : r.set_inputs_from_files(inputs);
  if (!set.ok()) return fail(set.error().message());
  auto timing = r.run(warmup, iterations);
  if (!timing.ok()) return fail(timing.error().message());

  const ExecutionPlan& plan = *r.program().find_plan(r.method_name());
  uint64_t weight_bytes = 0;
  for (const Value& v : plan.values) {
    if (v.kind == ValueKind::kTensor && (v.tensor.data_kind == TensorDataKind::kConstant ||
                                          v.tensor.data_kind == TensorDataKind::kExternalConstant)) {
      weight_bytes += v.tensor.nbytes;
    }
  }
  std::printf("{\"load_ms\": %.4f, \"samples_ms\": [", r.load_ms());
  for (size_t i = 0; i < timing->samples.size(); ++i) std::printf("%s%.5f", i ? ", " : "", timing->samples[i]);
  std::printf("], \"peak_rss_kb\": %ld, \"arena_bytes\": %llu, \"weight_bytes\": %llu, \"file_bytes\": %llu}\n", peak_rss_kb(),
              static_cast<unsigned long long>(inspect::declared_arena_bytes(plan)), static_cast<unsigned long long>(weight_bytes),
              static_cast<unsigned long long>(r.program().file_size));
  return 0;
}
