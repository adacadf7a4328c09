// gui/model/text_format: fixed-point labels and filters (durations and axis ticks: tests/core/text_test.cpp).
#include <catch2/catch.hpp>

#include "model/text_format.h"

using namespace etscope::gui;

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
