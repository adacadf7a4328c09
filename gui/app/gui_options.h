// GuiOptions: the etscope-gui command line.
//
//   etscope-gui [FILES...] [--view program|graph|timeline|stats|memory|gaps|compare|training] [--plan NAME]
//               [--baseline ETDUMP|RUN] [--store LOCATION] [--run RUN]
//               [--select [CHAIN:]INSTRUCTION] [--screenshot OUT.png] [--frames N] [--size WxH]
//               [--mouse X,Y] [--bench-frames N]
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "etscope/core/result.h"

namespace etscope::gui {

struct GuiOptions {
  std::vector<std::string> files;
  std::string view;               ///< "" (the first thing loaded decides) or a kViews key.
  std::string plan;               ///< Plan to show first; "" for the default ("forward").
  std::string baseline;           ///< Compare's baseline: an ETDump, or a stored run with --store.
  std::string store;              ///< A run store to open.
  std::string run;                ///< A stored run to show (needs --store).
  int select_chain = -1;          ///< Instruction selected once loaded (--select); -1: none.
  int select_instruction = -1;
  std::string screenshot;         ///< Write a PNG of the window after loading and exit.
  int frames = 5;                 ///< Frames drawn after loading before the screenshot.
  int width = 1600, height = 1000;
  int bench_frames = 0;           ///< > 0: time this many frames after loading, print, exit.
  /// Headless modes: where the mouse rests (window pixels), to show a tooltip in a screenshot.
  /// Without it the mouse is outside the window.
  bool mouse = false;
  int mouse_x = 0, mouse_y = 0;
  bool help = false;
};

/// Usage text for --help and errors.
const char* gui_usage();

/// Parses argv (without argv[0]). kInvalidArgument with a one-line message on a bad option.
Result<GuiOptions> parse_gui_options(const std::vector<std::string>& args);

}  // namespace etscope::gui
