#include "render/generation_render.h"

#include <optional>
#include <string>
#include <vector>

#include "etscope/core/text.h"
#include "render/table.h"

namespace etscope::cli {
namespace {

using inspect::GenerationCall;
using inspect::GenerationProfile;
using inspect::PhaseOperator;
using inspect::PhaseProfile;

std::string time_cell(double v) { return significant_text(v, 3); }

std::string percent_cell(double share) { return significant_text(share * 100.0, 3) + "%"; }

size_t shown(size_t rows, size_t top) { return top == 0 || top > rows ? rows : top; }

Json optional_json(const std::optional<double>& v) { return v ? number_json(*v) : Json(nullptr); }

}  // namespace

void render_generation_text(const GenerationProfile& profile, size_t top, std::ostream& out) {
  const std::string unit = std::string(" (") + inspect::to_string(profile.unit) + ")";
  TextTable phases;
  phases.columns = {"phase", "calls", "tokens", "total" + unit, "median" + unit, "p90" + unit, "tokens/s", "attention" + unit,
                    "cache update" + unit};
  phases.numeric = {false, true, true, true, true, true, true, true, true};
  for (const PhaseProfile* p : {&profile.prefill, &profile.decode}) {
    phases.rows.push_back({inspect::to_string(p->phase), std::to_string(p->calls.size()),
                           p->tokens ? std::optional<std::string>(std::to_string(*p->tokens)) : std::nullopt, time_cell(p->total),
                           time_cell(p->median), time_cell(p->p90),
                           p->tokens_per_second ? std::optional<std::string>(significant_text(*p->tokens_per_second, 4)) : std::nullopt,
                           time_cell(p->attention), time_cell(p->cache_update)});
  }
  out << render_table(phases, "table") << "\n";

  TextTable calls;
  calls.columns = {profile.positions_known ? "position" : "decode call", "time" + unit, "attention" + unit, "cache update" + unit};
  calls.numeric = {true, true, true, true};
  for (const GenerationCall& c : profile.decode.calls) {
    calls.rows.push_back({std::to_string(c.position), time_cell(c.time), time_cell(c.attention), time_cell(c.cache_update)});
  }
  if (!calls.rows.empty()) out << "decode, per token\n" << render_table(calls, "table") << "\n";

  for (const PhaseProfile* p : {&profile.prefill, &profile.decode}) {
    if (p->operators.empty()) continue;
    TextTable ops;
    ops.columns = {"operator", "count", "total" + unit, "share"};
    ops.numeric = {false, true, true, true};
    for (size_t i = 0; i < shown(p->operators.size(), top); ++i) {
      const PhaseOperator& op = p->operators[i];
      ops.rows.push_back({op.name, std::to_string(op.count), time_cell(op.total), percent_cell(op.share)});
    }
    out << inspect::to_string(p->phase) << " operators\n" << render_table(ops, "table") << "\n";
  }
}

Json generation_json(const GenerationProfile& profile, size_t top) {
  Json j;
  j["unit"] = inspect::to_string(profile.unit);
  j["prompt_tokens"] = profile.prompt_tokens ? Json(*profile.prompt_tokens) : Json(nullptr);
  j["positions_known"] = profile.positions_known;
  Json phases = Json::array();
  for (const PhaseProfile* p : {&profile.prefill, &profile.decode}) {
    Json ph;
    ph["phase"] = inspect::to_string(p->phase);
    ph["tokens"] = p->tokens ? Json(*p->tokens) : Json(nullptr);
    ph["total"] = number_json(p->total);
    ph["median"] = number_json(p->median);
    ph["p90"] = number_json(p->p90);
    ph["tokens_per_second"] = optional_json(p->tokens_per_second);
    ph["attention"] = number_json(p->attention);
    ph["cache_update"] = number_json(p->cache_update);
    Json calls = Json::array();
    for (const GenerationCall& c : p->calls) {
      calls.push_back(Json{{"block", c.dump_block},
                           {"position", c.position},
                           {"time", number_json(c.time)},
                           {"attention", number_json(c.attention)},
                           {"cache_update", number_json(c.cache_update)}});
    }
    ph["calls"] = std::move(calls);
    Json ops = Json::array();
    for (size_t i = 0; i < shown(p->operators.size(), top); ++i) {
      const PhaseOperator& op = p->operators[i];
      ops.push_back(Json{{"name", op.name}, {"count", op.count}, {"total", number_json(op.total)}, {"share", number_json(op.share)}});
    }
    ph["operators"] = std::move(ops);
    phases.push_back(std::move(ph));
  }
  j["phases"] = std::move(phases);
  return j;
}

}  // namespace etscope::cli
