// etscope-executorch: the ExecuTorch engine's worker process (executorch/include/etscope/executorch/worker.h).
// Started by etscope's runner with its socket as descriptor 3; not meant to be run by hand.
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "etscope/executorch/worker.h"
#include "etscope/worker/messages.h"

int main(int argc, char** argv) {
  if (argc > 1 && std::strcmp(argv[1], "--check") == 0) {
    // `etscope-executorch --check`: is the ExecuTorch library found at run time the one built against?
    const std::string problem = etscope::executorch_engine::check_library();
    std::printf("%s\n", problem.empty() ? "ok: ExecuTorch " ETSCOPE_EXECUTORCH_VERSION : problem.c_str());
    return problem.empty() ? 0 : 3;
  }
  if (argc == 5 && std::strcmp(argv[1], "--bench-tracers") == 0) {
    return etscope::executorch_engine::bench_tracers(argv[2], std::atoi(argv[3]), std::atoi(argv[4]));
  }
  const int status = etscope::executorch_engine::run_worker(etscope::worker::kWorkerSocketFd);
  std::fflush(nullptr);
  // Leave without running ExecuTorch's static destructors (and leak checks of its registries).
  std::_Exit(status);
}
