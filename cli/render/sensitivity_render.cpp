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

std::string percent(const std::optional<double>& v) {
  if (!v) return "-";
  char b[32];
  std::snprintf(b, sizeof b, "%.1f%%", *v * 100);
  return b;
}

// "36.84 dB", with the worst input set and the top-1 agreement when there is more to say.
std::string figure_text(const numerics::SqnrFigure& f) {
  std::string t = db(f.mean_db) + " dB";
  if (f.per_input_db.size() > 1) t += " (worst " + db(f.worst_db) + ")";
  if (f.top1) t += ", top-1 " + percent(f.top1);
  return t;
}

Json figure_json(const numerics::SqnrFigure& f) {
  Json per = Json::array();
  for (double v : f.per_input_db) per.push_back(number(v));
  return Json{{"mean_db", number(f.mean_db)}, {"worst_db", number(f.worst_db)}, {"per_input_db", std::move(per)}, {"top1", number(f.top1)}};
}

// Where the layer's values come from and go: "conv3 (Conv2d) -> conv4 (Conv2d)".
std::string flow_text(const numerics::LayerSensitivity& l) {
  std::string t = l.site.from_float ? "float" : (l.module.empty() ? "?" : l.module);
  if (l.reader_modules.empty()) return l.site.from_float || !l.module.empty() ? t : "";
  t += " ->";
  for (size_t i = 0; i < l.reader_modules.size(); ++i) t += (i ? ", " : " ") + l.reader_modules[i];
  return t;
}

std::string layer_name(const numerics::LayerSensitivity& l) {
  return l.site.op + " [node " + std::to_string(l.site.node) + (l.site.dynamic ? ", dynamic input" : "") + "]";
}

}  // namespace

void render_sensitivity(const numerics::Sensitivity& s, std::ostream& out) {
  out << "quantization sensitivity (etscope engine; SQNR of the outputs against " << s.reference << ")\n";
  const bool many = s.inputs.size() > 1;
  if (many) out << "  over " << s.inputs.size() << " input sets: figures are the mean of their SQNRs (worst set in brackets)\n";
  out << "  program as run: " << figure_text(s.program) << "\n  emulated, every layer quantized: " << figure_text(s.emulated)
      << "\n  no layer quantized: " << figure_text(s.all_float) << "\n";
  out << "  a layer in float: its activations unquantized, its filter "
      << (s.float_filters > 0 ? "the float export's (" + std::to_string(s.float_filters) + " of " + std::to_string(s.filtered_layers) +
                                    " layers' filters found there, the others dequantized)"
                              : std::string("the dequantized int8 one (no float export given: --float-reference)"))
      << "\n";
  for (const std::string& w : s.warnings) out << "  warning: " << w << "\n";
  out << "\n";
  const bool top1 = s.emulated.top1.has_value();
  TextTable t;
  t.columns = {"rank", "layer", "module -> readers", "float SQNR"};
  if (many) t.columns.push_back("worst");
  if (top1) t.columns.push_back("top-1");
  for (const char* c : {"recovered", "alone SQNR", "int8 ms", "float ms"}) t.columns.push_back(c);
  t.numeric.assign(t.columns.size(), true);
  t.numeric[1] = t.numeric[2] = false;
  for (size_t i = 0; i < s.layers.size(); ++i) {
    const numerics::LayerSensitivity& l = s.layers[i];
    std::vector<std::optional<std::string>> row{std::to_string(i + 1), layer_name(l),
                                                flow_text(l).empty() ? std::optional<std::string>() : flow_text(l),
                                                db(l.float_sqnr.mean_db)};
    if (many) row.push_back(db(l.float_sqnr.worst_db));
    if (top1) row.push_back(percent(l.float_sqnr.top1));
    for (const std::string& c : {signed_db(l.recovered_db), db(l.alone_sqnr.mean_db), ms(l.int8_ms), ms(l.float_ms)}) row.push_back(c);
    t.rows.push_back(std::move(row));
  }
  out << render_table(t, "table");
  out << "  float SQNR: every other layer quantized, this one computed on floats; alone SQNR: only this one quantized;\n"
         "  times: the layer's operator on etscope's engine, in integers as the program runs it and on floats\n\n";
  if (s.keep_float.empty() && s.target_reached) {
    out << "suggestion: none needed, the emulated program reaches the target of " << db(s.target_sqnr_db) << " dB\n";
    return;
  }
  if (s.keep_float.empty()) {
    out << "suggestion: none, no set of layers in float reaches " << db(s.target_sqnr_db) << " dB (see the warning above)\n";
    return;
  }
  out << "suggestion: keep " << s.keep_float.size() << " layer" << (s.keep_float.size() == 1 ? "" : "s") << " in float to "
      << (s.target_reached ? "reach " : "approach (not reached) ") << db(s.target_sqnr_db) << " dB (emulated "
      << figure_text(s.keep_float_sqnr) << "):\n";
  for (size_t k : s.keep_float) {
    const numerics::LayerSensitivity& l = s.layers[k];
    out << "  #" << k + 1 << " " << layer_name(l) << (flow_text(l).empty() ? "" : "  " + flow_text(l)) << "\n";
  }
  if (!s.exclude_modules.empty()) {
    out << "  in an export: leave these modules unquantized (a tensor stays int8 while its producer or a reader is quantized):";
    for (const std::string& m : s.exclude_modules) out << " " << m;
    out << "\n";
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
                          {"from_float", l.site.from_float},
                          {"module", l.module.empty() ? Json() : Json(l.module)},
                          {"readers", l.reader_modules},
                          {"exclude", l.exclude},
                          {"float_sqnr", figure_json(l.float_sqnr)},
                          {"recovered_db", number(l.recovered_db)},
                          {"alone_sqnr", figure_json(l.alone_sqnr)},
                          {"int8_ms", number(l.int8_ms)},
                          {"float_ms", number(l.float_ms)}});
  }
  Json keep = Json::array();
  for (size_t k : s.keep_float) keep.push_back(k + 1);
  Json curve = Json::array();
  for (double v : s.cumulative_sqnr_db) curve.push_back(number(v));
  return Json{{"engine", "etscope"},
              {"reference", s.reference},
              {"inputs", s.inputs},
              {"sqnr", Json{{"program", figure_json(s.program)}, {"emulated", figure_json(s.emulated)}, {"float", figure_json(s.all_float)}}},
              {"layers", std::move(layers)},
              {"suggestion", Json{{"target_sqnr_db", number(s.target_sqnr_db)},
                                  {"keep_float_ranks", std::move(keep)},
                                  {"exclude_modules", s.exclude_modules},
                                  {"sqnr", figure_json(s.keep_float_sqnr)},
                                  {"target_reached", s.target_reached},
                                  {"cumulative_sqnr_db", std::move(curve)}}},
              {"executions", s.executions},
              {"filtered_layers", s.filtered_layers},
              {"float_filters", s.float_filters},
              {"warnings", s.warnings}};
}

}  // namespace etscope::cli
