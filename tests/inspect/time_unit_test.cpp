// libinspect's one policy for showing durations.
#include <catch2/catch.hpp>

#include "etscope/inspect/time_unit.h"

using namespace etscope::inspect;

TEST_CASE("durations show three significant figures in the unit that fits", "[inspect][time-unit]") {
  CHECK(duration_text(0) == "0 ns");
  CHECK(duration_text(999) == "999 ns");
  CHECK(duration_text(1234) == "1.23 us");
  CHECK(duration_text(845'000) == "845 us");
  CHECK(duration_text(12'345'678) == "12.3 ms");
  CHECK(duration_text(1.2e9) == "1.20 s");
  CHECK(duration_text(3.5e12) == "3500 s");
  // A fixed unit keeps three significant figures, however small or large the value.
  CHECK(duration_text(12'300, TimeUnit::kMs) == "0.0123 ms");
  CHECK(duration_text(1.5e9, TimeUnit::kMs) == "1500 ms");
  CHECK(duration_text(7, TimeUnit::kS) == "0.000000007 s");  // at most 9 decimals
  CHECK(auto_unit(-2e6) == TimeUnit::kMs);
}

TEST_CASE("time unit names parse and print the same everywhere", "[inspect][time-unit]") {
  for (TimeUnit u : {TimeUnit::kAuto, TimeUnit::kNs, TimeUnit::kUs, TimeUnit::kMs, TimeUnit::kS}) {
    auto parsed = parse_time_unit(to_string(u));
    REQUIRE(parsed.ok());
    CHECK(*parsed == u);
  }
  auto bad = parse_time_unit("msec");
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.error().message().find("expected auto, ns, us, ms or s") != std::string::npos);
}

TEST_CASE("durations in microseconds and milliseconds read as the same nanoseconds do", "[inspect][time-unit]") {
  CHECK(duration_text_us(845) == duration_text(845e3));
  CHECK(duration_text_us(12.3) == "12.3 us");
  CHECK(duration_text_ms(12.3) == "12.3 ms");
  CHECK(duration_text_ms(1.2, TimeUnit::kUs) == "1200 us");
  CHECK(duration_text_ms(0) == "0 ns");
  CHECK(duration_in(1.5e6, TimeUnit::kMs) == 1.5);
  CHECK(duration_in(1.5e6, TimeUnit::kUs) == 1500);
  CHECK(duration_in(1.5e6, TimeUnit::kAuto) == 1.5);
}
