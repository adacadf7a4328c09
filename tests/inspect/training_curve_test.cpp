// The training curve's files (inspect/training_curve.h): JSON read back, CSV rows, SVG series.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "etscope/inspect/training_curve.h"

using namespace etscope::inspect;
using nlohmann::json;

TEST_CASE("curve files: JSON reads back and CSV has a row per step and SVG draws the series", "[training_curve]") {
  Curve c;
  c.first_step = 4;
  c.loss = {2.5, 2.25, 1.75};
  c.accuracy = {0.25, std::nullopt, 0.75};
  c.step_ms = {1.5, 1.25, 1.0};
  c.forward_backward_ms = {1.0, 1.0, 0.75};
  c.optimizer_ms = {0.5, 0.25, 0.25};
  c.val = {{5, 2.0, 0.5}};
  const std::string j = curve_json(c);
  const Curve back = parse_curve_json(j, "c.json").value();
  CHECK(back.first_step == 4);
  CHECK(back.loss == c.loss);
  CHECK(back.accuracy == c.accuracy);
  CHECK(back.step_ms == c.step_ms);
  REQUIRE(back.val.size() == 1);
  CHECK(back.val[0].step == 5);
  CHECK(back.val[0].accuracy == 0.5);
  const json parsed = json::parse(j);
  CHECK(parsed["accuracy"][1].is_null());

  const std::string csv = curve_csv(c);
  CHECK(csv ==
        "step,loss,accuracy,step_ms,forward_backward_ms,optimizer_ms,val_loss,val_accuracy\n"
        "4,2.5,0.25,1.5,1,0.5,,\n"
        "5,2.25,,1.25,1,0.25,2,0.5\n"
        "6,1.75,0.75,1,0.75,0.25,,\n");

  const std::string svg = curve_svg(c, {.title = "a <model>"});
  CHECK_THAT(svg, Catch::Matchers::Contains("class=\"loss\"") && Catch::Matchers::Contains("class=\"val-loss\"") &&
                      Catch::Matchers::Contains("a &lt;model&gt;"));
  // The accuracy line breaks at the missing step: two polylines of one point each.
  size_t lines = 0;
  for (size_t at = svg.find("class=\"accuracy\""); at != std::string::npos; at = svg.find("class=\"accuracy\"", at + 1)) ++lines;
  CHECK(lines == 2);
  CHECK_THAT(curve_svg(Curve{}), Catch::Matchers::Contains("no steps"));

  CHECK_FALSE(parse_curve_json("[1,2]", "x.json").ok());
  CHECK_FALSE(parse_curve_json("{\"loss\": [1, \"a\"]}", "x.json").ok());
  CHECK_FALSE(parse_curve_json("{\"loss\": [1], \"accuracy\": [1, 2]}", "x.json").ok());
}
