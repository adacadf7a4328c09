// Curve files: JSON through nlohmann::json, CSV by hand, SVG through SvgPlot.
#include "etscope/inspect/training_curve.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <nlohmann/json.hpp>

#include "etscope/core/text.h"
#include "etscope/inspect/svg_plot.h"

namespace etscope::inspect {
namespace {

using Json = nlohmann::json;

Json number(double v) { return std::isfinite(v) ? Json(v) : Json(nullptr); }

Json optional_number(const std::optional<double>& v) { return v ? number(*v) : Json(nullptr); }

Json numbers(const std::vector<double>& v) {
  Json a = Json::array();
  for (double x : v) a.push_back(number(x));
  return a;
}

bool any_accuracy(const Curve& c) {
  return std::any_of(c.accuracy.begin(), c.accuracy.end(), [](const auto& a) { return a.has_value(); });
}

}  // namespace

std::string curve_json(const Curve& c) {
  Json j;
  j["first_step"] = c.first_step;
  j["loss"] = numbers(c.loss);
  if (any_accuracy(c)) {
    Json a = Json::array();
    for (const auto& v : c.accuracy) a.push_back(optional_number(v));
    j["accuracy"] = std::move(a);
  } else {
    j["accuracy"] = nullptr;
  }
  Json val = Json::array();
  for (const ValidationPoint& p : c.val) {
    val.push_back(Json{{"step", p.step}, {"loss", number(p.loss)}, {"accuracy", optional_number(p.accuracy)}});
  }
  j["val"] = std::move(val);
  j["step_ms"] = numbers(c.step_ms);
  j["forward_backward_ms"] = numbers(c.forward_backward_ms);
  j["optimizer_ms"] = numbers(c.optimizer_ms);
  return j.dump(1) + "\n";
}

std::string curve_csv(const Curve& c) {
  std::map<int64_t, const ValidationPoint*> val;
  for (const ValidationPoint& p : c.val) val[p.step] = &p;
  std::string out = "step,loss,accuracy,step_ms,forward_backward_ms,optimizer_ms,val_loss,val_accuracy\n";
  auto at = [](const std::vector<double>& v, size_t i) { return i < v.size() ? number_text(v[i]) : std::string(); };
  for (size_t i = 0; i < c.loss.size(); ++i) {
    const int64_t step = c.first_step + static_cast<int64_t>(i);
    out += std::to_string(step) + "," + number_text(c.loss[i]) + ",";
    if (i < c.accuracy.size() && c.accuracy[i]) out += number_text(*c.accuracy[i]);
    out += "," + at(c.step_ms, i) + "," + at(c.forward_backward_ms, i) + "," + at(c.optimizer_ms, i) + ",";
    if (auto it = val.find(step); it != val.end()) {
      out += number_text(it->second->loss) + ",";
      if (it->second->accuracy) out += number_text(*it->second->accuracy);
    } else {
      out += ",";
    }
    out += "\n";
  }
  return out;
}

Result<Curve> parse_curve_json(std::string_view text, const std::string& name) {
  const Json j = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  auto bad = [&](const std::string& what) { return Error(ErrorCode::kInvalidArgument, name + ": not a training curve (" + what + ")"); };
  if (!j.is_object()) return bad("not a JSON object");
  if (!j.contains("loss") || !j["loss"].is_array()) return bad("no \"loss\" array");
  auto read_numbers = [&](const char* key, std::vector<double>* out) -> Status {
    if (!j.contains(key)) return ok_status();
    if (!j[key].is_array()) return bad(std::string("\"") + key + "\" is not an array");
    for (const Json& v : j[key]) {
      if (v.is_number()) out->push_back(v.get<double>());
      else if (v.is_null()) out->push_back(std::nan(""));
      else return bad(std::string("\"") + key + "\" holds a non-number");
    }
    return ok_status();
  };
  Curve c;
  if (j.contains("first_step")) {
    if (!j["first_step"].is_number_integer()) return bad("\"first_step\" is not an integer");
    c.first_step = j["first_step"].get<int64_t>();
  }
  ETSCOPE_TRY(read_numbers("loss", &c.loss));
  ETSCOPE_TRY(read_numbers("step_ms", &c.step_ms));
  ETSCOPE_TRY(read_numbers("forward_backward_ms", &c.forward_backward_ms));
  ETSCOPE_TRY(read_numbers("optimizer_ms", &c.optimizer_ms));
  c.accuracy.assign(c.loss.size(), std::nullopt);
  if (j.contains("accuracy") && j["accuracy"].is_array()) {
    const Json& a = j["accuracy"];
    if (a.size() != c.loss.size()) return bad("\"accuracy\" and \"loss\" differ in length");
    for (size_t i = 0; i < a.size(); ++i) {
      if (a[i].is_number()) c.accuracy[i] = a[i].get<double>();
      else if (!a[i].is_null()) return bad("\"accuracy\" holds a non-number");
    }
  }
  if (j.contains("val") && j["val"].is_array()) {
    for (const Json& v : j["val"]) {
      if (!v.is_object() || !v.contains("step") || !v["step"].is_number_integer() || !v.contains("loss")) return bad("a \"val\" entry lacks step or loss");
      ValidationPoint p;
      p.step = v["step"].get<int64_t>();
      p.loss = v["loss"].is_number() ? v["loss"].get<double>() : std::nan("");
      if (v.contains("accuracy") && v["accuracy"].is_number()) p.accuracy = v["accuracy"].get<double>();
      c.val.push_back(p);
    }
  }
  return c;
}

std::string curve_svg(const Curve& c, const CurveSvgOptions& o) {
  const int w = std::max(o.width, 200), h = std::max(o.height, 150);
  const double left = 70, right = w - 70.0, top = 54, bottom = h - 46.0;
  SvgPlot svg(w, h);
  const std::string title = o.title.empty() ? std::string("training curve") : o.title;
  svg.text(left, 22, title, "font-size=\"15\" font-weight=\"bold\"");

  // Ranges over what is finite.
  std::vector<double> ys;
  for (double v : c.loss) if (std::isfinite(v)) ys.push_back(v);
  for (const ValidationPoint& p : c.val) if (std::isfinite(p.loss)) ys.push_back(p.loss);
  if (ys.empty()) {
    svg.text(w / 2.0, h / 2.0, "no steps", "text-anchor=\"middle\"");
    return svg.finish();
  }
  double lo = *std::min_element(ys.begin(), ys.end()), hi = *std::max_element(ys.begin(), ys.end());
  if (hi - lo < 1e-12 * std::max(1.0, std::abs(hi))) {
    lo -= std::max(std::abs(lo) * 0.05, 1e-6);
    hi += std::max(std::abs(hi) * 0.05, 1e-6);
  }
  const double pad = (hi - lo) * 0.05;
  lo -= pad;
  hi += pad;
  const double x0 = static_cast<double>(c.first_step);
  const double x1 = std::max(x0 + 1, static_cast<double>(c.first_step + static_cast<int64_t>(c.loss.size()) - 1));
  const SvgArea area{left, top, right, bottom};
  const SvgScale X{x0, x1, left, right}, Y{lo, hi, bottom, top}, A{0, 1, bottom, top};
  const bool acc = any_accuracy(c) ||
                   std::any_of(c.val.begin(), c.val.end(), [](const ValidationPoint& p) { return p.accuracy.has_value(); });

  // Grid, axes and labels. Steps are whole numbers: ticks between two steps are dropped.
  svg.axis(SvgSide::kLeft, area, Y, number_ticks(lo, hi, 6), {.grid = true});
  std::vector<Tick> steps;
  for (const Tick& t : number_ticks(x0, x1, 8)) {
    if (t.value >= x0 && std::floor(t.value) == t.value) steps.push_back({t.value, std::to_string(static_cast<int64_t>(t.value))});
  }
  svg.axis(SvgSide::kBottom, area, X, steps);
  svg.text((left + right) / 2, h - 10.0, "step", "fill=\"#444\" text-anchor=\"middle\"");
  const std::string middle = svg.num((top + bottom) / 2);
  svg.text(16, (top + bottom) / 2, "loss", "fill=\"#1f5fbf\" text-anchor=\"middle\" transform=\"rotate(-90 16 " + middle + ")\"");
  if (acc) {
    std::vector<Tick> fractions;
    for (double t : {0.0, 0.25, 0.5, 0.75, 1.0}) fractions.push_back({t, number_text(t)});
    svg.axis(SvgSide::kRight, area, A, fractions);
    svg.text(w - 14.0, (top + bottom) / 2, "accuracy",
             "fill=\"#d9731a\" text-anchor=\"middle\" transform=\"rotate(90 " + svg.num(w - 14.0) + " " + middle + ")\"");
  }
  svg.rect(left, top, right - left, bottom - top, "fill=\"none\" stroke=\"#888\"");

  // The series: polylines broken where a value is missing or not finite.
  auto series = [&](const char* colour, auto value_at, size_t n, const SvgScale& y, const char* cls) {
    const std::string style = std::string("fill=\"none\" stroke=\"") + colour + "\" stroke-width=\"1.6\"";
    std::vector<std::pair<double, double>> points;
    for (size_t i = 0; i < n; ++i) {
      const std::optional<double> v = value_at(i);
      if (v && std::isfinite(*v)) {
        points.emplace_back(X.at(x0 + static_cast<double>(i)), y.at(*v));
        continue;
      }
      svg.polyline(points, style, cls);
      points.clear();
    }
    svg.polyline(points, style, cls);
  };
  series("#1f5fbf", [&](size_t i) { return std::optional<double>(c.loss[i]); }, c.loss.size(), Y, "loss");
  if (any_accuracy(c)) series("#d9731a", [&](size_t i) { return i < c.accuracy.size() ? c.accuracy[i] : std::nullopt; }, c.loss.size(), A, "accuracy");
  for (const ValidationPoint& p : c.val) {
    const double x = X.at(static_cast<double>(p.step));
    const std::string after = " after step " + std::to_string(p.step);
    if (std::isfinite(p.loss)) {
      svg.circle(x, Y.at(p.loss), 4, "fill=\"#ffffff\" stroke=\"#1f5fbf\" stroke-width=\"2\"", "val-loss",
                 "validation loss " + significant_text(p.loss, 4) + after);
    }
    if (p.accuracy) {
      svg.circle(x, A.at(*p.accuracy), 4, "fill=\"#ffffff\" stroke=\"#d9731a\" stroke-width=\"2\"", "val-accuracy",
                 "validation accuracy " + significant_text(*p.accuracy, 4) + after);
    }
  }

  // Legend: one row under the title, right-aligned above the plot.
  double lx = right - 10;
  auto item = [&](const char* colour, const std::string& text, bool dot) {
    lx -= 28 + 7.0 * static_cast<double>(text.size());
    const std::string stroke = std::string("stroke=\"") + colour + "\" stroke-width=\"2\"";
    if (dot) {
      svg.circle(lx + 9, 42, 4, "fill=\"#ffffff\" " + stroke);
    } else {
      svg.line(lx, 42, lx + 18, 42, stroke);
    }
    svg.text(lx + 22, 46, text);
  };
  if (!c.val.empty()) item("#1f5fbf", "validation", true);
  if (any_accuracy(c)) item("#d9731a", "accuracy", false);
  item("#1f5fbf", "loss", false);
  return svg.finish();
}

}  // namespace etscope::inspect
