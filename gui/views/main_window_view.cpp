// The main window: menu bar, loaded-file line, a tab per view, loading bar and the two modal
// dialogs (open a file, errors).
#include <imgui.h>

#include <cfloat>
#include <cstdio>
#include <cstring>

#include "model/text_format.h"
#include "views/views.h"

namespace etscope::gui {
namespace {

const char* kErrorPopup = "Could not open";
const char* kOpenPopup = "Open file";

void DrawMenuBar(const Session* session, ViewState& state) {
  if (!ImGui::BeginMenuBar()) return;
  if (ImGui::BeginMenu("File")) {
    if (ImGui::MenuItem("Open...", "Ctrl+O")) state.open_dialog = true;
    if (ImGui::BeginMenu("Open Recent", !state.recent.empty())) {
      for (const std::string& path : state.recent) {
        if (ImGui::MenuItem(path.c_str())) state.open_requests.push_back(path);
      }
      ImGui::Separator();
      if (ImGui::MenuItem("Clear list")) state.clear_recent_requested = true;
      ImGui::EndMenu();
    }
    if (ImGui::MenuItem("Close all", nullptr, false, session != nullptr && !session->empty())) {
      state.close_requested = true;
    }
    ImGui::Separator();
    if (ImGui::MenuItem("Quit", "Ctrl+Q")) state.quit_requested = true;
    ImGui::EndMenu();
  }
  if (ImGui::BeginMenu("View")) {
    for (int i = 0; i < kViewCount; ++i) {
      // Alt+1..9, then Alt+0 for the tenth; later views have no key.
      char key[16];
      std::snprintf(key, sizeof key, "Alt+%d", (i + 1) % 10);
      if (ImGui::MenuItem(kViews[i].title, i < 10 ? key : nullptr, state.view == kViews[i].id)) {
        state.view = kViews[i].id;
        state.select_view = true;
      }
    }
    ImGui::Separator();
    if (ImGui::MenuItem("Clear selection", "Esc", false, state.selected.valid())) state.selected = {};
    ImGui::EndMenu();
  }
  // What is loaded, on the right of the menu bar.
  if (session != nullptr && !session->empty()) {
    std::string files;
    for (const std::string& p : session->paths()) {
      const size_t slash = p.find_last_of('/');
      files += (files.empty() ? "" : "  |  ") + (slash == std::string::npos ? p : p.substr(slash + 1));
    }
    const float w = ImGui::CalcTextSize(files.c_str()).x;
    ImGui::SameLine(ImGui::GetWindowWidth() - w - 16.0f);
    ImGui::TextDisabled("%s", files.c_str());
  }
  ImGui::EndMenuBar();
}

void DrawOpenDialog(ViewState& state) {
  if (state.open_dialog) {
    ImGui::OpenPopup(kOpenPopup);
    state.open_dialog = false;
  }
  ImGui::SetNextWindowSize(ImVec2(720, 0), ImGuiCond_Appearing);
  if (!ImGui::BeginPopupModal(kOpenPopup, nullptr, ImGuiWindowFlags_NoSavedSettings)) return;
  ImGui::TextUnformatted("A program (.pte, .bpte), an ETDump (.etdp), an ETRecord or a debug buffer (.bin).");
  ImGui::TextDisabled("Files can also be dropped on the window. Each file's kind is read from its bytes.");
  if (ImGui::IsWindowAppearing()) ImGui::SetKeyboardFocusHere();
  ImGui::SetNextItemWidth(-1);
  const bool entered = ImGui::InputTextWithHint("##path", "/path/to/model.pte", state.open_path, sizeof state.open_path,
                                                ImGuiInputTextFlags_EnterReturnsTrue);
  if (!state.recent.empty()) {
    ImGui::Spacing();
    ImGui::TextUnformatted("Recent files");
    ImGui::BeginChild("recent", ImVec2(0, 180), true);
    for (const std::string& path : state.recent) {
      if (ImGui::Selectable(path.c_str(), std::strcmp(path.c_str(), state.open_path) == 0,
                            ImGuiSelectableFlags_AllowDoubleClick)) {
        std::snprintf(state.open_path, sizeof state.open_path, "%s", path.c_str());
        if (ImGui::IsMouseDoubleClicked(0)) {
          state.open_requests.push_back(path);
          ImGui::CloseCurrentPopup();
        }
      }
    }
    ImGui::EndChild();
  }
  ImGui::Spacing();
  const bool can_open = state.open_path[0] != '\0';
  if ((ImGui::Button("Open", ImVec2(120, 0)) || entered) && can_open) {
    state.open_requests.emplace_back(state.open_path);
    ImGui::CloseCurrentPopup();
  }
  ImGui::SameLine();
  if (ImGui::Button("Cancel", ImVec2(120, 0)) || ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_Escape))) {
    ImGui::CloseCurrentPopup();
  }
  ImGui::EndPopup();
}

void DrawErrorDialog(ViewState& state) {
  if (!state.errors.empty() && !state.errors_popup_open) {
    ImGui::OpenPopup(kErrorPopup);
    state.errors_popup_open = true;
  }
  const ImVec2 center = ImGui::GetMainViewport()->GetCenter();
  ImGui::SetNextWindowPos(center, ImGuiCond_Appearing, ImVec2(0.5f, 0.5f));
  ImGui::SetNextWindowSizeConstraints(ImVec2(420, 0), ImVec2(ImGui::GetMainViewport()->WorkSize.x * 0.8f, FLT_MAX));
  if (!ImGui::BeginPopupModal(kErrorPopup, nullptr, ImGuiWindowFlags_AlwaysAutoResize | ImGuiWindowFlags_NoSavedSettings)) {
    return;
  }
  for (const std::string& e : state.errors) {
    ImGui::PushStyleColor(ImGuiCol_Text, IM_COL32(255, 120, 110, 255));
    ImGui::Bullet();
    ImGui::PopStyleColor();
    ImGui::SameLine();
    ImGui::PushTextWrapPos(ImGui::GetMainViewport()->WorkSize.x * 0.75f);
    ImGui::TextUnformatted(e.c_str());
    ImGui::PopTextWrapPos();
  }
  ImGui::Spacing();
  if (ImGui::Button("OK", ImVec2(120, 0)) || ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_Enter)) ||
      ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_Escape))) {
    state.errors.clear();
    state.errors_popup_open = false;
    ImGui::CloseCurrentPopup();
  }
  ImGui::EndPopup();
}

void DrawWelcome() {
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  const char* lines[] = {
      "etscope",
      "",
      "Drop files on this window, open them with File > Open, or name them on the command line:",
      "etscope-gui model.pte run.etdp model.etrecord [debug.bin]",
      "",
      "Program: plans, operators, instructions, values.   Graph: the operator graph (Graphviz), by module with an ETRecord.",
      "Timeline: the ETDump's events over time.",
      "Op statistics: per-operator timings, summary by type, module tree.   Memory: the planned arenas.",
      "Numeric gaps: AOT against runtime outputs per operator (AOT intermediates .ptd + ETRecord + debug buffer).",
      "Compare: two runs per operator (--baseline before.etdp, or stored runs with --store).   Training: a train --curve file.",
      "Generation: prefill and decode, latency per token, operators per phase (the ETDump of etscope generate --etdump).",
      "Findings: what to change in the program, ranked by the time it would save (a program, its ETDump for times).",
  };
  float y = ImGui::GetCursorPosY() + avail.y * 0.3f;
  for (const char* line : lines) {
    const float w = ImGui::CalcTextSize(line).x;
    ImGui::SetCursorPos(ImVec2((avail.x - w) * 0.5f, y));
    if (line == lines[0]) {
      // The title, twice the size, drawn directly so the rest keeps the normal font.
      ImFont* font = ImGui::GetFont();
      const float size = ImGui::GetFontSize() * 2.0f;
      const ImVec2 ts = font->CalcTextSizeA(size, FLT_MAX, 0.0f, line);
      const ImVec2 origin = ImGui::GetWindowPos();
      ImGui::GetWindowDrawList()->AddText(font, size, ImVec2(origin.x + (avail.x - ts.x) * 0.5f, origin.y + y - ts.y * 0.5f),
                                          ImGui::GetColorU32(ImGuiCol_Text), line);
    } else if (line == lines[3]) {
      ImGui::TextUnformatted(line);
    } else {
      ImGui::TextDisabled("%s", line);
    }
    y += ImGui::GetTextLineHeightWithSpacing();
  }
}

// A view that needs a file nobody gave: say which.
bool RequireFile(bool present, const char* what) {
  if (present) return true;
  ImGui::Spacing();
  ImGui::TextDisabled("This view needs %s. Open one with File > Open or drop it on the window.", what);
  return false;
}

void DrawLoadingBar(const ViewState& state) {
  if (!state.loading) return;
  const ImGuiViewport* vp = ImGui::GetMainViewport();
  const ImVec2 size(vp->WorkSize.x * 0.5f, 0);
  ImGui::SetNextWindowPos(ImVec2(vp->WorkPos.x + vp->WorkSize.x * 0.5f, vp->WorkPos.y + vp->WorkSize.y * 0.5f),
                          ImGuiCond_Always, ImVec2(0.5f, 0.5f));
  ImGui::SetNextWindowSize(size);
  ImGui::Begin("Loading", nullptr,
               ImGuiWindowFlags_NoDecoration | ImGuiWindowFlags_NoSavedSettings | ImGuiWindowFlags_NoMove |
                   ImGuiWindowFlags_AlwaysAutoResize | ImGuiWindowFlags_NoFocusOnAppearing);
  ImGui::TextUnformatted("Loading...");
  ImGui::ProgressBar(state.load_fraction, ImVec2(-1, 0));
  ImGui::TextDisabled("%s", state.load_stage.c_str());
  ImGui::End();
}

}  // namespace

void DrawMainWindow(const Session* session, ViewState& state) {
  const ImGuiViewport* vp = ImGui::GetMainViewport();
  ImGui::SetNextWindowPos(vp->WorkPos);
  ImGui::SetNextWindowSize(vp->WorkSize);
  ImGui::PushStyleVar(ImGuiStyleVar_WindowRounding, 0.0f);
  ImGui::PushStyleVar(ImGuiStyleVar_WindowBorderSize, 0.0f);
  ImGui::Begin("etscope", nullptr,
               ImGuiWindowFlags_NoDecoration | ImGuiWindowFlags_NoMove | ImGuiWindowFlags_NoSavedSettings |
                   ImGuiWindowFlags_MenuBar | ImGuiWindowFlags_NoBringToFrontOnFocus | ImGuiWindowFlags_NoBackground);
  ImGui::PopStyleVar(2);

  const ImGuiIO& io = ImGui::GetIO();
  if (io.KeyCtrl && ImGui::IsKeyPressed('O', false)) state.open_dialog = true;
  if (io.KeyCtrl && ImGui::IsKeyPressed('Q', false)) state.quit_requested = true;
  if (!io.WantTextInput && ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_Escape), false) &&
      !ImGui::IsPopupOpen(nullptr, ImGuiPopupFlags_AnyPopupId)) {
    state.selected = {};
  }
  if (io.KeyAlt) {
    for (int i = 0; i < kViewCount && i < 10; ++i) {
      if (ImGui::IsKeyPressed(i < 9 ? '1' + i : '0', false)) {
        state.view = kViews[i].id;
        state.select_view = true;
      }
    }
  }

  DrawMenuBar(session, state);

  if (session == nullptr || session->empty()) {
    if (!state.loading) DrawWelcome();
  } else if (ImGui::BeginTabBar("views")) {
    for (const ViewInfo& tab : kViews) {
      // The Generation tab only for the profile of a generation.
      if (tab.id == ViewId::kGeneration && !session->generation) continue;
      const ImGuiTabItemFlags flags = state.select_view && state.view == tab.id ? ImGuiTabItemFlags_SetSelected : 0;
      if (!ImGui::BeginTabItem(tab.title, nullptr, flags)) continue;
      if (!state.select_view) state.view = tab.id;
      switch (tab.id) {
        case ViewId::kProgram:
          if (RequireFile(session->program != nullptr, "a program (.pte or .bpte)")) DrawProgramView(*session, state);
          break;
        case ViewId::kGraph:
          if (RequireFile(session->program != nullptr, "a program (.pte or .bpte)")) DrawGraphView(*session, state);
          break;
        case ViewId::kTimeline:
          if (RequireFile(session->timeline.has_value(), "an ETDump (.etdp)")) DrawTimelineView(*session, state);
          break;
        case ViewId::kStats:
          if (RequireFile(session->stats.has_value(), "an ETDump (.etdp); an ETRecord adds modules")) {
            DrawStatsView(*session, state);
          }
          break;
        case ViewId::kMemory:
          if (RequireFile(session->program != nullptr, "a program (.pte or .bpte)")) DrawMemoryView(*session, state);
          break;
        case ViewId::kGaps:
          DrawGapsView(*session, state);
          break;
        case ViewId::kCompare:
          DrawCompareView(*session, state);
          break;
        case ViewId::kTraining:
          if (RequireFile(session->curve.has_value(), "a training curve (etscope train --curve FILE.json) or a stored training run (--store, --run)")) {
            DrawTrainingView(*session, state);
          }
          break;
        case ViewId::kGeneration:
          DrawGenerationView(*session, state);
          break;
        case ViewId::kFindings:
          if (RequireFile(session->findings.has_value(), "a program (.pte or .bpte) or an ETDump (.etdp)")) {
            DrawFindingsView(*session, state);
          }
          break;
      }
      ImGui::EndTabItem();
    }
    state.select_view = false;
    ImGui::EndTabBar();
  }

  DrawOpenDialog(state);
  DrawErrorDialog(state);
  ImGui::End();
  DrawLoadingBar(state);
}

}  // namespace etscope::gui
