// GenerationProfile on a dump `etscope generate --etdump` writes for a program of ExecuTorch's LLM
// exporter: every number equals what the test computes from the dump's raw events.
#include "etscope/inspect/generation_profile.h"

#include <catch2/catch.hpp>

#include <unistd.h>

#include <algorithm>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "etscope/core/stats.h"
#include "etscope/etdump/etdump_reader.h"
#include "testing/test_util.h"

using namespace etscope;
using namespace etscope::inspect;

namespace {

constexpr int64_t kPromptTokens = 8;
constexpr int kNewTokens = 12;

// One generation's dump, written once for the file's tests.
const std::string& generation_dump() {
  static const std::string path = [] {
    // Each test runs in a process of its own, in parallel: each makes its own dump.
    const std::string dump = testing::temp_dir("generation_profile_" + std::to_string(getpid())) + "/g.etdp";
    const std::string model = testing::fixture_extracted_dir() + "/llm/xnn_8da4w_emb4/model.pte";
    const auto r = testing::run_etscope("generate '" + model + "' --prompt-ids 1,17,42,200,7,99,150,5 --max-new-tokens " +
                                        std::to_string(kNewTokens) + " --ignore-eos --etdump '" + dump + "'");
    REQUIRE(r.exit_code == 0);
    return dump;
  }();
  return path;
}

struct Opened {
  std::shared_ptr<const etdump::EtDumpFile> dump;
  std::unique_ptr<Inspector> inspector;
};

Opened open(const std::string& path) {
  auto file = etdump::EtDumpReader::open(path);
  REQUIRE(file.ok());
  Opened o;
  o.dump = std::make_shared<const etdump::EtDumpFile>(std::move(file).value());
  auto built = Inspector::build(o.dump, nullptr, nullptr);
  REQUIRE(built.ok());
  o.inspector = std::make_unique<Inspector>(std::move(built).value());
  return o;
}

// Milliseconds of a raw event (the dump's timestamps are nanoseconds).
double ms_of(const etdump::Event& e) { return static_cast<double>(e.end - e.start) / 1e6; }

// What the test reads from the raw blocks of one phase, in call order.
struct RawCall {
  double execute = 0, attention = 0, cache = 0;
  std::map<std::string, double> by_name;
  std::map<std::string, uint64_t> count_by_name;
};

std::vector<RawCall> raw_calls(const etdump::EtDumpFile& dump, const std::string& block_name) {
  std::vector<RawCall> calls;
  for (const etdump::RunBlock& b : dump.blocks) {
    if (b.name != block_name) continue;
    RawCall c;
    for (uint32_t i = b.first_event; i < b.first_event + b.event_count; ++i) {
      const etdump::Event& e = dump.events[i];
      if (e.kind != etdump::EventKind::kProfile || e.delegate) continue;
      const std::string& name = dump.name_of(e);
      if (name == "Method::execute") c.execute = ms_of(e);
      if (name == "llama::custom_sdpa.out") c.attention += ms_of(e);
      if (name == "llama::update_cache.out") c.cache += ms_of(e);
      c.by_name[name] += ms_of(e);
      c.count_by_name[name] += 1;
    }
    calls.push_back(c);
  }
  return calls;
}

}  // namespace

TEST_CASE("generation profile: calls and their times are the dump's Method::execute in call order") {
  Opened o = open(generation_dump());
  auto profile = generation_profile(*o.inspector, GenerationOptions{kPromptTokens});
  REQUIRE(profile.ok());
  const GenerationProfile& g = profile.value();
  const std::vector<RawCall> prefill = raw_calls(*o.dump, "Prefill");
  const std::vector<RawCall> decode = raw_calls(*o.dump, "Decode");
  REQUIRE(prefill.size() == 1);  // the program's sequence dimension is dynamic: one prefill call
  REQUIRE(decode.size() == kNewTokens - 1);  // the first new token comes from the prefill
  REQUIRE(g.prefill.calls.size() == prefill.size());
  REQUIRE(g.decode.calls.size() == decode.size());
  CHECK(g.positions_known);
  std::vector<double> times;
  double total = 0;
  for (size_t k = 0; k < decode.size(); ++k) {
    const GenerationCall& c = g.decode.calls[k];
    CHECK(c.time == Approx(decode[k].execute).epsilon(1e-12));
    CHECK(c.attention == Approx(decode[k].attention).epsilon(1e-9));
    CHECK(c.cache_update == Approx(decode[k].cache).epsilon(1e-9));
    CHECK(c.position == kPromptTokens + static_cast<int64_t>(k));
    if (k > 0) CHECK(c.dump_block > g.decode.calls[k - 1].dump_block);
    times.push_back(decode[k].execute);
    total += decode[k].execute;
  }
  CHECK(g.decode.total == Approx(total).epsilon(1e-12));
  CHECK(g.decode.median == Approx(median(times)).epsilon(1e-12));
  CHECK(g.decode.p90 == Approx(percentile(times, 90)).epsilon(1e-12));
  REQUIRE(g.decode.tokens_per_second.has_value());
  CHECK(*g.decode.tokens_per_second == Approx(static_cast<double>(decode.size()) / (total / 1000.0)).epsilon(1e-12));
  CHECK(g.prefill.calls[0].time == Approx(prefill[0].execute).epsilon(1e-12));
  CHECK(g.prefill.calls[0].dump_block < g.decode.calls[0].dump_block);
  REQUIRE(g.prefill.tokens_per_second.has_value());
  CHECK(*g.prefill.tokens_per_second == Approx(static_cast<double>(kPromptTokens) / (prefill[0].execute / 1000.0)).epsilon(1e-12));
}

TEST_CASE("generation profile: each phase's operator breakdown sums its calls' events") {
  Opened o = open(generation_dump());
  auto profile = generation_profile(*o.inspector);
  REQUIRE(profile.ok());
  const PhaseProfile& d = profile.value().decode;
  std::map<std::string, double> raw;
  std::map<std::string, uint64_t> raw_count;
  for (const RawCall& c : raw_calls(*o.dump, "Decode")) {
    for (const auto& [name, t] : c.by_name) raw[name] += t;
    for (const auto& [name, n] : c.count_by_name) raw_count[name] += n;
  }
  for (const char* name : {"llama::custom_sdpa.out", "llama::update_cache.out"}) {
    auto it = std::find_if(d.operators.begin(), d.operators.end(), [&](const PhaseOperator& op) { return op.name == name; });
    REQUIRE(it != d.operators.end());
    CHECK(it->total == Approx(raw[name]).epsilon(1e-9));
    CHECK(it->share == Approx(raw[name] / d.total).epsilon(1e-9));
    CHECK(it->count == raw_count[name]);
    CHECK(it->count % d.calls.size() == 0);
  }
  CHECK(d.attention == Approx(raw["llama::custom_sdpa.out"]).epsilon(1e-9));
  double shares = 0;
  for (size_t i = 0; i < d.operators.size(); ++i) {
    shares += d.operators[i].share;
    if (i > 0) CHECK(d.operators[i].total <= d.operators[i - 1].total);
  }
  CHECK(shares <= 1.0 + 1e-9);  // leaves only: nothing counted twice
}

TEST_CASE("generation profile: without the prompt's length, decode positions are call indices") {
  Opened o = open(generation_dump());
  auto profile = generation_profile(*o.inspector);
  REQUIRE(profile.ok());
  const GenerationProfile& g = profile.value();
  CHECK_FALSE(g.positions_known);
  for (size_t k = 0; k < g.decode.calls.size(); ++k) CHECK(g.decode.calls[k].position == static_cast<int64_t>(k));
  CHECK_FALSE(g.prefill.tokens_per_second.has_value());
  CHECK(g.decode.tokens_per_second.has_value());
}

TEST_CASE("generation profile: a dump without Prefill or Decode blocks is an error") {
  Opened o = open(testing::real_artifact("tutorial.etdp"));
  CHECK_FALSE(has_generation_blocks(*o.inspector));
  auto profile = generation_profile(*o.inspector);
  REQUIRE_FALSE(profile.ok());
  CHECK(profile.error().message().find("no Prefill or Decode blocks") != std::string::npos);
}

TEST_CASE("generation profile: attention and cache-update events in both spellings") {
  CHECK(is_attention_event("llama::custom_sdpa.out"));
  CHECK(is_attention_event("llama::sdpa_with_kv_cache.out"));
  CHECK(is_attention_event("native_call_custom_sdpa.out"));
  CHECK_FALSE(is_attention_event("native_call_mm.out"));
  CHECK_FALSE(is_attention_event("sdpa"));
  CHECK(is_cache_update_event("llama::update_cache.out"));
  CHECK(is_cache_update_event("llama::update_cache_with_indices.out"));
  CHECK_FALSE(is_cache_update_event("llama::custom_sdpa.out"));
}

TEST_CASE("inspect --generation prints the phases and per-token latency, as text and JSON") {
  const std::string dump = generation_dump();
  Opened o = open(dump);
  auto profile = generation_profile(*o.inspector, GenerationOptions{kPromptTokens});
  REQUIRE(profile.ok());
  const GenerationProfile& g = profile.value();

  auto text = testing::run_etscope("inspect --etdump '" + dump + "' --generation --prompt-tokens 8");
  REQUIRE(text.exit_code == 0);
  CHECK(text.out.find("prefill ") != std::string::npos);
  CHECK(text.out.find("decode, per token") != std::string::npos);
  CHECK(text.out.find("decode operators") != std::string::npos);
  CHECK(text.out.find("llama::custom_sdpa.out") != std::string::npos);

  auto js = testing::run_etscope("inspect --etdump '" + dump + "' --generation --prompt-tokens 8 --format json --top 3");
  REQUIRE(js.exit_code == 0);
  const auto j = nlohmann::json::parse(js.out);
  CHECK(j["unit"] == "ms");
  CHECK(j["prompt_tokens"] == kPromptTokens);
  REQUIRE(j["phases"].size() == 2);
  const auto& decode = j["phases"][1];
  CHECK(decode["phase"] == "decode");
  REQUIRE(decode["calls"].size() == g.decode.calls.size());
  for (size_t k = 0; k < g.decode.calls.size(); ++k) {
    CHECK(decode["calls"][k]["position"] == g.decode.calls[k].position);
    CHECK(decode["calls"][k]["time"].get<double>() == g.decode.calls[k].time);
    CHECK(decode["calls"][k]["attention"].get<double>() == g.decode.calls[k].attention);
  }
  CHECK(decode["tokens_per_second"].get<double>() == *g.decode.tokens_per_second);
  CHECK(decode["operators"].size() == 3);
  CHECK(decode["operators"][0]["name"] == g.decode.operators[0].name);

  auto wrong = testing::run_etscope("inspect --etdump '" + testing::real_artifact("tutorial.etdp") + "' --generation");
  CHECK(wrong.exit_code != 0);
  CHECK(wrong.err.find("tutorial.etdp: no Prefill or Decode blocks") != std::string::npos);
  CHECK(std::count(wrong.err.begin(), wrong.err.end(), '\n') == 1);
}
