// etscope-gui's headless mode under Xvfb: each view rendered from fixtures into a real window
// and saved as a PNG, which must have the requested size and show something (many colours,
// many pixels off the background). Registered only when xvfb-run exists and not under
// sanitizers (Mesa and GLFW leak, as LeakSanitizer sees it).
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>
#include <set>

#include "app/png_writer.h"
#include "testing/test_util.h"

using etscope::testing::fixture;
using etscope::testing::real_artifact;

namespace {

struct Run {
  int exit_code = -1;
  std::string out, err;
};

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

#ifdef ETSCOPE_XVFB_RUN
constexpr const char* kXvfbRun = ETSCOPE_XVFB_RUN;
#else
constexpr const char* kXvfbRun = nullptr;  // then CMake does not register these tests
#endif

// Runs etscope-gui under its own Xvfb. xvfb-run -a looks for a free display from --server-num
// on, and two xvfb-runs started together (another build's tests) can still pick the same one;
// start the search at a number of our own and retry when the server, not the viewer, failed.
Run run_gui(const std::string& args, const std::string& dir) {
  if (kXvfbRun == nullptr) FAIL("xvfb-run was not found at configure time");
  const std::string out = dir + "/stdout", err = dir + "/stderr";
  Run r;
  for (int attempt = 0; attempt < 4; ++attempt) {
    const int server = 100 + static_cast<int>((::getpid() * 7 + attempt * 131) % 3000);
    // A 24-bit screen larger than any window the tests ask for.
    const std::string cmd = std::string(kXvfbRun) + " -a -n " + std::to_string(server) +
                            " -s '-screen 0 1920x1200x24' " + ETSCOPE_GUI_PATH + " " + args + " >" + out + " 2>" + err;
    const int status = std::system(cmd.c_str());
    r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    r.out = slurp(out);
    r.err = slurp(err);
    // xvfb-run's own failures (no server, or its temporary directory not removed afterwards,
    // which it reports with exit code 5 in place of the app's) say nothing about the app: retry.
    const bool no_display = r.err.find("Xvfb failed to start") != std::string::npos ||
                            r.err.find("cannot open a window") != std::string::npos ||
                            r.err.find("GLFW error") != std::string::npos ||
                            r.err.find("problem while cleaning up temporary directory") != std::string::npos;
    if (!no_display) break;
  }
  return r;
}

struct PictureStats {
  size_t colours = 0;
  double off_background = 0;  ///< Share of pixels not of the most common colour.
};

PictureStats picture_stats(const etscope::gui::Image& img) {
  std::map<uint32_t, size_t> counts;
  const size_t n = static_cast<size_t>(img.width) * static_cast<size_t>(img.height);
  for (size_t i = 0; i < n; ++i) {
    const uint8_t* p = &img.pixels[i * static_cast<size_t>(img.channels)];
    ++counts[(uint32_t{p[0]} << 16) | (uint32_t{p[1]} << 8) | p[2]];
  }
  size_t most = 0;
  for (const auto& [colour, count] : counts) most = std::max(most, count);
  return {counts.size(), 1.0 - static_cast<double>(most) / static_cast<double>(n)};
}

void check_screenshot(const std::string& view, const std::string& files, double min_off_background) {
  const std::string dir = etscope::testing::temp_dir("gui_screenshot_" + view);
  const std::string png = dir + "/" + view + ".png";
  const Run r = run_gui("--screenshot " + png + " --view " + view + " --size 1200x800 " + files, dir);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  auto img = etscope::gui::read_png(png);
  REQUIRE(img.ok());
  CHECK(img->width == 1200);
  CHECK(img->height == 800);
  const PictureStats s = picture_stats(*img);
  INFO(view << ": " << s.colours << " colours, " << s.off_background * 100 << "% off background");
  CHECK(s.colours >= 40);  // text antialiasing alone gives dozens; a blank window gives one
  CHECK(s.off_background >= min_off_background);
}

}  // namespace

TEST_CASE("screenshot of the program view", "[gui][screenshot]") {
  check_screenshot("program", fixture("simple_conv/simple_conv.pte") + " " + fixture("simple_conv/simple_conv.etdp"), 0.08);
}

TEST_CASE("screenshot of the timeline view", "[gui][screenshot]") {
  check_screenshot("timeline", fixture("cifar10/cifar10.etdp"), 0.15);
}

TEST_CASE("screenshot of the op statistics view", "[gui][screenshot]") {
  check_screenshot("stats",
                   fixture("simple_conv/simple_conv.pte") + " " + fixture("simple_conv/simple_conv.etdp") + " " +
                       fixture("simple_conv/simple_conv.etrecord"),
                   0.08);
}

TEST_CASE("screenshot of the memory view", "[gui][screenshot]") {
  check_screenshot("memory", real_artifact("xor_training.pte"), 0.3);
}

TEST_CASE("screenshot of the numeric gaps view", "[gui][screenshot]") {
  const std::string base = "cifar10/cifar10";
  // Instruction 3 (the second convolution) selected: bars, table and its tensors side by side.
  check_screenshot("gaps",
                   "--select 0:3 " + fixture(base + ".pte") + " " + fixture(base + ".etdp") + " " + fixture(base + ".etrecord") +
                       " " + fixture(base + ".debug.bin") + " " + fixture(base + ".aot_intermediates.ptd"),
                   0.3);
}

TEST_CASE("screenshot of the compare view", "[gui][screenshot]") {
  // Two runs of cifar10: per-operator deltas and the two timelines on one axis.
  check_screenshot("compare",
                   "--baseline " + fixture("cifar10/cifar10.profile.etdp") + " " + fixture("cifar10/cifar10.etdp"), 0.2);
}

TEST_CASE("screenshot of the training view", "[gui][screenshot]") {
  check_screenshot("training", std::string(etscope::testing::test_data_dir()) + "/gui/convnet_ce.curve.json", 0.2);
}

TEST_CASE("screenshot of the generation view", "[gui][screenshot]") {
  // A 24-token generation's dump: the phase split, the decode bars and both operator tables.
  const std::string dump = etscope::testing::temp_dir("gui_screenshot_generation_dump") + "/g.etdp";
  const std::string model = etscope::testing::fixture_extracted_dir() + "/llm/xnn_8da4w_emb4/model.pte";
  REQUIRE(etscope::testing::run_etscope("generate '" + model + "' --prompt-ids 1,17,42,200 --max-new-tokens 24 --ignore-eos --etdump '" +
                                        dump + "'")
              .exit_code == 0);
  check_screenshot("generation", dump, 0.2);
}

TEST_CASE("a file that cannot be read shows the error dialog and exits 1", "[gui][screenshot]") {
  const std::string dir = etscope::testing::temp_dir("gui_screenshot_error");
  const std::string png = dir + "/error.png";
  const std::string ptd = real_artifact("xor_training.ptd");
  const Run r = run_gui("--screenshot " + png + " --size 900x600 " + ptd, dir);
  CHECK(r.exit_code == 1);
  CHECK(r.err.find("etscope-gui: " + ptd + ": key 'net.linear.weight' is not debug handles") != std::string::npos);
  auto img = etscope::gui::read_png(png);
  REQUIRE(img.ok());
  CHECK(img->width == 900);
  CHECK(picture_stats(*img).colours >= 20);
}

TEST_CASE("the bench mode prints the mean and worst frame time", "[gui][screenshot]") {
  const std::string dir = etscope::testing::temp_dir("gui_bench");
  const Run r = run_gui("--bench-frames 20 --view timeline --size 800x600 " + fixture("cifar10/cifar10.etdp"), dir);
  INFO(r.err);
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("20 frames (timeline view, 800x600, 292 timeline events, 0 graph nodes): mean ") != std::string::npos);
  CHECK(r.out.find(" ms, worst ") != std::string::npos);
  // The graph view zooms through its layout.
  const Run g = run_gui("--bench-frames 10 --view graph --size 800x600 " + fixture("cifar10/cifar10.pte"), dir);
  INFO(g.err);
  CHECK(g.exit_code == 0);
  CHECK(g.out.find("10 frames (graph view, 800x600, 0 timeline events, 16 graph nodes): mean ") != std::string::npos);
}

TEST_CASE("screenshot of the graph view", "[gui][screenshot]") {
  const std::string base = "cifar10/cifar10";
  // Coloured by time share, module groups from the ETRecord, instruction 3 selected.
  check_screenshot("graph", "--select 0:3 " + fixture(base + ".pte") + " " + fixture(base + ".etdp") + " " + fixture(base + ".etrecord"), 0.2);
}

TEST_CASE("screenshot of the findings view", "[gui][screenshot]") {
  // partial_lowering run by etscope's engine: the ELU left between two XNNPACK calls (timed,
  // opened, its instruction selected) and the first execution's warm-up.
  const std::string dump = etscope::testing::temp_dir("gui_screenshot_findings_dump") + "/run.etdp";
  const std::string pte = fixture("findings/partial_lowering.pte");
  const auto run = etscope::testing::run_etscope("run '" + pte + "' --engine etscope --input '" +
                                                 fixture("findings/partial_lowering.input0.npy") + "' --iterations 5 --etdump '" + dump + "'");
  INFO(run.err);
  REQUIRE(run.exit_code == 0);
  check_screenshot("findings", "--select 0:1 " + pte + " " + dump + " " + fixture("findings/partial_lowering.etrecord"), 0.08);
}
