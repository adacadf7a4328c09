// gui/model/stats_model: the Op statistics rows, their filter, sort and cache.
#include <catch2/catch.hpp>

#include "etscope/etdump/etdump_reader.h"
#include "etscope/etrecord/etrecord_reader.h"
#include "model/event_lookup.h"
#include "model/stats_model.h"
#include "testing/test_util.h"

using namespace etscope;
using namespace etscope::gui;
using etscope::testing::fixture;

namespace {

inspect::Inspector simple_conv_inspector() {
  auto dump = etdump::EtDumpReader::open(fixture("simple_conv/simple_conv.etdp"));
  REQUIRE(dump.ok());
  auto record = etrecord::EtRecordReader::open(fixture("simple_conv/simple_conv.etrecord"));
  REQUIRE(record.ok());
  inspect::InspectorOptions options;
  options.target = inspect::TimeScale::kUs;
  auto inspector = inspect::Inspector::build(std::make_shared<const etdump::EtDumpFile>(std::move(dump).value()),
                                             std::make_shared<const etrecord::EtRecord>(std::move(record).value()),
                                             nullptr, options);
  if (!inspector.ok()) FAIL(inspector.error().message());
  return std::move(inspector).value();
}

std::vector<std::string> names(const StatsModel& m, size_t block, const StatsQuery& q) {
  std::vector<std::string> out;
  for (uint32_t r : m.rows(block, q)) out.push_back(m.blocks()[block].rows[r].name);
  return out;
}

}  // namespace

TEST_CASE("rows carry the Inspector's statistics in microseconds", "[gui][stats]") {
  const inspect::Inspector inspector = simple_conv_inspector();
  const StatsModel m = StatsModel::build(inspector);
  CHECK(std::string(m.unit()) == "us");
  REQUIRE(m.blocks().size() == 2);
  CHECK(m.default_block() == 1);  // the Execute block with 10 runs
  const StatsBlock& b = m.blocks()[1];
  CHECK(b.runs == 10);
  CHECK(b.label == "#1 Execute: 10 runs, 5 events");
  REQUIRE(b.rows.size() == 5);
  const StatsRow* conv = nullptr;
  for (const StatsRow& r : b.rows) {
    if (r.name == "native_call_convolution.out") conv = &r;
  }
  REQUIRE(conv != nullptr);
  CHECK(conv->count == 10);
  CHECK(conv->instruction == InstructionRef{0, 0});
  CHECK(conv->min_us <= conv->p10_us);
  CHECK(conv->p10_us <= conv->p50_us);
  CHECK(conv->p50_us <= conv->p90_us);
  CHECK(conv->p90_us <= conv->max_us);
  CHECK(conv->total_us == Approx(conv->avg_us * 10));
  CHECK(conv->share > 0.9);
  CHECK(conv->share < 1.0);
  CHECK(conv->module == "conv (Conv2d)");
  CHECK_FALSE(conv->framework);
  CHECK_FALSE(conv->operator_call);
  CHECK(b.run_time_us > conv->avg_us);
  CHECK(b.run_time_us == inspector.run_time(1).value);
  CHECK(b.run_time_source == "Method::execute avg");
  CHECK(conv->share == Approx(conv->avg_us / b.run_time_us));
  CHECK(conv->kind == events::EventClass::kNativeCall);
  CHECK(conv->total_us == inspector.blocks()[1].events[conv->event].perf->total);
  CHECK_FALSE(b.summary.empty());
  CHECK(b.modules.total > 0);
  CHECK_FALSE(b.modules.children.empty());
}

TEST_CASE("rows sort by any column and filter by name or module", "[gui][stats]") {
  const inspect::Inspector inspector = simple_conv_inspector();
  const StatsModel m = StatsModel::build(inspector);
  StatsQuery q;
  // By default OPERATOR_CALL rows are hidden, as in `etscope inspect`.
  CHECK(names(m, 1, q).size() == 3);
  q.show_operator_calls = true;
  q.column = StatsColumn::kAvg;
  q.ascending = false;
  auto by_avg = names(m, 1, q);
  REQUIRE(by_avg.size() == 5);
  CHECK(by_avg.front() == "Method::execute");
  CHECK(by_avg.back() == "native_call_relu.out");
  q.ascending = true;
  CHECK(names(m, 1, q).front() == "native_call_relu.out");
  q.column = StatsColumn::kName;
  CHECK(names(m, 1, q) == std::vector<std::string>{"Method::execute", "OPERATOR_CALL", "OPERATOR_CALL",
                                                   "native_call_convolution.out", "native_call_relu.out"});
  q.filter = "relu";  // matches the kernel by name and its OPERATOR_CALL by module
  CHECK(names(m, 1, q) == std::vector<std::string>{"OPERATOR_CALL", "native_call_relu.out"});
  q.filter = "relu, -OPERATOR";
  CHECK(names(m, 1, q) == std::vector<std::string>{"native_call_relu.out"});
  q.filter = "";
  q.hide_framework = true;
  CHECK(names(m, 1, q) == std::vector<std::string>{"native_call_convolution.out", "native_call_relu.out"});
  CHECK(m.rows(7, q).empty());
}

TEST_CASE("rows sort by module, and an instruction's row is its kernel's", "[gui][stats]") {
  const inspect::Inspector inspector = simple_conv_inspector();
  const StatsModel m = StatsModel::build(inspector);
  CHECK(m.has_modules());
  StatsQuery q;
  q.hide_framework = true;
  q.column = StatsColumn::kModule;
  q.ascending = true;
  CHECK(names(m, 1, q) == std::vector<std::string>{"native_call_convolution.out", "native_call_relu.out"});
  q.ascending = false;
  CHECK(names(m, 1, q) == std::vector<std::string>{"native_call_relu.out", "native_call_convolution.out"});
  // The Program view's line for a selected instruction: the kernel's event, not OPERATOR_CALL.
  const StatsRow* conv = m.row_of(1, InstructionRef{0, 0});
  REQUIRE(conv != nullptr);
  CHECK(conv->name == "native_call_convolution.out");
  CHECK(conv->module == "conv (Conv2d)");
  CHECK(m.row_of(1, InstructionRef{0, 99}) == nullptr);
  CHECK(m.row_of(9, InstructionRef{0, 0}) == nullptr);
  CHECK(m.row_of(1, InstructionRef{}) == nullptr);
  // Without an ETRecord there are no modules and the column starts hidden.
  auto dump = std::make_shared<const etdump::EtDumpFile>(etdump::EtDumpReader::open(fixture("simple_conv/simple_conv.etdp")).value());
  CHECK_FALSE(StatsModel::build(inspect::Inspector::build(dump, nullptr, nullptr).value()).has_modules());
}

TEST_CASE("the sorted rows are cached until the query changes", "[gui][stats]") {
  const inspect::Inspector inspector = simple_conv_inspector();
  const StatsModel m = StatsModel::build(inspector);
  StatsQuery q;
  const auto* first = &m.rows(1, q);
  const size_t n = m.recomputations();
  for (int frame = 0; frame < 100; ++frame) CHECK(&m.rows(1, q) == first);
  CHECK(m.recomputations() == n);
  q.column = StatsColumn::kCount;
  (void)m.rows(1, q);
  CHECK(m.recomputations() == n + 1);
  (void)m.rows(0, q);
  CHECK(m.recomputations() == n + 2);
}

TEST_CASE("sorting keeps Inspector order among equal keys", "[gui][stats]") {
  std::vector<StatsRow> rows(4);
  rows[0].count = 2, rows[1].count = 1, rows[2].count = 2, rows[3].count = 1;
  std::vector<uint32_t> order{0, 1, 2, 3};
  sort_stats_rows(rows, StatsColumn::kCount, false, order);
  CHECK(order == std::vector<uint32_t>{0, 2, 1, 3});
  sort_stats_rows(rows, StatsColumn::kCount, true, order);
  CHECK(order == std::vector<uint32_t>{1, 3, 0, 2});
}

TEST_CASE("raw events lead to their Inspector event, module and user stack frames", "[gui][stats]") {
  const inspect::Inspector inspector = simple_conv_inspector();
  const EventLookup lookup(inspector);
  const etdump::EtDumpFile& dump = inspector.dump();
  bool found_conv = false;
  for (uint32_t raw = 0; raw < dump.events.size(); ++raw) {
    if (dump.name_of(dump.events[raw]) != "native_call_convolution.out") continue;
    const inspect::Event* e = lookup.find(raw);
    REQUIRE(e != nullptr);
    CHECK(e->name == "native_call_convolution.out");
    const std::string text = lookup.annotation(raw);
    CHECK(text.find("module conv (Conv2d)") != std::string::npos);
    CHECK(text.find("op types aten.convolution.default") != std::string::npos);
    CHECK(text.find("stack trace") != std::string::npos);
    CHECK(text.find("site-packages") == std::string::npos);  // the user's frames, not torch's
    found_conv = true;
  }
  CHECK(found_conv);
  CHECK(lookup.find(static_cast<uint32_t>(dump.events.size())) == nullptr);
}

// Issue 28: the viewer printed "3,557.866 us" where the CLI prints "3.56 ms".
TEST_CASE("issue 28: the viewer writes durations as the CLI does", "[gui][stats][issue28]") {
  CHECK(StatsModel::time_text(3557.866) == "3.56 ms");
  CHECK(StatsModel::time_text(845.2) == "845 us");
  CHECK(StatsModel::time_text(0.05) == "50.0 ns");
  CHECK(StatsModel::time_text(3557.866) == duration_text_ms(3.557866));
}
