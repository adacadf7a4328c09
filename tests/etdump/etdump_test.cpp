// ETDump reading (ExecuTorch's real traces) and writing (ours, read back), byte layout included.
#include <catch2/catch.hpp>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>

#include "etscope/core/event_names.h"
#include "etscope/etdump/etdump_reader.h"
#include "etscope/inspect/engine_identity.h"
#include "etscope/inspect/inspector.h"
#include "etscope/etdump/etdump_writer.h"
#include "etscope/formats/pte_reader.h"
#include "etscope/runtime/method.h"
#include "testing/test_json.h"
#include "testing/test_util.h"

using namespace etscope;
using namespace etscope::etdump;
using etscope::testing::fixture;
using etscope::testing::real_artifact;

namespace {

template <typename T>
T must(Result<T> r) {
  if (!r.ok()) FAIL(r.error().message());
  return std::move(r).value();
}

std::vector<std::string> names_in(const EtDumpFile& f, const RunBlock& b) {
  std::vector<std::string> out;
  for (uint32_t i = 0; i < b.event_count; ++i) {
    const Event& e = f.events[b.first_event + i];
    out.push_back(e.kind == EventKind::kDebug ? "<debug>" : f.name_of(e));
  }
  return out;
}

}  // namespace

TEST_CASE("the devtools tutorial ETDump reads with ExecuTorch's defaults applied", "[etdump][real]") {
  EtDumpFile f = must(EtDumpReader::open(real_artifact("tutorial.etdp")));
  CHECK(f.size_prefixed);
  REQUIRE(f.blocks.size() == 2);
  CHECK(f.blocks[0].name == "Default");
  CHECK(f.blocks[0].bundled_input_index == -1);
  CHECK(names_in(f, f.blocks[0]) == std::vector<std::string>{"Method::init", "Program::load_method"});
  for (uint32_t i = 0; i < 2; ++i) {
    CHECK(f.events[i].chain == -1);
    CHECK(f.events[i].instruction == 0);
  }
  const RunBlock& exec = f.blocks[1];
  CHECK(exec.name == "Execute");
  REQUIRE(exec.event_count == 29);
  const char* ops[] = {"convolution", "relu", "max_pool2d_with_indices", "convolution", "relu", "max_pool2d_with_indices",
                       "permute_copy", "addmm", "relu", "permute_copy", "addmm", "relu", "permute_copy", "addmm"};
  for (int i = 0; i < 14; ++i) {
    const Event& native = f.events[exec.first_event + 2 * i];
    const Event& op = f.events[exec.first_event + 2 * i + 1];
    CHECK(f.name_of(native) == std::string("native_call_") + ops[i] + ".out");
    CHECK(f.name_of(op) == "OPERATOR_CALL");
    CHECK(native.instruction == i);
    CHECK(op.instruction == i);
    CHECK(native.chain == 0);
    CHECK(op.start <= native.start);
    CHECK(native.end <= op.end);
  }
  CHECK(f.name_of(f.events[exec.first_event + 28]) == "Method::execute");
  // Instruction 0's native call, as flatc decodes it: start 426786, end 971569.
  CHECK(f.events[exec.first_event].start == 426786);
  CHECK(f.events[exec.first_event].end == 971569);
}

TEST_CASE("fixture ETDumps written by ExecuTorch 1.5 read like its own deserializer reads them", "[etdump][fixtures]") {
  // Every .etdp the fixtures list, each next to ExecuTorch's JSON rendering of it.
  const nlohmann::json index = etscope::testing::load_json(fixture("index.json"));
  std::vector<std::string> bases;
  for (const auto& file : index["files"]) {
    const std::string path = file["path"];
    if (path.size() > 5 && path.compare(path.size() - 5, 5, ".etdp") == 0) bases.push_back(path.substr(0, path.size() - 5));
  }
  REQUIRE(bases.size() >= 10);
  for (const std::string& base : bases) {
    {
      INFO(base);
      EtDumpFile f = must(EtDumpReader::open(fixture(base + ".etdp")));
      const nlohmann::json ref = etscope::testing::load_json(fixture(base + ".etdump.json"));
      REQUIRE(f.blocks.size() == ref["run_data"].size());
      for (size_t b = 0; b < f.blocks.size(); ++b) {
        const auto& rb = ref["run_data"][b];
        CHECK(f.blocks[b].name == rb["name"].get<std::string>());
        const auto& events = rb["events"];
        REQUIRE(f.blocks[b].event_count == (events.is_null() ? 0 : events.size()));
        for (uint32_t e = 0; e < f.blocks[b].event_count; ++e) {
          const Event& got = f.events[f.blocks[b].first_event + e];
          const auto& want = events[e];
          if (!want["profile_event"].is_null()) {
            const auto& p = want["profile_event"];
            REQUIRE(got.kind == EventKind::kProfile);
            CHECK(got.chain == p["chain_index"].get<int32_t>());
            CHECK(got.instruction == p["instruction_id"].get<int32_t>());
            CHECK(got.start == p["start_time"].get<uint64_t>());
            CHECK(got.end == p["end_time"].get<uint64_t>());
            if (!p["name"].is_null()) CHECK(f.name_of(got) == p["name"].get<std::string>());
            if (got.delegate) {
              const DelegateRef& d = f.delegate_refs[got.ref];
              CHECK(d.id_int == p["delegate_debug_id_int"].get<int32_t>());
              if (!p["delegate_debug_id_str"].is_null()) CHECK(d.id_str == p["delegate_debug_id_str"].get<std::string>());
            }
          } else if (!want["debug_event"].is_null()) {
            const auto& d = want["debug_event"];
            REQUIRE(got.kind == EventKind::kDebug);
            CHECK(got.instruction == d["instruction_id"].get<int32_t>());
            const LoggedValue& v = f.values[got.ref];
            const auto& entry = d["debug_entry"];
            if (entry["val"] == "Tensor") {
              REQUIRE(v.tensors.size() == 1);
              CHECK(v.tensors[0].offset == entry["tensor"]["offset"].get<int64_t>());
              CHECK(v.tensors[0].sizes == entry["tensor"]["sizes"].get<std::vector<int64_t>>());
            }
            CHECK(v.output == (!entry["output"].is_null() && entry["output"]["bool_val"].get<bool>()));
          }
        }
      }
    }
  }
}

TEST_CASE("our ETDump of a run has ExecuTorch's blocks / events and debug-buffer layout", "[etdump][writer]") {
  Program p = must(PteReader::open(real_artifact("add.pte")));
  alignas(64) static uint8_t buffer[4096];
  std::memset(buffer, 0xee, sizeof(buffer));
  EtDumpWriterOptions options;
  options.debug_buffer = {buffer + 16, sizeof(buffer) - 16};  // deliberately not 64-aligned
  EtDumpWriter writer(options);
  writer.set_debug_level(DebugLevel::kIntermediateOutputs);
  runtime::MethodOptions mo;
  mo.tracer = &writer;
  auto m = must(runtime::Method::load(p, "forward", mo));
  const float a[1] = {1.5f}, b[1] = {2.0f};
  REQUIRE(m->set_input(0, {reinterpret_cast<const uint8_t*>(a), 4}).ok());
  REQUIRE(m->set_input(1, {reinterpret_cast<const uint8_t*>(b), 4}).ok());
  REQUIRE(m->execute().ok());
  REQUIRE(m->execute().ok());
  std::vector<uint8_t> bytes = must(writer.finish());
  CHECK_FALSE(writer.debug_buffer_overflowed());
  REQUIRE(bytes.size() > 12);
  CHECK(std::memcmp(bytes.data() + 8, "ED00", 4) == 0);
  uint32_t prefix;
  std::memcpy(&prefix, bytes.data(), 4);
  CHECK(prefix + 4 == bytes.size());

  EtDumpFile f = must(EtDumpReader::read(etscope::testing::blob_of(bytes, "ours.etdp")));
  REQUIRE(f.blocks.size() == 3);
  CHECK(f.blocks[0].name == "Default");
  CHECK(names_in(f, f.blocks[0]) == std::vector<std::string>{"Method::init", "Program::load_method"});
  // ExecuTorch's sequence, preceded by etscope's program inputs (chain -1, instruction -1).
  for (int k = 1; k <= 2; ++k) {
    CHECK(f.blocks[k].name == "Execute");
    CHECK(names_in(f, f.blocks[k]) == std::vector<std::string>{"<debug>", "<debug>", "<debug>", "native_call_add.out",
                                                               "OPERATOR_CALL", "Method::execute", "<debug>"});
  }
  const RunBlock& run = f.blocks[1];
  for (uint32_t i = 0; i < 2; ++i) {
    const Event& in_event = f.events[run.first_event + i];
    CHECK(in_event.chain == -1);
    CHECK(in_event.instruction == kProgramInputInstruction);
    const LoggedValue& input = f.values[in_event.ref];
    CHECK_FALSE(input.output);
    REQUIRE(input.tensors.size() == 1);
    float logged_input;
    std::memcpy(&logged_input, options.debug_buffer.data() + input.tensors[0].offset, 4);
    CHECK(logged_input == (i == 0 ? a[0] : b[0]));
  }
  const Event& out_event = f.events[run.first_event + 6];
  CHECK(out_event.chain == -1);  // stored as 2^64 - 1 in the unsigned field
  CHECK(out_event.instruction == 0);
  const LoggedValue& intermediate = f.values[f.events[run.first_event + 2].ref];
  const LoggedValue& output = f.values[out_event.ref];
  CHECK_FALSE(intermediate.output);
  CHECK(output.output);
  // Offsets align absolute addresses to 64 bytes, so with a buffer at +16 they are 48, 112, ...
  REQUIRE(output.tensors.size() == 1);
  CHECK(f.values[f.events[run.first_event].ref].tensors[0].offset == 48);
  CHECK(intermediate.tensors[0].offset == 176);
  CHECK((reinterpret_cast<uintptr_t>(options.debug_buffer.data()) + output.tensors[0].offset) % 64 == 0);
  float logged;
  std::memcpy(&logged, options.debug_buffer.data() + output.tensors[0].offset, 4);
  CHECK(logged == 3.5f);
  CHECK(intermediate.tensors[0].strides == std::vector<int64_t>{1});
}

namespace {

// add.pte's forward traced by `writer`, both inputs set to 1.
std::unique_ptr<runtime::Method> add_with_ones(const Program& p, EtDumpWriter& writer) {
  runtime::MethodOptions mo;
  mo.tracer = &writer;
  auto m = must(runtime::Method::load(p, "forward", mo));
  const float a[1] = {1.0f};
  REQUIRE(m->set_input(0, {reinterpret_cast<const uint8_t*>(a), 4}).ok());
  REQUIRE(m->set_input(1, {reinterpret_cast<const uint8_t*>(a), 4}).ok());
  return m;
}

}  // namespace

TEST_CASE("a debug buffer that is too small leaves a marker / never a partial value", "[etdump][writer][errors]") {
  Program p = must(PteReader::open(real_artifact("add.pte")));
  alignas(64) static uint8_t buffer[64];
  EtDumpWriterOptions options;
  options.debug_buffer = {buffer, 4};  // room for one float
  EtDumpWriter writer(options);
  writer.set_debug_level(DebugLevel::kIntermediateOutputs);
  auto m = add_with_ones(p, writer);
  REQUIRE(m->execute().ok());
  CHECK(writer.debug_buffer_overflowed());
  EtDumpFile f = must(EtDumpReader::read(etscope::testing::blob_of(must(writer.finish()), "small.etdp")));
  std::vector<std::string> names = names_in(f, f.blocks.at(1));
  CHECK(names == std::vector<std::string>{"<debug>", "native_call_add.out", "OPERATOR_CALL", "Method::execute",
                                          "etscope::debug_buffer_overflow"});
  // The marker counts what was dropped: the first logged value (program input 0) took the 4
  // bytes; input 1, the intermediate and the output did not fit.
  CHECK(writer.values_dropped() == 3);
  const Event& marker = f.events[f.blocks.at(1).first_event + f.blocks.at(1).event_count - 1];
  CHECK(marker.start == 0);
  CHECK(marker.end == 3);
  CHECK(marker.instruction == -1);
}

TEST_CASE("executions beyond the block capacity are counted and never merged into the last block",
          "[etdump][writer][errors]") {
  Program p = must(PteReader::open(real_artifact("add.pte")));
  EtDumpWriterOptions options;
  options.max_blocks = 3;  // "Default" and two executions
  EtDumpWriter writer(options);
  auto m = add_with_ones(p, writer);
  for (int i = 0; i < 5; ++i) REQUIRE(m->execute().ok());
  CHECK(writer.blocks_dropped() == 3);
  CHECK(writer.events_overflowed());
  CHECK_FALSE(writer.debug_buffer_overflowed());
  auto bytes = must(writer.finish());
  EtDumpFile f = must(EtDumpReader::read(etscope::testing::blob_of(bytes, "blocks.etdp")));
  REQUIRE(f.blocks.size() == 3);
  // Both execution blocks hold one execution's events; the last also the marker (end = 3).
  CHECK(names_in(f, f.blocks[2]).size() == names_in(f, f.blocks[1]).size() + 1);
  CHECK(names_in(f, f.blocks[2]).back() == "etscope::block_overflow");
  CHECK(f.events[f.blocks[2].first_event + f.blocks[2].event_count - 1].end == 3);

  // The Inspector groups the two executions as one block of 2 runs, with the marker left out
  // of its events and said in words.
  auto in = must(inspect::Inspector::build(std::make_shared<const EtDumpFile>(std::move(f)), nullptr, nullptr));
  REQUIRE(in.blocks().size() == 2);
  const inspect::EventBlock& exec = in.blocks()[1];
  CHECK(exec.runs.size() == 2);
  CHECK(exec.executions_dropped == 3);
  for (const inspect::Event& e : exec.events) CHECK(e.name.rfind("etscope::", 0) == std::string::npos);
  const std::vector<std::string> losses = in.recording_losses();
  REQUIRE(losses.size() == 1);
  CHECK(losses[0] == "block 1 'Execute' (2 runs): 3 later executions were not recorded: the ETDump writer's block capacity ran out");
}

TEST_CASE("the engine marker round-trips through the reader and the Inspector and is never an event", "[etdump][writer][engine]") {
  Program p = must(PteReader::open(real_artifact("add.pte")));
  EtDumpWriter writer(EtDumpWriterOptions{});
  writer.record_marker(events::engine_marker_name("early", "1"));  // before any block: ignored
  auto m = add_with_ones(p, writer);
  {
    // The writer keeps its own copy: the caller's text is gone before finish().
    std::string text = events::engine_marker_name("executorch", "1.5.1+cpu");
    writer.record_marker(text);
    text.assign(text.size(), 'x');
  }
  for (int i = 0; i < 3; ++i) REQUIRE(m->execute().ok());
  CHECK_FALSE(writer.events_overflowed());
  auto bytes = must(writer.finish());
  auto dump = std::make_shared<EtDumpFile>(must(EtDumpReader::read(etscope::testing::blob_of(bytes, "engine.etdp"))));
  const EtDumpFile& f = *dump;
  REQUIRE(f.blocks.size() == 4);
  CHECK(names_in(f, f.blocks[0]) == std::vector<std::string>{"Method::init", "Program::load_method", "etscope::engine:executorch 1.5.1+cpu"});
  const Event& marker = f.events[f.blocks[0].first_event + 2];
  CHECK(f.is_marker(marker));
  CHECK(marker.kind == EventKind::kProfile);
  CHECK(marker.start == marker.end);  // zero length, at the time it was recorded
  CHECK(marker.start >= f.events[f.blocks[0].first_event].start);
  CHECK(marker.chain == -1);
  CHECK(marker.instruction == -1);
  CHECK(events::classify(f.name_of(marker), false) == events::EventClass::kMarker);
  CHECK(inspect::dump_engine(f) == inspect::EngineIdentity{"executorch", "1.5.1+cpu"});
  CHECK(inspect::dump_engine(f).text() == "executorch 1.5.1+cpu");

  // etscope's Inspector: not an event of the Default block, not a recording loss, not counted.
  auto in = must(inspect::Inspector::build(dump, nullptr, nullptr));
  REQUIRE(in.blocks().size() == 2);
  const inspect::EventBlock& load = in.blocks()[0];
  CHECK(load.name == "Default");
  REQUIRE(load.events.size() == 2);
  for (const inspect::EventBlock& block : in.blocks()) {
    for (const inspect::Event& e : block.events) CHECK(e.name.rfind("etscope::", 0) == std::string::npos);
    CHECK(block.values_dropped + block.events_dropped + block.executions_dropped == 0);
    CHECK_FALSE(block.drops_uncounted);
  }
  CHECK(in.recording_losses().empty());
  CHECK(in.blocks()[1].runs.size() == 3);
}

TEST_CASE("a dump without an engine marker has an unknown engine", "[etdump][engine]") {
  EtDumpFile f = must(EtDumpReader::open(real_artifact("tutorial.etdp")));
  const inspect::EngineIdentity engine = inspect::dump_engine(f);
  CHECK_FALSE(engine.known());
  CHECK(engine.text() == "unknown (no etscope engine marker)");
}

TEST_CASE("ETDump reader errors: wrong kind / truncation / corruption", "[etdump][errors]") {
  auto pte = EtDumpReader::open(real_artifact("add.pte"));
  REQUIRE_FALSE(pte.ok());
  CHECK(pte.error().code() == ErrorCode::kWrongKind);
  CHECK_THAT(pte.error().message(), Catch::Contains("add.pte: not an ETDump: this is an ExecuTorch program"));
  auto blob = etscope::testing::load(real_artifact("tutorial.etdp"));
  std::vector<uint8_t> bytes(blob->data(), blob->data() + blob->size());
  auto cut = EtDumpReader::read(etscope::testing::blob_of({bytes.begin(), bytes.begin() + 1000}, "cut.etdp"));
  REQUIRE_FALSE(cut.ok());
  CHECK(cut.error().code() == ErrorCode::kTruncated);
  for (size_t len = 0; len < bytes.size(); len += 7) {
    auto r = EtDumpReader::read(etscope::testing::blob_of({bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(len)}, "t.etdp"));
    CHECK_FALSE(r.ok());
  }
  for (size_t pos = 0; pos < bytes.size(); ++pos) {
    const uint8_t saved = bytes[pos];
    bytes[pos] ^= 0xff;
    auto r = EtDumpReader::read(etscope::testing::blob_of(bytes, "flip.etdp"));
    if (!r.ok()) CHECK(r.error().message().rfind("flip.etdp", 0) == 0);
    bytes[pos] = saved;
  }
}
