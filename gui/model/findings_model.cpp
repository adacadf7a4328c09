#include "model/findings_model.h"

#include "etscope/core/text.h"

namespace etscope::gui {

std::string findings_place_text(const findings::Place& place) {
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

std::string findings_at_text(const std::vector<findings::Place>& where) {
  if (where.empty()) return "";
  const findings::Place& p = where.front();
  std::string text = "method";
  if (p.instruction >= 0) {
    text = p.chain > 0 ? std::to_string(p.chain) + ":" + std::to_string(p.instruction) : std::to_string(p.instruction);
  }
  if (where.size() > 1) text += " +" + std::to_string(where.size() - 1);
  return text;
}

std::string findings_cost_text(const findings::Finding& finding) {
  std::string text;
  if (finding.time_ms) {
    text = duration_text_ms(*finding.time_ms) + "/run";
    if (finding.share) text += " (" + significant_text(*finding.share * 100.0, 3) + "%)";
  }
  if (finding.bytes != 0) text += (text.empty() ? "" : ", ") + bytes_text(finding.bytes);
  return text.empty() ? "-" : text;
}

FindingsModel FindingsModel::build(const FindingsInputs& inputs) {
  FindingsModel m;
  findings::Inputs in;
  in.program = inputs.program;
  in.method = inputs.method;
  in.record = inputs.record;
  in.inspector = inputs.inspector;
  in.engine = inputs.engine;
  auto analysed = findings::analyse(in);
  if (!analysed.ok()) {
    m.error_ = "findings: " + analysed.error().message();
    return m;
  }
  const findings::Report& report = *analysed;
  // The file's name, as the menu bar names the loaded files.
  const size_t slash = report.program.find_last_of('/');
  m.program_ = slash == std::string::npos ? report.program : report.program.substr(slash + 1);
  m.method_ = report.method;
  m.timed_ = report.timed;
  if (report.timed) {
    m.profile_text_ = "profile of " + count_text(report.runs, "run") + " by " +
                      (report.engine.empty() ? std::string("an unknown engine") : report.engine) + ", run time " +
                      duration_text_ms(report.run_ms);
  } else {
    m.profile_text_ = "program only (no profile: no times)";
  }

  for (const findings::Finding& f : report.findings) {
    FindingsRow row;
    row.rank = m.rows_.size() + 1;
    row.severity = f.severity;
    row.severity_text = findings::to_string(f.severity);
    row.rule = f.rule;
    row.what = f.what;
    row.cost = findings_cost_text(f);
    row.share = f.share;
    for (const findings::Place& p : f.where) {
      FindingsPlace place;
      if (p.chain >= 0 && p.instruction >= 0) place.instruction = {p.chain, p.instruction};
      place.method = p.method;
      place.text = findings_place_text(p);
      row.where.push_back(std::move(place));
    }
    row.at = findings_at_text(f.where);
    row.evidence = f.evidence;
    row.advice = f.advice;
    m.rows_.push_back(std::move(row));
  }
  m.highest_ = findings::highest_severity(report);

  m.totals_text_ = count_text(report.findings.size(), "finding");
  if (report.timed) {
    m.totals_text_ += "; together they cost " + duration_text_ms(report.total_ms) + " per run";
    if (report.total_share) {
      m.totals_text_ += " (" + significant_text(*report.total_share * 100.0, 3) + "% of the run, each instruction once)";
    }
  }
  if (report.total_bytes != 0) m.totals_text_ += "; " + bytes_text(report.total_bytes) + " of memory";
  m.skipped_ = report.skipped;
  return m;
}

bool FindingsModel::names(size_t row, const std::string& method, const InstructionRef& ref) const {
  if (row >= rows_.size() || !ref.valid()) return false;
  for (const FindingsPlace& p : rows_[row].where) {
    if (p.instruction == ref && p.method == method) return true;
  }
  return false;
}

}  // namespace etscope::gui
