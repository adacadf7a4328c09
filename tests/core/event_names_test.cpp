// core/event_names.h: etscope's markers, the engine marker's text, and the one classifier.
#include <catch2/catch.hpp>

#include "etscope/core/event_names.h"
#include "etscope/core/version.h"

using namespace etscope;
using events::EventClass;

TEST_CASE("the engine marker names engine and version and reads back", "[core][events][engine]") {
  CHECK(events::engine_marker_name("etscope", "0.1.0") == "etscope::engine:etscope 0.1.0");
  const auto m = events::parse_engine_marker("etscope::engine:executorch 1.5.1+cpu");
  REQUIRE(m);
  CHECK(m->engine == "executorch");
  CHECK(m->version == "1.5.1+cpu");
  const auto bare = events::parse_engine_marker("etscope::engine:etscope");
  REQUIRE(bare);
  CHECK(bare->engine == "etscope");
  CHECK(bare->version.empty());
  CHECK_FALSE(events::parse_engine_marker("etscope::engine:"));
  CHECK_FALSE(events::parse_engine_marker("etscope::engine: 1.0"));
  CHECK_FALSE(events::parse_engine_marker("Method::execute"));
  static_assert(events::parse_engine_marker("etscope::engine:a b")->version == "b");
}

TEST_CASE("every etscope marker is a marker and classifies as one, never as an event", "[core][events]") {
  for (std::string_view name : {events::kMarkerDebugOverflow, events::kMarkerEventOverflow, events::kMarkerBlockOverflow}) {
    CHECK(events::is_marker_name(name));
    CHECK(events::is_overflow_marker_name(name));
    CHECK(events::classify(name, false) == EventClass::kMarker);
  }
  const std::string engine = events::engine_marker_name("etscope", etscope_version());
  CHECK(events::is_marker_name(engine));
  CHECK(events::is_engine_marker_name(engine));
  CHECK_FALSE(events::is_overflow_marker_name(engine));
  CHECK(events::classify(engine, false) == EventClass::kMarker);
  CHECK(events::category_name(EventClass::kMarker) == "marker");
  CHECK_FALSE(events::is_marker_name("etscope::something_else"));
  CHECK(events::classify("native_call_add.out", false) == EventClass::kNativeCall);
}

TEST_CASE("etscope's version is the build's project version", "[core][version]") {
  const std::string_view v = etscope_version();
  REQUIRE_FALSE(v.empty());
  CHECK(v.find('.') != std::string_view::npos);
  CHECK(v.find(' ') == std::string_view::npos);  // the engine marker splits at the first space
}
