// gui/app: command line, recent files, PNG round trip, and the App driving the views inside a
// bare ImGui context (no window, no OpenGL), as ImGui's example_null does.
#include <catch2/catch.hpp>

#include <imgui.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "app/app.h"
#include "app/gui_options.h"
#include "app/png_writer.h"
#include "app/recent_files.h"
#include "gui/headless_imgui.h"
#include "testing/test_util.h"

using namespace etscope;
using namespace etscope::gui;
using etscope::testing::fixture;

TEST_CASE("the command line takes files and the headless options", "[gui][options]") {
  auto o = parse_gui_options({"a.pte", "--view", "memory", "b.etdp", "--screenshot", "out.png", "--frames", "3",
                              "--size", "800x600", "--mouse", "10,20", "--plan", "train"});
  REQUIRE(o.ok());
  CHECK(o->files == std::vector<std::string>{"a.pte", "b.etdp"});
  CHECK(o->view == "memory");
  CHECK(o->screenshot == "out.png");
  CHECK(o->frames == 3);
  CHECK(o->width == 800);
  CHECK(o->height == 600);
  CHECK(o->mouse);
  CHECK(o->mouse_x == 10);
  CHECK(o->plan == "train");
  CHECK(parse_gui_options({"--bench-frames", "100"})->bench_frames == 100);
  CHECK(o->select_chain == -1);
  auto sel = parse_gui_options({"--select", "7"});
  CHECK(sel->select_chain == 0);
  CHECK(sel->select_instruction == 7);
  sel = parse_gui_options({"--select", "1:2"});
  CHECK(sel->select_chain == 1);
  CHECK(sel->select_instruction == 2);
  CHECK(parse_gui_options({"--select", "x"}).error().message() == "--select needs [CHAIN:]INSTRUCTION, not 'x'");
  CHECK(parse_gui_options({"--help"})->help);
  CHECK_THAT(parse_gui_options({"--view", "chart"}).error().message(), Catch::EndsWith(", not 'chart'"));
  CHECK(parse_gui_options({"--view", "gaps"})->view == "gaps");
  CHECK(parse_gui_options({"--view", "chart"}).error().message().rfind("--view must be one of program, graph, timeline, stats, memory, gaps, compare, training", 0) == 0);
  auto cmp = parse_gui_options({"--store", "runs.sqlite", "--run", "build=pr", "--baseline", "7", "b.etdp"});
  REQUIRE(cmp.ok());
  CHECK(cmp->store == "runs.sqlite");
  CHECK(cmp->run == "build=pr");
  CHECK(cmp->baseline == "7");
  CHECK(cmp->files == std::vector<std::string>{"b.etdp"});
  CHECK(parse_gui_options({"--run", "3"}).error().message() == "--run needs --store LOCATION");
  CHECK(parse_gui_options({"--size", "big"}).error().message().find("WIDTHxHEIGHT") != std::string::npos);
  CHECK(parse_gui_options({"--frames"}).error().message() == "--frames needs a value");
  CHECK(parse_gui_options({"--frames", "0"}).error().code() == ErrorCode::kInvalidArgument);
  CHECK(parse_gui_options({"--wat"}).error().message() == "unknown option --wat");
}

TEST_CASE("recent files are kept newest first, without duplicates, across runs", "[gui][recent]") {
  const std::string dir = etscope::testing::temp_dir("gui_recent");
  const std::string path = dir + "/sub/recent_files";
  {
    RecentFiles r(path);
    r.load();
    CHECK(r.entries().empty());
    r.add("/a/model.pte");
    r.add("/b/run.etdp");
    r.add("/a/model.pte");
    CHECK(r.entries() == std::vector<std::string>{"/a/model.pte", "/b/run.etdp"});
    for (int i = 0; i < 20; ++i) r.add("/f" + std::to_string(i));
    CHECK(r.entries().size() == RecentFiles::kMaxEntries);
    CHECK(r.entries().front() == "/f19");
  }
  RecentFiles again(path);
  again.load();
  CHECK(again.entries().size() == RecentFiles::kMaxEntries);
  CHECK(again.entries().front() == "/f19");
  again.clear();
  RecentFiles cleared(path);
  cleared.load();
  CHECK(cleared.entries().empty());
  RecentFiles memory_only("");
  memory_only.add("/x");
  CHECK(memory_only.entries().size() == 1);
}

TEST_CASE("the recent list lives under XDG_CONFIG_HOME, else ~/.config", "[gui][recent]") {
  const char* old_xdg = std::getenv("XDG_CONFIG_HOME");
  const std::string saved = old_xdg ? old_xdg : "";
  ::setenv("XDG_CONFIG_HOME", "/tmp/xdg-test", 1);
  CHECK(RecentFiles::default_path() == "/tmp/xdg-test/etscope/recent_files");
  ::unsetenv("XDG_CONFIG_HOME");
  const char* home = std::getenv("HOME");
  if (home != nullptr && home[0] != '\0') {
    CHECK(RecentFiles::default_path() == std::string(home) + "/.config/etscope/recent_files");
  }
  if (old_xdg != nullptr) ::setenv("XDG_CONFIG_HOME", saved.c_str(), 1);
}

TEST_CASE("PNG files round-trip", "[gui][png]") {
  Image img;
  img.width = 3;
  img.height = 2;
  img.channels = 3;
  img.pixels = {255, 0, 0, 0, 255, 0, 0, 0, 255, 10, 20, 30, 40, 50, 60, 70, 80, 90};
  const std::string path = etscope::testing::temp_dir("gui_png") + "/t.png";
  REQUIRE(write_png(path, img).ok());
  auto back = read_png(path);
  REQUIRE(back.ok());
  CHECK(back->width == 3);
  CHECK(back->height == 2);
  CHECK(back->pixels == img.pixels);
  img.pixels.pop_back();
  CHECK(write_png(path, img).error().code() == ErrorCode::kInvalidArgument);
  CHECK(read_png("/nonexistent.png").error().message().rfind("/nonexistent.png: ", 0) == 0);
}


TEST_CASE("every view draws the simple_conv fixture without a window", "[gui][views]") {
  HeadlessImGui imgui;
  App app("");
  app.open({fixture("simple_conv/simple_conv.pte"), fixture("simple_conv/simple_conv.etdp"),
            fixture("simple_conv/simple_conv.etrecord")});
  app.wait_until_loaded();
  REQUIRE(app.session() != nullptr);
  CHECK(app.all_errors().empty());
  for (ViewId view : {ViewId::kProgram, ViewId::kTimeline, ViewId::kStats, ViewId::kMemory}) {
    app.state().view = view;
    app.state().select_view = true;
    int vertices = 0;
    for (int f = 0; f < 3; ++f) vertices = imgui.Frame(app);
    CHECK(app.state().view == view);
    CHECK(vertices > 2000);
  }
  // The shared selection reaches every view without trouble.
  app.state().select({0, 1});
  for (ViewId view : {ViewId::kProgram, ViewId::kTimeline, ViewId::kStats, ViewId::kMemory}) {
    app.state().view = view;
    app.state().select_view = true;
    for (int f = 0; f < 3; ++f) imgui.Frame(app);
  }
  CHECK(app.state().selected == InstructionRef{0, 1});
  CHECK_FALSE(app.state().timeline.scroll_to_selection);  // consumed by the timeline
}

TEST_CASE("a generation's dump opens on the Generation view, which draws without a window", "[gui][views][generation]") {
  const std::string dump = etscope::testing::temp_dir("gui_app_generation") + "/g.etdp";
  const std::string model = etscope::testing::fixture_extracted_dir() + "/llm/xnn_8da4w_emb4/model.pte";
  REQUIRE(etscope::testing::run_etscope("generate '" + model + "' --prompt-ids 1,2,3 --max-new-tokens 6 --ignore-eos --etdump '" + dump + "'")
              .exit_code == 0);
  HeadlessImGui imgui;
  App app("");
  app.open({dump});
  app.wait_until_loaded();
  REQUIRE(app.session() != nullptr);
  REQUIRE(app.session()->generation.has_value());
  CHECK(app.state().view == ViewId::kGeneration);
  int vertices = 0;
  for (int f = 0; f < 3; ++f) vertices = imgui.Frame(app);
  CHECK(app.state().view == ViewId::kGeneration);
  CHECK(vertices > 2000);
  app.state().generation.prompt_tokens = 3;
  for (int f = 0; f < 2; ++f) imgui.Frame(app);
  CHECK(app.session()->generation->recomputations() == 1);
}

TEST_CASE("the mouse wheel zooms the timeline around the pointer", "[gui][views]") {
  HeadlessImGui imgui;
  App app("");
  app.open({fixture("cifar10/cifar10.etdp")});
  app.wait_until_loaded();
  app.state().view = ViewId::kTimeline;
  app.state().select_view = true;
  for (int f = 0; f < 3; ++f) imgui.Frame(app);
  const double w0 = app.state().timeline.t1 - app.state().timeline.t0;
  REQUIRE(w0 > 0);
  ImGuiIO& io = ImGui::GetIO();
  io.MousePos = ImVec2(700, 400);
  imgui.Frame(app);
  io.MouseWheel = 2.0f;
  imgui.Frame(app);
  io.MouseWheel = 0.0f;
  const double w1 = app.state().timeline.t1 - app.state().timeline.t0;
  CHECK(w1 == Approx(w0 * 0.64));
  // Fit brings the whole trace back.
  app.state().timeline.fit = true;
  imgui.Frame(app);
  CHECK(app.state().timeline.t1 - app.state().timeline.t0 == Approx(w0));
}

TEST_CASE("load errors reach the dialog state and nothing else breaks", "[gui][views]") {
  HeadlessImGui imgui;
  App app("");
  app.open({"/nonexistent/model.pte"});
  app.wait_until_loaded();
  imgui.Frame(app);
  REQUIRE(app.state().errors.size() == 1);
  CHECK(app.state().errors[0] == app.all_errors()[0]);
  CHECK(app.state().errors[0].rfind("/nonexistent/model.pte: ", 0) == 0);
  CHECK(app.state().errors_popup_open);
  for (int f = 0; f < 2; ++f) imgui.Frame(app);
  CHECK(app.state().errors.size() == 1);  // stays until dismissed
}

TEST_CASE("files opened later (menu, drop) add to what is loaded and go to the recent list", "[gui][views]") {
  const std::string recent = etscope::testing::temp_dir("gui_app_recent") + "/recent_files";
  HeadlessImGui imgui;
  App app(recent);
  app.open({fixture("simple_conv/simple_conv.pte")});
  app.wait_until_loaded();
  imgui.Frame(app);
  REQUIRE(app.session() != nullptr);
  CHECK(app.state().view == ViewId::kProgram);  // a program opens on the Program view
  const auto* program = app.session()->program.get();
  // As File > Open or a drop would: the request goes through the ViewState.
  app.state().open_requests = {fixture("simple_conv/simple_conv.etdp"), "/nonexistent/x.etrecord"};
  imgui.Frame(app);
  app.wait_until_loaded();
  imgui.Frame(app);
  CHECK(app.session()->program.get() == program);
  CHECK(app.session()->timeline.has_value());
  CHECK(app.state().errors.size() == 1);
  RecentFiles saved(recent);
  saved.load();
  REQUIRE(saved.entries().size() == 2);  // the file that failed is not remembered
  CHECK(saved.entries()[0].find("simple_conv.etdp") != std::string::npos);
  CHECK(saved.entries()[1].find("simple_conv.pte") != std::string::npos);
  CHECK(app.state().recent == saved.entries());
  app.state().close_requested = true;
  imgui.Frame(app);
  CHECK(app.session() == nullptr);
}

TEST_CASE("issue 28: the gaps view starts with debug's metric, SNR", "[gui][gaps]") {
  const GapsViewState state;
  CHECK(state.metric == static_cast<int>(inspect::GapMetric::kSNR));
  CHECK(state.metric == static_cast<int>(inspect::kDefaultGapMetric));
}
