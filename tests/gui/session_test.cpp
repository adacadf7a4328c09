// gui/model/session: loading files by content, building the view models, reporting errors with
// the messages the CLI prints.
#include <catch2/catch.hpp>

#include <fstream>

#include "etscope/etdump/etdump_reader.h"
#include "etscope/formats/pte_reader.h"
#include "model/session.h"
#include "testing/test_util.h"

using namespace etscope;
using namespace etscope::gui;
using etscope::testing::fixture;
using etscope::testing::real_artifact;

namespace {
std::string write_file(const std::string& name, const std::string& bytes) {
  const std::string path = etscope::testing::temp_dir("gui_session") + "/" + name;
  std::ofstream(path, std::ios::binary) << bytes;
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
