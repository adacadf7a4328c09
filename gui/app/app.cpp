#include "app/app.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <thread>

#include "views/views.h"

namespace etscope::gui {

App::App(std::string recent_files_path) : recent_(std::move(recent_files_path)) {
  recent_.load();
  state_.recent = recent_.entries();
}

void App::open(const std::vector<std::string>& paths) {
  OpenRequest request;
  request.paths = paths;
  open(request);
}

void App::open(const OpenRequest& request) {
  if (request.empty()) return;
  if (loader_.busy()) {
    pending_.paths.insert(pending_.paths.end(), request.paths.begin(), request.paths.end());
    if (!request.baseline.empty()) pending_.baseline = request.baseline;
    if (!request.store.empty()) pending_.store = request.store;
    if (!request.run.empty()) pending_.run = request.run;
    return;
  }
  last_request_ = request.paths;
  loader_.start(request, session_);
  state_.loading = true;
}

void App::close_all() {
  session_.reset();
  state_.selected = {};
  state_.timeline = TimelineViewState{};
  state_.stats.block = SIZE_MAX;
}

void App::set_initial_view(const std::string& view, const std::string& plan, InstructionRef select) {
  initial_select_ = select;
  for (const ViewInfo& v : kViews) {
    if (view == v.key) state_.view = v.id;
  }
  view_chosen_ = !view.empty();
  state_.select_view = true;
  initial_plan_ = plan;
}

void App::install(std::unique_ptr<Session> session) {
  const bool had_program = session_ && session_->program;
  const bool had_dump = session_ && session_->dump;
  for (const std::string& e : session->errors) {
    state_.errors.push_back(e);
    all_errors_.push_back(e);
  }
  // Files that loaded go to the recent list; so do ones that failed, less usefully, never.
  for (const std::string& p : last_request_) {
    const auto paths = session->paths();
    if (std::find(paths.begin(), paths.end(), p) != paths.end()) recent_.add(p);
  }
  state_.recent = recent_.entries();
  if (!had_program || session->program != (session_ ? session_->program : nullptr)) {
    state_.plan = session->default_plan();
    if (!initial_plan_.empty()) {
      const int64_t p = session->find_plan(initial_plan_);
      if (p >= 0) state_.plan = static_cast<size_t>(p);
    }
    state_.selected = {};
  }
  if (!had_dump || session->dump != (session_ ? session_->dump : nullptr)) {
    state_.timeline.fit = true;
    state_.stats.block = SIZE_MAX;
  }
  // The first thing loaded decides the tab, unless the command line did.
  if (session_ == nullptr && !view_chosen_) {
    state_.view = session->program ? ViewId::kProgram
                  : session->generation ? ViewId::kGeneration
                  : session->dump    ? ViewId::kTimeline
                  : session->curve   ? ViewId::kTraining
                                     : ViewId::kCompare;
    state_.select_view = true;
  }
  session_ = std::move(session);
  if (initial_select_.valid()) {
    state_.select(initial_select_);
    initial_select_ = {};
  }
}

void App::poll_loader() {
  if (std::unique_ptr<Session> done = loader_.take()) {
    install(std::move(done));
    if (!pending_.empty()) {
      OpenRequest next;
      std::swap(next, pending_);
      open(next);
    }
  }
  state_.loading = loading();
  state_.load_fraction = loader_.progress().fraction();
  state_.load_stage = loader_.progress().stage();
}

void App::wait_until_loaded() {
  while (loading()) {
    poll_loader();
    if (loading()) std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  state_.loading = false;
}

void App::handle_requests() {
  if (state_.close_requested) {
    state_.close_requested = false;
    close_all();
  }
  if (state_.clear_recent_requested) {
    state_.clear_recent_requested = false;
    recent_.clear();
    state_.recent.clear();
  }
  if (!state_.run_request.empty() || !state_.baseline_request.empty()) {
    OpenRequest request;
    request.run.swap(state_.run_request);
    request.baseline.swap(state_.baseline_request);
    open(request);
  }
  if (!state_.open_requests.empty()) {
    std::vector<std::string> paths;
    paths.swap(state_.open_requests);
    open(paths);
  }
}

void App::animate_for_bench(int frame, int frames) {
  if (!session_ || frames <= 0) return;
  if (state_.view == ViewId::kGraph) {
    // The graph: from all of it down to full size and back, travelling from inputs to outputs.
    const GraphLayout* layout = state_.graph.shown.get();
    if (layout == nullptr) return;
    const double phase = static_cast<double>(frame) / static_cast<double>(std::max(frames - 1, 1));
    const double tri = phase < 0.5 ? phase * 2.0 : (1.0 - phase) * 2.0;
    const double whole = std::min(1.0, 900.0 / std::max(1.0f, std::max(layout->width, layout->height)));
    state_.graph.fit = false;
    state_.graph.zoom = whole * std::pow(1.0 / whole, tri);
    state_.graph.cx = layout->width * 0.5;
    state_.graph.cy = layout->height * (0.05 + 0.9 * phase);
    return;
  }
  if (!session_->timeline) return;
  const double extent = static_cast<double>(std::max<uint64_t>(session_->timeline->extent(state_.timeline.align_runs), 1));
  // Triangle wave 0 -> 1 -> 0 over the run: window width from the whole extent to 1/1000.
  const double phase = static_cast<double>(frame) / static_cast<double>(std::max(frames - 1, 1));
  const double tri = phase < 0.5 ? phase * 2.0 : (1.0 - phase) * 2.0;
  const double width = extent * std::pow(1e-3, tri);
  const double center = extent * (0.1 + 0.8 * phase);
  state_.timeline.fit = false;
  state_.timeline.t0 = center - width * 0.5;
  state_.timeline.t1 = center + width * 0.5;
}

void App::frame() {
  poll_loader();
  DrawMainWindow(session_.get(), state_);
  handle_requests();
}

}  // namespace etscope::gui
