// open_profile and main_block: the one way every front end opens a profiled run (method choice,
// warnings, refusals) and picks the block it shows first.
#include <catch2/catch.hpp>

#include <algorithm>
#include <string>
#include <vector>

#include "etscope/core/event_names.h"
#include "etscope/etrecord/etrecord_reader.h"
#include "etscope/formats/pte_reader.h"
#include "etscope/inspect/profile.h"
#include "testing/test_util.h"

using etscope::testing::fixture;
using namespace etscope;
using namespace etscope::inspect;

namespace {

ProfileFiles simple_conv_files() {
  ProfileFiles files;
  files.etdump = fixture("simple_conv/simple_conv.etdp");
  files.etrecord = fixture("simple_conv/simple_conv.etrecord");
  files.program = fixture("simple_conv/simple_conv.pte");
  return files;
}

Program two_methods_program() {
  auto program = PteReader::open(fixture("two_methods/two_methods.pte"));
  REQUIRE(program.ok());
  return std::move(program).value();
}

}  // namespace

TEST_CASE("the method is the one asked for, else forward, else the program's first", "[profile]") {
  Program program = two_methods_program();
  auto record = etrecord::EtRecordReader::open(fixture("two_methods/two_methods.etrecord"));
  REQUIRE(record.ok());
  CHECK(profile_method("encode", &program, &*record) == "encode");
  CHECK(profile_method("", &program, &*record) == "forward");
  CHECK(profile_method("", nullptr, &*record) == "forward");
  CHECK(profile_method("", nullptr, nullptr) == "forward");
  // A program without forward: its first method, whatever the ETRecord holds.
  std::erase_if(program.plans, [](const ExecutionPlan& p) { return p.name == "forward"; });
  REQUIRE(!program.plans.empty());
  CHECK(profile_method("", &program, &*record) == program.plans.front().name);
  CHECK(profile_method("", &program, nullptr) == "encode");
}

TEST_CASE("an opened profile holds its files, the method and an Inspector built with it", "[profile]") {
  ProfileFiles files = simple_conv_files();
  files.options.target = TimeScale::kUs;
  auto profile = open_profile(files);
  INFO((profile.ok() ? std::string() : profile.error().message()));
  REQUIRE(profile.ok());
  REQUIRE(profile->inspector);
  CHECK(profile->dump);
  CHECK(profile->record);
  CHECK(profile->program);
  CHECK(profile->method == "forward");
  CHECK(profile->inspector->options().method == "forward");
  CHECK(profile->inspector->options().target == TimeScale::kUs);
  // simple_conv's dump logged intermediate outputs: that is the only thing to say.
  REQUIRE(profile->warnings.size() == 1);
  CHECK(profile->warnings[0].kind == ProfileWarning::Kind::kLoggedTimings);
}

TEST_CASE("an ETDump given as bytes opens as the same file does", "[profile]") {
  ProfileFiles from_file;
  from_file.etdump = fixture("simple_conv/simple_conv.etdp");
  ProfileFiles from_memory;
  from_memory.etdump_bytes = etscope::testing::load(from_file.etdump);
  auto a = open_profile(from_file);
  auto b = open_profile(from_memory);
  REQUIRE(a.ok());
  REQUIRE(b.ok());
  REQUIRE(a->inspector->blocks().size() == b->inspector->blocks().size());
  for (size_t i = 0; i < a->inspector->blocks().size(); ++i) {
    CHECK(a->inspector->blocks()[i].events.size() == b->inspector->blocks()[i].events.size());
  }
}

TEST_CASE("files of different models are refused, or joined with a warning", "[profile]") {
  ProfileFiles files = simple_conv_files();
  files.etrecord = fixture("cifar10/cifar10.etrecord");
  files.options.mismatch_hint = " (hint)";
  auto refused = open_profile(files);
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.error().code() == ErrorCode::kInvalidArgument);
  CHECK(refused.error().message().find('\n') == std::string::npos);
  CHECK(refused.error().message().size() > 7);
  CHECK(refused.error().message().substr(refused.error().message().size() - 7) == " (hint)");

  files.options.join_mismatched = true;
  auto joined = open_profile(files);
  REQUIRE(joined.ok());
  REQUIRE_FALSE(joined->warnings.empty());
  CHECK(joined->warnings.front().kind == ProfileWarning::Kind::kMismatch);
  CHECK(joined->warnings.front().file.empty());
  CHECK(joined->warnings.front().text.find("cifar10") != std::string::npos);
}

TEST_CASE("a file of another kind is refused with one line naming it", "[profile]") {
  const std::string pte = fixture("simple_conv/simple_conv.pte");
  const std::string dump = fixture("simple_conv/simple_conv.etdp");
  struct Case {
    const char* what;
    ProfileFiles files;
    std::string named;
  };
  std::vector<Case> cases(3);
  cases[0] = {"a program as the ETDump", {}, pte};
  cases[0].files.etdump = pte;
  cases[1] = {"a program as the ETRecord", {}, pte};
  cases[1].files.etdump = dump;
  cases[1].files.etrecord = pte;
  cases[2] = {"an ETDump as the program", {}, dump};
  cases[2].files.etdump = dump;
  cases[2].files.program = dump;
  for (const Case& c : cases) {
    INFO(c.what);
    auto opened = open_profile(c.files);
    REQUIRE_FALSE(opened.ok());
    INFO(opened.error().message());
    CHECK(opened.error().message().find('\n') == std::string::npos);
    CHECK(opened.error().message().find(c.named) != std::string::npos);
  }
}

TEST_CASE("recording losses and undecoded ETRecord parts are warnings naming their file", "[profile]") {
  // Built by hand: the readers of real files give none.
  ProfileParts parts;
  auto dump = etdump::EtDumpReader::open(fixture("simple_conv/simple_conv.etdp"));
  REQUIRE(dump.ok());
  parts.dump = std::make_shared<const etdump::EtDumpFile>(std::move(dump).value());
  auto record = etrecord::EtRecordReader::open(fixture("simple_conv/simple_conv.etrecord"));
  REQUIRE(record.ok());
  etrecord::EtRecord r = std::move(record).value();
  r.undecoded = {"a", "b", "c"};
  parts.record = std::make_shared<const etrecord::EtRecord>(std::move(r));
  parts.record_name = "x.etrecord";
  auto profile = open_profile(std::move(parts), ProfileOptions{});
  REQUIRE(profile.ok());
  // simple_conv's dump was recorded by ExecuTorch with intermediate logging: that comes last.
  REQUIRE(profile->warnings.size() == 2);
  CHECK(profile->warnings[0].kind == ProfileWarning::Kind::kUndecoded);
  CHECK(profile->warnings[0].file == "x.etrecord");
  CHECK(profile->warnings[0].text == "not decoded: a (and 2 more)");
  CHECK(profile->warnings[1].kind == ProfileWarning::Kind::kLoggedTimings);
}

TEST_CASE("issue 28: a dump recorded with intermediate logging warns that its timings include it", "[profile]") {
  auto dump = etdump::EtDumpReader::open(fixture("simple_conv/simple_conv.etdp"));
  REQUIRE(dump.ok());
  etdump::EtDumpFile logged = std::move(dump).value();
  const size_t intermediates = logged_intermediates(logged);
  REQUIRE(intermediates > 0);
  etdump::EtDumpFile outputs_only = logged;
  std::erase_if(outputs_only.values, [](const etdump::LoggedValue& v) { return !v.output; });
  CHECK(logged_intermediates(outputs_only) == 0);

  ProfileParts parts;
  parts.dump = std::make_shared<const etdump::EtDumpFile>(std::move(logged));
  auto profile = open_profile(std::move(parts), ProfileOptions{});
  REQUIRE(profile.ok());
  auto w = std::find_if(profile->warnings.begin(), profile->warnings.end(),
                        [](const ProfileWarning& x) { return x.kind == ProfileWarning::Kind::kLoggedTimings; });
  REQUIRE(w != profile->warnings.end());
  CHECK(w->file == fixture("simple_conv/simple_conv.etdp"));
  CHECK(w->text.find(std::to_string(intermediates) + " logged values") != std::string::npos);
  CHECK(w->text.find("timings include") != std::string::npos);
}

TEST_CASE("the main block holds the executions: Execute first, then most runs", "[profile]") {
  using C = BlockCandidate;
  CHECK_FALSE(main_block(std::vector<C>{}).has_value());
  CHECK(main_block({C{"Default", 1}, C{"Execute", 10}}) == 1u);
  CHECK(main_block({C{"Default", 1}, C{"Execute", 2}, C{"Execute", 5}}) == 2u);
  CHECK(main_block({C{"Execute", 3}, C{"Execute", 3}}) == 0u);
  CHECK(main_block({C{"Execute", 1}, C{"Warmup", 20}}) == 0u);
  CHECK(main_block({C{"Default", 5}, C{"forward", 1}}) == 1u);
  CHECK(main_block({C{"Default", 5}, C{"Warmup", 1}}) == 1u);
  CHECK(main_block({C{"Default", 5}}) == 0u);

  auto profile = open_profile(simple_conv_files());
  REQUIRE(profile.ok());
  const auto block = main_block(*profile->inspector);
  REQUIRE(block.has_value());
  CHECK(profile->inspector->blocks()[*block].name == events::kBlockExecute);
}

TEST_CASE("open_profile names the dump's engine, unknown for ExecuTorch's own dumps", "[inspect][profile][engine]") {
  auto profile = open_profile(simple_conv_files());
  REQUIRE(profile.ok());
  // ExecuTorch's runtime wrote the fixture: no engine marker.
  CHECK_FALSE(profile->engine.known());
  CHECK(profile->engine.text() == "unknown (no etscope engine marker)");
  CHECK(profile->engine.label() == "unknown");
  CHECK(profile->engine == dump_engine(*profile->dump));
}

TEST_CASE("two runs compare when their engines agree or one is unknown and not when they differ", "[inspect][engine]") {
  const EngineIdentity ours{"etscope", "0.1.0"}, ours_next{"etscope", "0.2.0"}, theirs{"executorch", "1.5.1+cpu"}, unknown;
  CHECK(check_engines(ours, ours_next).match == EngineMatch::kSame);
  CHECK(check_engines(ours, ours_next).text.empty());
  const EngineCheck different = check_engines(ours, theirs);
  CHECK(different.match == EngineMatch::kDifferent);
  CHECK(different.text ==
        "A was timed by engine etscope 0.1.0 and B by engine executorch 1.5.1+cpu: different engines run different code, so their "
        "timings differ for that reason alone");
  const EngineCheck one = check_engines(theirs, unknown);
  CHECK(one.match == EngineMatch::kUnknown);
  CHECK(one.text == "B's engine is unknown (no etscope engine marker): it is not checked against A's (executorch 1.5.1+cpu)");
  CHECK(check_engines(unknown, unknown).match == EngineMatch::kUnknown);
  CHECK(std::string(to_string(EngineMatch::kDifferent)) == "different");
  CHECK(EngineIdentity{"etscope", ""}.text() == "etscope");
}
