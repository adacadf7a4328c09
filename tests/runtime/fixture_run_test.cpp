// The runtime against ExecuTorch 1.5's own results on the fixtures made by samples/export:
// bundled cases, recorded program outputs, and the first training step's loss and gradients.
// Plus finite differences on the real xor training program.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>

#include "etscope/formats/bpte_reader.h"
#include "etscope/formats/ptd_reader.h"
#include "etscope/formats/npy.h"
#include "etscope/formats/pte_reader.h"
#include "etscope/runtime/bundled.h"
#include "etscope/runtime/method.h"
#include "testing/test_json.h"
#include "testing/test_util.h"

using namespace etscope;
using etscope::testing::fixture;
using etscope::testing::load_json;
using etscope::testing::real_artifact;
using nlohmann::json;

namespace {

template <typename T>
T must(Result<T> r) {
  if (!r.ok()) FAIL(r.error().message());
  return std::move(r).value();
}

std::vector<float> floats_of(const EValue& v) {
  REQUIRE(v.tag == Tag::kTensor);
  REQUIRE(v.tensor->dtype() == ScalarType::kFloat);
  const float* p = v.tensor->data_as<float>();
  return std::vector<float>(p, p + v.tensor->numel());
}

bool close(double got, double want, double rtol, double atol) {
  return std::abs(got - want) <= atol + rtol * std::abs(want);
}

// Runs `method` on one .npy input per method input.
void run_with_npy(runtime::Method& m, const std::vector<NpyArray>& inputs) {
  REQUIRE(inputs.size() == m.num_inputs());
  for (size_t i = 0; i < inputs.size(); ++i) REQUIRE(m.set_input(i, inputs[i].data, inputs[i].shape).ok());
  Status s = m.execute();
  if (!s.ok()) FAIL(s.error().message());
}

}  // namespace

TEST_CASE("every bundled case of the fixture programs passes", "[runtime][fixtures][bundled]") {
  for (const char* name : {"simple_conv/simple_conv.bpte", "cifar10/cifar10.bpte", "mobilenet_v2/mobilenet_v2.bpte"}) {
    INFO(name);
    BundledProgram b = must(BpteReader::open(fixture(name)));
    auto m = must(runtime::Method::load(b.program, "forward"));
    for (const BundledTestCase& c : b.suites.at(0).cases) {
      REQUIRE(runtime::load_bundled_inputs(*m, b, c).ok());
      REQUIRE(m->execute().ok());
      // ExecuTorch's example-runner tolerance; the errors themselves are far smaller.
      runtime::CaseCheck check = runtime::verify_bundled_outputs(*m, b, c, 1e-3, 1e-5);
      CHECK(check.passed);
      for (const auto& o : check.outputs) CHECK(o.max_abs_error < 1e-3);
    }
  }
}

TEST_CASE("outputs equal the ones ExecuTorch's runtime recorded", "[runtime][fixtures]") {
  for (const char* name : {"simple_conv/simple_conv", "cifar10/cifar10", "mobilenet_v2/mobilenet_v2"}) {
    INFO(name);
    const json run = load_json(fixture(std::string(name) + ".run.json"));
    Program p = must(PteReader::open(fixture(std::string(name) + ".pte")));
    auto m = must(runtime::Method::load(p, "forward"));
    std::vector<NpyArray> inputs;
    for (size_t i = 0; i < m->num_inputs(); ++i) inputs.push_back(must(read_npy(fixture(std::string(name) + ".input" + std::to_string(i) + ".npy"))));
    run_with_npy(*m, inputs);
    const json& expected = run["runtime_outputs"];
    REQUIRE(expected.size() == m->num_outputs());
    for (size_t o = 0; o < m->num_outputs(); ++o) {
      std::vector<float> got = floats_of(m->output(o));
      const json& e = expected[o];
      REQUIRE(got.size() == e["numel"].get<size_t>());
      // Small outputs are recorded whole ("data"), large ones by their first values.
      const auto first = (e.contains("data") ? e["data"] : e["first"]).get<std::vector<double>>();
      // Relative to the tensor's scale: elementwise relative error is meaningless near zero.
      const double scale = std::max(std::abs(e["min"].get<double>()), std::abs(e["max"].get<double>()));
      for (size_t k = 0; k < first.size(); ++k) CHECK(std::abs(got[k] - first[k]) <= 1e-5 * scale);
      double sum = 0, mn = got[0], mx = got[0];
      for (float v : got) {
        sum += v;
        mn = std::min<double>(mn, v);
        mx = std::max<double>(mx, v);
      }
      CHECK(std::abs(sum - e["sum"].get<double>()) <= 1e-5 * e["abs_sum"].get<double>());
      CHECK(std::abs(mn - e["min"].get<double>()) <= 1e-5 * scale);
      CHECK(std::abs(mx - e["max"].get<double>()) <= 1e-5 * scale);
    }
  }
}

namespace {

// Runs a training program's first step and compares its loss with ExecuTorch's, then each
// gradient with ExecuTorch's (.ptd) or, for parameters listed in `eager_grads`, with PyTorch's.
struct FirstStep {
  std::string pte, x_npy, label_npy, grads_ptd;
  double first_loss = 0;
  json eager_grads;               // fqn -> {"numel", "sum", "abs_sum", "min", "max"}; may be null
  std::string eager_only_prefix;  // parameters checked against eager instead of ExecuTorch
};

void compare(const std::string& fqn, const std::vector<float>& got, const std::vector<double>& want) {
  INFO(fqn);
  REQUIRE(got.size() == want.size());
  double max_err = 0, max_ref = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    max_err = std::max(max_err, std::abs(static_cast<double>(got[i]) - want[i]));
    max_ref = std::max(max_ref, std::abs(want[i]));
  }
  CHECK(max_err <= 1e-5 * std::max(max_ref, 1.0));
}

void check_first_step(const FirstStep& c) {
  Program p = must(PteReader::open(fixture(c.pte)));
  auto m = must(runtime::Method::load(p, "forward"));
  run_with_npy(*m, {must(read_npy(fixture(c.x_npy))), must(read_npy(fixture(c.label_npy)))});
  const std::vector<float> loss = floats_of(m->output(0));
  REQUIRE(loss.size() == 1);
  CHECK(close(loss[0], c.first_loss, 1e-5, 1e-7));
  // Gradient outputs start at __et_training_gradients_index_forward; FQNs in order.
  const ExecutionPlan* grad_index = p.find_plan("__et_training_gradients_index_forward");
  const ExecutionPlan* names = p.find_plan("__et_training_fqn_forward");
  REQUIRE(grad_index);
  REQUIRE(names);
  const int64_t start = grad_index->values.at(0).int_value;
  TensorDataFile grads = must(PtdReader::open(fixture(c.grads_ptd)));
  REQUIRE(names->values.size() == grads.entries.size());
  size_t against_eager = 0;
  for (size_t k = 0; k < names->values.size(); ++k) {
    const std::string& fqn = names->values[k].string_value;
    const std::vector<float> got = floats_of(m->output(static_cast<size_t>(start) + k));
    if (!c.eager_only_prefix.empty() && fqn.rfind(c.eager_only_prefix, 0) == 0) {
      // Eager gradients are recorded as summaries (sum, |sum|, min, max) of the tensor.
      INFO(fqn << " (eager)");
      const json& e = c.eager_grads.at(fqn);
      double sum = 0, abs_sum = 0, mn = got.at(0), mx = got.at(0);
      for (float v : got) {
        sum += v;
        abs_sum += std::abs(v);
        mn = std::min<double>(mn, v);
        mx = std::max<double>(mx, v);
      }
      const double scale = std::max(std::abs(e["min"].get<double>()), std::abs(e["max"].get<double>()));
      CHECK(got.size() == e["numel"].get<size_t>());
      CHECK(std::abs(sum - e["sum"].get<double>()) <= 1e-5 * e["abs_sum"].get<double>());
      CHECK(std::abs(abs_sum - e["abs_sum"].get<double>()) <= 1e-5 * e["abs_sum"].get<double>());
      CHECK(std::abs(mn - e["min"].get<double>()) <= 1e-5 * scale);
      CHECK(std::abs(mx - e["max"].get<double>()) <= 1e-5 * scale);
      ++against_eager;
      continue;
    }
    const TensorDataEntry* e = grads.find(fqn);
    REQUIRE(e);
    std::vector<double> want(e->data.size / 4);
    const auto bytes = grads.bytes(e->data);
    for (size_t i = 0; i < want.size(); ++i) {
      float f;
      std::memcpy(&f, bytes.data() + 4 * i, 4);
      want[i] = f;
    }
    compare(fqn + " (ExecuTorch)", got, want);
  }
  if (!c.eager_only_prefix.empty()) CHECK(against_eager > 0);
}

}  // namespace

TEST_CASE("xor training program: first-step loss and gradients equal ExecuTorch's", "[runtime][fixtures][training]") {
  const json training = load_json(fixture("xor/xor.training.json"));
  FirstStep c;
  c.pte = "xor/xor_train.pte";
  c.x_npy = "xor/xor_train.step0.x.npy";
  c.label_npy = "xor/xor_train.step0.label.npy";
  c.grads_ptd = "xor/xor_train.step0_grads.executorch.ptd";
  c.first_loss = training["runs"]["xor_train.sgd"]["executorch"]["losses"][0].get<double>();
  check_first_step(c);
}

// ExecuTorch 1.5.1's max_pool2d_with_indices_backward does not zero grad_input
// (pytorch/executorch#21686, fixed upstream by #21878 after that release), so its recorded
// gradients for the convolution layers carry stale arena bytes. etscope's kernel zeroes as ATen
// does: those gradients are checked against PyTorch eager; the classifier's, which the bug does
// not reach, against ExecuTorch's own.
TEST_CASE("cifar10 training program: first-step loss equals ExecuTorch's / gradients ExecuTorch's or eager's", "[runtime][fixtures][training]") {
  const json training = load_json(fixture("cifar10/cifar10.training.json"));
  const json& run = training["runs"]["cifar10_train_nodropout.sgd"];
  FirstStep c;
  c.pte = "cifar10/cifar10_train_nodropout.pte";
  c.x_npy = "cifar10/cifar10_train.step0.x.npy";
  c.label_npy = "cifar10/cifar10_train.step0.label.npy";
  c.grads_ptd = "cifar10/cifar10_train_nodropout.step0_grads.executorch.ptd";
  c.first_loss = run["executorch"]["losses"][0].get<double>();
  c.eager_grads = run["eager"]["step0_grads"];
  c.eager_only_prefix = "model.features.";
  check_first_step(c);
}

TEST_CASE("real xor training program: gradients match finite differences", "[runtime][training][real]") {
  Program p = must(PteReader::open(real_artifact("xor_training.pte")));
  TensorDataFile weights = must(PtdReader::open(real_artifact("xor_training.ptd")));
  runtime::MethodOptions options;
  options.external_data = {&weights};
  auto m = must(runtime::Method::load(p, "forward", options));
  const float x[2] = {1.0f, 0.0f};
  const int64_t label[1] = {1};
  REQUIRE(m->set_input(0, {reinterpret_cast<const uint8_t*>(x), sizeof(x)}).ok());
  REQUIRE(m->set_input(1, {reinterpret_cast<const uint8_t*>(label), sizeof(label)}).ok());
  REQUIRE(m->execute().ok());
  // Outputs: loss, argmax, 4 gradients (from index 2), 4 parameters (from index 6).
  std::vector<std::vector<float>> analytic;
  for (size_t k = 0; k < 4; ++k) analytic.push_back(floats_of(m->output(2 + k)));
  auto loss = [&]() {
    // The plan reuses the label's bytes for later values: set the inputs before every run.
    REQUIRE(m->set_input(0, {reinterpret_cast<const uint8_t*>(x), sizeof(x)}).ok());
    REQUIRE(m->set_input(1, {reinterpret_cast<const uint8_t*>(label), sizeof(label)}).ok());
    REQUIRE(m->execute().ok());
    return static_cast<double>(floats_of(m->output(0))[0]);
  };
  const double eps = 1e-3;
  size_t checked = 0;
  for (size_t k = 0; k < 4; ++k) {
    // The parameters are planned tensors in the method's arena: perturb them in place.
    float* w = m->output(6 + k).tensor->data_as<float>();
    for (size_t i = 0; i < analytic[k].size(); ++i) {
      const float saved = w[i];
      w[i] = saved + static_cast<float>(eps);
      const double up = loss();
      w[i] = saved - static_cast<float>(eps);
      const double down = loss();
      w[i] = saved;
      const double numeric = (up - down) / (2 * eps);
      INFO("parameter " << k << " element " << i);
      CHECK(std::abs(numeric - analytic[k][i]) <= 1e-3);
      ++checked;
    }
  }
  CHECK(checked == 20 + 10 + 20 + 2);
}
