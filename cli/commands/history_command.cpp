// etscope history: a program's method median (or one operator's) over its stored runs, with a
// sparkline and an SVG plot.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <optional>
#include <set>
#include <string>

#include "commands/command.h"
#include "commands/store_options.h"
#include "etscope/core/text.h"
#include "etscope/formats/blob.h"
#include "etscope/inspect/svg_plot.h"
#include "render/format.h"
#include "render/table.h"

namespace etscope::cli {
namespace {

// Eight block characters from the lowest value to the highest.
std::string sparkline(const std::vector<double>& v) {
  static const char* blocks[] = {"\u2581", "\u2582", "\u2583", "\u2584", "\u2585", "\u2586", "\u2587", "\u2588"};
  if (v.empty()) return "";
  const auto [lo, hi] = std::minmax_element(v.begin(), v.end());
  std::string s;
  for (double x : v) {
    const int k = *hi > *lo ? static_cast<int>(std::lround((x - *lo) / (*hi - *lo) * 7)) : 3;
    s += blocks[std::clamp(k, 0, 7)];
  }
  return s;
}

// Medians per run, oldest first, on a duration axis (the duration policy's units and ticks).
std::string plot_svg(const std::vector<store::HistoryPoint>& pts, const std::string& title) {
  const int w = 900, h = 360;
  const double left = 70, right = w - 30, top = 50, bottom = h - 45;
  inspect::SvgPlot svg(w, h);
  svg.text(left, 26, title, "font-size=\"15\" font-weight=\"bold\"");
  if (pts.empty()) return svg.finish();
  constexpr double kNsPerMs = 1e6;
  double lo = pts[0].median_ms * kNsPerMs, hi = lo;
  for (const auto& p : pts) lo = std::min(lo, p.median_ms * kNsPerMs), hi = std::max(hi, p.median_ms * kNsPerMs);
  if (hi - lo < 1e-6) lo -= 0.5 * std::max(lo, 1e3), hi += 0.5 * std::max(hi, 1e3);
  const inspect::SvgArea area{left, top, right, bottom};
  const inspect::SvgScale Y{lo, hi, bottom, top};
  auto X = [&](size_t i) { return pts.size() == 1 ? (left + right) / 2 : left + static_cast<double>(i) / static_cast<double>(pts.size() - 1) * (right - left); };
  svg.rect(left, top, right - left, bottom - top, "fill=\"none\" stroke=\"#888\"");
  svg.axis(inspect::SvgSide::kLeft, area, Y, time_ticks(lo, hi, 5), {.grid = true});
  std::vector<std::pair<double, double>> points;
  for (size_t i = 0; i < pts.size(); ++i) points.emplace_back(X(i), Y.at(pts[i].median_ms * kNsPerMs));
  svg.polyline(points, "fill=\"none\" stroke=\"#1f5fbf\" stroke-width=\"1.6\"");
  for (size_t i = 0; i < pts.size(); ++i) {
    svg.circle(points[i].first, points[i].second, 3, "fill=\"#1f5fbf\"", {},
               "run " + std::to_string(pts[i].run_id) + ", " + pts[i].created_at + ": " + duration_text(pts[i].median_ms * kNsPerMs));
  }
  svg.text((left + right) / 2, h - 14, "stored runs, oldest to newest (" + std::to_string(pts.size()) + ")", "text-anchor=\"middle\" fill=\"#444\"");
  return svg.finish();
}

class HistoryCommand final : public Command {
 public:
  CLI::App* add_to(CLI::App& app) override {
    CLI::App* sub = app.add_subcommand("history", "A program's method (or one operator's) median over its stored runs");
    sub->add_option("program", program_, "The program: its file (found by its SHA-256, whatever its name), a hash prefix, or the file name it was stored under")->required();
    sub->add_option("--op", op_, "An operator's event name, e.g. convolution.out (default: the method total)");
    sub->add_option("--plot", plot_, "Also write an SVG of the medians");
    sub->add_flag("--findings", findings_, "The findings stored with each run (etscope findings), marking those that appeared (+) "
                                           "and went (-) since the run before");
    add_table_format(sub, format_);
    sub->add_option("--time-unit", time_unit_, "Unit of the medians in the table: auto (default: 3 significant figures), ns, us, ms or s")
        ->check(CLI::IsMember({"auto", "ns", "us", "ms", "s"}));
    add_store_option(sub, location_);
    return sub;
  }

  Result<int> run() override {
    ETSCOPE_ASSIGN_OR_RETURN(const TimeUnit unit, parse_time_unit(time_unit_));
    ETSCOPE_ASSIGN_OR_RETURN(auto store, open_store(location_, store::OpenMode::kExisting));
    if (findings_) {
      if (!op_.empty() || !plot_.empty()) {
        std::fprintf(stderr, "etscope history: --findings lists findings, not medians: it takes no --op or --plot (etscope history --help lists the options)\n");
        return 2;
      }
      ETSCOPE_ASSIGN_OR_RETURN(std::vector<store::FindingsPoint> points, store->findings_history(program_));
      print_findings(points);
      return 0;
    }
    ETSCOPE_ASSIGN_OR_RETURN(auto pts, store->history(program_, op_));
    // history has refused a name that is several programs: this is the one it followed.
    ETSCOPE_ASSIGN_OR_RETURN(std::vector<store::StoredProgram> programs, store->programs(program_));
    const std::string label = programs.size() == 1 ? store::program_label(programs[0]) : program_;
    TextTable t;
    // People read durations by the one policy (three significant figures, --time-unit); CSV and
    // JSON keep the stored milliseconds at full precision.
    const bool table = format_ == "table";
    // The engine that timed each run beside its date: one cell in the table, name and version
    // apart in CSV and JSON.
    t.columns = {"run", "created_utc", "engine"};
    t.numeric = {true, false, false};
    if (!table) {
      t.columns.push_back("engine_version");
      t.numeric.push_back(false);
    }
    t.columns.insert(t.columns.end(), {table ? "median" : "median_ms", "samples"});
    t.numeric.insert(t.numeric.end(), {true, true});
    std::vector<double> medians;
    std::set<std::string> engines;
    for (const auto& p : pts) {
      std::vector<std::optional<std::string>> row{std::to_string(p.run_id), p.created_at};
      if (table) {
        row.emplace_back(p.engine.label());
      } else {
        row.emplace_back(p.engine.known() ? std::optional<std::string>(p.engine.name) : std::nullopt);
        row.emplace_back(p.engine.known() ? std::optional<std::string>(p.engine.version) : std::nullopt);
      }
      row.emplace_back(table ? duration_text_ms(p.median_ms, unit) : number_text(p.median_ms));
      row.emplace_back(std::to_string(p.samples));
      t.rows.push_back(std::move(row));
      medians.push_back(p.median_ms);
      engines.insert(p.engine.known() ? p.engine.name : "unknown");
    }
    // Medians of different engines time different code: no one trend (compare refuses them).
    if (engines.size() > 1) {
      std::string list;
      for (const std::string& e : engines) list += (list.empty() ? "" : ", ") + e;
      std::fprintf(stderr, "etscope: note: these runs were timed by %zu engines (%s): their medians are not one trend\n", engines.size(),
                   list.c_str());
    }
    std::fputs(render_table(t, format_).c_str(), stdout);
    const std::string what = label + (op_.empty() ? " (Method::execute)" : " (" + op_ + ")");
    if (table) std::printf("%s  %s, %s\n", sparkline(medians).c_str(), what.c_str(), count_text(pts.size(), "run").c_str());
    if (!plot_.empty()) ETSCOPE_TRY(write_file_text(plot_, plot_svg(pts, what + ": median per run")));
    return 0;
  }

 private:
  // Per run, oldest first: its findings, those that appeared since the run before (+) and those
  // that went (-). CSV and JSON: one row per finding and run, with its change.
  void print_findings(const std::vector<store::FindingsPoint>& points) const {
    if (format_ == "table") {
      for (const store::FindingsPoint& p : points) {
        std::printf("run %lld  %s  %s  %s\n", static_cast<long long>(p.run_id), p.created_at.c_str(), p.engine.label().c_str(),
                    count_text(p.findings.size(), "finding").c_str());
        for (size_t i = 0; i < p.findings.size(); ++i) {
          const store::StoredFinding& f = p.findings[i];
          const bool appeared = std::find(p.appeared.begin(), p.appeared.end(), i) != p.appeared.end();
          std::printf("  %s [%s] %s%s\n", appeared ? "+" : " ", f.severity.c_str(), f.key().c_str(),
                      f.time_ms ? ("  (" + duration_text_ms(*f.time_ms) + "/run)").c_str() : "");
        }
        for (const store::StoredFinding& f : p.gone) std::printf("  - [%s] %s\n", f.severity.c_str(), f.key().c_str());
      }
      return;
    }
    TextTable t;
    t.columns = {"run", "created_utc", "engine", "engine_version", "change", "rank", "rule", "severity", "what", "time_ms", "share", "bytes"};
    t.numeric = {true, false, false, false, false, true, false, false, false, true, true, true};
    auto optional_number = [](const std::optional<double>& v) { return v ? std::optional<std::string>(number_text(*v)) : std::nullopt; };
    auto add = [&](const store::FindingsPoint& p, const store::StoredFinding& f, const char* change, bool ranked) {
      t.rows.push_back({std::to_string(p.run_id), p.created_at,
                        p.engine.known() ? std::optional<std::string>(p.engine.name) : std::nullopt,
                        p.engine.known() ? std::optional<std::string>(p.engine.version) : std::nullopt, std::string(change),
                        ranked ? std::optional<std::string>(std::to_string(f.rank)) : std::nullopt, f.rule, f.severity, f.what,
                        optional_number(f.time_ms), optional_number(f.share), std::to_string(f.bytes)});
    };
    for (const store::FindingsPoint& p : points) {
      for (size_t i = 0; i < p.findings.size(); ++i) {
        const bool appeared = std::find(p.appeared.begin(), p.appeared.end(), i) != p.appeared.end();
        add(p, p.findings[i], appeared ? "appeared" : "kept", true);
      }
      for (const store::StoredFinding& f : p.gone) add(p, f, "gone", false);
    }
    std::fputs(render_table(t, format_).c_str(), stdout);
  }

  bool findings_ = false;
  std::string program_, op_, plot_, location_, format_ = "table";
  std::string time_unit_ = "auto";
};

}  // namespace

std::unique_ptr<Command> make_history_command() { return std::make_unique<HistoryCommand>(); }

}  // namespace etscope::cli
