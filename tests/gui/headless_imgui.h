// A bare ImGui context for the viewer's draw tests: fonts built, a display size, no platform or
// renderer backend.
#pragma once

#include <imgui.h>

#include "app/app.h"

namespace etscope::gui {

struct HeadlessImGui {
  HeadlessImGui() {
    ImGui::CreateContext();
    ImGuiIO& io = ImGui::GetIO();
    io.IniFilename = nullptr;
    io.DisplaySize = ImVec2(1400, 900);
    io.DeltaTime = 1.0f / 60.0f;
    unsigned char* pixels = nullptr;
    int w = 0, h = 0;
    io.Fonts->GetTexDataAsRGBA32(&pixels, &w, &h);
  }
  ~HeadlessImGui() { ImGui::DestroyContext(); }
  HeadlessImGui(const HeadlessImGui&) = delete;
  HeadlessImGui& operator=(const HeadlessImGui&) = delete;

  // One frame; returns the number of vertices drawn.
  int Frame(App& app) {
    ImGui::NewFrame();
    app.frame();
    ImGui::Render();
    return ImGui::GetDrawData()->TotalVtxCount;
  }
};

}  // namespace etscope::gui
