// Method on real ExecuTorch programs: values, arenas, constants, external data, kernels,
// bundled cases, the tracer's hook sequence, and no heap allocation during execute().
#include <catch2/catch.hpp>
#include <cstring>

#include "etscope/formats/bpte_reader.h"
#include "etscope/formats/ptd_reader.h"
#include "etscope/formats/pte_reader.h"
#include "etscope/runtime/bundled.h"
#include "etscope/runtime/method.h"
#include "inspect/crafted_programs.h"
#include "testing/alloc_counter.h"
#include "testing/test_util.h"

using namespace etscope;
using etscope::testing::real_artifact;

namespace {

Program load_program(const std::string& name) {
  auto p = PteReader::open(real_artifact(name));
  if (!p.ok()) FAIL(p.error().message());
  return std::move(p).value();
}

std::unique_ptr<runtime::Method> load_method(const Program& program, runtime::MethodOptions options = {}) {
  auto m = runtime::Method::load(program, "forward", options);
  if (!m.ok()) FAIL(m.error().message());
  return std::move(m).value();
}

std::span<const uint8_t> bytes_of(const std::vector<float>& v) {
  return {reinterpret_cast<const uint8_t*>(v.data()), v.size() * sizeof(float)};
}

std::vector<float> floats_of(const EValue& v) {
  REQUIRE(v.tag == Tag::kTensor);
  const float* p = v.tensor->data_as<float>();
  return std::vector<float>(p, p + v.tensor->numel());
}

// Records every hook call as a line of text.
class RecordingTracer final : public EventTracer {
 public:
  std::vector<std::string> log;
  void create_event_block(const char* name) override { log.push_back(std::string("block ") + name); }
  EventHandle start_profiling(const char* name, int32_t chain, uint32_t handle) override {
    if (chain == -1 && std::strncmp(name, "Method::", 8) != 0 && std::strncmp(name, "Program::", 9) != 0) {
      chain = chain_id();
      handle = debug_handle();
    }
    names_.push_back(std::string(name) + " " + std::to_string(chain) + ":" + std::to_string(handle));
    return static_cast<EventHandle>(names_.size() - 1);
  }
  void end_profiling(EventHandle h) override { log.push_back("event " + names_[h]); }
  void log_evalue(const EValue& v, bool output) override {
    log.push_back(std::string(output ? "output " : "value ") + to_string(v.tag) + " " + std::to_string(chain_id()) +
                  ":" + std::to_string(debug_handle()));
  }

 private:
  std::vector<std::string> names_;
};

}  // namespace

TEST_CASE("add.pte computes 1 + 2 = 3 in its planned arena", "[runtime][real]") {
  Program p = load_program("add.pte");
  auto m = load_method(p);
  REQUIRE(m->num_inputs() == 2);
  REQUIRE(m->num_outputs() == 1);
  std::vector<float> a = {1.0f}, b = {2.0f};
  REQUIRE(m->set_input(0, bytes_of(a)).ok());
  REQUIRE(m->set_input(1, bytes_of(b)).ok());
  REQUIRE(m->execute().ok());
  CHECK(floats_of(m->output(0)) == std::vector<float>{3.0f});
  // Inputs stay set across executions; new values are picked up.
  a[0] = 10.0f;
  REQUIRE(m->set_input(0, bytes_of(a)).ok());
  REQUIRE(m->execute().ok());
  CHECK(floats_of(m->output(0)) == std::vector<float>{12.0f});
}

TEST_CASE("legacy inline constants: 3 * x + 2", "[runtime][real]") {
  Program p = load_program("linear_constant_buffer.pte");
  auto m = load_method(p);
  std::vector<float> x = {1.0f, -1.0f, 0.5f, 4.0f};
  REQUIRE(m->set_input(0, bytes_of(x)).ok());
  REQUIRE(m->execute().ok());
  CHECK(floats_of(m->output(0)) == std::vector<float>{5.0f, -1.0f, 3.5f, 14.0f});
}

TEST_CASE("external weights from a legacy .ptd: x @ W^T + b", "[runtime][real]") {
  Program p = load_program("linear_external.pte");
  auto ptd = PtdReader::open(real_artifact("linear_external_legacy.ptd"));
  REQUIRE(ptd.ok());
  runtime::MethodOptions options;
  options.external_data = {&*ptd};
  auto m = load_method(p, options);
  std::vector<float> x = {1, 2, 3, -1, 0, 1, 0.5f, 0.25f, -2};
  REQUIRE(m->set_input(0, bytes_of(x)).ok());
  REQUIRE(m->execute().ok());
  // Expected value computed here from the .ptd's bytes, independently of the kernels.
  float w[9], b[3];
  std::memcpy(w, ptd->bytes(ptd->find("linear.weight")->data).data(), sizeof(w));
  std::memcpy(b, ptd->bytes(ptd->find("linear.bias")->data).data(), sizeof(b));
  std::vector<float> got = floats_of(m->output(0));
  REQUIRE(got.size() == 9);
  for (int i = 0; i < 3; ++i) {
    for (int j = 0; j < 3; ++j) {
      double expect = b[j];
      for (int k = 0; k < 3; ++k) expect += static_cast<double>(x[static_cast<size_t>(i * 3 + k)]) * w[j * 3 + k];
      CHECK(got[static_cast<size_t>(i * 3 + j)] == Approx(expect).epsilon(1e-6));
    }
  }
}

TEST_CASE("every bundled case of bundled_program.bpte passes exactly", "[runtime][real][bundled]") {
  auto b = BpteReader::open(real_artifact("bundled_program.bpte"));
  REQUIRE(b.ok());
  auto m = load_method(b->program);
  REQUIRE(b->suites.size() == 1);
  for (const BundledTestCase& c : b->suites[0].cases) {
    REQUIRE(runtime::load_bundled_inputs(*m, *b, c).ok());
    REQUIRE(m->execute().ok());
    runtime::CaseCheck check = runtime::verify_bundled_outputs(*m, *b, c, 0.0, 0.0);
    CHECK(check.passed);
  }
  // A wrong expectation is caught: compare case 0's outputs against case 1's data.
  auto other = b->suites[0].cases[1];
  REQUIRE(runtime::load_bundled_inputs(*m, *b, b->suites[0].cases[0]).ok());
  REQUIRE(m->execute().ok());
  const auto& c0 = b->suites[0].cases[0];
  const auto& c9 = b->suites[0].cases[9];
  bool differ = std::memcmp(b->bytes(c0.expected_outputs[0].data).data(), b->bytes(c9.expected_outputs[0].data).data(), 16) != 0;
  if (differ) CHECK_FALSE(runtime::verify_bundled_outputs(*m, *b, c9, 0.0, 0.0).passed);
  (void)other;
}

TEST_CASE("missing kernels are all reported at load", "[runtime][errors]") {
  Program p = load_program("cadence_quantized_conv.pte");
  auto m = runtime::Method::load(p, "forward");
  REQUIRE_FALSE(m.ok());
  CHECK(m.error().code() == ErrorCode::kNotSupported);
  CHECK_THAT(m.error().message(),
             Catch::EndsWith("missing kernels: cadence::quantize_per_tensor.out, "
                             "cadence::quantized_conv2d_nchw.per_tensor_out, cadence::dequantize_per_tensor.out"));
}

TEST_CASE("load and input errors name the file and the problem", "[runtime][errors]") {
  Program ext = load_program("linear_external.pte");
  auto no_ptd = runtime::Method::load(ext, "forward");
  REQUIRE_FALSE(no_ptd.ok());
  CHECK_THAT(no_ptd.error().message(), Catch::Contains("external tensor 'linear.weight' not found (no .ptd given"));
  auto wrong_ptd = PtdReader::open(real_artifact("xor_training.ptd"));
  REQUIRE(wrong_ptd.ok());
  runtime::MethodOptions options;
  options.external_data = {&*wrong_ptd};
  CHECK_FALSE(runtime::Method::load(ext, "forward", options).ok());

  Program p = load_program("add.pte");
  auto bad_name = runtime::Method::load(p, "backward");
  REQUIRE_FALSE(bad_name.ok());
  CHECK_THAT(bad_name.error().message(), Catch::Contains("no method named 'backward' (methods: forward)"));
  auto m = load_method(p);
  std::vector<float> one = {1.0f}, two = {1.0f, 2.0f};
  auto unset = m->execute();
  REQUIRE_FALSE(unset.ok());
  CHECK_THAT(unset.error().message(), Catch::Contains("input 0 has not been set"));
  CHECK_FALSE(m->set_input(5, bytes_of(one)).ok());
  auto size = m->set_input(0, bytes_of(two));
  REQUIRE_FALSE(size.ok());
  CHECK_THAT(size.error().message(), Catch::Contains("got 8 bytes, the tensor needs 4"));
  std::vector<int64_t> bigger = {2};
  CHECK_FALSE(m->set_input(0, bytes_of(two), bigger).ok());  // static tensor cannot grow
}

TEST_CASE("the tracer sees ExecuTorch's hook sequence", "[runtime][tracer]") {
  Program p = load_program("add.pte");
  RecordingTracer tracer;
  tracer.set_debug_level(DebugLevel::kIntermediateOutputs);
  runtime::MethodOptions options;
  options.tracer = &tracer;
  auto m = load_method(p, options);
  std::vector<float> a = {1.0f};
  REQUIRE(m->set_input(0, bytes_of(a)).ok());
  REQUIRE(m->set_input(1, bytes_of(a)).ok());
  REQUIRE(m->execute().ok());
  const std::vector<std::string> expected = {
      "block Default",
      "event Method::init -1:0",
      "event Program::load_method -1:0",
      "block Execute",
      // etscope's addition: the program inputs, before the first instruction (instruction -1).
      "value Tensor -1:4294967295",
      "value Tensor -1:4294967295",
      "value Tensor 0:0",
      "event native_call_add.out 0:0",
      "event OPERATOR_CALL 0:0",
      "event Method::execute -1:0",
      "output Tensor -1:0",
  };
  CHECK(tracer.log == expected);

  // At the method-only profiling level, and without debug logging, only method events remain.
  tracer.log.clear();
  tracer.set_profiling_level(ProfilingLevel::kMethodOnly);
  tracer.set_debug_level(DebugLevel::kNone);
  REQUIRE(m->execute().ok());
  CHECK(tracer.log == std::vector<std::string>{"block Execute", "event Method::execute -1:0"});
}

TEST_CASE("execute() allocates nothing on the heap", "[runtime][alloc]") {
  auto ptd = PtdReader::open(real_artifact("xor_training.ptd"));
  REQUIRE(ptd.ok());
  Program p = load_program("linear_external.pte");
  auto legacy = PtdReader::open(real_artifact("linear_external_legacy.ptd"));
  REQUIRE(legacy.ok());
  runtime::MethodOptions options;
  options.external_data = {&*legacy};
  auto m = load_method(p, options);
  std::vector<float> x(9, 0.5f);
  REQUIRE(m->set_input(0, bytes_of(x)).ok());
  REQUIRE(m->execute().ok());  // warm
  etscope::testing::start_counting_allocations();
  Status s = m->execute();
  const size_t allocations = etscope::testing::stop_counting_allocations();
  REQUIRE(s.ok());
  CHECK(allocations == 0);
}

// Issue 28 item 9: a bool constant holding bytes other than 0/1 loads (ExecuTorch runs such
// programs), and its bytes are read as ExecuTorch's kernels read them: non-zero is true.
TEST_CASE("a bool constant with bytes other than 0 or 1 is read as non-zero is true", "[method][issue28]") {
  auto program = PteReader::read(etscope::testing::blob_of(
      etscope::testing::bool_mask_program_bytes({0x00, 0x93, 0x01, 0x7f}), "mask.pte"));
  REQUIRE(program.ok());
  auto method = load_method(*program);
  const std::vector<float> x = {1, 2, 3, 4}, y = {-1, -2, -3, -4};
  REQUIRE(method->set_input(0, bytes_of(x)).ok());
  REQUIRE(method->set_input(1, bytes_of(y)).ok());
  REQUIRE(method->execute().ok());
  CHECK(floats_of(method->output(0)) == std::vector<float>{-1, 2, 3, 4});
}

// A 2-D transpose whose result only feeds a matrix product is folded into the product at load
// (the product reads the weight stored transposed; the transpose runs no kernel). Nothing a user
// can see changes: the outputs are those of the unfolded program bit for bit (an instruction
// hook turns folding off, as it must: hooks look at values between instructions), and the
// transpose's events are still there.
TEST_CASE("a transpose feeding addmm is folded into it with the same outputs and events", "[runtime][real]") {
  Program p = load_program("linear_external.pte");
  auto ptd = PtdReader::open(real_artifact("linear_external_legacy.ptd"));
  REQUIRE(ptd.ok());
  RecordingTracer tracer;
  runtime::MethodOptions options;
  options.external_data = {&*ptd};
  options.tracer = &tracer;
  auto m = load_method(p, options);
  std::vector<float> x = {1, 2, 3, -1, 0, 1, 0.5f, 0.25f, -2};
  REQUIRE(m->set_input(0, bytes_of(x)).ok());
  tracer.log.clear();
  REQUIRE(m->execute().ok());
  const std::vector<float> folded = floats_of(m->output(0));
  size_t permute_events = 0;
  for (const std::string& line : tracer.log) permute_events += line.find("native_call_permute_copy.out") != std::string::npos;
  CHECK(permute_events == 1);
  size_t hook_calls = 0;
  m->set_instruction_hook([&](size_t, size_t) {
    ++hook_calls;
    return ok_status();
  });
  REQUIRE(m->execute().ok());
  CHECK(hook_calls == 2);
  const std::vector<float> unfolded = floats_of(m->output(0));
  REQUIRE(folded.size() == unfolded.size());
  CHECK(std::memcmp(folded.data(), unfolded.data(), folded.size() * sizeof(float)) == 0);
  m->set_instruction_hook({});
  REQUIRE(m->execute().ok());
  const std::vector<float> again = floats_of(m->output(0));
  CHECK(std::memcmp(folded.data(), again.data(), folded.size() * sizeof(float)) == 0);
}

// The exported training step transposes each linear weight's gradient twice (mm's result, then
// that transpose again as the program output); the planner gives mm's result's bytes to the next
// tensors before the second transpose, so the pair cannot copy the source at the second step.
// Folded, the first step copies its input as it is and the second copies that on: every output
// of the step (loss, predictions, gradients, parameters) is bit for bit the unfolded program's
// and the same again on a second run, and all ten transposes keep their events. It covers the
// identity-copy fold too (the ReLU backward's activation copied twice before its compare: one
// copy left). (The step's planned memory reuses its inputs' bytes: they are set before every run.)
TEST_CASE("the training step's doubly transposed gradients are copied with the same outputs", "[runtime][real]") {
  auto p = PteReader::open(etscope::testing::fixture("cifar10/cifar10_train_nodropout.pte"));
  REQUIRE(p.ok());
  RecordingTracer tracer;
  runtime::MethodOptions options;
  options.tracer = &tracer;
  auto m = load_method(*p, options);
  std::vector<float> x(4 * 3 * 32 * 32);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>((i * 7919) % 255) / 127.0f - 1.0f;
  const std::vector<int64_t> labels = {3, 0, 9, 5};
  auto run = [&] {
    REQUIRE(m->set_input(0, bytes_of(x)).ok());
    REQUIRE(m->set_input(1, {reinterpret_cast<const uint8_t*>(labels.data()), labels.size() * sizeof(int64_t)}).ok());
    REQUIRE(m->execute().ok());
  };
  auto outputs = [&] {
    std::vector<std::vector<uint8_t>> out;
    for (size_t i = 0; i < m->num_outputs(); ++i) {
      const EValue& v = m->output(i);
      REQUIRE(v.tag == Tag::kTensor);
      const auto* b = static_cast<const uint8_t*>(v.tensor->data());
      out.emplace_back(b, b + v.tensor->nbytes());
    }
    return out;
  };
  tracer.log.clear();
  run();
  const auto folded = outputs();
  size_t permute_events = 0;
  for (const std::string& line : tracer.log) permute_events += line.find("native_call_permute_copy.out") != std::string::npos;
  CHECK(permute_events == 10);
  run();
  const auto again = outputs();
  for (size_t i = 0; i < folded.size(); ++i) {
    INFO("again output " << i);
    const bool same = folded[i] == again[i];
    CHECK(same);
  }
  m->set_instruction_hook([](size_t, size_t) { return ok_status(); });
  run();
  const auto unfolded = outputs();
  REQUIRE(folded.size() == 22);
  for (size_t i = 0; i < folded.size(); ++i) {
    INFO("output " << i);
    const bool same = folded[i] == unfolded[i];
    CHECK(same);
  }
}
