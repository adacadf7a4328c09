#include "app/gui_options.h"

#include "views/view_state.h"

#include <cerrno>
#include <cstdlib>

namespace etscope::gui {
namespace {

bool parse_int(const std::string& text, int min, int max, int* out) {
  if (text.empty()) return false;
  char* end = nullptr;
  errno = 0;
  const long v = std::strtol(text.c_str(), &end, 10);
  if (errno != 0 || *end != '\0' || v < min || v > max) return false;
  *out = static_cast<int>(v);
  return true;
}

}  // namespace

const char* gui_usage() {
  return "usage: etscope-gui [FILES...] [--view program|graph|timeline|stats|memory|gaps|compare|training|generation|findings]\n"
         "                   [--plan NAME] [--baseline ETDUMP|RUN] [--store LOCATION] [--run RUN]\n"
         "                   [--select [CHAIN:]INSTRUCTION] [--screenshot OUT.png] [--frames N] [--size WxH]\n"
         "                   [--mouse X,Y] [--bench-frames N]\n"
         "FILES: a program (.pte/.bpte), an ETDump (.etdp), an ETRecord, a debug buffer (.bin), AOT\n"
         "intermediates (.ptd) and a training curve (train --curve .json), in any order; each file's kind\n"
         "is read from its bytes. --baseline: the run the Compare view compares the loaded one with.\n"
         "--store: a run store (SQLite file or postgresql:// URI); --run and --baseline then also take a\n"
         "stored run (id, or key=value for the newest run with that tag) or several, as etscope compare\n"
         "takes them (1,2,3,4; a tag of a run --repeat set is the whole set, e.g. set=5).\n";
}

Result<GuiOptions> parse_gui_options(const std::vector<std::string>& args) {
  GuiOptions o;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    auto value = [&](std::string* out) -> Status {
      if (i + 1 >= args.size()) return Error(ErrorCode::kInvalidArgument, a + " needs a value");
      *out = args[++i];
      return ok_status();
    };
    std::string v;
    if (a == "--help" || a == "-h") {
      o.help = true;
    } else if (a == "--view") {
      ETSCOPE_TRY(value(&o.view));
      bool known = false;
      std::string names;
      for (const ViewInfo& view : kViews) {
        known = known || o.view == view.key;
        names += (names.empty() ? "" : ", ") + std::string(view.key);
      }
      if (!known) return Error(ErrorCode::kInvalidArgument, "--view must be one of " + names + ", not '" + o.view + "'");
    } else if (a == "--baseline") {
      ETSCOPE_TRY(value(&o.baseline));
    } else if (a == "--store") {
      ETSCOPE_TRY(value(&o.store));
    } else if (a == "--run") {
      ETSCOPE_TRY(value(&o.run));
    } else if (a == "--plan") {
      ETSCOPE_TRY(value(&o.plan));
    } else if (a == "--screenshot") {
      ETSCOPE_TRY(value(&o.screenshot));
    } else if (a == "--frames") {
      ETSCOPE_TRY(value(&v));
      if (!parse_int(v, 1, 100000, &o.frames)) {
        return Error(ErrorCode::kInvalidArgument, "--frames needs a count from 1 to 100000, not '" + v + "'");
      }
    } else if (a == "--bench-frames") {
      ETSCOPE_TRY(value(&v));
      if (!parse_int(v, 1, 1000000, &o.bench_frames)) {
        return Error(ErrorCode::kInvalidArgument, "--bench-frames needs a count from 1 to 1000000, not '" + v + "'");
      }
    } else if (a == "--size") {
      ETSCOPE_TRY(value(&v));
      const size_t x = v.find('x');
      if (x == std::string::npos || !parse_int(v.substr(0, x), 200, 16384, &o.width) ||
          !parse_int(v.substr(x + 1), 150, 16384, &o.height)) {
        return Error(ErrorCode::kInvalidArgument, "--size needs WIDTHxHEIGHT (at least 200x150), not '" + v + "'");
      }
    } else if (a == "--select") {
      ETSCOPE_TRY(value(&v));
      const size_t colon = v.find(':');
      int chain = 0, instruction = 0;
      const bool ok = colon == std::string::npos
                          ? parse_int(v, 0, 1 << 30, &instruction)
                          : parse_int(v.substr(0, colon), 0, 1 << 30, &chain) &&
                                parse_int(v.substr(colon + 1), 0, 1 << 30, &instruction);
      if (!ok) return Error(ErrorCode::kInvalidArgument, "--select needs [CHAIN:]INSTRUCTION, not '" + v + "'");
      o.select_chain = chain;
      o.select_instruction = instruction;
    } else if (a == "--mouse") {
      ETSCOPE_TRY(value(&v));
      const size_t comma = v.find(',');
      if (comma == std::string::npos || !parse_int(v.substr(0, comma), 0, 16384, &o.mouse_x) ||
          !parse_int(v.substr(comma + 1), 0, 16384, &o.mouse_y)) {
        return Error(ErrorCode::kInvalidArgument, "--mouse needs X,Y in window pixels, not '" + v + "'");
      }
      o.mouse = true;
    } else if (a.size() > 1 && a[0] == '-' && a != "-") {
      return Error(ErrorCode::kInvalidArgument, "unknown option " + a);
    } else {
      o.files.push_back(a);
    }
  }
  if (!o.run.empty() && o.store.empty()) return Error(ErrorCode::kInvalidArgument, "--run needs --store LOCATION");
  return o;
}

}  // namespace etscope::gui
