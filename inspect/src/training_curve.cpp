// Curve files: JSON through nlohmann::json, CSV and SVG written by hand (a few lines each).
#include "etscope/inspect/training_curve.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <nlohmann/json.hpp>

#include "etscope/core/xml.h"

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

// Shortest text that reads back as the same double ("%.17g" trimmed to what is needed).
std::string cell(double v) {
  if (!std::isfinite(v)) return std::isnan(v) ? "nan" : (v > 0 ? "inf" : "-inf");
  char buf[40];
  for (int precision = 6; precision <= 17; ++precision) {
    std::snprintf(buf, sizeof buf, "%.*g", precision, v);
    if (std::strtod(buf, nullptr) == v) break;
  }
  return buf;
}

std::string fixed(double v, int digits) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

// "Nice" axis ticks covering [lo, hi]: steps of 1, 2 or 5 times a power of ten.
std::vector<double> ticks(double lo, double hi, int wanted) {
  if (!(hi > lo)) return {lo};
  const double raw = (hi - lo) / std::max(1, wanted);
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  double step = mag;
  for (double m : {1.0, 2.0, 5.0, 10.0}) {
    step = m * mag;
    if (step >= raw) break;
  }
  std::vector<double> t;
  for (double v = std::ceil(lo / step) * step; v <= hi + step * 1e-9 && t.size() < 64; v += step) t.push_back(v);
  return t;
}

std::string tick_label(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4g", std::abs(v) < 1e-12 ? 0.0 : v);
  return buf;
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
  auto at = [](const std::vector<double>& v, size_t i) { return i < v.size() ? cell(v[i]) : std::string(); };
  for (size_t i = 0; i < c.loss.size(); ++i) {
    const int64_t step = c.first_step + static_cast<int64_t>(i);
    out += std::to_string(step) + "," + cell(c.loss[i]) + ",";
    if (i < c.accuracy.size() && c.accuracy[i]) out += cell(*c.accuracy[i]);
    out += "," + at(c.step_ms, i) + "," + at(c.forward_backward_ms, i) + "," + at(c.optimizer_ms, i) + ",";
    if (auto it = val.find(step); it != val.end()) {
      out += cell(it->second->loss) + ",";
      if (it->second->accuracy) out += cell(*it->second->accuracy);
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
  std::string s = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + std::to_string(w) + "\" height=\"" +
                  std::to_string(h) + "\" viewBox=\"0 0 " + std::to_string(w) + " " + std::to_string(h) +
                  "\" font-family=\"sans-serif\" font-size=\"12\">\n";
  s += "<rect width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>\n";
  const std::string title = o.title.empty() ? std::string("training curve") : o.title;
  s += "<text x=\"" + fixed(left, 0) + "\" y=\"22\" font-size=\"15\" font-weight=\"bold\">" + xml_escape(title) + "</text>\n";

  // Ranges over what is finite.
  std::vector<double> ys;
  for (double v : c.loss) if (std::isfinite(v)) ys.push_back(v);
  for (const ValidationPoint& p : c.val) if (std::isfinite(p.loss)) ys.push_back(p.loss);
  if (ys.empty()) {
    s += "<text x=\"" + fixed(w / 2.0, 0) + "\" y=\"" + fixed(h / 2.0, 0) + "\" text-anchor=\"middle\">no steps</text>\n</svg>\n";
    return s;
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
  auto X = [&](double step) { return left + (step - x0) / (x1 - x0) * (right - left); };
  auto Y = [&](double v) { return bottom - (v - lo) / (hi - lo) * (bottom - top); };
  auto A = [&](double a) { return bottom - a * (bottom - top); };
  const bool acc = any_accuracy(c) ||
                   std::any_of(c.val.begin(), c.val.end(), [](const ValidationPoint& p) { return p.accuracy.has_value(); });

  // Grid, axes and labels.
  s += "<g stroke=\"#e4e4e4\">\n";
  for (double t : ticks(lo, hi, 6)) s += "<line x1=\"" + fixed(left, 1) + "\" x2=\"" + fixed(right, 1) + "\" y1=\"" + fixed(Y(t), 1) + "\" y2=\"" + fixed(Y(t), 1) + "\"/>\n";
  s += "</g>\n<g fill=\"#444\" text-anchor=\"end\">\n";
  for (double t : ticks(lo, hi, 6)) s += "<text x=\"" + fixed(left - 6, 1) + "\" y=\"" + fixed(Y(t) + 4, 1) + "\">" + tick_label(t) + "</text>\n";
  s += "</g>\n<g fill=\"#444\" text-anchor=\"middle\">\n";
  for (double t : ticks(x0, x1, 8)) {
    if (t < x0 || std::floor(t) != t) continue;
    s += "<text x=\"" + fixed(X(t), 1) + "\" y=\"" + fixed(bottom + 16, 1) + "\">" + tick_label(t) + "</text>\n";
  }
  s += "<text x=\"" + fixed((left + right) / 2, 1) + "\" y=\"" + fixed(h - 10.0, 1) + "\">step</text>\n</g>\n";
  s += "<text x=\"16\" y=\"" + fixed((top + bottom) / 2, 1) + "\" fill=\"#1f5fbf\" text-anchor=\"middle\" transform=\"rotate(-90 16 " +
       fixed((top + bottom) / 2, 1) + ")\">loss</text>\n";
  if (acc) {
    s += "<g fill=\"#444\" text-anchor=\"start\">\n";
    for (double t : {0.0, 0.25, 0.5, 0.75, 1.0}) s += "<text x=\"" + fixed(right + 6, 1) + "\" y=\"" + fixed(A(t) + 4, 1) + "\">" + tick_label(t) + "</text>\n";
    s += "</g>\n<text x=\"" + fixed(w - 14.0, 1) + "\" y=\"" + fixed((top + bottom) / 2, 1) +
         "\" fill=\"#d9731a\" text-anchor=\"middle\" transform=\"rotate(90 " + fixed(w - 14.0, 1) + " " + fixed((top + bottom) / 2, 1) +
         ")\">accuracy</text>\n";
  }
  s += "<rect x=\"" + fixed(left, 1) + "\" y=\"" + fixed(top, 1) + "\" width=\"" + fixed(right - left, 1) + "\" height=\"" +
       fixed(bottom - top, 1) + "\" fill=\"none\" stroke=\"#888\"/>\n";

  // The series: polylines broken where a value is missing or not finite.
  auto series = [&](const std::string& colour, auto value_at, size_t n, auto y_of, const char* cls) {
    std::string points;
    auto flush = [&]() {
      if (!points.empty()) s += "<polyline class=\"" + std::string(cls) + "\" fill=\"none\" stroke=\"" + colour + "\" stroke-width=\"1.6\" points=\"" + points + "\"/>\n";
      points.clear();
    };
    for (size_t i = 0; i < n; ++i) {
      const std::optional<double> v = value_at(i);
      if (!v || !std::isfinite(*v)) {
        flush();
        continue;
      }
      points += (points.empty() ? "" : " ") + fixed(X(x0 + static_cast<double>(i)), 1) + "," + fixed(y_of(*v), 1);
    }
    flush();
  };
  series("#1f5fbf", [&](size_t i) { return std::optional<double>(c.loss[i]); }, c.loss.size(), Y, "loss");
  if (any_accuracy(c)) series("#d9731a", [&](size_t i) { return i < c.accuracy.size() ? c.accuracy[i] : std::nullopt; }, c.loss.size(), A, "accuracy");
  for (const ValidationPoint& p : c.val) {
    const double x = X(static_cast<double>(p.step));
    if (std::isfinite(p.loss)) {
      s += "<circle class=\"val-loss\" cx=\"" + fixed(x, 1) + "\" cy=\"" + fixed(Y(p.loss), 1) + "\" r=\"4\" fill=\"#ffffff\" stroke=\"#1f5fbf\" stroke-width=\"2\"><title>validation loss " +
           tick_label(p.loss) + " after step " + std::to_string(p.step) + "</title></circle>\n";
    }
    if (p.accuracy) {
      s += "<circle class=\"val-accuracy\" cx=\"" + fixed(x, 1) + "\" cy=\"" + fixed(A(*p.accuracy), 1) + "\" r=\"4\" fill=\"#ffffff\" stroke=\"#d9731a\" stroke-width=\"2\"><title>validation accuracy " +
           tick_label(*p.accuracy) + " after step " + std::to_string(p.step) + "</title></circle>\n";
    }
  }

  // Legend.
  std::string legend = "<g font-size=\"12\">\n";
  double lx = right - 10;
  auto item = [&](const std::string& colour, const std::string& text, bool dot) {
    const double width = 28 + 7.0 * static_cast<double>(text.size());
    lx -= width;
    // One row under the title, right-aligned above the plot.
    legend += dot ? "<circle cx=\"" + fixed(lx + 9, 1) + "\" cy=\"42\" r=\"4\" fill=\"#ffffff\" stroke=\"" + colour + "\" stroke-width=\"2\"/>\n"
                  : "<line x1=\"" + fixed(lx, 1) + "\" x2=\"" + fixed(lx + 18, 1) + "\" y1=\"42\" y2=\"42\" stroke=\"" + colour + "\" stroke-width=\"2\"/>\n";
    legend += "<text x=\"" + fixed(lx + 22, 1) + "\" y=\"46\">" + text + "</text>\n";
  };
  if (!c.val.empty()) item("#1f5fbf", "validation", true);
  if (any_accuracy(c)) item("#d9731a", "accuracy", false);
  item("#1f5fbf", "loss", false);
  s += legend + "</g>\n</svg>\n";
  return s;
}

}  // namespace etscope::inspect
