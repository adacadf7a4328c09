#include "render/sensitivity_render.h"

#include <cmath>
#include <cstdio>
#include <string>

#include "render/table.h"

namespace etscope::cli {
namespace {

using Json = nlohmann::ordered_json;

std::string db(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char b[32];
  std::snprintf(b, sizeof b, "%.2f", v);
  return b;
}

std::string signed_db(double v) {
  const std::string t = db(v);
  return std::isfinite(v) && v >= 0 ? "+" + t : t;
}

std::string ms(const std::optional<double>& v) {
  if (!v) return "-";
  char b[32];
  std::snprintf(b, sizeof b, "%.3f", *v);
  return b;
}

Json number(double v) { return std::isfinite(v) ? Json(v) : Json(db(v)); }
Json number(const std::optional<double>& v) { return v ? Json(*v) : Json(); }

std::string layer_name(const numerics::LayerSensitivity& l) {
  return l.site.op + " [node " + std::to_string(l.site.node) + (l.site.dynamic ? ", dynamic input" : "") + "]";
}

}  // namespace

void render_sensitivity(const numerics::Sensitivity& s, std::ostream& out) {
  out << "quantization sensitivity (etscope engine; SQNR of the outputs against " << s.reference << ")\n";
  out << "  program as run: " << db(s.program_sqnr_db) << " dB   emulated, every layer quantized: " << db(s.emulated_sqnr_db)
      << " dB   no layer quantized: " << db(s.float_sqnr_db) << " dB\n";
  for (const std::string& w : s.warnings) out << "  warning: " << w << "\n";
  out << "\n";
  TextTable t;
  t.columns = {"rank", "layer", "module", "float SQNR", "recovered", "alone SQNR", "int8 ms", "float ms"};
  t.numeric = {true, false, false, true, true, true, true, true};
  for (size_t i = 0; i < s.layers.size(); ++i) {
    const numerics::LayerSensitivity& l = s.layers[i];
    t.rows.push_back({std::to_string(i + 1), layer_name(l), l.module.empty() ? std::optional<std::string>() : l.module, db(l.float_sqnr_db),
                      signed_db(l.recovered_db), db(l.alone_sqnr_db), ms(l.int8_ms), ms(l.float_ms)});
  }
  out << render_table(t, "table");
  out << "  float SQNR: every other layer quantized, this one computed on floats; alone SQNR: only this one quantized;\n"
         "  times: the layer's operator on etscope's engine, in integers as the program runs it and on floats\n\n";
  if (s.keep_float.empty() && s.target_reached) {
    out << "suggestion: none needed, the emulated program reaches the target of " << db(s.target_sqnr_db) << " dB\n";
    return;
  }
  out << "suggestion: keep " << s.keep_float.size() << " layer" << (s.keep_float.size() == 1 ? "" : "s") << " in float to "
      << (s.target_reached ? "reach " : "approach (not reached) ") << db(s.target_sqnr_db) << " dB (emulated "
      << db(s.keep_float_sqnr_db) << " dB):\n";
  for (size_t k : s.keep_float) {
    const numerics::LayerSensitivity& l = s.layers[k];
    out << "  #" << k + 1 << " " << layer_name(l) << (l.module.empty() ? "" : "  " + l.module) << "\n";
  }
}

Json sensitivity_json(const numerics::Sensitivity& s) {
  Json layers = Json::array();
  for (size_t i = 0; i < s.layers.size(); ++i) {
    const numerics::LayerSensitivity& l = s.layers[i];
    layers.push_back(Json{{"rank", i + 1},
                          {"op", l.site.op},
                          {"chain", l.site.chain},
                          {"instruction", l.site.instruction},
                          {"node", l.site.node},
                          {"delegate_debug_handle", l.site.delegate_debug_handle},
                          {"dynamic", l.site.dynamic},
                          {"module", l.module.empty() ? Json() : Json(l.module)},
                          {"float_sqnr_db", number(l.float_sqnr_db)},
                          {"recovered_db", number(l.recovered_db)},
                          {"alone_sqnr_db", number(l.alone_sqnr_db)},
                          {"int8_ms", number(l.int8_ms)},
                          {"float_ms", number(l.float_ms)}});
  }
  Json keep = Json::array();
  for (size_t k : s.keep_float) keep.push_back(k + 1);
  Json curve = Json::array();
  for (double v : s.cumulative_sqnr_db) curve.push_back(number(v));
  return Json{{"engine", "etscope"},
              {"reference", s.reference},
              {"sqnr_db", Json{{"program", number(s.program_sqnr_db)}, {"emulated", number(s.emulated_sqnr_db)}, {"float", number(s.float_sqnr_db)}}},
              {"layers", std::move(layers)},
              {"suggestion", Json{{"target_sqnr_db", number(s.target_sqnr_db)},
                                  {"keep_float_ranks", std::move(keep)},
                                  {"sqnr_db", number(s.keep_float_sqnr_db)},
                                  {"target_reached", s.target_reached},
                                  {"cumulative_sqnr_db", std::move(curve)}}},
              {"executions", s.executions},
              {"warnings", s.warnings}};
}

}  // namespace etscope::cli
