#include "model/findings_model.h"

#include "etscope/findings/findings_text.h"

namespace etscope::gui {

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
  m.profile_text_ = findings::profile_text(report);

  for (const findings::Finding& f : report.findings) {
    FindingsRow row;
    row.rank = m.rows_.size() + 1;
    row.severity = f.severity;
    row.severity_text = findings::to_string(f.severity);
    row.rule = f.rule;
    row.what = f.what;
    row.cost = findings::cost_text(f);
    row.share = f.share;
    for (const findings::Place& p : f.where) {
      FindingsPlace place;
      if (p.chain >= 0 && p.instruction >= 0) place.instruction = {p.chain, p.instruction};
      place.method = p.method;
      place.text = findings::place_text(p);
      row.where.push_back(std::move(place));
    }
    row.at = findings_at_text(f.where);
    row.evidence = f.evidence;
    row.advice = f.advice;
    m.rows_.push_back(std::move(row));
  }
  m.highest_ = findings::highest_severity(report);

  m.totals_text_ = findings::totals_text(report);
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
