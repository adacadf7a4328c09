// gui/model/generation_model: the Generation view's data is libinspect's GenerationProfile of the
// loaded dump, made once per prompt length; only a generation's dump has one.
#include <catch2/catch.hpp>

#include <string>

#include "etscope/inspect/generation_profile.h"
#include "model/session.h"
#include "testing/test_util.h"

using namespace etscope;
using namespace etscope::gui;

namespace {

// The dump of a 10-token generation of a program from ExecuTorch's LLM exporter.
const std::string& generation_dump() {
  static const std::string path = [] {
    const std::string dump = testing::temp_dir("gui_generation") + "/g.etdp";
    const std::string model = testing::fixture_extracted_dir() + "/llm/xnn_8da4w_emb4/model.pte";
    const auto r = testing::run_etscope("generate '" + model + "' --prompt-ids 3,1,4,1,5 --max-new-tokens 10 --ignore-eos --etdump '" +
                                        dump + "'");
    REQUIRE(r.exit_code == 0);
    return dump;
  }();
  return path;
}

}  // namespace

TEST_CASE("a generation's dump gets the Generation view's model, GenerationProfile's numbers", "[gui][generation]") {
  auto s = load_session({generation_dump()}, nullptr, nullptr);
  REQUIRE(s->errors.empty());
  REQUIRE(s->inspector);
  REQUIRE(s->generation.has_value());
  const GenerationModel& model = *s->generation;

  auto expected = inspect::generation_profile(*s->inspector);
  REQUIRE(expected.ok());
  const inspect::GenerationProfile& g = model.profile(0);
  CHECK(g.unit == inspect::TimeScale::kUs);
  REQUIRE(g.decode.calls.size() == 9);
  REQUIRE(g.decode.calls.size() == expected->decode.calls.size());
  double top = 0;
  for (size_t k = 0; k < g.decode.calls.size(); ++k) {
    CHECK(g.decode.calls[k].time == expected->decode.calls[k].time);
    CHECK(g.decode.calls[k].attention == expected->decode.calls[k].attention);
    CHECK(g.decode.calls[k].position == static_cast<int64_t>(k));
    top = std::max(top, g.decode.calls[k].time);
  }
  CHECK(model.decode_time_max() == top);
  CHECK(g.decode.total == expected->decode.total);
  CHECK(g.prefill.operators.size() == expected->prefill.operators.size());
  CHECK_FALSE(g.prefill.tokens_per_second.has_value());

  // A prompt length gives positions and the prefill's rate; the profile is made once for it.
  const inspect::GenerationProfile& with = model.profile(5);
  CHECK(with.positions_known);
  CHECK(with.decode.calls.front().position == 5);
  CHECK(with.decode.calls.back().position == 13);
  REQUIRE(with.prefill.tokens_per_second.has_value());
  CHECK(*with.prefill.tokens_per_second == Approx(5.0 / (with.prefill.total / 1e6)));
  CHECK(model.recomputations() == 1);
  CHECK(&model.profile(5) == &with);
  CHECK(model.recomputations() == 1);
}

TEST_CASE("a dump of plain runs has no Generation view's model", "[gui][generation]") {
  auto s = load_session({testing::fixture("simple_conv/simple_conv.etdp")}, nullptr, nullptr);
  REQUIRE(s->stats.has_value());
  CHECK_FALSE(s->generation.has_value());
}
