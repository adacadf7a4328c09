#include "render/findings_render.h"

#include "etscope/core/text.h"
#include "render/json_output.h"

namespace etscope::cli {
namespace {

std::string place_text(const findings::Place& p) {
  std::string text;
  if (p.instruction >= 0) {
    text = "instruction " + std::to_string(p.instruction);
    if (p.chain > 0) text += " (chain " + std::to_string(p.chain) + ")";
    text += " " + p.op;
  } else {
    text = "method " + p.method;
  }
  std::string extra;
  if (!p.module_path.empty()) extra = p.module_path;
  if (!p.source.empty()) extra += (extra.empty() ? "" : ", ") + p.source;
  if (!extra.empty()) text += " (" + extra + ")";
  return text;
}

std::string cost_text(const findings::Finding& f) {
  std::string text;
  if (f.time_ms) {
    text = duration_text_ms(*f.time_ms) + "/run";
    if (f.share) text += " (" + significant_text(*f.share * 100.0, 3) + "%)";
  }
  if (f.bytes) text += (text.empty() ? "" : ", ") + bytes_text(f.bytes);
  return text.empty() ? "-" : text;
}

}  // namespace

void render_findings_text(const findings::Report& report, std::ostream& out) {
  out << "findings";
  if (!report.program.empty()) out << " for " << report.program;
  out << ", method " << report.method;
  if (report.timed) {
    out << ": profile of " << count_text(report.runs, "run") << " by " << (report.engine.empty() ? "an unknown engine" : report.engine)
        << ", run time " << duration_text_ms(report.run_ms);
  } else {
    out << ": program only (no profile: no times)";
  }
  out << "\n";
  if (report.findings.empty()) out << "no findings\n";
  size_t n = 0;
  for (const findings::Finding& f : report.findings) {
    ++n;
    out << "\n" << n << ". [" << findings::to_string(f.severity) << "] " << f.rule << ": " << f.what << "\n";
    out << "   costs: " << cost_text(f) << "\n";
    const size_t shown = std::min<size_t>(f.where.size(), 6);
    for (size_t i = 0; i < shown; ++i) out << "   where: " << place_text(f.where[i]) << "\n";
    if (f.where.size() > shown) out << "   where: ... and " << (f.where.size() - shown) << " more\n";
    for (const std::string& e : f.evidence) out << "   evidence: " << e << "\n";
    if (!f.advice.empty()) out << "   do: " << f.advice << "\n";
  }
  if (!report.findings.empty()) out << "\n" << count_text(report.findings.size(), "finding");
  if (report.timed && !report.findings.empty()) {
    out << "; together they cost " << duration_text_ms(report.total_ms) << " per run";
    if (report.total_share) out << " (" << significant_text(*report.total_share * 100.0, 3) << "% of the run, each instruction once)";
  }
  if (report.total_bytes) out << "; " << bytes_text(report.total_bytes) << " of memory";
  if (!report.findings.empty()) out << "\n";
  for (const std::string& s : report.skipped) out << "not checked: " << s << "\n";
}

Json findings_json(const findings::Report& report) {
  Json j = Json::object();
  j["program"] = report.program;
  j["method"] = report.method;
  j["timed"] = report.timed;
  j["engine"] = report.engine;
  j["runs"] = report.runs;
  j["run_ms"] = number_json(report.run_ms);
  j["total_ms"] = number_json(report.total_ms);
  j["total_share"] = report.total_share ? number_json(*report.total_share) : Json();
  j["total_bytes"] = report.total_bytes;
  Json list = Json::array();
  for (const findings::Finding& f : report.findings) {
    Json o = Json::object();
    o["rule"] = f.rule;
    o["severity"] = findings::to_string(f.severity);
    o["what"] = f.what;
    Json where = Json::array();
    for (const findings::Place& p : f.where) {
      Json w = Json::object();
      w["method"] = p.method;
      w["chain"] = p.chain;
      w["instruction"] = p.instruction;
      w["op"] = p.op;
      w["module"] = p.module_path;
      w["source"] = p.source;
      where.push_back(std::move(w));
    }
    o["where"] = std::move(where);
    o["evidence"] = f.evidence;
    o["time_ms"] = f.time_ms ? number_json(*f.time_ms) : Json();
    o["share"] = f.share ? number_json(*f.share) : Json();
    o["bytes"] = f.bytes;
    o["advice"] = f.advice;
    list.push_back(std::move(o));
  }
  j["findings"] = std::move(list);
  j["skipped"] = report.skipped;
  return j;
}

}  // namespace etscope::cli
