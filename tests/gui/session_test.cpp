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
  CHECK(s->paths().size() == 3);
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
  CHECK(ptd->errors[0].rfind(real_artifact("xor_training.ptd") + ": a tensor-data file (.ptd, FT01)", 0) == 0);
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
