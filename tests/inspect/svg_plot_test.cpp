// inspect/svg_plot: the SVG writer behind the memory map, the training curve and history plots.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "etscope/inspect/svg_plot.h"

using namespace etscope;
using namespace etscope::inspect;

TEST_CASE("a plot is one closed SVG document with a white background", "[inspect][svg-plot]") {
  SvgPlot svg(640, 480);
  const std::string doc = svg.finish();
  CHECK(doc.rfind("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"640\" height=\"480\" viewBox=\"0 0 640 480\"", 0) == 0);
  CHECK_THAT(doc, Catch::Contains("fill=\"#ffffff\""));
  CHECK(doc.substr(doc.size() - 7) == "</svg>\n");
}

TEST_CASE("coordinates drop trailing zeros and text is escaped", "[inspect][svg-plot]") {
  SvgPlot svg(100, 100, 2);
  CHECK(svg.num(12) == "12");
  CHECK(svg.num(64.5) == "64.5");
  CHECK(svg.num(1.005001) == "1.01");
  CHECK(svg.num(-0.001) == "0");
  svg.text(12, 24, "a<b> & \"c\"", "font-weight=\"bold\"", "title");
  svg.rect(1, 2, 3, 4, "fill=\"red\"", "tensor", "x < y");
  svg.circle(5, 6, 2, "fill=\"blue\"");
  const std::string doc = svg.finish();
  CHECK_THAT(doc, Catch::Contains("<text class=\"title\" x=\"12\" y=\"24\" font-weight=\"bold\">a&lt;b&gt; &amp; &quot;c&quot;</text>"));
  CHECK_THAT(doc, Catch::Contains("<rect class=\"tensor\" x=\"1\" y=\"2\" width=\"3\" height=\"4\" fill=\"red\"><title>x &lt; y</title></rect>"));
  CHECK_THAT(doc, Catch::Contains("<circle cx=\"5\" cy=\"6\" r=\"2\" fill=\"blue\"/>"));
}

TEST_CASE("a polyline joins its points and an empty one is left out", "[inspect][svg-plot]") {
  SvgPlot svg(100, 100);
  svg.polyline({}, "stroke=\"black\"", "loss");
  svg.polyline({{1, 2}, {3.71, 4}}, "stroke=\"black\"", "loss");
  const std::string doc = svg.finish();
  REQUIRE(doc.find("<polyline") != std::string::npos);
  CHECK(doc.find("<polyline") == doc.rfind("<polyline"));  // only one
  CHECK_THAT(doc, Catch::Contains("<polyline class=\"loss\" stroke=\"black\" points=\"1,2 3.7,4\"/>"));
}

TEST_CASE("scales map values linearly and an empty range to the middle", "[inspect][svg-plot]") {
  const SvgScale x{0, 10, 100, 200};
  CHECK(x.at(0) == 100);
  CHECK(x.at(5) == 150);
  CHECK(x.at(10) == 200);
  const SvgScale y{0, 1, 300, 100};  // grows up
  CHECK(y.at(0.25) == 250);
  CHECK(SvgScale{3, 3, 0, 10}.at(3) == 5);
}

TEST_CASE("axes put one label per tick outside the area, with grid lines and marks on request", "[inspect][svg-plot]") {
  const SvgArea area{50, 10, 250, 110};
  SvgPlot svg(300, 150);
  const std::vector<Tick> ticks = byte_ticks(0, 8192, 5);
  REQUIRE(ticks.size() >= 3);
  svg.axis(SvgSide::kBottom, area, SvgScale{0, 8192, area.left, area.right}, ticks, {.marks = true, .font_size = 10});
  svg.axis(SvgSide::kLeft, area, SvgScale{0, 1, area.bottom, area.top}, number_ticks(0, 1, 3), {.grid = true});
  const std::string doc = svg.finish();
  CHECK_THAT(doc, Catch::Contains(">0</text>"));
  CHECK_THAT(doc, Catch::Contains(">2 KiB</text>"));
  CHECK_THAT(doc, Catch::Contains(">8 KiB</text>"));
  // Bottom labels are centred under their mark; left labels end beside the area.
  CHECK_THAT(doc, Catch::Contains("<line x1=\"250\" y1=\"110\" x2=\"250\" y2=\"115\" stroke=\"#333\"/>"));
  CHECK_THAT(doc, Catch::Contains("<text x=\"250\" y=\"128\" fill=\"#444\" text-anchor=\"middle\" font-size=\"10\">8 KiB</text>"));
  CHECK_THAT(doc, Catch::Contains("<line x1=\"50\" y1=\"60\" x2=\"250\" y2=\"60\" stroke=\"#e4e4e4\"/>"));
  CHECK_THAT(doc, Catch::Contains("<text x=\"44\" y=\"64\" fill=\"#444\" text-anchor=\"end\">0.5</text>"));
}
