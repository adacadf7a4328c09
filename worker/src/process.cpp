#include "etscope/worker/process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <algorithm>
#include <chrono>
#include <cstring>
#include <thread>

#include "etscope/worker/messages.h"

extern char** environ;

namespace etscope::worker {
namespace {

constexpr size_t kOutputKeep = 256 * 1024;

std::string errno_text() { return std::strerror(errno); }

// "E 00:00:00.123456 executorch:op_x.cpp:12] message" -> "message".
std::string strip_log_prefix(const std::string& line) {
  const size_t bracket = line.find("] ");
  if (line.size() > 2 && (line[0] == 'E' || line[0] == 'F') && line[1] == ' ' && bracket != std::string::npos) {
    return line.substr(bracket + 2);
  }
  if (line.size() > 2 && (line[0] == 'E' || line[0] == 'F') && line[1] == ' ') return line.substr(2);
  return line;
}

}  // namespace

std::string last_error_line(const std::string& output) {
  // A fatal line (an ExecuTorch check that ended the process) is the reason; otherwise the first
  // error line of the output (later ones detail it: "arg 0 with type id 1"), else the last line.
  std::string last_any, first_error, last_fatal;
  size_t start = 0;
  while (start < output.size()) {
    size_t end = output.find('\n', start);
    if (end == std::string::npos) end = output.size();
    std::string line = output.substr(start, end - start);
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
    if (!line.empty()) {
      last_any = line;
      const bool logged = line.size() > 2 && line[1] == ' ';
      if (logged && line[0] == 'F') last_fatal = line;
      if (logged && line[0] == 'E' && first_error.empty()) first_error = line;
    }
    start = end + 1;
  }
  return strip_log_prefix(!last_fatal.empty() ? last_fatal : !first_error.empty() ? first_error : last_any);
}

Result<std::unique_ptr<WorkerProcess>> WorkerProcess::spawn(const std::string& path, const std::vector<std::string>& args,
                                                            std::span<const int> pass_fds, std::string name) {
  if (access(path.c_str(), X_OK) != 0) return Error(ErrorCode::kNotFound, path + ": not an executable file");
  int sv[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
    return Error(ErrorCode::kIo, name + ": cannot create a socket: " + errno_text());
  }
  int out[2];
  if (pipe2(out, O_CLOEXEC) != 0) {
    close(sv[0]);
    close(sv[1]);
    return Error(ErrorCode::kIo, name + ": cannot create a pipe: " + errno_text());
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, out[1], 1);
  posix_spawn_file_actions_adddup2(&actions, out[1], 2);
  // dup2 onto a free slot first, so that a descriptor already numbered 3, 4, ... is not
  // overwritten before it is moved (dup2 clears close-on-exec on the copy).
  std::vector<int> sources{sv[1]};
  sources.insert(sources.end(), pass_fds.begin(), pass_fds.end());
  std::vector<int> staged;
  for (int fd : sources) {
    const int copy = fcntl(fd, F_DUPFD_CLOEXEC, 64);
    staged.push_back(copy);
  }
  for (size_t k = 0; k < staged.size(); ++k) {
    posix_spawn_file_actions_adddup2(&actions, staged[k], kWorkerSocketFd + static_cast<int>(k));
  }
  std::vector<std::string> argv_text{path};
  argv_text.insert(argv_text.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& a : argv_text) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = -1;
  const int rc = posix_spawn(&pid, path.c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  for (int fd : staged) {
    if (fd >= 0) close(fd);
  }
  close(sv[1]);
  close(out[1]);
  if (rc != 0) {
    close(sv[0]);
    close(out[0]);
    return Error(ErrorCode::kIo, name + ": cannot start " + path + ": " + std::strerror(rc));
  }
  std::unique_ptr<WorkerProcess> w(new WorkerProcess());
  w->pid_ = pid;
  w->socket_ = sv[0];
  w->output_fd_ = out[0];
  w->name_ = std::move(name);
  fcntl(w->output_fd_, F_SETFL, fcntl(w->output_fd_, F_GETFL) | O_NONBLOCK);
  return w;
}

WorkerProcess::~WorkerProcess() {
  if (socket_ >= 0) close(socket_);
  if (!reaped_ && pid_ > 0) {
    // Closing the socket tells the worker to quit; give it a moment, then insist.
    for (int i = 0; i < 100; ++i) {
      drain_output();
      if (waitpid(pid_, &status_, WNOHANG) == pid_) {
        reaped_ = true;
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    if (!reaped_) {
      kill(pid_, SIGKILL);
      waitpid(pid_, &status_, 0);
    }
  }
  if (output_fd_ >= 0) close(output_fd_);
}

void WorkerProcess::drain_output() {
  if (output_fd_ < 0) return;
  char buf[4096];
  for (;;) {
    const ssize_t n = read(output_fd_, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      if (n == 0) {
        close(output_fd_);
        output_fd_ = -1;
      }
      return;
    }
    output_.append(buf, static_cast<size_t>(n));
    if (output_.size() > 2 * kOutputKeep) {
      const size_t cut = output_.size() - kOutputKeep;
      output_.erase(0, cut);
      seen_ = seen_ > cut ? seen_ - cut : 0;
    }
  }
}

std::string WorkerProcess::output() const {
  return output_.size() > kOutputKeep ? output_.substr(output_.size() - kOutputKeep) : output_;
}

std::string WorkerProcess::new_output(int settle_ms) {
  while (output_fd_ >= 0) {
    pollfd p{output_fd_, POLLIN, 0};
    if (poll(&p, 1, settle_ms) <= 0) break;
    drain_output();
  }
  std::string out = output_.substr(std::min(seen_, output_.size()));
  seen_ = output_.size();
  return out;
}

Status WorkerProcess::send(uint32_t type, std::span<const uint8_t> payload) {
  if (socket_ < 0) return Error(ErrorCode::kIo, name_ + ": has ended");
  Status s = write_frame(socket_, type, payload, name_);
  if (!s.ok()) return ended();
  return ok_status();
}

Result<Frame> WorkerProcess::receive(uint64_t max_payload) {
  if (socket_ < 0) return Error(ErrorCode::kIo, name_ + ": has ended");
  // Wait until the socket has data, reading what the child prints meanwhile.
  for (;;) {
    pollfd fds[2] = {{socket_, POLLIN, 0}, {output_fd_, POLLIN, 0}};
    const int n = poll(fds, output_fd_ >= 0 ? 2 : 1, -1);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Error(ErrorCode::kIo, name_ + ": poll: " + errno_text());
    if (output_fd_ >= 0 && (fds[1].revents & (POLLIN | POLLHUP)) != 0) drain_output();
    if ((fds[0].revents & (POLLIN | POLLHUP | POLLERR)) != 0) break;
  }
  Result<Frame> f = read_frame(socket_, max_payload, name_);
  if (!f.ok()) {
    if (f.error().code() == ErrorCode::kCorrupt) return f.error();
    return ended();
  }
  return f;
}

Error WorkerProcess::ended() {
  if (socket_ >= 0) {
    close(socket_);
    socket_ = -1;
  }
  if (!reaped_) {
    // The child closed its end: it is exiting. Collect what it printed until its pipe closes.
    while (output_fd_ >= 0) {
      pollfd p{output_fd_, POLLIN, 0};
      if (poll(&p, 1, 2000) <= 0) break;
      drain_output();
    }
    if (waitpid(pid_, &status_, 0) == pid_) reaped_ = true;
  }
  std::string how = "ended";
  if (reaped_ && WIFSIGNALED(status_)) {
    const int sig = WTERMSIG(status_);
    how = sig == SIGABRT ? "aborted" : std::string("was killed by signal ") + std::to_string(sig) + " (" + strsignal(sig) + ")";
  } else if (reaped_ && WIFEXITED(status_)) {
    how = "exited with status " + std::to_string(WEXITSTATUS(status_));
  }
  const std::string said = last_error_line(output_);
  return Error(ErrorCode::kIo, name_ + " " + how + (said.empty() ? "" : ": " + said));
}

}  // namespace etscope::worker
