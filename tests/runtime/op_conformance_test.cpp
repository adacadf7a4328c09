// The operator conformance suite: small programs exported by the real ExecuTorch 1.5.1
// (samples/export/export_op_conformance.py), one operator or composition per program, in several
// shapes and every dtype the case lists, each a bundled program whose expected outputs are what
// ExecuTorch's portable runtime computed. Every case is run with etscope's runtime and compared:
// integer, bool and index outputs exactly, floats within the tolerance the manifest gives.
//
// The results are rendered as docs/operators.md (per ExecuTorch operator: the file of etscope's
// kernel, the dtypes proven, the status and, where a case fails, why). The test fails when the page differs
// from what the suite shows, so the page is the list of known gaps and cannot go stale; after a
// kernel change, regenerate it with
//   ETSCOPE_UPDATE_DOCS=1 build/bin/runtime_tests "[conformance]"
#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "etscope/runtime/kernel.h"
#include "etscope/runner/runner.h"
#include "testing/kernel_sources.h"
#include "testing/test_json.h"
#include "testing/test_util.h"

namespace fs = std::filesystem;
using etscope::testing::fixture;
using namespace etscope;

namespace {

struct CaseResult {
  std::string name, dtype;
  std::vector<std::string> ops;
  bool passed = false;
  double max_abs_error = 0;
  std::string reason;  ///< Why it failed (no numbers that could differ between builds).
};

struct OpSummary {
  std::set<std::string> dtypes_passed;
  size_t cases = 0, passed = 0;
  double max_abs_error = 0;
  std::string first_failure;  ///< "case: reason"
};

std::string read_text(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Error messages name the fixture's path; the page names only the file.
std::string without_dir(std::string message, const std::string& path) {
  const std::string dir = fs::path(path).parent_path().string() + "/";
  for (size_t at; (at = message.find(dir)) != std::string::npos;) message.erase(at, dir.size());
  const size_t line = message.find('\n');
  if (line != std::string::npos) message.resize(line);
  for (char& c : message) {
    if (c == '|') c = '/';
  }
  return message;
}

CaseResult run_case(const std::string& name, const nlohmann::json& entry) {
  CaseResult r;
  r.name = name;
  r.dtype = entry.value("dtype", "");
  for (const auto& op : entry["ops"]) r.ops.push_back(op.get<std::string>());
  const std::string path = fixture("ops/" + name + ".bpte");
  runner::RunnerOptions options;
  options.model = path;
  auto runner = runner::Runner::load(options);
  if (!runner.ok()) {
    r.reason = "load: " + without_dir(runner.error().message(), path);
    return r;
  }
  auto results = (*runner)->check_bundled(std::nullopt, entry.value("rtol", 1e-5), entry.value("atol", 1e-6));
  if (!results.ok()) {
    r.reason = "run: " + without_dir(results.error().message(), path);
    return r;
  }
  r.passed = !results->empty();
  for (const auto& c : *results) {
    r.max_abs_error = std::max(r.max_abs_error, c.max_abs_error);
    if (!c.passed) {
      r.passed = false;
      if (r.reason.empty()) {
        r.reason = c.problems.empty() ? "outputs differ from ExecuTorch's beyond the tolerance" : c.problems;
      }
    }
  }
  return r;
}

std::string join(const std::set<std::string>& items, const char* sep) {
  std::string out;
  for (const auto& s : items) out += (out.empty() ? "" : sep) + s;
  return out;
}

// Dtype names in the order the page lists them.
std::string dtype_list(const std::set<std::string>& dtypes) {
  static const char* kOrder[] = {"f32", "f64", "f16", "bf16", "u8", "i8", "i16", "i32", "i64", "bool"};
  std::string out;
  for (const char* d : kOrder) {
    if (dtypes.count(d)) out += (out.empty() ? "" : " ") + std::string(d);
  }
  return out;
}

// Why etscope has no kernel for an operator of ExecuTorch's libraries (shown on the page).
const std::map<std::string, std::string>& missing_reasons() {
  static const std::map<std::string, std::string> reasons = {
      {"et_copy::_h2d_copy.out", "host-to-device copy for delegates with device memory; etscope's runtime has host memory only"},
      {"et_copy::_d2h_copy.out", "device-to-host copy for delegates with device memory; etscope's runtime has host memory only"},
      {"aten::_conj_physical.out", "complex numbers: etscope's tensors have no complex dtypes"},
      {"aten::view_as_real_copy.out", "complex numbers: etscope's tensors have no complex dtypes"},
  };
  return reasons;
}

std::string render_page(const nlohmann::json& manifest, const std::vector<CaseResult>& results,
                        const std::map<std::string, OpSummary>& by_op) {
  const runtime::KernelRegistry& registry = runtime::KernelRegistry::portable();
  const std::vector<std::string> kernels = registry.names();
  const std::set<std::string> registered(kernels.begin(), kernels.end());
  const std::map<std::string, std::string> files = etscope::testing::registered_operator_files();

  // ExecuTorch's operators, library by library, then anything else etscope registers.
  std::vector<std::pair<std::string, std::vector<std::string>>> libraries;
  std::set<std::string> listed;
  for (const auto& [lib, names] : manifest["executorch_operators"].items()) {
    std::vector<std::string> ops;
    for (const auto& n : names) {
      if (listed.insert(n.get<std::string>()).second) ops.push_back(n.get<std::string>());
    }
    libraries.emplace_back(lib, ops);
  }
  std::vector<std::string> others;
  for (const auto& k : kernels) {
    if (!listed.count(k)) others.push_back(k);
  }
  for (const auto& [op, _] : by_op) {
    if (!listed.count(op) && !registered.count(op)) others.push_back(op);
  }
  libraries.emplace_back("other operators etscope registers or the suite's programs call", others);

  size_t total = 0, have = 0, proven = 0, failing = 0;
  for (const auto& [lib, ops] : libraries) {
    for (const auto& op : ops) {
      if (lib.rfind("kernels/", 0) != 0) continue;
      ++total;
      have += registered.count(op);
      auto it = by_op.find(op);
      if (it != by_op.end() && it->second.passed == it->second.cases) ++proven;
      if (it != by_op.end() && it->second.passed != it->second.cases) ++failing;
    }
  }
  size_t cases_passed = 0;
  for (const auto& r : results) cases_passed += r.passed;

  std::ostringstream md;
  md << "# Operators\n\n"
     << "Generated by `tests/runtime/op_conformance_test.cpp` from the operator conformance suite in\n"
     << "`tests/fixtures/executorch/ops/` (made by `samples/export/export_op_conformance.py` with the real\n"
     << "ExecuTorch " << manifest["versions"].value("executorch", "?") << "): small programs exported by ExecuTorch's exporter, each run by\n"
     << "ExecuTorch's portable runtime to get the expected outputs (eager PyTorch's where ExecuTorch's kernel\n"
     << "is wrong, listed at the end), then by etscope. Integer, bool and index\n"
     << "outputs must be identical; float32 within 1e-5 relative (+1e-6 absolute), float64 1e-10, float16\n"
     << "and bfloat16 1e-2; the cases named `*_exact` bit for bit (float32 exp, sigmoid, softmax, the exact\n"
     << "GELU, linears of up to 8 rows and depthwise convolutions compute what ExecuTorch's portable kernels\n"
     << "compute, in the same order). Do not edit: after a kernel change run\n"
     << "`ETSCOPE_UPDATE_DOCS=1 build/bin/runtime_tests \"[conformance]\"` (the test fails while this page\n"
     << "differs from what the suite shows).\n\n"
     << "- ExecuTorch's kernel libraries list " << total << " operators; etscope registers " << have << " of them and "
     << registered.size() << " kernels in all (`etscope kernels`).\n"
     << "- The suite has " << results.size() << " programs; " << cases_passed << " pass. " << proven
     << " of ExecuTorch's operators pass every program that calls them, " << failing << " fail at least one.\n"
     << "- *kernel file* is the source in `runtime/src/kernels/` that registers the operator's kernel (one\n"
     << "  family of operators per `op_<family>.cpp`); `no` when etscope has no kernel for it.\n"
     << "- *dtypes proven* are the dtypes of the passing programs' inputs; *cases* counts the programs that\n"
     << "  call the operator (passed/all). An operator no program calls is *not covered*: the exporter emits\n"
     << "  it only for other inputs (backward passes, internal variants), or the suite does not reach it yet.\n\n";
  for (const auto& [lib, ops] : libraries) {
    if (ops.empty()) continue;
    md << "## " << (lib.rfind("kernels/", 0) == 0 ? "`" + lib + "`" : lib) << "\n\n"
       << "| operator | kernel file | cases | dtypes proven | status |\n|---|---|---|---|---|\n";
    for (const auto& op : ops) {
      const bool have_kernel = registered.count(op) > 0;
      auto it = by_op.find(op);
      std::string cases = "-", dtypes = "", status;
      if (it != by_op.end()) {
        cases = std::to_string(it->second.passed) + "/" + std::to_string(it->second.cases);
        dtypes = dtype_list(it->second.dtypes_passed);
        status = it->second.passed == it->second.cases ? "pass" : "fails: " + it->second.first_failure;
      } else if (have_kernel) {
        status = "not covered";
      } else {
        auto why = missing_reasons().find(op);
        status = "no kernel: " + (why != missing_reasons().end() ? why->second : std::string("not implemented yet"));
      }
      auto file = files.find(op);
      const std::string kernel_file = !have_kernel ? "no" : file != files.end() ? "`" + file->second + "`" : "yes";
      md << "| `" << op << "` | " << kernel_file << " | " << cases << " | " << dtypes << " | " << status
         << " |\n";
    }
    md << "\n";
  }
  std::set<std::string> refused;
  for (const auto& [name, entry] : manifest["cases"].items()) {
    if (entry.contains("executorch_error")) refused.insert(name + ": " + entry["executorch_error"].get<std::string>());
  }
  if (!refused.empty()) {
    md << "## Cases ExecuTorch itself refuses\n\n"
       << "The exporter or ExecuTorch's runtime rejects these programs, so they have no expected outputs.\n\n";
    for (const auto& s : refused) {
      std::string line = s;
      for (char& c : line) {
        if (c == '|' || c == '\n') c = ' ';
      }
      md << "- " << line << "\n";
    }
    md << "\n";
  }
  std::set<std::string> differs, float32_precision;
  for (const auto& [name, entry] : manifest["cases"].items()) {
    if (entry.value("executorch_differs_from_eager", false)) differs.insert(name);
    if (entry.value("executorch_float32_precision", false)) float32_precision.insert(name);
  }
  if (!float32_precision.empty()) {
    md << "## Where ExecuTorch computes float64 in float32 precision\n\n"
       << "ExecuTorch's answer is within float32 rounding, not float64's, of eager PyTorch for these float64\n"
       << "programs, so the suite uses float32's tolerance for them: " << join(float32_precision, ", ") << ".\n\n";
  }
  if (!differs.empty()) {
    md << "## Where ExecuTorch's kernel differs from eager PyTorch\n\n"
       << "ExecuTorch's portable runtime gives another answer than eager PyTorch for these programs; the\n"
       << "suite expects eager's (`\"expected\": \"eager\"` in the manifest), and etscope gives it:\n"
       << join(differs, ", ") << ".\n";
  }
  return md.str();
}

}  // namespace

TEST_CASE("operator conformance: every program ExecuTorch exported runs as ExecuTorch ran it", "[conformance]") {
  const nlohmann::json manifest = etscope::testing::load_json(fixture("ops/manifest.json"));
  REQUIRE(manifest["cases"].size() >= 300);
  REQUIRE(manifest["executorch_operators"].size() == 4);

  std::vector<CaseResult> results;
  std::map<std::string, OpSummary> by_op;
  for (const auto& [name, entry] : manifest["cases"].items()) {
    if (entry.contains("executorch_error")) continue;
    CaseResult r = run_case(name, entry);
    // A program refused for missing kernels blames those kernels, not the others it calls.
    const size_t missing_at = r.reason.find("missing kernels: ");
    const std::string missing = missing_at == std::string::npos ? "" : r.reason.substr(missing_at);
    for (const auto& op : r.ops) {
      if (!missing.empty() && missing.find(op) == std::string::npos) continue;
      OpSummary& s = by_op[op];
      ++s.cases;
      if (r.passed) {
        ++s.passed;
        s.dtypes_passed.insert(r.dtype);
      } else if (s.first_failure.empty()) {
        s.first_failure = r.name + ": " + r.reason;
      }
      s.max_abs_error = std::max(s.max_abs_error, r.max_abs_error);
    }
    results.push_back(std::move(r));
  }

  // The per-operator report in the test's output.
  size_t failed = 0;
  for (const auto& [op, s] : by_op) {
    std::cout << (s.passed == s.cases ? "pass " : "FAIL ") << op << "  " << s.passed << "/" << s.cases
              << "  max abs error " << s.max_abs_error << "  [" << dtype_list(s.dtypes_passed) << "]"
              << (s.first_failure.empty() ? "" : "  " + s.first_failure) << "\n";
  }
  for (const auto& r : results) failed += !r.passed;
  std::cout << results.size() - failed << "/" << results.size() << " conformance programs pass\n";

  const std::string page = render_page(manifest, results, by_op);
  const fs::path doc = fs::path(etscope::testing::test_data_dir()).parent_path().parent_path() / "docs" / "operators.md";
  const char* update = std::getenv("ETSCOPE_UPDATE_DOCS");
  if (update != nullptr && std::string(update) == "1") {
    std::ofstream(doc) << page;
  }
  INFO("docs/operators.md differs from the suite's results; regenerate it: "
       "ETSCOPE_UPDATE_DOCS=1 build/bin/runtime_tests \"[conformance]\"");
  CHECK(read_text(doc) == page);
}
