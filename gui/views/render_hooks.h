// Optional renderer hooks: the GLFW/OpenGL shell (main.cpp) installs them, views reach them
// only through ImDrawList callbacks, so views stay free of OpenGL. Null where there is no
// renderer (the headless ImGui tests): views then skip them.
#pragma once

#include <imgui.h>

namespace etscope::gui::render_hooks {

/// Turns blending off for the opaque geometry that follows, until an
/// ImDrawCallback_ResetRenderState callback restores the renderer's state.
extern ImDrawCallback opaque_begin;

}  // namespace etscope::gui::render_hooks
