#include "app/session_loader.h"

namespace etscope::gui {

SessionLoader::~SessionLoader() {
  if (thread_.joinable()) thread_.join();
}

void SessionLoader::start(OpenRequest request, std::shared_ptr<const Session> previous) {
  if (thread_.joinable()) thread_.join();
  done_.store(false);
  result_.reset();
  previous_ = std::move(previous);
  progress_.set(0.0f, "starting");
  // The worker writes result_ and then done_; the UI thread reads result_ only after seeing
  // done_ (and joining), so no lock is needed.
  thread_ = std::thread([this, request = std::move(request)]() {
    result_ = load_session(request, previous_.get(), &progress_);
    done_.store(true);
  });
}

std::unique_ptr<Session> SessionLoader::take() {
  if (!thread_.joinable() || !done_.load()) return nullptr;
  thread_.join();
  previous_.reset();
  return std::move(result_);
}

}  // namespace etscope::gui
