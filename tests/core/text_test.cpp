// core/text: shapes, byte counts, numbers, the duration policy, counted words and axis ticks.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "etscope/core/text.h"

using namespace etscope;

TEST_CASE("durations show three significant figures in the unit that fits", "[core][text]") {
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

TEST_CASE("time unit names parse and print the same everywhere", "[core][text]") {
  for (TimeUnit u : {TimeUnit::kAuto, TimeUnit::kNs, TimeUnit::kUs, TimeUnit::kMs, TimeUnit::kS}) {
    auto parsed = parse_time_unit(to_string(u));
    REQUIRE(parsed.ok());
    CHECK(*parsed == u);
  }
  auto bad = parse_time_unit("msec");
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.error().message().find("expected auto, ns, us, ms or s") != std::string::npos);
}

TEST_CASE("durations read in the unit that suits them", "[core][text]") {
  CHECK(duration_text(850) == "850 ns");
  CHECK(duration_text(12'400) == "12.4 us");
  CHECK(duration_text(1'605'864) == "1.61 ms");
  CHECK(duration_text(2'050'000'000) == "2.05 s");
}

TEST_CASE("axis ticks are round numbers inside the range", "[core][text]") {
  auto ticks = nice_ticks(0, 1000, 6);
  REQUIRE(ticks.size() >= 2);
  CHECK(ticks.front() == 0);
  CHECK(ticks.back() <= 1000);
  CHECK(ticks.size() <= 7);
  for (size_t i = 1; i < ticks.size(); ++i) CHECK(ticks[i] - ticks[i - 1] == Approx(ticks[1] - ticks[0]));
  CHECK(nice_step(1000, 6) == 200);
  CHECK(nice_ticks(5, 5, 6).empty());
}

TEST_CASE("time ticks label in the axis' unit at the spacing's precision", "[core][text]") {
  const auto ticks = time_ticks(0, 6'390'000, 8);  // 6.39 ms
  REQUIRE(ticks.size() >= 4);
  CHECK(ticks[0].label == "0");
  CHECK(ticks[1].label == "1 ms");
  const auto fine = time_ticks(1'000'000, 1'004'000, 5);
  REQUIRE(fine.size() >= 2);
  CHECK(fine[0].label == "1.000 ms");
  CHECK(fine[1].label == "1.001 ms");
  const auto small = time_ticks(0, 800, 5);
  CHECK(small.back().label == "800 ns");
}

TEST_CASE("byte ticks step in B, KiB or MiB and never split a byte", "[core][text]") {
  auto kib = byte_ticks(0, 128 * 1024, 8);
  REQUIRE(kib.size() >= 3);
  CHECK(kib[1].label == "20 KiB");
  CHECK(kib[1].value == 20 * 1024);
  auto bytes = byte_ticks(0, 3, 10);
  for (const Tick& t : bytes) CHECK(t.value == static_cast<double>(static_cast<int64_t>(t.value)));
  auto mib = byte_ticks(0, 64.0 * 1024 * 1024, 5);
  CHECK(mib.back().label.find("MiB") != std::string::npos);
}

TEST_CASE("shapes read as dtype and sizes, a symbolic size as ?", "[core][text]") {
  const std::vector<int32_t> image{1, 3, 224, 224};
  const std::vector<int64_t> scalar;
  const std::vector<int64_t> symbolic{-1, 8};
  CHECK(shape_text(ScalarType::kFloat, image) == "f32[1,3,224,224]");
  CHECK(shape_text(ScalarType::kLong, scalar) == "i64[]");
  CHECK(dims_text(image) == "[1,3,224,224]");
  CHECK(dims_text(scalar) == "[]");
  CHECK(dims_text(symbolic) == "[?,8]");
}

TEST_CASE("byte counts read in powers of 1024, or to the byte with a rounded size", "[core][text]") {
  CHECK(bytes_text(48) == "48 B");
  CHECK(bytes_text(1536) == "1.5 KiB");
  CHECK(bytes_text(12'900'000) == "12.3 MiB");
  CHECK(bytes_text(uint64_t{3} << 30) == "3.00 GiB");
  CHECK(exact_bytes_text(4096) == "4096 bytes");
  CHECK(exact_bytes_text(uint64_t{3} << 20) == "3145728 bytes (3.0 MiB)");
  CHECK(exact_bytes_text(uint64_t{2} << 30) == "2147483648 bytes (2.0 GiB)");
}

TEST_CASE("numbers read back exactly or with three significant figures", "[core][text]") {
  CHECK(number_text(0.1) == "0.1");
  CHECK(number_text(3) == "3");
  CHECK(number_text(1e-8) == "1e-08");
  CHECK(number_text(-std::numeric_limits<double>::infinity()) == "-inf");
  CHECK(number_text(std::nan("")) == "nan");
  CHECK(float_text(0.25f) == "0.25");
  CHECK(std::stof(float_text(-0.490723f)) == -0.490723f);
  CHECK(significant_text(12.345) == "12.3");
  CHECK(significant_text(0.012345) == "0.0123");
  CHECK(significant_text(1.2) == "1.20");
  CHECK(significant_text(1234) == "1234");
  CHECK(significant_text(0) == "0");
  CHECK(significant_text(3.14159, 5) == "3.1416");
}

TEST_CASE("a counted word takes an s unless there is exactly one", "[core][text]") {
  CHECK(count_text(1, "input") == "1 input");
  CHECK(count_text(2, "input") == "2 inputs");
  CHECK(count_text(0, "conflict") == "0 conflicts");
}

TEST_CASE("number ticks carry the decimals of their spacing and a suffix", "[core][text]") {
  const std::vector<Tick> unit = number_ticks(0, 1, 6);
  REQUIRE(unit.size() == 6);
  CHECK(unit[0].label == "0");
  CHECK(unit[1].label == "0.2");
  CHECK(unit[5].label == "1.0");
  const std::vector<Tick> ms = number_ticks(0, 40, 5, " ms");
  REQUIRE(ms.size() >= 2);
  CHECK(ms[1].label == "10 ms");
  CHECK(number_ticks(3, 3, 5).empty());
}

TEST_CASE("durations in microseconds and milliseconds read as the same nanoseconds do", "[core][text][time-unit]") {
  CHECK(duration_text_us(845) == duration_text(845e3));
  CHECK(duration_text_us(12.3) == "12.3 us");
  CHECK(duration_text_ms(12.3) == "12.3 ms");
  CHECK(duration_text_ms(1.2, TimeUnit::kUs) == "1200 us");
  CHECK(duration_text_ms(0) == "0 ns");
  CHECK(duration_in(1.5e6, TimeUnit::kMs) == 1.5);
  CHECK(duration_in(1.5e6, TimeUnit::kUs) == 1500);
  CHECK(duration_in(1.5e6, TimeUnit::kAuto) == 1.5);
}
