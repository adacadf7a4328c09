// gui/model/timeline_model: lanes, the visible-window search and sub-pixel folding.
#include <catch2/catch.hpp>

#include <chrono>

#include "etscope/etdump/etdump_reader.h"
#include "model/timeline_model.h"
#include "testing/test_util.h"

using namespace etscope;
using namespace etscope::gui;

namespace {

// An ETDump built in memory: one block per entry of `runs`, events as (name, start, end,
// instruction); chain 0 unless the name is a framework event.
struct Ev {
  const char* name;
  uint64_t start, end;
  int32_t instruction;
};

std::shared_ptr<const etdump::EtDumpFile> make_dump(const std::vector<std::vector<Ev>>& runs) {
  auto f = std::make_shared<etdump::EtDumpFile>();
  for (const auto& run : runs) {
    etdump::RunBlock block;
    block.name = "Execute";
    block.first_event = static_cast<uint32_t>(f->events.size());
    for (const Ev& ev : run) {
      etdump::Event e;
      e.start = ev.start;
      e.end = ev.end;
      e.instruction = ev.instruction;
      const std::string name = ev.name;
      e.chain = name.rfind("Method::", 0) == 0 ? -1 : 0;
      auto it = std::find(f->names.begin(), f->names.end(), name);
      e.ref = static_cast<uint32_t>(it - f->names.begin());
      if (it == f->names.end()) f->names.push_back(name);
      f->events.push_back(e);
    }
    block.event_count = static_cast<uint32_t>(run.size());
    f->blocks.push_back(block);
  }
  return f;
}

Lane lane_of(const std::vector<std::pair<uint64_t, uint64_t>>& spans) {
  Lane lane;
  for (const auto& [s, e] : spans) lane.bars.push_back({s, e, 0, 0});
  return lane;
}

}  // namespace

TEST_CASE("events nest into lanes by depth, time-sorted, relative to the run's start", "[gui][timeline]") {
  // As ExecuTorch writes them: an event is appended when it ends, so inner ones come first.
  auto dump = make_dump({{{"native_call_add.out", 1010, 1090, 0},
                          {"OPERATOR_CALL", 1000, 1100, 0},
                          {"native_call_relu.out", 1110, 1180, 1},
                          {"OPERATOR_CALL", 1100, 1200, 1},
                          {"Method::execute", 1000, 1210, 0}},
                         {{"OPERATOR_CALL", 5000, 5050, 0}}});
  TimelineModel m = TimelineModel::build(dump);
  REQUIRE(m.tracks().size() == 2);
  const Track& t = m.tracks()[0];
  CHECK(t.name == "#0 Execute");
  CHECK(t.origin == 1000);
  CHECK(t.duration == 210);
  CHECK(t.events == 5);
  REQUIRE(t.lanes.size() == 3);
  REQUIRE(t.lanes[0].bars.size() == 1);
  CHECK(m.styles()[t.lanes[0].bars[0].style].kind == BarKind::kFramework);
  REQUIRE(t.lanes[1].bars.size() == 2);
  CHECK(t.lanes[1].bars[0].start == 0);
  CHECK(t.lanes[1].bars[1].start == 100);
  REQUIRE(t.lanes[2].bars.size() == 2);
  CHECK(m.styles()[t.lanes[2].bars[1].style].label == "relu.out");
  CHECK(m.styles()[t.lanes[2].bars[1].style].kind == BarKind::kNativeCall);
  CHECK(m.bar_count() == 6);
  // Runs aligned at their start, or where they happened.
  CHECK(m.track_offset(1, true) == 0);
  CHECK(m.track_offset(1, false) == 4000);
  CHECK(m.extent(true) == 210);
  CHECK(m.extent(false) == 4050);
}

TEST_CASE("selecting an instruction finds its bars in every run", "[gui][timeline]") {
  auto dump = make_dump({{{"native_call_add.out", 10, 20, 0}, {"OPERATOR_CALL", 0, 30, 0}, {"Method::execute", 0, 40, 0}},
                         {{"native_call_add.out", 110, 120, 0}, {"OPERATOR_CALL", 100, 130, 0}}});
  TimelineModel m = TimelineModel::build(dump);
  CHECK(m.bars_of({0, 0}).size() == 4);
  CHECK(m.bars_of({0, 1}).empty());
  CHECK(m.bars_of({}).empty());
  const Bar& framework = m.tracks()[0].lanes[0].bars[0];
  CHECK_FALSE(m.instruction_of(framework).valid());
  const std::string text = m.describe(m.bar(m.bars_of({0, 0})[0]), nullptr);
  CHECK(text.find("instruction 0, chain 0") != std::string::npos);
  CHECK(text.find("duration") != std::string::npos);
}

TEST_CASE("32-bit timestamps that wrap get ExecuTorch's elapsed time", "[gui][timeline]") {
  auto dump = make_dump({{{"OPERATOR_CALL", 0xFFFFFF00ull, 0x10ull, 0}}});
  TimelineModel m = TimelineModel::build(dump);
  const Bar& b = m.tracks()[0].lanes[0].bars[0];
  CHECK(b.end - b.start == (0xFFFFFFFFull - 0xFFFFFF00ull) + 0x10ull);
  // An inversion the Inspector cannot measure (64-bit timestamps) draws zero-length.
  TimelineModel bad = TimelineModel::build(make_dump({{{"OPERATOR_CALL", 0x1'0000'0100ull, 0x1'0000'0000ull, 0}}}));
  const Bar& z = bad.tracks()[0].lanes[0].bars[0];
  CHECK(z.end == z.start);
}

TEST_CASE("the visible window is found by binary search on both ends", "[gui][timeline]") {
  const Lane lane = lane_of({{0, 10}, {20, 30}, {40, 50}, {60, 70}, {80, 90}});
  using R = std::pair<size_t, size_t>;
  CHECK(TimelineModel::visible_range(lane, 0, 100) == R{0, 5});
  CHECK(TimelineModel::visible_range(lane, 25, 45) == R{1, 3});   // partly visible bars count
  CHECK(TimelineModel::visible_range(lane, 31, 39) == R{2, 2});   // a gap: nothing
  CHECK(TimelineModel::visible_range(lane, 95, 200) == R{5, 5});
  CHECK(TimelineModel::visible_range(lane, -50, -1) == R{0, 0});
  CHECK(TimelineModel::visible_range(lane, 10, 20) == R{0, 2});   // touching ends are visible
}

TEST_CASE("bars wider than the threshold are drawn one by one", "[gui][timeline]") {
  const Lane lane = lane_of({{0, 10}, {20, 30}, {40, 50}});
  std::vector<DrawItem> items;
  TimelineModel::layout_lane(lane, 0, 50, 1.0, 3.0, items);  // 1 tick per pixel
  REQUIRE(items.size() == 3);
  for (uint32_t i = 0; i < 3; ++i) {
    CHECK(items[i].count == 1);
    CHECK(items[i].first == i);
  }
}

TEST_CASE("sub-pixel bars and the gaps between them fold into one item", "[gui][timeline]") {
  // 1000 bars of 1 tick every 2 ticks, then a wide bar, then more tiny ones far away.
  std::vector<std::pair<uint64_t, uint64_t>> spans;
  for (uint64_t i = 0; i < 1000; ++i) spans.push_back({i * 2, i * 2 + 1});
  spans.push_back({2000, 2600});
  for (uint64_t i = 0; i < 10; ++i) spans.push_back({5000 + i * 2, 5001 + i * 2});
  const Lane lane = lane_of(spans);
  std::vector<DrawItem> items;
  TimelineModel::layout_lane(lane, 0, 6000, 10.0, 3.0, items);  // 10 ticks per pixel: 30-tick threshold
  REQUIRE(items.size() == 3);
  CHECK(items[0].first == 0);
  CHECK(items[0].count == 1000);
  CHECK(items[0].start == 0);
  CHECK(items[0].end == 1999);
  CHECK(items[1].count == 1);     // the wide bar stays itself
  CHECK(items[1].first == 1000);
  CHECK(items[2].count == 10);
  CHECK(items[2].start == 5000);
  // Zoomed in, the same bars come back one by one.
  items.clear();
  TimelineModel::layout_lane(lane, 0, 100, 0.01, 3.0, items);
  CHECK(items.size() == 51);  // bars starting at 0, 2, ..., 100
  for (const DrawItem& it : items) CHECK(it.count == 1);
}

TEST_CASE("tiny bars separated by more than the threshold stay apart", "[gui][timeline]") {
  const Lane lane = lane_of({{0, 1}, {100, 101}, {200, 201}});
  std::vector<DrawItem> items;
  TimelineModel::layout_lane(lane, 0, 300, 1.0, 3.0, items);
  REQUIRE(items.size() == 3);
  for (const DrawItem& it : items) CHECK(it.count == 1);
}

TEST_CASE("a million events fold to about one item per pixel, fast", "[gui][timeline]") {
  Lane lane;
  lane.bars.reserve(1'000'000);
  for (uint64_t i = 0; i < 1'000'000; ++i) lane.bars.push_back({i * 1000, i * 1000 + 700, 0, 0});
  std::vector<DrawItem> items;
  const double width_px = 1600;
  const double ticks = 1e9;
  const auto start = std::chrono::steady_clock::now();
  for (int rep = 0; rep < 10; ++rep) {
    items.clear();
    TimelineModel::layout_lane(lane, 0, ticks, ticks / width_px, 3.0, items);
  }
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count() / 10;
  // All 1M bars are sub-pixel and dense: one fold covers everything.
  REQUIRE(items.size() == 1);
  CHECK(items[0].count == 1'000'000);
  uint64_t covered = 0;
  for (const DrawItem& it : items) covered += it.count;
  CHECK(covered == 1'000'000);
  // Clusters of 100 tiny bars, 5 pixels apart: one fold per cluster.
  Lane clusters;
  for (uint64_t k = 0; k < 320; ++k) {
    for (uint64_t i = 0; i < 100; ++i) clusters.bars.push_back({k * 3'125'000 + i * 100, k * 3'125'000 + i * 100 + 50, 0, 0});
  }
  items.clear();
  TimelineModel::layout_lane(clusters, 0, 1e9, 1e9 / width_px, 3.0, items);
  REQUIRE(items.size() == 320);
  for (const DrawItem& it : items) CHECK(it.count == 100);
  INFO("layout of 1M events took " << ms << " ms");
  CHECK(ms < 50.0);  // logarithmic per pixel; linear would be ~10x slower under sanitizers
}

TEST_CASE("real ETDumps lay out with every profile event in a lane", "[gui][timeline][fixtures]") {
  auto dump = etdump::EtDumpReader::open(etscope::testing::fixture("simple_conv_xnnpack/simple_conv_xnnpack.etdp"));
  REQUIRE(dump.ok());
  auto shared = std::make_shared<const etdump::EtDumpFile>(std::move(dump).value());
  TimelineModel m = TimelineModel::build(shared);
  size_t profile = 0;
  for (const auto& e : shared->events) profile += e.kind == etdump::EventKind::kProfile;
  CHECK(m.bar_count() == profile);
  bool saw_delegate = false;
  for (const BarStyle& s : m.styles()) saw_delegate |= s.kind == BarKind::kDelegateOp && s.name == "Convolution (NHWC, F32) IGEMM #1";
  CHECK(saw_delegate);
  for (const Track& t : m.tracks()) {
    for (const Lane& l : t.lanes) {
      for (size_t i = 1; i < l.bars.size(); ++i) {
        CHECK(l.bars[i - 1].end <= l.bars[i].start);  // lanes never overlap
      }
    }
  }
}

TEST_CASE("the view opens on the runs and not on the load block", "[gui][timeline]") {
  // A load ("Default") of 10,000 ticks, then two runs of 100 ticks, 50 apart.
  auto f = std::const_pointer_cast<etdump::EtDumpFile>(
      make_dump({{{"Program::load_method", 0, 10000, 0}}, {{"Method::execute", 20000, 20100, 0}},
                 {{"Method::execute", 20150, 20250, 0}}}));
  f->blocks[0].name = "Default";
  TimelineModel m = TimelineModel::build(f);
  REQUIRE(m.tracks().size() == 3);
  // Runs aligned at their start: the scale is one run's length, not the load's.
  CHECK(m.extent(true) == 10000);
  CHECK(m.fit_range(true) == std::make_pair(uint64_t{0}, uint64_t{100}));
  // On the shared axis: from the first run to the end of the last.
  CHECK(m.fit_range(false) == std::make_pair(uint64_t{20000}, uint64_t{20250}));
  // Only a load block: it is all there is to show.
  auto only = std::const_pointer_cast<etdump::EtDumpFile>(make_dump({{{"Program::load_method", 0, 10000, 0}}}));
  only->blocks[0].name = "Default";
  TimelineModel load_only = TimelineModel::build(only);
  CHECK(load_only.fit_range(true) == std::make_pair(uint64_t{0}, uint64_t{10000}));
}
