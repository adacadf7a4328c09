#include "etscope/findings/findings_text.h"

#include <algorithm>

#include "etscope/core/text.h"

namespace etscope::findings {

std::string share_text(double share) { return significant_text(share * 100.0, 3) + "%"; }

std::string place_text(const Place& place) {
  std::string text;
  if (place.instruction >= 0) {
    text = "instruction " + std::to_string(place.instruction);
    if (place.chain > 0) text += " (chain " + std::to_string(place.chain) + ")";
    if (!place.op.empty()) text += " " + place.op;
  } else {
    text = "method " + place.method;
  }
  std::string extra = place.module_path;
  if (!place.source.empty()) extra += (extra.empty() ? "" : ", ") + place.source;
  if (!extra.empty()) text += " (" + extra + ")";
  return text;
}

std::string cost_text(const Finding& finding) {
  std::string text;
  if (finding.time_ms) {
    text = duration_text_ms(*finding.time_ms) + "/run";
    if (finding.share) text += " (" + share_text(*finding.share) + ")";
  }
  if (finding.bytes != 0) text += (text.empty() ? "" : ", ") + bytes_text(finding.bytes);
  return text.empty() ? "-" : text;
}

std::string profile_text(const Report& report) {
  if (!report.timed) return "program only (no profile: no times)";
  return "profile of " + count_text(report.runs, "run") + " by " +
         (report.engine.empty() ? std::string("an unknown engine") : report.engine) + ", run time " +
         duration_text_ms(report.run_ms);
}

std::string totals_text(const Report& report) {
  std::string text = count_text(report.findings.size(), "finding");
  const bool any_timed = std::any_of(report.findings.begin(), report.findings.end(), [](const Finding& f) { return f.time_ms.has_value(); });
  if (report.timed && any_timed) {
    text += "; together they cost " + duration_text_ms(report.total_ms) + " per run";
    if (report.total_share) text += " (" + share_text(*report.total_share) + " of the run, each instruction once)";
  }
  if (report.total_bytes != 0) text += "; " + bytes_text(report.total_bytes) + " of memory";
  return text;
}

}  // namespace etscope::findings
