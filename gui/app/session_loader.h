// SessionLoader: runs load_session() on a worker thread so the window keeps drawing (with a
// progress bar) while a big ETDump loads. One load at a time; the UI thread polls take().
#pragma once

#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "model/session.h"

namespace etscope::gui {

class SessionLoader {
 public:
  SessionLoader() = default;
  ~SessionLoader();
  SessionLoader(const SessionLoader&) = delete;
  SessionLoader& operator=(const SessionLoader&) = delete;

  /// Starts loading what `request` names on top of `previous` (kept alive until the load
  /// ends). Must not be called while busy().
  void start(OpenRequest request, std::shared_ptr<const Session> previous);

  /// True from start() until take() has returned the result.
  bool busy() const { return thread_.joinable(); }
  const LoadProgress& progress() const { return progress_; }

  /// The loaded session once the worker has finished, else null. Joins the worker.
  std::unique_ptr<Session> take();

 private:
  std::thread thread_;
  std::atomic<bool> done_{false};
  LoadProgress progress_;
  std::unique_ptr<Session> result_;
  std::shared_ptr<const Session> previous_;
};

}  // namespace etscope::gui
