// The model zoo (tests/fixtures/executorch/models, made by samples/export/export_models.py with
// the real ExecuTorch 1.5.1): programs of many families nobody here fitted the runtime to. Each
// one either runs and matches ExecuTorch's own runtime outputs, or is refused at load with a
// message naming what is missing.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <map>
#include <nlohmann/json.hpp>

#include "etscope/formats/npy.h"
#include "etscope/formats/pte_reader.h"
#include "etscope/formats/tensor_stats.h"
#include "etscope/runtime/method.h"
#include "testing/test_json.h"
#include "testing/test_util.h"

using namespace etscope;
using etscope::testing::fixture;
using etscope::testing::load_json;
using nlohmann::json;

namespace {

// Programs etscope cannot run yet -> a fragment its error (at load, or at the first execution)
// must contain. When the kernel lands, the model's test fails ("now runs"): move it out of here.
// (Empty since transposed convolution landed: every model of the zoo runs.)
const std::map<std::string, std::string> kExpectedRefused = {};

template <typename T>
T must(Result<T> r) {
  if (!r.ok()) FAIL(r.error().message());
  return std::move(r).value();
}

bool is_float(ScalarType t) {
  return t == ScalarType::kFloat || t == ScalarType::kDouble || t == ScalarType::kHalf || t == ScalarType::kBFloat16;
}

double element(const void* base, ScalarType t, size_t i) { return element_as_double(t, static_cast<const uint8_t*>(base), i); }

struct Tolerance {
  double rtol = 1e-4, atol = 1e-5;
};

// Float outputs within 1e-4 relative + 1e-5 absolute, or the model's `suggested_tolerance` (16-bit
// programs: one unit in the last place); non-finite values must be identical; every other dtype
// byte for byte.
void check_output(const EValue& got, const NpyArray& want, const std::string& what, Tolerance tol) {
  INFO(what);
  REQUIRE(got.tag == Tag::kTensor);
  const TensorImpl& t = *got.tensor;
  REQUIRE(t.dtype() == want.dtype);
  REQUIRE(std::vector<int64_t>(t.sizes().begin(), t.sizes().end()) == want.shape);
  REQUIRE(t.nbytes() == want.data.size());
  if (!is_float(t.dtype())) {
    CHECK(std::memcmp(t.data(), want.data.data(), want.data.size()) == 0);
    return;
  }
  size_t bad = 0;
  double worst = 0;
  for (size_t i = 0; i < static_cast<size_t>(t.numel()); ++i) {
    const double g = element(t.data(), t.dtype(), i);
    const double w = element(want.data.data(), t.dtype(), i);
    if (!std::isfinite(w)) {
      if (!(g == w || (std::isnan(g) && std::isnan(w)))) ++bad;
      continue;
    }
    const double err = std::abs(g - w);
    worst = std::max(worst, err);
    if (!(err <= tol.atol + tol.rtol * std::abs(w))) ++bad;
  }
  INFO("max abs error " << worst);
  CHECK(bad == 0);
}

std::vector<std::string> zoo_models() {
  std::vector<std::string> names;
  const json index = load_json(fixture("models/index.json"));
  for (const auto& [file, entry] : index.items()) {
    const std::string suffix = ".json";
    if (file.size() > suffix.size() && file.ends_with(suffix)) names.push_back(file.substr(0, file.size() - suffix.size()));
  }
  return names;
}

// Sets every input of `m` from <prefix>.input<i>.npy.
void set_inputs(runtime::Method& m, const std::string& prefix) {
  for (size_t i = 0; i < m.num_inputs(); ++i) {
    NpyArray in = must(read_npy(fixture(prefix + ".input" + std::to_string(i) + ".npy")));
    Status s = m.set_input(i, in.data, in.shape);
    if (!s.ok()) FAIL(s.error().message());
  }
}

// Runs one call of a loaded method on <prefix>.input<i>.npy and checks <prefix>.output<o>.npy.
void run_call(runtime::Method& m, const std::string& prefix, const json& entry, Tolerance tol) {
  INFO(prefix);
  REQUIRE(m.num_inputs() == entry["inputs"].size());
  set_inputs(m, prefix);
  Status s = m.execute();
  if (!s.ok()) FAIL(s.error().message());
  REQUIRE(m.num_outputs() == entry["outputs"].size());
  for (size_t o = 0; o < m.num_outputs(); ++o) {
    if (!entry["outputs"][o].contains("shape")) continue;  // non-tensor output
    NpyArray want = must(read_npy(fixture(prefix + ".output" + std::to_string(o) + ".npy")));
    check_output(m.output(o), want, "output " + std::to_string(o), tol);
  }
}

// The method's first call; for a stateful program (a KV cache in mutable buffers) the calls
// listed under "steps" follow on the same loaded method, each depending on the ones before.
void run_method(const Program& p, const std::string& name, const std::string& method, const json& meta, Tolerance tol) {
  INFO(name << ":" << method);
  auto m = must(runtime::Method::load(p, method));
  run_call(*m, "models/" + name + (method == "forward" ? "" : "." + method), meta["methods"][method], tol);
  if (method != "forward" || !meta.contains("steps")) return;
  for (const json& step : meta["steps"]) run_call(*m, "models/" + step["files"].get<std::string>(), step, tol);
}

}  // namespace

TEST_CASE("the model zoo runs as in ExecuTorch, or is refused naming what is missing", "[runtime][fixtures][zoo]") {
  const std::vector<std::string> names = zoo_models();
  REQUIRE(names.size() >= 15);
  for (const auto& [name, reason] : kExpectedRefused) {
    INFO(name);
    CHECK(std::find(names.begin(), names.end(), name) != names.end());
  }
  for (const std::string& name : names) {
    DYNAMIC_SECTION(name) {
      const json meta = load_json(fixture("models/" + name + ".json"));
      Program p = must(PteReader::open(fixture("models/" + name + ".pte")));
      auto refused = kExpectedRefused.find(name);
      if (refused != kExpectedRefused.end()) {
        // Refused at load (missing kernels) or, for an unsupported variant of a kernel that
        // exists (transposed convolution), at the first execution.
        std::string error;
        auto m = runtime::Method::load(p, "forward");
        if (!m.ok()) {
          error = m.error().message();
        } else {
          set_inputs(*m.value(), "models/" + name);
          Status s = m.value()->execute();
          if (!s.ok()) error = s.error().message();
        }
        INFO(name << " now runs: move it out of kExpectedRefused");
        REQUIRE_FALSE(error.empty());
        CHECK_THAT(error, Catch::Matchers::Contains(refused->second));
        continue;
      }
      Tolerance tol;
      if (meta.contains("suggested_tolerance")) {
        tol.rtol = meta["suggested_tolerance"]["rtol"].get<double>();
        tol.atol = meta["suggested_tolerance"]["atol"].get<double>();
      }
      for (const auto& [method, entry] : meta["methods"].items()) run_method(p, name, method, meta, tol);
    }
  }
}
