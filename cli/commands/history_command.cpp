// etscope history: a program's method median (or one operator's) over its stored runs, with a
// sparkline and an SVG plot.
#include <algorithm>
#include <cmath>
#include <cstdio>

#include "commands/command.h"
#include "commands/store_options.h"
#include "etscope/core/xml.h"
#include "etscope/formats/blob.h"
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

std::string plot_svg(const std::vector<store::HistoryPoint>& pts, const std::string& title) {
  const double w = 900, h = 360, left = 70, right = w - 30, top = 50, bottom = h - 45;
  std::string s = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"900\" height=\"360\" font-family=\"sans-serif\" font-size=\"12\">\n"
                  "<rect width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>\n<text x=\"70\" y=\"26\" font-size=\"15\" font-weight=\"bold\">" +
                  xml_escape(title) + "</text>\n";
  if (pts.empty()) return s + "</svg>\n";
  double lo = pts[0].median_ms, hi = lo;
  for (const auto& p : pts) lo = std::min(lo, p.median_ms), hi = std::max(hi, p.median_ms);
  if (hi - lo < 1e-12) lo -= 0.5 * std::max(lo, 1e-3), hi += 0.5 * std::max(hi, 1e-3);
  auto X = [&](size_t i) { return pts.size() == 1 ? (left + right) / 2 : left + static_cast<double>(i) / static_cast<double>(pts.size() - 1) * (right - left); };
  auto Y = [&](double v) { return bottom - (v - lo) / (hi - lo) * (bottom - top); };
  char buf[256];
  s += "<rect x=\"70\" y=\"50\" width=\"800\" height=\"265\" fill=\"none\" stroke=\"#888\"/>\n";
  for (double v : {lo, (lo + hi) / 2, hi}) {
    std::snprintf(buf, sizeof buf, "<text x=\"64\" y=\"%.1f\" text-anchor=\"end\" fill=\"#444\">%.4g ms</text>\n", Y(v) + 4, v);
    s += buf;
  }
  std::string points;
  for (size_t i = 0; i < pts.size(); ++i) {
    std::snprintf(buf, sizeof buf, "%s%.1f,%.1f", i ? " " : "", X(i), Y(pts[i].median_ms));
    points += buf;
  }
  s += "<polyline fill=\"none\" stroke=\"#1f5fbf\" stroke-width=\"1.6\" points=\"" + points + "\"/>\n";
  for (size_t i = 0; i < pts.size(); ++i) {
    std::snprintf(buf, sizeof buf, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3\" fill=\"#1f5fbf\"><title>run %lld, %s: %.6g ms</title></circle>\n", X(i),
                  Y(pts[i].median_ms), static_cast<long long>(pts[i].run_id), pts[i].created_at.c_str(), pts[i].median_ms);
    s += buf;
  }
  std::snprintf(buf, sizeof buf, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" fill=\"#444\">stored runs, oldest to newest (%zu)</text>\n",
                (left + right) / 2, h - 14, pts.size());
  return s + buf + "</svg>\n";
}

class HistoryCommand final : public Command {
 public:
  CLI::App* add_to(CLI::App& app) override {
    CLI::App* sub = app.add_subcommand("history", "A program's method (or one operator's) median over its stored runs");
    sub->add_option("program", program_, "Program file name (as stored with --pte) or hash prefix")->required();
    sub->add_option("--op", op_, "An operator's event name, e.g. convolution.out (default: the method total)");
    sub->add_option("--plot", plot_, "Also write an SVG of the medians");
    add_table_format(sub, format_);
    add_store_option(sub, location_);
    return sub;
  }

  Result<int> run() override {
    ETSCOPE_ASSIGN_OR_RETURN(auto store, open_store(location_));
    ETSCOPE_ASSIGN_OR_RETURN(auto pts, store->history(program_, op_));
    TextTable t;
    t.columns = {"run", "created_utc", "median_ms", "samples"};
    t.numeric = {true, false, true, true};
    std::vector<double> medians;
    for (const auto& p : pts) {
      t.rows.push_back({std::to_string(p.run_id), p.created_at, number_string(p.median_ms), std::to_string(p.samples)});
      medians.push_back(p.median_ms);
    }
    std::fputs(render_table(t, format_).c_str(), stdout);
    const std::string what = program_ + (op_.empty() ? " (Method::execute)" : " (" + op_ + ")");
    if (format_ == "table") std::printf("%s  %s, %zu runs\n", sparkline(medians).c_str(), what.c_str(), pts.size());
    if (!plot_.empty()) ETSCOPE_TRY(write_file_text(plot_, plot_svg(pts, what + ": median per run")));
    return 0;
  }

 private:
  std::string program_, op_, plot_, location_, format_ = "table";
};

}  // namespace

std::unique_ptr<Command> make_history_command() { return std::make_unique<HistoryCommand>(); }

}  // namespace etscope::cli
