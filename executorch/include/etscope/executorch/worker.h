// The ExecuTorch engine's worker: the only etscope code that includes ExecuTorch's headers and
// links its libraries (the executorch wheel's C++ runtime, kernels_optimized, kernels_quantized,
// the XNNPACK backend and its threadpool). It is a process of its own, `etscope-executorch`,
// started by the runner (runner/engine.h, EngineKind::kExecutorch), so that ExecuTorch aborting
// on a failed check ends only the worker. Nothing here is ExecuTorch-typed.
#pragma once

#include <string>

namespace etscope::executorch_engine {

/// Serves the runner on `socket_fd` (worker/messages.h) until it closes its end or sends kQuit;
/// returns the process's exit status (3: the library loaded is not the one etscope was built
/// against).
int run_worker(int socket_fd);

/// The tracer benchmark (bench/, `etscope-executorch --bench-tracers PTE ITERATIONS ROUNDS`): the
/// method `forward` of `pte` executed with no tracer, with etscope's streaming tracer and with
/// ExecuTorch's ETDumpGen, interleaved in rounds on one thread; prints one JSON line (medians
/// in ns, events and bytes per execution).
int bench_tracers(const std::string& pte, int iterations, int rounds);

/// Empty when the ExecuTorch runtime library this process loaded is the one etscope was built
/// against (its SHA-256, recorded at build time), else what is wrong, naming the file.
std::string check_library();

}  // namespace etscope::executorch_engine
