// gui/model/session: loading files by content, building the view models, reporting errors with
// the messages the CLI prints.
#include <catch2/catch.hpp>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "etscope/core/event_names.h"
#include "etscope/etdump/etdump_reader.h"
#include "etscope/etdump/etdump_writer.h"
#include "etscope/inspect/engine_identity.h"
#include "etscope/formats/pte_reader.h"
#include "etscope/inspect/compare.h"
#include "etscope/store/store.h"
#include "model/session.h"
#include "inspect/crafted_programs.h"
#include "testing/test_util.h"

using namespace etscope;
using namespace etscope::gui;
using etscope::testing::fixture;
using etscope::testing::real_artifact;
using etscope::testing::run_etscope;

namespace {
// Each file in a folder of its own: ctest runs the test cases of this binary in parallel
// processes, and temp_dir empties the folder it returns.
std::string write_file(const std::string& name, const std::string& bytes) {
  const std::string path = etscope::testing::temp_dir("gui_session_" + name) + "/" + name;
  std::ofstream(path, std::ios::binary) << bytes;
  return path;
}
// A small ETDump as etscope's runner writes one with `engine` (no marker when empty): a load
// block, then three executions of one kernel.
std::string marked_dump(const std::string& dir, const std::string& name, const std::string& engine, const std::string& version) {
  etdump::EtDumpWriter writer(etdump::EtDumpWriterOptions{});
  writer.create_event_block(events::kBlockDefault.data());
  writer.end_profiling(writer.start_profiling(events::kProgramLoadMethod.data()));
  if (!engine.empty()) writer.record_marker(events::engine_marker_name(engine, version));
  for (int run = 0; run < 3; ++run) {
    writer.create_event_block(events::kBlockExecute.data());
    const EventHandle execute = writer.start_profiling(events::kMethodExecute.data());
    writer.end_profiling(writer.start_profiling("native_call_add.out", 0, 0));
    writer.end_profiling(execute);
  }
  const std::vector<uint8_t> bytes = writer.finish().value();
  const std::string path = dir + "/" + name;
  std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  return path;
}

}  // namespace

TEST_CASE("files load in any order, each kind detected from its bytes", "[gui][session]") {
  LoadProgress progress;
  auto s = load_session({fixture("simple_conv/simple_conv.etrecord"), fixture("simple_conv/simple_conv.etdp"),
                         fixture("simple_conv/simple_conv.pte")},
                        nullptr, &progress);
  INFO((s->errors.empty() ? "" : s->errors[0]));
  CHECK(s->errors.empty());
  REQUIRE(s->program);
  REQUIRE(s->dump);
  REQUIRE(s->record);
  CHECK_FALSE(s->debug_buffer);
  CHECK(s->program_path == fixture("simple_conv/simple_conv.pte"));
  // The program's AOT intermediates, beside it by write_aot_intermediates.py's naming, come along.
  CHECK(s->aot_path == fixture("simple_conv/simple_conv.aot_intermediates.ptd"));
  CHECK(s->paths().size() == 4);
  CHECK_FALSE(s->gaps);  // no debug buffer: the view says why
  CHECK_THAT(s->gaps_problem, Catch::Contains("debug buffer"));
  CHECK(s->plans.size() == 1);
  // The graph of the plan, laid out while loading, with the ETRecord's module groups.
  REQUIRE(s->graphs.size() == 1);
  CHECK(s->graphs[0]->layout_when_ready(s->graphs[0]->default_shape()) != nullptr);
  CHECK_FALSE(s->graphs[0]->groups().empty());
  REQUIRE(s->memory.size() == 1);
  CHECK(s->memory[0].has_value());
  REQUIRE(s->timeline);
  REQUIRE(s->stats);
  REQUIRE(s->inspector);
  REQUIRE(s->lookup);
  CHECK(s->inspector->record() != nullptr);
  CHECK(progress.fraction() == 1.0f);
  CHECK(progress.stage() == "done");
  CHECK(s->default_plan() == 0);
}

TEST_CASE("opening more files keeps what was loaded and replaces the same kind", "[gui][session]") {
  auto first = load_session({fixture("simple_conv/simple_conv.pte")}, nullptr, nullptr);
  REQUIRE(first->program);
  CHECK_FALSE(first->timeline);
  auto second = load_session({fixture("simple_conv/simple_conv.etdp")}, first.get(), nullptr);
  CHECK(second->program == first->program);  // not read again
  CHECK(second->graphs == first->graphs);    // nor its graph laid out again
  REQUIRE(second->dump);
  CHECK(second->timeline);
  CHECK(second->stats);
  auto third = load_session({fixture("cifar10/cifar10.etdp")}, second.get(), nullptr);
  CHECK(third->program == first->program);
  CHECK(third->dump != second->dump);
  CHECK(third->dump_path == fixture("cifar10/cifar10.etdp"));
}

TEST_CASE("a bundled program shows its embedded program", "[gui][session]") {
  auto s = load_session({real_artifact("bundled_program.bpte")}, nullptr, nullptr);
  CHECK(s->errors.empty());
  REQUIRE(s->program);
  CHECK_FALSE(s->plans.empty());
}

TEST_CASE("unreadable files give the CLI's message and leave the others loaded", "[gui][session]") {
  const std::string missing = "/nonexistent/dir/model.pte";
  const std::string truncated = write_file("truncated.pte", std::string("\0\0\0\0ET12", 8));
  auto s = load_session({missing, truncated, fixture("simple_conv/simple_conv.etdp")}, nullptr, nullptr);
  REQUIRE(s->errors.size() == 2);
  // Exactly what `etscope pte FILE` prints after "etscope: ".
  CHECK(s->errors[0] == PteReader::open(missing).error().message());
  CHECK(s->errors[1] == PteReader::open(truncated).error().message());
  CHECK(s->errors[1].rfind(truncated + ": ", 0) == 0);
  CHECK_FALSE(s->program);
  CHECK(s->dump);
}

TEST_CASE("files of kinds the viewer does not show are refused by name", "[gui][session]") {
  auto ptd = load_session({real_artifact("xor_training.ptd")}, nullptr, nullptr);
  REQUIRE(ptd->errors.size() == 1);
  // A .ptd is taken for AOT intermediates; one of weights is refused by its keys.
  CHECK(ptd->errors[0].rfind(real_artifact("xor_training.ptd") + ": key 'net.linear.weight' is not debug handles", 0) == 0);
  CHECK_THAT(ptd->errors[0], Catch::Contains("not one of weights"));
  CHECK(ptd->empty());
  const std::string text = write_file("notes.txt", "hello, world");
  auto unknown = load_session({text}, nullptr, nullptr);
  REQUIRE(unknown->errors.size() == 1);
  CHECK(unknown->errors[0].rfind(text + ": not an ExecuTorch program, ETDump or ETRecord", 0) == 0);
  const std::string bin = write_file("debug.bin", std::string(256, '\x01'));
  auto debug = load_session({bin}, nullptr, nullptr);
  CHECK(debug->errors.empty());
  REQUIRE(debug->debug_buffer);
  CHECK(debug->debug_buffer->size() == 256);
}

TEST_CASE("a corrupt ETDump is reported as the etdump reader words it", "[gui][session]") {
  const std::string bytes = std::string("\x10\0\0\0\0\0\0\0ED00", 12) + std::string(8, '\xff');
  const std::string path = write_file("bad.etdp", bytes);
  auto s = load_session({path}, nullptr, nullptr);
  REQUIRE(s->errors.size() == 1);
  CHECK(s->errors[0] == etdump::EtDumpReader::open(path).error().message());
  CHECK_FALSE(s->timeline);
}

TEST_CASE("numeric gaps: every row of libinspect's gap, joined to its instruction", "[gui][session][gaps]") {
  const std::string base = "cifar10/cifar10";
  auto s = load_session({fixture(base + ".pte"), fixture(base + ".etdp"), fixture(base + ".etrecord"),
                         fixture(base + ".debug.bin"), fixture(base + ".aot_intermediates.ptd")},
                        nullptr, nullptr);
  INFO((s->errors.empty() ? s->gaps_problem : s->errors[0]));
  REQUIRE(s->aot);
  REQUIRE(s->gaps);
  CHECK(s->gaps_problem.empty());
  const GapModel& gaps = *s->gaps;
  REQUIRE(gaps.rows().size() == 12);
  for (int k = 0; k < 3; ++k) {
    const auto metric = static_cast<inspect::GapMetric>(k);
    auto want = inspect::calculate_numeric_gap(*s->inspector, *s->aot, metric);
    REQUIRE(want.ok());
    REQUIRE(want->size() == gaps.rows().size());
    for (size_t i = 0; i < want->size(); ++i) CHECK(gaps.rows()[i].elements[static_cast<size_t>(k)] == (*want)[i].gap);
    const double t = inspect::default_gap_threshold(metric);
    CHECK(gaps.first_divergence(metric, t) == inspect::first_divergence(*want, metric, t));
  }
  // Every row names the instruction that logged it, in program order, and maps back.
  int32_t last = -1;
  for (size_t i = 0; i < gaps.rows().size(); ++i) {
    const GapModelRow& r = gaps.rows()[i];
    REQUIRE(r.instruction.valid());
    CHECK(r.instruction.instruction > last);
    last = r.instruction.instruction;
    CHECK(gaps.row_of(r.instruction) == i);
    CHECK_FALSE(r.module.empty());
  }
  CHECK(gaps.rows()[0].name == "native_call_convolution.out");
  CHECK(gaps.rows()[0].module == "features.0 (Conv2d)");
  // A threshold of 0 L1 makes the first operator diverge; the detail is libinspect's.
  CHECK(gaps.first_divergence(inspect::GapMetric::kL1, 0.0) == 0u);
  const auto& d = gaps.detail(3, 0);
  REQUIRE(d.ok());
  CHECK(d->compared == 4 * 64 * 16 * 16);
  CHECK(d->max_abs > 0);
  CHECK(&gaps.detail(3, 0) == &d);  // cached
  CHECK_FALSE(gaps.detail(99, 0).ok());
  CHECK(gaps.input_check().outcome != inspect::InputCheck::Outcome::kDifferent);
}

TEST_CASE("numeric gaps: the local gaps of the run etscope debug keeps beside the dump", "[gui][session][gaps]") {
  const std::string base = "cifar10/cifar10";
  const std::string dir = etscope::testing::temp_dir("gui_local_gaps");
  const auto kept = etscope::testing::run_etscope("debug '" + fixture(base + ".pte") + "' --etrecord '" + fixture(base + ".etrecord") +
                                                  "' --aot-intermediates '" + fixture(base + ".aot_intermediates.ptd") +
                                                  "' --aot-index '" + fixture(base + ".aot_intermediates.json") + "' --etdump '" + dir +
                                                  "/run.etdp' --debug-buffer '" + dir + "/run.bin'");
  INFO(kept.err);
  REQUIRE(kept.exit_code == 0);
  CHECK_THAT(kept.out, Catch::Contains(dir + "/run.local.etdp"));
  REQUIRE(std::filesystem::exists(dir + "/run.local.etdp"));
  REQUIRE(std::filesystem::exists(dir + "/run.local.bin"));
  auto s = load_session({fixture(base + ".pte"), dir + "/run.etdp", fixture(base + ".etrecord"), dir + "/run.bin",
                         fixture(base + ".aot_intermediates.ptd")},
                        nullptr, nullptr);
  INFO((s->errors.empty() ? s->gaps_problem : s->errors[0]));
  REQUIRE(s->gaps);
  const GapModel& gaps = *s->gaps;
  REQUIRE(gaps.has_local());
  // The local gaps are libinspect's, of the kept run.
  auto dump = etdump::EtDumpReader::open(dir + "/run.local.etdp");
  REQUIRE(dump.ok());
  auto buffer = Blob::open_file(dir + "/run.local.bin");
  REQUIRE(buffer.ok());
  auto forced = inspect::Inspector::build(std::make_shared<const etdump::EtDumpFile>(std::move(*dump)), s->record, *buffer);
  REQUIRE(forced.ok());
  auto forced_rows = inspect::calculate_numeric_gap(*forced, *s->aot, inspect::GapMetric::kSNR);
  auto rows = inspect::calculate_numeric_gap(*s->inspector, *s->aot, inspect::GapMetric::kSNR);
  REQUIRE(forced_rows.ok());
  REQUIRE(rows.ok());
  const inspect::LocalGaps want = inspect::local_gaps(*rows, *forced_rows);
  REQUIRE(want.size() == gaps.rows().size());
  for (size_t i = 0; i < want.size(); ++i) {
    REQUIRE(want[i].has_value());  // a portable program: every operator has its own gap
    CHECK(gaps.rows()[i].local[2] == (*want[i])[0]);
  }
  CHECK_FALSE(gaps.culprit(inspect::GapMetric::kSNR, 40.0));  // the right program: nobody's own error
  CHECK(gaps.culprit(inspect::GapMetric::kL1, 0.0) == 0u);     // every float operator adds some
  // Without the kept run beside the dump: no local column.
  auto plain = load_session({fixture(base + ".pte"), fixture(base + ".etdp"), fixture(base + ".etrecord"),
                             fixture(base + ".debug.bin"), fixture(base + ".aot_intermediates.ptd")},
                            nullptr, nullptr);
  REQUIRE(plain->gaps);
  CHECK_FALSE(plain->gaps->has_local());
}

TEST_CASE("a training curve file is read for the Training view", "[gui][session][training]") {
  inspect::Curve c;
  c.first_step = 11;
  c.loss = {2.5, 2.0, 1.25};
  c.accuracy = {0.25, std::nullopt, 0.5};
  c.step_ms = {3.0, 2.5, 2.0};
  c.forward_backward_ms = {2.0, 1.5, 1.5};
  c.optimizer_ms = {1.0, 1.0, 0.5};
  c.val = {{12, 1.75, 0.375}};
  const std::string path = write_file("curve.json", inspect::curve_json(c));
  auto s = load_session({path}, nullptr, nullptr);
  INFO((s->errors.empty() ? "" : s->errors[0]));
  CHECK(s->errors.empty());
  CHECK_FALSE(s->empty());
  CHECK(s->curve_path == path);
  REQUIRE(s->curve);
  CHECK(s->curve->first_step == 11);
  CHECK(s->curve->loss == c.loss);
  CHECK(s->curve->accuracy == c.accuracy);
  CHECK(s->curve->forward_backward_ms == c.forward_backward_ms);
  CHECK(s->curve->optimizer_ms == c.optimizer_ms);
  REQUIRE(s->curve->val.size() == 1);
  CHECK(s->curve->val[0].accuracy == 0.375);

  // Opening a program afterwards keeps the curve.
  auto more = load_session({fixture("simple_conv/simple_conv.pte")}, s.get(), nullptr);
  CHECK(more->curve);
  CHECK(more->program);

  const std::string broken = write_file("broken.json", "{\"loss\": [1, 2");
  auto bad = load_session({broken}, nullptr, nullptr);
  REQUIRE(bad->errors.size() == 1);
  CHECK(bad->errors[0].rfind(broken + ": ", 0) == 0);
  CHECK_FALSE(bad->curve);
}

TEST_CASE("an ETDump baseline is compared with the loaded run as etscope compare does", "[gui][session][compare]") {
  OpenRequest request;
  request.paths = {fixture("cifar10/cifar10.etdp")};
  request.baseline = fixture("cifar10/cifar10.profile.etdp");
  auto s = load_session(request, nullptr, nullptr);
  INFO((s->errors.empty() ? "" : s->errors[0]));
  CHECK(s->errors.empty());
  REQUIRE(s->compare);
  REQUIRE(s->baseline_timeline);
  CHECK(s->compare->baseline_label() == "cifar10.profile.etdp");
  CHECK(s->compare->candidate_label() == "cifar10.etdp");
  // ExecuTorch's runtime wrote both: no engine marker, so the engines are not checked.
  CHECK_FALSE(s->engine.known());
  CHECK_FALSE(s->compare->baseline_engine().known());
  CHECK(s->compare->engines().match == inspect::EngineMatch::kUnknown);

  auto samples_of = [](const std::string& path) {
    auto dump = std::make_shared<const etdump::EtDumpFile>(etdump::EtDumpReader::open(path).value());
    return inspect::run_samples(inspect::Inspector::build(dump, nullptr, nullptr).value());
  };
  const inspect::RunSamples a = samples_of(request.baseline), b = samples_of(request.paths[0]);
  inspect::CompareOptions o;
  o.threshold = 0.1;
  o.alpha = 0.01;
  o.same_program = inspect::same_operators(a, b);
  const inspect::Comparison want = inspect::compare_runs(a, b, o);
  const inspect::Comparison& got = s->compare->comparison(0.1, 0.01);
  REQUIRE(got.rows.size() == want.rows.size());
  REQUIRE_FALSE(got.rows.empty());
  for (size_t i = 0; i < want.rows.size(); ++i) {
    CHECK(got.rows[i].name == want.rows[i].name);
    // The viewer's Inspector reports in microseconds; the samples are milliseconds either way.
    CHECK(got.rows[i].median_a_ms == Approx(want.rows[i].median_a_ms).epsilon(1e-12));
    CHECK(got.rows[i].median_b_ms == Approx(want.rows[i].median_b_ms).epsilon(1e-12));
    CHECK(got.rows[i].test.p == Approx(want.rows[i].test.p).epsilon(1e-9));
    CHECK(got.rows[i].verdict == want.rows[i].verdict);
  }
  CHECK(got.method.delta == Approx(want.method.delta).margin(1e-12));
  // Cached under the same options, recomputed under others.
  s->compare->comparison(0.1, 0.01);
  CHECK(s->compare->recomputations() == 1);
  s->compare->comparison(0.2, 0.01);
  CHECK(s->compare->recomputations() == 2);

  // A baseline that is not an ETDump is reported as the reader words it; the run stays loaded.
  OpenRequest wrong;
  wrong.baseline = fixture("cifar10/cifar10.pte");
  auto w = load_session(wrong, s.get(), nullptr);
  REQUIRE(w->errors.size() == 1);
  CHECK(w->errors[0] == etdump::EtDumpReader::open(wrong.baseline).error().message());
  CHECK(w->dump);
}

TEST_CASE("stored runs open from the run store: the run, its curve and a stored baseline", "[gui][session][compare][store]") {
  const std::string dir = etscope::testing::temp_dir("gui_session_store");
  const std::string location = dir + "/runs.sqlite";
  std::remove(location.c_str());
  int64_t base_id = 0, run_id = 0;
  {
    auto db = store::Store::open(location).value();
    store::ImportRequest r;
    r.etdump = fixture("cifar10/cifar10.profile.etdp");
    r.pte = fixture("cifar10/cifar10.pte");
    r.tags = {{"build", "before"}};
    r.environment = store::this_machine();
    base_id = db->add(r).value().run_id;
    r.etdump = fixture("cifar10/cifar10.etdp");
    r.tags = {{"build", "after"}};
    r.source = "train";
    r.curve.loss = {1.0, 0.5};
    r.curve.accuracy = {std::nullopt, std::nullopt};
    r.curve.step_ms = {4, 3};
    r.curve.forward_backward_ms = {3, 2};
    r.curve.optimizer_ms = {1, 1};
    run_id = db->add(r).value().run_id;
  }
  OpenRequest request;
  request.store = location;
  request.run = "build=after";
  request.baseline = "build=before";
  auto s = load_session(request, nullptr, nullptr);
  INFO((s->errors.empty() ? "" : s->errors[0]));
  CHECK(s->errors.empty());
  CHECK(s->store_location == location);
  CHECK(s->store_runs.size() == 2);
  CHECK(s->store_run == run_id);
  CHECK(s->store_baseline == base_id);
  // The store keeps samples, not events: no timeline.
  CHECK_FALSE(s->dump);
  CHECK_FALSE(s->baseline_timeline);
  REQUIRE(s->curve);
  CHECK(s->curve->loss == std::vector<double>{1.0, 0.5});
  CHECK(s->curve->optimizer_ms == std::vector<double>{1, 1});
  REQUIRE(s->compare);
  CHECK_THAT(s->compare->baseline_label(), Catch::StartsWith("run " + std::to_string(base_id)));
  CHECK_THAT(s->compare->baseline_label(), Catch::Contains("build=before"));
  CHECK_THAT(s->compare->candidate_label(), Catch::Contains("build=after"));
  auto db = store::Store::open(location).value();
  const inspect::Comparison want = inspect::compare_runs(db->samples(base_id).value(), db->samples(run_id).value());
  CHECK(s->compare->comparison(0.05, 0.05).rows.size() == want.rows.size());
  CHECK(s->compare->comparison(0.05, 0.05).method.test.p == want.method.test.p);

  // Picking the other way round (as the view's pickers do) swaps them.
  OpenRequest swap;
  swap.run = std::to_string(base_id);
  swap.baseline = std::to_string(run_id);
  auto t = load_session(swap, s.get(), nullptr);
  INFO((t->errors.empty() ? "" : t->errors[0]));
  CHECK(t->errors.empty());
  CHECK(t->store_run == base_id);
  CHECK(t->store_baseline == run_id);
  REQUIRE(t->compare);
  CHECK_THAT(t->compare->candidate_label(), Catch::Contains("build=before"));

  // Runs that do not exist, and stores that do not, are one line each.
  OpenRequest missing_run;
  missing_run.store = location;
  missing_run.run = "999";
  auto m = load_session(missing_run, nullptr, nullptr);
  REQUIRE(m->errors.size() == 1);
  CHECK_THAT(m->errors[0], Catch::Contains("999"));
  OpenRequest no_store;
  no_store.store = dir + "/absent.sqlite";
  no_store.run = "1";
  auto n = load_session(no_store, nullptr, nullptr);
  REQUIRE_FALSE(n->errors.empty());
  CHECK(n->errors[0] == dir + "/absent.sqlite: no such run store (etscope train/run/store add --store create one)");
  std::error_code ec;
  CHECK_FALSE(std::filesystem::exists(dir + "/absent.sqlite", ec));  // not created by looking
}

TEST_CASE("a bool constant holding bytes other than 0 or 1 is a warning in the dialog (issue 28)", "[gui][session][issue28]") {
  const auto bytes = etscope::testing::bool_mask_program_bytes({0x00, 0x93, 0x01, 0x7f});
  const std::string path = write_file("mask.pte", std::string(bytes.begin(), bytes.end()));
  auto s = load_session({path}, nullptr, nullptr);
  REQUIRE(s->program);
  REQUIRE(s->errors.size() == 1);
  CHECK_THAT(s->errors[0], Catch::StartsWith("warning: " + path + ": method 'forward' value 0 (bool[4] constant)") &&
                               Catch::Contains("aten::where.self_out"));
}

TEST_CASE("the viewer shows the engine of the loaded run and warns when the compared runs' engines differ", "[gui][session][compare][engine]") {
  const std::string dir = etscope::testing::temp_dir("gui_session_engines");
  const std::string ours = marked_dump(dir, "ours.etdp", "etscope", "0.1.0");
  const std::string theirs = marked_dump(dir, "theirs.etdp", "executorch", "1.5.1+cpu");
  OpenRequest request;
  request.paths = {theirs};
  request.baseline = ours;
  auto s = load_session(request, nullptr, nullptr);
  INFO((s->errors.empty() ? "" : s->errors[0]));
  CHECK(s->errors.empty());
  CHECK(s->engine == inspect::EngineIdentity{"executorch", "1.5.1+cpu"});
  CHECK(s->baseline_engine == inspect::EngineIdentity{"etscope", "0.1.0"});
  REQUIRE(s->compare);
  CHECK(s->compare->baseline_engine().text() == "etscope 0.1.0");
  CHECK(s->compare->candidate_engine().text() == "executorch 1.5.1+cpu");
  CHECK(s->compare->engines().match == inspect::EngineMatch::kDifferent);
  CHECK(s->compare->engines().text == inspect::check_engines(s->baseline_engine, s->engine).text);
  // The marker is no event of the statistics.
  REQUIRE(s->stats);
  for (const StatsBlock& block : s->stats->blocks()) {
    for (const StatsRow& row : block.rows) CHECK(row.name.rfind("etscope::", 0) == std::string::npos);
  }
  // The same engine at another version compares quietly.
  OpenRequest again;
  again.paths = {marked_dump(dir, "ours2.etdp", "etscope", "0.2.0")};
  auto same = load_session(again, s.get(), nullptr);
  REQUIRE(same->compare);
  CHECK(same->compare->engines().match == inspect::EngineMatch::kSame);
  CHECK(same->compare->engines().text.empty());
}

TEST_CASE("issue 28: the compare view takes run sets as etscope compare does: ids with commas, a --repeat set's tag",
          "[gui][session][compare][store]") {
  const std::string dir = etscope::testing::temp_dir("gui_session_sets");
  const std::string location = dir + "/runs.sqlite";
  std::remove(location.c_str());
  const std::string pte = fixture("training/mlp_mse.pte");
  for (const char* build : {"a", "b"}) {
    auto made = run_etscope("run " + pte + " --engine etscope --iterations 5 --repeat 3 --store " + location + " --tag build=" + build);
    INFO(made.err);
    REQUIRE(made.exit_code == 0);
  }
  // Sets 1,2,3 (set=1, build=a) and 4,5,6 (set=4, build=b): a tag is its newest run's whole set.
  OpenRequest request;
  request.store = location;
  request.baseline = "build=a";
  request.run = "4,5,6";
  auto s = load_session(request, nullptr, nullptr);
  INFO((s->errors.empty() ? "" : s->errors[0]));
  CHECK(s->errors.empty());
  CHECK(s->store_baseline_set == std::vector<int64_t>{1, 2, 3});
  CHECK(s->store_run_set == std::vector<int64_t>{4, 5, 6});
  CHECK(s->store_baseline == 1);
  CHECK(s->store_run == 4);
  REQUIRE(s->compare);
  CHECK(s->compare->baseline().size() == 3);
  CHECK(s->compare->candidate().size() == 3);
  CHECK_THAT(s->compare->baseline_label(), Catch::StartsWith("runs 1,2,3 (") && Catch::Contains("set=1"));
  CHECK_THAT(s->compare->candidate_label(), Catch::StartsWith("runs 4,5,6 (") && Catch::Contains("build=b"));
  // The verdicts `etscope compare build=a 4,5,6` gives: the method total on the runs' medians.
  auto db = store::Store::open(location).value();
  std::vector<inspect::RunSamples> a, b;
  for (int64_t id : {1, 2, 3}) a.push_back(db->samples(id).value());
  for (int64_t id : {4, 5, 6}) b.push_back(db->samples(id).value());
  const inspect::Comparison want = inspect::compare_run_sets(a, b);
  const inspect::Comparison& got = s->compare->comparison(0.05, 0.05);
  CHECK(got.runs_a == 3);
  CHECK(got.runs_b == 3);
  CHECK(got.method.n_a == 3);
  CHECK(got.method.test.p == want.method.test.p);
  CHECK(got.rows.size() == want.rows.size());
  // The same program twice: three runs a side cannot reach p 0.05, so no method alarm.
  CHECK(got.method.verdict == inspect::Verdict::kUnchanged);

  // A set by its name as the baseline, one run as the candidate (as the view's pickers ask).
  OpenRequest swap;
  swap.baseline = "set=4";
  swap.run = "1";
  auto t = load_session(swap, s.get(), nullptr);
  INFO((t->errors.empty() ? "" : t->errors[0]));
  CHECK(t->errors.empty());
  CHECK(t->store_baseline_set == std::vector<int64_t>{4, 5, 6});
  CHECK(t->store_run_set == std::vector<int64_t>{1});
  REQUIRE(t->compare);
  CHECK(t->compare->baseline().size() == 3);
  CHECK(t->compare->candidate().size() == 1);
  CHECK_THAT(t->compare->candidate_label(), Catch::StartsWith("run 1 ("));
}
