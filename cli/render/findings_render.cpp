#include "render/findings_render.h"

#include "etscope/findings/findings_text.h"
#include "render/json_output.h"

namespace etscope::cli {
void render_findings_text(const findings::Report& report, std::ostream& out) {
  out << "findings";
  if (!report.program.empty()) out << " for " << report.program;
  out << ", method " << report.method << ": " << findings::profile_text(report) << "\n";
  if (report.findings.empty()) out << "no findings\n";
  size_t n = 0;
  for (const findings::Finding& f : report.findings) {
    ++n;
    out << "\n" << n << ". [" << findings::to_string(f.severity) << "] " << f.rule << ": " << f.what << "\n";
    out << "   costs: " << findings::cost_text(f) << "\n";
    const size_t shown = std::min<size_t>(f.where.size(), 6);
    for (size_t i = 0; i < shown; ++i) out << "   where: " << findings::place_text(f.where[i]) << "\n";
    if (f.where.size() > shown) out << "   where: ... and " << (f.where.size() - shown) << " more\n";
    for (const std::string& e : f.evidence) out << "   evidence: " << e << "\n";
    if (!f.advice.empty()) out << "   do: " << f.advice << "\n";
  }
  if (!report.findings.empty()) out << "\n" << findings::totals_text(report) << "\n";
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
