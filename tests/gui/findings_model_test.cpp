// gui/model/findings_model: the Findings view's rows from the findings library, built by
// load_session from real exports (tests/fixtures/executorch/findings/) and a profile etscope's
// engine records here; and the view drawn from them in a bare ImGui context.
#include <catch2/catch.hpp>

#include <imgui.h>

#include <algorithm>
#include <string>
#include <vector>

#include "app/app.h"
#include "etscope/findings/findings_text.h"
#include "etscope/inspect/profile.h"
#include "model/findings_model.h"
#include "model/session.h"
#include "gui/headless_imgui.h"
#include "testing/test_util.h"

using namespace etscope;
using namespace etscope::gui;

namespace {

std::string findings_fixture(const std::string& name) { return testing::fixture("findings/" + name); }

std::unique_ptr<Session> load(const std::vector<std::string>& paths) {
  auto s = load_session(paths, nullptr, nullptr);
  REQUIRE(s != nullptr);
  return s;
}

std::vector<const FindingsRow*> of_rule(const FindingsModel& m, const std::string& rule) {
  std::vector<const FindingsRow*> out;
  for (const FindingsRow& r : m.rows()) {
    if (r.rule == rule) out.push_back(&r);
  }
  return out;
}

// partial_lowering run five times by etscope's engine into an ETDump, as findings_test does.
std::string partial_lowering_dump() {
  const std::string dir = testing::temp_dir("gui_findings_partial_lowering");
  const std::string dump = dir + "/run.etdp";
  const testing::CommandResult run =
      testing::run_etscope("run '" + findings_fixture("partial_lowering.pte") + "' --engine etscope --input '" +
                           findings_fixture("partial_lowering.input0.npy") + "' --iterations 5 --etdump '" + dump + "'");
  INFO(run.err);
  REQUIRE(run.exit_code == 0);
  return dump;
}

}  // namespace

TEST_CASE("findings: a permute of a constant is a constant-work row at instruction 0", "[gui][findings]") {
  const auto s = load({findings_fixture("permuted_constant.pte"), findings_fixture("permuted_constant.etrecord")});
  CHECK(s->errors.empty());
  REQUIRE(s->findings.has_value());
  const FindingsModel& m = *s->findings;
  REQUIRE(m.ok());
  CHECK(m.program() == "permuted_constant.pte");
  CHECK(m.method() == "forward");
  CHECK_FALSE(m.timed());
  CHECK(m.profile_text() == "program only (no profile: no times)");
  const auto rows = of_rule(m, "constant-work");
  REQUIRE(rows.size() == 1);
  const FindingsRow& row = *rows[0];
  CHECK(row.rank >= 1);
  REQUIRE_FALSE(row.where.empty());
  CHECK(row.where[0].instruction == InstructionRef{0, 0});
  CHECK(row.where[0].method == "forward");
  CHECK(row.at == "0");
  CHECK(row.where[0].text.rfind("instruction 0 aten::permute_copy.out (", 0) == 0);
  CHECK(row.where[0].text.find("export_findings.py:") != std::string::npos);  // the ETRecord's source line
  // No profile, no time: the cost says so, and the share bar has nothing to draw.
  CHECK_FALSE(row.share);
  CHECK(row.severity_text == findings::to_string(row.severity));
  CHECK_FALSE(row.evidence.empty());
  CHECK(row.advice.find("constant_prop_pass") != std::string::npos);
  CHECK(m.names(row.rank - 1, "forward", InstructionRef{0, 0}));
  CHECK_FALSE(m.names(row.rank - 1, "forward", InstructionRef{0, 1}));
  CHECK_FALSE(m.names(row.rank - 1, "other", InstructionRef{0, 0}));
  // The rules that need a profile say they were not checked.
  CHECK(std::any_of(m.skipped().begin(), m.skipped().end(), [](const std::string& t) { return t.rfind("warmup: ", 0) == 0; }));
  CHECK(m.totals_text().rfind(count_text(m.rows().size(), "finding"), 0) == 0);
  CHECK(m.totals_text().find("per run") == std::string::npos);  // no profile: no time to total
  CHECK(m.highest().has_value());
}

TEST_CASE("findings: partial_lowering's profile gives a timed partial-delegation row", "[gui][findings]") {
  const std::string dump = partial_lowering_dump();
  const auto s = load({findings_fixture("partial_lowering.pte"), dump, findings_fixture("partial_lowering.etrecord")});
  std::string errors;
  for (const std::string& e : s->errors) errors += e + "\n";
  INFO(errors);
  REQUIRE(s->inspector != nullptr);
  REQUIRE(s->findings.has_value());
  const FindingsModel& m = *s->findings;
  REQUIRE(m.ok());
  CHECK(m.timed());
  CHECK(m.profile_text().rfind("profile of 5 runs by etscope ", 0) == 0);
  CHECK(m.profile_text().find(", run time ") != std::string::npos);
  const auto rows = of_rule(m, "partial-delegation");
  REQUIRE(rows.size() == 1);
  const FindingsRow& row = *rows[0];
  CHECK(row.what.rfind("aten::elu.out", 0) == 0);
  REQUIRE(row.where.size() == 1);
  CHECK(row.where[0].instruction == InstructionRef{0, 1});
  CHECK(row.where[0].text.rfind("instruction 1 aten::elu.out (middle, ", 0) == 0);
  REQUIRE(row.share);
  CHECK(*row.share > 0);
  CHECK(*row.share < 1);
  // The cost as the CLI words it: "451 us/run (9.92%)".
  CHECK(row.cost.find("/run (") != std::string::npos);
  CHECK(row.cost.back() == ')');
  CHECK(row.cost.find("%") != std::string::npos);
  // Ranked by time saved: the timed finding comes first.
  CHECK(row.rank == 1);
  CHECK(m.totals_text().find("; together they cost ") != std::string::npos);
  CHECK(m.totals_text().find("% of the run, each instruction once)") != std::string::npos);
  // With a profile every rule that needs one ran.
  for (const std::string& t : m.skipped()) CHECK(t.find("needs a profile") == std::string::npos);

  // The same numbers as the library gives directly for these inputs: the model adds none.
  findings::Inputs in;
  in.program = s->program.get();
  in.record = s->record.get();
  in.inspector = s->inspector.get();
  in.method = s->profile_method;
  in.engine = s->engine.text();
  auto report = findings::analyse(in);
  REQUIRE(report.ok());
  REQUIRE(report->findings.size() == m.rows().size());
  CHECK(report->findings[0].rule == row.rule);
  CHECK(*report->findings[0].share == *row.share);
  CHECK(findings::cost_text(report->findings[0]) == row.cost);
}

TEST_CASE("findings: the constant-propagated program gives no rows", "[gui][findings]") {
  const auto s = load({findings_fixture("permuted_constant_folded.pte"), findings_fixture("permuted_constant_folded.etrecord")});
  REQUIRE(s->findings.has_value());
  const FindingsModel& m = *s->findings;
  REQUIRE(m.ok());
  CHECK(m.rows().empty());
  CHECK_FALSE(m.highest());
  CHECK(m.totals_text() == "0 findings");
  CHECK_FALSE(m.skipped().empty());
}

TEST_CASE("findings: what analyse refuses is the model's error line", "[gui][findings]") {
  auto program = inspect::load_program(findings_fixture("permuted_constant.pte"));
  REQUIRE(program.ok());
  FindingsInputs in;
  in.program = &*program;
  in.method = "decode";
  const FindingsModel m = FindingsModel::build(in);
  CHECK_FALSE(m.ok());
  CHECK(m.error().rfind("findings: ", 0) == 0);
  CHECK(m.error().find("no method 'decode'") != std::string::npos);
  CHECK(m.rows().empty());
  CHECK_FALSE(FindingsModel::build(FindingsInputs{}).ok());  // neither a program nor a profile
  // Nothing loaded that findings read: no model, and the view asks for a file.
  const auto curve = load({testing::test_data_dir() + "/gui/convnet_ce.curve.json"});
  CHECK_FALSE(curve->findings.has_value());
}

TEST_CASE("findings: places and costs are worded as the CLI words them", "[gui][findings]") {
  findings::Place p;
  p.method = "forward";
  CHECK(findings::place_text(p) == "method forward");
  p.chain = 1;
  p.instruction = 4;
  p.op = "aten::add.out";
  p.module_path = "blocks.2";
  p.source = "model.py:7";
  CHECK(findings::place_text(p) == "instruction 4 (chain 1) aten::add.out (blocks.2, model.py:7)");
  CHECK(findings_at_text({}) == "");
  CHECK(findings_at_text({p}) == "1:4");
  findings::Place q = p;
  q.chain = 0;
  CHECK(findings_at_text({q, p, p}) == "4 +2");
  findings::Place method;
  method.method = "forward";
  CHECK(findings_at_text({method}) == "method");
  findings::Finding f;
  CHECK(findings::cost_text(f) == "-");
  f.bytes = 2048;
  CHECK(findings::cost_text(f) == bytes_text(2048));
  f.time_ms = 1.5;
  f.share = 0.25;
  CHECK(findings::cost_text(f) == duration_text_ms(1.5) + "/run (25.0%), " + bytes_text(2048));
}


TEST_CASE("the Findings view draws without a window, its first row open, with a selection", "[gui][views][findings]") {
  HeadlessImGui imgui;
  App app("");
  app.set_initial_view("findings", "", InstructionRef{0, 0});
  app.open({findings_fixture("permuted_constant.pte"), findings_fixture("permuted_constant.etrecord")});
  app.wait_until_loaded();
  REQUIRE(app.session() != nullptr);
  REQUIRE(app.session()->findings.has_value());
  int vertices = 0;
  for (int f = 0; f < 3; ++f) vertices = imgui.Frame(app);
  CHECK(app.state().view == ViewId::kFindings);
  CHECK(app.state().selected == InstructionRef{0, 0});
  CHECK(vertices > 1000);
  REQUIRE(app.state().findings.open.size() == app.session()->findings->rows().size());
  CHECK(app.state().findings.open[0] == 1);
  CHECK(app.state().findings.model == &*app.session()->findings);
}
