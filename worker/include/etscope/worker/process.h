// WorkerProcess: a child process etscope talks to over a socket, so that code which may abort
// the process (ExecuTorch's runtime ends it on a failed check) ends only the child: the parent
// sees the socket close, learns how the child ended and quotes what it printed.
//
// The child is started with posix_spawn: its socket is descriptor 3 (kWorkerSocketFd), the
// descriptors in `pass_fds` become 4, 5, ... in order, stdin reads /dev/null, stdout and stderr
// go to a pipe the parent keeps draining (bounded: the last 256 KiB), so a chatty child never
// blocks. Destroying the object closes the socket, which a worker takes as "quit", and reaps it
// (killing it if it has not ended within a second).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "etscope/core/result.h"
#include "etscope/worker/wire.h"

namespace etscope::worker {

class WorkerProcess {
 public:
  /// Starts `path` with `args` (argv[1...]). kNotFound when `path` is not an executable file.
  static Result<std::unique_ptr<WorkerProcess>> spawn(const std::string& path, const std::vector<std::string>& args,
                                                      std::span<const int> pass_fds, std::string name);
  ~WorkerProcess();
  WorkerProcess(const WorkerProcess&) = delete;
  WorkerProcess& operator=(const WorkerProcess&) = delete;

  Status send(uint32_t type, std::span<const uint8_t> payload);
  /// The next frame. When the child has gone, an error saying how it ended ("aborted
  /// (SIGABRT)", "exited with status 3") and quoting the last error line it printed.
  Result<Frame> receive(uint64_t max_payload);

  /// Everything the child printed so far (its last 256 KiB).
  std::string output() const;
  /// What the child printed since the last call, after waiting up to `settle_ms` for output
  /// still on its way (a child logs an error before it answers with it).
  std::string new_output(int settle_ms);
  const std::string& name() const { return name_; }

 private:
  WorkerProcess() = default;
  /// Reads what the child printed without blocking.
  void drain_output();
  /// After the socket closed: reaps the child and describes its end.
  Error ended();

  pid_t pid_ = -1;
  int socket_ = -1;
  int output_fd_ = -1;
  bool reaped_ = false;
  int status_ = 0;
  std::string output_;
  size_t seen_ = 0;  ///< output_ up to here was returned by new_output()
  std::string name_;
};

/// The line worth quoting from what a child printed: ExecuTorch's last fatal log line, else its
/// first error line (the "F ..." / "E ..." prefix and source location removed), else the last
/// non-empty line.
std::string last_error_line(const std::string& output);

}  // namespace etscope::worker
