// etscope-gui: GLFW + OpenGL 3 shell around App, shaped like Dear ImGui's
// example_glfw_opengl3: set up, loop (poll, new frame, UI, render, swap), shut down.
//
// Headless modes, for tests and docs (run under xvfb-run): --screenshot renders --frames frames
// after loading and writes the window as a PNG; --bench-frames times frames and prints the mean
// and worst. Both exit when done, with 1 if a file failed to load.
#include <GLFW/glfw3.h>
#include <imgui.h>
#include <imgui_impl_glfw.h>
#include <imgui_impl_opengl3.h>

#include <algorithm>
#include <cfloat>
#include <cstdlib>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "app/app.h"
#include "app/gui_options.h"
#include "app/png_writer.h"
#include "app/recent_files.h"
#include "views/render_hooks.h"

namespace {

using etscope::gui::App;

void OnGlfwError(int code, const char* description) {
  std::fprintf(stderr, "etscope-gui: GLFW error %d: %s\n", code, description);
}

void OnDrop(GLFWwindow* window, int count, const char** paths) {
  auto* app = static_cast<App*>(glfwGetWindowUserPointer(window));
  std::vector<std::string> files(paths, paths + count);
  app->open(files);
}

void SetUpStyleAndFonts() {
  ImGuiIO& io = ImGui::GetIO();
  io.IniFilename = nullptr;  // the layout is fixed; nothing worth saving
  ImGui::StyleColorsDark();
  ImGuiStyle& style = ImGui::GetStyle();
  style.FrameRounding = 3.0f;
  style.GrabRounding = 3.0f;
  style.TabRounding = 3.0f;
  style.PopupRounding = 4.0f;
  style.WindowPadding = ImVec2(10, 8);
  style.FramePadding = ImVec2(7, 4);
  style.ItemSpacing = ImVec2(8, 5);
  style.CellPadding = ImVec2(6, 2);
  style.Colors[ImGuiCol_WindowBg] = ImVec4(0.105f, 0.11f, 0.125f, 1.0f);
  // DejaVu is far easier to read than the built-in bitmap font; fall back to it when absent.
  const char* sans = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf";
  const char* mono = "/usr/share/fonts/truetype/dejavu/DejaVuSansMono.ttf";
  std::error_code ec;
  if (std::filesystem::exists(sans, ec) && std::filesystem::exists(mono, ec)) {
    io.Fonts->AddFontFromFileTTF(sans, 15.0f);
    io.Fonts->AddFontFromFileTTF(mono, 14.0f);
  } else {
    io.Fonts->AddFontDefault();
  }
}

bool Screenshot(GLFWwindow* window, const std::string& path) {
  int w = 0, h = 0;
  glfwGetFramebufferSize(window, &w, &h);
  etscope::gui::Image image;
  image.width = w;
  image.height = h;
  image.channels = 3;
  std::vector<uint8_t> rows(static_cast<size_t>(w) * static_cast<size_t>(h) * 3);
  glReadBuffer(GL_BACK);
  glPixelStorei(GL_PACK_ALIGNMENT, 1);
  glReadPixels(0, 0, w, h, GL_RGB, GL_UNSIGNED_BYTE, rows.data());
  // OpenGL's first row is the bottom one.
  image.pixels.resize(rows.size());
  const size_t stride = static_cast<size_t>(w) * 3;
  for (int y = 0; y < h; ++y) {
    std::copy_n(rows.data() + static_cast<size_t>(h - 1 - y) * stride, stride, image.pixels.data() + static_cast<size_t>(y) * stride);
  }
  auto status = etscope::gui::write_png(path, image);
  if (!status.ok()) {
    std::fprintf(stderr, "etscope-gui: %s\n", status.error().message().c_str());
    return false;
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  auto parsed = etscope::gui::parse_gui_options(std::vector<std::string>(argv + 1, argv + argc));
  if (!parsed.ok()) {
    std::fprintf(stderr, "etscope-gui: %s\n%s", parsed.error().message().c_str(), etscope::gui::gui_usage());
    return 2;
  }
  const etscope::gui::GuiOptions& opt = *parsed;
  if (opt.help) {
    std::fputs(etscope::gui::gui_usage(), stdout);
    return 0;
  }
  const bool headless = !opt.screenshot.empty() || opt.bench_frames > 0;

  // Set up.
  // Mesa's software rasterizer (llvmpipe: Xvfb, VMs without a GPU) starts fewer threads than
  // there are cores on some virtual machines; every frame here is fill-rate bound, so use them
  // all unless the user chose. GPU drivers never read this variable.
  if (std::getenv("LP_NUM_THREADS") == nullptr) {
    const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
    ::setenv("LP_NUM_THREADS", std::to_string(cores).c_str(), 0);
  }
  glfwSetErrorCallback(OnGlfwError);
  if (!glfwInit()) {
    std::fprintf(stderr, "etscope-gui: cannot open a window (no display? headless runs need xvfb-run)\n");
    return 1;
  }
  glfwWindowHint(GLFW_CONTEXT_VERSION_MAJOR, 3);
  glfwWindowHint(GLFW_CONTEXT_VERSION_MINOR, 2);
  glfwWindowHint(GLFW_OPENGL_PROFILE, GLFW_OPENGL_CORE_PROFILE);
  glfwWindowHint(GLFW_OPENGL_FORWARD_COMPAT, GL_TRUE);
  if (headless) glfwWindowHint(GLFW_RESIZABLE, GLFW_FALSE);
  GLFWwindow* window = glfwCreateWindow(opt.width, opt.height, "etscope", nullptr, nullptr);
  if (window == nullptr) {
    std::fprintf(stderr, "etscope-gui: cannot create an OpenGL 3.2 window\n");
    glfwTerminate();
    return 1;
  }
  glfwMakeContextCurrent(window);
  glfwSwapInterval(headless ? 0 : 1);

  IMGUI_CHECKVERSION();
  ImGui::CreateContext();
  SetUpStyleAndFonts();
  ImGui_ImplGlfw_InitForOpenGL(window, true);
  ImGui_ImplOpenGL3_Init("#version 150");
  etscope::gui::render_hooks::opaque_begin = [](const ImDrawList*, const ImDrawCmd*) { glDisable(GL_BLEND); };

  int exit_code = 0;
  {
    App app(headless ? "" : etscope::gui::RecentFiles::default_path());
    app.set_initial_view(opt.view, opt.plan, {opt.select_chain, opt.select_instruction});
    glfwSetWindowUserPointer(window, &app);
    glfwSetDropCallback(window, OnDrop);
    etscope::gui::OpenRequest first;
    first.paths = opt.files;
    first.baseline = opt.baseline;
    first.store = opt.store;
    first.run = opt.run;
    app.open(first);
    if (headless) app.wait_until_loaded();

    // One frame; the split timings feed --bench-frames: ui = building the frame (our views and
    // ImGui), render = OpenGL drawing it (software under Xvfb), present = the buffer swap.
    struct FrameTimes {
      double ui = 0, render = 0, present = 0;
      int vertices = 0;
    };
    using Clock = std::chrono::steady_clock;
    auto ms_since = [](Clock::time_point t) { return std::chrono::duration<double, std::milli>(Clock::now() - t).count(); };
    auto draw_frame = [&](bool capture, FrameTimes* times) {
      auto t = Clock::now();
      glfwPollEvents();
      ImGui_ImplOpenGL3_NewFrame();
      ImGui_ImplGlfw_NewFrame();
      if (headless) {
        // Under Xvfb the pointer sits wherever the server put it; screenshots must not depend
        // on that.
        ImGui::GetIO().MousePos = opt.mouse ? ImVec2(static_cast<float>(opt.mouse_x), static_cast<float>(opt.mouse_y))
                                            : ImVec2(-FLT_MAX, -FLT_MAX);
      }
      ImGui::NewFrame();
      app.frame();
      ImGui::Render();
      if (times != nullptr) {
        times->ui = ms_since(t);
        times->vertices = ImGui::GetDrawData()->TotalVtxCount;
        t = Clock::now();
      }
      int w = 0, h = 0;
      glfwGetFramebufferSize(window, &w, &h);
      glViewport(0, 0, w, h);
      // The main window draws no background of its own (a full-screen blended quad costs a
      // few milliseconds in a software renderer); the clear colour is its background.
      const ImVec4 bg = ImGui::GetStyle().Colors[ImGuiCol_WindowBg];
      glClearColor(bg.x, bg.y, bg.z, 1.0f);
      glClear(GL_COLOR_BUFFER_BIT);
      ImGui_ImplOpenGL3_RenderDrawData(ImGui::GetDrawData());
      bool ok = true;
      if (capture) ok = Screenshot(window, opt.screenshot);
      if (times != nullptr) glFinish(), times->render = ms_since(t), t = Clock::now();
      glfwSwapBuffers(window);
      if (times != nullptr) glFinish(), times->present = ms_since(t);
      return ok;
    };

    if (!headless) {
      while (!glfwWindowShouldClose(window) && !app.quit_requested()) draw_frame(false, nullptr);
    } else {
      if (!opt.screenshot.empty()) {
        int fw = 0, fh = 0;
        glfwGetFramebufferSize(window, &fw, &fh);
        if (fw != opt.width || fh != opt.height) {
          std::fprintf(stderr, "etscope-gui: warning: window is %dx%d, not %dx%d (screen too small?)\n", fw, fh,
                       opt.width, opt.height);
        }
        for (int f = 0; f < opt.frames; ++f) {
          if (!draw_frame(f + 1 == opt.frames, nullptr)) exit_code = 1;
        }
      }
      if (opt.bench_frames > 0) {
        // A few frames to settle layout and caches, then the timed ones.
        for (int f = 0; f < 3; ++f) draw_frame(false, nullptr);
        double total = 0, worst = 0, ui = 0, ui_worst = 0, render = 0, present = 0, vertices = 0;
        for (int f = 0; f < opt.bench_frames; ++f) {
          app.animate_for_bench(f, opt.bench_frames);
          FrameTimes times;
          draw_frame(false, &times);
          const double ms = times.ui + times.render + times.present;
          total += ms;
          worst = std::max(worst, ms);
          ui += times.ui;
          ui_worst = std::max(ui_worst, times.ui);
          render += times.render;
          present += times.present;
          vertices += times.vertices;
        }
        const etscope::gui::Session* s = app.session();
        const double n = opt.bench_frames;
        const size_t graph_nodes = s != nullptr && !s->graphs.empty() ? s->graphs[app.state().plan < s->graphs.size() ? app.state().plan : 0]->graph().nodes.size() : 0;
        std::printf("etscope-gui: %d frames (%s view, %dx%d, %zu timeline events, %zu graph nodes): mean %.2f ms, worst %.2f ms\n",
                    opt.bench_frames, opt.view.empty() ? "program" : opt.view.c_str(), opt.width, opt.height,
                    s != nullptr && s->timeline ? s->timeline->bar_count() : size_t{0}, graph_nodes, total / n, worst);
        const char* renderer = reinterpret_cast<const char*>(glGetString(GL_RENDERER));
        std::printf("  means: ui %.2f ms (worst %.2f), OpenGL render %.2f ms, swap %.2f ms, %.0f vertices; renderer %s\n",
                    ui / n, ui_worst, render / n, present / n, vertices / n, renderer != nullptr ? renderer : "?");
      }
      for (const std::string& e : app.all_errors()) std::fprintf(stderr, "etscope-gui: %s\n", e.c_str());
      if (!app.all_errors().empty()) exit_code = 1;
    }
    glfwSetWindowUserPointer(window, nullptr);
  }

  // Shut down.
  ImGui_ImplOpenGL3_Shutdown();
  ImGui_ImplGlfw_Shutdown();
  ImGui::DestroyContext();
  glfwDestroyWindow(window);
  glfwTerminate();
  return exit_code;
}
