// gui/model/text_format: labels, filters and axis ticks.
#include <catch2/catch.hpp>

#include "model/text_format.h"

using namespace etscope::gui;

TEST_CASE("durations read in the unit that suits them", "[gui][text]") {
  CHECK(duration_text(850) == "850 ns");
  CHECK(duration_text(12'400) == "12.4 us");
  CHECK(duration_text(1'605'864) == "1.61 ms");
  CHECK(duration_text(2'050'000'000) == "2.05 s");
}

TEST_CASE("fixed numbers group thousands and drop the sign of zero", "[gui][text]") {
  CHECK(fixed_text(1605.864, 3) == "1,605.864");
  CHECK(fixed_text(12.5, 1) == "12.5");
  CHECK(fixed_text(1234567, 0) == "1,234,567");
  CHECK(fixed_text(-0.0001, 2) == "0.00");
  CHECK(fixed_text(-42.5, 1) == "-42.5");
}

TEST_CASE("a text filter matches any plain term and no excluded term, ignoring case", "[gui][text]") {
  CHECK(TextFilter("").empty());
  CHECK(TextFilter("conv").matches("native_call_Convolution.out"));
  CHECK_FALSE(TextFilter("conv").matches("native_call_relu.out"));
  const TextFilter either("conv, relu");
  CHECK(either.matches("native_call_relu.out"));
  CHECK(either.matches("native_call_convolution.out"));
  CHECK_FALSE(either.matches("addmm"));
  const TextFilter exclude("-OPERATOR");
  CHECK(exclude.matches("native_call_relu.out"));
  CHECK_FALSE(exclude.matches("OPERATOR_CALL"));
  const TextFilter both("call, -operator");
  CHECK(both.matches("native_call_relu.out"));
  CHECK_FALSE(both.matches("OPERATOR_CALL"));
}

TEST_CASE("axis ticks are round numbers inside the range", "[gui][text]") {
  auto ticks = nice_ticks(0, 1000, 6);
  REQUIRE(ticks.size() >= 2);
  CHECK(ticks.front() == 0);
  CHECK(ticks.back() <= 1000);
  CHECK(ticks.size() <= 7);
  for (size_t i = 1; i < ticks.size(); ++i) CHECK(ticks[i] - ticks[i - 1] == Approx(ticks[1] - ticks[0]));
  CHECK(nice_step(1000, 6) == 200);
  CHECK(nice_ticks(5, 5, 6).empty());
}

TEST_CASE("time ticks label in the axis' unit at the spacing's precision", "[gui][text]") {
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

TEST_CASE("byte ticks step in B, KiB or MiB and never split a byte", "[gui][text]") {
  auto kib = byte_ticks(0, 128 * 1024, 8);
  REQUIRE(kib.size() >= 3);
  CHECK(kib[1].label == "20 KiB");
  CHECK(kib[1].value == 20 * 1024);
  auto bytes = byte_ticks(0, 3, 10);
  for (const Tick& t : bytes) CHECK(t.value == static_cast<double>(static_cast<int64_t>(t.value)));
  auto mib = byte_ticks(0, 64.0 * 1024 * 1024, 5);
  CHECK(mib.back().label.find("MiB") != std::string::npos);
}
