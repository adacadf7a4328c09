#include "render/fidelity_render.h"

#include <algorithm>
#include <cstdio>

#include "etscope/core/event_names.h"
#include "render/table.h"

namespace etscope::cli {
namespace {

std::string format(const char* fmt, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, fmt, v);
  return buf;
}

std::string ratio_text(const std::optional<double>& r) { return r ? significant_text(*r) + "x" : "-"; }
std::string error_text(double v) { return format("%.3g", v); }
std::string share_text(const std::optional<double>& s) { return s ? format("%.1f%%", *s * 100) : "-"; }

std::string signed_duration(double ms, TimeUnit unit) {
  return (ms > 0 ? "+" : ms < 0 ? "-" : "") + duration_text_ms(ms < 0 ? -ms : ms, unit);
}

// The node rows as a table: instruction, node, both medians, ratio, difference, both shares.
std::string rows_text(const std::vector<inspect::FidelityRow>& rows, size_t top, TimeUnit unit) {
  TextTable t;
  t.columns = {"instr", "node", "etscope", "executorch", "ratio", "difference", "etscope share", "executorch share"};
  t.numeric = {true, false, true, true, true, true, true, true};
  const size_t n = top > 0 && top < rows.size() ? top : rows.size();
  for (size_t i = 0; i < n; ++i) {
    const inspect::FidelityRow& r = rows[i];
    auto ms = [&](double v, bool present) {
      return present ? std::optional<std::string>(duration_text_ms(v, unit)) : std::nullopt;
    };
    t.rows.push_back({std::to_string(r.instruction), r.name, ms(r.etscope_ms, r.in_etscope), ms(r.executorch_ms, r.in_executorch),
                      ratio_text(r.ratio), (r.in_etscope && r.in_executorch) ? signed_duration(r.difference_ms, unit) : "-",
                      share_text(r.etscope_share), share_text(r.executorch_share)});
  }
  std::string out = render_table(t, "table");
  if (n < rows.size()) out += "  ... " + std::to_string(rows.size() - n) + " more (--top 0 lists all)\n";
  return out;
}

std::string output_text(size_t i, const FidelityOutput& o, double rtol, double atol) {
  std::string s = "  " + std::to_string(i) + ": " + o.what + "  ";
  if (!o.agreement) return s + o.note + "\n";
  const inspect::OutputAgreement& a = *o.agreement;
  if (!a.comparable) return s + "not comparable: " + a.problem + "\n";
  if (!a.floating) {
    if (a.differing == 0) return s + "exactly equal (" + std::to_string(a.count) + " elements)\n";
    return s + std::to_string(a.differing) + " of " + std::to_string(a.count) + " elements differ, max abs error " +
           error_text(a.max_abs_error) + "\n";
  }
  s += "max abs error " + error_text(a.max_abs_error) + "  max rel error " + error_text(a.max_rel_error) + "  ";
  s += a.differing == 0 ? "bit-equal" : std::to_string(a.differing) + " of " + std::to_string(a.count) + " elements differ";
  if (a.nonfinite_mismatches > 0) s += " (" + std::to_string(a.nonfinite_mismatches) + " NaN/inf where the other is not)";
  s += a.within_tolerance ? "  within tolerance" : "  OUTSIDE rtol " + error_text(rtol) + " atol " + error_text(atol);
  return s + "\n";
}

// Where a run time comes from: the median of Method::execute (engine_fidelity.h), or the
// Inspector's run time when a dump has no Method::execute.
std::string run_time_source(inspect::RunTimeSource source) {
  return source == inspect::RunTimeSource::kMethodExecute ? std::string(events::kMethodExecute) + " median" : inspect::to_string(source);
}

// What the run times are: medians of Method::execute, or the Inspector's run time of a dump
// without it.
std::string run_time_text(const inspect::EngineFidelity& f) {
  const bool medians = f.etscope.source == inspect::RunTimeSource::kMethodExecute &&
                       f.executorch.source == inspect::RunTimeSource::kMethodExecute;
  return medians ? "medians of Method::execute"
                 : "etscope: " + inspect::to_string(f.etscope.source) + ", executorch: " + inspect::to_string(f.executorch.source);
}

Json optional_json(const std::optional<double>& v) { return v ? number_json(*v) : Json(nullptr); }

Json row_json(const inspect::FidelityRow& r) {
  return Json{{"instruction", r.instruction},
              {"chain", r.chain},
              {"name", r.name},
              {"kind", std::string(events::category_name(r.kind))},
              {"etscope_ms", r.in_etscope ? Json(r.etscope_ms) : Json(nullptr)},
              {"executorch_ms", r.in_executorch ? Json(r.executorch_ms) : Json(nullptr)},
              {"ratio", optional_json(r.ratio)},
              {"difference_ms", r.difference_ms},
              {"etscope_share", optional_json(r.etscope_share)},
              {"executorch_share", optional_json(r.executorch_share)}};
}

Json rows_json(const std::vector<inspect::FidelityRow>& rows, size_t top) {
  Json out = Json::array();
  const size_t n = top > 0 && top < rows.size() ? top : rows.size();
  for (size_t i = 0; i < n; ++i) out.push_back(row_json(rows[i]));
  return out;
}

Json engine_json(const FidelityEngine& e, const inspect::FidelityRun& run) {
  return Json{{"version", e.version},      {"threads", e.threads},    {"load_ms", e.load_ms},
              {"run_ms", run.run_ms},      {"run_time_source", run_time_source(run.source)},
              {"runs", run.runs},          {"nodes_ms", run.nodes_ms}, {"samples_ms", e.samples_ms}};
}

}  // namespace

std::string fidelity_text(const FidelityReport& r, size_t top, TimeUnit unit) {
  const inspect::EngineFidelity& f = r.fidelity;
  std::string s = r.file + ": method " + r.method + ", " + std::to_string(r.instructions) + " instructions, " +
                  std::to_string(r.inputs) + " inputs, " + std::to_string(r.outputs.size()) + " outputs\n";
  s += "engines    etscope " + r.etscope.version + " (load " + duration_text_ms(r.etscope.load_ms, unit) + ") and executorch " +
       r.executorch.version + " (load " + duration_text_ms(r.executorch.load_ms, unit) + "), " + std::to_string(r.executorch.threads) +
       (r.executorch.threads == 1 ? " thread\n" : " threads\n");
  if (!r.inputs_line.empty()) s += r.inputs_line + ", the same for both\n";
  s += "schedule   " + std::to_string(r.iterations) + " timed executions each after " + std::to_string(r.warmup) +
       " warm-up, the engines alternating in turns of " + std::to_string(r.block) + " (executorch first)\n";
  s += "outputs    " + std::to_string(r.outputs.size()) + ", etscope's against executorch's (rtol " + error_text(r.rtol) + ", atol " +
       error_text(r.atol) + " for floats; integers exactly)\n";
  for (size_t i = 0; i < r.outputs.size(); ++i) s += output_text(i, r.outputs[i], r.rtol, r.atol);
  s += "run time   etscope " + duration_text_ms(f.etscope.run_ms, unit) + ", executorch " + duration_text_ms(f.executorch.run_ms, unit) +
       " (" + run_time_text(f) + "): etscope/executorch " + ratio_text(f.run_ratio) + "\n";
  s += "nodes      " + std::to_string(f.rows.size()) + " in both, " + std::to_string(f.only_etscope.size()) + " only in etscope, " +
       std::to_string(f.only_executorch.size()) + " only in executorch; Spearman rank correlation of their times " +
       (f.spearman ? format("%.3f", *f.spearman) : std::string("n/a")) + "\n";
  s += "           medians; sorted by |etscope - executorch|, the time a node moves the run by, largest first\n";
  s += rows_text(f.rows, top, unit);
  const auto untimed = [](const inspect::FidelityRow& row) { return row.in_executorch && row.executorch_ms == 0; };
  if (std::any_of(f.rows.begin(), f.rows.end(), untimed)) {
    s += "  ratio -: executorch's median is 0 (XNNPACK's profiler counts whole microseconds)\n";
  }
  if (!f.only_etscope.empty()) s += "only in etscope's profile\n" + rows_text(f.only_etscope, 0, unit);
  if (!f.only_executorch.empty()) s += "only in executorch's profile\n" + rows_text(f.only_executorch, 0, unit);
  if (!f.delegate_calls.empty()) {
    s += "delegate calls (each holds its nodes above, and the delegate's own time)\n" + rows_text(f.delegate_calls, 0, unit);
  }
  return s;
}

Json fidelity_json(const FidelityReport& r, size_t top) {
  const inspect::EngineFidelity& f = r.fidelity;
  Json outputs = Json::array();
  for (size_t i = 0; i < r.outputs.size(); ++i) {
    const FidelityOutput& o = r.outputs[i];
    Json j{{"index", i}, {"what", o.what}};
    if (!o.agreement) {
      j["comparable"] = false;
      j["problem"] = o.note;
    } else if (!o.agreement->comparable) {
      j["comparable"] = false;
      j["problem"] = o.agreement->problem;
    } else {
      const inspect::OutputAgreement& a = *o.agreement;
      j["comparable"] = true;
      j["floating"] = a.floating;
      j["count"] = a.count;
      j["differing"] = a.differing;
      j["exactly_equal"] = a.differing == 0;
      j["max_abs_error"] = number_json(a.max_abs_error);
      j["max_rel_error"] = number_json(a.max_rel_error);
      j["nonfinite_mismatches"] = a.nonfinite_mismatches;
      j["within_tolerance"] = a.within_tolerance;
    }
    outputs.push_back(std::move(j));
  }
  return Json{{"engine", "both"},
              {"file", r.file},
              {"method", r.method},
              {"input_source", r.input_source},
              {"warmup", r.warmup},
              {"iterations", r.iterations},
              {"turn", r.block},
              {"rtol", r.rtol},
              {"atol", r.atol},
              {"engines", Json{{"etscope", engine_json(r.etscope, f.etscope)}, {"executorch", engine_json(r.executorch, f.executorch)}}},
              {"run_ratio", optional_json(f.run_ratio)},
              {"spearman", optional_json(f.spearman)},
              {"outputs", std::move(outputs)},
              {"nodes_total", f.rows.size()},
              {"nodes", rows_json(f.rows, top)},
              {"only_etscope", rows_json(f.only_etscope, 0)},
              {"only_executorch", rows_json(f.only_executorch, 0)},
              {"delegate_calls", rows_json(f.delegate_calls, 0)}};
}

}  // namespace etscope::cli
