// App: the viewer without its window. Owns the loaded Session, the loader thread, the UI state
// and the recent-files list; each frame it draws the views and carries out what they asked for
// (open, close, quit). main.cpp owns GLFW and OpenGL and calls frame() between ImGui::NewFrame()
// and ImGui::Render(); tests call it inside a bare ImGui context.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "app/recent_files.h"
#include "app/session_loader.h"
#include "model/session.h"
#include "views/view_state.h"

namespace etscope::gui {

class App {
 public:
  /// `recent_files_path`: where to keep the File menu's recent list ("" keeps it in memory).
  explicit App(std::string recent_files_path);

  /// Opens files on top of what is loaded (files of the same kind are replaced). Loads on the
  /// worker thread; while a load runs, further requests wait for it.
  void open(const std::vector<std::string>& paths);
  /// The same for files, a run store, a stored run and a baseline to compare with.
  void open(const OpenRequest& request);
  /// Drops everything loaded.
  void close_all();

  /// Polls the loader and draws one frame of UI. Call inside an ImGui frame.
  void frame();

  /// Blocks until every pending load has finished and its session is installed (tests, the
  /// headless modes). Does not draw.
  void wait_until_loaded();

  bool loading() const { return loader_.busy() || !pending_.empty(); }
  bool quit_requested() const { return state_.quit_requested; }
  const Session* session() const { return session_.get(); }
  ViewState& state() { return state_; }
  /// Errors of every load so far, in order (also shown in the dialog).
  const std::vector<std::string>& all_errors() const { return all_errors_; }

  /// Sets the first view and plan, as --view and --plan ask ("" leaves them), and the
  /// instruction to select once the first files are loaded (invalid: none).
  void set_initial_view(const std::string& view, const std::string& plan, InstructionRef select = {});

  /// For --bench-frames: moves the timeline's window for frame `frame` of `frames`, zooming
  /// from the whole trace down to a thousandth of it and back while panning across, so the
  /// benchmark measures zoomed-out folding and zoomed-in bars alike.
  void animate_for_bench(int frame, int frames);

 private:
  void poll_loader();
  void install(std::unique_ptr<Session> session);
  void handle_requests();

  ViewState state_;
  SessionLoader loader_;
  std::shared_ptr<const Session> session_;
  OpenRequest pending_;  ///< Requests made while loading, merged (later ones win).
  std::vector<std::string> last_request_;
  RecentFiles recent_;
  std::string initial_plan_;
  bool view_chosen_ = false;  ///< --view named the first tab.
  InstructionRef initial_select_;
  std::vector<std::string> all_errors_;
};

}  // namespace etscope::gui
