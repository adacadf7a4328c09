// The findings library (findings/): each rule on a real program that has the problem and on one
// that does not (ExecuTorch 1.5.1 exports: tests/fixtures/executorch/findings/, made by
// samples/export/export_findings.py, and the other fixtures), the ranking and totals, and the CLI.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "etscope/etdump/etdump_reader.h"
#include "etscope/etdump/etdump_writer.h"
#include "etscope/etrecord/etrecord_reader.h"
#include "etscope/findings/findings.h"
#include "etscope/formats/pte_reader.h"
#include "etscope/inspect/memory_plan.h"
#include "etscope/inspect/profile.h"
#include "etscope/inspect/program_description.h"
#include "etscope/runner/engine.h"
#include "inspect/crafted_programs.h"
#include "testing/test_util.h"

namespace etscope::findings {
namespace {

std::string findings_fixture(const std::string& name) { return testing::fixture("findings/" + name); }

// A program (and optionally its ETRecord) analysed without a profile.
Report analyse_program(const std::string& path, const std::string& etrecord = "", std::vector<std::string> rules = {}) {
  auto program = inspect::load_program(path);
  REQUIRE(program.ok());
  std::shared_ptr<const etrecord::EtRecord> record;
  if (!etrecord.empty()) {
    auto r = etrecord::EtRecordReader::open(etrecord);
    REQUIRE(r.ok());
    record = std::make_shared<const etrecord::EtRecord>(std::move(*r));
  }
  Inputs in;
  in.program = &*program;
  in.record = record.get();
  Options options;
  options.rules = std::move(rules);
  auto report = analyse(in, options);
  REQUIRE(report.ok());
  return std::move(*report);
}

// The program run by etscope's engine into an ETDump, then analysed with that profile.
struct Profiled {
  inspect::Profile profile;
  Report report;
};

Profiled analyse_run(const std::string& name, int iterations = 5) {
  const std::string dir = testing::temp_dir("findings_" + name);
  const std::string pte = findings_fixture(name + ".pte");
  const std::string input = findings_fixture(name.substr(0, name.find("_fixed")) + ".input0.npy");
  const testing::CommandResult run = testing::run_etscope("run '" + pte + "' --engine etscope --input '" + input +
                                                          "' --iterations " + std::to_string(iterations) + " --etdump '" + dir + "/run.etdp'");
  INFO(run.err);
  REQUIRE(run.exit_code == 0);
  inspect::ProfileFiles files;
  files.etdump = dir + "/run.etdp";
  files.program = pte;
  files.etrecord = findings_fixture(name + ".etrecord");
  auto profile = inspect::open_profile(files);
  REQUIRE(profile.ok());
  Inputs in;
  in.program = profile->program.get();
  in.record = profile->record.get();
  in.inspector = profile->inspector.get();
  in.method = profile->method;
  in.engine = profile->engine.text();
  auto report = analyse(in);
  REQUIRE(report.ok());
  return Profiled{std::move(*profile), std::move(*report)};
}

std::vector<const Finding*> of_rule(const Report& r, const std::string& rule) {
  std::vector<const Finding*> out;
  for (const Finding& f : r.findings) {
    if (f.rule == rule) out.push_back(&f);
  }
  return out;
}

// The Inspector of what `writer` recorded (synthetic dumps with chosen times).
inspect::Inspector inspector_of(const etdump::EtDumpWriter& writer) {
  auto bytes = writer.finish();
  REQUIRE(bytes.ok());
  auto file = etdump::EtDumpReader::read(testing::blob_of(*bytes, "synthetic.etdp"));
  REQUIRE(file.ok());
  auto inspector = inspect::Inspector::build(std::make_shared<const etdump::EtDumpFile>(std::move(*file)), nullptr, nullptr);
  REQUIRE(inspector.ok());
  return std::move(*inspector);
}

std::vector<int32_t> instructions(const Finding& f) {
  std::vector<int32_t> out;
  for (const Place& p : f.where) out.push_back(p.instruction);
  return out;
}

}  // namespace

TEST_CASE("the rule catalogue: unique ids / each with a summary / an unknown rule is refused", "[findings]") {
  std::set<std::string> ids;
  for (const RuleInfo& r : rule_catalog()) {
    CHECK(ids.insert(r.id).second);
    CHECK_FALSE(r.summary.empty());
  }
  CHECK(ids.size() >= 10);
  auto program = inspect::load_program(findings_fixture("permuted_constant.pte"));
  REQUIRE(program.ok());
  Inputs in;
  in.program = &*program;
  Options options;
  options.rules = {"no-such-rule"};
  auto r = analyse(in, options);
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().message().find("no-such-rule") != std::string::npos);
  CHECK_FALSE(analyse(Inputs{}).ok());
  CHECK(parse_severity("medium").ok());
  CHECK_FALSE(parse_severity("urgent").ok());
}

TEST_CASE("constant-work: a permute of a constant weight on every run / gone once folded", "[findings]") {
  const Report r = analyse_program(findings_fixture("permuted_constant.pte"), findings_fixture("permuted_constant.etrecord"));
  const auto found = of_rule(r, "constant-work");
  REQUIRE(found.size() == 1);
  CHECK(instructions(*found[0]) == std::vector<int32_t>{0});
  CHECK(found[0]->where[0].op == "aten::permute_copy.out");
  CHECK(found[0]->where[0].source.find("export_findings.py:") == 0);
  CHECK_FALSE(found[0]->time_ms);  // no profile, no time
  CHECK(found[0]->advice.find("constant_prop_pass") != std::string::npos);
  // The same model exported with ExecuTorch's constant propagation: nothing to say at all.
  CHECK(analyse_program(findings_fixture("permuted_constant_folded.pte"), findings_fixture("permuted_constant_folded.etrecord"))
            .findings.empty());
}

TEST_CASE("constant-work: cifar10's classifier weights are transposed on every run (issue 33's example)", "[findings]") {
  const Report r = analyse_program(testing::fixture("cifar10/cifar10.pte"), testing::fixture("cifar10/cifar10.etrecord"));
  const auto found = of_rule(r, "constant-work");
  REQUIRE(found.size() == 2);
  CHECK(instructions(*found[0]) == std::vector<int32_t>{9});
  CHECK(found[0]->where[0].module_path == "classifier.0");
  CHECK(instructions(*found[1]) == std::vector<int32_t>{12});
}

TEST_CASE("constant-work: scalar-sized constants are one info finding / a weight permuted per step one finding", "[findings]") {
  const Report r = analyse_program(testing::fixture("models/mobilenet_v3_small.pte"), "", {"constant-work"});
  size_t scalar = 0;
  for (const Finding* f : of_rule(r, "constant-work")) {
    if (f->what.find("scalar-sized") != std::string::npos) {
      ++scalar;
      CHECK(f->severity == Severity::kInfo);
      CHECK(f->where.size() > 10);
    }
  }
  CHECK(scalar == 1);
  // gru_text permutes its one recurrent weight for each of the unrolled steps: one finding.
  const Report gru = analyse_program(testing::fixture("models/gru_text.pte"), "", {"constant-work"});
  REQUIRE_FALSE(gru.findings.empty());
  CHECK(gru.findings[0].where.size() == 10);
  CHECK(gru.findings[0].what.find("10 results") != std::string::npos);
}

TEST_CASE("layout-copies: the exported backward transposes trainable weights to feed matrix products", "[findings]") {
  // mlp_mse: Linear(4,8) -> Linear(8,2); the second weight is transposed twice per step (forward
  // and backward), the first once; two activations are transposed for the weight gradients.
  const Report r = analyse_program(testing::fixture("training/mlp_mse.pte"), "", {"layout-copies"});
  REQUIRE(r.findings.size() == 4);
  size_t weights = 0;
  for (const Finding& f : r.findings) {
    for (const Place& p : f.where) CHECK(p.op == "aten::permute_copy.out");
    if (f.advice.find("trainable weight") != std::string::npos) ++weights;  // and the advice says what can and cannot be done
  }
  CHECK(weights == 2);
  CHECK(r.findings[1].what.find("2 layout copies of %2 f32[2,8]") == 0);
  // Inference programs whose copies feed no product, or that have none.
  CHECK(analyse_program(testing::fixture("simple_conv/simple_conv.pte"), "", {"layout-copies"}).findings.empty());
  CHECK(analyse_program(findings_fixture("permuted_constant.pte"), "", {"layout-copies"}).findings.empty());
}

TEST_CASE("partial-delegation: an ELU XNNPACK does not take splits the delegate / and costs its time", "[findings]") {
  const Profiled p = analyse_run("partial_lowering");
  const auto found = of_rule(p.report, "partial-delegation");
  REQUIRE(found.size() == 1);
  CHECK(found[0]->what.find("aten::elu.out") == 0);
  CHECK(found[0]->what.find("1 between delegate calls") != std::string::npos);
  CHECK(instructions(*found[0]) == std::vector<int32_t>{1});
  CHECK(found[0]->where[0].module_path == "middle");
  REQUIRE(found[0]->time_ms);
  REQUIRE(found[0]->share);
  CHECK(*found[0]->time_ms > 0);
  CHECK(*found[0]->share > 0);
  CHECK(*found[0]->share < 1);
  CHECK(p.report.timed);
  CHECK(p.report.runs == 5);
  CHECK(p.report.total_ms == Approx(*found[0]->time_ms));
  CHECK(p.report.total_ms <= p.report.run_ms);
  // Fully lowered: quiet.
  const Profiled fixed = analyse_run("partial_lowering_fixed");
  CHECK(of_rule(fixed.report, "partial-delegation").empty());
  // ExecuTorch's LLM export: RMSNorm's mean stays out of XNNPACK between its delegate calls; the
  // llama:: kernels and the runtime's scalar/view primitives are meant to run outside.
  const Report llm = analyse_program(testing::fixture("llm/xnn_8da4w_emb4/model.pte"), "", {"partial-delegation"});
  bool mean = false;
  for (const Finding& f : llm.findings) {
    mean |= f.what.find("aten::mean.out runs outside XnnpackBackend") == 0;
    CHECK(f.what.find("llama::") == std::string::npos);
    CHECK(f.what.find("executorch_prim::") == std::string::npos);
  }
  CHECK(mean);
  // A program without any delegate is not "partially" delegated.
  CHECK(analyse_program(testing::fixture("simple_conv/simple_conv.pte"), "", {"partial-delegation"}).findings.empty());
}

TEST_CASE("qdq-pairs: a flip between a dequantize and a quantize of the same parameters / gone once folded", "[findings]") {
  const Report r = analyse_program(findings_fixture("qdq_portable.pte"), findings_fixture("qdq_portable.etrecord"));
  const auto found = of_rule(r, "qdq-pairs");
  REQUIRE(found.size() == 1);
  CHECK(instructions(*found[0]) == std::vector<int32_t>{2, 4});
  CHECK(found[0]->what.find("aten::flip.out runs in float") == 0);
  CHECK(found[0]->what.find("same parameters") != std::string::npos);
  // The q/dq calls of the pattern are not also reported as left out of the delegate.
  for (const Finding* f : of_rule(r, "partial-delegation")) {
    for (int32_t i : instructions(*f)) CHECK((i != 2 && i != 4));
  }
  CHECK(of_rule(analyse_program(findings_fixture("qdq_portable_fixed.pte")), "qdq-pairs").empty());
  CHECK(of_rule(analyse_program(findings_fixture("qdq_portable_default.pte")), "qdq-pairs").empty());
}

TEST_CASE("dtype-round-trip: f32 -> f64 -> f32 around tanh / RMSNorm's float mean in a bf16 LLM is left alone", "[findings]") {
  const Report r = analyse_program(findings_fixture("dtype_roundtrip.pte"), findings_fixture("dtype_roundtrip.etrecord"));
  const auto found = of_rule(r, "dtype-round-trip");
  REQUIRE(found.size() == 1);
  CHECK(instructions(*found[0]) == std::vector<int32_t>{0, 2});
  CHECK(found[0]->what.find("f32 -> f64 -> f32") != std::string::npos);
  CHECK(analyse_program(findings_fixture("dtype_roundtrip_fixed.pte")).findings.empty());
  // ExecuTorch's LLM exporter in bf16: RMSNorm computes its mean in float (deliberate) and the
  // linears in bf16; only the SiLU computed in float between two conversions is reported.
  const Report llm = analyse_program(testing::fixture("llm/portable_bf16_sdpa/model.pte"), "", {"dtype-round-trip"});
  for (const Finding& f : llm.findings) {
    CHECK(f.evidence[0].find("aten::mean") == std::string::npos);
    CHECK(f.evidence[0].find("linear") == std::string::npos);
  }
}

TEST_CASE("suspicious-constants: NaN/Inf weights and an all-zero matrix / masks of -inf and 0 are meant", "[findings]") {
  const Report r = analyse_program(findings_fixture("zero_and_nan_weights.pte"), "", {"suspicious-constants"});
  REQUIRE(r.findings.size() == 2);
  std::set<Severity> severities;
  for (const Finding& f : r.findings) severities.insert(f.severity);
  CHECK(severities == std::set<Severity>{Severity::kHigh, Severity::kMedium});
  bool nan = false, zero = false;
  for (const Finding& f : r.findings) {
    nan |= f.what.find("1 NaN and 1 Inf") != std::string::npos;
    zero |= f.what.find("all zeros") != std::string::npos && f.bytes == 32 * 32 * 4;
    CHECK_FALSE(f.where.empty());  // the instructions that read it
  }
  CHECK(nan);
  CHECK(zero);
  // Causal masks and masked_fill's -inf in the LLM exports, clean weights elsewhere.
  for (const char* clean : {"llm/portable_kv_nosdpa/model.pte", "llm/xnn_nokv/model.pte", "cifar10/cifar10.pte"}) {
    CHECK(analyse_program(testing::fixture(clean), "", {"suspicious-constants"}).findings.empty());
  }
  // A bool mask holding bytes other than 0 and 1.
  const std::string dir = testing::temp_dir("findings_bool");
  auto bytes = testing::bool_mask_program_bytes({0x00, 0x93, 0x01, 0x7f});
  auto program = PteReader::read(testing::blob_of(bytes, "mask.pte"));
  REQUIRE(program.ok());
  Inputs in;
  in.program = &*program;
  auto mask = analyse(in);
  REQUIRE(mask.ok());
  const auto found = of_rule(*mask, "suspicious-constants");
  REQUIRE(found.size() == 1);
  CHECK(found[0]->what.find("2 bytes other than 0 and 1") != std::string::npos);
  CHECK(instructions(*found[0]) == std::vector<int32_t>{0});
}

TEST_CASE("arena-over-greedy: ExecuTorch's naive plan of an MLP / not its greedy plan nor plans with reuse", "[findings]") {
  const Report naive = analyse_program(findings_fixture("mlp_naive.pte"), "", {"arena-over-greedy"});
  REQUIRE(naive.findings.size() == 1);
  auto program = inspect::load_program(findings_fixture("mlp_naive.pte"));
  REQUIRE(program.ok());
  auto memory = inspect::MemoryPlan::build(*program, *program->find_plan("forward"));
  REQUIRE(memory.ok());
  CHECK(naive.findings[0].bytes == memory->arenas()[0].potential_saving());
  CHECK(naive.findings[0].bytes > memory->arenas()[0].size / 2);
  CHECK(naive.total_bytes == naive.findings[0].bytes);
  CHECK(naive.findings[0].advice.find("MemoryPlanningAlgorithmSuite") != std::string::npos);
  // Planned by ExecuTorch's greedy algorithm, or with tensors sharing already (where etscope's
  // re-run over instruction steps finds a smaller bound than ExecuTorch's planner reaches).
  for (const char* clean : {"findings/mlp_greedy.pte", "xnnpack/xnn_transformer.pte", "models/antialias_resize.pte", "cifar10/cifar10.pte"}) {
    INFO(clean);
    CHECK(analyse_program(testing::fixture(clean), "", {"arena-over-greedy"}).findings.empty());
  }
}

TEST_CASE("logged-timings: a dump recorded with intermediate outputs logged / profile-only rules need a profile", "[findings]") {
  auto open = [](const std::string& dump) {
    inspect::ProfileFiles files;
    files.etdump = testing::fixture(dump);
    files.program = testing::fixture("simple_conv/simple_conv.pte");
    auto profile = inspect::open_profile(files);
    REQUIRE(profile.ok());
    return std::move(*profile);
  };
  for (const auto& [dump, logged] : std::vector<std::pair<std::string, bool>>{
           {"simple_conv/simple_conv.etdp", true}, {"simple_conv/simple_conv.profile.etdp", false}}) {
    INFO(dump);
    const inspect::Profile profile = open(dump);
    Inputs in;
    in.program = profile.program.get();
    in.inspector = profile.inspector.get();
    auto r = analyse(in);
    REQUIRE(r.ok());
    const auto found = of_rule(*r, "logged-timings");
    CHECK(found.size() == (logged ? 1u : 0u));
    if (logged) {
      CHECK(found[0]->severity == Severity::kHigh);
      CHECK(found[0]->bytes > 0);
    }
  }
  const Report program_only = analyse_program(testing::fixture("simple_conv/simple_conv.pte"));
  CHECK_FALSE(program_only.timed);
  CHECK(program_only.skipped.size() == 5);  // four profile rules and the baseline's
}

TEST_CASE("delegate-overhead: a delegate call whose operators leave time unattributed (ExecuTorch's own dump)", "[findings]") {
  inspect::ProfileFiles files;
  files.etdump = testing::fixture("simple_conv_xnnpack/simple_conv_xnnpack.profile.etdp");
  files.program = testing::fixture("simple_conv_xnnpack/simple_conv_xnnpack.pte");
  auto profile = inspect::open_profile(files);
  REQUIRE(profile.ok());
  Inputs in;
  in.program = profile->program.get();
  in.inspector = profile->inspector.get();
  Options options;
  options.rules = {"delegate-overhead"};
  options.min_share = 0;
  auto r = analyse(in, options);
  REQUIRE(r.ok());
  // The finding holds exactly the Inspector's unattributed time, when that is 15% of the call or more.
  const size_t block = *inspect::main_block(*profile->inspector);
  size_t expected = 0;
  for (const inspect::DelegateSummary& d : profile->inspector->delegate_summaries(block)) {
    if (!d.sub_events.empty() && d.unattributed >= 0.15 * d.call_avg && d.unattributed > 0) {
      ++expected;
      REQUIRE_FALSE(r->findings.empty());
      CHECK(*r->findings[0].time_ms == Approx(d.unattributed));  // the dump's target unit is ms
    }
  }
  CHECK(r->findings.size() == expected);
}

TEST_CASE("warmup: a first execution far slower than the rest / not a steady run", "[findings]") {
  auto dump_of = [](const std::vector<double>& run_ms) {
    etdump::EtDumpWriterOptions options;
    etdump::EtDumpWriter writer(options);
    uint64_t t = 1000000;
    for (double ms : run_ms) {
      writer.create_event_block("Execute");
      const uint64_t end = t + static_cast<uint64_t>(ms * 1e6);
      writer.record_timed_event("Method::execute", -1, 0, false, -1, t, end);
      t = end + 1000;
    }
    return inspector_of(writer);
  };
  {
    const inspect::Inspector in = dump_of({10.0, 2.0, 2.1, 1.9, 2.0});
    Inputs inputs;
    inputs.inspector = &in;
    auto r = analyse(inputs);
    REQUIRE(r.ok());
    const auto found = of_rule(*r, "warmup");
    REQUIRE(found.size() == 1);
    CHECK(found[0]->evidence[0].find("first of 5 executions took 10.0 ms") != std::string::npos);
    CHECK(found[0]->severity == Severity::kMedium);  // moves the 3.6 ms average by 1.6 ms
    CHECK(r->skipped.size() == 8);                  // the program rules and the baseline's
  }
  {
    const inspect::Inspector in = dump_of({2.0, 2.0, 2.1, 1.9, 2.0});
    Inputs inputs;
    inputs.inspector = &in;
    auto r = analyse(inputs);
    REQUIRE(r.ok());
    CHECK(r->findings.empty());
  }
}

TEST_CASE("load-time: one delegate's init is most of the load / a backend's inits together / quiet otherwise", "[findings]") {
  // partial_lowering: XNNPACK delegate calls at instructions 0 and 2, aten::elu between them.
  auto program = inspect::load_program(findings_fixture("partial_lowering.pte"));
  REQUIRE(program.ok());
  // A load block of `load_ms` whose two delegate inits take `first_ms` and `second_ms`, then five
  // executions of 2 ms.
  auto report_of = [&](double load_ms, double first_ms, double second_ms) {
    etdump::EtDumpWriterOptions options;
    etdump::EtDumpWriter writer(options);
    const uint64_t t0 = 1000000;
    auto at = [&](double ms) { return t0 + static_cast<uint64_t>(ms * 1e6); };
    writer.create_event_block("Default");
    writer.record_timed_event(events::kDelegateInit.data(), 0, 0, false, -1, at(0.1), at(0.1 + first_ms));
    writer.record_timed_event(events::kDelegateInit.data(), 0, 2, false, -1, at(0.1 + first_ms), at(0.1 + first_ms + second_ms));
    writer.record_timed_event("Method::init", -1, 0, false, -1, at(0.05), at(load_ms - 0.01));
    writer.record_timed_event("Program::load_method", -1, 0, false, -1, at(0), at(load_ms));
    uint64_t t = at(load_ms + 1);
    for (int k = 0; k < 5; ++k) {
      writer.create_event_block("Execute");
      writer.record_timed_event("Method::execute", -1, 0, false, -1, t, t + 2000000);
      t += 3000000;
    }
    const inspect::Inspector in = inspector_of(writer);
    Inputs inputs;
    inputs.program = &*program;
    inputs.inspector = &in;
    Options opts;
    opts.rules = {"load-time"};
    auto r = analyse(inputs, opts);
    REQUIRE(r.ok());
    return std::move(*r);
  };
  {
    const Report r = report_of(20.0, 14.0, 1.0);  // one init is 70% of the load
    const auto found = of_rule(r, "load-time");
    REQUIRE(found.size() == 1);
    CHECK(found[0]->what == "the method's load is mostly the init of one XnnpackBackend delegate (instruction 0)");
    CHECK(instructions(*found[0]) == std::vector<int32_t>{0});
    CHECK(found[0]->where[0].op == "delegate XnnpackBackend");
    CHECK(found[0]->evidence[0] == "load 20.0 ms (Program::load_method), XnnpackBackend init 15.0 ms (75.0%)");
    CHECK(found[0]->evidence.back() == "the load takes as long as 10.0 executions (2.00 ms each)");
    CHECK(!found[0]->time_ms);  // paid once per load, not per run: no share of the run
    CHECK(found[0]->severity == Severity::kLow);
    CHECK(found[0]->advice.find("weight_cache_enabled") != std::string::npos);
  }
  {
    const Report r = report_of(20.0, 6.0, 6.0);  // neither alone, both together (60%)
    const auto found = of_rule(r, "load-time");
    REQUIRE(found.size() == 1);
    CHECK(found[0]->what == "the method's load is mostly XnnpackBackend's init of its 2 delegates");
    CHECK(instructions(*found[0]) == std::vector<int32_t>{0, 2});
  }
  CHECK(of_rule(report_of(20.0, 2.0, 2.0), "load-time").empty());  // the inits are 20% of it
  CHECK(of_rule(report_of(0.5, 0.4, 0.05), "load-time").empty());  // nobody waits half a millisecond
  {
    const Report r = report_of(1500.0, 1400.0, 10.0);
    REQUIRE(of_rule(r, "load-time").size() == 1);
    CHECK(of_rule(r, "load-time")[0]->severity == Severity::kMedium);  // an app start the user sees
  }
}

TEST_CASE("both engines time each delegate's init inside Method::init, at the instruction that calls it", "[findings]") {
  const std::string pte = findings_fixture("partial_lowering.pte");
  const std::string input = findings_fixture("partial_lowering.input0.npy");
  for (const std::string engine : {"etscope", "executorch"}) {
    if (engine == "executorch" && !runner::engine_available(runner::EngineKind::kExecutorch).ok()) {
      WARN("the ExecuTorch engine is not built: its delegate inits are not checked");
      continue;
    }
    INFO(engine);
    const std::string dir = testing::temp_dir("findings_load_" + engine);
    const testing::CommandResult run = testing::run_etscope("run '" + pte + "' --engine " + engine + " --input '" + input +
                                                            "' --iterations 2 --etdump '" + dir + "/run.etdp'");
    INFO(run.err);
    REQUIRE(run.exit_code == 0);
    auto file = etdump::EtDumpReader::open(dir + "/run.etdp");
    REQUIRE(file.ok());
    const etdump::EtDumpFile& dump = *file;
    REQUIRE(!dump.blocks.empty());
    const auto& load = dump.blocks[0];
    const etdump::Event* init = nullptr;
    std::vector<const etdump::Event*> inits;
    for (uint32_t k = 0; k < load.event_count; ++k) {
      const etdump::Event& e = dump.events[load.first_event + k];
      if (e.kind != etdump::EventKind::kProfile || e.delegate) continue;
      if (dump.name_of(e) == events::kMethodInit) init = &e;
      if (dump.name_of(e) == events::kDelegateInit) inits.push_back(&e);
    }
    REQUIRE(init != nullptr);
    REQUIRE(inits.size() == 2);
    std::set<int32_t> at;
    for (const etdump::Event* e : inits) {
      CHECK(e->chain == 0);
      // Recorded as -1 - instruction: ExecuTorch's Inspector maps no debug handle to it (event_names.h).
      CHECK(e->instruction < 0);
      at.insert(static_cast<int32_t>(events::delegate_init_instruction(e->instruction)));
      CHECK(e->start >= init->start);
      CHECK(e->end <= init->end);
      CHECK(e->end >= e->start);
    }
    CHECK(at == std::set<int32_t>{0, 2});
  }
}

TEST_CASE("regressions: an operator significantly slower than in the baseline / summed by module", "[findings]") {
  // Twenty executions of three kernels; in the new run the second takes twice as long.
  auto dump_of = [](double second_ms) {
    etdump::EtDumpWriterOptions options;
    etdump::EtDumpWriter writer(options);
    uint64_t t = 1000000;
    for (int run = 0; run < 20; ++run) {
      writer.create_event_block("Execute");
      const uint64_t start = t;
      const double jitter = 0.01 * (run % 3);
      for (int i = 0; i < 3; ++i) {
        const double ms = (i == 1 ? second_ms : 1.0) + jitter;
        const uint64_t end = t + static_cast<uint64_t>(ms * 1e6);
        writer.record_timed_event(i == 1 ? "native_call_mul.out" : "native_call_add.out", 0, static_cast<uint32_t>(i), false, -1, t, end);
        t = end + 100;
      }
      writer.record_timed_event("Method::execute", -1, 0, false, -1, start, t);
      t += 1000;
    }
    return inspector_of(writer);
  };
  const inspect::Inspector before = dump_of(1.0), after = dump_of(2.0), same = dump_of(1.0);
  Inputs in;
  in.inspector = &after;
  in.baseline = &before;
  auto r = analyse(in);
  REQUIRE(r.ok());
  const auto found = of_rule(*r, "regressions");
  REQUIRE(found.size() == 1);
  CHECK(instructions(*found[0]) == std::vector<int32_t>{1});
  CHECK(found[0]->what.find("1 operator significantly slower") != std::string::npos);
  REQUIRE(found[0]->time_ms);
  CHECK(*found[0]->time_ms == Approx(1.0).epsilon(0.02));
  CHECK(found[0]->severity == Severity::kHigh);
  // An unchanged rerun: nothing.
  in.inspector = &same;
  auto quiet = analyse(in);
  REQUIRE(quiet.ok());
  CHECK(of_rule(*quiet, "regressions").empty());
  // Without a baseline the rule says what it needs.
  in.baseline = nullptr;
  auto alone = analyse(in);
  REQUIRE(alone.ok());
  CHECK(std::find(alone->skipped.begin(), alone->skipped.end(), "regressions: needs a baseline profile (--baseline)") != alone->skipped.end());
}

TEST_CASE("small findings of one rule are folded into one that promises them together", "[findings]") {
  // mobilenet_v3_small's portable export permutes several weights, each a small share of its run.
  const std::string dir = testing::temp_dir("findings_fold");
  const std::string pte = testing::fixture("models/mobilenet_v3_small.pte");
  REQUIRE(testing::run_etscope("run '" + pte + "' --engine etscope --random 1 --iterations 3 --etdump '" + dir + "/run.etdp'").exit_code == 0);
  inspect::ProfileFiles files;
  files.etdump = dir + "/run.etdp";
  files.program = pte;
  auto profile = inspect::open_profile(files);
  REQUIRE(profile.ok());
  Inputs in;
  in.program = profile->program.get();
  in.inspector = profile->inspector.get();
  Options everything;
  everything.min_share = 0;
  everything.rules = {"constant-work"};
  Options folded;
  // Every finding is below this share of the run, however the machine's load skews one timed
  // kernel (at 0.5, one of twelve runs under a parallel build had a permute above half): all fold.
  folded.min_share = 0.99;
  folded.rules = {"constant-work"};
  auto all = analyse(in, everything);
  auto one = analyse(in, folded);
  REQUIRE(all.ok());
  REQUIRE(one.ok());
  REQUIRE(all->findings.size() >= 2);
  REQUIRE(one->findings.size() == 1);
  CHECK(one->findings[0].what.find(std::to_string(all->findings.size()) + " smaller constant-work findings") == 0);
  CHECK(one->total_ms == Approx(all->total_ms));
  CHECK(one->findings[0].evidence.size() == all->findings.size());
}

TEST_CASE("ranking: by time saved / the total counts each instruction once / severity from the share", "[findings]") {
  const Profiled p = analyse_run("qdq_portable");
  REQUIRE(p.report.findings.size() >= 2);
  for (size_t i = 1; i < p.report.findings.size(); ++i) {
    CHECK(p.report.findings[i - 1].time_ms.value_or(-1) >= p.report.findings[i].time_ms.value_or(-1));
  }
  double sum = 0;
  for (const Finding& f : p.report.findings) {
    sum += f.time_ms.value_or(0);
    if (f.share) {
      const Severity expected = *f.share >= 0.10 ? Severity::kHigh : *f.share >= 0.02 ? Severity::kMedium : Severity::kLow;
      CHECK(f.severity == expected);
    }
  }
  CHECK(p.report.total_ms == Approx(sum));  // no instruction in two findings here
  REQUIRE(p.report.total_share);
  CHECK(*p.report.total_share == Approx(p.report.total_ms / p.report.run_ms));
}

TEST_CASE("inspect --findings: the same report from inspect's inputs", "[findings][cli]") {
  const std::string dir = testing::temp_dir("findings_inspect");
  const std::string pte = findings_fixture("permuted_constant.pte");
  REQUIRE(testing::run_etscope("run '" + pte + "' --engine etscope --input '" + findings_fixture("permuted_constant.input0.npy") +
                               "' --iterations 3 --etdump '" + dir + "/run.etdp'").exit_code == 0);
  auto r = testing::run_etscope("inspect --etdump '" + dir + "/run.etdp' --pte '" + pte + "' --findings --format json");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const auto j = nlohmann::json::parse(r.out);
  CHECK(j["timed"] == true);
  CHECK(j["runs"] == 3);
  // The permute of the constant; a busy machine may also slow the first of the three runs
  // (the warmup rule), nothing else.
  size_t constant_work = 0;
  for (const auto& f : j["findings"]) {
    if (f["rule"] == "constant-work") {
      ++constant_work;
      CHECK(f["time_ms"].get<double>() > 0);
    } else {
      CHECK(f["rule"] == "warmup");
    }
  }
  CHECK(constant_work == 1);
  // Without the program only the profile's rules run, and say so.
  auto dump_only = testing::run_etscope("inspect --etdump '" + dir + "/run.etdp' --findings");
  CHECK(dump_only.exit_code == 0);
  CHECK(dump_only.out.find("not checked: constant-work: needs the program (--pte)") != std::string::npos);
  CHECK(testing::run_etscope("inspect --etdump '" + dir + "/run.etdp' --findings --format csv").exit_code == 2);
}

TEST_CASE("clean programs: the fixed twins and the example programs raise nothing but what their notes defend", "[findings]") {
  for (const char* clean : {"findings/partial_lowering_fixed.pte", "findings/permuted_constant_folded.pte",
                            "findings/dtype_roundtrip_fixed.pte", "simple_conv/simple_conv.pte",
                            "simple_conv_xnnpack/simple_conv_xnnpack.pte", "xnnpack/xnn_mobilenet_v3_small.pte"}) {
    INFO(clean);
    for (const Finding& f : analyse_program(testing::fixture(clean)).findings) {
      INFO(f.what);
      CHECK(f.severity == Severity::kInfo);
    }
  }
}

TEST_CASE("etscope findings: text / JSON / --fail-on / --list-rules and bad input in one line", "[findings][cli]") {
  const std::string pte = findings_fixture("zero_and_nan_weights.pte");
  auto text = testing::run_etscope("findings '" + pte + "'");
  CHECK(text.exit_code == 0);
  CHECK(text.out.find("[high] suspicious-constants") != std::string::npos);
  CHECK(text.out.find("not checked: warmup: needs a profile (--etdump)") != std::string::npos);
  auto json = testing::run_etscope("findings '" + pte + "' --format json");
  REQUIRE(json.exit_code == 0);
  const auto j = nlohmann::json::parse(json.out);
  CHECK(j["timed"] == false);
  CHECK(j["findings"].size() >= 2);
  CHECK(j["findings"][0].contains("advice"));
  CHECK(testing::run_etscope("findings '" + pte + "' --fail-on high").exit_code == 3);
  CHECK(testing::run_etscope("findings '" + findings_fixture("permuted_constant_folded.pte") + "' --fail-on info").exit_code == 0);
  auto list = testing::run_etscope("findings --list-rules");
  CHECK(list.exit_code == 0);
  CHECK(list.out.find("constant-work") != std::string::npos);
  auto unknown = testing::run_etscope("findings '" + pte + "' --rule nope");
  CHECK(unknown.exit_code == 2);
  CHECK(testing::run_etscope("findings").exit_code == 2);
  CHECK(testing::run_etscope("findings '" + pte + "' --baseline x.etdp").exit_code == 2);  // a baseline needs the run
  auto missing = testing::run_etscope("findings /no/such.pte");
  CHECK(missing.exit_code == 1);
  CHECK(missing.err == "etscope: /no/such.pte: no such file\n");
  // A record of another program is refused as inspect refuses it.
  auto mismatch = testing::run_etscope("findings '" + findings_fixture("permuted_constant.pte") + "' --etrecord '" +
                                       findings_fixture("dtype_roundtrip.etrecord") + "'");
  CHECK(mismatch.exit_code == 1);
  CHECK(mismatch.err.find("do not belong together") != std::string::npos);
  // Every real artifact and reliability repro: a report, or one line and exit 1.
  std::vector<std::string> programs = testing::real_artifacts_with_extension(".pte");
  for (const auto& e : std::filesystem::directory_iterator(testing::test_data_dir() + "/repros")) {
    if (e.path().extension() == ".pte") programs.push_back(e.path().string());
  }
  CHECK(programs.size() > 20);
  for (const std::string& bad : programs) {
    auto r = testing::run_etscope("findings '" + bad + "'");
    INFO(bad << ": " << r.err);
    CHECK((r.exit_code == 0 || r.exit_code == 1));
    if (r.exit_code == 1) CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
  }
}

}  // namespace etscope::findings
